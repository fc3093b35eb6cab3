//! Registering tools on `document.modelContext`: one `AbortController` per registration (kept
//! for the page's lifetime), an `execute` that converts the agent's input to JSON and returns
//! a Promise of a plain object. It never throws: Chromium would hand the agent a bare
//! `UnknownError`.
//!
//! `document.modelContext` is the browser's own or, without native WebMCP, the vendored
//! `@mcp-b/webmcp-polyfill` that the page's `webmcp.js` loads before the wasm starts
//! ([`detect`], [`webmcp_note`] for the page's pill).

use js_sys::{Function, Object, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

/// A tool's behaviour: the agent's input as JSON in, a Promise of the envelope out.
pub type Run = fn(Value) -> Promise;

/// A live registration. Dropping it would withdraw the tool; the site keeps both for good.
pub struct Registration {
    _controller: AbortController,
    _execute: Closure<dyn FnMut(JsValue, JsValue) -> JsValue>,
}

/// `document.modelContext`, if this browser has WebMCP.
pub fn model_context() -> Option<JsValue> {
    let document = web_sys::window()?.document()?;
    let ctx = Reflect::get(&document, &"modelContext".into()).ok()?;
    (!ctx.is_undefined() && !ctx.is_null()).then_some(ctx)
}

/// The vendored polyfill the page loads without native WebMCP (`vendor/webmcp-polyfill/`).
pub const POLYFILL: &str = "@mcp-b/webmcp-polyfill 5.1.0";

/// Where this page's `document.modelContext` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detection {
    /// The browser's own (its getter is native code).
    Native,
    /// The vendored polyfill, installed by the page's `webmcp.js` (which marks
    /// `globalThis.__tacitWebmcp = 'polyfilled'` only after it loaded).
    Polyfilled,
    /// Some other script's: neither the browser's nor the page's loader's.
    Scripted,
    /// None: agents cannot reach this site's tools.
    Absent,
}

/// Detects where `document.modelContext` comes from. A marker a page script set cannot make a
/// script-made context pass for native: native means the browser's own getter.
pub fn detect() -> Detection {
    if model_context().is_none() {
        return Detection::Absent;
    }
    if native_getter() {
        return Detection::Native;
    }
    let marker = Reflect::get(&js_sys::global(), &"__tacitWebmcp".into())
        .ok()
        .and_then(|m| m.as_string());
    if marker.as_deref() == Some("polyfilled") {
        Detection::Polyfilled
    } else {
        Detection::Scripted
    }
}

/// The WebMCP pill's text and whether it is good news, with `registered` tools in the registry
/// `detection` found (for the page's `webmcp_note`).
pub fn webmcp_note(detection: Detection, registered: usize) -> (String, bool) {
    let tools = if registered == 1 { "tool" } else { "tools" };
    match detection {
        Detection::Native => (format!("WebMCP: {registered} {tools}"), true),
        Detection::Polyfilled => (
            format!("WebMCP: polyfilled ({POLYFILL}), {registered} {tools}"),
            true,
        ),
        Detection::Scripted => (
            format!("WebMCP from a page script (not the browser's): {registered} {tools}"),
            false,
        ),
        Detection::Absent => (
            "WebMCP absent: agents cannot reach this site's tools".to_owned(),
            false,
        ),
    }
}

/// Whether `document.modelContext` is read through the browser's own getter (native code),
/// found on the document's prototype chain.
fn native_getter() -> bool {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return false;
    };
    let mut at: JsValue = document.into();
    while at.is_object() {
        if let Ok(descriptor) = Reflect::get_own_property_descriptor(
            at.unchecked_ref::<Object>(),
            &"modelContext".into(),
        ) && !descriptor.is_undefined()
        {
            let getter = Reflect::get(&descriptor, &"get".into()).unwrap_or(JsValue::UNDEFINED);
            return getter
                .dyn_ref::<Function>()
                .map(|f| String::from(f.to_string()))
                .is_some_and(|text| text.contains("[native code]"));
        }
        at = Reflect::get_prototype_of(&at).map_or(JsValue::NULL, JsValue::from);
    }
    false
}

/// JSON to a plain JS object (never a `Map`, which would stringify to `{}`).
pub fn to_js(value: &Value) -> JsValue {
    js_sys::JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

/// The agent's input as JSON; what `JSON.stringify` cannot carry arrives as a string, which
/// the tools refuse as `invalid_input`. JSON text (the polyfill's `executeTool` takes its input
/// as text; the tool's `execute` gets it parsed) is read as the JSON it holds.
fn input_json(input: &JsValue) -> Value {
    if input.is_undefined() || input.is_null() {
        return Value::Null;
    }
    if let Some(text) = input.as_string() {
        return serde_json::from_str(&text).unwrap_or(Value::String(text));
    }
    js_sys::JSON::stringify(input)
        .ok()
        .and_then(|s| s.as_string())
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_else(|| Value::String("unserializable input".into()))
}

/// Registers `def` (name, title, description, inputSchema, annotations) with `run` as its
/// `execute`. A refusal the browser reports later goes to `on_refused`.
pub fn register(
    ctx: &JsValue,
    def: &Value,
    run: Run,
    on_refused: fn(String),
) -> Result<Registration, String> {
    let name = def["name"].as_str().unwrap_or_default().to_owned();
    let execute = Closure::<dyn FnMut(JsValue, JsValue) -> JsValue>::new(
        move |input: JsValue, _options: JsValue| -> JsValue { run(input_json(&input)).into() },
    );
    let controller = AbortController::new().map_err(|e| error_text(&e))?;
    let tool: Object = js_sys::JSON::parse(&def.to_string())
        .and_then(|t| t.dyn_into::<Object>())
        .map_err(|e| error_text(&e))?;
    Reflect::set(&tool, &"execute".into(), execute.as_ref()).map_err(|e| error_text(&e))?;
    let options = Object::new();
    Reflect::set(&options, &"signal".into(), &controller.signal()).map_err(|e| error_text(&e))?;
    let promise = Reflect::get(ctx, &"registerTool".into())
        .and_then(|f| f.dyn_into::<Function>())
        .and_then(|f| f.call2(ctx, &tool, &options))
        .map_err(|e| format!("{name}: {}", error_text(&e)))?;
    wasm_bindgen_futures::spawn_local(async move {
        if let Err(e) = wasm_bindgen_futures::JsFuture::from(Promise::resolve(&promise)).await {
            on_refused(format!("{name}: {}", error_text(&e)));
        }
    });
    Ok(Registration {
        _controller: controller,
        _execute: execute,
    })
}

/// `name: message` of a JS error.
pub fn error_text(e: &JsValue) -> String {
    let field = |key: &str| {
        Reflect::get(e, &key.into())
            .ok()
            .and_then(|v| v.as_string())
    };
    match (field("name"), field("message")) {
        (Some(n), Some(m)) => format!("{n}: {m}"),
        (None, Some(m)) => m,
        _ => e.as_string().unwrap_or_else(|| "unknown error".into()),
    }
}
