//! Item 1: the profile and its validation.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use common::{input, profile, today};
use wallet_core::{Attribute, Field, Profile, ProfileError, ProfileInput};

fn refused(edit: impl FnOnce(&mut ProfileInput)) -> ProfileError {
    let mut i = input();
    edit(&mut i);
    Profile::new(&i, today()).unwrap_err()
}

fn field_of(err: ProfileError) -> Field {
    let ProfileError { field, reason: _ } = err;
    field
}

#[test]
fn profile_renderings_are_every_way_a_raw_value_could_be_written() {
    let mut input = input();
    input.income_minor = 123_456_789; // 1,234,567.89
    input.conditions = vec!["asthma".into(), "diabetes".into()];
    let p = Profile::new(&input, today()).unwrap();
    assert_eq!(
        p.renderings(Attribute::Income),
        ["123456789", "1234567.89", "1,234,567.89"]
    );
    assert_eq!(p.renderings(Attribute::Age), ["1990-02-28", "19900228"]);
    assert_eq!(p.renderings(Attribute::District), ["nordhafen"]);
    assert_eq!(p.renderings(Attribute::Conditions), ["asthma", "diabetes"]);
    // The canary's list is every attribute's renderings, in `Attribute::ALL` order.
    let all: Vec<String> = Attribute::ALL
        .into_iter()
        .flat_map(|a| p.renderings(a))
        .collect();
    assert_eq!(common::renderings(&p), all);
}

#[test]
fn profile_valid_input_is_accepted_and_read_back() {
    let p = profile();
    assert_eq!(p.income().amount_minor, 2_840_000);
    assert_eq!(p.income().currency.as_str(), "EUR");
    assert_eq!(p.district().as_str(), "nordhafen");
    assert_eq!(p.to_input().date_of_birth, "1990-02-28");
    assert_eq!(p.to_input().conditions, vec!["asthma".to_owned()]);
}

#[test]
fn profile_validation_names_the_field() {
    type Edit = Box<dyn FnOnce(&mut ProfileInput)>;
    let table: Vec<(Edit, Field, &str)> = vec![
        (Box::new(|i| i.income_minor = -1), Field::Income, "negative"),
        (
            Box::new(|i| i.income_minor = 100_000_000_000),
            Field::Income,
            "below",
        ),
        (
            Box::new(|i| i.currency = "EURO".into()),
            Field::Currency,
            "three-letter",
        ),
        (
            Box::new(|i| i.currency = "XXX".into()),
            Field::Currency,
            "not a currency",
        ),
        (
            Box::new(|i| i.date_of_birth = "2026-11-30".into()),
            Field::DateOfBirth,
            "future",
        ),
        (
            Box::new(|i| i.date_of_birth = "1896-11-28".into()),
            Field::DateOfBirth,
            "130 years",
        ),
        (
            Box::new(|i| i.date_of_birth = "29.02.1990".into()),
            Field::DateOfBirth,
            "YYYY-MM-DD",
        ),
        (
            Box::new(|i| i.date_of_birth = "1990-02-29".into()),
            Field::DateOfBirth,
            "YYYY-MM-DD",
        ),
        (
            Box::new(|i| i.district = "atlantis".into()),
            Field::District,
            "unknown district",
        ),
        (
            Box::new(|i| i.conditions = vec!["flu".into()]),
            Field::Conditions,
            "unknown condition",
        ),
        (
            Box::new(|i| i.conditions = vec!["asthma".into(), "asthma".into()]),
            Field::Conditions,
            "more than once",
        ),
    ];
    for (edit, field, words) in table {
        let err = refused(edit);
        let message = err.to_string();
        assert_eq!(field_of(err), field, "{message}");
        assert!(message.starts_with(field.name()), "{message}");
        assert!(message.contains(words), "{message} should contain {words}");
    }
}

#[test]
fn profile_boundaries_130_years_and_today_are_accepted() {
    let mut i = input();
    i.date_of_birth = "1896-11-29".into();
    assert!(Profile::new(&i, today()).is_ok());
    i.date_of_birth = "2026-11-29".into();
    assert!(Profile::new(&i, today()).is_ok());
    i.income_minor = 0;
    i.conditions.clear();
    assert!(Profile::new(&i, today()).is_ok());
}

