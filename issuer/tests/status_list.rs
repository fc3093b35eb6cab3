//! Token Status List at the issuer (issue 31): every credential names its own random entry of
//! the issuer's status list; `GET /status/1` serves the signed list; `tacit-issuer revoke` sets
//! every entry of the person, so their credentials already issued read as revoked while another
//! person's stay valid. Read back by Tacit's own verifier and by an independent implementation
//! (`@sd-jwt/jwt-status-list`, `interop/status_list.mjs`), on SQLite and on PostgreSQL.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../../interop/node.rs"]
#[allow(dead_code)] // the SD-JWT helpers are for the other includers
mod node;

use std::collections::BTreeSet;

use axum::http::StatusCode;
use common::*;
use serde_json::{Value, json};
use tacit_issuer::{Attribute, Person};
use tacit_protocol::sd_jwt::{Credential, IssuerMetadata, Jwks, WELL_KNOWN_PATH};
use tacit_protocol::status_list::{
    self, INVALID, MEDIA_TYPE, STATUS_PATH, StatusList, StatusRef, VALID, verify_token,
};

fn ben() -> Person {
    Person {
        person_id: "p-ben".to_owned(),
        name: "Ben Demo".to_owned(),
        ..ana()
    }
}

/// The issuer's keys as a site reads them: its published metadata.
async fn jwks(issuer: &TestIssuer) -> Jwks {
    let (status, _, bytes) = send_raw(&issuer.app, get(WELL_KNOWN_PATH)).await;
    assert_eq!(status, StatusCode::OK);
    IssuerMetadata::parse(&bytes).unwrap().jwks
}

/// A batch of `keys` credentials for `person`, parsed.
async fn batch_of(issuer: &TestIssuer, person: &Person, keys: u8) -> Vec<Credential> {
    let code = issuer.code_for(person).await;
    let nonce = issuer.nonce().await;
    let (status, _, body) = issuer.redeem(&code, &nonce, keys).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["credentials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Credential::parse(c.as_str().unwrap()).unwrap())
        .collect()
}

/// `GET /status/1`: the token, with its media type and a cache lifetime of its `ttl`.
async fn status_token(issuer: &TestIssuer) -> String {
    let (status, headers, bytes) = send_raw(&issuer.app, get(STATUS_PATH)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], MEDIA_TYPE);
    assert!(
        headers["cache-control"]
            .to_str()
            .unwrap()
            .contains("max-age=60"),
        "{headers:?}"
    );
    String::from_utf8(bytes).unwrap()
}

fn refs(credentials: &[Credential]) -> Vec<StatusRef> {
    credentials
        .iter()
        .map(|c| {
            c.status()
                .expect("a credential without a status entry")
                .clone()
        })
        .collect()
}

/// What `@sd-jwt/jwt-status-list` reads: the signature check and each credential's status.
fn independent(token: &str, credentials: &[Credential]) -> Value {
    let jwk = tacit_protocol::sd_jwt::IssuerKey {
        kid: String::new(),
        key: *issuer_key().verifying_key(),
    }
    .jwk();
    node::run(
        "status_list.mjs",
        &json!({
            "token": token,
            "issuer_jwk": { "kty": jwk.kty, "crv": jwk.crv, "x": jwk.x, "y": jwk.y },
            "credentials": credentials.iter().map(Credential::issuer_jwt).collect::<Vec<_>>(),
        }),
    )
}

