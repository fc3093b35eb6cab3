//! `tool-gate` for any WebMCP page: a JavaScript package (wasm-bindgen, `--target web`, with
//! TypeScript typings) whose tools exist only while their grant lives.
//!
//! ```js
//! import init, { ToolGate } from "./pkg/tool_gate_js.js";
//! await init();
//! const gate = new ToolGate();                       // document.modelContext, or a TypeError
//! gate.on("removed", (e) => console.log(e.name, e.reason)); // "revoked" | "expired" | "spent"
//! gate.grant({ name: "add_to_cart", description: "…", inputSchema, execute }, { expiresIn: 60_000, uses: 1 });
//! gate.revoke("add_to_cart");
//! ```
//!
//! - [`JsToolGate::grant`] registers the page's tool with `registerTool(tool', {signal})`, where
//!   `tool'.execute` first checks the grant **at use** ([`ToolGate::begin_use`]) and answers a
//!   refusal envelope (`{ok: false, isError: true, error: {code, message}}`) without calling the
//!   page's `execute` when the grant is revoked, expired or spent. `tool'.execute` never throws
//!   and never rejects: a throw or rejection of the page's `execute` becomes a `tool_failed`
//!   refusal (Chromium would turn it into a bare `UnknownError`).
//! - Revoke, the last use and expiry abort the registration (`AbortController.abort()`), so the
//!   tool leaves the browser's list; expiry is also enforced by a timer scheduled from
//!   [`ToolGate::next_deadline`].
//! - The input arrives as an object (Chromium) or as JSON text (polyfills); it is read through
//!   [`tool_gate::input::from_text`] (depth limit) and the page's `execute` always gets the
//!   parsed object.
//! - Only the constructor, `grant`, `on` and `off` throw (a `TypeError` or `RangeError` naming
//!   what is wrong), and only for the caller's own mistakes.
//!
//! A tool an agent kept past its grant gets the refusal of how the grant ended
//! (`grant_revoked`, `grant_expired`, `grant_spent`), never a throw:
//! - the registered object (`tool'`, which an in-page agent may keep): its `execute` holds the
//!   gate and is refused even after a new grant of the same name (`grant_revoked`);
//! - the object from `document.modelContext.getTools()` (what an agent holds): Chromium's
//!   `executeTool` rejects it with a bare `UnknownError` once its registration is withdrawn, so
//!   the gate wraps `executeTool` ([`tacit_webmcp::route_kept_handles`], as the wallet does):
//!   a call the browser rejects to a tool this gate withdrew resolves to the refusal's JSON
//!   text. Such an object names the tool: after a new grant of that name the browser sends it
//!   to the new grant. A rejection of any other tool, or of a tool registered now, stands.
//!
//! Over DevTools (`WebMCP.invokeTool`, by name) a withdrawn tool is answered by the browser
//! ("Tool not found") without reaching the page. Dropping the `ToolGate` object (`free()`, or
//! garbage collection) does not withdraw tools: call `revokeAll()` first.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::{Rc, Weak};

use js_sys::{Array, Function, Object, Reflect};
use tacit_webmcp::to_js;
use tool_gate::envelope::{Refusal, envelope};
use tool_gate::{Change, Ended, Lease, MAX_LEASE_MS, MIN_LEASE_MS, ToolGate};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

/// The refusal code when the page's own `execute` throws or rejects.
pub const TOOL_FAILED: &str = "tool_failed";

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** A WebMCP tool, as a page would pass it to `document.modelContext.registerTool`. */
export interface GateTool {
  name: string;
  description: string;
  title?: string;
  inputSchema?: object;
  annotations?: {
    readOnlyHint?: boolean;
    untrustedContentHint?: boolean;
    consequentialHint?: boolean;
    [hint: string]: unknown;
  };
  /** Gets the agent's input parsed (an object), never JSON text. May be async; may throw. */
  execute(input: any, client?: unknown): unknown;
}

/** How long a grant lives and how often its tool may be called. */
export interface GrantOptions {
  /** Milliseconds from now, 1000 (one second) to 86400000 (one day). */
  expiresIn: number;
  /** How many calls the grant allows (at least 1); absent: any number until it expires. */
  uses?: number;
}

