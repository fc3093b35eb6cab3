//! # tacit-site
//!
//! What every Tacit relying site shares; the housing and pharmacy sites differ only in their
//! configuration (`site.toml`: origin, [`Policy`], signer keys) and their page's words.
//!
//! It promises:
//! - a site never asks for a raw value: its requirements are yes/no [`wallet_core::Claim`]s with
//!   public parameters, handed out exactly as the wallet's `request_claims` takes them, with a
//!   fresh single-use nonce and the site's signature over both ([`policy`], [`nonce`],
//!   [`tacit_protocol::site_auth`]);
//! - the verdict is the **site server's**: a submission is accepted only if wallet-core's
//!   verifier accepts the receipt against the signer keys the configuration pins, for this
//!   site's origin, the nonce was issued by this server and is consumed now, atomically, in its
//!   database, and every required claim is shown satisfied; each refusal has one code an agent
//!   can act on ([`submit`]);
//! - an answer the receipt says an issuer vouches for counts only with that issuer's SD-JWT
//!   presentation, verified on the server against the issuers the configuration trusts, bound to
//!   this origin and the receipt's nonce, disclosing exactly that answer ([`proof`]);
//! - trust is configuration: no URL parameter, page or agent input changes which signer keys
//!   or issuers count;
//! - refusals are values (`{ok: false, error: {code, message}}`), never a throw.
//!
//! The pure modules ([`policy`], [`nonce`], [`proof`], [`submit`], [`gate`]) hold every rule and
//! are tested natively. `server` (native only) carries them over HTTP: configuration, the nonce
//! table, the signer's keys, the site key, the routes. The `web` module (wasm32 only) is the thin
//! page: it registers the WebMCP tools as [`gate`] decides (the submit tool only while a nonce
//! the page obtained is open, with `tool-gate`), calls the server's API and shows the outcome;
//! the verdict stays the server's.

pub mod api;
pub mod gate;
pub mod nonce;
pub mod policy;
pub mod proof;
pub mod submit;
pub mod view;

#[cfg(not(target_arch = "wasm32"))]
pub mod server;

#[cfg(target_arch = "wasm32")]
pub mod web;

pub use nonce::{NonceRecord, NonceState, make_nonce};
pub use policy::{Policy, PolicyError, attested_json, describe};
pub use proof::{Issuer, Item, Proofs, Proven, Trust, check_presentations};
pub use submit::{
    Accepted, Code, Refusal, Submission, Verdict, check_receipt, decide, nonce_refusal,
    parse_submission,
};
