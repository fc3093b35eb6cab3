//! The wallet-core canary extended to every tool: for random profiles, no rendering of a raw
//! value appears in any tool's definition, output or error text, the log export, or a receipt.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use capability_gate::{Acknowledgement, Gate, MemoryHost, Registry};
use common::*;
use proptest::prelude::*;
use serde_json::{Value, json};
use wallet_core::{DisclosureLedger, Profile, ProfileInput, SessionId, Timestamp};

const ASKED_DISTRICTS: [&str; 3] = ["altstadt", "nordhafen", "westend"];
const ASKED_CONDITIONS: [&str; 3] = ["anticoagulant-therapy", "liver-disease", "pregnancy"];

/// Random profiles holding none of the codes the two sites ask about.
fn arb_profile() -> impl Strategy<Value = ProfileInput> {
    arb_profile_outside(&ASKED_DISTRICTS, &ASKED_CONDITIONS)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn canary_every_tool_output_and_error(input in arb_profile(), junk in "[a-z0-9]{1,12}") {
        let profile = Profile::new(&input, today()).unwrap();
        let raw = renderings(&profile);
        let mut world = World {
            gate: Gate::new(SessionId::parse("s1").unwrap(), DisclosureLedger::default()),
            registry: Registry::new(MemoryHost::default()),
            now: Timestamp::from_millis(T0),
        };
        world.gate.unlock(profile);
        world.sync();
        let mut outputs: Vec<Value> = Vec::new();
        let (housing, pharmacy, tools) = world.grant_housing_and_pharmacy();
        for tool in &tools {
            outputs.push(world.call(tool, json!({})));
            outputs.push(world.call(tool, json!({ "nonce": junk })));
            outputs.push(world.call(tool, json!({ junk.clone(): 1 })));
            outputs.push(world.call(tool, json!([junk])));
        }
        for (name, input) in [
            ("wallet_status", json!({})),
            ("check_request", json!({ "request_id": housing })),
            ("check_request", json!({ "request_id": pharmacy })),
            ("check_request", json!({ "request_id": junk })),
            ("draft_application", json!({ "audience": HOUSING, "nonce": "n-h" })),
            ("draft_application", json!({ "audience": PHARMACY, "nonce": "n-p" })),
            ("check_proposal", json!({ "proposal_id": junk })),
            ("request_claims", json!({ "origin": HOUSING, "nonce": junk, "claims": [{ "kind": junk }] })),
        ] {
            outputs.push(world.call(name, input));
        }
        let mut receipts: Vec<String> = Vec::new();
        let proposals: Vec<(capability_gate::ProposalId, String)> =
            world.gate.proposals().map(|p| (p.id.clone(), p.digest().to_owned())).collect();
        for (id, digest) in proposals {
            let payload = world.gate.release(&id, &digest, Acknowledgement::UnconfirmedSite, world.now).unwrap();
            receipts.push(serde_json::to_string(&payload).unwrap());
            outputs.push(world.call("check_proposal", json!({ "proposal_id": id })));
        }
        // Lock, then stale calls.
        world.gate.lock();
        for tool in &tools {
            if let Some(def) = world.registry.handler(tool) {
                outputs.push(world.gate.execute(def, &json!({}), world.now));
            }
        }
        world.sync();
        let mut texts: Vec<String> = outputs.iter().map(Value::to_string).collect();
        texts.extend(world.definition_texts());
        texts.push(world.gate.log().export());
        prop_assert_eq!(receipts.len(), 2);
        texts.extend(receipts);
        texts.push(format!("{:?}", world.gate.proposals().collect::<Vec<_>>()));
        prop_assert!(outputs.iter().all(|o| o["ok"].is_boolean()), "every output is an envelope");
        for text in &texts {
            for r in &raw {
                prop_assert!(!text.contains(r.as_str()), "{r:?} leaked into {text}");
            }
        }
    }
}