/** A live grant. */
export interface GrantInfo {
  name: string;
  /** Milliseconds since the epoch (compare with `Date.now()`). */
  expiresAt: number;
  /** `null`: any number of uses until expiry. */
  usesLeft: number | null;
}

/** Why a tool stopped existing. */
export type EndReason = "revoked" | "expired" | "spent";

export interface AddedEvent extends GrantInfo {
  type: "added";
}

export interface RemovedEvent {
  type: "removed";
  name: string;
  reason: EndReason;
  /** Set when the browser refused the registration (the grant was then revoked). */
  error?: string;
}

export type GateEvent = AddedEvent | RemovedEvent;
export type GateEventType = GateEvent["type"];

/** What a gated tool answers instead of calling the page's `execute`. */
export interface Refusal {
  ok: false;
  isError: true;
  error: {
    code: "grant_revoked" | "grant_expired" | "grant_spent" | "unknown_tool" | "invalid_input" | "tool_failed";
    message: string;
  };
}

/** The part of `document.modelContext` the gate uses. */
export interface ModelContextLike {
  registerTool(tool: object, options?: { signal?: AbortSignal }): unknown;
  /**
   * When present, the gate replaces it with a wrapper: a call the original rejects to a tool
   * this gate withdrew resolves to the refusal's JSON text (`grant_revoked`, …).
   */
  executeTool?(tool: object, input: object, options?: { signal?: AbortSignal }): Promise<string>;
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "GateTool")]
    pub type GateTool;
    #[wasm_bindgen(typescript_type = "GrantOptions")]
    pub type GrantOptions;
    #[wasm_bindgen(typescript_type = "GrantInfo")]
    pub type GrantInfo;
    #[wasm_bindgen(typescript_type = "GrantInfo[]")]
    pub type GrantInfoList;
    #[wasm_bindgen(typescript_type = "GateEventType")]
    pub type GateEventType;
    #[wasm_bindgen(typescript_type = "(event: GateEvent) => void")]
    pub type GateListener;
    #[wasm_bindgen(typescript_type = "ModelContextLike")]
    pub type ModelContextLike;

    type AbortController;
    #[wasm_bindgen(constructor, catch)]
    fn new() -> Result<AbortController, JsValue>;
    #[wasm_bindgen(method)]
    fn abort(this: &AbortController);
    #[wasm_bindgen(method, getter)]
    fn signal(this: &AbortController) -> JsValue;

    #[wasm_bindgen(js_name = Promise)]
    type JsPromise;
    #[wasm_bindgen(static_method_of = JsPromise, js_class = "Promise", js_name = resolve)]
    fn resolve(value: &JsValue) -> JsPromise;
    #[wasm_bindgen(method, js_name = then)]
    fn then2(this: &JsPromise, ok: &JsValue, err: &JsValue) -> JsPromise;

    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(callback: &JsValue, ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: &JsValue);

    #[wasm_bindgen(js_namespace = Object, js_name = assign, catch)]
    fn object_assign(target: &JsValue, source: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = Date, js_name = now)]
    fn date_now() -> f64;
    #[wasm_bindgen(js_namespace = JSON, js_name = stringify, catch)]
    fn json_stringify(value: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    fn json_parse(text: &str) -> Result<JsValue, JsValue>;
}

/// What the gate keeps per tool: the page's tool object and its `execute`.
#[derive(Clone)]
struct Entry {
    tool: JsValue,
    execute: Function,
}

struct Inner {
    ctx: JsValue,
    gate: RefCell<ToolGate<Entry>>,
    registrations: RefCell<BTreeMap<String, AbortController>>,
    listeners: RefCell<Vec<(Kind, Function)>>,
    timer: RefCell<Option<JsValue>>,
    tick: JsValue,
    /// Bumped by every grant, so a late registration failure only ends the grant it belongs to.
    generation: Cell<u64>,
    generations: RefCell<BTreeMap<String, u64>>,
    /// How each replaced or ended registration ended: a tool object an agent kept from it is
    /// refused with that reason even after a new grant of the same name.
    ended: RefCell<BTreeMap<u64, Ended>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Added,
    Removed,
}

