//! # capability-gate
//!
//! Claim tools that exist only while consent holds: the wallet's tools on top of
//! [`tool_gate`], the generic gate.
//!
//! **What is where.** `tool-gate` holds what any gated tool needs and knows nothing of the
//! wallet: the lease (expiry, use count, how it ended, the check at use), the refusal envelope's
//! shape, reading input text with its depth limit, the host trait and the registry that keeps a
//! host equal to what is granted, and the absence audit's comparison. This crate holds the
//! wallet's part: consent requests, grants of claims (each grant's expiry and uses *are* a
//! [`tool_gate::Lease`], issued from a [`Lifetime`]), the claim handlers and the disclosure
//! ledger, proposals and receipts, the wallet's refusal [`Code`]s (the grant codes are
//! tool-gate's), its [`Host`] trait over [`ToolDef`] (adapted to tool-gate's), and the
//! per-field absence proof ([`audit::raw_getters`]). The relying sites and the `tool-gate-js`
//! package use tool-gate directly for their own tools.
//!
//! This crate promises:
//! - **one canonical tool definition** ([`ToolDef`]) that every host registers;
//! - **a tool exists only while its grant lives**: grant → registered; revoke, expiry, lock or
//!   the last use → withdrawn ([`Registry::sync`]); and every execution re-checks its grant
//!   before answering, so a stale handle or a call in flight gets a refusal, never an outcome;
//! - **the agent cannot choose the question**: thresholds are fixed by the person's grant; claim
//!   tools take only an optional opaque `nonce`;
//! - **probing gains nothing**: every claim goes through wallet-core's disclosure ledger;
//! - **writes wait for a person**: `draft_application` only proposes; the person releases once
//!   or refuses with a reason;
//! - **who is asking is checked, not believed**: a request is `Unconfirmed` until its site's
//!   signature checks against the keys its origin publishes ([`Gate::confirm_asker`]); a
//!   proposal for an unconfirmed asker is released only if the person acknowledges that;
//! - **"signed" means verified**: a signer's answer is attached only if it verifies against the
//!   pinned signer's published keys, for the payload sent ([`check_signed`]);
//! - **refusal is a value**: every tool returns `{ok, result}` or `{ok: false, isError: true,
//!   error: {code, message}}` ([`tool_gate::envelope()`]), never panics, and validates its input
//!   whatever its schema says;
//! - **everything is logged**: every claim execution, refusals included;
//! - **issuer-backed where it can be**: a claim at an issuer's ladder step or age threshold is
//!   answered from the person's credential ([`credentials`]), still through the ledger, and its
//!   log entry names the issuer; on release one unused credential per such claim is presented
//!   (key-bound to the audience and nonce) and marked used. No credential, disclosure or key
//!   reaches an agent before the person releases.
//!
//! It refuses to know about browsers, sockets or clocks: `now` is an argument everywhere, and the
//! host schedules wake-ups from [`Gate::next_deadline`].

pub mod audit;
pub mod consent;
pub mod contract;
pub mod credentials;
pub mod envelope;
mod exec;
pub mod focus;
pub mod gate;
pub mod host;
pub mod ids;
pub mod input;
pub mod state;
pub mod strength;
pub mod tool;
pub mod wallet;
pub mod words;

pub use audit::{Audit, audit_registry};
pub use credentials::{
    BatchGrant, CredentialError, CredentialSummary, Credentials, IssuerInfo, holder_key_id,
    jwks_from_metadata, pop_input, request_body,
};
pub use envelope::{Code, Refusal};
pub use gate::{
    Acknowledgement, Gate, GateError, Pending, ProofToSign, Released, check_signed, site_keys_url,
};
pub use host::{Host, HostError, InFlight, MemoryHost, MemoryRegistration, Registry};
pub use ids::{BadId, ProposalId, RequestId};
pub use state::{
    AskerStatus, Grant, GrantState, Lifetime, Proposal, ProposalItem, ProposalState, Request,
    RequestState,
};
pub use tool::{Annotations, Handler, Tier, ToolDef};
