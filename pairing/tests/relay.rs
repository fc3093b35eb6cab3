//! The relay's rules, tried as a stranger, a flooder and an offline vault would.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use tacit_pairing::Role;
use tacit_pairing::relay::{
    Delivery, Doorbell, FRAMES_PER_MINUTE, Holder, Join, MAILBOX_TTL_MS, MAX_IN_FLIGHT,
    MAX_QUEUED_BYTES, MAX_QUEUED_FRAMES, MAX_RELAYED_FRAME, Relay, RelayRefusal, Route, SendBudget,
    expires_at, join_rule, mailbox_admits, parse_side, side_name, socket_url,
};

fn route(n: u8) -> Route {
    Route::parse(&format!("{n:02x}").repeat(16)).unwrap()
}

const T: i64 = 1_800_000_000_000;

#[test]
fn frames_go_to_the_other_side_and_wait_while_it_is_offline() {
    let mut relay = Relay::new();
    let r = route(1);
    assert!(relay.join(&r, Role::Bridge, 1, T).unwrap().is_empty());
    // The vault is offline: the bridge's frames wait in its mailbox, in order.
    for i in 0..3u8 {
        assert_eq!(
            relay.send(&r, Role::Bridge, 1, vec![i; 10], T).unwrap(),
            Delivery::Queued
        );
    }
    assert_eq!(relay.waiting(&r, Role::Vault), (3, 30));
    let waiting = relay.join(&r, Role::Vault, 2, T + 1000).unwrap();
    assert_eq!(waiting, vec![vec![0; 10], vec![1; 10], vec![2; 10]]);
    assert_eq!(relay.waiting(&r, Role::Vault), (0, 0));
    // Both connected: straight through, both ways.
    assert_eq!(
        relay.send(&r, Role::Vault, 2, vec![9], T).unwrap(),
        Delivery::Forward(1)
    );
    assert_eq!(
        relay.send(&r, Role::Bridge, 1, vec![8], T).unwrap(),
        Delivery::Forward(2)
    );
    // Everyone gone, nothing waiting: the route is forgotten.
    relay.leave(&r, Role::Bridge, 1);
    relay.leave(&r, Role::Vault, 2);
    assert_eq!(relay.routes(), 0);
}

#[test]
fn a_stranger_cannot_take_a_connected_side_nor_send_as_one() {
    let mut relay = Relay::new();
    let r = route(2);
    relay.join(&r, Role::Vault, 1, T).unwrap();
    assert_eq!(
        relay.join(&r, Role::Vault, 66, T).unwrap_err(),
        RelayRefusal::Busy
    );
    // Sending as a side it did not join, or on a route it did not join.
    assert_eq!(
        relay.send(&r, Role::Vault, 66, vec![1], T).unwrap_err(),
        RelayRefusal::NotJoined
    );
    assert_eq!(
        relay.send(&r, Role::Bridge, 66, vec![1], T).unwrap_err(),
        RelayRefusal::NotJoined
    );
    assert_eq!(
        relay
            .send(&route(3), Role::Bridge, 1, vec![1], T)
            .unwrap_err(),
        RelayRefusal::NotJoined
    );
    // A stranger's leave does not disconnect the side.
    relay.leave(&r, Role::Vault, 66);
    relay.join(&r, Role::Bridge, 2, T).unwrap();
    assert_eq!(
        relay.send(&r, Role::Bridge, 2, vec![1], T).unwrap(),
        Delivery::Forward(1)
    );
    for bad in ["", "zz", &"A".repeat(32), &"a".repeat(31), &"a".repeat(33)] {
        assert_eq!(
            Route::parse(bad).unwrap_err(),
            RelayRefusal::BadRoute,
            "{bad}"
        );
    }
}