/// A gate over one page's WebMCP tools: each tool exists only while its grant lives.
#[wasm_bindgen(js_name = ToolGate)]
pub struct JsToolGate {
    inner: Rc<Inner>,
}

impl std::fmt::Debug for JsToolGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let live: Vec<String> = self
            .inner
            .gate
            .borrow()
            .live()
            .map(|(name, _, _)| name.to_owned())
            .collect();
        f.debug_struct("ToolGate").field("live", &live).finish()
    }
}

#[wasm_bindgen(js_class = ToolGate)]
impl JsToolGate {
    /// A gate over `modelContext` (default: `document.modelContext`). Throws a `TypeError` when
    /// there is none (no WebMCP in this browser and no polyfill loaded).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(js_name = "modelContext")] model_context: Option<ModelContextLike>,
    ) -> Result<JsToolGate, JsValue> {
        let ctx = match model_context {
            Some(ctx) => JsValue::from(ctx),
            None => default_context(),
        };
        let register = get(&ctx, "registerTool");
        if !ctx.is_object() || !register.is_function() {
            return Err(type_error(
                "ToolGate: no WebMCP model context: document.modelContext is missing or has no \
                 registerTool (use a browser with WebMCP, load a WebMCP polyfill first, or pass \
                 a model context to new ToolGate(ctx))",
            ));
        }
        let inner = Rc::new_cyclic(|weak: &Weak<Inner>| {
            let weak = weak.clone();
            let tick = Closure::<dyn FnMut()>::own_aborting(move || {
                if let Some(inner) = weak.upgrade() {
                    inner.timer.borrow_mut().take();
                    let changes = inner.gate.borrow_mut().tick(now());
                    inner.apply(changes);
                }
            })
            .into_js_value();
            Inner {
                ctx,
                gate: RefCell::new(ToolGate::new()),
                registrations: RefCell::default(),
                listeners: RefCell::default(),
                timer: RefCell::default(),
                tick,
                generation: Cell::new(0),
                generations: RefCell::default(),
                ended: RefCell::default(),
            }
        });
        inner.route_kept_handles();
        Ok(JsToolGate { inner })
    }

    /// Grants `tool` for `options.expiresIn` ms (1 s to 1 day) and, if given, `options.uses`
    /// calls: registers it with the model context and returns the grant. A grant of a name that
    /// is live renews it (new lease, new definition). Throws a `TypeError`/`RangeError` for a
    /// malformed tool or options, or the model context's error if it refuses the registration;
    /// nothing is granted then.
    pub fn grant(&self, tool: GateTool, options: GrantOptions) -> Result<GrantInfo, JsValue> {
        let tool = JsValue::from(tool);
        let (name, execute) = read_tool(&tool)?;
        let (expires_in, uses) = read_options(&JsValue::from(options))?;
        let now = now();
        let lease = Lease::new(now, expires_in, uses).map_err(|e| range_error(&e.to_string()))?;
        self.inner.grant(name, tool, execute, lease)
    }

    /// Revokes `name`'s grant: its tool leaves the browser's list, and calls still in an
    /// agent's hands get `grant_revoked`. Returns whether it was live.
    pub fn revoke(&self, name: &str) -> bool {
        let change = self.inner.gate.borrow_mut().revoke(name);
        let revoked = change.is_some();
        self.inner.apply(change.into_iter().collect());
        revoked
    }

    /// Revokes every live grant; returns how many there were.
    #[wasm_bindgen(js_name = revokeAll)]
    pub fn revoke_all(&self) -> u32 {
        let changes = self.inner.gate.borrow_mut().revoke_all();
        let count = u32::try_from(changes.len()).unwrap_or(u32::MAX);
        self.inner.apply(changes);
        count
    }

    /// The live grants, by name.
    pub fn tools(&self) -> GrantInfoList {
        let list = Array::new();
        for (name, _, lease) in self.inner.gate.borrow().live() {
            list.push(&grant_info(name, lease));
        }
        list.unchecked_into()
    }

    /// Calls `listener` on every `added` or `removed` event (a removed event carries the
    /// reason: `revoked`, `expired` or `spent`). A throwing listener is reported, not
    /// propagated.
    pub fn on(&self, kind: GateEventType, listener: GateListener) -> Result<(), JsValue> {
        let (kind, listener) = read_listener(&kind.into(), &listener.into())?;
        self.inner.listeners.borrow_mut().push((kind, listener));
        Ok(())
    }

    /// Removes a listener added with `on`.
    pub fn off(&self, kind: GateEventType, listener: GateListener) -> Result<(), JsValue> {
        let (kind, listener) = read_listener(&kind.into(), &listener.into())?;
        self.inner
            .listeners
            .borrow_mut()
            .retain(|(k, l)| !(*k == kind && JsValue::from(l) == JsValue::from(&listener)));
        Ok(())
    }
}

