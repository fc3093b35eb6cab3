//! Claims: yes/no questions with public parameters from a site's policy, and their evaluation.
//!
//! A claim carries no value from the profile. Evaluating one yields the claim and a boolean,
//! nothing else.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use time::Date;

use crate::catalogue::{CONDITIONS, DISTRICTS, label, list_or};
use crate::error::{ClaimError, Field};
use crate::ledger::Floors;
use crate::profile::{ConditionCode, Currency, DistrictId, MAX_AGE_YEARS, MAX_INCOME_MINOR, Money};
use crate::profile::{Profile, years_before};

/// Declares a fieldless enum and its `ALL` array from one list, so a variant cannot be left out
/// of `ALL` (and so of every table, schema, test and form that iterates it).
macro_rules! listed_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident,)+ }
     $(#[$all_meta:meta])*) => {
        $(#[$meta])*
        pub enum $name { $($(#[$vmeta])* $variant,)+ }

        impl $name {
            $(#[$all_meta])*
            pub const ALL: [$name; [$($name::$variant,)+].len()] = [$($name::$variant,)+];
        }
    };
}

listed_enum! {
    /// The profile attribute a claim is about.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Attribute {
        Income,
        Age,
        District,
        Conditions,
    }
    /// Every attribute, in declaration order.
}

impl Attribute {
    pub const fn name(self) -> &'static str {
        match self {
            Attribute::Income => "income",
            Attribute::Age => "age",
            Attribute::District => "district",
            Attribute::Conditions => "conditions",
        }
    }

    /// The profile field that holds this attribute's raw value: what a raw-value tool would
    /// leak, and what the absence proof checks no tool exposes.
    pub const fn raw_field(self) -> Field {
        match self {
            Attribute::Income => Field::Income,
            Attribute::Age => Field::DateOfBirth,
            Attribute::District => Field::District,
            Attribute::Conditions => Field::Conditions,
        }
    }

    /// The name a raw-value tool for this attribute would plausibly have (`get_income`): the
    /// absence proof's forbidden name.
    pub const fn raw_getter(self) -> &'static str {
        match self {
            Attribute::Income => "get_income",
            Attribute::Age => "get_date_of_birth",
            Attribute::District => "get_district",
            Attribute::Conditions => "get_conditions",
        }
    }

    /// What a claim about this attribute is about, in the person's words: "your income".
    pub const fn topic(self) -> &'static str {
        match self {
            Attribute::Income => "your income",
            Attribute::Age => "your age",
            Attribute::District => "where you live",
            Attribute::Conditions => "your health conditions",
        }
    }

    /// The form fields the person fills in for this attribute, in the form's order.
    pub const fn form_fields(self) -> &'static [Field] {
        match self {
            Attribute::Income => &[Field::Income, Field::Currency],
            Attribute::Age => &[Field::DateOfBirth],
            Attribute::District => &[Field::District],
            Attribute::Conditions => &[Field::Conditions],
        }
    }
}

listed_enum! {
    /// The claim catalogue: every kind of question a site may ask, with what each touches.
    /// Adding a kind means adding a variant here (which lists it in [`ClaimKind::ALL`]) and a
    /// [`Claim`] variant; every `match` on either is exhaustive (a forgotten arm does not
    /// compile) and the tests feed every kind's [`ClaimKind::example`] through [`Claim`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum ClaimKind {
        IncomeBelow,
        AgeAtLeast,
        ResidesIn,
        HasNoneOf,
    }
    /// Every kind, in the order the wallet lists them.
}

impl ClaimKind {
    /// The kind as spelled in JSON and in tool names (`income_below`).
    pub const fn name(self) -> &'static str {
        match self {
            ClaimKind::IncomeBelow => "income_below",
            ClaimKind::AgeAtLeast => "age_at_least",
            ClaimKind::ResidesIn => "resides_in",
            ClaimKind::HasNoneOf => "has_none_of",
        }
    }

    /// The kind named `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The attribute a claim of this kind is about.
    pub const fn attribute(self) -> Attribute {
        match self {
            ClaimKind::IncomeBelow => Attribute::Income,
            ClaimKind::AgeAtLeast => Attribute::Age,
            ClaimKind::ResidesIn => Attribute::District,
            ClaimKind::HasNoneOf => Attribute::Conditions,
        }
    }

    /// The JSON shape of a claim of this kind, for agents (the `request_claims` schema prose).
    pub const fn shape(self) -> &'static str {
        match self {
            ClaimKind::IncomeBelow => "{kind:'income_below', limit:{amount_minor, currency}}",
            ClaimKind::AgeAtLeast => "{kind:'age_at_least', years}",
            ClaimKind::ResidesIn => "{kind:'resides_in', districts:[codes]}",
            ClaimKind::HasNoneOf => "{kind:'has_none_of', conditions:[codes]}",
        }
    }

    /// A valid claim of this kind as JSON: the schema's example, and what the tests feed through
    /// [`Claim`]'s deserialiser for every kind.
    pub const fn example(self) -> &'static str {
        match self {
            ClaimKind::IncomeBelow => {
                r#"{"kind":"income_below","limit":{"amount_minor":100,"currency":"EUR"}}"#
            }
            ClaimKind::AgeAtLeast => r#"{"kind":"age_at_least","years":18}"#,
            ClaimKind::ResidesIn => r#"{"kind":"resides_in","districts":["altstadt"]}"#,
            ClaimKind::HasNoneOf => r#"{"kind":"has_none_of","conditions":["asthma"]}"#,
        }
    }

    /// One sentence listing every kind's shape: "One of {...}, {...}".
    pub fn shapes_prose() -> String {
        let shapes: Vec<&str> = Self::ALL.iter().map(|k| k.shape()).collect();
        format!("One of {}", shapes.join(", "))
    }
}

