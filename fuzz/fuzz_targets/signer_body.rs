//! The signer's request body: arbitrary bytes POSTed to `/v1/receipts` through the real router
//! (`signer::app`, every layer included), with the headers the wallet sends, in a tokio
//! current-thread runtime via `tower::ServiceExt::oneshot`.
//!
//! The clock is fixed inside the frozen receipt vector's window, so its payload (a seed) is
//! signable; the rate limiter is off (all `oneshot` calls share one bucket).
//!
//! Asserts: never panics; every response is JSON with `Content-Type: application/json`; the
//! signer signs exactly when wallet-core's parser and `check_signable` accept the body, and what
//! it signs is that payload and verifies under its published keys; every other answer is a 4xx
//! `{ "error": code, "message": sentence }` and nothing else, never a 5xx.
#![no_main]

use std::sync::OnceLock;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use ed25519_dalek::SigningKey;
use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use serde_json::Value;
use signer::{AppState, Config, KeyStore, MAX_BODY_BYTES, check_signable};
use tokio::runtime::Runtime;
use tower::ServiceExt;
use wallet_core::receipt::verify;
use wallet_core::{ReceiptPayload, SignedReceipt, Timestamp};

/// 30 s after the frozen receipt's `issued_at` (1777627860000), inside its ten-minute window.
const NOW: i64 = 1_777_627_890_000;
const WALLET: &str = "http://127.0.0.1:8080";

struct Harness {
    runtime: Runtime,
    app: Router,
    state: AppState,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let config = Config {
            allowed_origins: vec![wallet_core::Origin::parse(WALLET).expect("origin")],
            rate_limit_per_minute: 0,
            ..Config::default()
        };
        let key = SigningKey::from_bytes(&[42; 32]);
        let keys = KeyStore::from_signing_key(key, Timestamp::from_millis(NOW - 86_400_000));
        let state = AppState::new(keys, &config, || Timestamp::from_millis(NOW));
        Harness {
            runtime,
            app: signer::app(state.clone()),
            state,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let h = harness();
    let request = Request::post("/v1/receipts")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ORIGIN, WALLET)
        .body(Body::from(data.to_vec()))
        .expect("request");
    let (status, content_type, body) = h.runtime.block_on(async {
        let response = h.app.clone().oneshot(request).await.expect("infallible");
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

    let now = Timestamp::from_millis(NOW);
    let signable = serde_json::from_slice::<ReceiptPayload>(data)
        .ok()
        .filter(|p| check_signable(p, now).is_ok());
    if status == StatusCode::OK {
        let payload = signable.expect("signed a body the rules refuse");
        assert!(data.len() <= MAX_BODY_BYTES);
        let signed = SignedReceipt::parse(&body).expect("the answer is a signed receipt");
        assert_eq!(
            signed.payload, payload,
            "signed something else than what was sent"
        );
        let keys = h.state.keys().key_set();
        let verified = verify(&signed, &keys, &payload.audience, &payload.nonce, now);
        assert!(
            verified.is_ok(),
            "a fresh signature does not verify: {verified:?}"
        );
        return;
    }
    assert!(
        signable.is_none() || data.len() > MAX_BODY_BYTES,
        "refused a signable body with {status}"
    );
    assert!(status.is_client_error(), "status {status}");
    let json: Value = serde_json::from_slice(&body).expect("error body is JSON");
    let object = json.as_object().expect("error body is an object");
    assert_eq!(object.len(), 2, "only error and message: {json}");
    assert!(object.get("error").is_some_and(Value::is_string), "{json}");
    assert!(
        object.get("message").is_some_and(Value::is_string),
        "{json}"
    );
});

// Half of the mutations edit one JSON value at a time (see `tacit_fuzz::mutate_json`).
fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    tacit_fuzz::mutate_json(data, size, max_size, seed)
});
