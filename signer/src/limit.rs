//! A per-client token bucket: `per_minute` requests of burst, refilled evenly over a minute.
//!
//! Clients are told apart by peer IP address only (`X-Forwarded-For` and the like are not
//! trusted). Behind a reverse proxy every client shares the proxy's bucket, so rate-limit there.
//! Time comes from the caller, so tests drive it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};

use wallet_core::Timestamp;

/// One request costs this many units; a bucket refills `per_minute` units per millisecond.
const UNITS_PER_REQUEST: u64 = 60_000;

/// Past this many tracked clients, full buckets (idle clients) are forgotten.
const MAX_TRACKED_CLIENTS: usize = 10_000;

/// The limiter. `per_minute == 0` turns it off.
#[derive(Debug)]
pub struct RateLimiter {
    per_minute: u64,
    buckets: Mutex<HashMap<Option<IpAddr>, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    units: u64,
    updated: i64,
}

impl RateLimiter {
    pub fn new(per_minute: u32) -> Self {
        Self {
            per_minute: u64::from(per_minute),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.per_minute > 0
    }

    /// Takes one request from `client`'s bucket at `now`, or says how many whole seconds until
    /// one is available (at least 1). `None` is the one bucket for requests without a peer
    /// address.
    pub fn check(&self, client: Option<IpAddr>, now: Timestamp) -> Result<(), u64> {
        if !self.is_enabled() {
            return Ok(());
        }
        let capacity = self.per_minute.saturating_mul(UNITS_PER_REQUEST);
        let now = now.millis();
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() >= MAX_TRACKED_CLIENTS && !buckets.contains_key(&client) {
            let per_minute = self.per_minute;
            buckets.retain(|_, b| refilled(*b, now, per_minute, capacity) < capacity);
        }
        let bucket = buckets.entry(client).or_insert(Bucket {
            units: capacity,
            updated: now,
        });
        bucket.units = refilled(*bucket, now, self.per_minute, capacity);
        // A clock that steps back neither refills nor drains.
        bucket.updated = bucket.updated.max(now);
        if bucket.units >= UNITS_PER_REQUEST {
            bucket.units -= UNITS_PER_REQUEST;
            Ok(())
        } else {
            let missing = UNITS_PER_REQUEST - bucket.units;
            let wait_ms = missing.div_ceil(self.per_minute);
            Err(wait_ms.div_ceil(1000).max(1))
        }
    }
}

fn refilled(bucket: Bucket, now: i64, per_minute: u64, capacity: u64) -> u64 {
    let elapsed = u64::try_from(now.saturating_sub(bucket.updated)).unwrap_or(0);
    bucket
        .units
        .saturating_add(elapsed.saturating_mul(per_minute))
        .min(capacity)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: i64) -> Timestamp {
        Timestamp::from_millis(ms)
    }

    #[test]
    fn allows_the_burst_then_refuses_with_a_wait() {
        let limiter = RateLimiter::new(3);
        let ip = Some(IpAddr::from([10, 0, 0, 1]));
        for _ in 0..3 {
            assert_eq!(limiter.check(ip, at(1_000)), Ok(()));
        }
        // 3 a minute: one every 20 s.
        assert_eq!(limiter.check(ip, at(1_000)), Err(20));
        assert_eq!(limiter.check(ip, at(11_000)), Err(10));
        assert_eq!(limiter.check(ip, at(21_000)), Ok(()));
        assert_eq!(limiter.check(ip, at(21_000)), Err(20));
    }

    #[test]
    fn clients_have_their_own_buckets() {
        let limiter = RateLimiter::new(1);
        let a = Some(IpAddr::from([10, 0, 0, 1]));
        let b = Some(IpAddr::from([10, 0, 0, 2]));
        assert_eq!(limiter.check(a, at(0)), Ok(()));
        assert!(limiter.check(a, at(0)).is_err());
        assert_eq!(limiter.check(b, at(0)), Ok(()));
        assert_eq!(limiter.check(None, at(0)), Ok(()));
    }

    #[test]
    fn zero_turns_it_off() {
        let limiter = RateLimiter::new(0);
        for _ in 0..1000 {
            assert_eq!(limiter.check(None, at(0)), Ok(()));
        }
    }

    #[test]
    fn a_clock_stepping_back_does_not_refill() {
        let limiter = RateLimiter::new(1);
        assert_eq!(limiter.check(None, at(100_000)), Ok(()));
        assert!(limiter.check(None, at(0)).is_err());
        assert!(limiter.check(None, at(100_000)).is_err());
        assert_eq!(limiter.check(None, at(160_000)), Ok(()));
    }

    #[test]
    fn idle_clients_are_forgotten_when_the_table_is_full() {
        let limiter = RateLimiter::new(1);
        for i in 0..MAX_TRACKED_CLIENTS as u32 {
            assert_eq!(
                limiter.check(Some(IpAddr::from(i.to_be_bytes())), at(0)),
                Ok(())
            );
        }
        // A minute later every bucket is full again and can be dropped.
        assert_eq!(
            limiter.check(Some(IpAddr::from([1, 2, 3, 4])), at(60_000)),
            Ok(())
        );
        let tracked = limiter.buckets.lock().map(|b| b.len()).unwrap_or(0);
        assert_eq!(tracked, 1);
    }
}