impl Inner {
    fn grant(
        self: &Rc<Self>,
        name: String,
        tool: JsValue,
        execute: Function,
        lease: Lease,
    ) -> Result<GrantInfo, JsValue> {
        // A renewal replaces the registration (the definition may have changed).
        let old = self.registrations.borrow_mut().remove(&name);
        if let Some(old) = old {
            old.abort();
        }
        let old_generation = self.generations.borrow_mut().remove(&name);
        if let Some(old_generation) = old_generation {
            self.ended
                .borrow_mut()
                .insert(old_generation, Ended::Revoked);
        }
        let generation = self.generation.get().wrapping_add(1);
        self.generation.set(generation);
        let registered = self.register(&name, generation, &tool);
        let (controller, pending) = match registered {
            Ok(ok) => ok,
            Err(error) => {
                // The old tool (if any) is gone from the browser: its grant ends with it.
                let change = self.gate.borrow_mut().revoke(&name);
                self.apply(change.into_iter().collect());
                return Err(error);
            }
        };
        let info = grant_info(&name, &lease);
        let mut changes =
            self.gate
                .borrow_mut()
                .grant(name.clone(), Entry { tool, execute }, lease);
        if changes.is_empty() {
            // A live grant renewed: tell the listeners of its new lease too.
            changes.push(Change::Added(name.clone()));
        }
        self.registrations
            .borrow_mut()
            .insert(name.clone(), controller);
        self.generations
            .borrow_mut()
            .insert(name.clone(), generation);
        if let Some(pending) = pending {
            self.watch_registration(&name, generation, &pending);
        }
        self.apply(changes);
        Ok(info.unchecked_into())
    }

    /// `registerTool(tool', {signal})`; returns the controller and, if the model context
    /// answered with a promise, that promise.
    fn register(
        self: &Rc<Self>,
        name: &str,
        generation: u64,
        tool: &JsValue,
    ) -> Result<(AbortController, Option<JsValue>), JsValue> {
        let wrapped = object_assign(&Object::new().into(), tool)?;
        // The name the gate checks is the name registered (a getter could answer otherwise).
        Reflect::set(&wrapped, &"name".into(), &name.into())?;
        let inner = Rc::clone(self);
        let tool_name = name.to_owned();
        let execute = Closure::<dyn FnMut(JsValue, JsValue) -> JsValue>::own_aborting(
            move |input: JsValue, client: JsValue| {
                inner.call(&tool_name, generation, &input, &client)
            },
        )
        .into_js_value();
        Reflect::set(&wrapped, &"execute".into(), &execute)?;
        let controller = AbortController::new()?;
        let options = Object::new();
        Reflect::set(&options, &"signal".into(), &controller.signal())?;
        let register: Function = get(&self.ctx, "registerTool").dyn_into()?;
        let answer = register.call2(&self.ctx, &wrapped, &options)?;
        let pending = has_then(&answer).then_some(answer);
        Ok((controller, pending))
    }

    /// Chromium's `executeTool` rejects a tool object from `getTools()` whose registration was
    /// withdrawn with a bare `UnknownError`. As the wallet does, the gate wraps `executeTool`
    /// ([`tacit_webmcp::route_kept_handles`]): when the browser rejects a call to a tool this
    /// gate granted and withdrew, the call is answered with the refusal of how its grant ended.
    /// The wrapper holds the gate, as the tool wrappers do.
    fn route_kept_handles(self: &Rc<Self>) {
        let inner = Rc::clone(self);
        let fallback = move |name: &str, _input: JsValue| {
            let refusal = inner.kept_refusal(name)?;
            Some(js_sys::Promise::resolve(&refusal_value(&refusal)))
        };
        #[cfg(target_arch = "wasm32")]
        tacit_webmcp::route_kept_handles(&self.ctx, fallback);
        // Native builds are for unit tests: there is no browser to wrap.
        #[cfg(not(target_arch = "wasm32"))]
        drop(fallback);
    }