impl core::fmt::Display for ClaimKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Formats an amount for people: the wallet page passes one built on `Intl.NumberFormat`, a
/// relying site its own, tests a plain one. No minor-unit number reaches a person.
pub type MoneyWords<'a> = &'a dyn Fn(&Money) -> String;

/// How a claim reads to people, from its public parameters only: amounts through the caller's
/// [`MoneyWords`], districts and conditions by their catalogue labels (never a code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wording {
    /// To the person, as a question: "Is your yearly income below 30,000 €?".
    pub question: String,
    /// To the person, after "whether": "your yearly income is below 30,000 €".
    pub whether: String,
    /// As a relying site lists what it requires: "household income below 30,000.00 EUR".
    pub requirement: String,
}

/// A question a site may ask. Every parameter is public: it comes from the site's policy.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", try_from = "ClaimRepr")]
pub enum Claim {
    /// Annual income strictly below `limit`, in the same currency as the profile.
    IncomeBelow { limit: Money },
    /// At least `years` old on the evaluation date.
    AgeAtLeast { years: u8 },
    /// Resides in one of `districts`.
    ResidesIn { districts: BTreeSet<DistrictId> },
    /// Has none of `conditions`.
    HasNoneOf { conditions: BTreeSet<ConditionCode> },
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum ClaimRepr {
    IncomeBelow { limit: Money },
    AgeAtLeast { years: u8 },
    ResidesIn { districts: Vec<DistrictId> },
    HasNoneOf { conditions: Vec<ConditionCode> },
}

impl TryFrom<ClaimRepr> for Claim {
    type Error = ClaimError;
    fn try_from(repr: ClaimRepr) -> Result<Self, ClaimError> {
        match repr {
            ClaimRepr::IncomeBelow { limit } => Claim::income_below(limit),
            ClaimRepr::AgeAtLeast { years } => Claim::age_at_least(years),
            ClaimRepr::ResidesIn { districts } => Claim::resides_in(districts),
            ClaimRepr::HasNoneOf { conditions } => Claim::has_none_of(conditions),
        }
    }
}

impl Claim {
    /// Income strictly below `limit`; the limit must be positive and below the income ceiling.
    pub fn income_below(limit: Money) -> Result<Self, ClaimError> {
        if limit.amount_minor == 0 || limit.amount_minor > MAX_INCOME_MINOR {
            return Err(ClaimError::Invalid(
                "income limit must be between 1 and 100000000000 minor units",
            ));
        }
        Ok(Claim::IncomeBelow { limit })
    }

    /// At least `years` old; between 1 and 130.
    pub fn age_at_least(years: u8) -> Result<Self, ClaimError> {
        if years == 0 || years > MAX_AGE_YEARS {
            return Err(ClaimError::Invalid(
                "age threshold must be between 1 and 130 years",
            ));
        }
        Ok(Claim::AgeAtLeast { years })
    }

    /// Resides in one of the given districts; at least one, no repeats.
    pub fn resides_in(districts: impl IntoIterator<Item = DistrictId>) -> Result<Self, ClaimError> {
        let list: Vec<_> = districts.into_iter().collect();
        let set: BTreeSet<_> = list.iter().cloned().collect();
        if set.is_empty() {
            return Err(ClaimError::Invalid(
                "districts must name at least one district",
            ));
        }
        if set.len() != list.len() {
            return Err(ClaimError::Invalid(
                "districts lists a district more than once",
            ));
        }
        Ok(Claim::ResidesIn { districts: set })
    }

