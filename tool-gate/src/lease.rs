//! A lease: how long a grant lives and how often it may be used.

use serde::Serialize;

/// Shortest lease: one second.
pub const MIN_LEASE_MS: i64 = 1_000;
/// Longest lease: one day.
pub const MAX_LEASE_MS: i64 = 24 * 60 * 60 * 1000;

/// Why a lease ended. Each has the refusal code a stale call gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// Someone revoked it.
    Revoked,
    /// Its time ran out.
    Expired,
    /// Its last use was taken.
    Spent,
}

impl Ended {
    /// The refusal code a call on an ended lease gets.
    pub fn code(self) -> &'static str {
        match self {
            Ended::Revoked => "grant_revoked",
            Ended::Expired => "grant_expired",
            Ended::Spent => "grant_spent",
        }
    }

    /// The sentence a call on an ended lease gets.
    pub fn message(self) -> &'static str {
        match self {
            Ended::Revoked => "The grant for this tool was revoked; the tool no longer exists.",
            Ended::Expired => "The grant for this tool expired; the tool no longer exists.",
            Ended::Spent => "The grant for this tool was used up; the tool no longer exists.",
        }
    }
}

/// Why a lease cannot be issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    #[error("a lease lasts from {MIN_LEASE_MS} ms to {MAX_LEASE_MS} ms, not {0} ms")]
    Duration(i64),
    #[error("a lease with zero uses could never be used")]
    NoUses,
}

/// A live or ended grant over one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    pub granted_at: i64,
    pub expires_at: i64,
    /// `None`: any number of uses until expiry.
    pub uses_left: Option<u32>,
    /// `None` while live.
    pub ended: Option<Ended>,
}

impl Lease {
    /// A lease from `now` for `duration_ms`, with `uses` uses (`None`: unlimited).
    pub fn new(now: i64, duration_ms: i64, uses: Option<u32>) -> Result<Lease, LeaseError> {
        if !(MIN_LEASE_MS..=MAX_LEASE_MS).contains(&duration_ms) {
            return Err(LeaseError::Duration(duration_ms));
        }
        if uses == Some(0) {
            return Err(LeaseError::NoUses);
        }
        Ok(Lease {
            granted_at: now,
            expires_at: now.saturating_add(duration_ms),
            uses_left: uses,
            ended: None,
        })
    }

    /// Whether the lease may be used at `now`; if not, why.
    pub fn check(&self, now: i64) -> Result<(), Ended> {
        match self.ended {
            Some(ended) => Err(ended),
            None if now >= self.expires_at => Err(Ended::Expired),
            None if self.uses_left == Some(0) => Err(Ended::Spent),
            None => Ok(()),
        }
    }

    /// Checks the lease at `now` and takes one use. Ends the lease when it expired (recording
    /// that) or when this was its last use.
    pub fn take_use(&mut self, now: i64) -> Result<(), Ended> {
        if let Err(ended) = self.check(now) {
            self.ended = Some(ended);
            return Err(ended);
        }
        if let Some(uses) = self.uses_left.as_mut() {
            *uses -= 1;
            if *uses == 0 {
                self.ended = Some(Ended::Spent);
            }
        }
        Ok(())
    }

    /// Ends the lease if it is past its expiry; returns whether it ended now.
    pub fn expire(&mut self, now: i64) -> bool {
        if self.ended.is_none() && now >= self.expires_at {
            self.ended = Some(Ended::Expired);
            return true;
        }
        false
    }

    /// Ends the lease; returns whether it was live.
    pub fn revoke(&mut self) -> bool {
        if self.ended.is_none() {
            self.ended = Some(Ended::Revoked);
            return true;
        }
        false
    }

    pub fn is_live(&self) -> bool {
        self.ended.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_refused() {
        assert_eq!(Lease::new(0, 999, None), Err(LeaseError::Duration(999)));
        assert_eq!(
            Lease::new(0, MAX_LEASE_MS + 1, None),
            Err(LeaseError::Duration(MAX_LEASE_MS + 1))
        );
        assert_eq!(Lease::new(0, 60_000, Some(0)), Err(LeaseError::NoUses));
    }

    #[test]
    fn a_one_use_lease_answers_once() {
        let mut lease = Lease::new(0, 60_000, Some(1)).unwrap();
        assert_eq!(lease.take_use(10), Ok(()));
        assert_eq!(lease.take_use(11), Err(Ended::Spent));
        assert!(!lease.is_live());
    }

    #[test]
    fn expiry_is_checked_at_use_even_without_a_tick() {
        let mut lease = Lease::new(0, 1_000, None).unwrap();
        assert_eq!(lease.take_use(999), Ok(()));
        assert_eq!(lease.take_use(1_000), Err(Ended::Expired));
        assert_eq!(lease.ended, Some(Ended::Expired));
    }

    #[test]
    fn revoke_wins_over_later_expiry() {
        let mut lease = Lease::new(0, 1_000, None).unwrap();
        assert!(lease.revoke());
        assert!(!lease.expire(5_000));
        assert_eq!(lease.check(5_000), Err(Ended::Revoked));
    }
}
