//! The signer's OpenAPI document, checked by independent implementations: the served document
//! is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator), and real responses of
//! the real router over a real SQLite database — a signed receipt, the key set, an enrolment, an
//! error — validate against the components it names for them (Ajv, JSON Schema 2020-12). It
//! also shows the check can fail: bodies the signer would never send are refused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../../interop/node.rs"]
#[allow(dead_code)] // the SD-JWT helpers are for the other includers
mod node;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::*;
use serde_json::json;
use signer::enrol_code;
use tacit_testkit::openapi::{assert_paths_documented, assert_samples_match};
use wallet_core::Timestamp;

const NOW: i64 = T0 + MINUTE;

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

#[tokio::test]
async fn the_served_document_is_valid_openapi_and_real_responses_match_it() {
    let app = app_at(NOW).await;
    let (status, headers, document) = send(&app, get("/v1/openapi.json")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(document, signer::openapi::document());
    assert_paths_documented(
        &document,
        &[
            "/v1/receipts",
            "/v1/installs",
            "/v1/keys",
            "/v1/openapi.json",
            "/healthz",
        ],
    );

    let (status, _, keys) = send(&app, get("/v1/keys")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, receipt) = send(&app, app.post_json(&payload_json(NOW))).await;
    assert_eq!(status, StatusCode::OK, "{receipt}");
    let code = enrol_code(
        app.db(),
        "openapi",
        Duration::from_secs(600),
        Timestamp::from_millis(NOW),
    )
    .await
    .unwrap();
    let newcomer = Install::fixed("openapi-newcomer");
    let body = serde_json::to_vec(
        &json!({ "code": code.to_string(), "public_key": newcomer.webcrypto_jwk() }),
    )
    .unwrap();
    let request = app.signed_by(&newcomer, "/v1/installs", Some("application/json"), body);
    let (status, _, enrolled) = send(&app, request).await;
    assert_eq!(status, StatusCode::CREATED, "{enrolled}");
    let (status, _, refused) = send(
        &app,
        Request::post("/v1/receipts")
            .header("content-type", "application/json")
            .body(Body::from("{}"))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // Bodies the signer never sends: an extra member, a malformed key id, a missing field.
    let mut extra = receipt.clone();
    extra["payload"]["surprise"] = json!(true);
    let mut bad_key = keys.clone();
    bad_key["keys"][0]["key_id"] = json!("not a key id!");
    // With revocations, as after `revoke-install`: digests of 64 lowercase hex digits.
    let mut revoked = keys.clone();
    revoked["revoked_receipts"] = json!([wallet_core::Hash::digest(b"a receipt").to_hex()]);
    let mut bad_digest = revoked.clone();
    bad_digest["revoked_receipts"] = json!(["ABC"]);
    let mut missing = receipt.clone();
    missing.as_object_mut().unwrap().remove("signature");

    assert_samples_match(
        node::run,
        &document,
        &[
            ("receipt", "SignedReceipt", &receipt),
            ("keys", "PublishedKeys", &keys),
            ("keys with revocations", "PublishedKeys", &revoked),
            ("enrolment", "EnrolmentResponse", &enrolled),
            ("error", "ErrorBody", &refused),
            ("payload", "ReceiptPayload", &payload_json(NOW)),
        ],
        &[
            ("extra member", "SignedReceipt", &extra),
            ("bad key id", "PublishedKeys", &bad_key),
            ("bad revoked digest", "PublishedKeys", &bad_digest),
            ("missing signature", "SignedReceipt", &missing),
        ],
    );
}
