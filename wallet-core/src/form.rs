//! The person's form, read in their own notation: amounts as people write them ("28.400,00",
//! "28 400", "28400 €", "€28,400", "28,400.00") and one plain sentence per field in error.
//!
//! # How an amount is read
//! - Around the number: spaces, the currency's code ("EUR") or sign ("€") before or after it.
//! - Thousands may be grouped in threes with `.`, `,`, a space (also the no-break and thin
//!   spaces browsers and Intl produce) or an apostrophe (`28'400`); the first group has one to
//!   three digits and does not start with 0, every other group has three.
//! - When both `.` and `,` appear, the last one is the decimal separator.
//! - A lone `.` or `,` followed by one or two digits is the decimal separator ("28400,5",
//!   "28400.05"); followed by exactly three digits it groups thousands ("28,400" and "28.400"
//!   are both 28,400). This is not a guess: an amount has at most two decimals in every currency
//!   the wallet accepts, so three digits after a separator cannot be decimals. A lone separator
//!   followed by any other number of digits is refused.
//! - At most two decimals; no sign other than a leading minus, which is refused with its own
//!   sentence (an income is not negative); digits are ASCII.
//!
//! Amounts are integer hundredths (wallet-core's minor units) for every currency.
//!
//! # The form's table
//! [`Field::FORM`] lists the form's fields in order; each says its element id, its label and its
//! [`Control`], which is all the wallet page needs to draw it, and [`FormText`] carries what is
//! typed keyed by [`Field`]. Adding a field to the form is a variant of [`Field`] and its arms
//! here (and its place in the profile): the page draws, fills, reads and empties it from this
//! table.

use std::collections::BTreeMap;

use time::Date;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::catalogue::{CONDITIONS, CURRENCIES, DISTRICTS, Entry};
use crate::profile::{
    ConditionCode, Currency, DistrictId, MAX_INCOME_MINOR, ProfileInput, earliest_birth_date,
    format_minor, parse_date,
};

/// A profile field, named in validation errors and drawn by the profile form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    Income,
    Currency,
    DateOfBirth,
    District,
    Conditions,
    PreferredLanguage,
}

impl Field {
    /// The profile form's fields, in the order the person meets them. A test checks that this
    /// is exactly the [`crate::Attribute::form_fields`] of every attribute, in order.
    pub const FORM: [Field; 5] = [
        Field::Income,
        Field::Currency,
        Field::DateOfBirth,
        Field::District,
        Field::Conditions,
    ];

    /// The id of the form element that edits this field (`f-income`); `None` for what the
    /// form does not show.
    pub const fn input_id(self) -> Option<&'static str> {
        match self {
            Field::Income => Some("f-income"),
            Field::Currency => Some("f-currency"),
            Field::DateOfBirth => Some("f-dob"),
            Field::District => Some("f-district"),
            Field::Conditions => Some("f-conditions"),
            Field::PreferredLanguage => None,
        }
    }

    /// The field's name as the page and the tools spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Field::Income => "income",
            Field::Currency => "currency",
            Field::DateOfBirth => "date_of_birth",
            Field::District => "district",
            Field::Conditions => "conditions",
            Field::PreferredLanguage => "preferred_language",
        }
    }

    /// The field's label on the form, for the person.
    pub const fn label(self) -> &'static str {
        match self {
            Field::Income => "Yearly income",
            Field::Currency => "Currency",
            Field::DateOfBirth => "Date of birth",
            Field::District => "District",
            Field::Conditions => "Medical conditions",
            Field::PreferredLanguage => "Preferred language",
        }
    }

    /// How the form draws the field; `None` for what the form does not show (exactly the
    /// fields without an [`Field::input_id`]).
    pub const fn control(self) -> Option<Control> {
        match self {
            Field::Income => Some(Control::Amount {
                placeholder: "e.g. 31,250.00",
            }),
            Field::Currency => Some(Control::Choice {
                options: &CURRENCY_OPTIONS,
                prompt: "Currency",
                default: Some("EUR"),
            }),
            Field::DateOfBirth => Some(Control::Date),
            Field::District => Some(Control::Choice {
                options: DISTRICTS,
                prompt: "Choose your district",
                default: None,
            }),
            Field::Conditions => Some(Control::Checks(CONDITIONS)),
            Field::PreferredLanguage => None,
        }
    }

    /// What the form shows in this field for `input` (the editor's filling): the income in
    /// the wallet's own notation ([`format_minor`]), the other fields as stored.
    pub fn text_of(self, input: &ProfileInput) -> FieldText {
        match self {
            Field::Income => FieldText::Text(
                u64::try_from(input.income_minor)
                    .map(format_minor)
                    .unwrap_or_default(),
            ),
            Field::Currency => FieldText::Text(input.currency.clone()),
            Field::DateOfBirth => FieldText::Text(input.date_of_birth.clone()),
            Field::District => FieldText::Text(input.district.clone()),
            Field::Conditions => FieldText::Codes(input.conditions.clone()),
            Field::PreferredLanguage => FieldText::default(),
        }
    }
}

