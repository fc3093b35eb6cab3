//! The issuer's `POST /v1/credentials` through the real router (`tacit_issuer::app`, every layer
//! included) on a SQLite file, in a tokio current-thread runtime via `tower::ServiceExt::oneshot`.
//!
//! The first byte picks the mode:
//! - even: the rest is the raw body. No input can carry a valid proof over the harness's random
//!   nonces, so the answer must be a 4xx `{ "error", "message" }` and nothing else, never a 5xx,
//!   never a batch.
//! - odd: a valid request is built — a fresh nonce from `GET /v1/nonce`, a fresh one-time code,
//!   `data[1] % 22` holder keys with correct proofs — then `data[2] % 5` picks what the rest of
//!   the input (as text) replaces: nothing, the code, the nonce, key 0's proof, or key 0's `x`.
//!   Unchanged with 1 to 20 keys, it must yield exactly one credential per key that parses,
//!   verifies under the served metadata, is bound to its key and carries no raw value; otherwise
//!   (or when the replacement refuses) a 4xx JSON refusal.
#![no_main]

use std::sync::OnceLock;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode, header};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use libfuzzer_sys::fuzz_target;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Value, json};
use tacit_fuzz::services;
use tacit_issuer::pop::pop_signing_input;
use tacit_issuer::{AppState, Attribute, Config, IssuerDb, KeyStore, Person};
use tacit_protocol::request_auth::InstallKey;
use tacit_protocol::sd_jwt::{Credential, IssuerMetadata};
use tokio::runtime::Runtime;
use tower::ServiceExt;
use wallet_core::Timestamp;

/// 2026-12-01T10:00:00Z.
const NOW: i64 = 1_796_119_200_000;
const ORIGIN: &str = "http://127.0.0.1:8791";
/// The person's income, which must never appear in an answer.
const INCOME_MINOR: i64 = 4_123_456;

struct Harness {
    runtime: Runtime,
    app: Router,
    db: IssuerDb,
    metadata: IssuerMetadata,
    holders: Vec<SigningKey>,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = services::runtime();
        let dir = services::fresh_dir("issuer-request");
        let url = tacit_store::sqlite_url(&dir.join("issuer.db"));
        let now = Timestamp::from_millis(NOW);
        let db = runtime.block_on(async {
            let db = IssuerDb::open(&url).await.expect("database");
            let person = Person {
                person_id: "p-fuzz".to_owned(),
                name: "Fuzz Person".to_owned(),
                income_minor: Some(INCOME_MINOR),
                currency: Some("EUR".to_owned()),
                birth_date: Some("1990-04-12".to_owned()),
            };
            db.add_person(&person, now).await.expect("person");
            db
        });
        let mut config = Config {
            origin: Some(wallet_core::Origin::parse(ORIGIN).expect("origin")),
            attribute: Attribute::Income,
            ..Config::default()
        };
        config.limit_flags.rate_limit_per_minute = 0;
        let keys = KeyStore::new(
            SigningKey::from_slice(&[0x42; 32]).expect("issuer key"),
            Timestamp::from_millis(NOW - 3_600_000),
        );
        let metadata = tacit_issuer::issuer_metadata(ORIGIN, &keys).expect("metadata");
        let state = AppState::new(keys, db.clone(), &config, move || now).expect("state");
        let holders = (1..=21u8)
            .map(|i| {
                let mut bytes = [0x11; 32];
                bytes[31] = i;
                SigningKey::from_slice(&bytes).expect("holder key")
            })
            .collect();
        Harness {
            runtime,
            app: tacit_issuer::app(state),
            db,
            metadata,
            holders,
        }
    })
}

fn post(h: &Harness, body: Vec<u8>) -> (StatusCode, Bytes) {
    let request = Request::post("/v1/credentials")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .expect("request");
    services::send_json(&h.runtime, &h.app, request)
}

fn assert_refusal(status: StatusCode, body: &[u8]) {
    assert!(
        status.is_client_error(),
        "status {status}: {}",
        String::from_utf8_lossy(body)
    );
    services::assert_error_body(body);
    let json: Value = serde_json::from_slice(body).expect("a JSON refusal");
    assert_ne!(json["error"], "internal", "{json}");
}

