//! The services' shared limiter: the rule of [`tacit_protocol::rate_limit`] (a token bucket per
//! client, and optionally per IPv6 /48 and overall, the tables capped) behind a lock, so one
//! limiter serves every request of a service. Time comes from the caller, so tests drive it.
//! The signer and the issuer limit per client only ([`RateLimiter::new`]); the site adds the
//! wider tiers ([`RateLimiter::with_budgets`]).

use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};

use tacit_protocol::rate_limit::Buckets;
pub use tacit_protocol::rate_limit::{Budgets, MAX_TRACKED_CLIENTS, client_key, net48_key};
use wallet_core::Timestamp;

/// The limiter. `per_minute == 0` ([`Budgets::OFF`]) turns it off.
#[derive(Debug)]
pub struct RateLimiter {
    enabled: bool,
    buckets: Mutex<Buckets>,
}

impl RateLimiter {
    pub fn new(per_minute: u32) -> Self {
        Self::with_max_clients(per_minute, MAX_TRACKED_CLIENTS)
    }

    /// A limiter tracking at most `max_clients` clients (at least 8).
    pub fn with_max_clients(per_minute: u32, max_clients: usize) -> Self {
        Self::from_buckets(Buckets::new(per_minute, max_clients))
    }

    /// A limiter applying every tier of `budgets` (per client, per IPv6 /48, overall).
    pub fn with_budgets(budgets: Budgets) -> Self {
        Self::from_buckets(Buckets::with_budgets(budgets, MAX_TRACKED_CLIENTS))
    }

    fn from_buckets(buckets: Buckets) -> Self {
        Self {
            enabled: buckets.is_enabled(),
            buckets: Mutex::new(buckets),
        }
    }

    /// How many clients are tracked now.
    pub fn tracked(&self) -> usize {
        self.buckets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .tracked()
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Takes one request from every bucket `client` falls in at `now`, or takes nothing and says
    /// how many whole seconds until one is available in all (at least 1). `None` is the one
    /// client bucket for requests without a peer address.
    pub fn check(&self, client: Option<IpAddr>, now: Timestamp) -> Result<(), u64> {
        if !self.enabled {
            return Ok(());
        }
        self.buckets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .check(client, now)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn one_limiter_is_shared_by_concurrent_requests() {
        // 100 a minute, 8 threads each asking 50 times at one instant: exactly 100 pass.
        let limiter = Arc::new(RateLimiter::new(100));
        let at = Timestamp::from_millis(1_000);
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let limiter = Arc::clone(&limiter);
                std::thread::spawn(move || {
                    (0..50).filter(|_| limiter.check(None, at).is_ok()).count()
                })
            })
            .collect();
        let passed: usize = threads
            .into_iter()
            .map(|t| t.join().unwrap_or_default())
            .sum();
        assert_eq!(passed, 100);
        assert_eq!(limiter.tracked(), 1);
        assert!(limiter.is_enabled());
        assert!(!RateLimiter::new(0).is_enabled());
        assert_eq!(RateLimiter::new(0).check(None, at), Ok(()));
    }

    #[test]
    fn a_tiered_limiter_applies_the_48_and_overall_buckets() {
        let limiter = RateLimiter::with_budgets(Budgets {
            per_client: 1,
            per_48: 2,
            overall: 3,
        });
        let at = Timestamp::from_millis(1_000);
        let ip = |s: &str| Some(s.parse::<IpAddr>().unwrap_or(IpAddr::from([0, 0, 0, 0])));
        assert_eq!(limiter.check(ip("2001:db8:1:1::1"), at), Ok(()));
        assert_eq!(limiter.check(ip("2001:db8:1:2::1"), at), Ok(()));
        // A third /64 of that /48: the /48's next token is 30 s away.
        assert_eq!(limiter.check(ip("2001:db8:1:3::1"), at), Err(30));
        assert_eq!(limiter.check(ip("192.0.2.1"), at), Ok(()));
        // Three passed in all: the overall bucket's next token is 20 s away.
        assert_eq!(limiter.check(ip("192.0.2.2"), at), Err(20));
        assert!(!RateLimiter::with_budgets(Budgets::OFF).is_enabled());
    }
}
