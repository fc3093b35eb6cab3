//! `PageHost`: tool-gate's [`tool_gate::Host`] over `document.modelContext`, registering with
//! [`tools::register`]. Dropping a [`PageRegistration`] withdraws its tool (its `AbortSignal` is
//! aborted), which is how `tool_gate::Registry::sync` withdraws what the page's gate no longer
//! grants.
//!
//! `tools::register` hands the browser an `AbortSignal` of its own that nothing aborts, so the
//! host gives it a context whose `registerTool` forwards to the real one with the host's signal
//! instead. A withdrawn registration's `execute` is kept alive (the last [`RETIRED`] of them).
//!
//! Chromium's `executeTool` rejects a tool object whose registration was withdrawn with a bare
//! `UnknownError` (an invitation to retry). As the wallet's host does, the page wraps it: when
//! the browser rejects a call to one of this page's tools that is not registered now, the call
//! goes to that tool's behaviour, whose gate check answers with tool-gate's refusal envelope
//! (`grant_revoked`, `grant_expired`). Other rejections pass through unchanged.

use std::cell::RefCell;
use std::collections::{BTreeSet, VecDeque};
use std::rc::Rc;

use js_sys::{Function, Object, Promise, Reflect};
use serde_json::Value;
use tool_gate::HostError;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{AbortController, AbortSignal};

use super::tools;
use crate::gate::SiteTool;

/// How many withdrawn registrations keep their `execute` alive for stale handles.
pub const RETIRED: usize = 16;

type Retired = Rc<RefCell<VecDeque<tools::Registration>>>;

/// See the module docs.
pub struct PageHost {
    ctx: JsValue,
    /// Each tool's behaviour, by name.
    runs: Vec<(String, tools::Run)>,
    on_refused: fn(String),
    listed: Rc<RefCell<BTreeSet<String>>>,
    retired: Retired,
}

impl PageHost {
    pub fn new(ctx: JsValue, runs: Vec<(String, tools::Run)>, on_refused: fn(String)) -> Self {
        let host = Self {
            ctx,
            runs,
            on_refused,
            listed: Rc::default(),
            retired: Rc::default(),
        };
        host.route_kept_handles();
        host
    }

    /// See the module docs: `executeTool` rejected for a tool of this page that is not
    /// registered now goes to that tool's behaviour (its gate refuses it).
    fn route_kept_handles(&self) {
        let Ok(original) =
            Reflect::get(&self.ctx, &"executeTool".into()).and_then(|f| f.dyn_into::<Function>())
        else {
            return;
        };
        let (ctx, runs, listed) = (self.ctx.clone(), self.runs.clone(), self.listed.clone());
        let wrapper = Closure::<dyn FnMut(JsValue, JsValue, JsValue) -> Promise>::new(
            move |tool: JsValue, input: JsValue, options: JsValue| -> Promise {
                let first = original
                    .call3(&ctx, &tool, &input, &options)
                    .map(|p| Promise::resolve(&p))
                    .unwrap_or_else(|e| Promise::reject(&e));
                let name = Reflect::get(&tool, &"name".into())
                    .ok()
                    .and_then(|n| n.as_string())
                    .unwrap_or_default();
                let run = runs.iter().find(|(n, _)| n == &name).map(|(_, run)| *run);
                let listed = listed.clone();
                wasm_bindgen_futures::future_to_promise(async move {
                    let error = match wasm_bindgen_futures::JsFuture::from(first).await {
                        Ok(text) => return Ok(text),
                        Err(error) => error,
                    };
                    // Not this page's tool, or still registered (refused for its own reasons):
                    // the browser's rejection stands.
                    let Some(run) = run.filter(|_| !listed.borrow().contains(&name)) else {
                        return Err(error);
                    };
                    let out =
                        wasm_bindgen_futures::JsFuture::from(run(input_value(&input))).await?;
                    Ok(js_sys::JSON::stringify(&out)
                        .map(JsValue::from)
                        .unwrap_or(JsValue::NULL))
                })
            },
        )
        .into_js_value();
        let _ = Reflect::set(&self.ctx, &"executeTool".into(), &wrapper);
    }
}

/// A live registration; dropping it withdraws the tool.
pub struct PageRegistration {
    name: String,
    abort: AbortController,
    registration: Option<tools::Registration>,
    listed: Rc<RefCell<BTreeSet<String>>>,
    retired: Retired,
}

impl Drop for PageRegistration {
    fn drop(&mut self) {
        self.abort.abort();
        self.listed.borrow_mut().remove(&self.name);
        if let Some(registration) = self.registration.take() {
            let mut retired = self.retired.borrow_mut();
            retired.push_back(registration);
            while retired.len() > RETIRED {
                retired.pop_front();
            }
        }
    }
}

impl tool_gate::Host<SiteTool> for PageHost {
    type Registration = PageRegistration;

    fn register(&mut self, tool: &SiteTool) -> Result<PageRegistration, HostError> {
        if self.listed.borrow().contains(&tool.name) {
            return Err(HostError::Duplicate(tool.name.clone()));
        }
        let run = self
            .runs
            .iter()
            .find(|(name, _)| name == &tool.name)
            .map(|(_, run)| *run)
            .ok_or_else(|| HostError::Refused(format!("{}: no behaviour", tool.name)))?;
        let refused = |e: JsValue| HostError::Refused(tools::error_text(&e));
        let abort = AbortController::new().map_err(refused)?;
        let (ctx, _forward) = with_signal(&self.ctx, abort.signal()).map_err(refused)?;
        let registration =
            tools::register(&ctx, &tool.def, run, self.on_refused).map_err(HostError::Refused)?;
        self.listed.borrow_mut().insert(tool.name.clone());
        Ok(PageRegistration {
            name: tool.name.clone(),
            abort,
            registration: Some(registration),
            listed: self.listed.clone(),
            retired: self.retired.clone(),
        })
    }

    fn list(&self) -> Vec<String> {
        self.listed.borrow().iter().cloned().collect()
    }
}

type Forward = Closure<dyn FnMut(JsValue, JsValue) -> Result<JsValue, JsValue>>;

/// A context whose `registerTool(tool, options)` calls `ctx.registerTool(tool, {signal})`. The
/// returned closure must outlive the (synchronous) `registerTool` call only.
fn with_signal(ctx: &JsValue, signal: AbortSignal) -> Result<(JsValue, Forward), JsValue> {
    let target = ctx.clone();
    let forward: Forward = Closure::new(move |tool: JsValue, _options: JsValue| {
        let options = Object::new();
        Reflect::set(&options, &"signal".into(), &signal)?;
        let register: Function = Reflect::get(&target, &"registerTool".into())?.dyn_into()?;
        register.call2(&target, &tool, &options)
    });
    let proxy = Object::new();
    Reflect::set(&proxy, &"registerTool".into(), forward.as_ref())?;
    Ok((proxy.into(), forward))
}

/// An `executeTool` input as JSON: an object as it is, JSON text (the polyfill's form) as the
/// JSON it holds. (The same reading as `tools.rs`'s private `input_json`, which registered
/// tools get.)
fn input_value(input: &JsValue) -> Value {
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
