//! The single-use rule (`tacit_protocol::single_use`): the function and the SQL predicate the
//! services' conditional `UPDATE`s carry say the same thing. (The services' own database tests
//! run the predicate on SQLite and PostgreSQL.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use tacit_protocol::single_use::{USABLE_AT_1, usable};
use tacit_protocol::usable_at_1;

#[test]
fn usable_until_used_or_expired() {
    // (used_at, expires_at, now, usable)
    let cases: [(Option<i64>, i64, i64, bool); 9] = [
        (None, 100, 0, true),
        (None, 100, 99, true),
        // At the expiry instant it is gone.
        (None, 100, 100, false),
        (None, 100, 101, false),
        // Used: never again, even long before the expiry, even "used in the future".
        (Some(0), 100, 1, false),
        (Some(50), 100, 0, false),
        (Some(200), 100, 300, false),
        (None, i64::MIN, i64::MIN, false),
        (None, i64::MAX, i64::MAX - 1, true),
    ];
    for (used_at, expires_at, now, expected) in cases {
        assert_eq!(
            usable(used_at, expires_at, now),
            expected,
            "{used_at:?} {expires_at} {now}"
        );
    }
}

#[test]
fn the_sql_predicate_is_the_rule() {
    assert_eq!(USABLE_AT_1, "used_at IS NULL AND expires_at > $1");
    assert_eq!(usable_at_1!(), USABLE_AT_1);
    // The predicate the services join: the statement a site consumes its nonce with.
    assert_eq!(
        concat!(
            "UPDATE nonces SET used_at = $1 WHERE nonce = $2 AND ",
            usable_at_1!()
        ),
        "UPDATE nonces SET used_at = $1 WHERE nonce = $2 AND used_at IS NULL AND expires_at > $1"
    );
}

/// A tiny evaluator of exactly the predicate's grammar (`<col> IS NULL`, `<col> > $1`, `AND`),
/// so the rule is read from the SQL text, not restated.
fn eval_sql(predicate: &str, used_at: Option<i64>, expires_at: i64, now: i64) -> bool {
    let column = |name: &str| match name {
        "used_at" => used_at,
        "expires_at" => Some(expires_at),
        other => panic!("unknown column {other}"),
    };
    predicate.split(" AND ").all(|term| {
        let words: Vec<&str> = term.split_whitespace().collect();
        match words.as_slice() {
            [col, "IS", "NULL"] => column(col).is_none(),
            [col, ">", "$1"] => column(col).is_some_and(|v| v > now),
            other => panic!("unexpected term {other:?}"),
        }
    })
}

proptest! {
    #[test]
    fn function_and_sql_agree(
        used_at in proptest::option::of(-1_000i64..1_000),
        expires_at in -1_000i64..1_000,
        now in -1_000i64..1_000,
    ) {
        prop_assert_eq!(
            usable(used_at, expires_at, now),
            eval_sql(USABLE_AT_1, used_at, expires_at, now)
        );
    }
}
