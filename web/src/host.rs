//! `WebMcpHost`: capability-gate's `Host` over `document.modelContext`.
//!
//! One `AbortController` per registration; dropping the registration aborts it, which removes
//! the tool synchronously (WEBMCP.md). The tool's `execute` hands the call to the app, which runs
//! it through the gate and returns the envelope as a plain object: refusals are values, never
//! throws (Chromium reduces a throw to a bare `UnknownError`).
//!
//! Without WebMCP the same registrations are kept in a local table, which `window.tacit.tools()`
//! and `window.tacit.call()` expose to agents that run script in the page.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use capability_gate::{Handler, Host, HostError, ToolDef};
use js_sys::{Function, Object, Promise, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

/// Why WebMCP is or is not available, as shown in the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detection {
    Available,
    Absent,
    InsecureContext,
    /// `navigator.modelContext.provideContext`, the API from before March 2026.
    SupersededApi,
    /// The browser refused a registration; its error.
    RegistrationRefused(String),
}

impl Detection {
    pub fn code(&self) -> &'static str {
        match self {
            Detection::Available => "available",
            Detection::Absent => "absent",
            Detection::InsecureContext => "insecure-context",
            Detection::SupersededApi => "superseded-api",
            Detection::RegistrationRefused(_) => "registration-refused",
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Detection::Available => "WebMCP available".into(),
            Detection::Absent => "WebMCP absent: tools offered through window.tacit".into(),
            Detection::InsecureContext => "WebMCP needs a secure context (https or localhost)".into(),
            Detection::SupersededApi => {
                "Only the superseded navigator.modelContext API is present: tools offered through window.tacit".into()
            }
            Detection::RegistrationRefused(e) => format!("The browser refused a tool: {e}"),
        }
    }
}

/// The `document.modelContext` object, if present.
pub fn model_context() -> Option<JsValue> {
    let document = web_sys::window()?.document()?;
    let ctx = Reflect::get(&document, &"modelContext".into()).ok()?;
    (!ctx.is_undefined() && !ctx.is_null()).then_some(ctx)
}

/// Detects WebMCP the way WEBMCP.md describes this browser.
pub fn detect() -> Detection {
    if model_context().is_some() {
        return Detection::Available;
    }
    let Some(window) = web_sys::window() else {
        return Detection::Absent;
    };
    if !window.is_secure_context() {
        return Detection::InsecureContext;
    }
    let navigator_ctx =
        Reflect::get(&window.navigator(), &"modelContext".into()).unwrap_or(JsValue::UNDEFINED);
    let provide =
        Reflect::get(&navigator_ctx, &"provideContext".into()).unwrap_or(JsValue::UNDEFINED);
    if !navigator_ctx.is_undefined() && provide.is_function() {
        return Detection::SupersededApi;
    }
    Detection::Absent
}

/// Runs a tool call: the tool's name, its handler, and the agent's input; resolves to the
/// envelope object.
pub type Executor = Rc<dyn Fn(String, Handler, JsValue) -> Promise>;
/// Told when the browser refuses a registration asynchronously.
pub type OnRefused = Rc<dyn Fn(String)>;

type Table = Rc<RefCell<BTreeMap<String, ToolDef>>>;

/// See the module docs.
pub struct WebMcpHost {
    ctx: Option<JsValue>,
    table: Table,
    /// Every claim tool ever registered this page session, by name: a call through a tool
    /// object kept past its registration is routed to the gate, which refuses it.
    retired: Rc<RefCell<BTreeMap<String, Handler>>>,
    executor: Executor,
    on_refused: OnRefused,
}

impl core::fmt::Debug for WebMcpHost {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WebMcpHost")
            .field("webmcp", &self.ctx.is_some())
            .finish()
    }
}

/// One live registration: aborted (tool withdrawn) and forgotten on drop.
pub struct WebRegistration {
    controller: Option<AbortController>,
    table: Table,
    name: String,
}

impl core::fmt::Debug for WebRegistration {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WebRegistration")
            .field("name", &self.name)
            .finish()
    }
}

impl Drop for WebRegistration {
    fn drop(&mut self) {
        if let Some(controller) = &self.controller {
            controller.abort();
        }
        self.table.borrow_mut().remove(&self.name);
    }
}

impl WebMcpHost {
    pub fn new(executor: Executor, on_refused: OnRefused) -> Self {
        let host = Self {
            ctx: model_context(),
            table: Rc::default(),
            retired: Rc::default(),
            executor,
            on_refused,
        };
        host.route_kept_handles();
        host
    }

