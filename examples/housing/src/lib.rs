//! # tacit-housing
//!
//! The City Housing Programme's eligibility page: a Tacit relying site on its own origin. It
//! asks two yes/no questions — household income below 30,000.00 EUR, residence in Altstadt,
//! Nordhafen or Westend — and never a raw value. Its policy and trust live in `site.toml`,
//! served by `tacit-site`'s server; this crate is the page's entry point.
//!
//! Tools: `housing_requirements` (read-only) and `housing_submit_application` (consequential).

/// Entry point: the page asks its server for the policy and registers the two tools.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    tacit_site::web::start();
}

// The policy is read by the server (native only).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use serde_json::json;

    /// The policy `site.toml` publishes.
    #[test]
    fn the_policy_is_the_published_one() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("site.toml");
        let config = tacit_site::server::Config::load(&path).unwrap();
        assert_eq!(config.policy.check(), Ok(()));
        // It trusts one issuer, fetched from its well-known metadata; proof is not required.
        let [trusted] = &config.trusted_issuers[..] else {
            panic!("one trusted issuer")
        };
        assert_eq!(trusted.issuer.as_str(), "http://127.0.0.1:8791");
        assert_eq!(trusted.name, "Tax Office Nordstadt");
        assert_eq!(
            trusted.keys_url.as_deref(),
            Some("http://127.0.0.1:8791/.well-known/jwt-vc-issuer")
        );
        assert!(config.policy.require_proof.is_empty());
        assert_eq!(config.origin.unwrap().as_str(), "http://127.0.0.1:8081");
        assert_eq!(
            serde_json::to_value(&config.policy.claims).unwrap(),
            json!([
                { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } },
                { "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] }
            ])
        );
        assert_eq!(config.policy.requirements_tool, "housing_requirements");
        assert_eq!(config.policy.submit_tool, "housing_submit_application");
    }
}
