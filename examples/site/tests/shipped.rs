//! The two relying sites the workspace ships (`examples/housing`, `examples/pharmacy`): each
//! `site.toml` loads, passes the policy's checks, and publishes the policy and trust its page
//! describes.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::Path;

use serde_json::{Value, json};
use tacit_site::server::Config;

/// What one shipped site publishes.
struct Shipped {
    dir: &'static str,
    origin: &'static str,
    issuer: &'static str,
    issuer_name: &'static str,
    claims: Value,
    requirements_tool: &'static str,
    submit_tool: &'static str,
    /// The claim kind taken only with the issuer's proof.
    proven: &'static str,
}

#[test]
fn each_shipped_site_publishes_its_policy() {
    let sites = [
        Shipped {
            dir: "housing",
            origin: "http://127.0.0.1:8081",
            issuer: "http://127.0.0.1:8791",
            issuer_name: "Tax Office Nordstadt",
            claims: json!([
                { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } },
                { "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] }
            ]),
            requirements_tool: "housing_requirements",
            submit_tool: "housing_submit_application",
            proven: "income_below",
        },
        Shipped {
            dir: "pharmacy",
            origin: "http://127.0.0.1:8082",
            issuer: "http://127.0.0.1:8792",
            issuer_name: "Civil Registry Nordstadt",
            claims: json!([
                { "kind": "age_at_least", "years": 18 },
                { "kind": "has_none_of", "conditions": ["anticoagulant-therapy", "liver-disease", "pregnancy"] }
            ]),
            requirements_tool: "pharmacy_requirements",
            submit_tool: "pharmacy_checkout",
            proven: "age_at_least",
        },
    ];
    for site in sites {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(site.dir)
            .join("site.toml");
        let config = Config::load(&path).unwrap();
        assert_eq!(config.policy.check(), Ok(()), "{}", site.dir);
        // It trusts one issuer, fetched from its well-known metadata, and takes income
        // (housing) or age (pharmacy) only with that issuer's proof.
        let [trusted] = &config.trusted_issuers[..] else {
            panic!("{}: one trusted issuer", site.dir)
        };
        assert_eq!(trusted.issuer.as_str(), site.issuer);
        assert_eq!(trusted.name, site.issuer_name);
        assert_eq!(
            trusted.keys_url.as_deref(),
            Some(format!("{}/.well-known/jwt-vc-issuer", site.issuer).as_str())
        );
        assert_eq!(
            serde_json::to_value(&config.policy.require_proof).unwrap(),
            json!([site.proven]),
            "{}",
            site.dir
        );
        assert_eq!(
            trusted.vouches_for.map(|a| a.name()),
            Some(if site.dir == "housing" {
                "income"
            } else {
                "age"
            })
        );
        assert_eq!(config.origin.unwrap().as_str(), site.origin);
        assert_eq!(
            serde_json::to_value(&config.policy.claims).unwrap(),
            site.claims
        );
        assert_eq!(config.policy.requirements_tool, site.requirements_tool);
        assert_eq!(config.policy.submit_tool, site.submit_tool);
    }
}
