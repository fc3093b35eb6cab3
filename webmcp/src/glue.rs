//! The browser side (wasm32 only).

use js_sys::{Function, Object, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

use crate::{MARKER, Observed, Refused, Source, to_js};

/// `document.modelContext`, if present (the browser's own, the polyfill's or a script's).
pub fn model_context() -> Option<JsValue> {
    let document = web_sys::window()?.document()?;
    let ctx = Reflect::get(&document, &"modelContext".into()).ok()?;
    (!ctx.is_undefined() && !ctx.is_null()).then_some(ctx)
}

/// Whether `document.modelContext` is read through a getter that is the browser's own (native
/// code), found on the document's prototype chain.
pub fn native_getter() -> bool {
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

/// What the page's `webmcp.js` marked in [`MARKER`], if anything.
pub fn marker() -> Option<String> {
    Reflect::get(&js_sys::global(), &MARKER.into())
        .ok()?
        .as_string()
}

/// What this page sees of WebMCP now.
pub fn observe() -> Observed {
    let Some(window) = web_sys::window() else {
        return Observed::default();
    };
    let has_context = model_context().is_some();
    let navigator_ctx =
        Reflect::get(&window.navigator(), &"modelContext".into()).unwrap_or(JsValue::UNDEFINED);
    let provide =
        Reflect::get(&navigator_ctx, &"provideContext".into()).unwrap_or(JsValue::UNDEFINED);
    Observed {
        has_context,
        native_getter: has_context && native_getter(),
        marker: marker(),
        secure: window.is_secure_context(),
        superseded_api: !navigator_ctx.is_undefined() && provide.is_function(),
    }
}

/// Where this page's `document.modelContext` comes from ([`Source::decide`] on what the page
/// sees).
pub fn source() -> Source {
    let has_context = model_context().is_some();
    Source::decide(
        has_context,
        has_context && native_getter(),
        marker().as_deref(),
    )
}

/// The value of `name` in the page's query string, percent-decoded.
pub fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    crate::parse_query(&search, name, |v| {
        js_sys::decode_uri_component(v).ok()?.as_string()
    })
}

/// `name: message` of a JS error (`message` alone without a name; the value itself when it is a
/// string).
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

/// A tool's input as the tool reads it: the polyfill's `executeTool` passes JSON text where
/// Chromium passes an object, so text is parsed (text that is not JSON stays as it is, and the
/// tool refuses it as `invalid_input`).
pub fn input_object(input: JsValue) -> JsValue {
    match input.as_string() {
        Some(text) => js_sys::JSON::parse(&text).unwrap_or(input),
        None => input,
    }
}

/// The agent's input as JSON, read by `parse` (a reader with limits of its own, such as
/// `tool_gate::input::from_text`) from `JSON.stringify`'s text. `undefined` and `null` are
/// `null`; a string stays a string. What `JSON.stringify` cannot carry is refused with
/// [`UNREADABLE_INPUT`], what `parse` refuses with its own reason: the `Err` is the sentence of
/// the tool's `invalid_input` refusal.
pub fn input_json_with(
    input: &JsValue,
    parse: impl Fn(&str) -> Result<Value, String>,
) -> Result<Value, String> {
    if input.is_undefined() || input.is_null() {
        return Ok(Value::Null);
    }
    let text = js_sys::JSON::stringify(input)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| UNREADABLE_INPUT.to_owned())?;
    parse(&text)
}

/// Why an input that `JSON.stringify` cannot carry (a cycle, a `BigInt`, a function) is refused.
pub const UNREADABLE_INPUT: &str = "The input cannot be read as JSON; send a plain JSON object.";

/// The input of a tool's `execute` as JSON, read by tool-gate's reader (which refuses input
/// nested deeper than `tool_gate::input::MAX_DEPTH` levels by name): JSON text (the polyfill's
/// `executeTool` form) is read as the JSON it holds ([`input_object`]), other text stays a
/// string. `Err` is the sentence of the tool's `invalid_input` refusal.
pub fn input_json(input: &JsValue) -> Result<Value, String> {
    input_json_with(&input_object(input.clone()), |text| {
        tool_gate::input::from_text(text).map_err(|refusal| refusal.message)
    })
}

/// One tool registered on a `document.modelContext` with an `AbortController` of its own.
/// Dropping it (or [`Registration::withdraw`]) aborts the controller, which removes the tool
/// synchronously (WEBMCP.md). The tool's `execute` is not dropped with it: an agent that kept the
/// tool object can still call it, and the page's gate answers with its refusal.
#[derive(Debug)]
pub struct Registration {
    controller: AbortController,
    name: String,
}

impl Registration {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Withdraws the tool now (the same as dropping the registration).
    pub fn withdraw(self) {}

