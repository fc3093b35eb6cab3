//! `WebMcpHost`: capability-gate's `Host` over `document.modelContext`.
//!
//! One `AbortController` per registration; dropping the registration aborts it, which removes
//! the tool synchronously (WEBMCP.md). The tool's `execute` hands the call to the app, which runs
//! it through the gate and returns the envelope as a plain object: refusals are values, never
//! throws (Chromium reduces a throw to a bare `UnknownError`).
//!
//! `document.modelContext` is the browser's own (native WebMCP) or, without it, the vendored
//! `@mcp-b/webmcp-polyfill` that the page's `webmcp.js` loads before the wasm starts
//! ([`Detection::Polyfilled`]). The polyfill's `executeTool` takes the input as JSON text, where
//! Chromium takes an object: both reach the gate as the same JSON.
//!
//! Only when there is no `document.modelContext` at all are the registrations kept in a local
//! table, which `window.tacit.tools()` and `window.tacit.call()` expose to agents that run script
//! in the page. With a registry, `window.tacit` is fixed to `undefined` so that no door bypasses
//! the browser's (or the polyfill's) tool registry.

/// The vendored polyfill this page loads without native WebMCP (`vendor/webmcp-polyfill/`).
pub const POLYFILL: &str = "@mcp-b/webmcp-polyfill 5.1.0";

/// The global the page's `webmcp.js` sets (read-only) to what it did: `native`, `polyfilled`,
/// `polyfill-failed` or `insecure-context`.
pub const MARKER: &str = "__tacitWebmcp";

/// Why WebMCP is or is not available, as shown in the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detection {
    /// The browser's own `document.modelContext`.
    Available,
    /// `document.modelContext` is the vendored polyfill ([`POLYFILL`]), loaded by the page.
    Polyfilled,
    /// `document.modelContext` comes from some other script, not from the browser nor from the
    /// page's own loader. Tools are registered there all the same.
    Scripted,
    Absent,
    /// No native WebMCP and the vendored polyfill did not load (or did not install itself).
    PolyfillFailed,
    InsecureContext,
    /// `navigator.modelContext.provideContext`, the API from before March 2026.
    SupersededApi,
    /// The browser refused a registration; its error.
    RegistrationRefused(String),
}

impl Detection {
    /// Every code [`Detection::code`] can return (what `window.tacit.status()` returns).
    pub const CODES: [&'static str; 7] = [
        "available",
        "polyfilled",
        "scripted",
        "absent",
        "insecure-context",
        "superseded-api",
        "registration-refused",
    ];

    pub fn code(&self) -> &'static str {
        match self {
            Detection::Available => "available",
            Detection::Polyfilled => "polyfilled",
            Detection::Scripted => "scripted",
            Detection::Absent | Detection::PolyfillFailed => "absent",
            Detection::InsecureContext => "insecure-context",
            Detection::SupersededApi => "superseded-api",
            Detection::RegistrationRefused(_) => "registration-refused",
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Detection::Available => "WebMCP available".into(),
            Detection::Polyfilled => format!(
                "WebMCP: polyfilled ({POLYFILL}): this browser has no WebMCP of its own; the \
                 tools are in the polyfill's document.modelContext. It drops the \
                 consequentialHint annotation, so agents are not told which tools act for you."
            ),
            Detection::Scripted => "WebMCP: document.modelContext comes from a script on this \
                page, not from the browser nor from Tacit's polyfill; tools are registered there"
                .into(),
            Detection::Absent => "WebMCP absent: tools offered through window.tacit".into(),
            Detection::PolyfillFailed => format!(
                "WebMCP absent and the bundled polyfill ({POLYFILL}) did not load: tools \
                 offered through window.tacit"
            ),
            Detection::InsecureContext => "WebMCP needs a secure context (https or localhost)".into(),
            Detection::SupersededApi => {
                "Only the superseded navigator.modelContext API is present: tools offered through window.tacit".into()
            }
            Detection::RegistrationRefused(e) => format!("The browser refused a tool: {e}"),
        }
    }

    /// Whether tools go to a `document.modelContext` registry (and `window.tacit` is not
    /// offered).
    pub fn has_registry(&self) -> bool {
        matches!(
            self,
            Detection::Available | Detection::Polyfilled | Detection::Scripted
        )
    }

    /// What the page sees, decided: whether `document.modelContext` exists, whether its getter
    /// is the browser's own, what the loader marked, and whether the context is secure.
    pub fn decide(
        has_context: bool,
        native_getter: bool,
        marker: Option<&str>,
        secure: bool,
    ) -> Self {
        match (has_context, native_getter, marker) {
            // The browser's own getter: native, whatever a marker claims.
            (true, true, _) => Detection::Available,
            (true, false, Some("polyfilled")) => Detection::Polyfilled,
            (true, false, _) => Detection::Scripted,
            (false, _, _) if !secure => Detection::InsecureContext,
            (false, _, Some("polyfill-failed")) => Detection::PolyfillFailed,
            (false, _, _) => Detection::Absent,
        }
    }
}

