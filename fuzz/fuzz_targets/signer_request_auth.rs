//! The signer's request-signature headers: arbitrary `tacit-install`, `tacit-timestamp` and
//! `tacit-signature` values (and body) through `tacit_protocol::request_auth` and through the
//! real router (`signer::app`, every layer, a SQLite file with one enrolled install), in a tokio
//! current-thread runtime via `tower::ServiceExt::oneshot`.
//!
//! Input: a JSON object `{"install": s, "timestamp": s, "signature": s, "body": s}` (a missing
//! member is a missing header), so the JSON mutator edits one header at a time; anything else is
//! split at the first three newlines into the three values and the body.
//!
//! Asserts, against an oracle computed from the pure rules: never panics; every answer is JSON
//! with `Content-Type: application/json`, never a 5xx; a missing header is `unauthenticated`, a
//! malformed one `bad_request_signature`, another install `unknown_install`, a timestamp beyond
//! the skew `stale_request`, a signature that does not verify `bad_request_signature`, a
//! signed request seen before `replayed_request`; and the signer signs exactly when the
//! signature verifies under the enrolled key for this method, path, time and body, the request
//! is new, and wallet-core accepts the payload, and what it signs verifies.
#![no_main]

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, Request, header};
use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use serde_json::Value;
use signer::{AppState, MAX_BODY_BYTES, check_signable};
use tacit_fuzz::services;
use tacit_protocol::request_auth::{
    AuthError, HEADER_INSTALL, HEADER_SIGNATURE, HEADER_TIMESTAMP, InstallKey, Jwk, RequestAuth,
};
use tokio::runtime::Runtime;
use wallet_core::{ReceiptPayload, Timestamp};

/// 30 s after the frozen receipt's `issued_at` (1777627860000), inside its ten-minute window.
const NOW: i64 = 1_777_627_890_000;
const WALLET: &str = "http://127.0.0.1:8080";
/// The enrolled install: tacit-protocol's frozen WebCrypto test key (the seed is signed by it).
const INSTALL_JWK: &str = r#"{"kty":"EC","crv":"P-256","x":"ULg6IHAsjqRyXwR8ueGBwuFnFcTdRZ8yKO8usFlPdKM","y":"1s_dfSlU25slwuyX-riMFnRMD8eSRFspqR21qCkBvNM"}"#;

struct Harness {
    runtime: Runtime,
    app: Router,
    state: AppState,
    key: InstallKey,
    /// Replay tokens of requests the oracle expects the signer to have taken.
    seen: Mutex<HashSet<[u8; 32]>>,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = services::runtime();
        let jwk: Jwk = serde_json::from_str(INSTALL_JWK).expect("jwk");
        let key = InstallKey::from_jwk(&jwk).expect("key");
        let now = Timestamp::from_millis(NOW);
        let state =
            services::signer_with_install(&runtime, "signer-request-auth", &key, WALLET, now);
        Harness {
            runtime,
            app: signer::app(state.clone()),
            state,
            key,
            seen: Mutex::new(HashSet::new()),
        }
    })
}

/// The three header values (`None`: absent) and the body.
struct Input {
    install: Option<String>,
    timestamp: Option<String>,
    signature: Option<String>,
    body: Vec<u8>,
}

impl Input {
    fn from_bytes(data: &[u8]) -> Self {
        if let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(data) {
            let text = |name: &str| map.get(name).and_then(Value::as_str).map(str::to_owned);
            return Self {
                install: text("install"),
                timestamp: text("timestamp"),
                signature: text("signature"),
                body: text("body").unwrap_or_default().into_bytes(),
            };
        }
        let mut parts = data.splitn(4, |b| *b == b'\n');
        let mut next = || {
            parts
                .next()
                .map(|p| String::from_utf8_lossy(p).into_owned())
        };
        Self {
            install: next(),
            timestamp: next(),
            signature: next(),
            body: parts_rest(data),
        }
    }
}

