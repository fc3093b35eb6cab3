//! The rate-limit rule (`tacit_protocol::rate_limit`): burst, refill, per-client buckets, the
//! /64 key for IPv6, a clock stepping back, and a table that never grows past its cap; the
//! per-/48 and overall tiers: many /64s inside one /48 and many /48s are refused with a wait,
//! a refused request takes nothing, and no tier ever passes more than its budget.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};

use proptest::prelude::*;
use tacit_protocol::rate_limit::{
    Buckets, Budgets, MAX_TRACKED_CLIENTS, MIN_TRACKED_CLIENTS, client_key, net48_key,
};
use wallet_core::Timestamp;

fn at(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms)
}

fn limit(per_minute: u32) -> Buckets {
    Buckets::new(per_minute, MAX_TRACKED_CLIENTS)
}

#[test]
fn allows_the_burst_then_refuses_with_a_wait() {
    let mut limiter = limit(3);
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
fn a_wait_is_whole_seconds_and_at_least_one() {
    let mut limiter = limit(2);
    assert_eq!(limiter.check(None, at(0)), Ok(()));
    assert_eq!(limiter.check(None, at(0)), Ok(()));
    assert_eq!(limiter.check(None, at(0)), Err(30));
    // 1 ms before the token is back: still a whole second to wait.
    assert_eq!(limiter.check(None, at(29_999)), Err(1));
    assert_eq!(limiter.check(None, at(30_000)), Ok(()));
}

#[test]
fn clients_have_their_own_buckets() {
    let mut limiter = limit(1);
    let a = Some(IpAddr::from([10, 0, 0, 1]));
    let b = Some(IpAddr::from([10, 0, 0, 2]));
    assert_eq!(limiter.check(a, at(0)), Ok(()));
    assert!(limiter.check(a, at(0)).is_err());
    assert_eq!(limiter.check(b, at(0)), Ok(()));
    assert_eq!(limiter.check(None, at(0)), Ok(()));
    assert!(limiter.check(None, at(0)).is_err());
    assert_eq!(limiter.tracked(), 3);
}

#[test]
fn zero_turns_it_off() {
    let mut limiter = limit(0);
    assert!(!limiter.is_enabled());
    for _ in 0..1000 {
        assert_eq!(limiter.check(None, at(0)), Ok(()));
    }
    assert_eq!(limiter.tracked(), 0);
}

#[test]
fn a_clock_stepping_back_does_not_refill() {
    let mut limiter = limit(1);
    assert_eq!(limiter.check(None, at(100_000)), Ok(()));
    assert!(limiter.check(None, at(0)).is_err());
    assert!(limiter.check(None, at(100_000)).is_err());
    assert_eq!(limiter.check(None, at(160_000)), Ok(()));
}

#[test]
fn idle_clients_are_forgotten_when_the_table_is_full() {
    let mut limiter = limit(1);
    for i in 0..MAX_TRACKED_CLIENTS as u32 {
        assert_eq!(
            limiter.check(Some(IpAddr::from(i.to_be_bytes())), at(0)),
            Ok(())
        );
    }
    assert_eq!(limiter.tracked(), MAX_TRACKED_CLIENTS);
    // A minute later every bucket is full again and can be dropped.
    assert_eq!(
        limiter.check(Some(IpAddr::from([1, 2, 3, 4])), at(60_000)),
        Ok(())
    );
    assert_eq!(limiter.tracked(), 1);
}

#[test]
fn a_full_table_of_active_clients_stays_capped() {
    let mut limiter = Buckets::new(1, 64);
    // 10,000 distinct active clients (each spends its one request): the table never grows past
    // the cap, and the oldest are the ones forgotten.
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
fn the_cap_has_a_floor() {
    let mut limiter = Buckets::new(1, 0);
    for i in 0..MIN_TRACKED_CLIENTS as u8 {
        assert_eq!(
            limiter.check(Some(IpAddr::from([10, 0, 0, i])), at(0)),
            Ok(())
        );
    }
    assert_eq!(limiter.tracked(), MIN_TRACKED_CLIENTS);
}

#[test]
fn ipv6_clients_are_keyed_by_their_64() {
    let mut limiter = limit(1);
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
    assert_eq!(client_key(mapped), v4);
}

fn tiered(per_client: u32, per_48: u32, overall: u32) -> Buckets {
    Buckets::with_budgets(
        Budgets {
            per_client,
            per_48,
            overall,
        },
        MAX_TRACKED_CLIENTS,
    )
}

/// The address `host` of /64 number `net64` inside /48 number `net48` (under 2001:db8::/32).
fn v6(net48: u16, net64: u16, host: u64) -> IpAddr {
    let bits = (0x2001_0db8u128 << 96)
        | (u128::from(net48) << 80)
        | (u128::from(net64) << 64)
        | u128::from(host);
    IpAddr::V6(Ipv6Addr::from(bits))
}

#[test]
fn the_48_key_is_ipv6_only() {
    let a: IpAddr = "2001:db8:1:2:3:4:5:6".parse().unwrap();
    assert_eq!(net48_key(a), Some("2001:db8:1::".parse().unwrap()));
    assert_eq!(net48_key(v6(7, 9, 1)), net48_key(v6(7, 65_535, 2)));
    assert_ne!(net48_key(v6(7, 9, 1)), net48_key(v6(8, 9, 1)));
    assert_eq!(net48_key("192.0.2.7".parse().unwrap()), None);
    assert_eq!(net48_key("::ffff:192.0.2.7".parse().unwrap()), None);
}

#[test]
fn many_64s_inside_one_48_are_refused_with_a_wait() {
    // The site's defaults: 120 a client, 600 a /48, 6,000 overall.
    let mut limiter = Buckets::with_budgets(Budgets::scaled(120), MAX_TRACKED_CLIENTS);
    // A hostile host mints a fresh /64 per request: each has a full client bucket, yet the /48
    // passes 600 and no more.
    for i in 0..600u16 {
        assert_eq!(limiter.check(Some(v6(1, i, 1)), at(0)), Ok(()), "{i}");
    }
    for i in 600..700u16 {
        // 600 a minute: the next token is 100 ms away, a whole second as a wait.
        assert_eq!(limiter.check(Some(v6(1, i, 1)), at(0)), Err(1), "{i}");
    }
    // Another /48 and an IPv4 client are unaffected.
    assert_eq!(limiter.check(Some(v6(2, 0, 1)), at(0)), Ok(()));
    assert_eq!(
        limiter.check(Some(IpAddr::from([192, 0, 2, 1])), at(0)),
        Ok(())
    );
    // The /48 refills at its own rate: 100 ms per request.
    assert_eq!(limiter.check(Some(v6(1, 900, 1)), at(100)), Ok(()));
    assert_eq!(limiter.check(Some(v6(1, 901, 1)), at(100)), Err(1));
    assert_eq!(limiter.tracked_48s(), 2);
}

#[test]
fn many_48s_are_refused_by_the_overall_bucket() {
    let mut limiter = Buckets::with_budgets(Budgets::scaled(120), MAX_TRACKED_CLIENTS);
    for i in 0..6_000u32 {
        let net48 = u16::try_from(i % 60_000).unwrap();
        assert_eq!(limiter.check(Some(v6(net48, 0, 1)), at(0)), Ok(()), "{i}");
    }
    // Every fresh /48, every IPv4 client and the peerless bucket now wait for the overall one.
    assert_eq!(limiter.check(Some(v6(60_001, 0, 1)), at(0)), Err(1));
    assert_eq!(
        limiter.check(Some(IpAddr::from([198, 51, 100, 1])), at(0)),
        Err(1)
    );
    assert_eq!(limiter.check(None, at(0)), Err(1));
    // 6,000 a minute: one every 10 ms.
    assert_eq!(limiter.check(Some(v6(60_002, 0, 1)), at(10)), Ok(()));
    assert_eq!(limiter.check(Some(v6(60_003, 0, 1)), at(10)), Err(1));
}

#[test]
fn a_wait_is_the_longest_of_the_tiers_lacking_a_token() {
    // 1 a client (60 s a token), 2 a /48 (30 s), 3 overall (20 s).
    let mut limiter = tiered(1, 2, 3);
    assert_eq!(limiter.check(Some(v6(1, 1, 1)), at(0)), Ok(()));
    // Its own bucket is empty: 60 s.
    assert_eq!(limiter.check(Some(v6(1, 1, 2)), at(0)), Err(60));
    assert_eq!(limiter.check(Some(v6(1, 2, 1)), at(0)), Ok(()));
    // A fresh /64 in the spent /48: 30 s.
    assert_eq!(limiter.check(Some(v6(1, 3, 1)), at(0)), Err(30));
    assert_eq!(limiter.check(Some(v6(2, 1, 1)), at(0)), Ok(()));
    // A fresh /48: the overall bucket, 20 s.
    assert_eq!(limiter.check(Some(v6(3, 1, 1)), at(0)), Err(20));
    assert_eq!(limiter.check(Some(v6(3, 1, 1)), at(20_000)), Ok(()));
}

#[test]
fn a_refused_request_takes_nothing() {
    // 1 a client, 60 overall: 60 clients spend the overall bucket at once.
    let mut limiter = tiered(1, 0, 60);
    for i in 0..60u8 {
        assert_eq!(
            limiter.check(Some(IpAddr::from([10, 0, 0, i])), at(0)),
            Ok(())
        );
    }
    let late = Some(IpAddr::from([10, 0, 1, 1]));
    // Refused by the overall bucket (1 s), not by its own...
    assert_eq!(limiter.check(late, at(0)), Err(1));
    assert_eq!(limiter.check(late, at(500)), Err(1));
    // ...whose token is still there once the overall one is back.
    assert_eq!(limiter.check(late, at(1_000)), Ok(()));
    assert_eq!(limiter.check(late, at(2_000)), Err(59));
}

#[test]
fn each_tier_can_be_off() {
    // Overall only: one client may take the whole budget.
    let mut limiter = tiered(0, 0, 3);
    assert!(limiter.is_enabled());
    for _ in 0..3 {
        assert_eq!(limiter.check(Some(v6(1, 1, 1)), at(0)), Ok(()));
    }
    assert_eq!(
        limiter.check(Some(IpAddr::from([10, 0, 0, 1])), at(0)),
        Err(20)
    );
    assert_eq!(limiter.tracked(), 0);
    // No /48 tier: the per-client and overall ones still hold.
    let mut limiter = tiered(1, 0, 0);
    assert_eq!(limiter.check(Some(v6(1, 1, 1)), at(0)), Ok(()));
    assert_eq!(limiter.check(Some(v6(1, 2, 1)), at(0)), Ok(()));
    assert_eq!(limiter.tracked_48s(), 0);
    assert!(!tiered(0, 0, 0).is_enabled());
    assert_eq!(Budgets::scaled(0), Budgets::OFF);
    assert_eq!(Buckets::new(7, 8).budgets(), Budgets::per_client(7));
}

#[test]
fn the_default_budgets_and_their_order() {
    assert_eq!(
        Budgets::scaled(120),
        Budgets {
            per_client: 120,
            per_48: 600,
            overall: 6_000
        }
    );
    assert_eq!(Budgets::scaled(u32::MAX).overall, u32::MAX);
    for good in [
        Budgets::scaled(120),
        Budgets::OFF,
        tiered(0, 0, 1).budgets(),
        tiered(5, 0, 5).budgets(),
        tiered(5, 5, 0).budgets(),
        tiered(0, 9, 10).budgets(),
    ] {
        assert_eq!(good.check(), Ok(good));
    }
    for (bad, says) in [
        (
            tiered(10, 9, 100),
            "the per /48 rate limit (9 a minute) must be at least the per client one (10)",
        ),
        (
            tiered(10, 0, 9),
            "the overall rate limit (9 a minute) must be at least the per client one (10)",
        ),
        (
            tiered(1, 10, 9),
            "the overall rate limit (9 a minute) must be at least the per /48 one (10)",
        ),
    ] {
        assert_eq!(
            bad.budgets().check().unwrap_err(),
            format!("{says}, or 0 (off)")
        );
    }
}

proptest! {
    /// Over any sequence of requests at non-decreasing times, one client never gets more than
    /// its burst plus what the elapsed time refills, and a refusal's wait is honest: after it,
    /// the next request passes.
    #[test]
    fn never_more_than_burst_plus_refill(
        per_minute in 1u32..20,
        gaps in proptest::collection::vec(0i64..10_000, 1..200),
    ) {
        let mut limiter = limit(per_minute);
        let mut now = 0i64;
        let mut allowed = 0u64;
        for gap in gaps {
            now += gap;
            match limiter.check(None, at(now)) {
                Ok(()) => allowed += 1,
                Err(wait) => {
                    prop_assert!(wait >= 1);
                    let mut probe = limiter.clone();
                    let later = now + i64::try_from(wait).unwrap() * 1000;
                    prop_assert_eq!(probe.check(None, at(later)), Ok(()));
                }
            }
            let refill = u64::try_from(now).unwrap() * u64::from(per_minute) / 60_000;
            prop_assert!(allowed <= u64::from(per_minute) + refill, "{allowed} by {now}");
        }
    }

    /// Over any sequence of requests from addresses in a few /48s, /64s and IPv4 clients: no
    /// client, /48 or the whole table ever passes more than its budget plus what the elapsed
    /// time refills; a refusal's wait is honest (after it, that request passes); and a refused
    /// request takes nothing (the next requests fare exactly as if it had not been made).
    #[test]
    fn no_tier_passes_more_than_its_budget(
        per_client in 1u32..6,
        per_48_extra in 0u32..10,
        overall_extra in 0u32..20,
        requests in proptest::collection::vec((0u8..12, 0i64..3_000), 1..120),
    ) {
        let per_48 = per_client + per_48_extra;
        let overall = per_48 + overall_extra;
        let mut limiter = tiered(per_client, per_48, overall);
        // Two /48s of three /64s (five addresses each: two hosts in two /64s and one in a
        // third), and two IPv4 clients.
        let address = |who: u8| -> IpAddr {
            if who >= 10 {
                IpAddr::from([192, 0, 2, who])
            } else {
                v6(u16::from(who / 5), u16::from(who % 5 / 2), u64::from(who % 2) + 1)
            }
        };
        let mut now = 0i64;
        let mut passed: HashMap<String, u64> = HashMap::new();
        for (index, (who, gap)) in requests.iter().enumerate() {
            now += gap;
            let ip = address(*who);
            let before = limiter.clone();
            match limiter.check(Some(ip), at(now)) {
                Ok(()) => {
                    *passed.entry(format!("client {}", client_key(ip))).or_default() += 1;
                    if let Some(net) = net48_key(ip) {
                        *passed.entry(format!("48 {net}")).or_default() += 1;
                    }
                    *passed.entry("overall".to_owned()).or_default() += 1;
                }
                Err(wait) => {
                    prop_assert!(wait >= 1);
                    let later = now + i64::try_from(wait).unwrap() * 1000;
                    prop_assert_eq!(limiter.clone().check(Some(ip), at(later)), Ok(()));
                    // The next requests fare the same on the table before the refusal.
                    let (mut with, mut without) = (limiter.clone(), before);
                    let mut then = now;
                    for (who, gap) in requests.iter().skip(index + 1).take(20) {
                        then += gap;
                        let ip = Some(address(*who));
                        prop_assert_eq!(with.check(ip, at(then)), without.check(ip, at(then)));
                    }
                }
            }
            let elapsed = u64::try_from(now).unwrap();
            for (key, count) in &passed {
                let budget = if key == "overall" {
                    overall
                } else if key.starts_with("48") {
                    per_48
                } else {
                    per_client
                };
                let most = u64::from(budget) + elapsed * u64::from(budget) / 60_000;
                prop_assert!(*count <= most, "{key}: {count} by {now}");
            }
        }
    }
}
