//! Races: one code, one nonce, one refresh token, each used by 20 concurrent requests, yield
//! exactly one batch — on a SQLite file and on a real PostgreSQL (`tacit_store::testing::PgCluster`),
//! plus the rest of a batch's life on PostgreSQL.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use axum::http::StatusCode;
use common::*;
use serde_json::{Value, json};
use tacit_issuer::Attribute;
use tacit_protocol::sd_jwt::{Credential, IssuerMetadata};
use wallet_core::Timestamp;

/// Sends all `bodies` at once; returns the statuses and error codes.
async fn all_at_once(issuer: &TestIssuer, bodies: Vec<Value>) -> Vec<(StatusCode, Value)> {
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(bodies.len()));
    let tasks: Vec<_> = bodies
        .into_iter()
        .map(|body| {
            let app = issuer.app.clone();
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                let (status, _, json) = send(&app, post_json(&body)).await;
                (status, json)
            })
        })
        .collect();
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.unwrap());
    }
    out
}

/// Sends all `bodies` at once: exactly one is answered 200, every other is refused with
/// `loser_code`, and the store then counts `issued` batches.
async fn exactly_one_ok(issuer: &TestIssuer, bodies: Vec<Value>, loser_code: &str, issued: i64) {
    let results = all_at_once(issuer, bodies).await;
    let ok = results.iter().filter(|(s, _)| *s == StatusCode::OK).count();
    assert_eq!(ok, 1, "{results:?}");
    for (status, json) in results.iter().filter(|(s, _)| *s != StatusCode::OK) {
        assert_eq!(json["error"], loser_code, "{status} {json}");
    }
    assert_eq!(issuer.db.issued_count().await.unwrap(), issued);
}

/// A request with `member` (`code` or `refresh_token`) set to `value`, `nonce`, and the one
/// holder key `key` proven over it.
fn one_key_body(member: &str, value: &str, nonce: &str, key: u8) -> Value {
    json!({ member: value, "nonce": nonce, "holder_keys": [entry(&holder(key), nonce)] })
}

async fn one_code_twenty_requests(url: String) {
    let issuer = issuer_on(Some(url), Attribute::Income).await;
    let code = issuer.code_for(&ana()).await;
    let mut bodies = Vec::new();
    for i in 0..20u8 {
        let nonce = issuer.nonce().await;
        bodies.push(one_key_body("code", code.canonical(), &nonce, i + 1));
    }
    exactly_one_ok(&issuer, bodies, "code_refused", 1).await;
}

async fn one_nonce_twenty_requests(url: String) {
    let issuer = issuer_on(Some(url), Attribute::Income).await;
    let nonce = issuer.nonce().await;
    let mut bodies = Vec::new();
    for i in 0..20u8 {
        let code = issuer.code_for(&ana()).await;
        bodies.push(one_key_body("code", code.canonical(), &nonce, i + 1));
    }
    exactly_one_ok(&issuer, bodies, "nonce_refused", 1).await;
}

async fn one_refresh_token_twenty_requests(url: String) {
    let issuer = issuer_on(Some(url), Attribute::Income).await;
    let (_, refresh) = issuer.first_batch().await;
    let mut bodies = Vec::new();
    for i in 0..20u8 {
        let nonce = issuer.nonce().await;
        bodies.push(one_key_body("refresh_token", &refresh, &nonce, i + 30));
    }
    exactly_one_ok(&issuer, bodies, "refresh_refused", 2).await;
}

/// A full batch and a refusal on the same database, checking what the store kept.
async fn batch_round_trip(url: String) {
    let issuer = issuer_on(Some(url), Attribute::BirthDate).await;
    let code = issuer.code_for(&ana()).await;
    let nonce = issuer.nonce().await;
    let (status, _, body) = issuer.redeem(&code, &nonce, 10).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, _, bytes) = send_raw(&issuer.app, get("/.well-known/jwt-vc-issuer")).await;
    let meta = IssuerMetadata::parse(&bytes).unwrap();
    for text in body["credentials"].as_array().unwrap() {
        let credential = Credential::parse(text.as_str().unwrap()).unwrap();
        credential
            .verify_issuer(&meta.jwks, Timestamp::from_millis(NOW))
            .unwrap();
        assert_eq!(
            credential.disclosure("age_equal_or_over_18").unwrap().value,
            json!(true)
        );
    }
    let again = issuer.redeem(&code, &nonce, 1).await;
    assert_refused(&again, StatusCode::UNAUTHORIZED, "nonce_refused");
    // Expired nonces are purged.
    issuer.set_time(NOW + 10 * MINUTE);
    assert!(issuer.db.purge_nonces(issuer.now()).await.unwrap() >= 1);
}

tacit_testkit::on_both_backends!(
    worker_threads = 4,
    sqlite_file = "issuer.db";
    one_code_twenty_requests,
    one_nonce_twenty_requests,
    one_refresh_token_twenty_requests,
    batch_round_trip,
);
