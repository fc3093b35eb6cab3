//! The bridge's core: the tools the agent's browser shows and what happens to a call, decided
//! without the vault's secrets (it has none).
//!
//! The bridge always shows the persistent tools it was made with; the claim tools are the ones
//! the vault's last [`ToBridge::Tools`] listed, each withdrawn at its `expires_at` or when the
//! vault says so, and all withdrawn when the connection drops. What it shows is advisory: it
//! forwards every call to the vault, which checks the grant at use. A call with no connection,
//! or unanswered after [`CALL_TIMEOUT_MS`], is answered [`VAULT_UNREACHABLE`] in words a model
//! acts on; an answer that comes later is dropped.
//!
//! Messages are JSON inside [`crate::Session`] frames: [`ToVault`] and [`ToBridge`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_gate::{Refusal, envelope};

/// How long the bridge waits for the vault's answer to a call.
pub const CALL_TIMEOUT_MS: i64 = 30_000;
/// Calls waiting for an answer at once; more are refused [`BRIDGE_BUSY`].
pub const MAX_PENDING_CALLS: usize = 64;
/// Claim tools a vault may list.
pub const MAX_CLAIM_TOOLS: usize = 64;

/// The refusal code for a call the vault cannot answer now.
pub const VAULT_UNREACHABLE: &str = "vault_unreachable";
/// The refusal code for a call over [`MAX_PENDING_CALLS`].
pub const BRIDGE_BUSY: &str = "bridge_busy";

const UNREACHABLE_WORDS: &str = "The person's wallet is not reachable from this browser right \
     now: it is closed, offline or not paired with this page. Nothing was asked or answered. \
     Tell the person to open their wallet (it pairs with this page once); do not retry in a \
     loop.";
const BUSY_WORDS: &str = "Too many calls are waiting for the person's wallet. Wait for their \
     answers before calling again.";

/// A tool as the bridge registers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    pub name: String,
    /// What WebMCP's `registerTool` takes without `execute` (title, description, inputSchema,
    /// annotations); its `name` is [`Self::name`] whatever it says.
    pub definition: Value,
    /// When the grant behind it ends (milliseconds since the epoch); persistent tools have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
}

/// From the bridge to the vault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToVault {
    /// The agent called `tool` with `input`; answer with the same `call`.
    Call {
        call: u64,
        tool: String,
        input: Value,
    },
}

/// From the vault to the bridge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToBridge {
    /// The claim tools that exist now (the whole list, each time it changes).
    Tools { tools: Vec<ToolSpec> },
    /// The envelope the vault answered `call` with.
    Answer { call: u64, output: Value },
    /// The person unpaired this bridge in the vault: the pairing is over; forget it.
    Unpaired {},
}

/// What the host does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Register `added`, unregister `removed` (abort their registrations).
    ToolsChanged {
        added: Vec<ToolSpec>,
        removed: Vec<String>,
    },
    /// Resolve the agent's call `call` with `output`.
    Answered { call: u64, output: Value },
    /// The person ended the pairing in the vault: forget it (its stored copy too) and offer a
    /// new code. Comes after the events that withdraw every claim tool and answer every
    /// waiting call unreachable.
    Unpaired,
}

/// What to do with a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// Seal `message` in a frame and send it; the answer comes as [`Event::Answered`].
    Send { call: u64, message: Vec<u8> },
    /// Answer the agent now with this envelope.
    Answer(Value),
}

/// A message from the vault that was not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the vault's message could not be read: {0}")]
pub struct BridgeError(String);

/// The bridge's state.
#[derive(Debug)]
pub struct Bridge {
    persistent: Vec<ToolSpec>,
    claim: BTreeMap<String, ToolSpec>,
    connected: bool,
    next_call: u64,
    pending: BTreeMap<u64, i64>,
}

fn unreachable() -> Value {
    envelope(&Err(Refusal::new(VAULT_UNREACHABLE, UNREACHABLE_WORDS)))
}

impl Bridge {
    /// A bridge that shows `persistent` always (the vault answers them when connected).
    pub fn new(persistent: Vec<ToolSpec>) -> Self {
        Self {
            persistent,
            claim: BTreeMap::new(),
            connected: false,
            next_call: 1,
            pending: BTreeMap::new(),
        }
    }

    /// Every tool to show now: the persistent ones, then the claim tools.
    pub fn tools(&self) -> Vec<&ToolSpec> {
        self.persistent.iter().chain(self.claim.values()).collect()
    }

    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// The session with the vault is up.
    pub fn connected(&mut self) {
        self.connected = true;
    }

