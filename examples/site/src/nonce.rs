//! The nonce rules: how a nonce is made, how long it lives, and where it stands. The rows live
//! in the site server's database; these rules decide what a row means.
//!
//! Rules:
//! - a nonce is made from 16 random bytes the caller supplies (32 lowercase hex digits);
//! - a nonce is **open** from issue until it is consumed or reaches its expiry, issue time plus
//!   [`NONCE_LIFETIME_MS`] (`now < expires_at`);
//! - only an open nonce can be consumed, exactly once; a consumed nonce stays **used**, so a
//!   second submission is told it is a replay;
//! - a site may configure the lifetime, from [`MIN_NONCE_LIFETIME_MS`] (two seconds) to
//!   [`MAX_NONCE_LIFETIME_MS`] (a day, the longest a receipt lives) ([`check_lifetime_ms`]);
//! - a row may be forgotten ([`NonceRecord::forgettable`]) once it can never matter again: an
//!   **unused** row at its expiry (lapsed, it can never be consumed, and a forgotten nonce is
//!   refused `unknown_nonce` just as a lapsed one is; keeping it would only let a flood of
//!   requirements calls fill the table), a **used** row [`NONCE_RETENTION_MS`] past its expiry
//!   (until then a late replay is told `replayed_nonce`, not just `unknown_nonce`). A forgotten
//!   nonce reads as unknown; either way it can never be accepted again, since a nonce is drawn
//!   from 128 fresh random bits and never issued twice.
//!
//! Open is [`tacit_protocol::single_use::usable`], the rule every single-use value follows. The
//! server consumes with one statement that holds exactly when [`NonceRecord::state`] is
//! [`NonceState::Open`]: `UPDATE nonces SET used_at = $now WHERE nonce = $n AND`
//! [`tacit_protocol::single_use::USABLE_AT_1`], accepted only if it changed one row.

use tacit_protocol::single_use;
use wallet_core::{Nonce, Timestamp};

/// How long an issued nonce stays open: one hour.
pub const NONCE_LIFETIME_MS: i64 = 60 * 60 * 1000;

/// Shortest configurable nonce lifetime: two seconds.
pub const MIN_NONCE_LIFETIME_MS: i64 = 2_000;

/// Longest configurable nonce lifetime: one day. (A receipt for the nonce lives at most
/// `wallet_core::receipt::MAX_WINDOW_MS` from its signing.)
pub const MAX_NONCE_LIFETIME_MS: i64 = 24 * 60 * 60 * 1000;

/// A configured nonce lifetime, if it lies within [`MIN_NONCE_LIFETIME_MS`] to
/// [`MAX_NONCE_LIFETIME_MS`]; the error is the sentence a configuration's reader is told.
pub fn check_lifetime_ms(lifetime_ms: i64) -> Result<i64, String> {
    if (MIN_NONCE_LIFETIME_MS..=MAX_NONCE_LIFETIME_MS).contains(&lifetime_ms) {
        Ok(lifetime_ms)
    } else {
        Err(format!(
            "nonce_lifetime_ms must be {MIN_NONCE_LIFETIME_MS} to {MAX_NONCE_LIFETIME_MS}, not \
             {lifetime_ms}"
        ))
    }
}

/// How long a **used** row is kept after its expiry (so a late replay still reads
/// `replayed_nonce`): seven days. Receipts live at most a day, so a forgotten nonce's receipts
/// are long expired. An unused row is not kept past its expiry.
pub const NONCE_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// A fresh nonce from 16 random bytes: 32 lowercase hex digits.
#[allow(
    clippy::expect_used,
    reason = "32 lowercase hex digits always match Nonce's charset and length"
)]
pub fn make_nonce(random: [u8; 16]) -> Nonce {
    Nonce::parse(&hex::encode(random)).expect("32 hex digits are a valid nonce")
}

/// One issued nonce, as its database row holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonceRecord {
    pub issued_at: Timestamp,
    pub expires_at: Timestamp,
    pub used_at: Option<Timestamp>,
}

/// Where a nonce stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonceState {
    /// Issued, not used, not expired: a submission may consume it.
    Open,
    /// Consumed by an accepted submission.
    Used,
    /// Reached its expiry unused.
    Lapsed,
    /// Never issued here (or forgotten).
    Unknown,
}

impl NonceState {
    /// The state of a nonce whose row is `record` (none: never issued, or forgotten).
    pub fn of(record: Option<&NonceRecord>, now: Timestamp) -> Self {
        record.map_or(NonceState::Unknown, |r| r.state(now))
    }

    /// As logs and tests name it.
    pub const fn as_str(self) -> &'static str {
        match self {
            NonceState::Open => "open",
            NonceState::Used => "used",
            NonceState::Lapsed => "lapsed",
            NonceState::Unknown => "unknown",
        }
    }
}

impl NonceRecord {
    /// The row for a nonce issued at `now`.
    pub const fn issue(now: Timestamp) -> Self {
        Self::issue_for(now, NONCE_LIFETIME_MS)
    }

    /// The row for a nonce issued at `now` that stays open for `lifetime_ms` (the site's
    /// configured lifetime).
    pub const fn issue_for(now: Timestamp, lifetime_ms: i64) -> Self {
        Self {
            issued_at: now,
            expires_at: now.plus_millis(lifetime_ms),
            used_at: None,
        }
    }

    /// Where this nonce stands at `now`.
    pub fn state(&self, now: Timestamp) -> NonceState {
        if single_use::usable(self.used_at, self.expires_at, now) {
            NonceState::Open
        } else if self.used_at.is_some() {
            NonceState::Used
        } else {
            NonceState::Lapsed
        }
    }

