//! # tacit-pharmacy
//!
//! Kronwald Apotheke's checkout for a restricted medicine: a Tacit relying site on its own
//! origin. It asks two yes/no questions — at least 18 years old, and none of anticoagulant
//! therapy, liver disease or pregnancy — and never a raw value. Everything else is
//! `tacit-site`'s.
//!
//! Tools: `pharmacy_requirements` (read-only) and `pharmacy_checkout` (consequential).

use tacit_site::Policy;
use wallet_core::{Claim, ConditionCode, Error};

/// Minimum age for the medicine.
pub const MIN_AGE: u8 = 18;

/// Conditions that rule the medicine out.
pub const CONTRAINDICATIONS: [&str; 3] = ["anticoagulant-therapy", "liver-disease", "pregnancy"];

/// The checkout's policy.
pub fn policy() -> Result<Policy, Error> {
    let conditions = CONTRAINDICATIONS
        .iter()
        .map(|c| ConditionCode::parse(c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Policy {
        id: "pharmacy",
        site_name: "Kronwald Apotheke",
        purpose: "Dispensing Dolorex 75 mg, a restricted medicine: age and contraindications",
        requirements_tool: "pharmacy_requirements",
        submit_tool: "pharmacy_checkout",
        submission: "order",
        accepted_text: "Your order for Dolorex 75 mg (20 tablets, 14.90 EUR) is confirmed. \
            The pharmacist has your safety check; collect it at the counter from tomorrow.",
        claims: vec![
            Claim::age_at_least(MIN_AGE)?,
            Claim::has_none_of(conditions)?,
        ],
    })
}

/// Entry point: serve the page with the checkout's policy.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    tacit_site::web::start(
        policy().map_err(|_| tacit_site::PolicyError("a claim could not be built")),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_policy_is_the_published_one() {
        let policy = policy().unwrap();
        assert_eq!(policy.check(), Ok(()));
        assert_eq!(
            serde_json::to_value(&policy.claims).unwrap(),
            json!([
                { "kind": "age_at_least", "years": 18 },
                { "kind": "has_none_of", "conditions": ["anticoagulant-therapy", "liver-disease", "pregnancy"] }
            ])
        );
        assert_eq!(policy.requirements_tool, "pharmacy_requirements");
        assert_eq!(policy.submit_tool, "pharmacy_checkout");
    }
}
