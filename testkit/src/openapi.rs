//! The OpenAPI-document check the three services' tests share (signer, issuer, site): every
//! named path is documented, the document is valid OpenAPI 3.1 and real bodies validate against
//! the components they name, while bodies the service never sends are refused.
//!
//! The validation itself is done by `interop/openapi.mjs` (@seriousme/openapi-schema-validator
//! and Ajv, JSON Schema 2020-12); the caller passes the runner it includes from
//! `interop/node.rs`, so this crate needs no Node.js helper of its own.

use serde_json::{Value, json};

/// A body to validate: its label, the component schema it is checked against, and the body.
pub type Sample<'a> = (&'a str, &'a str, &'a Value);

/// Asserts that `document["paths"]` has an object for each of `paths`.
///
/// # Panics
/// When a path is undocumented (this is a test assertion).
pub fn assert_paths_documented(document: &Value, paths: &[&str]) {
    for path in paths {
        assert!(document["paths"][path].is_object(), "{path} undocumented");
    }
}

/// Runs `openapi.mjs` through `run` on `document` with the `valid` samples followed by the
/// `invalid` ones; asserts the document is valid, every `valid` sample validates and every
/// `invalid` one is refused.
///
/// # Panics
/// When any of those does not hold (this is a test assertion).
pub fn assert_samples_match(
    run: impl FnOnce(&str, &Value) -> Value,
    document: &Value,
    valid: &[Sample<'_>],
    invalid: &[Sample<'_>],
) {
    let sample =
        |&(id, schema, value): &Sample<'_>| json!({ "id": id, "schema": schema, "value": value });
    let samples: Vec<Value> = valid.iter().chain(invalid).map(sample).collect();
    let verdict = run(
        "openapi.mjs",
        &json!({ "document": document, "samples": samples }),
    );
    assert_eq!(
        verdict["document"]["valid"], true,
        "{}",
        verdict["document"]
    );
    let verdicts = verdict["samples"].as_array().unwrap();
    assert_eq!(verdicts.len(), valid.len() + invalid.len(), "{verdict}");
    let (accepted, refused) = verdicts.split_at(valid.len());
    for sample in accepted {
        assert_eq!(sample["valid"], true, "{sample}");
    }
    for sample in refused {
        assert_eq!(sample["valid"], false, "accepted: {sample}");
    }
}