    /// The refusal for a call the browser rejected to `name`: that of how its grant ended when
    /// this gate granted `name` and has withdrawn it; `None` when `name` is not this gate's, or
    /// is registered now (rejected for reasons of the browser's own, which stand).
    fn kept_refusal(&self, name: &str) -> Option<Refusal> {
        if self.registrations.borrow().contains_key(name) {
            return None;
        }
        let ended = self.gate.borrow().lease(name)?.check(now()).err()?;
        Some(Refusal::ended(ended))
    }

    /// A registration the model context refuses later (a rejected promise) ends its grant.
    fn watch_registration(self: &Rc<Self>, name: &str, generation: u64, pending: &JsValue) {
        let inner = Rc::downgrade(self);
        let name = name.to_owned();
        let on_error = Closure::<dyn FnMut(JsValue) -> JsValue>::own_aborting(move |error| {
            if let Some(inner) = inner.upgrade() {
                inner.registration_failed(&name, generation, &error);
            }
            JsValue::UNDEFINED
        })
        .into_js_value();
        let _ = JsPromise::resolve(pending).then2(&JsValue::UNDEFINED, &on_error);
    }

    fn registration_failed(&self, name: &str, generation: u64, error: &JsValue) {
        if self.generations.borrow().get(name) != Some(&generation) {
            return; // a later grant replaced this registration
        }
        let change = self.gate.borrow_mut().revoke(name);
        if change.is_none() {
            return;
        }
        self.generations.borrow_mut().remove(name);
        self.ended.borrow_mut().insert(generation, Ended::Revoked);
        // No borrow is held while `abort` runs (a polyfill may call back into the gate).
        let controller = self.registrations.borrow_mut().remove(name);
        if let Some(controller) = controller {
            controller.abort();
        }
        self.reschedule();
        let event = removed_event(name, Ended::Revoked);
        let _ = Reflect::set(&event, &"error".into(), &error_text(error).into());
        self.emit(Kind::Removed, &event);
    }

    /// What `tool'.execute` does: check at use, read the input, call the page's `execute`.
    /// Always a promise that fulfils (an answer or a refusal envelope); never throws.
    fn call(
        self: &Rc<Self>,
        name: &str,
        generation: u64,
        input: &JsValue,
        client: &JsValue,
    ) -> JsValue {
        // A tool object from a replaced or ended registration never reaches a later grant.
        if self.generations.borrow().get(name) != Some(&generation) {
            let ended = self.ended.borrow().get(&generation).copied();
            let ended = ended.unwrap_or(Ended::Revoked);
            return resolved(&refusal_value(&Refusal::ended(ended)));
        }
        let now = now();
        let live = self
            .gate
            .borrow()
            .lease(name)
            .is_some_and(|l| l.check(now).is_ok());
        // Malformed input is refused without taking a use (a stale call is told why it is
        // stale instead).
        let parsed = if live {
            match read_input(input) {
                Ok(parsed) => Some(parsed),
                Err(refusal) => return resolved(&refusal_value(&refusal)),
            }
        } else {
            None
        };
        let used = match self.gate.borrow_mut().begin_use(name, now) {
            Ok((entry, change)) => Ok((entry.clone(), change)),
            Err((refusal, change)) => Err((refusal, change)),
        };
        let (entry, change) = match used {
            Ok(ok) => ok,
            Err((refusal, change)) => {
                self.apply(change.into_iter().collect());
                return resolved(&refusal_value(&refusal));
            }
        };
        let Some(parsed) = parsed else {
            // Unreachable: a use was granted only for a live lease, which read the input.
            self.apply(change.into_iter().collect());
            return resolved(&refusal_value(&Refusal::invalid_input(
                "The input was not read.",
            )));
        };
        // The last use withdraws the tool once the page's answer is in (not while it runs).
        let finish = {
            let inner = Rc::clone(self);
            let change = RefCell::new(change);
            let name = name.to_owned();
            move || {
                let change = change.borrow_mut().take();
                // Unless a new grant of the name replaced this one while the page answered.
                let current = inner.generations.borrow().get(&name) == Some(&generation);
                if current {
                    inner.apply(change.into_iter().collect());
                }
            }
        };
        match entry.execute.call2(&entry.tool, &parsed, client) {
            Err(error) => {
                finish();
                resolved(&tool_failed(&error))
            }
            Ok(answer) => {
                let finish = Rc::new(finish);
                let on_ok = {
                    let finish = Rc::clone(&finish);
                    Closure::<dyn FnMut(JsValue) -> JsValue>::own_aborting(move |value| {
                        finish();
                        value
                    })
                    .into_js_value()
                };
                let on_err = Closure::<dyn FnMut(JsValue) -> JsValue>::own_aborting(move |error| {
                    finish();
                    tool_failed(&error)
                })
                .into_js_value();
                JsPromise::resolve(&answer).then2(&on_ok, &on_err).into()
            }
        }
    }

