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
//!
//! Which WebMCP is trusted, and its words, are decided in the pure crate
//! ([`capability_gate::host::Seen::decide`]); this module reads what the page sees.

pub use capability_gate::host::{Detection, Seen};
pub use tacit_webmcp::{MARKER, POLYFILL};

/// The person is told the name of the polyfill the page really loads.
const _: () = assert!(same(capability_gate::host::POLYFILL, POLYFILL));

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
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
    use tacit_webmcp::{Registration, input_object};
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::*;
    use web_sys::AbortController;

    pub use tacit_webmcp::{error_text, model_context};

    use super::{Detection, Seen};

    /// Detects WebMCP the way WEBMCP.md describes this browser, and whether the page's loader
    /// installed the vendored polyfill: what the page sees, decided by [`Seen::decide`].
    pub fn detect() -> Detection {
        Seen::of(&tacit_webmcp::observe()).decide()
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
        /// Registrations the boot module made before the app was loaded, by tool name: the
        /// first registration of that name takes the boot's over instead of registering again,
        /// so an agent sees no tool withdrawn and re-added when the app loads.
        adopted: RefCell<BTreeMap<String, AbortController>>,
    }

    impl core::fmt::Debug for WebMcpHost {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_struct("WebMcpHost")
                .field("webmcp", &self.ctx.is_some())
                .finish()
        }
    }

    /// One live registration: withdrawn from `document.modelContext` (its controller aborted)
    /// and forgotten on drop.
    pub struct WebRegistration {
        registration: Option<Registration>,
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
            if let Some(registration) = self.registration.take() {
                registration.withdraw();
            }
            self.table.borrow_mut().remove(&self.name);
        }
    }

    impl WebMcpHost {
        /// `adopted`: the boot module's registrations ([`WebMcpHost::adopted`]).
        /// `vault`: the page is the person's vault (issue 29): no tool goes to
        /// `document.modelContext` (the table alone holds them, for the paired bridges).
        pub fn new(
            executor: Executor,
            on_refused: OnRefused,
            adopted: BTreeMap<String, AbortController>,
            vault: bool,
        ) -> Self {
            let ctx = if vault { None } else { model_context() };
            let host = Self {
                ctx,
                table: Rc::default(),
                retired: Rc::default(),
                executor,
                on_refused,
                adopted: RefCell::new(adopted),
            };
            if let Some(ctx) = &host.ctx {
                close_window_door();
                host.route_kept_handles(ctx);
            }
            host
        }

        /// Chromium's `executeTool` rejects a tool object whose registration was withdrawn with a
        /// bare `UnknownError` (see [`tacit_webmcp::route_kept_handles`]). In this page, when the
        /// browser rejects a call to a claim tool this page registered earlier and that is not
        /// registered now, the call goes to the gate, which answers with its refusal envelope
        /// (`grant_revoked`, `grant_expired`). Other rejections, and any rejection of a tool that
        /// is still registered (the polyfill cannot parse an input that is not JSON text), pass
        /// through unchanged.
        fn route_kept_handles(&self, ctx: &JsValue) {
            let (retired, executor, table) = (
                self.retired.clone(),
                self.executor.clone(),
                self.table.clone(),
            );
            tacit_webmcp::route_kept_handles(ctx, move |name, input| {
                if table.borrow().contains_key(name) {
                    return None;
                }
                let handler = retired.borrow().get(name).cloned()?;
                Some(executor(name.to_owned(), handler, input_object(input)))
            });
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

        /// A call the boot module's `execute` forwarded: run like a call to this host's own
        /// registration of `name` if it is registered now; `None` if not (withdrawn, or never
        /// registered here).
        pub fn call_adopted(&self, name: &str, input: JsValue) -> Option<Promise> {
            let handler = self.table.borrow().get(name)?.handler.clone();
            Some((self.executor)(
                name.to_owned(),
                handler,
                input_object(input),
            ))
        }

        /// The `modelContext` object, for event listeners.
        pub fn context(&self) -> Option<&JsValue> {
            self.ctx.as_ref()
        }
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
            // Owned by JavaScript from here on, never dropped with the registration: an agent
            // that kept the tool object past its grant reaches the gate and gets a refusal
            // envelope (`grant_revoked`/`grant_expired`), not a throw from a dead closure.
            let execute = tacit_webmcp::execute_fn(move |input| {
                executor(tool_name.clone(), handler.clone(), input_object(input))
            });
            let adopted = self.adopted.borrow_mut().remove(&name);
            let registration = match (&self.ctx, adopted) {
                // Registered by the boot module with the same definition; its `execute` forwards
                // to [`WebMcpHost::call_adopted`].
                (Some(_), Some(controller)) => Some(Registration::adopt(controller, name.clone())),
                (Some(ctx), None) => {
                    let on_refused = self.on_refused.clone();
                    let json = def.to_webmcp_json();
                    let registration =
                        tacit_webmcp::register(ctx, &json, &execute, move |e| on_refused(e))
                            .map_err(|e| HostError::Refused(e.to_string()))?;
                    Some(registration)
                }
                (None, _) => None,
            };
            if matches!(def.handler, Handler::Claim { .. }) {
                self.retired
                    .borrow_mut()
                    .insert(name.clone(), def.handler.clone());
            }
            self.table.borrow_mut().insert(name.clone(), def.clone());
            Ok(WebRegistration {
                registration,
                table: self.table.clone(),
                name,
            })
        }

        fn list(&self) -> Vec<String> {
            self.table.borrow().keys().cloned().collect()
        }
    }
}
