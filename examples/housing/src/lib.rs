//! # tacit-housing
//!
//! The City Housing Programme's eligibility page: a Tacit relying site on its own origin. It
//! asks two yes/no questions — household income below 30,000.00 EUR, residence in Altstadt,
//! Nordhafen or Westend — and never a raw value. Everything else is `tacit-site`'s.
//!
//! Tools: `housing_requirements` (read-only) and `housing_submit_application` (consequential).

use std::collections::BTreeSet;

use tacit_site::Policy;
use wallet_core::{Claim, Currency, DistrictId, Error, Money};

/// Household income limit: 30,000.00 EUR, in minor units.
pub const INCOME_LIMIT_MINOR: u64 = 3_000_000;

/// The districts the programme serves.
pub const DISTRICTS: [&str; 3] = ["altstadt", "nordhafen", "westend"];

/// The programme's policy.
pub fn policy() -> Result<Policy, Error> {
    let limit = Money {
        amount_minor: INCOME_LIMIT_MINOR,
        currency: Currency::parse("EUR")?,
    };
    let districts = DISTRICTS
        .iter()
        .map(|d| DistrictId::parse(d))
        .collect::<Result<BTreeSet<_>, _>>()?;
    Ok(Policy {
        id: "housing",
        site_name: "City Housing Programme",
        purpose: "Eligibility for subsidised housing: household income and district of residence",
        requirements_tool: "housing_requirements",
        submit_tool: "housing_submit_application",
        submission: "application",
        accepted_text: "Your application is received and you are eligible for subsidised housing. \
            We will write to you about available flats within two weeks.",
        claims: vec![Claim::income_below(limit)?, Claim::resides_in(districts)?],
    })
}

/// Entry point: serve the page with the programme's policy.
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
                { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } },
                { "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] }
            ])
        );
        assert_eq!(policy.requirements_tool, "housing_requirements");
        assert_eq!(policy.submit_tool, "housing_submit_application");
    }
}
