//! An issuer's privacy rules: which predicates a credential carries and until when it is
//! valid. No clock, no I/O, no randomness: time and the person's record come in as arguments.
//! (Moved from the issuer service's `predicates.rs`, which re-exports it.)
//!
//! - **Income** ([`income_claims`]): a ladder fixed by the issuer, `income_below_<amount>` for
//!   every 5,000 (major units of the currency) from 10,000 to 200,000: 39 booleans, each
//!   selectively disclosable. `income_below_30000` is `true` exactly when the annual income is
//!   strictly below 30,000.00. The currency is a **plain** (always visible) claim `currency`:
//!   a step means nothing without it, and one issuer vouches in one currency for everyone, so it
//!   tells a verifier nothing about the person. The raw income is never a claim.
//! - **Age** ([`age_claims`]): `age_equal_or_over_16`, `_18`, `_21`, `_65`, each selectively
//!   disclosable. These are **flat** names: the SD-JWT module discloses top-level claims only,
//!   so the nested `age_equal_or_over: {"18": true}` object of the SD-JWT VC examples is not
//!   used. The birth date is never a claim.
//! - **Validity** ([`credential_lifetime`]): every credential an issuer signs on one UTC day
//!   carries the same `iat` and `exp`: `iat` is midnight UTC at the start of that day and `exp`
//!   is `iat` + [`CREDENTIAL_VALIDITY_MS`] (30 days), whoever the person and whatever they hold
//!   ([`on_issuance_grid`] is the wallet's check of it). Neither depends on the person's record:
//!   an `exp` ending at a birthday would tell every site that date. The predicates are those of
//!   that UTC day (an age flips at midnight UTC, [`age_claims`]), so they are exactly what held
//!   at `iat`.
//! - **Staleness** ([`age_may_have_turned`]): an age credential may outlive a birthday that
//!   flips one of its `false` answers. The issuer does not shorten it (that would reveal the
//!   date); the wallet, which knows the date the person typed, stops presenting such a predicate
//!   and fetches a new batch. A person born on 29 February turns a year older on 1 March in
//!   common years.

use time::{Date, Month};

/// How long every credential is valid: 30 days from its `iat` (midnight UTC of the day it was
/// issued), in milliseconds.
pub const CREDENTIAL_VALIDITY_MS: i64 = 30 * MS_PER_DAY;

/// The issuance grid's step: one UTC day, in milliseconds.
pub const ISSUANCE_GRID_MS: i64 = MS_PER_DAY;

/// The ladder and the thresholds are the protocol's: one table for issuers, wallets and sites.
pub use crate::predicates::{
    AGE_THRESHOLDS, INCOME_LADDER_MAX, INCOME_LADDER_MIN, INCOME_LADDER_STEP, age_claim_name,
    income_claim_name, income_ladder,
};

const MS_PER_DAY: i64 = 24 * 3600 * 1000;
/// Julian day number of 1970-01-01.
const UNIX_EPOCH_JULIAN_DAY: i64 = 2_440_588;

/// Why a record cannot become a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PredicateError {
    /// The currency is not three uppercase ASCII letters.
    #[error("the currency must be an ISO 4217 code of three uppercase letters")]
    BadCurrency,
    /// The income is negative.
    #[error("an income cannot be negative")]
    NegativeIncome,
    /// The birth date is not `YYYY-MM-DD`, or is not a calendar date.
    #[error("the birth date must be a calendar date written YYYY-MM-DD")]
    BadBirthDate,
    /// The birth date lies after the issuance time.
    #[error("the birth date lies in the future")]
    BornInTheFuture,
    /// The time is outside what the calendar arithmetic covers.
    #[error("the time is out of range")]
    TimeOutOfRange,
}

/// Named claim values, in order.
pub type Claims = Vec<(String, serde_json::Value)>;

/// Whether `currency` is three uppercase ASCII letters.
pub fn valid_currency(currency: &str) -> bool {
    currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase())
}