    /// Applies the gate's changes: withdraws removed tools, tells the listeners, reschedules
    /// the expiry timer.
    fn apply(&self, changes: Vec<Change>) {
        let mut events = Vec::new();
        for change in changes {
            match change {
                Change::Added(name) => {
                    if let Some(lease) = self.gate.borrow().lease(&name) {
                        let event = grant_info(&name, lease);
                        let _ = Reflect::set(&event, &"type".into(), &"added".into());
                        events.push((Kind::Added, event));
                    }
                }
                Change::Removed(name, ended) => {
                    let controller = self.registrations.borrow_mut().remove(&name);
                    let generation = self.generations.borrow_mut().remove(&name);
                    if let Some(generation) = generation {
                        self.ended.borrow_mut().insert(generation, ended);
                    }
                    if let Some(controller) = controller {
                        controller.abort();
                    }
                    events.push((Kind::Removed, removed_event(&name, ended)));
                }
            }
        }
        self.reschedule();
        for (kind, event) in events {
            self.emit(kind, &event);
        }
    }

    /// One timer, at the earliest expiry of a live grant.
    fn reschedule(&self) {
        if let Some(id) = self.timer.borrow_mut().take() {
            clear_timeout(&id);
        }
        let Some(deadline) = self.gate.borrow().next_deadline() else {
            return;
        };
        // +1: `setTimeout` may fire a millisecond early; an early tick finds nothing and
        // reschedules.
        let delay = (deadline.saturating_sub(now()) + 1).clamp(0, i64::from(i32::MAX));
        let id = set_timeout(&self.tick, delay as f64);
        *self.timer.borrow_mut() = Some(id);
    }

    fn emit(&self, kind: Kind, event: &JsValue) {
        let listeners: Vec<Function> = self
            .listeners
            .borrow()
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, l)| l.clone())
            .collect();
        for listener in listeners {
            if let Err(error) = listener.call1(&JsValue::UNDEFINED, event) {
                report_error(&error);
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(id) = self.timer.borrow_mut().take() {
            clear_timeout(&id);
        }
    }
}

/// Reads a tool: a name (non-empty string), a description (string) and an `execute` function.
fn read_tool(tool: &JsValue) -> Result<(String, Function), JsValue> {
    if !tool.is_object() {
        return Err(type_error(
            "grant(tool, options): tool must be an object {name, description, inputSchema, execute}",
        ));
    }
    let name = get(tool, "name")
        .as_string()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| type_error("grant(tool, options): tool.name must be a non-empty string"))?;
    if get(tool, "description").as_string().is_none() {
        return Err(type_error(&format!(
            "grant(tool, options): tool.description of {name:?} must be a string"
        )));
    }
    let execute = get(tool, "execute").dyn_into::<Function>().map_err(|_| {
        type_error(&format!(
            "grant(tool, options): tool.execute of {name:?} must be a function"
        ))
    })?;
    Ok((name, execute))
}

