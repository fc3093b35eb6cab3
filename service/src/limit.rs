//! A per-client token bucket: `per_minute` requests of burst, refilled evenly over a minute.
//!
//! Clients are told apart by peer IP address only (`X-Forwarded-For` and the like are not
//! trusted): an IPv4 address is one client, an IPv6 client is its /64 (one host usually holds a
//! whole /64, so finer keys would let it mint buckets), and an IPv4-mapped IPv6 address is the
//! IPv4 client. Behind a reverse proxy every client shares the proxy's bucket, so rate-limit
//! there. Time comes from the caller, so tests drive it.
//!
//! The table is capped: when it is full, idle clients (full buckets) are forgotten first, then
//! the least recently seen eighth. A forgotten client starts again with a full bucket, so an
//! attacker with very many addresses can at worst reset other clients' buckets, never grow the
//! table.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Mutex, PoisonError};

use wallet_core::Timestamp;

/// One request costs this many units; a bucket refills `per_minute` units per millisecond.
const UNITS_PER_REQUEST: u64 = 60_000;

/// Default cap on tracked clients.
pub const MAX_TRACKED_CLIENTS: usize = 10_000;

/// The limiter. `per_minute == 0` turns it off.
#[derive(Debug)]
pub struct RateLimiter {
    per_minute: u64,
    max_clients: usize,
    buckets: Mutex<HashMap<Option<IpAddr>, Bucket>>,
}

/// The bucket key for a peer address: IPv4 as is, IPv6 cut to its /64, IPv4-mapped IPv6 as the
/// IPv4 address.
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(Ipv6Addr::from(prefix))
            }
        },
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    units: u64,
    updated: i64,
}

impl RateLimiter {
    pub fn new(per_minute: u32) -> Self {
        Self::with_max_clients(per_minute, MAX_TRACKED_CLIENTS)
    }

    /// A limiter tracking at most `max_clients` clients (at least 8).
    pub fn with_max_clients(per_minute: u32, max_clients: usize) -> Self {
        Self {
            per_minute: u64::from(per_minute),
            max_clients: max_clients.max(8),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// How many clients are tracked now.
    pub fn tracked(&self) -> usize {
        self.buckets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
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
        let client = client.map(client_key);
        let capacity = self.per_minute.saturating_mul(UNITS_PER_REQUEST);
        let now = now.millis();
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() >= self.max_clients && !buckets.contains_key(&client) {
            let per_minute = self.per_minute;
            buckets.retain(|_, b| refilled(*b, now, per_minute, capacity) < capacity);
            if buckets.len() >= self.max_clients {
                // Everyone is active: forget the least recently seen eighth.
                let mut seen: Vec<i64> = buckets.values().map(|b| b.updated).collect();
                let cut = seen.len() / 8;
                let (_, threshold, _) = seen.select_nth_unstable(cut);
                let threshold = *threshold;
                buckets.retain(|_, b| b.updated > threshold);
            }
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
        assert_eq!(limiter.tracked(), 1);
    }

    #[test]
    fn a_full_table_of_active_clients_stays_capped() {
        let limiter = RateLimiter::with_max_clients(1, 64);
        // 10,000 distinct active clients (each spends its one request): the table never grows
        // past the cap, and the oldest are the ones forgotten.
        for i in 0..10_000u32 {
            let ip = Some(IpAddr::from((0x0a00_0000 + i).to_be_bytes()));
            assert_eq!(limiter.check(ip, at(i64::from(i))), Ok(()));
            assert!(limiter.tracked() <= 64, "{} at {i}", limiter.tracked());
        }
        // The most recent client is still remembered and still limited.
        let last = Some(IpAddr::from((0x0a00_0000u32 + 9_999).to_be_bytes()));
        assert!(limiter.check(last, at(10_000)).is_err());
        // The first was forgotten and starts afresh.
        let first = Some(IpAddr::from(0x0a00_0000u32.to_be_bytes()));
        assert_eq!(limiter.check(first, at(10_000)), Ok(()));
    }

    #[test]
    fn ipv6_clients_are_keyed_by_their_64() {
        let limiter = RateLimiter::new(1);
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let same_64: IpAddr = "2001:db8:1:2:ffff:eeee:dddd:cccc".parse().unwrap();
        let next_64: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(limiter.check(Some(a), at(0)), Ok(()));
        assert!(limiter.check(Some(same_64), at(0)).is_err());
        assert_eq!(limiter.check(Some(next_64), at(0)), Ok(()));
        // An IPv4-mapped address is the IPv4 client.
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(limiter.check(Some(v4), at(0)), Ok(()));
        assert!(limiter.check(Some(mapped), at(0)).is_err());
        assert_eq!(
            client_key(same_64),
            "2001:db8:1:2::".parse::<IpAddr>().unwrap()
        );
    }
}