#[test]
fn profile_debug_prints_no_value() {
    let p = profile();
    let i = input();
    for text in [format!("{p:?}"), format!("{i:?}"), format!("{p:#?}")] {
        for secret in ["2840000", "28400", "1990", "nordhafen", "asthma", "EUR"] {
            assert!(!text.contains(secret), "{text} leaks {secret}");
        }
    }
}

#[test]
fn profile_serde_round_trip_and_strictness() {
    let p = profile();
    let json = serde_json::to_string(&p).unwrap();
    let back: Profile = serde_json::from_str(&json).unwrap();
    assert_eq!(back, p);
    let extra = json.replacen('{', "{\"ssn\":\"123\",", 1);
    assert!(serde_json::from_str::<Profile>(&extra).is_err());
    let bad_district = json.replace("nordhafen", "atlantis");
    assert!(serde_json::from_str::<Profile>(&bad_district).is_err());
}

#[test]
fn profile_amounts_typed_in_major_units() {
    use wallet_core::form::AmountError;
    use wallet_core::profile::{format_minor, parse_amount};
    for (text, minor) in [
        ("28400", 2_840_000),
        ("28,400", 2_840_000),
        ("28.400", 2_840_000),
        ("28.400,00", 2_840_000),
        ("28 400", 2_840_000),
        ("28\u{a0}400,00", 2_840_000),
        ("28\u{202f}400", 2_840_000),
        ("28'400.50", 2_840_050),
        ("28400 €", 2_840_000),
        ("€28,400", 2_840_000),
        ("€ 28.400,5", 2_840_050),
        ("28400 EUR", 2_840_000),
        ("eur 28400", 2_840_000),
        ("28,400.00", 2_840_000),
        ("28,400.5", 2_840_050),
        ("28400.05", 2_840_005),
        ("28400,05", 2_840_005),
        (" 0 ", 0),
        ("0,05", 5),
        ("1,234,567.89", 123_456_789),
        ("1.234.567,89", 123_456_789),
        ("1 234 567", 123_456_700),
    ] {
        assert_eq!(parse_amount(text, "EUR"), Ok(minor), "{text}");
    }
    for (text, error) in [
        ("", AmountError::Empty),
        ("  ", AmountError::Empty),
        ("abc", AmountError::NotANumber),
        ("1,23,456", AmountError::Grouping),
        ("12,3456", AmountError::Grouping),
        ("0,500", AmountError::Grouping),
        ("1.234,567", AmountError::Decimals),
        ("1 234,567", AmountError::Decimals),
        ("1.234.56", AmountError::Grouping),
        ("1,234.567.8", AmountError::Grouping),
        ("1.234 567", AmountError::Grouping),
        ("1.", AmountError::NotANumber),
        (",5", AmountError::NotANumber),
        ("+5", AmountError::NotANumber),
        ("1e5", AmountError::NotANumber),
        ("١٢", AmountError::NotANumber),
        ("-5", AmountError::Negative),
        ("−28.400", AmountError::Negative),
        ("$28,400", AmountError::OtherCurrency),
        ("28400 USD", AmountError::OtherCurrency),
        ("£1", AmountError::OtherCurrency),
        ("1000000000", AmountError::TooLarge),
        ("99999999999999999999999", AmountError::TooLarge),
    ] {
        assert_eq!(parse_amount(text, "EUR"), Err(error), "{text}");
        let sentence = error.to_string();
        assert!(
            sentence.ends_with('.') && !sentence.contains("income:"),
            "{sentence}"
        );
    }
    assert_eq!(parse_amount("$28,400", "USD"), Ok(2_840_000));
    assert_eq!(parse_amount("28.400 kr", "SEK"), Ok(2_840_000));
    assert_eq!(parse_amount("CHF 28'400.50", "CHF"), Ok(2_840_050));
    assert_eq!(format_minor(3_000_000), "30,000.00");
    assert_eq!(format_minor(5), "0.05");
    assert_eq!(format_minor(123_456_789), "1,234,567.89");
}
