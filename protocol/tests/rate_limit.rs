//! The rate-limit rule (`tacit_protocol::rate_limit`): burst, refill, per-client buckets, the
//! /64 key for IPv6, a clock stepping back, and a table that never grows past its cap.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::IpAddr;

use proptest::prelude::*;
use tacit_protocol::rate_limit::{Buckets, MAX_TRACKED_CLIENTS, MIN_TRACKED_CLIENTS, client_key};
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
}
