//! Registering tools on `document.modelContext`: one `AbortController` per registration (kept
//! for the page's lifetime), an `execute` that converts the agent's input to JSON and returns
//! a Promise of a plain object. It never throws: Chromium would hand the agent a bare
//! `UnknownError`.

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

/// JSON to a plain JS object (never a `Map`, which would stringify to `{}`).
pub fn to_js(value: &Value) -> JsValue {
    js_sys::JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

/// The agent's input as JSON; what `JSON.stringify` cannot carry arrives as a string, which
/// the tools refuse as `invalid_input`.
fn input_json(input: &JsValue) -> Value {
    if input.is_undefined() || input.is_null() {
        return Value::Null;
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