#[test]
fn a_mailbox_is_bounded_and_its_frames_expire() {
    let mut relay = Relay::new();
    let r = route(4);
    relay.join(&r, Role::Bridge, 1, T).unwrap();
    for _ in 0..MAX_QUEUED_FRAMES {
        relay.send(&r, Role::Bridge, 1, vec![0; 4], T).unwrap();
    }
    assert_eq!(
        relay.send(&r, Role::Bridge, 1, vec![0; 4], T).unwrap_err(),
        RelayRefusal::MailboxFull
    );
    // After the time to live they are dropped, and room comes back.
    assert!(
        relay
            .send(&r, Role::Bridge, 1, vec![7; 4], T + MAILBOX_TTL_MS)
            .is_ok()
    );
    assert_eq!(relay.waiting(&r, Role::Vault), (1, 4));
    let waiting = relay.join(&r, Role::Vault, 2, T + MAILBOX_TTL_MS).unwrap();
    assert_eq!(waiting, vec![vec![7; 4]]);

    // Bytes are bounded too.
    let r = route(5);
    relay.join(&r, Role::Vault, 3, T).unwrap();
    let big = MAX_RELAYED_FRAME;
    let fit = MAX_QUEUED_BYTES / big;
    for _ in 0..fit {
        relay.send(&r, Role::Vault, 3, vec![0; big], T).unwrap();
    }
    assert_eq!(
        relay.send(&r, Role::Vault, 3, vec![0; big], T).unwrap_err(),
        RelayRefusal::MailboxFull
    );
    assert_eq!(
        relay
            .send(&r, Role::Vault, 3, vec![0; MAX_RELAYED_FRAME + 1], T)
            .unwrap_err(),
        RelayRefusal::TooLarge
    );
    // Expired frames of a route nobody is on let it go.
    relay.leave(&r, Role::Vault, 3);
    assert_eq!(relay.routes(), 2);
    relay.expire(T + MAILBOX_TTL_MS);
    assert_eq!(relay.waiting(&r, Role::Bridge), (0, 0));
    assert_eq!(relay.routes(), 1, "route 4 still has both sides connected");
}

#[test]
fn a_flooding_side_is_held_to_its_rate_and_the_other_side_is_not() {
    let mut relay = Relay::new();
    let r = route(6);
    relay.join(&r, Role::Bridge, 1, T).unwrap();
    relay.join(&r, Role::Vault, 2, T).unwrap();
    for _ in 0..FRAMES_PER_MINUTE {
        relay.send(&r, Role::Bridge, 1, vec![1], T).unwrap();
    }
    let refused = relay.send(&r, Role::Bridge, 1, vec![1], T).unwrap_err();
    let RelayRefusal::RateLimited { retry_after_ms } = refused else {
        panic!("{refused:?}")
    };
    assert!(retry_after_ms > 0 && retry_after_ms <= 60_000 / i64::from(FRAMES_PER_MINUTE) + 1);
    assert_eq!(refused.code(), "rate_limited");
    // The vault still talks.
    assert!(relay.send(&r, Role::Vault, 2, vec![1], T).is_ok());
    // After the wait, one more.
    assert!(
        relay
            .send(&r, Role::Bridge, 1, vec![1], T + retry_after_ms)
            .is_ok()
    );
    // A reconnect does not refill the bucket.
    relay.leave(&r, Role::Bridge, 1);
    relay.join(&r, Role::Bridge, 3, T + retry_after_ms).unwrap();
    assert!(
        relay
            .send(&r, Role::Bridge, 3, vec![1], T + retry_after_ms)
            .is_err()
    );
}

#[test]
fn a_relay_origin_becomes_its_websocket_url() {
    assert_eq!(
        socket_url("http://127.0.0.1:8795/", "ab", Role::Bridge),
        "ws://127.0.0.1:8795/v1/relay/ab/bridge"
    );
    assert_eq!(
        socket_url("https://relay.example", "ab", Role::Vault),
        "wss://relay.example/v1/relay/ab/vault"
    );
}

