//! One place per contract: each tool's published `inputSchema` is its static file under
//! `capability-gate/schemas/`, which must equal the schema generated from its input type (the
//! page ships the file, not schemars), and an input that drifts from the published schema (a
//! property it does not list, a string past its `maxLength`, a missing required property, an
//! array past its `maxItems`) is refused `invalid_input` by the tool itself.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;

use capability_gate::Lifetime;
use capability_gate::contract::{
    CheckProposalInput, CheckRequestInput, ClaimInput, DraftApplicationInput, RequestClaimsInput,
    WalletStatusInput, generated_schema_of, published_and_generated, schema_file_text, schema_of,
};
use capability_gate::tool::{claim_input_schema, persistent_tools};
use common::*;
use serde_json::{Value, json};

/// The environment variable that makes the file test rewrite `schemas/*.json` from the input
/// types before it compares them.
const WRITE_VAR: &str = "TACIT_WRITE_SCHEMAS";

/// What rewrites `schemas/*.json` from the input types.
const REGENERATE: &str = "TACIT_WRITE_SCHEMAS=1 cargo test -p capability-gate --test contract \
     every_schema_file_is_the_generated_schema_byte_for_byte";

fn schemas_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schemas")
}

#[test]
fn every_schema_file_is_the_generated_schema_byte_for_byte() {
    if std::env::var_os(WRITE_VAR).is_some_and(|v| v == "1") {
        // On purpose only: rewrite the files, then the comparison below checks the disk.
        std::fs::create_dir_all(schemas_dir()).unwrap();
        for (file, _, generated) in published_and_generated() {
            let path = schemas_dir().join(format!("{file}.json"));
            std::fs::write(&path, schema_file_text(&generated)).unwrap();
            println!("wrote {}", path.display());
        }
        // What the crate compiled in is the old text: the next build ships the new files.
        return;
    }
    let published = published_and_generated();
    assert_eq!(published.len(), 6, "one file per tool input");
    let mut stale = Vec::new();
    for (file, text, generated) in &published {
        // What the crate ships (include_str!) is what is on disk.
        let on_disk = std::fs::read_to_string(schemas_dir().join(format!("{file}.json")))
            .unwrap_or_else(|e| panic!("{file}.json: {e}"));
        assert_eq!(*text, on_disk, "{file}.json");
        if *text != schema_file_text(generated) {
            stale.push(*file);
        }
    }
    assert!(
        stale.is_empty(),
        "capability-gate/schemas/{{{}}}.json differ from the schemas generated from the input \
         types; regenerate them with\n    {REGENERATE}\nand review the diff",
        stale.join(",")
    );
    let mut files: Vec<String> = std::fs::read_dir(schemas_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut expected: Vec<String> = published
        .iter()
        .map(|(f, ..)| format!("{f}.json"))
        .collect();
    expected.sort();
    assert_eq!(files, expected, "a schema file no tool publishes");
}

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
    let pairs = [
        (
            published("wallet_status"),
            generated_schema_of::<WalletStatusInput>(),
        ),
        (
            published("request_claims"),
            generated_schema_of::<RequestClaimsInput>(),
        ),
        (
            published("check_request"),
            generated_schema_of::<CheckRequestInput>(),
        ),
        (
            published("draft_application"),
            generated_schema_of::<DraftApplicationInput>(),
        ),
        (
            published("check_proposal"),
            generated_schema_of::<CheckProposalInput>(),
        ),
        (claim_input_schema(), generated_schema_of::<ClaimInput>()),
    ];
    for (published, generated) in &pairs {
        assert!(published.is_object(), "{published}");
        assert_eq!(published, generated, "{REGENERATE}");
    }
    assert_eq!(
        schema_of::<ClaimInput>(),
        generated_schema_of::<ClaimInput>()
    );
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