fn parts_rest(data: &[u8]) -> Vec<u8> {
    data.splitn(4, |b| *b == b'\n')
        .nth(3)
        .unwrap_or_default()
        .to_vec()
}

fn expect_code(status: u16, body: &[u8], want_status: u16, code: &str) {
    assert_eq!(
        status,
        want_status,
        "want {code}: {}",
        String::from_utf8_lossy(body)
    );
    let json: Value = serde_json::from_slice(body).expect("error body is JSON");
    assert_eq!(json["error"], code, "{json}");
    assert_eq!(json.as_object().map(|o| o.len()), Some(2), "{json}");
}

fuzz_target!(|data: &[u8]| {
    let h = harness();
    let input = Input::from_bytes(data);
    let now = Timestamp::from_millis(NOW);

    // The pure rules on their own: never panic; what parses round-trips.
    let parsed = RequestAuth::parse(
        input.install.as_deref(),
        input.timestamp.as_deref(),
        input.signature.as_deref(),
    );
    if let Ok(auth) = &parsed {
        assert_eq!(Some(auth.install_id().as_str()), input.install.as_deref());
        let _ = auth.verify(&h.key, "PUT", "/elsewhere", &input.body, now);
    }

    // Header values the HTTP layer cannot carry are not a request anyone can send.
    let mut request = Request::post("/v1/receipts")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ORIGIN, WALLET);
    for (name, value) in [
        (HEADER_INSTALL, &input.install),
        (HEADER_TIMESTAMP, &input.timestamp),
        (HEADER_SIGNATURE, &input.signature),
    ] {
        if let Some(value) = value {
            let Ok(value) = HeaderValue::from_str(value) else {
                return;
            };
            request = request.header(name, value);
        }
    }
    let request = request
        .body(Body::from(input.body.clone()))
        .expect("request");
    let (status, body) = services::send_json(&h.runtime, &h.app, request);
    let status = status.as_u16();
    assert!(status < 500, "status {status}");

    // The router reads header values as visible ASCII; anything else is malformed there.
    let ascii = |v: &Option<String>| {
        v.as_deref().map(|s| {
            if s.bytes().all(|b| (32..127).contains(&b) || b == b'\t') {
                s.to_owned()
            } else {
                "\0".to_owned()
            }
        })
    };
    let seen_by_router = RequestAuth::parse(
        ascii(&input.install).as_deref(),
        ascii(&input.timestamp).as_deref(),
        ascii(&input.signature).as_deref(),
    );
    let auth = match seen_by_router {
        Err(AuthError::Missing) => return expect_code(status, &body, 401, "unauthenticated"),
        Err(_) => return expect_code(status, &body, 401, "bad_request_signature"),
        Ok(auth) => auth,
    };
    if input.body.len() > MAX_BODY_BYTES {
        return expect_code(status, &body, 413, "payload_too_large");
    }
    if *auth.install_id() != h.key.id() {
        return expect_code(status, &body, 401, "unknown_install");
    }
    match auth.verify(&h.key, "POST", "/v1/receipts", &input.body, now) {
        Err(AuthError::Stale) => return expect_code(status, &body, 401, "stale_request"),
        Err(_) => return expect_code(status, &body, 401, "bad_request_signature"),
        Ok(()) => {}
    }
    let fresh = h.seen.lock().expect("seen").insert(auth.replay_token());
    if !fresh {
        return expect_code(status, &body, 401, "replayed_request");
    }
    let signable = serde_json::from_slice::<ReceiptPayload>(&input.body)
        .ok()
        .filter(|p| check_signable(p, now).is_ok());
    let Some(payload) = signable else {
        assert_eq!(status, 422, "{}", String::from_utf8_lossy(&body));
        return;
    };
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    services::assert_signed_as_sent(&h.state, &body, &payload, now);
});

// Half of the mutations edit one JSON value at a time (see `tacit_fuzz::mutate_json`).
fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    tacit_fuzz::mutate_json(data, size, max_size, seed)
});