#[test]
fn the_shared_mailbox_has_the_same_bounds_and_more_room_while_the_side_is_connected() {
    // Offline: the pure mailbox's bounds, frame by frame and byte by byte.
    assert!(mailbox_admits(false, MAX_QUEUED_FRAMES - 1, 0, 1).is_ok());
    assert_eq!(
        mailbox_admits(false, MAX_QUEUED_FRAMES, 0, 1).unwrap_err(),
        RelayRefusal::MailboxFull
    );
    assert!(mailbox_admits(false, 0, MAX_QUEUED_BYTES - 10, 10).is_ok());
    assert_eq!(
        mailbox_admits(false, 0, MAX_QUEUED_BYTES - 10, 11).unwrap_err(),
        RelayRefusal::MailboxFull
    );
    // Connected: the in-flight queue, whatever the bytes.
    assert!(mailbox_admits(true, MAX_QUEUED_FRAMES + 10, MAX_QUEUED_BYTES, 1000).is_ok());
    assert_eq!(
        mailbox_admits(true, MAX_IN_FLIGHT, 0, 1).unwrap_err(),
        RelayRefusal::MailboxFull
    );
    for connected in [false, true] {
        assert_eq!(
            mailbox_admits(connected, 0, 0, MAX_RELAYED_FRAME + 1).unwrap_err(),
            RelayRefusal::TooLarge
        );
        assert!(mailbox_admits(connected, 0, 0, MAX_RELAYED_FRAME).is_ok());
    }
    // A frame lives exactly the time to live, as in the pure relay.
    assert_eq!(expires_at(T), T + MAILBOX_TTL_MS);
    assert_eq!(expires_at(i64::MAX), i64::MAX);
}

#[test]
fn one_connection_per_side_across_instances_and_a_dead_claim_is_replaced() {
    assert_eq!(join_rule(Holder::Nobody), Ok(Join::Take));
    assert_eq!(join_rule(Holder::Live), Err(RelayRefusal::Busy));
    assert_eq!(join_rule(Holder::Dead), Ok(Join::Replace));
    assert_eq!(RelayRefusal::Unavailable.code(), "unavailable");
}

#[test]
fn a_send_budget_is_the_pure_relays_rate() {
    let mut budget = SendBudget::new(T);
    assert!(budget.is_full(T));
    for _ in 0..FRAMES_PER_MINUTE {
        budget.take(T).unwrap();
    }
    assert!(!budget.is_full(T));
    let RelayRefusal::RateLimited { retry_after_ms } = budget.take(T).unwrap_err() else {
        panic!("not rate limited")
    };
    budget.take(T + retry_after_ms).unwrap();
    assert!(budget.is_full(T + 60_000 + retry_after_ms));
}

#[test]
fn a_doorbell_names_a_side_and_nothing_else_and_junk_is_not_one() {
    let r = route(7);
    for bell in [
        Doorbell::Frames {
            route: r.clone(),
            to: Role::Vault,
        },
        Doorbell::Joined {
            route: r.clone(),
            role: Role::Bridge,
        },
        Doorbell::Left {
            route: r.clone(),
            role: Role::Vault,
        },
    ] {
        let text = bell.encode();
        assert!(text.len() <= 41, "{text}");
        assert_eq!(Doorbell::parse(&text), Some(bell));
    }
    assert_eq!(
        Doorbell::Frames {
            route: r.clone(),
            to: Role::Bridge
        }
        .encode(),
        format!("f {} bridge", r.as_str())
    );
    let good = format!("f {} vault", r.as_str());
    for bad in [
        String::new(),
        "f".to_owned(),
        format!("x {} vault", r.as_str()),
        format!("f {} admin", r.as_str()),
        format!("f {} vault extra", r.as_str()),
        format!("f {} vault", "A".repeat(32)),
        format!("f  {} vault", r.as_str()),
        good.replace(' ', "  "),
    ] {
        assert_eq!(Doorbell::parse(&bad), None, "{bad:?}");
    }
    for role in [Role::Bridge, Role::Vault] {
        assert_eq!(parse_side(side_name(role)), Some(role));
    }
    assert_eq!(parse_side("Vault"), None);
}
