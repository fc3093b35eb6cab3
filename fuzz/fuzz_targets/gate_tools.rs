//! What an agent sends a WebMCP tool: arbitrary JSON into every tool of a live wallet, through
//! `Gate::execute`, the call every host makes.
//!
//! Each input is parsed as JSON (inputs that are not JSON are skipped: the browser hands the
//! gate a parsed value) and executed, in order, by every handler the wallet can have registered:
//! the five persistent tools; live claim tools from a real grant (income, district, and a
//! one-time age grant); a claim handle from an older lock epoch; one whose grant never existed;
//! and, after the clock moves past every grant's expiry, a live handle again. The wallet is
//! rebuilt for every input (unlocked, a granted housing request with one answer on record, a
//! held, a released and a refused proposal, a denied and a held pharmacy request), so runs are
//! reproducible.
//!
//! The gate is made as the page makes it ([`Gate::with_secret`]: per-audience session ids,
//! pseudo-random ids; a fixed secret here, so runs stay reproducible).
//!
//! Asserts, for every output: it is `{ok: true, result}` or `{ok: false, error: {code,
//! message}}` and nothing else, with a boolean `ok`, a snake_case code and a non-empty message;
//! and no rendering of the profile's income or birth date appears in it unless the input itself
//! carried that text (a tool may echo what the agent sent, never what the profile holds). After
//! every input: each proposal's entries are answers only (never a declined or invalid call),
//! one per item, chained from genesis.
#![no_main]

use capability_gate::{Acknowledgement, Gate, Handler, Lifetime};
use ed25519_dalek::SigningKey;
use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use serde_json::{Value, json};
use tacit_testkit::fixtures::{HOUSING, housing_policy};
use time::{Date, Month};
use wallet_core::{
    DisclosureLedger, GrantId, KeySet, KeyStatus, Outcome, Profile, ProfileInput, PublicKeyEntry,
    Timestamp,
};

/// 2026-11-29T12:00:00Z, as in capability-gate's tests.
const T0: i64 = 1_795_953_600_000;
const MINUTE: i64 = 60_000;
const PHARMACY: &str = "http://127.0.0.1:8082";

/// Every rendering of the profile's raw values a leak could take, grouped by value: income
/// (minor units, decimal, formatted) and birth date (ISO, compact).
const CANARIES: &[&[&str]] = &[
    &["2840017", "28400.17", "28,400.17"],
    &["1987-06-13", "19870613"],
];

fn profile() -> Profile {
    let input = ProfileInput::new(2_840_017, "EUR", "1987-06-13", "nordhafen", ["asthma"]);
    let today = Date::from_calendar_date(2026, Month::November, 29).expect("date");
    Profile::new(&input, today).expect("valid profile")
}

fn pharmacy(nonce: &str) -> Value {
    json!({
        "origin": PHARMACY,
        "nonce": nonce,
        "claims": [
            { "kind": "age_at_least", "years": 18 },
            { "kind": "has_none_of", "conditions": ["liver-disease", "pregnancy"] }
        ]
    })
}

fn request_id(out: &Value) -> capability_gate::RequestId {
    capability_gate::RequestId::parse(out["result"]["request_id"].as_str().expect("request id"))
        .expect("a request id")
}

fn proposal_id(out: &Value) -> capability_gate::ProposalId {
    capability_gate::ProposalId::parse(out["result"]["proposal_id"].as_str().expect("proposal id"))
        .expect("a proposal id")
}

struct World {
    gate: Gate,
    now: Timestamp,
    handlers: Vec<Handler>,
    /// A live claim handle, for the call after every grant expired.
    live: Handler,
}