impl core::fmt::Display for Field {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the form draws a field. The page knows how to draw each kind, never a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// An amount typed in the person's notation (read by [`parse_amount`]): a text box with a
    /// decimal keyboard and no autocompletion, showing `placeholder` while empty.
    Amount { placeholder: &'static str },
    /// One of `options` (the value is the entry's code), or `prompt`, the empty first choice;
    /// a new profile's form starts at `default`.
    Choice {
        options: &'static [Entry],
        prompt: &'static str,
        default: Option<&'static str>,
    },
    /// A calendar date (`<input type=date>`: `YYYY-MM-DD`, or empty).
    Date,
    /// Any number of the entries, one checkbox each (the value is the list of codes ticked).
    Checks(&'static [Entry]),
}

/// The currencies as choices: each code is its own label.
const CURRENCY_OPTIONS: [Entry; CURRENCIES.len()] = {
    let mut out = [Entry {
        code: "",
        label: "",
    }; CURRENCIES.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = Entry {
            code: CURRENCIES[i],
            label: CURRENCIES[i],
        };
        i += 1;
    }
    out
};

/// Why an amount was not read. Its `Display` is a sentence for the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountError {
    Empty,
    NotANumber,
    OtherCurrency,
    Grouping,
    Decimals,
    Negative,
    TooLarge,
}

impl AmountError {
    /// The sentence shown next to the field.
    pub const fn sentence(self) -> &'static str {
        match self {
            AmountError::Empty => "Enter your yearly income, for example 28400.",
            AmountError::NotANumber => {
                "Enter your yearly income as a number, for example 28400 or 28.400,00."
            }
            AmountError::OtherCurrency => {
                "That amount names another currency. Enter the number only, and choose its \
                 currency in the next field."
            }
            AmountError::Grouping => {
                "The thousands look wrong. Group the digits in threes (28.400 or 28,400), or \
                 leave the separators out (28400)."
            }
            AmountError::Decimals => "Use at most two decimals, for example 28400,50.",
            AmountError::Negative => "Your income cannot be below zero.",
            AmountError::TooLarge => "That amount is too large for the wallet.",
        }
    }
}

impl core::fmt::Display for AmountError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.sentence())
    }
}

impl std::error::Error for AmountError {}

/// The signs and codes that may stand beside an amount in `currency`.
fn markers(currency: &str) -> &'static [&'static str] {
    match currency {
        "EUR" => &["€", "EUR", "Euro", "Euros"],
        "USD" => &["US$", "$", "USD"],
        "GBP" => &["£", "GBP"],
        "JPY" => &["¥", "円", "JPY"],
        "CHF" => &["CHF", "Fr.", "Fr"],
        "SEK" => &["SEK", "kr.", "kr"],
        "NOK" => &["NOK", "kr.", "kr"],
        "DKK" => &["DKK", "kr.", "kr"],
        "PLN" => &["PLN", "zł"],
        "CZK" => &["CZK", "Kč"],
        "HUF" => &["HUF", "Ft"],
        "RON" => &["RON", "lei"],
        "AUD" => &["AU$", "A$", "$", "AUD"],
        "CAD" => &["CA$", "C$", "$", "CAD"],
        "NZD" => &["NZ$", "$", "NZD"],
        _ => &[],
    }
}

/// Removes one marker of `currency` at the start or the end of `text` (case-insensitive).
fn strip_marker<'a>(text: &'a str, currency: &str) -> &'a str {
    for marker in markers(currency) {
        let n = marker.len();
        if text.len() >= n && text.is_char_boundary(n) && text[..n].eq_ignore_ascii_case(marker) {
            return text[n..].trim();
        }
        let at = text.len().saturating_sub(n);
        if text.len() >= n && text.is_char_boundary(at) && text[at..].eq_ignore_ascii_case(marker) {
            return text[..at].trim();
        }
    }
    text
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\u{a0}' | '\u{202f}' | '\u{2009}')
}

