//! The host trait, the registry that keeps a host in step with the gate, `MemoryHost`, and
//! which WebMCP the wallet page trusts ([`Detection`], decided from what the page [`Seen`]).
//!
//! A host carries tools to an agent: the WebMCP page (`document.modelContext`), `MemoryHost` in
//! tests, later an MCP server. Hosts decide nothing: the gate says which tools exist.
//!
//! The registry's bookkeeping is tool-gate's ([`tool_gate::Registry`]): [`Registry`] adapts a
//! wallet [`Host`] (which registers [`ToolDef`]s) to [`tool_gate::Host`] and feeds it
//! [`Gate::tools`]. [`HostError`] is tool-gate's.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::{Rc, Weak};

use serde_json::Value;
use wallet_core::{Timestamp, ToolName};

use crate::gate::{Gate, Pending};
use crate::tool::{Handler, ToolDef};

pub use tool_gate::HostError;

/// A place tools can be registered. Dropping a `Registration` withdraws its tool, synchronously.
pub trait Host {
    type Registration;

    /// Registers one tool; refuses a duplicate name.
    fn register(&mut self, tool: &ToolDef) -> Result<Self::Registration, HostError>;

    /// The names the host currently exposes, as the agent would see them.
    fn list(&self) -> Vec<String>;
}

impl tool_gate::Named for ToolDef {
    fn name(&self) -> &str {
        self.name.as_str()
    }
}

/// A wallet [`Host`] as tool-gate's registry sees it.
#[derive(Debug)]
struct Adapter<H>(H);

impl<H: Host> tool_gate::Host<ToolDef> for Adapter<H> {
    type Registration = H::Registration;

    fn register(&mut self, tool: &ToolDef) -> Result<H::Registration, HostError> {
        self.0.register(tool)
    }

    fn list(&self) -> Vec<String> {
        self.0.list()
    }
}

/// Keeps a host's registrations equal to `gate.tools()`: one registration per live tool.
pub struct Registry<H: Host> {
    inner: tool_gate::Registry<Adapter<H>, ToolDef>,
}

impl<H: Host + core::fmt::Debug> core::fmt::Debug for Registry<H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let registered: Vec<&str> = self.registered().map(|t| t.name.as_str()).collect();
        f.debug_struct("Registry")
            .field("host", self.host())
            .field("registered", &registered)
            .finish()
    }
}

impl<H: Host> Registry<H> {
    pub fn new(host: H) -> Self {
        Self {
            inner: tool_gate::Registry::new(Adapter(host)),
        }
    }

    pub fn host(&self) -> &H {
        &self.inner.host().0
    }

    /// Withdraws what the gate no longer issues, then registers what is missing. Returns the
    /// registrations the host refused (the rest are still applied).
    pub fn sync(&mut self, gate: &Gate) -> Vec<(ToolName, HostError)> {
        let wanted = gate.tools();
        let names: BTreeMap<String, ToolName> = wanted
            .iter()
            .map(|t| (t.name.as_str().to_owned(), t.name.clone()))
            .collect();
        self.inner
            .sync(wanted)
            .into_iter()
            .filter_map(|(name, error)| Some((names.get(&name)?.clone(), error)))
            .collect()
    }

    /// Withdraws every tool (the page is going away).
    pub fn clear(&mut self) {
        self.inner.clear();
    }

    /// The handler registered under `name`, as a host would look it up on execution.
    pub fn handler(&self, name: &str) -> Option<&Handler> {
        self.inner.get(name).map(|def| &def.handler)
    }

    /// The definitions currently registered.
    pub fn registered(&self) -> impl Iterator<Item = &ToolDef> {
        self.inner.registered()
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

/// The WebMCP polyfill the wallet page loads without native WebMCP, as the page names it to the
/// person.
pub use tacit_webmcp::POLYFILL;
use tacit_webmcp::Source;

/// What the wallet page sees of WebMCP, read by the page and decided here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Seen<'a> {
    /// `document.modelContext` exists.
    pub has_context: bool,
    /// Its getter is the browser's own (native code).
    pub native_getter: bool,
    /// What the page's loader marked (`native`, `polyfilled`, `polyfill-failed`,
    /// `insecure-context`); a page script can set it too.
    pub marker: Option<&'a str>,
    /// A secure context (https or localhost).
    pub secure: bool,
    /// `navigator.modelContext.provideContext`, the API from before March 2026, is present.
    pub superseded_api: bool,
}

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

impl<'a> Seen<'a> {
    /// What the page observed ([`tacit_webmcp::Observed`]).
    pub fn of(observed: &'a tacit_webmcp::Observed) -> Self {
        Seen {
            has_context: observed.has_context,
            native_getter: observed.native_getter,
            marker: observed.marker.as_deref(),
            secure: observed.secure,
            superseded_api: observed.superseded_api,
        }
    }

    /// Decides. Native means the browser's own getter: a marker a page script set cannot make a
    /// script-made context pass for native, nor for the page's polyfill over native WebMCP. The
    /// superseded API counts only where there is no `document.modelContext`, in a secure context
    /// whose loader did not report a failed polyfill.
    /// Where the context comes from is [`Source::decide`]'s (the same rule the sites' pages use).
    pub fn decide(&self) -> Detection {
        match Source::decide(self.has_context, self.native_getter, self.marker) {
            Source::Native => Detection::Available,
            Source::Polyfilled => Detection::Polyfilled,
            Source::Scripted => Detection::Scripted,
            Source::Absent if !self.secure => Detection::InsecureContext,
            Source::Absent if self.marker == Some("polyfill-failed") => Detection::PolyfillFailed,
            Source::Absent if self.superseded_api => Detection::SupersededApi,
            Source::Absent => Detection::Absent,
        }
    }
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

    /// [`Seen::decide`] without the superseded API.
    pub fn decide(
        has_context: bool,
        native_getter: bool,
        marker: Option<&str>,
        secure: bool,
    ) -> Self {
        Seen {
            has_context,
            native_getter,
            marker,
            secure,
            superseded_api: false,
        }
        .decide()
    }

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

    /// The tone of the page's WebMCP pill: `ok`, `warn` or `bad`.
    pub fn tone(&self) -> &'static str {
        match self.code() {
            "available" | "polyfilled" => "ok",
            "absent" | "superseded-api" | "scripted" => "warn",
            _ => "bad",
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
            Detection::InsecureContext => {
                "WebMCP needs a secure context (https or localhost)".into()
            }
            Detection::SupersededApi => "Only the superseded navigator.modelContext API is \
                present: tools offered through window.tacit"
                .into(),
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
}
