//! `PageHost`: tool-gate's [`tool_gate::Host`] over `document.modelContext`, registering with
//! [`tacit_webmcp::register`]. Dropping a [`PageRegistration`] withdraws its tool (its
//! `AbortSignal` is aborted), which is how `tool_gate::Registry::sync` withdraws what the page's
//! gate no longer grants. A withdrawn tool's `execute` stays alive (owned by JavaScript).
//!
//! Chromium's `executeTool` rejects a tool object whose registration was withdrawn with a bare
//! `UnknownError` (an invitation to retry). As the wallet's host does, the page wraps it
//! ([`tacit_webmcp::route_kept_handles`]): when the browser rejects a call to one of this page's
//! tools that is not registered now, the call goes to that tool's behaviour, whose gate check
//! answers with tool-gate's refusal envelope (`grant_revoked`, `grant_expired`). Other rejections
//! pass through unchanged.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use tacit_webmcp::{Registration, input_json};
use tool_gate::HostError;
use wasm_bindgen::JsValue;

use super::tools;
use crate::gate::SiteTool;

/// See the module docs.
pub struct PageHost {
    ctx: JsValue,
    /// Each tool's behaviour, by name.
    runs: Vec<(String, tools::Run)>,
    on_refused: fn(String),
    listed: Rc<RefCell<BTreeSet<String>>>,
}

impl PageHost {
    pub fn new(ctx: JsValue, runs: Vec<(String, tools::Run)>, on_refused: fn(String)) -> Self {
        let listed: Rc<RefCell<BTreeSet<String>>> = Rc::default();
        let (kept_runs, kept_listed) = (runs.clone(), listed.clone());
        // Not this page's tool, or still registered (refused for its own reasons): the
        // browser's rejection stands.
        tacit_webmcp::route_kept_handles(&ctx, move |name, input| {
            if kept_listed.borrow().contains(name) {
                return None;
            }
            let run = kept_runs
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, run)| *run)?;
            Some(run(input_json(&input)))
        });
        Self {
            ctx,
            runs,
            on_refused,
            listed,
        }
    }
}

/// A live registration; dropping it withdraws the tool.
pub struct PageRegistration {
    name: String,
    _registration: Registration,
    listed: Rc<RefCell<BTreeSet<String>>>,
}

impl Drop for PageRegistration {
    fn drop(&mut self) {
        self.listed.borrow_mut().remove(&self.name);
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
        let execute = tacit_webmcp::execute_fn(move |input| run(input_json(&input)));
        let registration = tacit_webmcp::register(&self.ctx, &tool.def, &execute, self.on_refused)
            .map_err(|e| HostError::Refused(format!("{}: {e}", tool.name)))?;
        self.listed.borrow_mut().insert(tool.name.clone());
        Ok(PageRegistration {
            name: tool.name.clone(),
            _registration: registration,
            listed: self.listed.clone(),
        })
    }

    fn list(&self) -> Vec<String> {
        self.listed.borrow().iter().cloned().collect()
    }
}