fn is_group_only(c: char) -> bool {
    is_space(c) || matches!(c, '\'' | '\u{2019}')
}

/// Reads an amount typed in major units of `currency` into minor units (hundredths). See the
/// module docs for what is accepted.
pub fn parse_amount(text: &str, currency: &str) -> Result<i64, AmountError> {
    let mut t = text.trim();
    if t.is_empty() {
        return Err(AmountError::Empty);
    }
    t = strip_marker(t, currency);
    let negative = match t.strip_prefix('-').or_else(|| t.strip_prefix('\u{2212}')) {
        Some(rest) => {
            t = rest.trim();
            true
        }
        None => false,
    };
    t = strip_marker(t, currency);
    if t.is_empty() {
        return Err(AmountError::NotANumber);
    }
    if let Some(bad) = t
        .chars()
        .find(|&c| !(c.is_ascii_digit() || c == '.' || c == ',' || is_group_only(c)))
    {
        let other = CURRENCIES.iter().any(|code| {
            *code != currency
                && (t.to_ascii_uppercase().contains(code)
                    || markers(code).iter().any(|m| !m.is_ascii() && t.contains(m)))
        }) || matches!(bad, '$' | '€' | '£' | '¥');
        return Err(if other {
            AmountError::OtherCurrency
        } else {
            AmountError::NotANumber
        });
    }
    let (whole, frac) = split_decimal(t)?;
    let major = read_whole(whole)?;
    if frac.len() > 2 {
        return Err(AmountError::Decimals);
    }
    let cents: i64 = match frac.len() {
        0 => 0,
        1 => i64::from(frac.as_bytes()[0] - b'0') * 10,
        _ => frac.parse().map_err(|_| AmountError::NotANumber)?,
    };
    let minor = major
        .checked_mul(100)
        .and_then(|m| m.checked_add(cents))
        .filter(|m| u64::try_from(*m).is_ok_and(|m| m < MAX_INCOME_MINOR))
        .ok_or(AmountError::TooLarge)?;
    if negative {
        return Err(AmountError::Negative);
    }
    Ok(minor)
}

/// Splits at the decimal separator, if there is one (see the module docs).
fn split_decimal(t: &str) -> Result<(&str, &str), AmountError> {
    let dots = t.matches('.').count();
    let commas = t.matches(',').count();
    let last = t.rfind(['.', ',']);
    let Some(at) = last else {
        return Ok((t, ""));
    };
    let (whole, frac) = (&t[..at], &t[at + 1..]);
    let decimal = if dots > 0 && commas > 0 {
        // Both: the last is the decimal separator, and it appears once.
        let sep = &t[at..at + 1];
        if t.matches(sep).count() > 1 {
            return Err(AmountError::Grouping);
        }
        true
    } else if dots + commas > 1 {
        // One kind, several times: grouping only.
        false
    } else if whole.chars().any(is_group_only) {
        // Already grouped by spaces or apostrophes: the lone `.`/`,` is the decimal one.
        true
    } else {
        match frac.len() {
            1 | 2 => true,
            3 => false,
            0 => return Err(AmountError::NotANumber),
            _ => return Err(AmountError::Grouping),
        }
    };
    if !decimal {
        return Ok((t, ""));
    }
    if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(AmountError::NotANumber);
    }
    Ok((whole, frac))
}

/// The whole part: plain digits, or digits grouped in threes by one kind of separator.
fn read_whole(whole: &str) -> Result<i64, AmountError> {
    if whole.is_empty() {
        return Err(AmountError::NotANumber);
    }
    let seps: Vec<char> = whole.chars().filter(|c| !c.is_ascii_digit()).collect();
    let digits: String = whole.chars().filter(char::is_ascii_digit).collect();
    if let Some(&first) = seps.first() {
        // One kind of separator: spaces of any width count as one kind.
        let same = |c: char| c == first || (is_space(c) && is_space(first));
        if !seps.iter().all(|&c| same(c)) {
            return Err(AmountError::Grouping);
        }
        let groups: Vec<&str> = whole.split(|c: char| !c.is_ascii_digit()).collect();
        let ok = groups
            .first()
            .is_some_and(|g| (1..=3).contains(&g.len()) && !g.starts_with('0'))
            && groups.iter().skip(1).all(|g| g.len() == 3);
        if !ok {
            return Err(AmountError::Grouping);
        }
    }
    if digits.len() > 15 {
        return Err(AmountError::TooLarge);
    }
    digits.parse().map_err(|_| AmountError::NotANumber)
}

