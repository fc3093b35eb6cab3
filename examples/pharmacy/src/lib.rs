//! # tacit-pharmacy
//!
//! Kronwald Apotheke's checkout for a restricted medicine: a Tacit relying site on its own
//! origin. It asks two yes/no questions — at least 18 years old, and none of anticoagulant
//! therapy, liver disease or pregnancy — and never a raw value. Its policy and trust live in
//! `site.toml`, served by `tacit-site`'s server (`examples/site/tests/shipped.rs` checks it); this
//! crate is the page's entry point.
//!
//! Tools: `pharmacy_requirements` (read-only) and `pharmacy_checkout` (consequential).

/// Entry point: the page asks its server for the policy and registers the two tools.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    tacit_site::web::start();
}
