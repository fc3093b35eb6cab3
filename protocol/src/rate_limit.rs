//! The rate-limit rule every service applies: token buckets of `per_minute` requests of burst,
//! refilled evenly over a minute, at up to three tiers ([`Budgets`]):
//!
//! - **per client**: an IPv4 address is one client, an IPv6 client is its /64 (one host usually
//!   holds a whole /64, so finer keys would let it mint buckets), and an IPv4-mapped IPv6 address
//!   is the IPv4 client ([`client_key`]);
//! - **per IPv6 /48** ([`net48_key`]), with a larger budget: a site (or a hostile host) is
//!   usually handed a /48, inside which it can mint 65,536 /64s, each a fresh client bucket;
//! - **overall**: one bucket for every request the service limits, whoever sends it, so very
//!   many /48s (or IPv4 addresses) together still get at most this many.
//!
//! A request passes only if every tier that applies to it has a token, and then takes one from
//! each; a refused request takes nothing, and its wait is the longest of the tiers it lacks a
//! token at (whole seconds, at least 1), after which it passes. A tier's budget of 0 turns that
//! tier off. `X-Forwarded-For` and the like are not trusted: behind a reverse proxy every client
//! shares the proxy's bucket, so rate-limit there. Loopback is not exempt: it is one client.
//!
//! The per-client and per-/48 tables are capped: when one is full, idle keys (full buckets) are
//! forgotten first, then the least recently seen eighth. A forgotten key starts again with a
//! full bucket, so an attacker with very many addresses can at worst reset other keys' buckets,
//! never grow the table, and never get past the overall bucket, which is never forgotten.
//!
//! Pure: time is an argument, the table is a plain value. The services hold a [`Buckets`]
//! behind a lock (`tacit_service::RateLimiter`) and turn a refusal into their own 429.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, Ipv6Addr};

use wallet_core::Timestamp;

/// One request costs this many units; a bucket refills `per_minute` units per millisecond.
const UNITS_PER_REQUEST: u64 = 60_000;

/// Default cap on tracked clients (and, separately, on tracked /48s).
pub const MAX_TRACKED_CLIENTS: usize = 10_000;

/// The fewest clients a table may be capped at.
pub const MIN_TRACKED_CLIENTS: usize = 8;

/// The default per-/48 budget is this many times the per-client one ([`Budgets::scaled`]).
pub const PER_48_FACTOR: u32 = 5;

/// The default overall budget is this many times the per-client one ([`Budgets::scaled`]).
pub const OVERALL_FACTOR: u32 = 50;

/// The bucket key for a peer address: IPv4 as is, IPv6 cut to its /64, IPv4-mapped IPv6 as the
/// IPv4 address.
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(prefix(v6, 64)),
        },
    }
}

/// The per-/48 bucket key for a peer address: an IPv6 address (not IPv4-mapped) cut to its
/// /48; none for IPv4.
pub fn net48_key(ip: IpAddr) -> Option<Ipv6Addr> {
    match ip {
        IpAddr::V4(_) => None,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(_) => None,
            None => Some(prefix(v6, 48)),
        },
    }
}

fn prefix(v6: Ipv6Addr, bits: u32) -> Ipv6Addr {
    Ipv6Addr::from(u128::from(v6) & !(u128::MAX >> bits))
}

/// Requests per minute at each tier (burst of this many, refilled evenly over a minute); 0 turns
/// a tier off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    /// Per client: an IPv4 address, an IPv6 /64 ([`client_key`]).
    pub per_client: u32,
    /// Per IPv6 /48 ([`net48_key`]), every client inside it together.
    pub per_48: u32,
    /// Every request, whoever sends it.
    pub overall: u32,
}

impl Budgets {
    /// No limit at all.
    pub const OFF: Self = Self {
        per_client: 0,
        per_48: 0,
        overall: 0,
    };

    /// Only the per-client tier, `per_minute` (the signer's and the issuer's limit).
    pub const fn per_client(per_minute: u32) -> Self {
        Self {
            per_client: per_minute,
            per_48: 0,
            overall: 0,
        }
    }

    /// `per_minute` per client, [`PER_48_FACTOR`] times that per /48 and [`OVERALL_FACTOR`]
    /// times that overall (the site's defaults); 0 is [`Budgets::OFF`].
    pub const fn scaled(per_minute: u32) -> Self {
        Self {
            per_client: per_minute,
            per_48: per_minute.saturating_mul(PER_48_FACTOR),
            overall: per_minute.saturating_mul(OVERALL_FACTOR),
        }
    }

    /// Whether any tier is on.
    pub const fn is_enabled(self) -> bool {
        self.per_client > 0 || self.per_48 > 0 || self.overall > 0
    }

    /// These budgets if a wider tier never has less than a narrower one (tiers that are off
    /// aside): a /48 holds its clients, the whole service its /48s. The error is the sentence a
    /// configuration's reader is told.
    pub fn check(self) -> Result<Self, String> {
        let tiers = [
            ("per client", self.per_client),
            ("per /48", self.per_48),
            ("overall", self.overall),
        ];
        for (i, (wide, wide_budget)) in tiers.iter().enumerate() {
            for (narrow, narrow_budget) in &tiers[..i] {
                if *wide_budget > 0 && *narrow_budget > *wide_budget {
                    return Err(format!(
                        "the {wide} rate limit ({wide_budget} a minute) must be at least the \
                         {narrow} one ({narrow_budget}), or 0 (off)"
                    ));
                }
            }
        }
        Ok(self)
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    units: u64,
    updated: i64,
}

/// One tier's buckets, keyed by `K`.
#[derive(Debug, Clone)]
struct Tier<K> {
    per_minute: u64,
    buckets: HashMap<K, Bucket>,
}

impl<K: Eq + Hash + Copy> Tier<K> {
    fn new(per_minute: u32) -> Self {
        Self {
            per_minute: u64::from(per_minute),
            buckets: HashMap::new(),
        }
    }