/// The wallet every input meets. Ids are pseudo-random but deterministic (a fixed secret); the
/// names below say the order they were made in.
fn world() -> World {
    let mut gate = Gate::with_secret([0x5a; 32], DisclosureLedger::default());
    gate.unlock(profile());
    let mut now = Timestamp::from_millis(T0);
    let call = |gate: &mut Gate, handler: Handler, input: Value, now| {
        let out = gate.execute(&handler, &input, now);
        assert_eq!(out["ok"], true, "setup call failed: {out}");
        out
    };

    let r1 = request_id(&call(
        &mut gate,
        Handler::RequestClaims,
        housing_policy("n-housing-1"),
        now,
    ));
    let granted = gate
        .grant(&r1, &[0, 1], Lifetime::ONE_HOUR, now)
        .expect("grant");
    let r4 = request_id(&call(
        &mut gate,
        Handler::RequestClaims,
        pharmacy("n-pharma-1"),
        now,
    ));
    let one_use = gate
        .grant(&r4, &[0], Lifetime::ONE_USE, now)
        .expect("grant");
    let r6 = request_id(&call(
        &mut gate,
        Handler::RequestClaims,
        pharmacy("n-pharma-2"),
        now,
    ));
    gate.deny(&r6, "Not this pharmacy.").expect("deny");
    call(
        &mut gate,
        Handler::RequestClaims,
        pharmacy("n-pharma-3"),
        now,
    ); // r7, held

    let epoch = gate
        .grants()
        .next()
        .map(|g| g.epoch)
        .expect("a grant exists");
    let claim = |grant: &GrantId| Handler::Claim {
        grant: grant.clone(),
        epoch,
    };
    now = now.plus_millis(MINUTE);
    call(
        &mut gate,
        claim(&granted[0]),
        json!({ "nonce": "first" }),
        now,
    );

    let draft = json!({ "audience": HOUSING, "nonce": "n-housing-1" });
    let p8 = proposal_id(&call(
        &mut gate,
        Handler::DraftApplication,
        draft.clone(),
        now,
    )); // held
    let p9 = proposal_id(&call(
        &mut gate,
        Handler::DraftApplication,
        draft.clone(),
        now,
    ));
    let digest = gate.proposal(&p9).expect("p9").digest().to_owned();
    let payload = gate
        .release(&p9, &digest, Acknowledgement::UnconfirmedSite, now)
        .expect("release");
    let key = SigningKey::from_bytes(&[7; 32]);
    let keys = KeySet {
        keys: vec![PublicKeyEntry::new(
            &key.verifying_key(),
            now.plus_millis(-60_000),
            None,
            KeyStatus::Active,
        )],
    };
    let signed = wallet_core::receipt::sign(payload, &key, now);
    gate.attach_signed(&p9, signed, &keys, now).expect("attach");
    let p10 = proposal_id(&call(&mut gate, Handler::DraftApplication, draft, now));
    gate.refuse(&p10, "Not now.").expect("refuse");
    debug_assert!(gate.proposal(&p8).is_some());

    let handlers = vec![
        Handler::WalletStatus,
        Handler::RequestClaims,
        Handler::CheckRequest,
        Handler::DraftApplication,
        Handler::CheckProposal,
        claim(&granted[0]),
        claim(&granted[1]),
        claim(&one_use[0]),
        Handler::Claim {
            grant: granted[0].clone(),
            epoch: epoch.wrapping_sub(1),
        },
        Handler::Claim {
            grant: GrantId::parse("g999").expect("id"),
            epoch,
        },
    ];
    World {
        gate,
        now: now.plus_millis(MINUTE),
        live: claim(&granted[1]),
        handlers,
    }
}

fn check_envelope(out: &Value, input_text: &str) {
    let Value::Object(map) = out else {
        panic!("not an object: {out}");
    };
    let Some(Value::Bool(ok)) = map.get("ok") else {
        panic!("no boolean ok: {out}");
    };
    // An answer is {ok, result}; a refusal is {ok, isError: true, error}.
    let members = if *ok { 2 } else { 3 };
    assert_eq!(map.len(), members, "extra fields: {out}");
    if !*ok {
        assert_eq!(
            map.get("isError"),
            Some(&Value::Bool(true)),
            "refusal without isError: {out}"
        );
    }
    if *ok {
        assert!(map.contains_key("result"), "ok without result: {out}");
    } else {
        let Some(Value::Object(error)) = map.get("error") else {
            panic!("refusal without error object: {out}");
        };
        assert_eq!(error.len(), 2, "extra error fields: {out}");
        let code = error.get("code").and_then(Value::as_str).unwrap_or("");
        assert!(
            !code.is_empty() && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "bad code: {out}"
        );
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        assert!(!message.trim().is_empty(), "empty message: {out}");
    }
    // An input that carries any rendering of a value may see it echoed in any rendering (an
    // income limit of 2840017 is shown as 28,400.17), so such a value is not checked.
    let text = out.to_string();
    for group in CANARIES {
        if group.iter().any(|c| input_text.contains(c)) {
            continue;
        }
        for canary in *group {
            assert!(
                !text.contains(canary),
                "a raw profile value ({canary}) appeared in a tool output: {text}"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    // What the input can be echoed as: its bytes as sent, and its JSON as re-encoded.
    let input_text = format!("{}\n{}", String::from_utf8_lossy(data), input);
    let mut w = world();
    for handler in &w.handlers {
        let out = w.gate.execute(handler, &input, w.now);
        check_envelope(&out, &input_text);
    }
    // Past every grant's expiry: the live handle must now be refused, whatever the input.
    let later = w.now.plus_millis(2 * 60 * MINUTE);
    w.gate.tick(later);
    let out = w.gate.execute(&w.live, &input, later);
    check_envelope(&out, &input_text);
    assert_eq!(out["ok"], false, "an expired grant answered: {out}");
    // Whatever was called, a proposal carries answers only, one per item, chained from genesis.
    for proposal in w.gate.proposals() {
        assert_eq!(proposal.entries.len(), proposal.items.len());
        wallet_core::verify_entries(&proposal.entries).expect("a proposal's own chain");
        assert!(
            proposal
                .entries
                .iter()
                .all(|e| matches!(e.outcome, Outcome::Satisfied | Outcome::NotSatisfied)),
            "a refused or malformed call in a proposal: {:?}",
            proposal.entries
        );
    }
});

// Half of the mutations edit one JSON value at a time (see `tacit_fuzz::mutate_json`).
fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    tacit_fuzz::mutate_json(data, size, max_size, seed)
});
