//! The bridge's core, tried as an agent that calls with no vault, a vault that lists odd tools
//! and a connection that drops.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use serde_json::{Value, json};
use tacit_pairing::bridge::{
    BRIDGE_BUSY, Bridge, CALL_TIMEOUT_MS, Event, MAX_PENDING_CALLS, Outgoing, ToBridge, ToVault,
    ToolSpec, VAULT_UNREACHABLE,
};

const T: i64 = 1_800_000_000_000;

fn spec(name: &str, expires_at: Option<i64>) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        definition: json!({ "description": format!("{name} tool"), "inputSchema": { "type": "object" } }),
        expires_at,
    }
}

fn bridge() -> Bridge {
    Bridge::new(vec![
        spec("request_claims", None),
        spec("wallet_status", None),
    ])
}

fn names(bridge: &Bridge) -> Vec<String> {
    bridge.tools().iter().map(|t| t.name.clone()).collect()
}

fn tools_message(tools: Vec<ToolSpec>) -> Vec<u8> {
    serde_json::to_vec(&ToBridge::Tools { tools }).unwrap()
}

fn code(output: &Value) -> &str {
    output["error"]["code"].as_str().unwrap_or_default()
}

#[test]
fn unpaired_the_bridge_shows_only_persistent_tools_and_answers_unreachable_in_words() {
    let mut b = bridge();
    assert_eq!(names(&b), ["request_claims", "wallet_status"]);
    let Outgoing::Answer(out) = b.call("request_claims", json!({}), T) else {
        panic!("a call with no vault was sent")
    };
    assert_eq!(out["ok"], false);
    assert_eq!(out["isError"], true);
    assert_eq!(code(&out), VAULT_UNREACHABLE);
    let words = out["error"]["message"].as_str().unwrap();
    assert!(
        words.contains("open their wallet") && words.contains("do not retry"),
        "{words}"
    );
}

#[test]
fn a_call_is_forwarded_and_its_answer_is_the_vaults_only_once() {
    let mut b = bridge();
    b.connected();
    let Outgoing::Send { call, message } = b.call("wallet_status", json!({"x": 1}), T) else {
        panic!("not sent")
    };
    let sent: ToVault = serde_json::from_slice(&message).unwrap();
    assert_eq!(
        sent,
        ToVault::Call {
            call,
            tool: "wallet_status".into(),
            input: json!({"x": 1})
        }
    );
    let answer = json!({ "ok": true, "result": { "locked": false } });
    let reply = serde_json::to_vec(&ToBridge::Answer {
        call,
        output: answer.clone(),
    })
    .unwrap();
    assert_eq!(
        b.receive(&reply, T).unwrap(),
        vec![Event::Answered {
            call,
            output: answer
        }]
    );
    // The same answer again (a replay inside the session) resolves nothing.
    assert!(b.receive(&reply, T).unwrap().is_empty());
    // Not a message.
    assert!(b.receive(b"{\"kind\":\"grant\"}", T).is_err());
    assert!(b.receive(b"\xff", T).is_err());
}