/// The income credential's claims for an annual income of `income_minor` (hundredths of the
/// currency): the plain claims (`currency`) and the disclosable ladder, in ladder order.
pub fn income_claims(
    income_minor: i64,
    currency: &str,
) -> Result<(Claims, Claims), PredicateError> {
    if !valid_currency(currency) {
        return Err(PredicateError::BadCurrency);
    }
    if income_minor < 0 {
        return Err(PredicateError::NegativeIncome);
    }
    let plain = vec![(
        "currency".to_owned(),
        serde_json::Value::String(currency.to_owned()),
    )];
    let ladder = income_ladder()
        .map(|step| {
            let below = income_minor < i64::try_from(step).unwrap_or(i64::MAX).saturating_mul(100);
            (income_claim_name(step), serde_json::Value::Bool(below))
        })
        .collect();
    Ok((plain, ladder))
}

/// Parses `YYYY-MM-DD` strictly (four-digit year from 1800, two-digit month and day).
pub fn parse_birth_date(text: &str) -> Result<Date, PredicateError> {
    let bytes = text.as_bytes();
    let shape_ok = bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
    if !shape_ok {
        return Err(PredicateError::BadBirthDate);
    }
    let number = |range: std::ops::Range<usize>| -> Result<u32, PredicateError> {
        text.get(range)
            .and_then(|t| t.parse().ok())
            .ok_or(PredicateError::BadBirthDate)
    };
    let year = i32::try_from(number(0..4)?).map_err(|_| PredicateError::BadBirthDate)?;
    let month = u8::try_from(number(5..7)?)
        .ok()
        .and_then(|m| Month::try_from(m).ok())
        .ok_or(PredicateError::BadBirthDate)?;
    let day = u8::try_from(number(8..10)?).map_err(|_| PredicateError::BadBirthDate)?;
    if year < 1800 {
        return Err(PredicateError::BadBirthDate);
    }
    Date::from_calendar_date(year, month, day).map_err(|_| PredicateError::BadBirthDate)
}

/// The UTC calendar date of a time in milliseconds since the Unix epoch.
pub fn utc_date(now_ms: i64) -> Result<Date, PredicateError> {
    wallet_core::Timestamp::from_millis(now_ms)
        .checked_date_utc()
        .ok_or(PredicateError::TimeOutOfRange)
}

/// Midnight UTC at the start of `date`, in milliseconds since the Unix epoch.
pub fn start_of_day_ms(date: Date) -> i64 {
    (i64::from(date.to_julian_day()) - UNIX_EPOCH_JULIAN_DAY) * MS_PER_DAY
}

/// The date on which someone born on `birth` turns `years` old: the first day on which
/// [`is_at_least`] holds. Which day that is for a 29 February birthday in a common year is
/// wallet-core's rule ([`wallet_core::age_cutoff`]: 1 March), not decided again here.
pub fn birthday(birth: Date, years: u8) -> Result<Date, PredicateError> {
    let year = birth
        .year()
        .checked_add(i32::from(years))
        .ok_or(PredicateError::TimeOutOfRange)?;
    // The same calendar day that year, or — when it has none (29 February in a common year) —
    // the last day of February; the birthday is that day or the next.
    let candidate = Date::from_calendar_date(year, birth.month(), birth.day())
        .or_else(|_| Date::from_calendar_date(year, Month::February, 28))
        .map_err(|_| PredicateError::TimeOutOfRange)?;
    if is_at_least(birth, years, candidate) {
        Ok(candidate)
    } else {
        candidate
            .next_day()
            .filter(|&day| is_at_least(birth, years, day))
            .ok_or(PredicateError::TimeOutOfRange)
    }
}

/// Whether someone born on `birth` is at least `years` old on `today`: wallet-core's age rule
/// ([`wallet_core::age_cutoff`]), the one the wallet evaluates `age_at_least` claims with.
pub fn is_at_least(birth: Date, years: u8, today: Date) -> bool {
    birth <= wallet_core::age_cutoff(today, years)
}

/// The age credential's disclosable claims at `now_ms` (`age_equal_or_over_16` …), in
/// threshold order.
pub fn age_claims(birth: Date, now_ms: i64) -> Result<Claims, PredicateError> {
    let today = utc_date(now_ms)?;
    if birth > today {
        return Err(PredicateError::BornInTheFuture);
    }
    AGE_THRESHOLDS
        .iter()
        .map(|&years| {
            Ok((
                age_claim_name(years),
                serde_json::Value::Bool(is_at_least(birth, years, today)),
            ))
        })
        .collect()
}