/// Reads `{expiresIn, uses?}`.
fn read_options(options: &JsValue) -> Result<(i64, Option<u32>), JsValue> {
    if !options.is_object() {
        return Err(type_error(
            "grant(tool, options): options must be an object like {expiresIn: 60000, uses: 1}",
        ));
    }
    let expires_in = get(options, "expiresIn");
    let uses = get(options, "uses");
    let uses = if uses.is_undefined() || uses.is_null() {
        None
    } else {
        Some(uses.as_f64().ok_or_else(|| {
            type_error("grant(tool, options): options.uses must be a number (or absent)")
        })?)
    };
    let expires_in = expires_in.as_f64().ok_or_else(|| {
        type_error("grant(tool, options): options.expiresIn must be a number of milliseconds")
    })?;
    check_options(expires_in, uses).map_err(|message| range_error(&message))
}

/// The bounds of a grant, on the numbers a script passed.
fn check_options(expires_in: f64, uses: Option<f64>) -> Result<(i64, Option<u32>), String> {
    let whole = |v: f64| v.is_finite() && v.fract() == 0.0;
    if !whole(expires_in) || expires_in < MIN_LEASE_MS as f64 || expires_in > MAX_LEASE_MS as f64 {
        return Err(format!(
            "grant(tool, options): options.expiresIn must be a whole number of milliseconds from \
             {MIN_LEASE_MS} (one second) to {MAX_LEASE_MS} (one day), not {}",
            show(expires_in)
        ));
    }
    let uses = match uses {
        None => None,
        Some(u) if whole(u) && u >= 1.0 && u <= f64::from(u32::MAX) => Some(u as u32),
        Some(u) => {
            return Err(format!(
                "grant(tool, options): options.uses must be a whole number from 1 to {}, not {}",
                u32::MAX,
                show(u)
            ));
        }
    };
    Ok((expires_in as i64, uses))
}

fn read_listener(kind: &JsValue, listener: &JsValue) -> Result<(Kind, Function), JsValue> {
    let kind = match kind.as_string().as_deref() {
        Some("added") => Kind::Added,
        Some("removed") => Kind::Removed,
        _ => {
            return Err(type_error(
                "ToolGate events are \"added\" and \"removed\" (a removed event has a reason)",
            ));
        }
    };
    let listener = listener
        .clone()
        .dyn_into::<Function>()
        .map_err(|_| type_error("ToolGate: an event listener must be a function"))?;
    Ok((kind, listener))
}

/// The agent's input as JSON text (Chromium passes an object, polyfills pass the text), read
/// with the depth limit, then parsed for the page's `execute`.
fn read_input(input: &JsValue) -> Result<JsValue, Refusal> {
    let text = if input.is_undefined() {
        "{}".to_owned()
    } else if let Some(text) = input.as_string() {
        text
    } else {
        json_stringify(input)
            .ok()
            .and_then(|t| t.as_string())
            .ok_or_else(|| Refusal::invalid_input("The input cannot be read as JSON."))?
    };
    tool_gate::input::from_text(&text)?;
    json_parse(&text).map_err(|_| Refusal::invalid_input("The input is not valid JSON."))
}

fn default_context() -> JsValue {
    let document = get(&js_sys::global().into(), "document");
    if document.is_object() {
        get(&document, "modelContext")
    } else {
        JsValue::UNDEFINED
    }
}

fn grant_info(name: &str, lease: &Lease) -> JsValue {
    let info = Object::new();
    let _ = Reflect::set(&info, &"name".into(), &name.into());
    let _ = Reflect::set(
        &info,
        &"expiresAt".into(),
        &(lease.expires_at as f64).into(),
    );
    let uses = lease
        .uses_left
        .map_or(JsValue::NULL, |u| f64::from(u).into());
    let _ = Reflect::set(&info, &"usesLeft".into(), &uses);
    info.into()
}

/// `revoked`, `expired` or `spent`.
fn reason(ended: Ended) -> &'static str {
    match ended {
        Ended::Revoked => "revoked",
        Ended::Expired => "expired",
        Ended::Spent => "spent",
    }
}

fn removed_event(name: &str, ended: Ended) -> JsValue {
    let event = Object::new();
    let _ = Reflect::set(&event, &"type".into(), &"removed".into());
    let _ = Reflect::set(&event, &"name".into(), &name.into());
    let _ = Reflect::set(&event, &"reason".into(), &reason(ended).into());
    event.into()
}

fn refusal_value(refusal: &Refusal) -> JsValue {
    to_js(&envelope(&Err(refusal.clone())))
}