    /// Marks an open nonce used at `now`; any other state is returned as the error. (The
    /// server's `UPDATE` is this, done atomically by the database.)
    pub fn consume(&mut self, now: Timestamp) -> Result<(), NonceState> {
        match self.state(now) {
            NonceState::Open => {
                self.used_at = Some(now);
                Ok(())
            }
            other => Err(other),
        }
    }

    /// Whether the row may be deleted at `now`: unused, at its expiry (it has lapsed); used,
    /// [`NONCE_RETENTION_MS`] past its expiry. The server's `DELETE` is this
    /// (`crate::server::Nonces::forget_old`).
    pub fn forgettable(&self, now: Timestamp) -> bool {
        match self.used_at {
            None => now >= self.expires_at,
            Some(_) => now >= self.expires_at.plus_millis(NONCE_RETENTION_MS),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const T0: Timestamp = Timestamp::from_millis(1_800_000_000_000);

    #[test]
    fn nonces_are_thirty_two_hex_digits() {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&[0, 1, 2, 3, 0xfc, 0xfd, 0xfe, 0xff]);
        assert_eq!(
            make_nonce(bytes).as_str(),
            "00010203fcfdfeff0000000000000000"
        );
    }

    #[test]
    fn issued_nonce_is_consumed_once() {
        let mut r = NonceRecord::issue(T0);
        assert_eq!(r.expires_at, T0.plus_millis(NONCE_LIFETIME_MS));
        assert_eq!(r.state(T0), NonceState::Open);
        assert_eq!(r.consume(T0.plus_millis(5)), Ok(()));
        assert_eq!(r.state(T0), NonceState::Used);
        assert_eq!(r.consume(T0.plus_millis(6)), Err(NonceState::Used));
        assert_eq!(r.used_at, Some(T0.plus_millis(5)));
    }

    #[test]
    fn unknown_nonce_is_unknown() {
        assert_eq!(NonceState::of(None, T0), NonceState::Unknown);
        let r = NonceRecord::issue(T0);
        assert_eq!(NonceState::of(Some(&r), T0), NonceState::Open);
    }

    #[test]
    fn nonces_lapse_after_an_hour() {
        let mut r = NonceRecord::issue(T0);
        let just_before = T0.plus_millis(NONCE_LIFETIME_MS - 1);
        assert_eq!(r.state(just_before), NonceState::Open);
        let at = T0.plus_millis(NONCE_LIFETIME_MS);
        assert_eq!(r.state(at), NonceState::Lapsed);
        assert_eq!(r.consume(at), Err(NonceState::Lapsed));
        assert_eq!(r.used_at, None);
    }

    #[test]
    fn a_used_nonce_stays_used_after_expiry() {
        let mut r = NonceRecord::issue(T0);
        r.consume(T0).unwrap();
        assert_eq!(
            r.state(T0.plus_millis(NONCE_LIFETIME_MS * 2)),
            NonceState::Used
        );
    }

    #[test]
    fn a_configured_lifetime_is_two_seconds_to_a_day() {
        for ok in [2_000, 2_001, NONCE_LIFETIME_MS, 86_399_999, 86_400_000] {
            assert_eq!(check_lifetime_ms(ok), Ok(ok), "{ok}");
        }
        for bad in [i64::MIN, -1, 0, 1, 1_999, 86_400_001, i64::MAX] {
            let err = check_lifetime_ms(bad).unwrap_err();
            assert!(
                err.contains("nonce_lifetime_ms must be 2000 to 86400000"),
                "{bad}: {err}"
            );
        }
        assert_eq!(MAX_NONCE_LIFETIME_MS, 24 * 60 * 60 * 1000);
        // The default lies inside the bounds, and the retention outlives the longest lifetime.
        const { assert!(MIN_NONCE_LIFETIME_MS <= NONCE_LIFETIME_MS) };
        const { assert!(NONCE_LIFETIME_MS <= MAX_NONCE_LIFETIME_MS) };
        const { assert!(NONCE_RETENTION_MS > MAX_NONCE_LIFETIME_MS) };
    }

    #[test]
    fn unused_rows_go_at_expiry_and_used_ones_a_week_later() {
        // Unused: forgettable exactly when it has lapsed, and forgetting it changes nothing a
        // submission could be told but the sentence (lapsed and unknown are both refused).
        let open = NonceRecord::issue(T0);
        assert!(!open.forgettable(open.expires_at.plus_millis(-1)));
        assert_eq!(
            open.state(open.expires_at.plus_millis(-1)),
            NonceState::Open
        );
        assert!(open.forgettable(open.expires_at));
        assert_eq!(open.state(open.expires_at), NonceState::Lapsed);
        for now in [
            T0,
            open.expires_at.plus_millis(-1),
            open.expires_at,
            T0.plus_millis(i64::MAX / 4),
        ] {
            assert_eq!(
                open.forgettable(now),
                open.state(now) == NonceState::Lapsed,
                "{now:?}"
            );
        }
        // Used: kept a week past its expiry, so a late replay still reads as one.
        let mut r = NonceRecord::issue(T0);
        r.consume(T0.plus_millis(1)).unwrap();
        assert!(!r.forgettable(r.expires_at));
        assert!(!r.forgettable(r.expires_at.plus_millis(NONCE_RETENTION_MS - 1)));
        assert_eq!(
            r.state(r.expires_at.plus_millis(NONCE_RETENTION_MS - 1)),
            NonceState::Used
        );
        assert!(r.forgettable(r.expires_at.plus_millis(NONCE_RETENTION_MS)));
        // Retention outlives any receipt (wallet-core caps a receipt's window at 15 minutes).
        const { assert!(NONCE_RETENTION_MS > wallet_core::receipt::MAX_WINDOW_MS) };
    }
}
