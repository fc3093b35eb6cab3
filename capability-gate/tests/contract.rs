//! One place per contract: each tool's published `inputSchema` is the schema generated from
//! its input type, and an input that drifts from the published schema (a property it does not
//! list, a string past its `maxLength`, a missing required property, an array past its
//! `maxItems`) is refused `invalid_input` by the tool itself.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use capability_gate::Lifetime;
use capability_gate::contract::{
    CheckProposalInput, CheckRequestInput, ClaimInput, DraftApplicationInput, RequestClaimsInput,
    WalletStatusInput, schema_of,
};
use capability_gate::tool::{claim_input_schema, persistent_tools};
use common::*;
use serde_json::{Value, json};

#[test]
fn published_schemas_are_the_generated_ones() {
    let tools = persistent_tools();
    let published = |name: &str| {
        tools
            .iter()
            .find(|t| t.name.as_str() == name)
            .unwrap_or_else(|| panic!("{name}"))
            .input_schema
            .clone()
    };
    assert_eq!(published("wallet_status"), schema_of::<WalletStatusInput>());
    assert_eq!(
        published("request_claims"),
        schema_of::<RequestClaimsInput>()
    );
    assert_eq!(published("check_request"), schema_of::<CheckRequestInput>());
    assert_eq!(
        published("draft_application"),
        schema_of::<DraftApplicationInput>()
    );
    assert_eq!(
        published("check_proposal"),
        schema_of::<CheckProposalInput>()
    );
    assert_eq!(claim_input_schema(), schema_of::<ClaimInput>());
    for tool in &tools {
        let s = &tool.input_schema;
        assert_eq!(s["type"], "object", "{}", tool.name);
        assert_eq!(s["additionalProperties"], false, "{}", tool.name);
        assert!(s["properties"].is_object(), "{}", tool.name);
        assert!(!s.to_string().contains("$ref"), "inline: {}", tool.name);
    }
    let claims = &published("request_claims")["properties"]["claims"];
    assert_eq!(claims["maxItems"], 8);
    assert_eq!(claims["minItems"], 1);
    for kind in wallet_core::ClaimKind::ALL {
        assert!(claims.to_string().contains(kind.name()), "{kind}");
    }
}

/// A valid input per persistent tool, which the drifts below start from.
fn valid_inputs(world: &mut World) -> Vec<(String, Value)> {
    let request = world.request(housing_policy("n-1"));
    let tools = world.grant_all(&request, Lifetime::ONE_HOUR);
    vec![
        ("wallet_status".into(), json!({})),
        ("request_claims".into(), housing_policy("n-2")),
        ("check_request".into(), json!({ "request_id": request })),
        (
            "draft_application".into(),
            json!({ "audience": HOUSING, "nonce": "n-1" }),
        ),
        ("check_proposal".into(), json!({ "proposal_id": "p1" })),
        (tools[0].clone(), json!({ "nonce": "x" })),
    ]
}

fn schema_of_tool(world: &World, name: &str) -> Value {
    world
        .registry
        .registered()
        .find(|d| d.name.as_str() == name)
        .unwrap_or_else(|| panic!("{name} is registered"))
        .input_schema
        .clone()
}

#[test]
fn an_input_that_drifts_from_the_published_schema_is_refused() {
    let mut world = World::unlocked();
    let mut checked = 0;
    for (tool, valid) in valid_inputs(&mut world) {
        let schema = schema_of_tool(&world, &tool);
        let out = world.call(&tool, valid.clone());
        assert_ne!(
            out["error"]["code"], "invalid_input",
            "{tool}: the valid input: {out}"
        );
        let properties = schema["properties"].as_object().unwrap().clone();
        let mut drifts: Vec<(String, Value)> = Vec::new();
        // A property the schema does not list.
        let mut extra = valid.clone();
        extra["not_in_the_schema"] = json!("x");
        drifts.push(("extra property".into(), extra));
        for (name, property) in &properties {
            // Past its maxLength.
            if let Some(max) = property["maxLength"].as_u64() {
                let mut long = valid.clone();
                long[name] = json!("a".repeat(max as usize + 1));
                drifts.push((format!("{name} past maxLength {max}"), long));
            }
            // Past its maxItems.
            if let Some(max) = property["maxItems"].as_u64() {
                let mut many = valid.clone();
                many[name] = json!(vec![
                    json!({ "kind": "age_at_least", "years": 18 });
                    max as usize + 1
                ]);
                drifts.push((format!("{name} past maxItems {max}"), many));
            }
            // The wrong JSON type.
            let mut wrong = valid.clone();
            wrong[name] = json!(true);
            drifts.push((format!("{name} of the wrong type"), wrong));
        }
        for required in schema["required"].as_array().into_iter().flatten() {
            let mut missing = valid.clone();
            missing
                .as_object_mut()
                .unwrap()
                .remove(required.as_str().unwrap());
            drifts.push((format!("{required} missing"), missing));
        }
        for (what, input) in drifts {
            let out = world.call(&tool, input);
            assert_eq!(error_code(&out), "invalid_input", "{tool}: {what}: {out}");
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} drifts checked");
}
