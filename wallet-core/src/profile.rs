//! The person's facts. Validated on entry; never printed; zeroized on drop.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use time::{Date, Month};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::catalogue;
use crate::claim::Attribute;
use crate::error::{Field, ProfileError};
use crate::format::{self, ReadError, Record};

/// Largest income accepted, in minor units (one billion major units). Also the top of the
/// disclosure ledger's income domain.
pub const MAX_INCOME_MINOR: u64 = 100_000_000_000;

/// Oldest date of birth accepted, in years before "today".
pub const MAX_AGE_YEARS: u8 = 130;

/// An ISO 4217 currency code from [`catalogue::CURRENCIES`].
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Currency([u8; 3]);

impl Currency {
    /// Parses a three-letter code from the catalogue.
    pub fn parse(code: &str) -> Result<Self, ProfileError> {
        let bytes: [u8; 3] = code.as_bytes().try_into().map_err(|_| ProfileError {
            field: Field::Currency,
            reason: "must be a three-letter ISO 4217 code",
        })?;
        if !catalogue::is_currency(code) {
            return Err(ProfileError {
                field: Field::Currency,
                reason: "not a currency the wallet accepts",
            });
        }
        Ok(Self(bytes))
    }

    /// The code as text.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.0).unwrap_or("???")
    }
}

impl TryFrom<String> for Currency {
    type Error = ProfileError;
    fn try_from(value: String) -> Result<Self, ProfileError> {
        Self::parse(&value)
    }
}

impl From<Currency> for String {
    fn from(value: Currency) -> Self {
        value.as_str().to_owned()
    }
}

impl core::fmt::Debug for Currency {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An amount in integer minor units (cents) of a currency. Public when it is a claim's limit.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Money {
    pub amount_minor: u64,
    pub currency: Currency,
}

macro_rules! catalogue_code {
    ($(#[$meta:meta])* $name:ident, $check:path, $field:expr, $what:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Accepts only a code from the published catalogue.
            pub fn parse(code: &str) -> Result<Self, ProfileError> {
                if $check(code) {
                    Ok(Self(code.to_owned()))
                } else {
                    Err(ProfileError { field: $field, reason: $what })
                }
            }
        }

        $crate::string_newtype!($name, ProfileError);

        impl Zeroize for $name {
            fn zeroize(&mut self) {
                self.0.zeroize();
            }
        }
    };
}

catalogue_code!(
    /// A district code from [`catalogue::DISTRICTS`].
    DistrictId,
    catalogue::is_district,
    Field::District,
    "unknown district; choose one from the catalogue"
);
catalogue_code!(
    /// A condition code from [`catalogue::CONDITIONS`].
    ConditionCode,
    catalogue::is_condition,
    Field::Conditions,
    "unknown condition code; choose codes from the catalogue"
);

/// A language the person prefers, as a BCP 47 tag (`de`, `de-CH`, `sr-Latn-RS`): a primary
/// subtag of 2 to 8 ASCII letters, then subtags of 1 to 8 ASCII letters or digits, joined by
/// `-`, at most 35 characters. Only the shape is checked, not the IANA registry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct LanguageTag(String);

impl LanguageTag {
    /// Longest tag accepted.
    pub const MAX_LEN: usize = 35;

    /// Accepts a well-formed tag.
    pub fn parse(tag: &str) -> Result<Self, ProfileError> {
        let refuse = |reason| ProfileError {
            field: Field::PreferredLanguage,
            reason,
        };
        if tag.is_empty() || tag.len() > Self::MAX_LEN {
            return Err(refuse("must be a language tag of 2 to 35 characters"));
        }
        let mut subtags = tag.split('-');
        let primary = subtags.next().unwrap_or_default();
        if !(2..=8).contains(&primary.len()) || !primary.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(refuse("must start with a language code of 2 to 8 letters"));
        }
        if !subtags
            .all(|s| (1..=8).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric()))
        {
            return Err(refuse("subtags are 1 to 8 letters or digits joined by '-'"));
        }
        Ok(Self(tag.to_owned()))
    }

    /// The tag as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for LanguageTag {
    type Error = ProfileError;
    fn try_from(value: String) -> Result<Self, ProfileError> {
        Self::parse(&value)
    }
}

impl From<LanguageTag> for String {
    fn from(value: LanguageTag) -> Self {
        value.0.clone()
    }
}

