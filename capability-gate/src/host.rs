//! The host trait, the registry that keeps a host in step with the gate, and `MemoryHost`.
//!
//! A host carries tools to an agent: the WebMCP page (`document.modelContext`), `MemoryHost` in
//! tests, later an MCP server. Hosts decide nothing: the gate says which tools exist.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::{Rc, Weak};

use serde_json::Value;
use wallet_core::{Timestamp, ToolName};

use crate::gate::{Gate, Pending};
use crate::tool::{Handler, ToolDef};

/// Why a host refused a registration or an execution.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    #[error("a tool named {0} is already registered")]
    Duplicate(String),
    #[error("no tool named {0} is registered")]
    UnknownTool(String),
    #[error("the host refused the registration: {0}")]
    Refused(String),
}

/// A place tools can be registered. Dropping a `Registration` withdraws its tool, synchronously.
pub trait Host {
    type Registration;

    /// Registers one tool; refuses a duplicate name.
    fn register(&mut self, tool: &ToolDef) -> Result<Self::Registration, HostError>;

    /// The names the host currently exposes, as the agent would see them.
    fn list(&self) -> Vec<String>;
}

/// Keeps a host's registrations equal to `gate.tools()`: one registration per live tool.
#[derive(Debug)]
pub struct Registry<H: Host> {
    host: H,
    live: BTreeMap<ToolName, (ToolDef, H::Registration)>,
}

impl<H: Host> Registry<H> {
    pub fn new(host: H) -> Self {
        Self {
            host,
            live: BTreeMap::new(),
        }
    }

    pub fn host(&self) -> &H {
        &self.host
    }

    /// Withdraws what the gate no longer issues, then registers what is missing. Returns the
    /// registrations the host refused (the rest are still applied).
    pub fn sync(&mut self, gate: &Gate) -> Vec<(ToolName, HostError)> {
        let wanted: BTreeMap<ToolName, ToolDef> = gate
            .tools()
            .into_iter()
            .map(|t| (t.name.clone(), t))
            .collect();
        // Dropping the registration withdraws the tool.
        self.live
            .retain(|name, (def, _)| wanted.get(name) == Some(def));
        let mut refused = Vec::new();
        for (name, def) in wanted {
            if self.live.contains_key(&name) {
                continue;
            }
            match self.host.register(&def) {
                Ok(registration) => {
                    self.live.insert(name, (def, registration));
                }
                Err(e) => refused.push((name, e)),
            }
        }
        refused
    }

    /// Withdraws every tool (the page is going away).
    pub fn clear(&mut self) {
        self.live.clear();
    }

    /// The handler registered under `name`, as a host would look it up on execution.
    pub fn handler(&self, name: &str) -> Option<&Handler> {
        self.live
            .iter()
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, (def, _))| &def.handler)
    }

    /// The definitions currently registered.
    pub fn registered(&self) -> impl Iterator<Item = &ToolDef> {
        self.live.values().map(|(def, _)| def)
    }
}

type Shared = Rc<RefCell<BTreeMap<String, ToolDef>>>;

/// An in-memory host that behaves as Chromium 156's `document.modelContext` does: duplicate
/// names are refused, withdrawal is synchronous, executing a withdrawn tool is an error, and a
/// call already running when its tool is withdrawn still completes.
#[derive(Debug, Clone, Default)]
pub struct MemoryHost {
    tools: Shared,
}

/// A `MemoryHost` registration: like an `AbortController`, dropping or aborting it withdraws
/// the tool.
#[derive(Debug)]
pub struct MemoryRegistration {
    tools: Weak<RefCell<BTreeMap<String, ToolDef>>>,
    name: String,
}

impl MemoryRegistration {
    /// Withdraws the tool now (the same as dropping the registration).
    pub fn abort(self) {}
}

impl Drop for MemoryRegistration {
    fn drop(&mut self) {
        if let Some(tools) = self.tools.upgrade() {
            tools.borrow_mut().remove(&self.name);
        }
    }
}

impl Host for MemoryHost {
    type Registration = MemoryRegistration;

    fn register(&mut self, tool: &ToolDef) -> Result<MemoryRegistration, HostError> {
        let mut tools = self.tools.borrow_mut();
        let name = tool.name.as_str().to_owned();
        if tools.contains_key(&name) {
            return Err(HostError::Duplicate(name));
        }
        if tool.description.is_empty() {
            return Err(HostError::Refused("empty description".into()));
        }
        tools.insert(name.clone(), tool.clone());
        Ok(MemoryRegistration {
            tools: Rc::downgrade(&self.tools),
            name,
        })
    }

    fn list(&self) -> Vec<String> {
        self.tools.borrow().keys().cloned().collect()
    }
}

/// A call that has started but not yet returned.
#[derive(Debug)]
pub struct InFlight {
    pending: Pending,
}

impl InFlight {
    /// Completes the call, even if its tool was withdrawn meanwhile (the gate re-checks).
    pub fn complete(self, gate: &mut Gate, now: Timestamp) -> Value {
        gate.finish(self.pending, now)
    }
}

impl MemoryHost {
    /// The registered definition of `name`, if any.
    pub fn get(&self, name: &str) -> Option<ToolDef> {
        self.tools.borrow().get(name).cloned()
    }

    /// Starts a call as an agent would: the tool must be registered now.
    pub fn start(
        &self,
        gate: &mut Gate,
        name: &str,
        input: &Value,
        now: Timestamp,
    ) -> Result<InFlight, HostError> {
        let def = self
            .get(name)
            .ok_or_else(|| HostError::UnknownTool(name.to_owned()))?;
        Ok(InFlight {
            pending: gate.begin(&def.handler, input, now),
        })
    }

    /// Starts and completes a call in one step.
    pub fn execute(
        &self,
        gate: &mut Gate,
        name: &str,
        input: &Value,
        now: Timestamp,
    ) -> Result<Value, HostError> {
        Ok(self.start(gate, name, input, now)?.complete(gate, now))
    }
}
