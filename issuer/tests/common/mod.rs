//! Test data and harnesses shared by the issuer's integration tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Value, json};
use tacit_issuer::pop::pop_signing_input;
use tacit_issuer::{AppState, Attribute, Config, IssuerDb, KeyStore, Person};
use tacit_protocol::request_auth::{EnrolmentCode, InstallKey, Jwk};
use tower::ServiceExt;
use wallet_core::Timestamp;

/// 2026-12-01T10:00:00Z.
pub const NOW: i64 = 1_796_119_200_000;
pub const MINUTE: i64 = 60_000;
pub const ORIGIN: &str = "http://127.0.0.1:8791";

/// A deterministic issuer key. Never used outside tests.
pub fn issuer_key() -> SigningKey {
    SigningKey::from_slice(&[0x42; 32]).unwrap()
}

/// Holder key number `n` (1-based, distinct).
pub fn holder(n: u8) -> SigningKey {
    let mut bytes = [0x11; 32];
    bytes[31] = n;
    SigningKey::from_slice(&bytes).unwrap()
}

pub fn jwk(key: &SigningKey) -> Jwk {
    InstallKey::from_verifying_key(*key.verifying_key()).to_jwk()
}

pub fn proof(key: &SigningKey, origin: &str, nonce: &str) -> String {
    let signature: Signature = key.sign(pop_signing_input(origin, nonce).as_bytes());
    URL_SAFE_NO_PAD.encode(signature.to_bytes())
}

/// `{jwk, proof}` for `key` over `nonce` at this issuer.
pub fn entry(key: &SigningKey, nonce: &str) -> Value {
    json!({ "jwk": jwk(key), "proof": proof(key, ORIGIN, nonce) })
}

/// Entries for holder keys 1..=n.
pub fn entries(n: u8, nonce: &str) -> Vec<Value> {
    (1..=n).map(|i| entry(&holder(i), nonce)).collect()
}

/// `{code, nonce, holder_keys}`: a batch request by `code` for holder keys 1..=`keys`.
pub fn code_request(code: &EnrolmentCode, nonce: &str, keys: u8) -> Value {
    json!({ "code": code.canonical(), "nonce": nonce, "holder_keys": entries(keys, nonce) })
}

/// Ana: income 28,500.00 EUR, born 1990-04-12.
pub fn ana() -> Person {
    Person {
        person_id: "p-ana".to_owned(),
        name: "Ana Demo".to_owned(),
        income_minor: Some(2_850_000),
        currency: Some("EUR".to_owned()),
        birth_date: Some("1990-04-12".to_owned()),
    }
}

/// An issuer under test: its router, its state and a controllable clock.
pub struct TestIssuer {
    pub app: Router,
    pub state: AppState,
    pub clock: Arc<AtomicI64>,
    pub db: IssuerDb,
    pub dir: tempfile::TempDir,
}

impl TestIssuer {
    pub fn set_time(&self, ms: i64) {
        self.clock.store(ms, Ordering::SeqCst);
    }

    pub fn now(&self) -> Timestamp {
        Timestamp::from_millis(self.clock.load(Ordering::SeqCst))
    }

    /// A one-time code for a person (added if new), valid for a day.
    pub async fn code_for(&self, person: &Person) -> EnrolmentCode {
        self.enrolment_for(person).await.code
    }

    /// A one-time code and its offer's pre-authorized code for a person (added if new), valid
    /// for a day.
    pub async fn enrolment_for(&self, person: &Person) -> tacit_issuer::Enrolment {
        if !self.has_person(&person.person_id).await {
            self.db.add_person(person, self.now()).await.unwrap();
        }
        self.db
            .make_code(
                &person.person_id,
                self.now(),
                self.now().plus_millis(24 * 60 * MINUTE),
            )
            .await
            .unwrap()
    }

    async fn has_person(&self, id: &str) -> bool {
        use tacit_store::sqlx::{self, Row};
        let row = sqlx::query("SELECT COUNT(*) FROM people WHERE person_id = $1")
            .bind(id)
            .fetch_one(self.db.store().pool())
            .await
            .unwrap();
        row.try_get::<i64, _>(0).unwrap() > 0
    }