    /// Chromium's `executeTool` rejects a tool object whose registration was withdrawn with a
    /// bare `UnknownError` ("transient", an invitation to retry). In this page it is wrapped:
    /// when the browser rejects a call to a claim tool this page registered earlier, the call
    /// goes to the gate, which answers with its refusal envelope (`grant_revoked`,
    /// `grant_expired`). Other rejections pass through unchanged.
    fn route_kept_handles(&self) {
        let Some(ctx) = &self.ctx else { return };
        let Ok(original) =
            Reflect::get(ctx, &"executeTool".into()).and_then(|f| f.dyn_into::<Function>())
        else {
            return;
        };
        let (ctx_for_call, retired, executor) =
            (ctx.clone(), self.retired.clone(), self.executor.clone());
        let wrapper = Closure::<dyn FnMut(JsValue, JsValue, JsValue) -> Promise>::new(
            move |tool: JsValue, input: JsValue, options: JsValue| -> Promise {
                let first = original
                    .call3(&ctx_for_call, &tool, &input, &options)
                    .map(|p| Promise::resolve(&p))
                    .unwrap_or_else(|e| Promise::reject(&e));
                let handler = Reflect::get(&tool, &"name".into())
                    .ok()
                    .and_then(|n| n.as_string())
                    .and_then(|n| Some((retired.borrow().get(&n).cloned()?, n)));
                let executor = executor.clone();
                wasm_bindgen_futures::future_to_promise(async move {
                    match wasm_bindgen_futures::JsFuture::from(first).await {
                        Ok(text) => Ok(text),
                        Err(error) => {
                            let Some((handler, name)) = handler else {
                                return Err(error);
                            };
                            let out = wasm_bindgen_futures::JsFuture::from(executor(
                                name, handler, input,
                            ))
                            .await?;
                            Ok(js_sys::JSON::stringify(&out)
                                .map(JsValue::from)
                                .unwrap_or(JsValue::NULL))
                        }
                    }
                })
            },
        )
        .into_js_value();
        let _ = Reflect::set(ctx, &"executeTool".into(), &wrapper);
    }

    /// Whether tools go to `document.modelContext` (otherwise only to `window.tacit`).
    pub fn uses_webmcp(&self) -> bool {
        self.ctx.is_some()
    }

    /// The registered definitions (what `window.tacit.tools()` lists).
    pub fn definitions(&self) -> Vec<ToolDef> {
        self.table.borrow().values().cloned().collect()
    }

    /// The registered definition of `name`.
    pub fn definition(&self, name: &str) -> Option<ToolDef> {
        self.table.borrow().get(name).cloned()
    }

    /// Calls `getTools()` on the live registry; resolves to its array.
    pub fn get_tools(&self) -> Option<Promise> {
        let ctx = self.ctx.as_ref()?;
        let get = Reflect::get(ctx, &"getTools".into())
            .ok()?
            .dyn_into::<Function>()
            .ok()?;
        let result = get.call0(ctx).ok()?;
        Some(Promise::resolve(&result))
    }

    /// The `modelContext` object, for event listeners.
    pub fn context(&self) -> Option<&JsValue> {
        self.ctx.as_ref()
    }
}

fn js_tool(def: &ToolDef, execute: &JsValue) -> Result<Object, JsValue> {
    let json = def.to_webmcp_json();
    let tool: Object = js_sys::JSON::parse(&json.to_string())?.dyn_into()?;
    Reflect::set(&tool, &"execute".into(), execute)?;
    Ok(tool)
}

impl Host for WebMcpHost {
    type Registration = WebRegistration;

    fn register(&mut self, def: &ToolDef) -> Result<WebRegistration, HostError> {
        let name = def.name.as_str().to_owned();
        if self.table.borrow().contains_key(&name) {
            return Err(HostError::Duplicate(name));
        }
        let executor = self.executor.clone();
        let (tool_name, handler) = (name.clone(), def.handler.clone());
        // Owned by JavaScript from here on (freed when the function is collected), never
        // dropped with the registration: an agent that kept the tool object past its grant
        // reaches the gate and gets a refusal envelope (`grant_revoked`/`grant_expired`), not
        // a throw from a dead closure.
        let execute = Closure::<dyn FnMut(JsValue, JsValue) -> JsValue>::new(
            move |input: JsValue, _options: JsValue| -> JsValue {
                executor(tool_name.clone(), handler.clone(), input).into()
            },
        )
        .into_js_value();
        let mut controller = None;
        if let Some(ctx) = &self.ctx {
            let refused = |e: JsValue| HostError::Refused(error_text(&e));
            let abort = AbortController::new().map_err(refused)?;
            let tool = js_tool(def, &execute).map_err(refused)?;
            let options = Object::new();
            Reflect::set(&options, &"signal".into(), &abort.signal()).map_err(refused)?;
            let register = Reflect::get(ctx, &"registerTool".into())
                .and_then(|f| f.dyn_into::<Function>())
                .map_err(refused)?;
            let promise = register.call2(ctx, &tool, &options).map_err(refused)?;
            let on_refused = self.on_refused.clone();
            let name_for_error = name.clone();
            wasm_bindgen_futures::spawn_local(async move {
                if let Err(e) =
                    wasm_bindgen_futures::JsFuture::from(Promise::resolve(&promise)).await
                {
                    on_refused(format!("{name_for_error}: {}", error_text(&e)));
                }
            });
            controller = Some(abort);
        }
        if matches!(def.handler, Handler::Claim { .. }) {
            self.retired
                .borrow_mut()
                .insert(name.clone(), def.handler.clone());
        }
        self.table.borrow_mut().insert(name.clone(), def.clone());
        Ok(WebRegistration {
            controller,
            table: self.table.clone(),
            name,
        })
    }

    fn list(&self) -> Vec<String> {
        self.table.borrow().keys().cloned().collect()
    }
}

/// `name: message` of a JS error, without anything else.
pub fn error_text(e: &JsValue) -> String {
    let name = Reflect::get(e, &"name".into())
        .ok()
        .and_then(|v| v.as_string());
    let message = Reflect::get(e, &"message".into())
        .ok()
        .and_then(|v| v.as_string());
    match (name, message) {
        (Some(n), Some(m)) => format!("{n}: {m}"),
        (None, Some(m)) => m,
        _ => e.as_string().unwrap_or_else(|| "unknown error".into()),
    }
}
