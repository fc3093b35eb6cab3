//! The signer's request body: arbitrary bytes POSTed to `/v1/receipts` through the real router
//! (`signer::app`, every layer included), with the headers the wallet sends — each request
//! correctly signed by an enrolled install key, so the body parser is what gets fuzzed — in a
//! tokio current-thread runtime via `tower::ServiceExt::oneshot`. (Arbitrary signature headers
//! are `signer_request_auth`'s job.)
//!
//! The clock is fixed inside the frozen receipt vector's window, so its payload (a seed) is
//! signable; the rate limiter is off (all `oneshot` calls share one bucket). Each request gets
//! its own timestamp within the allowed skew, so a repeated body is a new request; should a
//! (body, timestamp) pair ever repeat, the oracle expects `replayed_request`.
//!
//! Asserts: never panics; every response is JSON with `Content-Type: application/json`; the
//! signer signs exactly when wallet-core's parser and `check_signable` accept the body, and what
//! it signs is that payload and verifies under its published keys; every other answer is a 4xx
//! `{ "error": code, "message": sentence }` and nothing else, never a 5xx.
#![no_main]

use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, OnceLock};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use p256::ecdsa::signature::Signer;
use signer::{AppState, MAX_BODY_BYTES, check_signable};
use tacit_fuzz::services;
use tacit_protocol::request_auth::{
    HEADER_INSTALL, HEADER_SIGNATURE, HEADER_TIMESTAMP, InstallKey, MAX_CLOCK_SKEW_MS, RequestAuth,
    signing_input,
};
use tokio::runtime::Runtime;
use wallet_core::{ReceiptPayload, Timestamp};

/// 30 s after the frozen receipt's `issued_at` (1777627860000), inside its ten-minute window.
const NOW: i64 = 1_777_627_890_000;
const WALLET: &str = "http://127.0.0.1:8080";

struct Harness {
    runtime: Runtime,
    app: Router,
    state: AppState,
    install: p256::ecdsa::SigningKey,
    install_id: String,
    counter: AtomicI64,
    seen: Mutex<HashSet<[u8; 32]>>,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = services::runtime();
        let install = p256::ecdsa::SigningKey::from_slice(&[7; 32]).expect("install key");
        let key = InstallKey::from_verifying_key(*install.verifying_key());
        let now = Timestamp::from_millis(NOW);
        let state = services::signer_with_install(&runtime, "signer-body", &key, WALLET, now);
        Harness {
            runtime,
            app: signer::app(state.clone()),
            state,
            install,
            install_id: key.id().as_str().to_owned(),
            counter: AtomicI64::new(0),
            seen: Mutex::new(HashSet::new()),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let h = harness();
    // A timestamp within the skew, different for each request (it cycles after 2 × skew).
    let tick = h.counter.fetch_add(1, Ordering::Relaxed) % (2 * MAX_CLOCK_SKEW_MS);
    let timestamp = (NOW - MAX_CLOCK_SKEW_MS + tick).to_string();
    let input = signing_input("POST", "/v1/receipts", NOW - MAX_CLOCK_SKEW_MS + tick, data);
    let signature: p256::ecdsa::Signature = h.install.sign(input.as_bytes());
    let signature = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        signature.to_bytes(),
    );
    let auth = RequestAuth::parse(Some(&h.install_id), Some(&timestamp), Some(&signature))
        .expect("well-formed headers");
    let replayed = !h.seen.lock().expect("seen").insert(auth.replay_token());
    let request = Request::post("/v1/receipts")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ORIGIN, WALLET)
        .header(HEADER_INSTALL, &h.install_id)
        .header(HEADER_TIMESTAMP, &timestamp)
        .header(HEADER_SIGNATURE, &signature)
        .body(Body::from(data.to_vec()))
        .expect("request");
    let (status, body) = services::send_json(&h.runtime, &h.app, request);

    if data.len() > MAX_BODY_BYTES {
        assert!(status.is_client_error(), "oversize body: {status}");
        return;
    }
    if replayed {
        assert_eq!(status, StatusCode::UNAUTHORIZED, "a replay got {status}");
        return;
    }
    let now = Timestamp::from_millis(NOW);
    let signable = serde_json::from_slice::<ReceiptPayload>(data)
        .ok()
        .filter(|p| check_signable(p, now).is_ok());
    if status == StatusCode::OK {
        let payload = signable.expect("signed a body the rules refuse");
        assert!(data.len() <= MAX_BODY_BYTES);
        services::assert_signed_as_sent(&h.state, &body, &payload, now);
        return;
    }
    assert!(
        signable.is_none() || data.len() > MAX_BODY_BYTES,
        "refused a signable body with {status}"
    );
    assert!(status.is_client_error(), "status {status}");
    services::assert_error_body(&body);
});

// Half of the mutations edit one JSON value at a time (see `tacit_fuzz::mutate_json`).
fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    tacit_fuzz::mutate_json(data, size, max_size, seed)
});
