//! Shared test fixtures.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use time::{Date, Month};
use wallet_core::catalogue::{CONDITIONS, DISTRICTS};
use wallet_core::{Profile, ProfileInput};

pub fn today() -> Date {
    Date::from_calendar_date(2026, Month::November, 29).unwrap()
}

pub fn input() -> ProfileInput {
    ProfileInput {
        income_minor: 2_840_000,
        currency: "EUR".into(),
        date_of_birth: "1990-02-28".into(),
        district: "nordhafen".into(),
        conditions: vec!["asthma".into()],
    }
}

pub fn profile() -> Profile {
    Profile::new(&input(), today()).unwrap()
}

/// Random valid profile inputs (EUR) relative to `today()`.
pub fn arb_input() -> impl Strategy<Value = ProfileInput> {
    (
        0i64..10_000_000_000,
        0i64..(130 * 365),
        0usize..DISTRICTS.len(),
        proptest::bits::u16::between(0, CONDITIONS.len()),
    )
        .prop_map(|(income, age_days, district, cond_bits)| {
            let dob = today() - time::Duration::days(age_days);
            ProfileInput {
                income_minor: income,
                currency: "EUR".into(),
                date_of_birth: wallet_core::profile::format_date(dob),
                district: DISTRICTS[district].code.into(),
                conditions: CONDITIONS
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| cond_bits & (1 << i) != 0)
                    .map(|(_, c)| c.code.to_owned())
                    .collect(),
            }
        })
}