    pub async fn nonce(&self) -> String {
        let (status, _, json) = send(&self.app, get("/v1/nonce")).await;
        assert_eq!(status, StatusCode::OK, "{json}");
        json["nonce"].as_str().unwrap().to_owned()
    }

    pub async fn post(&self, body: &Value) -> (StatusCode, HeaderMap, Value) {
        send(&self.app, post_json(body)).await
    }

    /// Ana's fresh code redeemed for one holder key (asserted 200): the code, now spent, and
    /// the refresh token the batch carries.
    pub async fn first_batch(&self) -> (EnrolmentCode, String) {
        let code = self.code_for(&ana()).await;
        let nonce = self.nonce().await;
        let (status, _, first) = self.redeem(&code, &nonce, 1).await;
        assert_eq!(status, StatusCode::OK, "{first}");
        let refresh = first["refresh_token"].as_str().unwrap().to_owned();
        (code, refresh)
    }

    /// Redeems `code` with `nonce` for holder keys 1..=`keys` ([`code_request`]).
    pub async fn redeem(
        &self,
        code: &EnrolmentCode,
        nonce: &str,
        keys: u8,
    ) -> (StatusCode, HeaderMap, Value) {
        self.post(&code_request(code, nonce, keys)).await
    }
}

pub fn config(attribute: Attribute) -> Config {
    let mut config = Config {
        name: "Tax Office Nordstadt".to_owned(),
        origin: Some(wallet_core::Origin::parse(ORIGIN).unwrap()),
        attribute,
        ..Config::default()
    };
    config.limit_flags.rate_limit_per_minute = 0;
    config
}

/// An issuer on `url` (or a SQLite file in a temp dir) with the test key.
pub async fn issuer_on(url: Option<String>, attribute: Attribute) -> TestIssuer {
    issuer_with(url, config(attribute)).await
}

pub async fn issuer_with(url: Option<String>, config: Config) -> TestIssuer {
    let dir = tempfile::tempdir().unwrap();
    let url = url.unwrap_or_else(|| tacit_store::sqlite_url(&dir.path().join("issuer.db")));
    let db = IssuerDb::open(&url).await.unwrap();
    let clock = Arc::new(AtomicI64::new(NOW));
    let read = clock.clone();
    let keys = KeyStore::new(issuer_key(), Timestamp::from_millis(NOW - 60 * MINUTE));
    let state = AppState::new(keys, db.clone(), &config, move || {
        Timestamp::from_millis(read.load(Ordering::SeqCst))
    })
    .unwrap();
    TestIssuer {
        app: tacit_issuer::app(state.clone()),
        state,
        clock,
        db,
        dir,
    }
}

pub async fn income_issuer() -> TestIssuer {
    issuer_on(None, Attribute::Income).await
}

pub fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

pub fn post_json(body: &Value) -> Request<Body> {
    Request::post("/v1/credentials")
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(body).unwrap()))
        .unwrap()
}

/// Sends a request; returns status, headers and the body as JSON (`Value::Null` if empty).
pub async fn send(app: &Router, request: Request<Body>) -> (StatusCode, HeaderMap, Value) {
    let (status, headers, bytes) = send_raw(app, request).await;
    let json = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&bytes)))
    };
    (status, headers, json)
}

pub async fn send_raw(app: &Router, request: Request<Body>) -> (StatusCode, HeaderMap, Vec<u8>) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap()
        .to_vec();
    (status, headers, bytes)
}

/// Asserts a JSON refusal with `code`, and that the answer has exactly `error` and `message`.
pub fn assert_refused(response: &(StatusCode, HeaderMap, Value), status: StatusCode, code: &str) {
    let (got, headers, json) = response;
    assert_eq!(*got, status, "{json}");
    assert_eq!(json["error"], code, "{json}");
    assert!(
        json["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{json}"
    );
    assert_eq!(json.as_object().unwrap().len(), 2, "{json}");
    assert_eq!(headers["content-type"], "application/json");
}