    /// The session dropped: every waiting call is answered unreachable and every claim tool
    /// withdrawn.
    pub fn disconnected(&mut self) -> Vec<Event> {
        self.connected = false;
        let mut events: Vec<Event> = std::mem::take(&mut self.pending)
            .into_keys()
            .map(|call| Event::Answered {
                call,
                output: unreachable(),
            })
            .collect();
        let removed: Vec<String> = std::mem::take(&mut self.claim).into_keys().collect();
        if !removed.is_empty() {
            events.push(Event::ToolsChanged {
                added: Vec::new(),
                removed,
            });
        }
        events
    }

    /// The agent called `tool` with `input` at `now`.
    pub fn call(&mut self, tool: &str, input: Value, now: i64) -> Outgoing {
        if !self.connected {
            return Outgoing::Answer(unreachable());
        }
        if self.pending.len() >= MAX_PENDING_CALLS {
            return Outgoing::Answer(envelope(&Err(Refusal::new(BRIDGE_BUSY, BUSY_WORDS))));
        }
        let call = self.next_call;
        self.next_call += 1;
        self.pending.insert(call, now);
        let message = serde_json::to_vec(&ToVault::Call {
            call,
            tool: tool.to_owned(),
            input,
        })
        .unwrap_or_default();
        Outgoing::Send { call, message }
    }

    /// A message from the vault (already opened from its frame).
    pub fn receive(&mut self, message: &[u8], now: i64) -> Result<Vec<Event>, BridgeError> {
        let message: ToBridge =
            serde_json::from_slice(message).map_err(|e| BridgeError(e.to_string()))?;
        Ok(match message {
            ToBridge::Answer { call, output } => match self.pending.remove(&call) {
                Some(_) => vec![Event::Answered { call, output }],
                None => Vec::new(),
            },
            ToBridge::Tools { tools } => self.replace_claim_tools(tools, now),
            ToBridge::Unpaired {} => {
                let mut events = self.disconnected();
                events.push(Event::Unpaired);
                events
            }
        })
    }

    fn replace_claim_tools(&mut self, tools: Vec<ToolSpec>, now: i64) -> Vec<Event> {
        let mut next = BTreeMap::new();
        for tool in tools {
            let shadows = self.persistent.iter().any(|p| p.name == tool.name);
            let live = tool.expires_at.is_none_or(|at| at > now);
            if !shadows && live && next.len() < MAX_CLAIM_TOOLS {
                next.entry(tool.name.clone()).or_insert(tool);
            }
        }
        let removed: Vec<String> = self
            .claim
            .iter()
            .filter(|(name, old)| next.get(*name) != Some(*old))
            .map(|(name, _)| name.clone())
            .collect();
        let added: Vec<ToolSpec> = next
            .iter()
            .filter(|(name, new)| self.claim.get(*name) != Some(*new))
            .map(|(_, tool)| tool.clone())
            .collect();
        self.claim = next;
        if added.is_empty() && removed.is_empty() {
            Vec::new()
        } else {
            vec![Event::ToolsChanged { added, removed }]
        }
    }

    /// At `now`: claim tools past their `expires_at` withdrawn, calls past the timeout answered
    /// unreachable.
    pub fn tick(&mut self, now: i64) -> Vec<Event> {
        let mut events = Vec::new();
        let late: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, at)| now - **at >= CALL_TIMEOUT_MS)
            .map(|(call, _)| *call)
            .collect();
        for call in late {
            self.pending.remove(&call);
            events.push(Event::Answered {
                call,
                output: unreachable(),
            });
        }
        let expired: Vec<String> = self
            .claim
            .iter()
            .filter(|(_, t)| t.expires_at.is_some_and(|at| at <= now))
            .map(|(name, _)| name.clone())
            .collect();
        for name in &expired {
            self.claim.remove(name);
        }
        if !expired.is_empty() {
            events.push(Event::ToolsChanged {
                added: Vec::new(),
                removed: expired,
            });
        }
        events
    }

    /// When [`Self::tick`] next has something to do.
    pub fn next_deadline(&self) -> Option<i64> {
        let calls = self.pending.values().map(|at| at + CALL_TIMEOUT_MS);
        let tools = self.claim.values().filter_map(|t| t.expires_at);
        calls.chain(tools).min()
    }
}