/// Midnight UTC at the start of the UTC day holding `at_ms`: the `iat` of every credential
/// issued that day, and the only time of issuance an issuer keeps.
pub fn issuance_day_ms(at_ms: i64) -> i64 {
    at_ms.div_euclid(ISSUANCE_GRID_MS) * ISSUANCE_GRID_MS
}

/// The `iat` and `exp` (milliseconds since the Unix epoch) of every credential issued at
/// `now_ms`: the start of its UTC day, and [`CREDENTIAL_VALIDITY_MS`] later. The same for
/// everyone the issuer serves that day; nothing about the person goes in.
pub fn credential_lifetime(now_ms: i64) -> Result<(i64, i64), PredicateError> {
    let iat = issuance_day_ms(now_ms);
    let exp = iat
        .checked_add(CREDENTIAL_VALIDITY_MS)
        .ok_or(PredicateError::TimeOutOfRange)?;
    Ok((iat, exp))
}

/// When a credential issued at `now_ms` expires: the `exp` of [`credential_lifetime`].
pub fn credential_expiry(now_ms: i64) -> Result<i64, PredicateError> {
    credential_lifetime(now_ms).map(|(_, exp)| exp)
}

/// Whether a credential's `iat` and `exp` are on the issuance grid for a wallet receiving it at
/// `now_ms`: `iat` is a UTC midnight, `exp` is exactly `iat` + [`CREDENTIAL_VALIDITY_MS`], and
/// `iat` is the start of the UTC day of `now_ms` — or of the day `skew_ms` earlier or later, so
/// that a wallet whose clock is a little off near midnight still accepts a genuine batch.
pub fn on_issuance_grid(iat_ms: i64, exp_ms: i64, now_ms: i64, skew_ms: i64) -> bool {
    let skew = skew_ms.max(0);
    iat_ms == issuance_day_ms(iat_ms)
        && iat_ms.checked_add(CREDENTIAL_VALIDITY_MS) == Some(exp_ms)
        && iat_ms >= issuance_day_ms(now_ms.saturating_sub(skew))
        && iat_ms <= issuance_day_ms(now_ms.saturating_add(skew))
}