    /// Makes room for `key` in a table capped at `max` keys, refills its bucket to `now`, and
    /// returns how many milliseconds until it holds a request (0: it does now; always 0 when
    /// the tier is off). Takes nothing.
    fn prepare(&mut self, key: K, now: i64, max: usize) -> u64 {
        let per_minute = self.per_minute;
        if per_minute == 0 {
            return 0;
        }
        let capacity = per_minute.saturating_mul(UNITS_PER_REQUEST);
        let buckets = &mut self.buckets;
        if buckets.len() >= max && !buckets.contains_key(&key) {
            buckets.retain(|_, b| refilled(*b, now, per_minute, capacity) < capacity);
            if buckets.len() >= max {
                // Everyone is active: forget the least recently seen eighth.
                let mut seen: Vec<i64> = buckets.values().map(|b| b.updated).collect();
                let cut = seen.len() / 8;
                let (_, threshold, _) = seen.select_nth_unstable(cut);
                let threshold = *threshold;
                buckets.retain(|_, b| b.updated > threshold);
            }
        }
        let bucket = buckets.entry(key).or_insert(Bucket {
            units: capacity,
            updated: now,
        });
        bucket.units = refilled(*bucket, now, per_minute, capacity);
        // A clock that steps back neither refills nor drains.
        bucket.updated = bucket.updated.max(now);
        if bucket.units >= UNITS_PER_REQUEST {
            0
        } else {
            (UNITS_PER_REQUEST - bucket.units).div_ceil(per_minute)
        }
    }

    /// Takes one request from `key`'s bucket, which [`Tier::prepare`] found holding one.
    fn take(&mut self, key: K) {
        if let Some(bucket) = self.buckets.get_mut(&key) {
            bucket.units = bucket.units.saturating_sub(UNITS_PER_REQUEST);
        }
    }
}

/// Every tier's buckets. [`Budgets::OFF`] turns the limit off.
#[derive(Debug, Clone)]
pub struct Buckets {
    budgets: Budgets,
    max_clients: usize,
    clients: Tier<Option<IpAddr>>,
    nets: Tier<Ipv6Addr>,
    overall: Tier<()>,
}

impl Buckets {
    /// A table of `per_minute` buckets per client (no per-/48 or overall tier) tracking at
    /// most `max_clients` clients (at least [`MIN_TRACKED_CLIENTS`]).
    pub fn new(per_minute: u32, max_clients: usize) -> Self {
        Self::with_budgets(Budgets::per_client(per_minute), max_clients)
    }

    /// Buckets at every tier of `budgets`, each table tracking at most `max_clients` keys (at
    /// least [`MIN_TRACKED_CLIENTS`]).
    pub fn with_budgets(budgets: Budgets, max_clients: usize) -> Self {
        Self {
            budgets,
            max_clients: max_clients.max(MIN_TRACKED_CLIENTS),
            clients: Tier::new(budgets.per_client),
            nets: Tier::new(budgets.per_48),
            overall: Tier::new(budgets.overall),
        }
    }

    /// The budgets this table applies.
    pub fn budgets(&self) -> Budgets {
        self.budgets
    }

    /// How many clients are tracked now.
    pub fn tracked(&self) -> usize {
        self.clients.buckets.len()
    }

    /// How many IPv6 /48s are tracked now.
    pub fn tracked_48s(&self) -> usize {
        self.nets.buckets.len()
    }

    pub fn is_enabled(&self) -> bool {
        self.budgets.is_enabled()
    }

    /// Takes one request from every bucket `client` falls in at `now` (its own, its /48's, the
    /// overall one), or takes nothing and says how many whole seconds until all of them hold
    /// one (at least 1). `None` is the one client bucket for requests without a peer address
    /// (it has no /48, and counts overall).
    pub fn check(&mut self, client: Option<IpAddr>, now: Timestamp) -> Result<(), u64> {
        if !self.is_enabled() {
            return Ok(());
        }
        let now = now.millis();
        let max = self.max_clients;
        let key = client.map(client_key);
        let net = client.and_then(net48_key);
        let mut wait_ms = self.clients.prepare(key, now, max);
        if let Some(net) = net {
            wait_ms = wait_ms.max(self.nets.prepare(net, now, max));
        }
        wait_ms = wait_ms.max(self.overall.prepare((), now, max));
        if wait_ms > 0 {
            return Err(wait_ms.div_ceil(1000).max(1));
        }
        self.clients.take(key);
        if let Some(net) = net {
            self.nets.take(net);
        }
        self.overall.take(());
        Ok(())
    }
}

fn refilled(bucket: Bucket, now: i64, per_minute: u64, capacity: u64) -> u64 {
    let elapsed = u64::try_from(now.saturating_sub(bucket.updated)).unwrap_or(0);
    bucket
        .units
        .saturating_add(elapsed.saturating_mul(per_minute))
        .min(capacity)
}
