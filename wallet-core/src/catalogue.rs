//! The published catalogues: currencies, districts and medical condition codes.
//!
//! Sites name districts and conditions by these codes in their policies; the profile stores the same codes.

/// A catalogue entry: a stable code and a label for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub code: &'static str,
    pub label: &'static str,
}

const fn e(code: &'static str, label: &'static str) -> Entry {
    Entry { code, label }
}

/// ISO 4217 codes the wallet accepts for income.
pub const CURRENCIES: &[&str] = &[
    "AUD", "CAD", "CHF", "CZK", "DKK", "EUR", "GBP", "HUF", "JPY", "NOK", "NZD", "PLN", "RON",
    "SEK", "USD",
];

/// Districts of the demo city. Twelve, so that a "one of three" question leaves enough candidates.
pub const DISTRICTS: &[Entry] = &[
    e("altstadt", "Altstadt"),
    e("nordhafen", "Nordhafen"),
    e("suedpark", "Südpark"),
    e("westend", "Westend"),
    e("ostkreuz", "Ostkreuz"),
    e("lindenau", "Lindenau"),
    e("bergfeld", "Bergfeld"),
    e("seeufer", "Seeufer"),
    e("muehlbach", "Mühlbach"),
    e("kronwald", "Kronwald"),
    e("talheim", "Talheim"),
    e("rosental", "Rosental"),
];

/// Medical condition codes relevant to restricted medicines.
pub const CONDITIONS: &[Entry] = &[
    e("anticoagulant-therapy", "Anticoagulant therapy"),
    e("liver-disease", "Liver disease"),
    e("kidney-disease", "Kidney disease"),
    e("pregnancy", "Pregnancy"),
    e("asthma", "Asthma"),
    e("diabetes", "Diabetes"),
    e("hypertension", "Hypertension"),
    e("epilepsy", "Epilepsy"),
    e("heart-failure", "Heart failure"),
    e("peptic-ulcer", "Peptic ulcer"),
];

/// Whether `code` is a district in the catalogue.
pub fn is_district(code: &str) -> bool {
    DISTRICTS.iter().any(|d| d.code == code)
}

/// Whether `code` is a condition in the catalogue.
pub fn is_condition(code: &str) -> bool {
    CONDITIONS.iter().any(|c| c.code == code)
}

/// Whether `code` is an accepted ISO 4217 currency.
pub fn is_currency(code: &str) -> bool {
    CURRENCIES.contains(&code)
}

/// The display label of `code` in `entries` ("Altstadt"); the code itself if it is not there.
pub fn label<'a>(entries: &'a [Entry], code: &'a str) -> &'a str {
    entries
        .iter()
        .find(|e| e.code == code)
        .map_or(code, |e| e.label)
}

/// "A", "A or B", "A, B or C".
pub fn list_or<S: AsRef<str>>(items: &[S]) -> String {
    list(items, "or")
}

/// "A", "A and B", "A, B and C".
pub fn list_and<S: AsRef<str>>(items: &[S]) -> String {
    list(items, "and")
}

fn list<S: AsRef<str>>(items: &[S], word: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_owned(),
        [init @ .., last] => format!(
            "{} {word} {}",
            init.iter()
                .map(AsRef::as_ref)
                .collect::<Vec<_>>()
                .join(", "),
            last.as_ref()
        ),
    }
}
