//! # tool-gate
//!
//! Make an agent's authority over a tool revocable, expiring and inspectable by default. A
//! tool **exists only while its grant lives**:
//! - [`ToolGate::grant`] issues a [`Lease`] (an expiry and, optionally, a number of uses) for a
//!   tool; the host registers it ([`Registry::sync`]);
//! - revoke, expiry ([`ToolGate::tick`]) or the last use withdraws it, and each of those is a
//!   [`Change`] the host can tell the person about;
//! - every call is **checked at use** ([`ToolGate::begin_use`]): a stale handle or a call that
//!   raced a revoke gets a refusal, never an answer;
//! - refusal is a value ([`envelope()`]): `{ok: false, isError: true, error: {code, message}}`,
//!   which MCP clients and WebMCP evaluators read as an error;
//! - the absence audit ([`audit()`]) compares what the browser lists with what was granted.
//!
//! It knows nothing of browsers, sockets or clocks: `now` (milliseconds since the epoch) is an
//! argument everywhere, and the host schedules its wake-up from [`ToolGate::next_deadline`].
//!
//! Who uses it: `capability-gate` builds the wallet's claim tools on it (each grant holds a
//! [`Lease`]; its `Registry` is this [`Registry`] over an adapter of its host; its envelope,
//! input reading and audit are these, with the wallet's codes, fields and raw-getter names on
//! top). The relying sites (`tacit-site`'s `gate` module) gate their submit tool with a
//! [`ToolGate`]: it exists only while a requirements nonce the page obtained is live. The
//! `tool-gate-js` package offers it to any WebMCP page.

pub mod audit;
pub mod envelope;
pub mod gate;
pub mod host;
pub mod input;
pub mod lease;

pub use audit::{Audit, audit};
pub use envelope::{Refusal, Reply, envelope};
pub use gate::{Change, ToolGate, Use};
pub use host::{Host, HostError, Named, Registry};
pub use lease::{Ended, Lease, LeaseError, MAX_LEASE_MS, MIN_LEASE_MS};
