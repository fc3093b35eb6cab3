//! What the service targets (`signer_body`, `signer_request_auth`, `issuer_request`,
//! `site_api_body`) share: a current-thread runtime, a fresh directory for a SQLite file, one
//! request through a router with its JSON content type checked, the shape of a refusal, a
//! signer with one enrolled install, and the check of what that signer signed.

use std::path::PathBuf;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode, header};
use ed25519_dalek::SigningKey;
use serde_json::Value;
use signer::{AppState, Config, KeyStore, SignerDb, enrol_code};
use tacit_protocol::request_auth::InstallKey;
use tokio::runtime::Runtime;
use tower::ServiceExt;
use wallet_core::receipt::verify;
use wallet_core::{ReceiptPayload, SignedReceipt, Timestamp};

/// A current-thread runtime with time and I/O.
pub fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// An empty directory `tacit-fuzz-<name>-<pid>` under the system's temporary directory.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tacit-fuzz-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Sends `request` through `app` and returns the status and the body, asserting that the
/// answer says `Content-Type: application/json`.
pub fn send_json(runtime: &Runtime, app: &Router, request: Request<Body>) -> (StatusCode, Bytes) {
    let (status, content_type, body) = runtime.block_on(async {
        let response = app.clone().oneshot(request).await.expect("infallible");
        let status = response.status();
        let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("body");
        (status, content_type, body)
    });
    assert_eq!(
        content_type.as_ref().map(|v| v.as_bytes()),
        Some(&b"application/json"[..]),
        "status {status}: not JSON"
    );
    (status, body)
}

/// Asserts that `body` is a refusal: `{ "error": code, "message": sentence }` and nothing else.
pub fn assert_error_body(body: &[u8]) {
    let json: Value = serde_json::from_slice(body).expect("error body is JSON");
    let object = json.as_object().expect("error body is an object");
    assert_eq!(object.len(), 2, "only error and message: {json}");
    for field in ["error", "message"] {
        let text = object.get(field).and_then(Value::as_str);
        assert!(text.is_some_and(|t| !t.is_empty()), "{field}: {json}");
    }
}

/// A signer on a SQLite file in [`fresh_dir`]`(name)` whose clock reads `now`, with `install`
/// enrolled, `wallet` as its one allowed origin, no rate limit, and a fixed signing key active
/// since a day before `now`.
pub fn signer_with_install(
    runtime: &Runtime,
    name: &str,
    install: &InstallKey,
    wallet: &str,
    now: Timestamp,
) -> AppState {
    let url = format!("sqlite://{}", fresh_dir(name).join("signer.db").display());
    let db = runtime.block_on(async {
        let db = SignerDb::open(&url).await.expect("database");
        let code = enrol_code(&db, "fuzz", Duration::from_secs(60), now)
            .await
            .expect("code");
        db.enrol(&code, install, now).await.expect("enrol");
        db
    });
    let mut config = Config {
        allowed_origins: vec![wallet_core::Origin::parse(wallet).expect("origin")],
        ..Config::default()
    };
    config.limit_flags.rate_limit_per_minute = 0;
    let signing = SigningKey::from_bytes(&[42; 32]);
    let keys = KeyStore::from_signing_key(signing, now.plus_millis(-86_400_000));
    AppState::new(keys, db, &config, move || now)
}

/// Asserts that the signer's answer `body` is a signed receipt of exactly `payload`, and that it
/// verifies under `state`'s published keys for the payload's audience and nonce at `now`.
pub fn assert_signed_as_sent(
    state: &AppState,
    body: &[u8],
    payload: &ReceiptPayload,
    now: Timestamp,
) {
    let signed = SignedReceipt::parse(body).expect("the answer is a signed receipt");
    assert_eq!(
        &signed.payload, payload,
        "signed something else than what was sent"
    );
    let keys = state.keys().key_set();
    let verified = verify(&signed, &keys, &payload.audience, &payload.nonce, now);
    assert!(
        verified.is_ok(),
        "a fresh signature does not verify: {verified:?}"
    );
}