impl Zeroize for LanguageTag {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

/// What the person types, before validation. Income is signed so that a negative entry can be
/// refused with a message rather than fail to parse.
#[derive(Clone, Serialize, Deserialize, Zeroize, ZeroizeOnDrop)]
#[serde(deny_unknown_fields)]
pub struct ProfileInput {
    pub income_minor: i64,
    pub currency: String,
    /// ISO 8601 calendar date, `YYYY-MM-DD`.
    pub date_of_birth: String,
    pub district: String,
    pub conditions: Vec<String>,
}

impl ProfileInput {
    /// The input for the fields every profile has. A field added later for a new claim kind is
    /// optional (empty until the person fills it in), so callers of `new` need no edit; set it
    /// with its own method.
    pub fn new<S: Into<String>>(
        income_minor: i64,
        currency: &str,
        date_of_birth: &str,
        district: &str,
        conditions: impl IntoIterator<Item = S>,
    ) -> Self {
        Self {
            income_minor,
            currency: currency.to_owned(),
            date_of_birth: date_of_birth.to_owned(),
            district: district.to_owned(),
            conditions: conditions.into_iter().map(Into::into).collect(),
        }
    }

    /// The empty form: what a new wallet's editor starts from.
    pub fn empty() -> Self {
        Self::new::<String>(0, "", "", "", [])
    }
}

impl core::fmt::Debug for ProfileInput {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ProfileInput { .. }")
    }
}

/// The profile record format this build writes and the newest it reads (see [`crate::format`]).
/// Format 1: the fields, no `format` member. Format 2: the same fields and `format: 2`.
/// Format 3: format 2 with `format: 3` and an optional `preferred_language`.
pub const PROFILE_FORMAT: u32 = 3;

/// The validated profile. Its `Debug` prints no value; its memory is wiped on drop.
///
/// Its serde form is the current profile record (format [`PROFILE_FORMAT`], strict): what the
/// vault seals. To read a record of any format, use [`Profile::from_record`].
#[derive(Clone, PartialEq, Eq)]
pub struct Profile {
    income: Money,
    date_of_birth: Date,
    district: DistrictId,
    conditions: BTreeSet<ConditionCode>,
    /// Not a form field: kept across edits by [`Profile::edited`].
    preferred_language: Option<LanguageTag>,
}

impl Profile {
    /// Validates what the person entered. `today` is the caller's date (the crate has no clock).
    pub fn new(input: &ProfileInput, today: Date) -> Result<Self, ProfileError> {
        let amount_minor = u64::try_from(input.income_minor).map_err(|_| ProfileError {
            field: Field::Income,
            reason: "must not be negative",
        })?;
        if amount_minor >= MAX_INCOME_MINOR {
            return Err(ProfileError {
                field: Field::Income,
                reason: "must be below 1,000,000,000 in major units",
            });
        }
        let currency = Currency::parse(&input.currency)?;
        let date_of_birth = parse_date(&input.date_of_birth)?;
        if date_of_birth > today {
            return Err(ProfileError {
                field: Field::DateOfBirth,
                reason: "must not be in the future",
            });
        }
        if date_of_birth < earliest_birth_date(today) {
            return Err(ProfileError {
                field: Field::DateOfBirth,
                reason: "must not be more than 130 years ago",
            });
        }
        let district = DistrictId::parse(&input.district)?;
        let conditions = input
            .conditions
            .iter()
            .map(|c| ConditionCode::parse(c))
            .collect::<Result<BTreeSet<_>, _>>()?;
        if conditions.len() != input.conditions.len() {
            return Err(ProfileError {
                field: Field::Conditions,
                reason: "lists a condition more than once",
            });
        }
        Ok(Self {
            income: Money {
                amount_minor,
                currency,
            },
            date_of_birth,
            district,
            conditions,
            preferred_language: None,
        })
    }

    /// The profile after the person edited the form: [`Profile::new`] of `input`, keeping
    /// what the form does not show (the preferred language).
    pub fn edited(&self, input: &ProfileInput, today: Date) -> Result<Self, ProfileError> {
        Ok(Self::new(input, today)?.with_preferred_language(self.preferred_language.clone()))
    }

    /// The language the person prefers, if they said.
    pub fn preferred_language(&self) -> Option<&LanguageTag> {
        self.preferred_language.as_ref()
    }

