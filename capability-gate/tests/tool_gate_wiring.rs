//! The wallet's gate is built on tool-gate: each grant's expiry, uses and end are a
//! `tool_gate::Lease`, the envelope is tool-gate's, the registry and the audit are tool-gate's,
//! and input is read by tool-gate. These tests fail if the wiring is cut (a second copy of the
//! rules would not move with tool-gate's).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use capability_gate::state::MAX_GRANT_MS;
use capability_gate::{GrantState, Host, HostError, Lifetime, audit_registry};
use common::*;
use serde_json::json;
use tool_gate::{Ended, Lease};

/// A stale call after expiry gets tool-gate's code through the wallet's envelope, in the shape
/// tool-gate's own clients check for.
#[test]
fn a_stale_call_after_expiry_gets_tool_gates_code_in_tool_gates_shape() {
    let mut world = World::unlocked();
    let id = world.request(housing_policy("n-1"));
    let tools = world.grant_all(&id, Lifetime::ONE_MINUTE);
    let handle = world.registry.handler(&tools[0]).unwrap().clone();
    world.advance(60_000);
    assert!(world.claim_tools().is_empty(), "expiry withdraws the tool");
    let out = world.gate.execute(&handle, &json!({}), world.now);
    assert!(tool_gate::envelope::is_refusal(&out), "{out}");
    assert_eq!(error_code(&out), Ended::Expired.code());
    let grant = world.gate.grants().next().unwrap();
    assert_eq!(grant.lease().ended, Some(Ended::Expired));
    assert_eq!(grant.state, GrantState::Expired);
}

/// The grant's lease is the one tool-gate issues for the lifetime, and its fields are the
/// wallet's view of it.
#[test]
fn a_grant_holds_the_lease_tool_gate_issues_for_its_lifetime() {
    let mut world = World::unlocked();
    let id = world.request(housing_policy("n-1"));
    world.grant_all(&id, Lifetime::ONE_USE);
    let grant = world.gate.grants().next().unwrap().clone();
    let expected = Lease::new(world.now.millis(), 600_000, Some(1)).unwrap();
    assert_eq!(grant.lease(), &expected);
    assert_eq!(grant.expires_at.millis(), expected.expires_at);
    assert_eq!(grant.uses_left, Some(1));
    assert_eq!(
        world.gate.next_deadline().map(|t| t.millis()),
        Some(expected.expires_at)
    );

    // Its one use is taken through the lease: spent, and the next call is tool-gate's
    // `grant_spent`.
    let name = tool_name(&grant);
    let handle = world.registry.handler(&name).unwrap().clone();
    assert_eq!(world.call(&name, json!({}))["ok"], true);
    let after = world.gate.grants().next().unwrap();
    assert_eq!(after.lease().ended, Some(Ended::Spent));
    assert_eq!((after.state, after.uses_left), (GrantState::Spent, Some(0)));
    let out = world.gate.execute(&handle, &json!({}), world.now);
    assert_eq!(error_code(&out), Ended::Spent.code());
}

/// Tool-gate's bounds are the wallet's: what it would not lease, the person cannot grant.
#[test]
fn lifetimes_are_bounded_by_tool_gates_lease() {
    assert_eq!(MAX_GRANT_MS, tool_gate::MAX_LEASE_MS);
    for (duration_ms, uses) in [
        (tool_gate::MIN_LEASE_MS - 1, None),
        (tool_gate::MAX_LEASE_MS + 1, None),
        (60_000, Some(0)),
    ] {
        let lifetime = Lifetime { duration_ms, uses };
        assert!(!lifetime.is_valid());
        assert!(lifetime.lease(world_now()).is_err());
    }
    let longest = Lifetime {
        duration_ms: tool_gate::MAX_LEASE_MS,
        uses: None,
    };
    assert!(longest.is_valid());
}

fn world_now() -> wallet_core::Timestamp {
    wallet_core::Timestamp::from_millis(T0)
}

fn tool_name(grant: &capability_gate::Grant) -> String {
    capability_gate::gate::tool_name_of(grant)
        .unwrap()
        .as_str()
        .to_owned()
}

/// Revoke and lock end the lease as revoked; the wallet still tells them apart.
#[test]
fn revoke_and_lock_end_the_lease_and_the_wallet_keeps_its_words() {
    let mut world = World::unlocked();
    let id = world.request(housing_policy("n-1"));
    world.grant_all(&id, Lifetime::TEN_MINUTES);
    let first = world.gate.grants().next().unwrap().id.clone();
    world.gate.revoke(&first).unwrap();
    world.gate.lock();
    let states: Vec<(GrantState, Option<Ended>)> = world
        .gate
        .grants()
        .map(|g| (g.state, g.lease().ended))
        .collect();
    assert_eq!(
        states,
        [
            (GrantState::Revoked, Some(Ended::Revoked)),
            (GrantState::Locked, Some(Ended::Revoked)),
        ]
    );
    assert_eq!(world.gate.next_deadline(), None);
}

/// `HostError` is tool-gate's, and the registry is tool-gate's: a refused registration comes back
/// by its tool name, and withdrawing is dropping the registration.
#[test]
fn the_registry_and_its_errors_are_tool_gates() {
    let _same_type: tool_gate::HostError = HostError::Duplicate("x".into());
    let world = World::unlocked();
    // The world's registry holds the persistent tools on this host; a second registry over the
    // same host is refused every one of them, by name.
    let mut second = capability_gate::Registry::new(world.host().clone());
    let refused = second.sync(&world.gate);
    let names: Vec<&str> = refused.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, world.tools());
    assert!(
        refused
            .iter()
            .all(|(n, e)| e == &HostError::Duplicate(n.as_str().to_owned())),
        "{refused:?}"
    );
    assert_eq!(second.registered().count(), 0);
    let mut own = capability_gate::Registry::new(capability_gate::MemoryHost::default());
    assert!(own.sync(&world.gate).is_empty());
    assert_eq!(own.host().list(), world.tools());
    own.clear();
    assert!(own.host().list().is_empty());
}

/// The absence audit's unexpected/missing/forbidden come from tool-gate's audit.
#[test]
fn the_audit_agrees_with_tool_gates() {
    let world = World::unlocked();
    let mut live = world.tools();
    live.push("get_income".to_owned());
    let missing = live.remove(0);
    let wallet = audit_registry(&world.gate, &live);
    let issued: Vec<String> = world
        .gate
        .tools()
        .iter()
        .map(|t| t.name.as_str().to_owned())
        .collect();
    let generic = tool_gate::audit(&issued, &live, &["get_income", "get_date_of_birth"]);
    assert_eq!(wallet.unexpected, generic.unexpected);
    assert_eq!(wallet.missing, generic.missing);
    assert_eq!(wallet.missing, [missing]);
    let income = wallet.fields.iter().find(|f| f.field == "income").unwrap();
    assert!(!income.absent);
    assert!(!wallet.clean());
}

/// Input is read by tool-gate: its depth limit and its words, as the wallet's `invalid_input`.
#[test]
fn input_is_read_by_tool_gate() {
    let deep = format!("{}1{}", "[".repeat(40), "]".repeat(40));
    let wallet = capability_gate::input::from_text(&deep).unwrap_err();
    let generic = tool_gate::input::from_text(&deep).unwrap_err();
    assert_eq!(wallet.code.as_str(), generic.code);
    assert_eq!(wallet.message, generic.message);
    assert_eq!(
        capability_gate::input::MAX_DEPTH,
        tool_gate::input::MAX_DEPTH
    );
}
