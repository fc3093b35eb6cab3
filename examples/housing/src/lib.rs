//! # tacit-housing
//!
//! The City Housing Programme's eligibility page: a Tacit relying site on its own origin. It
//! asks two yes/no questions — household income below 30,000.00 EUR, residence in Altstadt,
//! Nordhafen or Westend — and never a raw value. Its policy and trust live in `site.toml`,
//! served by `tacit-site`'s server (`examples/site/tests/shipped.rs` checks it); this crate is the
//! page's entry point.
//!
//! Tools: `housing_requirements` (read-only) and `housing_submit_application` (consequential).

/// Entry point: the page asks its server for the policy and registers the two tools.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    tacit_site::web::start();
}
