//! Property: for any interleaving of grant, revoke, expire, lock, tick and execute on
//! `MemoryHost`, a claim tool is listed if and only if its grant is live, and no execution under
//! a dead grant returns an outcome.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::collections::BTreeSet;

use capability_gate::gate::tool_name_of;
use capability_gate::{GrantState, Handler, InFlight, Lifetime};
use common::*;
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Op {
    Request(bool),
    Grant { lifetime_ms: i64, one_use: bool },
    Revoke(usize),
    Advance(i64),
    Lock,
    Unlock,
    Tick,
    Execute(usize),
    ExecuteStale(usize),
    Start(usize),
    Complete,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<bool>().prop_map(Op::Request),
        (1_000i64..20_000, any::<bool>()).prop_map(|(lifetime_ms, one_use)| Op::Grant {
            lifetime_ms,
            one_use
        }),
        any::<usize>().prop_map(Op::Revoke),
        (0i64..8_000).prop_map(Op::Advance),
        Just(Op::Lock),
        Just(Op::Unlock),
        Just(Op::Tick),
        any::<usize>().prop_map(Op::Execute),
        any::<usize>().prop_map(Op::ExecuteStale),
        any::<usize>().prop_map(Op::Start),
        Just(Op::Complete),
    ]
}

fn live_tools(world: &World) -> BTreeSet<String> {
    world
        .gate
        .grants()
        .filter(|g| g.state == GrantState::Live)
        .filter_map(|g| tool_name_of(g).map(|n| n.as_str().to_owned()))
        .collect()
}

/// Whether the grant behind `handler` could answer at `now`.
fn grant_alive(world: &World, handler: &Handler) -> bool {
    let Handler::Claim { grant, .. } = handler else {
        return true;
    };
    world.gate.grants().any(|g| {
        &g.id == grant
            && g.state == GrantState::Live
            && g.expires_at > world.now
            && g.uses_left != Some(0)
    }) && world.gate.is_unlocked()
}

fn assert_no_outcome_when_dead(out: &serde_json::Value, alive_before: bool, alive_after: bool) {
    if !(alive_before && alive_after) {
        assert_eq!(out["ok"], false, "an outcome under a dead grant: {out}");
        let code = out["error"]["code"].as_str().unwrap();
        assert!(code.starts_with("grant_"), "{code}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn listed_iff_live_and_no_outcome_under_dead_grants(ops in proptest::collection::vec(op(), 1..60)) {
        let mut world = World::unlocked();
        let mut pending: Vec<capability_gate::RequestId> = Vec::new();
        let mut handles: Vec<Handler> = Vec::new();
        let mut in_flight: Option<(InFlight, Handler)> = None;
        let mut nonce = 0;
        for op in ops {
            match op {
                Op::Request(housing) => {
                    nonce += 1;
                    let policy = if housing { housing_policy(&format!("n{nonce}")) } else { pharmacy_policy(&format!("n{nonce}")) };
                    let origin = policy["origin"].as_str().unwrap().to_owned();
                    let out = world.call("request_claims", policy);
                    if out["ok"] == true {
                        pending.push(capability_gate::RequestId::parse(out["result"]["request_id"].as_str().unwrap()).unwrap());
                    } else {
                        // The gate holds at most 8 waiting requests per origin: refused only then.
                        assert_eq!(out["error"]["code"], "too_many_pending", "{out}");
                        let held = pending.iter().filter(|id| world.gate.request(id).is_some_and(|r| r.origin.as_str() == origin)).count();
                        assert!(held >= 8, "refused with {held} waiting from {origin}: {out}");
                    }
                }
                Op::Grant { lifetime_ms, one_use } => {
                    if let Some(id) = pending.pop() {
                        let lifetime = Lifetime { duration_ms: lifetime_ms, uses: one_use.then_some(1) };
                        if world.gate.grant(&id, &[0, 1], lifetime, world.now).is_ok() {
                            world.sync();
                            for name in world.tools_of(&id) {
                                if let Some(def) = world.host().get(&name) {
                                    handles.push(def.handler);
                                }
                            }
                        }
                    }
                }
                Op::Revoke(k) => {
                    let ids: Vec<_> = world.gate.grants().map(|g| g.id.clone()).collect();
                    if !ids.is_empty() {
                        world.gate.revoke(&ids[k % ids.len()]).unwrap();
                        world.sync();
                    }
                }
                Op::Advance(ms) => world.advance(ms),
                Op::Lock => { world.gate.lock(); world.sync(); }
                Op::Unlock => { world.gate.unlock(profile()); world.sync(); }
                Op::Tick => { world.gate.tick(world.now); world.sync(); }
                Op::Execute(k) => {
                    let names: Vec<String> = world.claim_tools();
                    if !names.is_empty() {
                        let name = names[k % names.len()].clone();
                        let handler = world.host().get(&name).unwrap().handler;
                        let alive = grant_alive(&world, &handler);
                        let out = world.call(&name, json!({}));
                        assert_no_outcome_when_dead(&out, alive, alive);
                    }
                }
                Op::ExecuteStale(k) => {
                    if !handles.is_empty() {
                        let handler = handles[k % handles.len()].clone();
                        let alive = grant_alive(&world, &handler);
                        let out = world.gate.execute(&handler, &json!({}), world.now);
                        world.sync();
                        assert_no_outcome_when_dead(&out, alive, alive);
                    }
                }
                Op::Start(k) => {
                    let names: Vec<String> = world.claim_tools();
                    if in_flight.is_none() && !names.is_empty() {
                        let name = names[k % names.len()].clone();
                        let handler = world.host().get(&name).unwrap().handler;
                        let host = world.host().clone();
                        let call = host.start(&mut world.gate, &name, &json!({}), world.now).unwrap();
                        in_flight = Some((call, handler));
                    }
                }
                Op::Complete => {
                    if let Some((call, handler)) = in_flight.take() {
                        let alive = grant_alive(&world, &handler);
                        let out = call.complete(&mut world.gate, world.now);
                        world.sync();
                        assert_no_outcome_when_dead(&out, alive, alive);
                    }
                }
            }
            let listed: BTreeSet<String> = world.claim_tools().into_iter().collect();
            prop_assert_eq!(&listed, &live_tools(&world));
            for g in world.gate.grants().filter(|g| g.state == GrantState::Live) {
                prop_assert!(g.expires_at > world.now, "a live grant past its deadline after tick");
                prop_assert!(world.gate.is_unlocked(), "a live grant while locked");
            }
        }
    }
}
