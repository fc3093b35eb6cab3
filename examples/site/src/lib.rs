//! # tacit-site
//!
//! What every Tacit relying site shares; the housing and pharmacy sites differ only in their
//! [`Policy`].
//!
//! It promises:
//! - a site never asks for a raw value: its requirements are yes/no [`wallet_core::Claim`]s with
//!   public parameters, handed out exactly as the wallet's `request_claims` takes them, with a
//!   fresh single-use nonce ([`policy`], [`nonce`]);
//! - a submission is accepted only if wallet-core's verifier accepts the receipt for this
//!   site's origin, the nonce was issued here and never used, and every required claim is shown
//!   satisfied; each refusal has one code an agent can act on ([`submit`]);
//! - refusals are values (`{ok: false, error: {code, message}}`), never a throw.
//!
//! The pure modules ([`policy`], [`nonce`], [`submit`]) hold every rule and are tested natively.
//! The `web` module (wasm32 only) is the thin page: DOM, `document.modelContext` registration,
//! `fetch` of the signer's keys, `sessionStorage`, the clock and randomness.

pub mod nonce;
pub mod policy;
pub mod submit;

#[cfg(target_arch = "wasm32")]
pub mod web;

pub use nonce::{NonceBook, NonceState, make_nonce};
pub use policy::{Policy, PolicyError, describe};
pub use submit::{Accepted, Code, Refusal, Submission, judge, parse_submission};