async fn revocation_sets_every_credential_of_the_person_only(url: String) {
    let issuer = issuer_on(Some(url), Attribute::Income).await;
    let ana_creds = batch_of(&issuer, &ana(), 5).await;
    let ben_creds = batch_of(&issuer, &ben(), 3).await;
    let uri = format!("{ORIGIN}{STATUS_PATH}");
    let (ana_refs, ben_refs) = (refs(&ana_creds), refs(&ben_creds));
    // One entry per credential, all distinct, all naming this issuer's list.
    let all: BTreeSet<u64> = ana_refs.iter().chain(&ben_refs).map(|r| r.idx).collect();
    assert_eq!(all.len(), 8, "indexes repeat: {ana_refs:?} {ben_refs:?}");
    assert!(ana_refs.iter().chain(&ben_refs).all(|r| r.uri == uri));
    // Drawn at random, not handed out in order.
    let sorted: Vec<u64> = ana_refs.iter().map(|r| r.idx).collect();
    assert!(
        sorted.windows(2).any(|w| w[1] != w[0] + 1),
        "consecutive indexes: {sorted:?}"
    );

    let token = status_token(&issuer).await;
    let read = verify_token(&token, &jwks(&issuer).await, &uri, issuer.now()).unwrap();
    for r in ana_refs.iter().chain(&ben_refs) {
        assert_eq!(read.status_of(r), Ok(VALID));
    }
    let seen = independent(&token, &ana_creds);
    assert_eq!(seen["signature"], true, "{seen}");
    assert_eq!(seen["header"]["typ"], "statuslist+jwt", "{seen}");
    assert_eq!(seen["sub"], uri.as_str(), "{seen}");
    assert!(
        seen["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["status"] == 0),
        "{seen}"
    );

    let (person, _) = tacit_issuer::revoke(&issuer.db, "p-ana", issuer.now())
        .await
        .unwrap();
    assert_eq!(person.name, "Ana Demo");
    let token = status_token(&issuer).await;
    let read = verify_token(&token, &jwks(&issuer).await, &uri, issuer.now()).unwrap();
    for r in &ana_refs {
        assert_eq!(read.status_of(r), Ok(INVALID), "{r:?}");
    }
    for r in &ben_refs {
        assert_eq!(read.status_of(r), Ok(VALID), "{r:?}");
    }
    for (creds, want) in [(&ana_creds, 1), (&ben_creds, 0)] {
        let seen = independent(&token, creds);
        assert_eq!(seen["signature"], true, "{seen}");
        for (entry, r) in seen["entries"].as_array().unwrap().iter().zip(refs(creds)) {
            assert_eq!(entry["idx"], r.idx, "{seen}");
            assert_eq!(entry["status"], want, "{seen}");
        }
    }
}

tacit_testkit::on_both_backends!(
    worker_threads = 2,
    sqlite_file = "issuer.db";
    revocation_sets_every_credential_of_the_person_only,
);

/// A list the independent implementation writes (1-bit and 2-bit) reads the same in Tacit.
#[test]
fn tacit_reads_a_list_the_independent_implementation_writes() {
    for (bits, statuses) in [
        (1u8, vec![1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1]),
        (2, vec![1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3]),
    ] {
        let issuer_jwk = tacit_protocol::sd_jwt::IssuerKey {
            kid: String::new(),
            key: *issuer_key().verifying_key(),
        }
        .jwk();
        let list = StatusList::new(8);
        let token = status_list::sign_token(
            &issuer_key(),
            "k",
            ORIGIN,
            "https://x.example/status/1",
            &list,
            wallet_core::Timestamp::from_millis(NOW),
            wallet_core::Timestamp::from_millis(NOW + 60_000),
            60,
        );
        let made = node::run(
            "status_list.mjs",
            &json!({
                "token": token,
                "issuer_jwk": { "kty": issuer_jwk.kty, "crv": issuer_jwk.crv, "x": issuer_jwk.x, "y": issuer_jwk.y },
                "credentials": [],
                "make": { "bits": bits, "statuses": statuses },
            }),
        );
        let read = StatusList::from_claim(&made["made"], 1024).unwrap();
        assert_eq!(read.bits(), bits);
        for (i, want) in statuses.iter().enumerate() {
            assert_eq!(read.get(i as u64), Some(*want), "bits {bits}, entry {i}");
        }
    }
}
