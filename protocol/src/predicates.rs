//! The predicates issuers vouch for, and which wallet claim each one proves: the one place that
//! ties a claim (`income_below 30000.00 EUR`, `age_at_least 18`) to the selectively disclosable
//! SD-JWT VC claim that proves it (`income_below_30000`, `age_equal_or_over_18`).
//!
//! - **Income**: a ladder fixed by the issuer, `income_below_<amount>` for every
//!   [`INCOME_LADDER_STEP`] (major units of the currency) from [`INCOME_LADDER_MIN`] to
//!   [`INCOME_LADDER_MAX`]; `true` exactly when the annual income is strictly below the step. The
//!   currency is the credential's plain `currency` claim. A step equal to the wallet's income floor
//!   (5,000.00) is deliberate: an issuer-backed answer never narrows the income below it.
//! - **Age**: `age_equal_or_over_<n>` for each of [`AGE_THRESHOLDS`]; flat names, because
//!   [`crate::sd_jwt`] discloses top-level claims only.
//!
//! A claim off the ladder (a limit that is not a step, another currency, another age) has no
//! disclosure: the wallet answers it from what the person typed (self-asserted) or not at all.
//! Districts and conditions are never issuer-backed.

use wallet_core::{Attribute, Claim, Currency, Money};

/// The income ladder's lowest step, in major units.
pub const INCOME_LADDER_MIN: u64 = 10_000;
/// The income ladder's highest step, in major units.
pub const INCOME_LADDER_MAX: u64 = 200_000;
/// The distance between two steps, in major units.
pub const INCOME_LADDER_STEP: u64 = 5_000;
/// Minor units per major unit of every currency the ladder is used with.
pub const MINOR_PER_MAJOR: u64 = 100;

/// The ages the age credential speaks about.
pub const AGE_THRESHOLDS: [u8; 4] = [16, 18, 21, 65];

/// The plain (always visible) claim that names an income credential's currency.
pub const CURRENCY_CLAIM: &str = "currency";

/// Prefix of the income ladder's claim names.
pub const INCOME_PREFIX: &str = "income_below_";
/// Prefix of the age thresholds' claim names.
pub const AGE_PREFIX: &str = "age_equal_or_over_";

/// What an issuer vouches for, as its `attribute` (`GET /v1/issuer`) names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IssuerAttribute {
    /// Annual income: the ladder and the currency.
    Income,
    /// Date of birth: the age thresholds.
    BirthDate,
}

impl IssuerAttribute {
    /// Every attribute an issuer can vouch for.
    pub const ALL: [IssuerAttribute; 2] = [IssuerAttribute::Income, IssuerAttribute::BirthDate];

    /// The issuer attribute that proves claims about `attribute`; `None` for an attribute that
    /// is always the person's own word (a kind added to the catalogue starts there).
    pub fn for_attribute(attribute: Attribute) -> Option<Self> {
        Self::ALL.into_iter().find(|i| i.proves() == attribute)
    }

    /// As the issuer's metadata writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            IssuerAttribute::Income => "income",
            IssuerAttribute::BirthDate => "birth_date",
        }
    }

    /// Parses `income` or `birth_date`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "income" => Some(IssuerAttribute::Income),
            "birth_date" => Some(IssuerAttribute::BirthDate),
            _ => None,
        }
    }

    /// The wallet attribute whose claims it proves.
    pub const fn proves(self) -> Attribute {
        match self {
            IssuerAttribute::Income => Attribute::Income,
            IssuerAttribute::BirthDate => Attribute::Age,
        }
    }

    /// The default credential type.
    pub const fn default_vct(self) -> &'static str {
        match self {
            IssuerAttribute::Income => "https://tacit.example/vct/income",
            IssuerAttribute::BirthDate => "https://tacit.example/vct/age",
        }
    }

    /// Every disclosable claim name a credential of this attribute carries, in issuer order.
    pub fn claim_names(self) -> Vec<String> {
        match self {
            IssuerAttribute::Income => income_ladder().map(income_claim_name).collect(),
            IssuerAttribute::BirthDate => AGE_THRESHOLDS.into_iter().map(age_claim_name).collect(),
        }
    }
}

/// The ladder's steps, in major units, ascending.
pub fn income_ladder() -> impl Iterator<Item = u64> {
    (INCOME_LADDER_MIN..=INCOME_LADDER_MAX).step_by(INCOME_LADDER_STEP as usize)
}

/// The claim name for a step, e.g. `income_below_30000`.
pub fn income_claim_name(step_major: u64) -> String {
    format!("{INCOME_PREFIX}{step_major}")
}

/// The claim name for an age threshold, e.g. `age_equal_or_over_18`.
pub fn age_claim_name(years: u8) -> String {
    format!("{AGE_PREFIX}{years}")
}

/// Whether `step_major` is a step of the ladder.
pub fn is_income_step(step_major: u64) -> bool {
    (INCOME_LADDER_MIN..=INCOME_LADDER_MAX).contains(&step_major)
        && (step_major - INCOME_LADDER_MIN).is_multiple_of(INCOME_LADDER_STEP)
}

