//! # tacit-web
//!
//! The wallet page: a thin wasm-bindgen host. It converts types, talks to the browser
//! (`document.modelContext`, the DOM, `localStorage`, IndexedDB, WebCrypto, `fetch`) and calls
//! wallet-core, capability-gate and tacit-protocol, where every rule lives. It decides nothing
//! itself.
//!
//! Trust comes from settings the person makes, never from the URL: the issuers whose credentials
//! back answers are the ones the person added (Settings → Credentials), the signer is the one this
//! browser is enrolled with (a non-extractable WebCrypto install key kept in IndexedDB signs
//! every request to it), a signer's answer counts as signed only if it verifies against that
//! signer's published keys, and a site is shown as verified only if its signature checks against
//! the keys its own origin publishes.
//!
//! The wallet's lifecycle rules (records, generations, the sealed disclosure memory, the one lock
//! path, the editor) live in `capability_gate::wallet`; this crate carries out the effects it
//! returns. A raw profile value is in the DOM only while the person has the editor open (it asks
//! for the passphrase and empties itself on close, lock and idle). Grant, Release and End session
//! act only on a trusted click followed by the person's confirmation (a verified WebAuthn
//! assertion, or the passphrase typed again). All site-supplied text is inert (`textContent`,
//! never HTML).
//!
//! On targets other than `wasm32` the crate is empty, so the workspace builds natively.

#[cfg(target_arch = "wasm32")]
mod actions;
#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod asker;
#[cfg(target_arch = "wasm32")]
mod credentials;
#[cfg(target_arch = "wasm32")]
mod decisions;
#[cfg(target_arch = "wasm32")]
mod dom;
#[cfg(target_arch = "wasm32")]
mod editor;
#[cfg(target_arch = "wasm32")]
pub mod host;
#[cfg(target_arch = "wasm32")]
mod intl;
#[cfg(target_arch = "wasm32")]
mod issuer;
#[cfg(target_arch = "wasm32")]
pub mod keystore;
#[cfg(target_arch = "wasm32")]
mod net;
#[cfg(target_arch = "wasm32")]
mod person;
#[cfg(target_arch = "wasm32")]
mod render;
#[cfg(target_arch = "wasm32")]
mod signer;
#[cfg(target_arch = "wasm32")]
mod storage;
#[cfg(any(target_arch = "wasm32", test))]
mod strength;
#[cfg(target_arch = "wasm32")]
mod told;

#[cfg(target_arch = "wasm32")]
pub use host::{Detection, WebMcpHost, detect};

/// Entry point: builds the app once the module loads.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    app::start();
}
