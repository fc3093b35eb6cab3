//! Canary: for random profiles, the decimal and ISO renderings of every raw value never appear in
//! any log export, receipt, tool-facing outcome or error message.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use common::{arb_profile_outside, renderings, today};
use ed25519_dalek::SigningKey;
use proptest::prelude::*;
use wallet_core::receipt::sign;
use wallet_core::{
    Claim, ComparisonLog, ConditionCode, Currency, DisclosureLedger, DistrictId, GrantId, Money,
    Nonce, Origin, Profile, ProfileInput, ReceiptPayload, SessionId, Timestamp, ToolName, evaluate,
};

/// The districts and conditions the test sites ask about; profiles hold none of them, so any
/// appearance of the profile's own codes is a leak, not an echo of a public parameter.
const ASKED_DISTRICTS: [&str; 3] = ["altstadt", "westend", "suedpark"];
const ASKED_CONDITIONS: [&str; 3] = ["liver-disease", "pregnancy", "epilepsy"];

fn arb_profile() -> impl Strategy<Value = ProfileInput> {
    arb_profile_outside(&ASKED_DISTRICTS, &ASKED_CONDITIONS)
}

fn questions(income_probe: u64) -> Vec<Claim> {
    let eur = Currency::parse("EUR").unwrap();
    vec![
        Claim::income_below(Money {
            amount_minor: 3_000_000,
            currency: eur,
        })
        .unwrap(),
        Claim::income_below(Money {
            amount_minor: income_probe,
            currency: eur,
        })
        .unwrap(),
        Claim::income_below(Money {
            amount_minor: income_probe + 1,
            currency: eur,
        })
        .unwrap(),
        Claim::income_below(Money {
            amount_minor: 3_000_000,
            currency: Currency::parse("USD").unwrap(),
        })
        .unwrap(),
        Claim::age_at_least(18).unwrap(),
        Claim::age_at_least(65).unwrap(),
        Claim::resides_in(
            ASKED_DISTRICTS
                .iter()
                .map(|d| DistrictId::parse(d).unwrap()),
        )
        .unwrap(),
        Claim::has_none_of(
            ASKED_CONDITIONS
                .iter()
                .map(|c| ConditionCode::parse(c).unwrap()),
        )
        .unwrap(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn canary_raw_values_never_leave_the_profile(input in arb_profile()) {
        let profile = Profile::new(&input, today()).unwrap();
        let mut texts: Vec<String> = Vec::new();
        let origin = Origin::parse("http://127.0.0.1:8081").unwrap();
        let tool = ToolName::parse("claim.income_below.g1").unwrap();
        let grant = GrantId::parse("g1").unwrap();
        let mut ledger = DisclosureLedger::default();
        let mut log = ComparisonLog::new();
        // An adversary aims one question at the exact income: the question itself is public and
        // may contain the number, so it is excluded from the check below.
        let probe = profile.income().amount_minor;
        for (i, claim) in questions(probe).into_iter().enumerate() {
            let at = Timestamp::from_millis(1_795_953_600_000 + i as i64);
            let answer = ledger.answer(&profile, &claim, today());
            texts.push(format!("{answer:?}"));
            if let Err(e) = evaluate(&profile, &claim, today()) {
                texts.push(e.to_string());
                texts.push(format!("{e:?}"));
            }
            if i == 1 || i == 2 {
                continue; // the probe claims carry the value as their own public parameter
            }
            texts.push(format!("{:?}", evaluate(&profile, &claim, today()).ok()));
            log.append(at, origin.clone(), tool.clone(), claim, answer.outcome, grant.clone(), None);
        }
        texts.push(log.export());
        texts.push(format!("{:?}", ledger.bits_released(today())));
        let payload = ReceiptPayload::new(
            SessionId::parse("s1").unwrap(),
            origin.clone(),
            Nonce::parse("n1").unwrap(),
            Timestamp::from_millis(1_795_953_600_000),
            Timestamp::from_millis(1_795_954_200_000),
            &log,
        )
        .unwrap();
        let signed = sign(payload, &SigningKey::from_bytes(&[7; 32]), Timestamp::from_millis(1_795_953_600_000));
        texts.push(serde_json::to_string(&signed).unwrap());
        // Error messages a person or an agent could see.
        let mut bad = input.clone();
        bad.income_minor = -input.income_minor;
        texts.push(Profile::new(&bad, today()).unwrap_err().to_string());
        let mut bad = input.clone();
        bad.date_of_birth = format!("{}x", input.date_of_birth);
        texts.push(Profile::new(&bad, today()).unwrap_err().to_string());
        texts.push(format!("{profile:?} {input:?}"));
        texts.push(wallet_core::OpenError::CannotOpen.to_string());
        for text in &texts {
            for raw in renderings(&profile) {
                prop_assert!(!text.contains(&raw), "{raw:?} leaked into {text}");
            }
        }
    }
}
