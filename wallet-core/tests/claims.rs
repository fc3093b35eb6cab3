//! Item 3: claims and their evaluation.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use common::{arb_input, profile, today};
use proptest::prelude::*;
use time::{Date, Month};
use wallet_core::catalogue::{CONDITIONS, DISTRICTS};
use wallet_core::claim::Unaskable;
use wallet_core::{
    Claim, ClaimError, ConditionCode, Currency, DistrictId, Money, Profile, evaluate,
};

fn eur(amount_minor: u64) -> Money {
    Money {
        amount_minor,
        currency: Currency::parse("EUR").unwrap(),
    }
}

fn date(y: i32, m: Month, d: u8) -> Date {
    Date::from_calendar_date(y, m, d).unwrap()
}

fn born(dob: &str) -> Profile {
    let mut i = common::input();
    i.date_of_birth = dob.into();
    Profile::new(&i, date(2100, Month::January, 1)).unwrap()
}

fn districts(codes: &[&str]) -> Vec<DistrictId> {
    codes
        .iter()
        .map(|c| DistrictId::parse(c).unwrap())
        .collect()
}

fn conditions(codes: &[&str]) -> Vec<ConditionCode> {
    codes
        .iter()
        .map(|c| ConditionCode::parse(c).unwrap())
        .collect()
}

#[test]
fn claims_income_below_is_strict() {
    let p = profile(); // 28,400.00 EUR
    let yes = evaluate(&p, &Claim::income_below(eur(3_000_000)).unwrap(), today()).unwrap();
    assert!(yes.satisfied);
    let equal = evaluate(&p, &Claim::income_below(eur(2_840_000)).unwrap(), today()).unwrap();
    assert!(!equal.satisfied);
    let above = evaluate(&p, &Claim::income_below(eur(2_840_001)).unwrap(), today()).unwrap();
    assert!(above.satisfied);
}

#[test]
fn claims_income_in_another_currency_is_invalid_not_converted() {
    let usd = Money {
        amount_minor: 100_000_000,
        currency: Currency::parse("USD").unwrap(),
    };
    let err = evaluate(&profile(), &Claim::income_below(usd).unwrap(), today()).unwrap_err();
    assert_eq!(err, ClaimError::NotAskable(Unaskable::CurrencyMismatch));
    assert!(!err.to_string().contains("EUR"));
}

#[test]
fn claims_age_at_least_on_birthday_and_day_before() {
    let p = born("2008-11-29");
    let c = Claim::age_at_least(18).unwrap();
    assert!(
        evaluate(&p, &c, date(2026, Month::November, 29))
            .unwrap()
            .satisfied
    );
    assert!(
        !evaluate(&p, &c, date(2026, Month::November, 28))
            .unwrap()
            .satisfied
    );
}

#[test]
fn claims_age_at_least_29_february_birthday() {
    // Born on a leap day: in a common year the birthday counts as passed on 1 March.
    let p = born("2008-02-29");
    let c = Claim::age_at_least(18).unwrap();
    assert!(
        !evaluate(&p, &c, date(2026, Month::February, 28))
            .unwrap()
            .satisfied
    );
    assert!(
        evaluate(&p, &c, date(2026, Month::March, 1))
            .unwrap()
            .satisfied
    );
    // In a leap year, on the day itself.
    let c = Claim::age_at_least(20).unwrap();
    assert!(
        !evaluate(&p, &c, date(2028, Month::February, 28))
            .unwrap()
            .satisfied
    );
    assert!(
        evaluate(&p, &c, date(2028, Month::February, 29))
            .unwrap()
            .satisfied
    );
    // Asked on 29 February about someone born on 28 February / 1 March of a common year.
    let c = Claim::age_at_least(1).unwrap();
    assert!(
        evaluate(&born("2027-02-28"), &c, date(2028, Month::February, 29))
            .unwrap()
            .satisfied
    );
    assert!(
        !evaluate(&born("2027-03-01"), &c, date(2028, Month::February, 29))
            .unwrap()
            .satisfied
    );
}

#[test]
fn claims_resides_in_and_has_none_of() {
    let p = profile(); // nordhafen, asthma
    let yes = Claim::resides_in(districts(&["altstadt", "nordhafen", "westend"])).unwrap();
    assert!(evaluate(&p, &yes, today()).unwrap().satisfied);
    let no = Claim::resides_in(districts(&["altstadt", "westend", "suedpark"])).unwrap();
    assert!(!evaluate(&p, &no, today()).unwrap().satisfied);
    let clear = Claim::has_none_of(conditions(&["pregnancy", "liver-disease"])).unwrap();
    assert!(evaluate(&p, &clear, today()).unwrap().satisfied);
    let conflict = Claim::has_none_of(conditions(&["pregnancy", "asthma"])).unwrap();
    assert!(!evaluate(&p, &conflict, today()).unwrap().satisfied);
}

#[test]
fn claims_evaluation_returns_the_claim_and_a_boolean_only() {
    let c = Claim::age_at_least(18).unwrap();
    let e = evaluate(&profile(), &c, today()).unwrap();
    assert_eq!(e.claim, c);
    assert_eq!(
        format!("{e:?}"),
        format!("Evaluation {{ claim: {c:?}, satisfied: true }}")
    );
}