#[test]
fn claim_tools_follow_the_vaults_list_and_expire_on_time() {
    let mut b = bridge();
    b.connected();
    let events = b
        .receive(
            &tools_message(vec![
                spec("housing_income_below", Some(T + 60_000)),
                spec("housing_resides_in", Some(T + 120_000)),
                // A vault cannot shadow a persistent tool, list a tool twice, or an ended one.
                spec("request_claims", Some(T + 60_000)),
                spec("housing_income_below", Some(T + 999_000)),
                spec("stale", Some(T - 1)),
            ]),
            T,
        )
        .unwrap();
    let [Event::ToolsChanged { added, removed }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert!(removed.is_empty());
    let added: Vec<&str> = added.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(added, ["housing_income_below", "housing_resides_in"]);
    assert_eq!(b.next_deadline(), Some(T + 60_000));
    // The same list again changes nothing.
    let same = tools_message(vec![
        spec("housing_income_below", Some(T + 60_000)),
        spec("housing_resides_in", Some(T + 120_000)),
    ]);
    assert!(b.receive(&same, T).unwrap().is_empty());
    // Expiry withdraws the tool at its time, without the vault.
    assert!(b.tick(T + 59_999).is_empty());
    assert_eq!(
        b.tick(T + 60_000),
        vec![Event::ToolsChanged {
            added: vec![],
            removed: vec!["housing_income_below".into()]
        }]
    );
    // The vault revokes the other: gone from the next list.
    assert_eq!(
        b.receive(&tools_message(vec![]), T + 61_000).unwrap(),
        vec![Event::ToolsChanged {
            added: vec![],
            removed: vec!["housing_resides_in".into()]
        }]
    );
    assert_eq!(names(&b), ["request_claims", "wallet_status"]);
}

#[test]
fn a_dropped_connection_withdraws_every_claim_tool_and_answers_every_waiting_call() {
    let mut b = bridge();
    b.connected();
    b.receive(
        &tools_message(vec![spec("pharmacy_age", Some(T + 60_000))]),
        T,
    )
    .unwrap();
    let Outgoing::Send { call, .. } = b.call("pharmacy_age", json!({}), T) else {
        panic!()
    };
    let events = b.disconnected();
    assert_eq!(events.len(), 2, "{events:?}");
    let Event::Answered { call: c, output } = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!((*c, code(output)), (call, VAULT_UNREACHABLE));
    assert_eq!(
        events[1],
        Event::ToolsChanged {
            added: vec![],
            removed: vec!["pharmacy_age".into()]
        }
    );
    assert_eq!(names(&b), ["request_claims", "wallet_status"]);
    // The vault's late answer resolves nothing.
    let late = serde_json::to_vec(&ToBridge::Answer {
        call,
        output: json!({"ok": true, "result": {"satisfied": true}}),
    })
    .unwrap();
    assert!(b.receive(&late, T).unwrap().is_empty());
}

#[test]
fn an_unanswered_call_times_out_and_too_many_waiting_are_refused() {
    let mut b = bridge();
    b.connected();
    let Outgoing::Send { call, .. } = b.call("wallet_status", json!({}), T) else {
        panic!()
    };
    assert_eq!(b.next_deadline(), Some(T + CALL_TIMEOUT_MS));
    assert!(b.tick(T + CALL_TIMEOUT_MS - 1).is_empty());
    let events = b.tick(T + CALL_TIMEOUT_MS);
    let [Event::Answered { call: c, output }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!((*c, code(output)), (call, VAULT_UNREACHABLE));
    for _ in 0..MAX_PENDING_CALLS {
        assert!(matches!(
            b.call("wallet_status", json!({}), T),
            Outgoing::Send { .. }
        ));
    }
    let Outgoing::Answer(out) = b.call("wallet_status", json!({}), T) else {
        panic!("the 65th waiting call was sent")
    };
    assert_eq!(code(&out), BRIDGE_BUSY);
}

#[test]
fn the_vault_s_unpaired_ends_the_pairing_after_withdrawing_every_tool_and_waiting_call() {
    let mut b = bridge();
    b.connected();
    b.receive(
        &tools_message(vec![spec("pharmacy_age", Some(T + 60_000))]),
        T,
    )
    .unwrap();
    let Outgoing::Send { call, .. } = b.call("pharmacy_age", json!({}), T) else {
        panic!()
    };
    let events = b
        .receive(&serde_json::to_vec(&ToBridge::Unpaired {}).unwrap(), T)
        .unwrap();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(
        matches!(&events[0], Event::Answered { call: c, output } if *c == call && code(output) == VAULT_UNREACHABLE),
        "{events:?}"
    );
    assert_eq!(
        events[1],
        Event::ToolsChanged {
            added: vec![],
            removed: vec!["pharmacy_age".into()]
        }
    );
    // Last, so the host forgets the pairing only once nothing of it is left registered.
    assert_eq!(events[2], Event::Unpaired);
    assert!(!b.is_connected());
    assert_eq!(names(&b), ["request_claims", "wallet_status"]);
    let Outgoing::Answer(out) = b.call("wallet_status", json!({}), T) else {
        panic!("a call was sent after unpairing")
    };
    assert_eq!(code(&out), VAULT_UNREACHABLE);
    // On the wire it is one word, and nothing else rides with it.
    assert_eq!(
        serde_json::to_value(ToBridge::Unpaired {}).unwrap(),
        json!({ "kind": "unpaired" })
    );
    assert!(
        b.receive(br#"{"kind":"unpaired","tools":[]}"#, T).is_err(),
        "an unpaired message with extra fields was read"
    );
}