/// Whether the predicate `age_equal_or_over_<years>` of a credential whose claims describe the
/// UTC day `issued` may have turned by `today` for someone born on `birth`: they were not yet
/// `years` old on `issued` and are by `today` (a birthday in between). A `true` never turns.
pub fn age_may_have_turned(birth: Date, years: u8, issued: Date, today: Date) -> bool {
    !is_at_least(birth, years, issued) && is_at_least(birth, years, today)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ms(date: &str) -> i64 {
        start_of_day_ms(parse_birth_date(date).unwrap())
    }

    #[test]
    fn the_ladder_has_39_steps_from_10000_to_200000() {
        let steps: Vec<u64> = income_ladder().collect();
        assert_eq!(steps.len(), 39);
        assert_eq!(steps.first(), Some(&10_000));
        assert_eq!(steps.get(4), Some(&30_000));
        assert_eq!(steps.last(), Some(&200_000));
    }

    #[test]
    fn income_predicates_are_strictly_below() {
        let (plain, ladder) = income_claims(2_850_000, "EUR").unwrap();
        assert_eq!(
            plain,
            vec![("currency".to_owned(), serde_json::json!("EUR"))]
        );
        let step = |ladder: &Claims, name: &str| {
            ladder
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        assert_eq!(
            step(&ladder, "income_below_25000"),
            serde_json::json!(false)
        );
        assert_eq!(step(&ladder, "income_below_30000"), serde_json::json!(true));
        assert_eq!(
            step(&ladder, "income_below_200000"),
            serde_json::json!(true)
        );
        // Exactly on a step is not below it.
        let (_, on) = income_claims(3_000_000, "EUR").unwrap();
        assert_eq!(step(&on, "income_below_30000"), serde_json::json!(false));
        assert_eq!(step(&on, "income_below_35000"), serde_json::json!(true));
        // One cent under.
        let (_, ladder) = income_claims(2_999_999, "EUR").unwrap();
        assert_eq!(step(&ladder, "income_below_30000"), serde_json::json!(true));
        // No claim carries the raw value.
        for (name, value) in ladder.iter().chain(plain.iter()) {
            assert!(!name.contains("2999999") && !value.to_string().contains("2999999"));
        }
    }

    #[test]
    fn bad_income_records_are_refused() {
        assert_eq!(income_claims(1, "eur"), Err(PredicateError::BadCurrency));
        assert_eq!(income_claims(1, "EURO"), Err(PredicateError::BadCurrency));
        assert_eq!(
            income_claims(-1, "EUR"),
            Err(PredicateError::NegativeIncome)
        );
    }

    #[test]
    fn birth_dates_parse_strictly() {
        assert!(parse_birth_date("1990-04-12").is_ok());
        assert!(parse_birth_date("2000-02-29").is_ok());
        for bad in [
            "1990-4-12",
            "1990-02-30",
            "1900-02-29",
            "1990/04/12",
            "19900412",
            "1700-01-01",
            "1990-13-01",
            "1990-00-10",
            "+990-01-01",
            " 990-01-01",
            "1990-01-01T00:00",
        ] {
            assert_eq!(
                parse_birth_date(bad),
                Err(PredicateError::BadBirthDate),
                "{bad}"
            );
        }
    }

    #[test]
    fn age_flips_at_midnight_utc_of_the_birthday() {
        let birth = parse_birth_date("2008-12-02").unwrap();
        let eve = ms("2026-12-01") + 23 * 3_600_000;
        let claims = age_claims(birth, eve).unwrap();
        assert_eq!(
            claims,
            vec![
                ("age_equal_or_over_16".to_owned(), serde_json::json!(true)),
                ("age_equal_or_over_18".to_owned(), serde_json::json!(false)),
                ("age_equal_or_over_21".to_owned(), serde_json::json!(false)),
                ("age_equal_or_over_65".to_owned(), serde_json::json!(false)),
            ]
        );
        let day = age_claims(birth, ms("2026-12-02")).unwrap();
        assert_eq!(day[1].1, serde_json::json!(true));
        // The credential issued the evening before does not end at that midnight (its `exp`
        // would tell the birthday): the wallet sees the predicate may have turned.
        assert_eq!(
            credential_expiry(eve).unwrap(),
            ms("2026-12-01") + CREDENTIAL_VALIDITY_MS
        );
        let issued = utc_date(eve).unwrap();
        assert!(!age_may_have_turned(birth, 18, issued, issued));
        assert!(age_may_have_turned(
            birth,
            18,
            issued,
            parse_birth_date("2026-12-02").unwrap()
        ));
        assert!(!age_may_have_turned(
            birth,
            16,
            issued,
            parse_birth_date("2026-12-02").unwrap()
        ));
    }

    #[test]
    fn leap_day_birthdays_turn_on_the_first_of_march() {
        let birth = parse_birth_date("2008-02-29").unwrap();
        assert_eq!(
            birthday(birth, 18).unwrap(),
            parse_birth_date("2026-03-01").unwrap()
        );
        assert_eq!(
            birthday(birth, 16).unwrap(),
            parse_birth_date("2024-02-29").unwrap()
        );
        let feb28 = ms("2026-02-28");
        assert_eq!(
            age_claims(birth, feb28).unwrap()[1].1,
            serde_json::json!(false)
        );
        let (feb28_day, mar1) = (
            utc_date(feb28).unwrap(),
            parse_birth_date("2026-03-01").unwrap(),
        );
        assert!(!age_may_have_turned(birth, 18, feb28_day, feb28_day));
        assert!(age_may_have_turned(birth, 18, feb28_day, mar1));
    }

    #[test]
    fn the_birthday_is_the_first_day_the_wallet_counts_the_age() {
        // Every birth date of 2003–2009 (three 29 Februaries), every threshold: the birthday
        // the issuer's expiry uses is exactly the first day wallet-core's rule says "old
        // enough", and it is the naive calendar birthday (29 February → 1 March in a common
        // year).
        let mut birth = parse_birth_date("2003-01-01").unwrap();
        let end = parse_birth_date("2010-01-01").unwrap();
        while birth < end {
            for years in AGE_THRESHOLDS {
                let day = birthday(birth, years).unwrap();
                assert!(is_at_least(birth, years, day), "{birth} {years}");
                assert!(
                    !is_at_least(birth, years, day.previous_day().unwrap()),
                    "{birth} {years}"
                );
                let year = birth.year() + i32::from(years);
                let naive = Date::from_calendar_date(year, birth.month(), birth.day())
                    .unwrap_or_else(|_| Date::from_calendar_date(year, Month::March, 1).unwrap());
                assert_eq!(day, naive, "{birth} {years}");
            }
            birth = birth.next_day().unwrap();
        }
    }

    #[test]
    fn every_credential_of_a_day_has_one_iat_and_exp_whatever_the_birth_date() {
        // Issue 28, item 2: born 2008-12-20, asked on 2026-12-01 at 10:00:00.005 — the old rule
        // ended the credential at 2026-12-20T00:00Z, telling any site the date of birth.
        let now = ms("2026-12-01") + 10 * 3_600_000 + 5;
        let (iat, exp) = credential_lifetime(now).unwrap();
        assert_eq!(iat, ms("2026-12-01"));
        assert_eq!(exp, ms("2026-12-31"));
        assert_eq!(credential_expiry(now).unwrap(), exp);
        // The same for anyone issued anything that day, from its first to its last millisecond.
        for at in [ms("2026-12-01"), now, ms("2026-12-02") - 1] {
            assert_eq!(credential_lifetime(at).unwrap(), (iat, exp));
        }
        assert_eq!(
            credential_lifetime(ms("2026-12-02")).unwrap(),
            (ms("2026-12-02"), ms("2027-01-01"))
        );
        // Before 1970 too (days round down, never towards zero).
        assert_eq!(issuance_day_ms(ms("1969-12-31") + 5), ms("1969-12-31"));
        assert_eq!(CREDENTIAL_VALIDITY_MS, 30 * ISSUANCE_GRID_MS);
    }

    #[test]
    fn the_wallet_accepts_only_the_grid_of_today() {
        let today = ms("2026-12-01");
        let now = today + 10 * 3_600_000;
        let skew = 60_000;
        let ok = |iat: i64, exp: i64, now: i64| on_issuance_grid(iat, exp, now, skew);
        assert!(ok(today, today + CREDENTIAL_VALIDITY_MS, now));
        // Off the grid: not midnight, another validity, another day.
        assert!(!ok(
            today + 1_000,
            today + 1_000 + CREDENTIAL_VALIDITY_MS,
            now
        ));
        assert!(!ok(today, today + CREDENTIAL_VALIDITY_MS - 1_000, now));
        assert!(!ok(
            today,
            today + CREDENTIAL_VALIDITY_MS + ISSUANCE_GRID_MS,
            now
        ));
        let yesterday = today - ISSUANCE_GRID_MS;
        assert!(!ok(yesterday, yesterday + CREDENTIAL_VALIDITY_MS, now));
        // Near midnight, a clock off by less than the skew still takes the neighbouring day.
        assert!(ok(
            yesterday,
            yesterday + CREDENTIAL_VALIDITY_MS,
            today + 30_000
        ));
        let tomorrow = today + ISSUANCE_GRID_MS;
        assert!(ok(
            tomorrow,
            tomorrow + CREDENTIAL_VALIDITY_MS,
            tomorrow - 30_000
        ));
        assert!(!ok(
            tomorrow,
            tomorrow + CREDENTIAL_VALIDITY_MS,
            tomorrow - 90_000
        ));
    }

    #[test]
    fn a_future_birth_date_is_refused() {
        let birth = parse_birth_date("2030-01-01").unwrap();
        assert_eq!(
            age_claims(birth, ms("2026-12-01")),
            Err(PredicateError::BornInTheFuture)
        );
    }

    #[test]
    fn utc_dates_round_trip() {
        for date in ["1970-01-01", "1969-12-31", "2000-02-29", "2026-12-01"] {
            let d = parse_birth_date(date).unwrap();
            assert_eq!(utc_date(start_of_day_ms(d)).unwrap(), d);
            assert_eq!(utc_date(start_of_day_ms(d) + MS_PER_DAY - 1).unwrap(), d);
        }
    }
}