    /// Has none of the given conditions; at least one, no repeats.
    pub fn has_none_of(
        conditions: impl IntoIterator<Item = ConditionCode>,
    ) -> Result<Self, ClaimError> {
        let list: Vec<_> = conditions.into_iter().collect();
        let set: BTreeSet<_> = list.iter().cloned().collect();
        if set.is_empty() {
            return Err(ClaimError::Invalid(
                "conditions must name at least one condition",
            ));
        }
        if set.len() != list.len() {
            return Err(ClaimError::Invalid(
                "conditions lists a condition more than once",
            ));
        }
        Ok(Claim::HasNoneOf { conditions: set })
    }

    /// The attribute this claim is about.
    pub fn attribute(&self) -> Attribute {
        self.claim_kind().attribute()
    }

    /// The catalogue entry of this claim.
    pub fn claim_kind(&self) -> ClaimKind {
        match self {
            Claim::IncomeBelow { .. } => ClaimKind::IncomeBelow,
            Claim::AgeAtLeast { .. } => ClaimKind::AgeAtLeast,
            Claim::ResidesIn { .. } => ClaimKind::ResidesIn,
            Claim::HasNoneOf { .. } => ClaimKind::HasNoneOf,
        }
    }

    /// The kind as spelled in JSON (`income_below`, ...).
    pub fn kind(&self) -> &'static str {
        self.claim_kind().name()
    }

    /// The claim as a sentence for agents, from its public parameters only ("the person is at
    /// least 18 years old"): the claim tool's description.
    pub fn agent_sentence(&self) -> String {
        let listed = |codes: Vec<&str>| codes.join(", ");
        match self {
            Claim::IncomeBelow { limit } => format!(
                "the person's annual income is below {} {}",
                crate::profile::format_minor(limit.amount_minor),
                limit.currency.as_str()
            ),
            Claim::AgeAtLeast { years } => format!("the person is at least {years} years old"),
            Claim::ResidesIn { districts } => format!(
                "the person resides in one of: {}",
                listed(districts.iter().map(DistrictId::as_str).collect())
            ),
            Claim::HasNoneOf { conditions } => format!(
                "the person has none of: {}",
                listed(conditions.iter().map(ConditionCode::as_str).collect())
            ),
        }
    }

    /// How the claim reads to people (see [`Wording`]). One arm per kind holds all of its
    /// phrases, so a new kind's words are written in one place.
    pub fn wording(&self, money: MoneyWords<'_>) -> Wording {
        match self {
            Claim::IncomeBelow { limit } => Wording {
                question: format!("Is your yearly income below {}?", money(limit)),
                whether: format!("your yearly income is below {}", money(limit)),
                requirement: format!("household income below {}", money(limit)),
            },
            Claim::AgeAtLeast { years } => Wording {
                question: format!("Are you at least {years}?"),
                whether: format!("you are at least {years}"),
                requirement: format!("at least {years} years old"),
            },
            Claim::ResidesIn { districts } => {
                let names = list_or(&district_labels(districts));
                Wording {
                    question: format!("Do you live in {names}?"),
                    whether: format!("you live in {names}"),
                    requirement: format!("lives in {names}"),
                }
            }
            Claim::HasNoneOf { conditions } => {
                let names = condition_names(conditions).join(", ");
                Wording {
                    question: format!("Do you have none of: {names}?"),
                    whether: format!("you have none of: {names}"),
                    requirement: format!("none of: {names}"),
                }
            }
        }
    }

    /// What answering leaves unknown, for the consent card after "Tells the site whether …":
    /// "With every answer so far, your income stays in a band at least 5,000 € wide."
    pub fn narrowing(&self, floors: &Floors, money: MoneyWords<'_>) -> String {
        match self {
            Claim::IncomeBelow { limit } => format!(
                "With every answer so far, your income stays in a band at least {} wide.",
                money(&Money {
                    amount_minor: floors.income_band_minor,
                    currency: limit.currency,
                })
            ),
            Claim::AgeAtLeast { .. } => "Not your date of birth.".to_owned(),
            Claim::ResidesIn { .. } => format!(
                "Not which district: with every answer so far, at least {} remain possible.",
                floors.district_candidates
            ),
            Claim::HasNoneOf { .. } => {
                "If not, it does not tell which one: no answer singles out a condition.".to_owned()
            }
        }
    }

    /// A byte-stable one-line rendering: `kind` then its public parameters, space separated.
    /// Used for hashing, the log export and people-facing summaries.
    pub fn canonical(&self) -> String {
        match self {
            Claim::IncomeBelow { limit } => {
                format!(
                    "income_below {} {}",
                    limit.amount_minor,
                    limit.currency.as_str()
                )
            }
            Claim::AgeAtLeast { years } => format!("age_at_least {years}"),
            Claim::ResidesIn { districts } => format!(
                "resides_in {}",
                join(districts.iter().map(DistrictId::as_str))
            ),
            Claim::HasNoneOf { conditions } => {
                format!(
                    "has_none_of {}",
                    join(conditions.iter().map(ConditionCode::as_str))
                )
            }
        }
    }