/// The one disclosure that proves `claim`, for an issuer whose credential is in `currency` (income
/// credentials; `None` for others): `income_below_<step>` when the claim's limit is exactly a
/// ladder step in that currency, `age_equal_or_over_<n>` at a threshold, else `None`.
pub fn disclosure_for(claim: &Claim, currency: Option<&Currency>) -> Option<String> {
    match claim {
        Claim::IncomeBelow { limit } => {
            if Some(&limit.currency) != currency
                || !limit.amount_minor.is_multiple_of(MINOR_PER_MAJOR)
            {
                return None;
            }
            let major = limit.amount_minor / MINOR_PER_MAJOR;
            is_income_step(major).then(|| income_claim_name(major))
        }
        Claim::AgeAtLeast { years } => AGE_THRESHOLDS
            .contains(years)
            .then(|| age_claim_name(*years)),
        // No issuer attribute proves the other kinds (see [`IssuerAttribute::for_attribute`]):
        // they are the person's own word.
        _ => None,
    }
}

/// The claim a disclosure proves (the inverse of [`disclosure_for`]); `None` for a name that is
/// not a predicate, or an income step without a currency.
pub fn claim_for(name: &str, currency: Option<&Currency>) -> Option<Claim> {
    if let Some(step) = name.strip_prefix(INCOME_PREFIX) {
        let major: u64 = canonical_number(step)?;
        if !is_income_step(major) {
            return None;
        }
        let limit = Money {
            amount_minor: major.checked_mul(MINOR_PER_MAJOR)?,
            currency: *currency?,
        };
        return Claim::income_below(limit).ok();
    }
    if let Some(years) = name.strip_prefix(AGE_PREFIX) {
        let years: u8 = canonical_number(years)?;
        if !AGE_THRESHOLDS.contains(&years) {
            return None;
        }
        return Claim::age_at_least(years).ok();
    }
    None
}

/// For a refusal: which thresholds of `attribute` an issuer can prove, in words.
pub fn provable_thresholds(attribute: Attribute) -> &'static str {
    match IssuerAttribute::for_attribute(attribute) {
        Some(IssuerAttribute::Income) => {
            "income_below limits that are whole multiples of 5,000.00 from 10,000.00 to \
             200,000.00 in the credential's currency"
        }
        Some(IssuerAttribute::BirthDate) => "age_at_least 16, 18, 21 or 65",
        None => "none: this is always the person's own word (self-asserted)",
    }
}

/// A decimal with no sign and no leading zero.
fn canonical_number<T: core::str::FromStr>(text: &str) -> Option<T> {
    let ok = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    if ok { text.parse().ok() } else { None }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn eur() -> Currency {
        Currency::parse("EUR").unwrap()
    }

    fn income(minor: u64, currency: &str) -> Claim {
        Claim::income_below(Money {
            amount_minor: minor,
            currency: Currency::parse(currency).unwrap(),
        })
        .unwrap()
    }

    #[test]
    fn the_ladder_has_39_steps_and_every_step_round_trips() {
        let names = IssuerAttribute::Income.claim_names();
        assert_eq!(names.len(), 39);
        assert_eq!(names[0], "income_below_10000");
        assert_eq!(names[38], "income_below_200000");
        for name in names {
            let claim = claim_for(&name, Some(&eur())).unwrap();
            assert_eq!(disclosure_for(&claim, Some(&eur())), Some(name));
        }
        for name in IssuerAttribute::BirthDate.claim_names() {
            let claim = claim_for(&name, None).unwrap();
            assert_eq!(disclosure_for(&claim, None), Some(name));
        }
    }

    #[test]
    fn only_exact_steps_in_the_credentials_currency_are_provable() {
        assert_eq!(
            disclosure_for(&income(3_000_000, "EUR"), Some(&eur())).as_deref(),
            Some("income_below_30000")
        );
        // Off the ladder, between steps, below and above it, or with cents.
        for minor in [
            2_900_000, 3_000_001, 500_000, 100_000, 20_500_000, 3_000_050,
        ] {
            assert_eq!(disclosure_for(&income(minor, "EUR"), Some(&eur())), None);
        }
        // Another currency, or a credential without one.
        assert_eq!(
            disclosure_for(&income(3_000_000, "USD"), Some(&eur())),
            None
        );
        assert_eq!(disclosure_for(&income(3_000_000, "EUR"), None), None);
        for years in [1, 15, 17, 19, 64, 66, 130] {
            let claim = Claim::age_at_least(years).unwrap();
            assert_eq!(disclosure_for(&claim, None), None, "{years}");
        }
    }

    #[test]
    fn names_that_are_not_predicates_prove_nothing() {
        for name in [
            "income_below_30001",
            "income_below_030000",
            "income_below_5000",
            "income_below_205000",
            "income_below_",
            "income_below_+30000",
            "age_equal_or_over_17",
            "age_equal_or_over_018",
            "currency",
            "age_equal_or_over_99999999999999999999",
        ] {
            assert_eq!(claim_for(name, Some(&eur())), None, "{name}");
        }
        assert_eq!(claim_for("income_below_30000", None), None);
    }

    #[test]
    fn attributes_parse_and_map() {
        assert_eq!(
            IssuerAttribute::parse("income").map(IssuerAttribute::proves),
            Some(Attribute::Income)
        );
        assert_eq!(
            IssuerAttribute::parse("birth_date").map(IssuerAttribute::proves),
            Some(Attribute::Age)
        );
        assert_eq!(IssuerAttribute::parse("district"), None);
    }
}
