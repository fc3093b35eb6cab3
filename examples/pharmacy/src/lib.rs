//! # tacit-pharmacy
//!
//! Kronwald Apotheke's checkout for a restricted medicine: a Tacit relying site on its own
//! origin. It asks two yes/no questions — at least 18 years old, and none of anticoagulant
//! therapy, liver disease or pregnancy — and never a raw value. Its policy and trust live in
//! `site.toml`, served by `tacit-site`'s server; this crate is the page's entry point.
//!
//! Tools: `pharmacy_requirements` (read-only) and `pharmacy_checkout` (consequential).

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
        assert_eq!(trusted.issuer.as_str(), "http://127.0.0.1:8792");
        assert_eq!(trusted.name, "Civil Registry Nordstadt");
        assert_eq!(
            trusted.keys_url.as_deref(),
            Some("http://127.0.0.1:8792/.well-known/jwt-vc-issuer")
        );
        assert!(config.policy.require_proof.is_empty());
        assert_eq!(config.origin.unwrap().as_str(), "http://127.0.0.1:8082");
        assert_eq!(
            serde_json::to_value(&config.policy.claims).unwrap(),
            json!([
                { "kind": "age_at_least", "years": 18 },
                { "kind": "has_none_of", "conditions": ["anticoagulant-therapy", "liver-disease", "pregnancy"] }
            ])
        );
        assert_eq!(config.policy.requirements_tool, "pharmacy_requirements");
        assert_eq!(config.policy.submit_tool, "pharmacy_checkout");
    }
}