    /// Takes over a registration another module of the page made (the wallet's boot module
    /// registers its persistent tools before the app is loaded): the tool stays registered, and
    /// dropping this aborts `controller`, which withdraws it.
    pub fn adopt(controller: AbortController, name: String) -> Self {
        Self { controller, name }
    }

    /// Gives up the registration without withdrawing the tool: the controller whose abort
    /// withdraws it, for the module that [adopts](Self::adopt) it.
    pub fn into_controller(self) -> AbortController {
        let this = core::mem::ManuallyDrop::new(self);
        this.controller.clone()
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.controller.abort();
    }
}

/// Registers on `ctx` the tool `def` (its WebMCP JSON: name, title, description, inputSchema,
/// annotations) with `execute` as its `execute(input, options)`; the browser's or polyfill's
/// registry gets the registration's `AbortSignal`. A refusal the registry reports later
/// (a rejected promise) goes to `on_refused` as `name: error`.
pub fn register(
    ctx: &JsValue,
    def: &Value,
    execute: &JsValue,
    on_refused: impl FnOnce(String) + 'static,
) -> Result<Registration, Refused> {
    let refused = |e: JsValue| Refused(error_text(&e));
    let name = def["name"].as_str().unwrap_or_default().to_owned();
    let controller = AbortController::new().map_err(refused)?;
    let tool = to_js(def);
    if !tool.is_object() {
        return Err(Refused(format!("{name}: a tool is a JSON object")));
    }
    Reflect::set(&tool, &"execute".into(), execute).map_err(refused)?;
    let options = Object::new();
    Reflect::set(&options, &"signal".into(), &controller.signal()).map_err(refused)?;
    let pending = Reflect::get(ctx, &"registerTool".into())
        .and_then(|f| f.dyn_into::<Function>())
        .and_then(|f| f.call2(ctx, &tool, &options))
        .map_err(refused)?;
    let for_error = name.clone();
    wasm_bindgen_futures::spawn_local(async move {
        if let Err(e) = wasm_bindgen_futures::JsFuture::from(Promise::resolve(&pending)).await {
            on_refused(format!("{for_error}: {}", error_text(&e)));
        }
    });
    Ok(Registration { controller, name })
}

/// An `execute(input, options)` function owned by JavaScript from here on (freed when the
/// function is collected), never dropped with a registration.
pub fn execute_fn(run: impl Fn(JsValue) -> Promise + 'static) -> JsValue {
    Closure::<dyn FnMut(JsValue, JsValue) -> JsValue>::new(move |input: JsValue, _: JsValue| {
        JsValue::from(run(input))
    })
    .into_js_value()
}

/// Wraps `ctx.executeTool` for tool handles kept past their withdrawal. Chromium rejects a call
/// through such a handle with a bare `UnknownError` ("transient", an invitation to retry; the
/// polyfill's says "Tool not found"). When the registry rejects a call, `fallback` gets the
/// tool's name and the agent's input: if it answers (a tool of this page that is not registered
/// now), the call resolves to that answer's JSON text (the page's gate refusal:
/// `grant_revoked`, `grant_expired`); if not, the registry's rejection stands.
pub fn route_kept_handles(
    ctx: &JsValue,
    fallback: impl Fn(&str, JsValue) -> Option<Promise> + 'static,
) {
    let Ok(original) =
        Reflect::get(ctx, &"executeTool".into()).and_then(|f| f.dyn_into::<Function>())
    else {
        return;
    };
    let target = ctx.clone();
    let fallback = std::rc::Rc::new(fallback);
    let wrapper = Closure::<dyn FnMut(JsValue, JsValue, JsValue) -> Promise>::new(
        move |tool: JsValue, input: JsValue, options: JsValue| -> Promise {
            let first = original
                .call3(&target, &tool, &input, &options)
                .map(|p| Promise::resolve(&p))
                .unwrap_or_else(|e| Promise::reject(&e));
            let name = Reflect::get(&tool, &"name".into())
                .ok()
                .and_then(|n| n.as_string());
            let fallback = fallback.clone();
            wasm_bindgen_futures::future_to_promise(async move {
                let error = match wasm_bindgen_futures::JsFuture::from(first).await {
                    Ok(answer) => return Ok(answer),
                    Err(error) => error,
                };
                let Some(answer) = name.and_then(|name| fallback(&name, input)) else {
                    return Err(error);
                };
                let out = wasm_bindgen_futures::JsFuture::from(answer).await?;
                Ok(js_sys::JSON::stringify(&out)
                    .map(JsValue::from)
                    .unwrap_or(JsValue::NULL))
            })
        },
    )
    .into_js_value();
    let _ = Reflect::set(ctx, &"executeTool".into(), &wrapper);
}
