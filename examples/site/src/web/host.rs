//! `PageHost`: tool-gate's [`tool_gate::Host`] over `document.modelContext`, registering with
//! [`tools::register`]. Dropping a [`PageRegistration`] withdraws its tool (its `AbortSignal` is
//! aborted), which is how `tool_gate::Registry::sync` withdraws what the page's gate no longer
//! grants.
//!
//! `tools::register` hands the browser an `AbortSignal` of its own that nothing aborts, so the
//! host gives it a context whose `registerTool` forwards to the real one with the host's signal
//! instead. A withdrawn registration's `execute` is kept alive (the last [`RETIRED`] of them):
//! an agent holding the tool object past its withdrawal reaches the page's gate and gets its
//! refusal envelope, not a throw from a dropped closure.

use std::cell::RefCell;
use std::collections::{BTreeSet, VecDeque};
use std::rc::Rc;

use js_sys::{Function, Object, Reflect};
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
        Self {
            ctx,
            runs,
            on_refused,
            listed: Rc::default(),
            retired: Rc::default(),
        }
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
