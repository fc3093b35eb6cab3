//! The person's form: amounts in local notation (format with a known grouping, then parse =
//! identity) and one plain sentence per field in error.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use proptest::prelude::*;
use time::macros::date;
use wallet_core::form::{FormText, parse_amount, read_form};
use wallet_core::profile::MAX_INCOME_MINOR;
use wallet_core::{Field, ProfileInput};

/// Formats `minor` the way a locale writes it: `group` between thousands, `decimal` before the
/// cents; the cents are left out of a whole amount when `cents` is false.
fn local(minor: u64, group: &str, decimal: char, cents: bool) -> String {
    let digits = (minor / 100).to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push_str(group);
        }
        out.push(ch);
    }
    if cents || !minor.is_multiple_of(100) {
        out.push(decimal);
        out.push_str(&format!("{:02}", minor % 100));
    }
    out
}

const STYLES: &[(&str, char)] = &[
    (",", '.'),        // en
    (".", ','),        // de
    (" ", ','),        // fr with a plain space
    ("\u{a0}", ','),   // Intl's no-break space
    ("\u{202f}", ','), // Intl's narrow no-break space (fr)
    ("'", '.'),        // de-CH
    ("\u{2019}", '.'), // de-CH, typographic
    ("", '.'),         // no grouping
    ("", ','),
];

proptest! {
    #[test]
    fn a_locally_formatted_amount_reads_back(
        minor in 0..MAX_INCOME_MINOR,
        style in 0..STYLES.len(),
        cents in any::<bool>(),
        sign in 0..4usize,
    ) {
        let (group, decimal) = STYLES[style];
        let number = local(minor, group, decimal, cents);
        let text = match sign {
            0 => number.clone(),
            1 => format!("{number} €"),
            2 => format!("€{number}"),
            _ => format!("EUR {number}"),
        };
        prop_assert_eq!(parse_amount(&text, "EUR"), Ok(minor as i64), "{:?}", text);
    }

    #[test]
    fn whatever_is_typed_nothing_panics_and_a_read_amount_is_in_range(text in "\\PC{0,24}") {
        if let Ok(minor) = parse_amount(&text, "EUR") {
            prop_assert!(minor >= 0 && (minor as u64) < MAX_INCOME_MINOR);
        }
    }
}

// A field a later claim kind adds is left empty (unset), so this fixture needs no edit.
fn form(income: &str, dob: &str, conditions: &[String]) -> FormText {
    FormText::default()
        .with(Field::Income, income)
        .with(Field::Currency, "EUR")
        .with(Field::DateOfBirth, dob)
        .with(Field::District, "altstadt")
        .with(Field::Conditions, conditions.to_vec())
}

#[test]
fn a_good_form_reads_into_the_input() {
    let today = date!(2026 - 12 - 01);
    let conditions = vec!["pregnancy".to_owned()];
    let input = read_form(&form("28.400,00", "1990-02-28", &conditions), today).unwrap();
    assert_eq!(input.income_minor, 2_840_000);
    assert_eq!(input.date_of_birth, "1990-02-28");
    assert_eq!(input.conditions, conditions);
}

/// What the editor is filled with for an input reads back into the same input.
#[test]
fn the_form_of_an_input_reads_back_into_it() {
    let today = date!(2026 - 12 - 01);
    let input = ProfileInput::new(3_125_050, "CHF", "1990-02-28", "nordhafen", ["asthma"]);
    let form = FormText::of_input(&input);
    assert_eq!(form.text(Field::Income), "31,250.50");
    assert_eq!(form.codes(Field::Conditions), ["asthma"]);
    let again = read_form(&form, today).unwrap();
    assert_eq!(again.income_minor, input.income_minor);
    assert_eq!(again.currency, input.currency);
    assert_eq!(again.date_of_birth, input.date_of_birth);
    assert_eq!(again.district, input.district);
    assert_eq!(again.conditions, input.conditions);
}

#[test]
fn every_field_in_error_has_one_plain_sentence_in_form_order() {
    let today = date!(2026 - 12 - 01);
    let bad = vec!["not-a-condition".to_owned()];
    let problems = read_form(
        &FormText::default()
            .with(Field::Income, "28,4,00")
            .with(Field::Conditions, bad),
        today,
    )
    .unwrap_err();
    let fields: Vec<Field> = problems.iter().map(|(f, _)| *f).collect();
    assert_eq!(
        fields,
        [
            Field::Income,
            Field::Currency,
            Field::DateOfBirth,
            Field::District,
            Field::Conditions
        ]
    );
    for (_, sentence) in &problems {
        assert!(sentence.ends_with('.'), "{sentence}");
        for code in ["date_of_birth", "YYYY", "must be", "income:"] {
            assert!(!sentence.contains(code), "{sentence}");
        }
    }
    assert_eq!(problems[2].1, "Enter your date of birth.");

    let future = read_form(&form("28400", "2027-01-01", &[]), today).unwrap_err();
    assert_eq!(future.len(), 1);
    assert_eq!(future[0].0, Field::DateOfBirth);
    assert!(future[0].1.contains("future"));
    let old = read_form(&form("28400", "1890-01-01", &[]), today).unwrap_err();
    assert!(old[0].1.contains("130 years"));
    let twice = vec!["asthma".to_owned(), "asthma".to_owned()];
    assert_eq!(
        read_form(&form("28400", "1990-01-01", &twice), today).unwrap_err()[0].0,
        Field::Conditions
    );
    // Only the income is wrong: only the income is named.
    let one = read_form(&form("28.400,0,0", "1990-01-01", &[]), today).unwrap_err();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].0, Field::Income);
}