#[test]
fn claims_bad_parameters_are_refused() {
    assert!(Claim::income_below(eur(0)).is_err());
    assert!(Claim::age_at_least(0).is_err());
    assert!(Claim::age_at_least(131).is_err());
    assert!(Claim::resides_in(vec![]).is_err());
    assert!(Claim::resides_in(districts(&["altstadt", "altstadt"])).is_err());
    assert!(Claim::has_none_of(vec![]).is_err());
    let table = [
        r#"{"kind":"age_at_least","years":18,"income":2840000}"#,
        r#"{"kind":"age_at_least","years":-1}"#,
        r#"{"kind":"age_at_least","years":0}"#,
        r#"{"kind":"income_below","limit":{"amount_minor":3000000,"currency":"eur"}}"#,
        r#"{"kind":"income_below","limit":{"amount_minor":3000000,"currency":"EUR","x":1}}"#,
        r#"{"kind":"resides_in","districts":[]}"#,
        r#"{"kind":"resides_in","districts":["atlantis"]}"#,
        r#"{"kind":"has_none_of","conditions":["asthma","asthma"]}"#,
        r#"{"kind":"date_of_birth_is"}"#,
    ];
    for json in table {
        assert!(
            serde_json::from_str::<Claim>(json).is_err(),
            "{json} was accepted"
        );
    }
}

#[test]
fn claims_json_shape() {
    let c = Claim::income_below(eur(3_000_000)).unwrap();
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(
        json,
        r#"{"kind":"income_below","limit":{"amount_minor":3000000,"currency":"EUR"}}"#
    );
    assert_eq!(serde_json::from_str::<Claim>(&json).unwrap(), c);
    let c = Claim::resides_in(districts(&["westend", "altstadt"])).unwrap();
    assert_eq!(
        serde_json::to_string(&c).unwrap(),
        r#"{"kind":"resides_in","districts":["altstadt","westend"]}"#
    );
}

#[test]
fn claims_canonical_rejects_noncanonical_text() {
    for text in [
        "income_below 03000000 EUR",
        "income_below 3000000 EUR ",
        "income_below +3000000 EUR",
        "age_at_least 18 x",
        "resides_in westend,altstadt",
        "resides_in altstadt,altstadt",
        "has_none_of ",
        "",
    ] {
        assert!(
            Claim::parse_canonical(text).is_err(),
            "{text:?} was accepted"
        );
    }
}

fn arb_claim() -> impl Strategy<Value = Claim> {
    prop_oneof![
        (1u64..=100_000_000_000).prop_map(|a| Claim::income_below(eur(a)).unwrap()),
        (1u8..=130).prop_map(|y| Claim::age_at_least(y).unwrap()),
        proptest::sample::subsequence(DISTRICTS.to_vec(), 1..DISTRICTS.len()).prop_map(|ds| {
            Claim::resides_in(ds.iter().map(|d| DistrictId::parse(d.code).unwrap())).unwrap()
        }),
        proptest::sample::subsequence(CONDITIONS.to_vec(), 1..CONDITIONS.len()).prop_map(|cs| {
            Claim::has_none_of(cs.iter().map(|c| ConditionCode::parse(c.code).unwrap())).unwrap()
        }),
    ]
}

proptest! {
    #[test]
    fn claims_canonical_round_trip(claim in arb_claim()) {
        let text = claim.canonical();
        prop_assert_eq!(Claim::parse_canonical(&text).unwrap(), claim.clone());
        let json = serde_json::to_string(&claim).unwrap();
        prop_assert_eq!(serde_json::from_str::<Claim>(&json).unwrap(), claim);
    }

    /// The cutoff rule agrees with counting birthdays the long way.
    #[test]
    fn claims_age_matches_birthday_count(
        dob_days in 0i64..60_000, ask_days in 0i64..60_000, years in 1u8..=130
    ) {
        let epoch = date(1900, Month::January, 1);
        let dob = epoch + time::Duration::days(dob_days);
        let on = epoch + time::Duration::days(ask_days);
        prop_assume!(dob <= on);
        let mut age = on.year() - dob.year();
        if (on.month() as u8, on.day()) < (dob.month() as u8, dob.day()) {
            age -= 1;
        }
        let mut input = common::input();
        input.date_of_birth = wallet_core::profile::format_date(dob);
        let p = Profile::new(&input, on);
        prop_assume!(p.is_ok()); // more than 130 years apart
        let p = p.unwrap();
        let got = evaluate(&p, &Claim::age_at_least(years).unwrap(), on).unwrap().satisfied;
        prop_assert_eq!(got, age >= i32::from(years));
    }

    #[test]
    fn claims_evaluate_every_random_profile(input in arb_input(), claim in arb_claim()) {
        let p = Profile::new(&input, today()).unwrap();
        let e = evaluate(&p, &claim, today()).unwrap();
        prop_assert_eq!(e.claim, claim);
    }
}