/// What one form field holds: typed or chosen text, or the codes ticked in a [`Control::Checks`].
/// Wiped when dropped, as [`ProfileInput`] is.
#[derive(Debug, Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub enum FieldText {
    Text(String),
    Codes(Vec<String>),
}

impl Default for FieldText {
    fn default() -> Self {
        FieldText::Text(String::new())
    }
}

impl From<&str> for FieldText {
    fn from(text: &str) -> Self {
        FieldText::Text(text.to_owned())
    }
}

impl From<String> for FieldText {
    fn from(text: String) -> Self {
        FieldText::Text(text)
    }
}

impl From<Vec<String>> for FieldText {
    fn from(codes: Vec<String>) -> Self {
        FieldText::Codes(codes)
    }
}

/// What the person typed into the profile form, keyed by [`Field`]. A field not set is empty
/// (no text, no code ticked); its default is the empty form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FormText {
    fields: BTreeMap<Field, FieldText>,
}

impl FormText {
    /// Every field of [`Field::FORM`], each from `text`.
    pub fn from_fn(mut text: impl FnMut(Field) -> FieldText) -> Self {
        Self {
            fields: Field::FORM.into_iter().map(|f| (f, text(f))).collect(),
        }
    }

    /// What the form shows for `input`: the inverse of [`read_form`] (see [`Field::text_of`]).
    pub fn of_input(input: &ProfileInput) -> Self {
        Self::from_fn(|field| field.text_of(input))
    }

    /// The form with `field` set to `text`.
    #[must_use]
    pub fn with(mut self, field: Field, text: impl Into<FieldText>) -> Self {
        self.fields.insert(field, text.into());
        self
    }

    /// The field's text; empty when unset or a list of codes.
    pub fn text(&self, field: Field) -> &str {
        match self.fields.get(&field) {
            Some(FieldText::Text(text)) => text,
            _ => "",
        }
    }

    /// The codes ticked in the field; none when unset or text.
    pub fn codes(&self, field: Field) -> &[String] {
        match self.fields.get(&field) {
            Some(FieldText::Codes(codes)) => codes,
            _ => &[],
        }
    }
}

/// Reads the form into a [`ProfileInput`], or says, for every field in error, one sentence for
/// the person (never a field name in code or a format string), in the form's order.
pub fn read_form(form: &FormText, today: Date) -> Result<ProfileInput, Vec<(Field, String)>> {
    let mut problems: Vec<(Field, String)> = Vec::new();
    let mut problem = |field: Field, text: &str| problems.push((field, text.to_owned()));
    let (currency, date_of_birth) = (form.text(Field::Currency), form.text(Field::DateOfBirth));
    let (district, conditions) = (form.text(Field::District), form.codes(Field::Conditions));
    let currency_ok = Currency::parse(currency).is_ok();
    let income = parse_amount(form.text(Field::Income), currency);
    if let Err(e) = income {
        problem(Field::Income, e.sentence());
    }
    if !currency_ok {
        problem(Field::Currency, "Choose the currency of your income.");
    }
    match parse_date(date_of_birth.trim()) {
        Err(_) => problem(Field::DateOfBirth, "Enter your date of birth."),
        Ok(date) if date > today => problem(
            Field::DateOfBirth,
            "Your date of birth cannot be in the future.",
        ),
        Ok(date) if date < earliest_birth_date(today) => problem(
            Field::DateOfBirth,
            "Enter a date of birth less than 130 years ago.",
        ),
        Ok(_) => {}
    }
    if DistrictId::parse(district).is_err() {
        problem(Field::District, "Choose your district.");
    }
    let mut seen = std::collections::BTreeSet::new();
    if !conditions
        .iter()
        .all(|c| ConditionCode::parse(c).is_ok() && seen.insert(c.as_str()))
    {
        problem(Field::Conditions, "Choose conditions from the list only.");
    }
    match income {
        Ok(income_minor) if problems.is_empty() => Ok(ProfileInput {
            income_minor,
            currency: currency.to_owned(),
            date_of_birth: date_of_birth.trim().to_owned(),
            district: district.to_owned(),
            conditions: conditions.to_vec(),
        }),
        _ => Err(problems),
    }
}
