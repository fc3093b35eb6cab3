//! The issuer's OpenAPI document, checked by independent implementations: the served document
//! is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator) and real responses of the real
//! router over a real SQLite database — metadata, description, nonce, a batch, a refusal —
//! validate against the components it names (Ajv, JSON Schema 2020-12); bodies the issuer never
//! sends are refused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../../interop/node.rs"]
#[allow(dead_code)] // the SD-JWT helpers are for the other includers
mod node;

use axum::http::StatusCode;
use common::*;
use serde_json::json;
use tacit_protocol::sd_jwt::WELL_KNOWN_PATH;
use tacit_testkit::openapi::{assert_paths_documented, assert_samples_match};

#[tokio::test]
async fn the_served_document_is_valid_openapi_and_real_responses_match_it() {
    let issuer = income_issuer().await;
    let (status, _, document) = send(&issuer.app, get("/v1/openapi.json")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(document, tacit_issuer::openapi::document(&issuer.state));
    assert_paths_documented(
        &document,
        &[
            WELL_KNOWN_PATH,
            "/v1/issuer",
            "/v1/nonce",
            "/v1/credentials",
            tacit_protocol::status_list::STATUS_PATH,
            "/v1/openapi.json",
            "/healthz",
        ],
    );
    let (_, _, metadata) = send(&issuer.app, get(WELL_KNOWN_PATH)).await;
    let (_, _, info) = send(&issuer.app, get("/v1/issuer")).await;
    let code = issuer.code_for(&ana()).await;
    let nonce = issuer.nonce().await;
    let (_, _, fresh) = send(&issuer.app, get("/v1/nonce")).await;
    let request = code_request(&code, &nonce, 3);
    let (status, _, batch) = issuer.post(&request).await;
    assert_eq!(status, StatusCode::OK, "{batch}");
    let (status, _, refused) = issuer.post(&json!({ "nonce": "x" })).await;
    assert!(status.is_client_error(), "{refused}");

    let mut extra = batch.clone();
    extra["surprise"] = json!(1);
    let mut no_keys = metadata.clone();
    no_keys.as_object_mut().unwrap().remove("jwks");
    let mut bad_request = request.clone();
    bad_request["holder_keys"][0]["jwk"]["d"] = json!("private!");

    assert_samples_match(
        node::run,
        &document,
        &[
            ("metadata", "IssuerMetadata", &metadata),
            ("info", "IssuerInfo", &info),
            ("nonce", "NonceResponse", &fresh),
            ("request", "CredentialRequest", &request),
            ("batch", "CredentialResponse", &batch),
            ("error", "ErrorBody", &refused),
        ],
        &[
            ("extra member", "CredentialResponse", &extra),
            ("no jwks", "IssuerMetadata", &no_keys),
            ("private key member", "CredentialRequest", &bad_request),
        ],
    );
}
