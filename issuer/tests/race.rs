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

fn exactly_one_ok(results: &[(StatusCode, Value)], loser_code: &str) {
    let ok = results.iter().filter(|(s, _)| *s == StatusCode::OK).count();
    assert_eq!(ok, 1, "{results:?}");
    for (status, json) in results.iter().filter(|(s, _)| *s != StatusCode::OK) {
        assert_eq!(json["error"], loser_code, "{status} {json}");
    }
}

async fn one_code_twenty_requests(url: Option<String>) {
    let issuer = issuer_on(url, Attribute::Income).await;
    let code = issuer.code_for(&ana()).await;
    let mut bodies = Vec::new();
    for i in 0..20u8 {
        let nonce = issuer.nonce().await;
        bodies.push(json!({
            "code": code.canonical(),
            "nonce": nonce,
            "holder_keys": [entry(&holder(i + 1), &nonce)],
        }));
    }
    let results = all_at_once(&issuer, bodies).await;
    exactly_one_ok(&results, "code_refused");
    assert_eq!(issuer.db.issued_count().await.unwrap(), 1);
}

async fn one_nonce_twenty_requests(url: Option<String>) {
    let issuer = issuer_on(url, Attribute::Income).await;
    let nonce = issuer.nonce().await;
    let mut bodies = Vec::new();
    for i in 0..20u8 {
        let code = issuer.code_for(&ana()).await;
        bodies.push(json!({
            "code": code.canonical(),
            "nonce": nonce,
            "holder_keys": [entry(&holder(i + 1), &nonce)],
        }));
    }
    let results = all_at_once(&issuer, bodies).await;
    exactly_one_ok(&results, "nonce_refused");
    assert_eq!(issuer.db.issued_count().await.unwrap(), 1);
}

async fn one_refresh_token_twenty_requests(url: Option<String>) {
    let issuer = issuer_on(url, Attribute::Income).await;
    let code = issuer.code_for(&ana()).await;
    let nonce = issuer.nonce().await;
    let (status, _, first) = issuer
        .post(
            &json!({ "code": code.canonical(), "nonce": nonce, "holder_keys": entries(1, &nonce) }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let refresh = first["refresh_token"].as_str().unwrap().to_owned();
    let mut bodies = Vec::new();
    for i in 0..20u8 {
        let nonce = issuer.nonce().await;
        bodies.push(json!({
            "refresh_token": refresh,
            "nonce": nonce,
            "holder_keys": [entry(&holder(i + 30), &nonce)],
        }));
    }
    let results = all_at_once(&issuer, bodies).await;
    exactly_one_ok(&results, "refresh_refused");
    assert_eq!(issuer.db.issued_count().await.unwrap(), 2);
}

/// A full batch and a refusal on the same database, checking what the store kept.
async fn batch_round_trip(url: Option<String>) {
    let issuer = issuer_on(url, Attribute::BirthDate).await;
    let code = issuer.code_for(&ana()).await;
    let nonce = issuer.nonce().await;
    let (status, _, body) = issuer
        .post(&json!({ "code": code.canonical(), "nonce": nonce, "holder_keys": entries(10, &nonce) }))
        .await;
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
    let again = issuer
        .post(
            &json!({ "code": code.canonical(), "nonce": nonce, "holder_keys": entries(1, &nonce) }),
        )
        .await;
    assert_refused(&again, StatusCode::UNAUTHORIZED, "nonce_refused");
    // Expired nonces are purged.
    issuer.set_time(NOW + 10 * MINUTE);
    assert!(issuer.db.purge_nonces(issuer.now()).await.unwrap() >= 1);
}

macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name(None).await;
                }
            )*
        }

        /// The same scenarios on a real PostgreSQL, one fresh database each.
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn postgres_runs_every_scenario() {
            let cluster = tokio::task::spawn_blocking(tacit_store::testing::PgCluster::start)
                .await
                .unwrap()
                .unwrap_or_else(|e| panic!("{e}"));
            $(
                let url = cluster.create_database(stringify!($name)).await.unwrap();
                $name(Some(url)).await;
            )*
            drop(cluster);
        }
    };
}

on_both_backends!(
    one_code_twenty_requests,
    one_nonce_twenty_requests,
    one_refresh_token_twenty_requests,
    batch_round_trip,
);