#[cfg(target_arch = "wasm32")]
pub use glue::*;

#[cfg(target_arch = "wasm32")]
mod glue {
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::rc::Rc;

    use capability_gate::{Handler, Host, HostError, ToolDef};
    use js_sys::{Function, Object, Promise, Reflect};
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::*;
    use web_sys::AbortController;

    use super::{Detection, MARKER};

    /// The `document.modelContext` object, if present.
    pub fn model_context() -> Option<JsValue> {
        let document = web_sys::window()?.document()?;
        let ctx = Reflect::get(&document, &"modelContext".into()).ok()?;
        (!ctx.is_undefined() && !ctx.is_null()).then_some(ctx)
    }

    /// Whether `document.modelContext` is read through a getter that is the browser's own (native
    /// code), found on the document's prototype chain.
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

    /// What `webmcp.js` marked, if anything.
    fn marker() -> Option<String> {
        Reflect::get(&js_sys::global(), &MARKER.into())
            .ok()?
            .as_string()
    }

    /// Detects WebMCP the way WEBMCP.md describes this browser, and whether the page's loader
    /// installed the vendored polyfill.
    pub fn detect() -> Detection {
        let Some(window) = web_sys::window() else {
            return Detection::Absent;
        };
        let has_context = model_context().is_some();
        let found = Detection::decide(
            has_context,
            has_context && native_getter(),
            marker().as_deref(),
            window.is_secure_context(),
        );
        if found != Detection::Absent {
            return found;
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

    /// Fixes `window.tacit` to `undefined` (not writable, not configurable): with a WebMCP registry
    /// tools are offered there only, and no script can put another door in its place.
    fn close_window_door() {
        let Some(window) = web_sys::window() else {
            return;
        };
        let descriptor = Object::new();
        let _ = Reflect::set(&descriptor, &"value".into(), &JsValue::UNDEFINED);
        let _ = Reflect::set(&descriptor, &"writable".into(), &JsValue::FALSE);
        let _ = Reflect::set(&descriptor, &"configurable".into(), &JsValue::FALSE);
        let _ = Reflect::set(&descriptor, &"enumerable".into(), &JsValue::FALSE);
        let _ = Reflect::define_property(
            window.unchecked_ref::<Object>(),
            &"tacit".into(),
            &descriptor,
        );
    }

    /// A tool's input as the gate reads it: the polyfill's `executeTool` passes JSON text where
    /// Chromium passes an object, so text is parsed (text that is not JSON stays as it is and is
    /// refused as `invalid_input`).
    fn input_object(input: JsValue) -> JsValue {
        match input.as_string() {
            Some(text) => js_sys::JSON::parse(&text).unwrap_or(input),
            None => input,
        }
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
            let ctx = model_context();
            if ctx.is_some() {
                close_window_door();
            }
            let host = Self {
                ctx,
                table: Rc::default(),
                retired: Rc::default(),
                executor,
                on_refused,
            };
            host.route_kept_handles();
            host
        }

        /// Chromium's `executeTool` rejects a tool object whose registration was withdrawn with a
        /// bare `UnknownError` ("transient", an invitation to retry; the polyfill's says "Tool not
        /// found"). In this page it is wrapped:
        /// when the browser rejects a call to a claim tool this page registered earlier, the call
        /// goes to the gate, which answers with its refusal envelope (`grant_revoked`,
        /// `grant_expired`). Other rejections, and any rejection of a tool that is still
        /// registered, pass through unchanged.
        fn route_kept_handles(&self) {
            let Some(ctx) = &self.ctx else { return };
            let Ok(original) =
                Reflect::get(ctx, &"executeTool".into()).and_then(|f| f.dyn_into::<Function>())
            else {
                return;
            };
            let (ctx_for_call, retired, executor, table) = (
                ctx.clone(),
                self.retired.clone(),
                self.executor.clone(),
                self.table.clone(),
            );
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
                    let (executor, table) = (executor.clone(), table.clone());
                    wasm_bindgen_futures::future_to_promise(async move {
                        match wasm_bindgen_futures::JsFuture::from(first).await {
                            Ok(text) => Ok(text),
                            Err(error) => {
                                let Some((handler, name)) = handler else {
                                    return Err(error);
                                };
                                // A tool that is still registered was refused by the registry
                                // for its own reasons (the polyfill cannot parse an input that
                                // is not JSON text): that refusal stands.
                                if table.borrow().contains_key(&name) {
                                    return Err(error);
                                }
                                let out = wasm_bindgen_futures::JsFuture::from(executor(
                                    name,
                                    handler,
                                    input_object(input),
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

        /// Whether tools go to `document.modelContext`, the browser's or the polyfill's (otherwise
        /// only to `window.tacit`).
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
                    executor(tool_name.clone(), handler.clone(), input_object(input)).into()
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
}