    /// The same profile with `language` as the preferred language.
    pub fn with_preferred_language(mut self, language: Option<LanguageTag>) -> Self {
        if let Some(old) = self.preferred_language.as_mut() {
            old.zeroize();
        }
        self.preferred_language = language;
        self
    }

    /// Annual income. Read only by claim evaluation and the profile editor.
    pub fn income(&self) -> Money {
        self.income
    }

    /// Date of birth. Read only by claim evaluation and the profile editor.
    pub fn date_of_birth(&self) -> Date {
        self.date_of_birth
    }

    /// District of residence. Read only by claim evaluation and the profile editor.
    pub fn district(&self) -> &DistrictId {
        &self.district
    }

    /// Medical conditions. Read only by claim evaluation and the profile editor.
    pub fn conditions(&self) -> &BTreeSet<ConditionCode> {
        &self.conditions
    }

    /// Every way a leak could write `attribute`'s raw value: what the canary tests look for in
    /// every output. Income: minor units, `major.cents` and grouped (`28,400.00`); date of
    /// birth: ISO (`1990-02-28`) and compact (`19900228`); the district code; each condition
    /// code. One arm per attribute, no catch-all: a new attribute does not compile until its
    /// renderings are listed here, next to its fact.
    pub fn renderings(&self, attribute: Attribute) -> Vec<String> {
        match attribute {
            Attribute::Income => {
                let minor = self.income.amount_minor;
                vec![
                    minor.to_string(),
                    format!("{}.{:02}", minor / 100, minor % 100),
                    format_minor(minor),
                ]
            }
            Attribute::Age => {
                let dob = self.date_of_birth;
                vec![
                    format_date(dob),
                    format!("{:04}{:02}{:02}", dob.year(), dob.month() as u8, dob.day()),
                ]
            }
            Attribute::District => vec![self.district.as_str().to_owned()],
            Attribute::Conditions => self
                .conditions
                .iter()
                .map(|c| c.as_str().to_owned())
                .collect(),
        }
    }

    /// The editor's view: the same facts as typed input.
    pub fn to_input(&self) -> ProfileInput {
        ProfileInput {
            income_minor: i64::try_from(self.income.amount_minor).unwrap_or(i64::MAX),
            currency: self.income.currency.as_str().to_owned(),
            date_of_birth: format_date(self.date_of_birth),
            district: self.district.as_str().to_owned(),
            conditions: self
                .conditions
                .iter()
                .map(|c| c.as_str().to_owned())
                .collect(),
        }
    }
}

impl Profile {
    /// Reads a profile record of any format this build knows, strictly, and migrates it to
    /// the current one. A record from a newer Tacit is [`ReadError::Newer`], never read in part.
    pub fn from_record(bytes: &[u8]) -> Result<Self, ReadError> {
        use records::{V1, V2, V3};
        let record = Record::Profile;
        match format::version_of(bytes, record, PROFILE_FORMAT)? {
            1 => format::parse::<V1>(bytes, record).map(|v| v.migrate().migrate().into_profile()),
            2 => format::parse::<V2>(bytes, record).map(|v| v.migrate().into_profile()),
            3 => format::parse::<V3>(bytes, record).map(V3::into_profile),
            // `version_of` returns no other format for `PROFILE_FORMAT`.
            _ => Err(ReadError::Malformed(record)),
        }
    }
}

impl Serialize for Profile {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        records::Current {
            format: format::Tag,
            income: self.income,
            date_of_birth: self.date_of_birth,
            district: &self.district,
            conditions: &self.conditions,
            preferred_language: self.preferred_language.as_ref(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Profile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        records::V3::deserialize(d).map(records::V3::into_profile)
    }
}

/// The wire structs of each profile record format. Frozen: a format, once released, is never
/// edited; a new field means a new format (see [`crate::format`]).
mod records {
    use std::collections::BTreeSet;

    use serde::{Deserialize, Serialize};
    use time::Date;

    use super::{ConditionCode, DistrictId, LanguageTag, Money, Profile, iso_date};
    use crate::format::Tag;

    /// What this build writes: format 3, borrowed from the profile (no copy to wipe).
    #[derive(Serialize)]
    pub(super) struct Current<'a> {
        pub format: Tag<{ super::PROFILE_FORMAT }>,
        pub income: Money,
        #[serde(with = "iso_date")]
        pub date_of_birth: Date,
        pub district: &'a DistrictId,
        pub conditions: &'a BTreeSet<ConditionCode>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub preferred_language: Option<&'a LanguageTag>,
    }