fn fresh_nonce(h: &Harness) -> String {
    let request = Request::get("/v1/nonce")
        .body(Body::empty())
        .expect("request");
    h.runtime.block_on(async {
        let response = h.app.clone().oneshot(request).await.expect("infallible");
        assert_eq!(response.status(), StatusCode::OK);
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("body");
        let json: Value = serde_json::from_slice(&body).expect("json");
        json["nonce"].as_str().expect("nonce").to_owned()
    })
}

fn proof(key: &SigningKey, nonce: &str) -> String {
    let signature: Signature = key.sign(pop_signing_input(ORIGIN, nonce).as_bytes());
    URL_SAFE_NO_PAD.encode(signature.to_bytes())
}

fuzz_target!(|data: &[u8]| {
    let h = harness();
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let (status, body) = post(h, rest.to_vec());
        assert_refusal(status, &body);
        return;
    }
    let (count, what, text) = match rest {
        [count, what, text @ ..] => (
            usize::from(*count % 22),
            *what % 5,
            String::from_utf8_lossy(text).into_owned(),
        ),
        _ => return,
    };
    let nonce = fresh_nonce(h);
    let now = Timestamp::from_millis(NOW);
    let code = h
        .runtime
        .block_on(h.db.make_code("p-fuzz", now, now.plus_millis(60_000)))
        .expect("code")
        .code;
    let keys: Vec<Value> = h.holders[..count]
        .iter()
        .map(|k| {
            json!({
                "jwk": InstallKey::from_verifying_key(*k.verifying_key()).to_jwk(),
                "proof": proof(k, &nonce),
            })
        })
        .collect();
    let mut body = json!({ "code": code.canonical(), "nonce": nonce, "holder_keys": keys });
    match what {
        1 => body["code"] = json!(text),
        2 => body["nonce"] = json!(text),
        3 if count > 0 => body["holder_keys"][0]["proof"] = json!(text),
        4 if count > 0 => body["holder_keys"][0]["jwk"]["x"] = json!(text),
        _ => {}
    }
    let (status, answer) = post(h, serde_json::to_vec(&body).expect("json"));
    let untouched = body["code"] == json!(code.canonical())
        && body["nonce"] == json!(nonce)
        && (count == 0 || body["holder_keys"][0] == keys_entry(h, 0, &nonce));
    if !(untouched && (1..=20).contains(&count)) {
        if status == StatusCode::OK {
            // A replacement can still be valid: the code typed differently, or the same value.
            assert!(matches!(what, 1 | 4), "unexpected batch for mode {what}");
        } else {
            assert_refusal(status, &answer);
            return;
        }
    }
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&answer)
    );
    let json: Value = serde_json::from_slice(&answer).expect("json");
    let credentials = json["credentials"].as_array().expect("credentials");
    assert_eq!(credentials.len(), count);
    for (i, text) in credentials.iter().enumerate() {
        let text = text.as_str().expect("string");
        let credential = Credential::parse(text).expect("parses");
        credential
            .verify_issuer(&h.metadata.jwks, now)
            .expect("verifies");
        let holder = InstallKey::from_verifying_key(*h.holders[i].verifying_key()).to_jwk();
        assert_eq!(credential.holder_jwk(), &holder);
        // The canary: no claim name or value carries the raw income. (Salts, digests, keys and
        // signatures are random base64url text that may spell any digits by chance.)
        let mut said: Vec<String> = credential
            .disclosures()
            .iter()
            .map(|d| format!("{} {}", d.name, d.value))
            .collect();
        said.push(Value::Object(credential.plain().clone()).to_string());
        for piece in said {
            assert!(!piece.contains(&INCOME_MINOR.to_string()), "{piece}");
            assert!(!piece.contains("41234"), "{piece}");
        }
    }
});

fn keys_entry(h: &Harness, i: usize, nonce: &str) -> Value {
    let k = &h.holders[i];
    json!({
        "jwk": InstallKey::from_verifying_key(*k.verifying_key()).to_jwk(),
        "proof": proof(k, nonce),
    })
}