    /// Parses [`Claim::canonical`] output, validating every parameter.
    pub fn parse_canonical(text: &str) -> Result<Self, ClaimError> {
        let bad = ClaimError::Invalid("not a canonical claim");
        let mut parts = text.split(' ');
        let kind = parts.next().ok_or(bad)?;
        let rest: Vec<&str> = parts.collect();
        match (kind, rest.as_slice()) {
            ("income_below", [amount, currency]) => {
                let amount_minor = parse_canonical_u64(amount).ok_or(bad)?;
                let currency = Currency::parse(currency).map_err(|_| bad)?;
                Claim::income_below(Money {
                    amount_minor,
                    currency,
                })
            }
            ("age_at_least", [years]) => {
                let years = parse_canonical_u64(years)
                    .and_then(|y| u8::try_from(y).ok())
                    .ok_or(bad)?;
                Claim::age_at_least(years)
            }
            ("resides_in", [list]) => {
                let codes = list
                    .split(',')
                    .map(DistrictId::parse)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| bad)?;
                let claim = Claim::resides_in(codes)?;
                if claim.canonical() == text {
                    Ok(claim)
                } else {
                    Err(bad)
                }
            }
            ("has_none_of", [list]) => {
                let codes = list
                    .split(',')
                    .map(ConditionCode::parse)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| bad)?;
                let claim = Claim::has_none_of(codes)?;
                if claim.canonical() == text {
                    Ok(claim)
                } else {
                    Err(bad)
                }
            }
            _ => Err(bad),
        }
    }
}

/// The districts' display labels, in the set's order.
fn district_labels(districts: &BTreeSet<DistrictId>) -> Vec<&str> {
    districts
        .iter()
        .map(|d| label(DISTRICTS, d.as_str()))
        .collect()
}

/// The conditions' display labels in lower case, for the middle of a sentence.
fn condition_names(conditions: &BTreeSet<ConditionCode>) -> Vec<String> {
    conditions
        .iter()
        .map(|c| label(CONDITIONS, c.as_str()).to_lowercase())
        .collect()
}

fn join<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.collect::<Vec<_>>().join(",")
}

/// Decimal without sign, leading zeros or other decoration, so that parse ∘ render is the identity.
fn parse_canonical_u64(text: &str) -> Option<u64> {
    let ok = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    if ok { text.parse().ok() } else { None }
}

/// Why a well-formed claim cannot be asked of a particular profile ([`evaluate`] says it as
/// [`ClaimError::NotAskable`]). A kind whose fact a profile may lack adds its reason here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unaskable {
    /// An income claim in another currency than the profile's; Tacit never converts.
    #[error("the limit's currency differs from the profile's; amounts are never converted")]
    CurrencyMismatch,
}

/// What happened to a question.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Satisfied,
    NotSatisfied,
    /// Refused because answering would narrow what is known below the privacy floor,
    /// or because the grant no longer holds.
    Declined,
    /// The question could not be asked of this profile (for example another currency).
    Invalid,
}

impl Outcome {
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Satisfied => "satisfied",
            Outcome::NotSatisfied => "not_satisfied",
            Outcome::Declined => "declined",
            Outcome::Invalid => "invalid",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            Outcome::Satisfied,
            Outcome::NotSatisfied,
            Outcome::Declined,
            Outcome::Invalid,
        ]
        .into_iter()
        .find(|o| o.as_str() == text)
    }

    pub const fn from_bool(satisfied: bool) -> Self {
        if satisfied {
            Outcome::Satisfied
        } else {
            Outcome::NotSatisfied
        }
    }
}

/// The whole result of evaluating a claim: the claim and whether it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    pub claim: Claim,
    pub satisfied: bool,
}

/// The latest date of birth for which a person is at least `years` old on `today`.
///
/// A 29 February birthday counts as passed on 1 March in a common year.
pub fn age_cutoff(today: Date, years: u8) -> Date {
    years_before(today, years)
}

/// Evaluates `claim` against `profile` on `today` (the caller's date).
///
/// An income claim in another currency than the profile's is [`Unaskable::CurrencyMismatch`].
pub fn evaluate(profile: &Profile, claim: &Claim, today: Date) -> Result<Evaluation, ClaimError> {
    let satisfied = match claim {
        Claim::IncomeBelow { limit } => {
            let income = profile.income();
            if income.currency != limit.currency {
                return Err(Unaskable::CurrencyMismatch.into());
            }
            income.amount_minor < limit.amount_minor
        }
        Claim::AgeAtLeast { years } => profile.date_of_birth() <= age_cutoff(today, *years),
        Claim::ResidesIn { districts } => districts.contains(profile.district()),
        Claim::HasNoneOf { conditions } => profile.conditions().is_disjoint(conditions),
    };
    Ok(Evaluation {
        claim: claim.clone(),
        satisfied,
    })
}