    /// Format 1 (before issue 15): the fields, no `format` member. Frozen.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub(super) struct V1 {
        income: Money,
        #[serde(with = "iso_date")]
        date_of_birth: Date,
        district: DistrictId,
        conditions: BTreeSet<ConditionCode>,
    }

    impl V1 {
        /// Format 1 to format 2: the same facts.
        pub(super) fn migrate(self) -> V2 {
            V2 {
                format: Tag,
                income: self.income,
                date_of_birth: self.date_of_birth,
                district: self.district,
                conditions: self.conditions,
            }
        }
    }

    /// Format 2: format 1 and `format: 2`. Frozen.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub(super) struct V2 {
        #[allow(dead_code)] // checked by its type when parsed
        format: Tag<2>,
        income: Money,
        #[serde(with = "iso_date")]
        date_of_birth: Date,
        district: DistrictId,
        conditions: BTreeSet<ConditionCode>,
    }

    impl V2 {
        /// Format 2 to format 3: the same facts, no preferred language.
        pub(super) fn migrate(self) -> V3 {
            V3 {
                format: Tag,
                income: self.income,
                date_of_birth: self.date_of_birth,
                district: self.district,
                conditions: self.conditions,
                preferred_language: None,
            }
        }
    }

    /// Format 3: format 2 with `format: 3` and an optional `preferred_language`. Frozen.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub(super) struct V3 {
        #[allow(dead_code)] // checked by its type when parsed
        format: Tag<3>,
        income: Money,
        #[serde(with = "iso_date")]
        date_of_birth: Date,
        district: DistrictId,
        conditions: BTreeSet<ConditionCode>,
        #[serde(default)]
        preferred_language: Option<LanguageTag>,
    }

    impl V3 {
        pub(super) fn into_profile(self) -> Profile {
            Profile {
                income: self.income,
                date_of_birth: self.date_of_birth,
                district: self.district,
                conditions: self.conditions,
                preferred_language: self.preferred_language,
            }
        }
    }
}

impl core::fmt::Debug for Profile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Profile { .. }")
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        self.income.amount_minor.zeroize();
        self.date_of_birth = Date::MIN;
        self.district.zeroize();
        // BTreeSet cannot be wiped in place; take the codes out and wipe each.
        for mut code in core::mem::take(&mut self.conditions) {
            code.zeroize();
        }
        if let Some(language) = self.preferred_language.as_mut() {
            language.zeroize();
        }
    }
}

/// The earliest date of birth accepted on `today`: 130 years before it (28 February when
/// `today` is 29 February and that year is not a leap year).
pub fn earliest_birth_date(today: Date) -> Date {
    years_before(today, MAX_AGE_YEARS)
}

/// The same calendar day `years` earlier; 29 February maps to 28 February in a common year.
/// Saturates at `Date::MIN`.
pub fn years_before(day: Date, years: u8) -> Date {
    let year = day.year() - i32::from(years);
    Date::from_calendar_date(year, day.month(), day.day())
        .or_else(|_| Date::from_calendar_date(year, Month::February, 28))
        .unwrap_or(Date::MIN)
}

/// Parses `YYYY-MM-DD`.
pub fn parse_date(text: &str) -> Result<Date, ProfileError> {
    Date::parse(text, &iso_date::FORMAT).map_err(|_| ProfileError {
        field: Field::DateOfBirth,
        reason: "must be a calendar date written YYYY-MM-DD",
    })
}

/// Formats `YYYY-MM-DD`.
pub fn format_date(date: Date) -> String {
    date.format(&iso_date::FORMAT).unwrap_or_default()
}

mod iso_date {
    use serde::{Deserialize, Deserializer, Serializer};
    use time::Date;
    use time::format_description::BorrowedFormatItem;
    use time::macros::format_description;

    pub const FORMAT: &[BorrowedFormatItem<'static>] = format_description!("[year]-[month]-[day]");

    pub fn serialize<S: Serializer>(date: &Date, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_date(*date))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Date, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_date(&text).map_err(serde::de::Error::custom)
    }
}

pub use crate::form::parse_amount;

/// `3000000` → `30,000.00`: minor units shown as major units with grouping and two decimals.
pub fn format_minor(amount_minor: u64) -> String {
    let digits = (amount_minor / 100).to_string();
    let mut grouped = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    format!("{grouped}.{:02}", amount_minor % 100)
}
