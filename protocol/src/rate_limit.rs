//! The per-client rate-limit rule every service applies: a token bucket of `per_minute`
//! requests of burst, refilled evenly over a minute, per client.
//!
//! Clients are told apart by peer IP address only (`X-Forwarded-For` and the like are not
//! trusted): an IPv4 address is one client, an IPv6 client is its /64 (one host usually holds a
//! whole /64, so finer keys would let it mint buckets), and an IPv4-mapped IPv6 address is the
//! IPv4 client ([`client_key`]). Behind a reverse proxy every client shares the proxy's bucket,
//! so rate-limit there.
//!
//! The table is capped: when it is full, idle clients (full buckets) are forgotten first, then
//! the least recently seen eighth. A forgotten client starts again with a full bucket, so an
//! attacker with very many addresses can at worst reset other clients' buckets, never grow the
//! table.
//!
//! Pure: time is an argument, the table is a plain value. The services hold a [`Buckets`]
//! behind a lock (`tacit_service::RateLimiter`) and turn a refusal into their own 429.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};

use wallet_core::Timestamp;

/// One request costs this many units; a bucket refills `per_minute` units per millisecond.
const UNITS_PER_REQUEST: u64 = 60_000;

/// Default cap on tracked clients.
pub const MAX_TRACKED_CLIENTS: usize = 10_000;

/// The fewest clients a table may be capped at.
pub const MIN_TRACKED_CLIENTS: usize = 8;

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

/// Every tracked client's bucket. `per_minute == 0` turns the limit off.
#[derive(Debug, Clone)]
pub struct Buckets {
    per_minute: u64,
    max_clients: usize,
    buckets: HashMap<Option<IpAddr>, Bucket>,
}

impl Buckets {
    /// A table of `per_minute` buckets tracking at most `max_clients` clients (at least
    /// [`MIN_TRACKED_CLIENTS`]).
    pub fn new(per_minute: u32, max_clients: usize) -> Self {
        Self {
            per_minute: u64::from(per_minute),
            max_clients: max_clients.max(MIN_TRACKED_CLIENTS),
            buckets: HashMap::new(),
        }
    }

    /// How many clients are tracked now.
    pub fn tracked(&self) -> usize {
        self.buckets.len()
    }

    pub fn is_enabled(&self) -> bool {
        self.per_minute > 0
    }

    /// Takes one request from `client`'s bucket at `now`, or says how many whole seconds until
    /// one is available (at least 1). `None` is the one bucket for requests without a peer
    /// address.
    pub fn check(&mut self, client: Option<IpAddr>, now: Timestamp) -> Result<(), u64> {
        if !self.is_enabled() {
            return Ok(());
        }
        let client = client.map(client_key);
        let per_minute = self.per_minute;
        let capacity = per_minute.saturating_mul(UNITS_PER_REQUEST);
        let now = now.millis();
        let buckets = &mut self.buckets;
        if buckets.len() >= self.max_clients && !buckets.contains_key(&client) {
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
        bucket.units = refilled(*bucket, now, per_minute, capacity);
        // A clock that steps back neither refills nor drains.
        bucket.updated = bucket.updated.max(now);
        if bucket.units >= UNITS_PER_REQUEST {
            bucket.units -= UNITS_PER_REQUEST;
            Ok(())
        } else {
            let missing = UNITS_PER_REQUEST - bucket.units;
            let wait_ms = missing.div_ceil(per_minute);
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