/// A number as a message shows it, without the float formatter: whole numbers exactly,
/// others by kind.
fn show(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else if v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 {
        (v as i64).to_string()
    } else {
        "a fraction".to_owned()
    }
}

fn tool_failed(error: &JsValue) -> JsValue {
    refusal_value(&failed_refusal(&error_text(error)))
}

/// The refusal when the page's own `execute` failed with `message`.
fn failed_refusal(message: &str) -> Refusal {
    let mut message: String = message.chars().take(500).collect();
    if message.is_empty() {
        message = "no message".to_owned();
    }
    Refusal::new(TOOL_FAILED, format!("The tool failed: {message}"))
}

/// `message` of an `Error`, or the value as a string.
fn error_text(error: &JsValue) -> String {
    if let Some(message) = get(error, "message").as_string() {
        return message;
    }
    error
        .as_string()
        .or_else(|| json_stringify(error).ok().and_then(|t| t.as_string()))
        .unwrap_or_default()
}

fn report_error(error: &JsValue) {
    if let Ok(report) = get(&js_sys::global().into(), "reportError").dyn_into::<Function>() {
        let _ = report.call1(&JsValue::UNDEFINED, error);
    }
}

fn resolved(value: &JsValue) -> JsValue {
    JsPromise::resolve(value).into()
}

fn has_then(value: &JsValue) -> bool {
    value.is_object() && get(value, "then").is_function()
}

/// `target[key]`, or `undefined` when that throws or `target` is not an object.
fn get(target: &JsValue, key: &str) -> JsValue {
    if !(target.is_object() || target.is_function()) {
        return JsValue::UNDEFINED;
    }
    Reflect::get(target, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn now() -> i64 {
    date_now() as i64
}

fn type_error(message: &str) -> JsValue {
    js_sys::TypeError::new(message).into()
}

fn range_error(message: &str) -> JsValue {
    js_sys::RangeError::new(message).into()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn grant_bounds_are_checked_on_the_numbers_a_script_passes() {
        assert_eq!(check_options(60_000.0, None), Ok((60_000, None)));
        assert_eq!(check_options(1_000.0, Some(1.0)), Ok((1_000, Some(1))));
        assert_eq!(
            check_options(86_400_000.0, Some(4_294_967_295.0)),
            Ok((86_400_000, Some(u32::MAX)))
        );
        for bad in [
            0.0,
            999.0,
            86_400_001.0,
            1_500.5,
            f64::NAN,
            f64::INFINITY,
            -1.0,
        ] {
            let message = check_options(bad, None).unwrap_err();
            assert!(message.contains("expiresIn"), "{message}");
        }
        for bad in [0.0, -1.0, 1.5, f64::NAN, 4_294_967_296.0] {
            let message = check_options(60_000.0, Some(bad)).unwrap_err();
            assert!(message.contains("uses"), "{message}");
        }
    }

    #[test]
    fn a_failed_tool_is_a_bounded_refusal() {
        let refusal = failed_refusal(&"x".repeat(10_000));
        assert_eq!(refusal.code, TOOL_FAILED);
        assert!(refusal.message.len() < 600);
        assert_eq!(failed_refusal("").message, "The tool failed: no message");
        let value = envelope(&Err(failed_refusal("boom")));
        assert!(tool_gate::envelope::is_refusal(&value));
        assert_eq!(value["error"]["code"], "tool_failed");
    }

    #[test]
    fn numbers_in_messages_are_shown_without_the_float_formatter() {
        assert_eq!(show(86_400_001.0), "86400001");
        assert_eq!(show(-1.0), "-1");
        assert_eq!(show(1.5), "a fraction");
        assert_eq!(show(f64::NAN), "NaN");
        assert_eq!(show(f64::NEG_INFINITY), "-Infinity");
        assert!(
            check_options(86_400_001.0, None)
                .unwrap_err()
                .ends_with("not 86400001")
        );
    }

    #[test]
    fn reasons_are_the_three_the_typings_name() {
        assert_eq!(reason(Ended::Revoked), "revoked");
        assert_eq!(reason(Ended::Expired), "expired");
        assert_eq!(reason(Ended::Spent), "spent");
    }
}
