//! The relying site's `POST /api/applications` body: arbitrary bytes through the real router
//! (`tacit_site::server::app`, every layer included) of a housing site on a SQLite file in a
//! temp dir, in a tokio current-thread runtime via `tower::ServiceExt::oneshot`.
//!
//! The clock is fixed; the signer's key is pinned; one nonce (`NONCE`) is issued at start, so a
//! seed receipt for it (signed with `SIGNER_SEED`, see `seed_receipt` below) can be accepted once.
//!
//! Asserts: never panics; every answer is JSON with `Content-Type: application/json`; it is the
//! envelope — `{ok: true, result: {accepted: true, …}}` only with 200, or `{ok: false, error:
//! {code, message[, claim]}}` with a known code — and its status is 200 (a verdict), 400, 413 or
//! 415 (malformed body), never a 5xx; a 200 acceptance happens only for a body whose receipt
//! wallet-core verifies for this site and nonce, and at most once. The site trusts no credential
//! issuer (`IssuerKeys::none()`), so no accepted receipt's latest answer to a claim is
//! issuer-backed.
#![no_main]

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use ed25519_dalek::SigningKey;
use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use serde_json::Value;
use tacit_fuzz::services;
use tacit_site::server::{
    IssuerKeys, ManualClock, Nonces, SignerKeys, SiteKey, SiteParts, SiteState, app,
};
use tacit_site::{Code, Policy};
use tokio::runtime::Runtime;
use wallet_core::receipt::verify;
use wallet_core::{KeySet, KeyStatus, Nonce, Origin, PublicKeyEntry, SignedReceipt, Timestamp};

const NOW: i64 = 1_800_000_060_000;
const ORIGIN: &str = "http://127.0.0.1:8081";
const NONCE: &str = "0123456789abcdef0123456789abcdef";
const SIGNER_SEED: [u8; 32] = [42; 32];

struct Harness {
    runtime: Runtime,
    app: Router,
    keys: KeySet,
    accepted: AtomicUsize,
    _dir: tempfile::TempDir,
}

fn policy() -> Policy {
    serde_json::from_value(serde_json::json!({
        "site_name": "City Housing Programme",
        "purpose": "Eligibility for subsidised housing",
        "submission": "application",
        "accepted_text": "Eligible.",
        "requirements_tool": "housing_requirements",
        "submit_tool": "housing_submit_application",
        "claims": [
            { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } },
            { "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] }
        ]
    }))
    .expect("policy")
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let dir = tempfile::tempdir().expect("temp dir");
        let now = Timestamp::from_millis(NOW);
        let signer = SigningKey::from_bytes(&SIGNER_SEED);
        let keys = KeySet {
            keys: vec![PublicKeyEntry::new(
                &signer.verifying_key(),
                now.plus_millis(-86_400_000),
                None,
                KeyStatus::Active,
            )],
        };
        let app = runtime.block_on(async {
            let url = tacit_store::sqlite_url(&dir.path().join("nonces.db"));
            let nonces = Nonces::open(&url).await.expect("database");
            let nonce = Nonce::parse(NONCE).expect("nonce");
            nonces
                .insert(&nonce, now.plus_millis(-60_000))
                .await
                .expect("issue");
            let state = SiteState::new(SiteParts {
                policy: policy(),
                origin: Origin::parse(ORIGIN).expect("origin"),
                site_key: SiteKey::from_bytes(&[9; 32]),
                nonces,
                signer: SignerKeys::pinned(keys.clone()),
                // No trusted issuer: a receipt is judged as before issuer-backed answers.
                issuers: IssuerKeys::none(),
                static_dir: dir.path().join("static"),
                clock: Box::new(ManualClock::new(now)),
            })
            .expect("state");
            app(state)
        });
        Harness {
            runtime,
            app,
            keys,
            accepted: AtomicUsize::new(0),
            _dir: dir,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let h = harness();
    let request = Request::post("/api/applications")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(data.to_vec()))
        .expect("request");
    let (status, body) = services::send_json(&h.runtime, &h.app, request);
    assert!(
        matches!(status.as_u16(), 200 | 400 | 413 | 415),
        "status {status}"
    );
    let envelope: Value = serde_json::from_slice(&body).expect("the answer is JSON");
    if envelope["ok"] == true {
        assert_eq!(status, StatusCode::OK);
        assert_eq!(envelope["result"]["accepted"], true, "{envelope}");
        // Only a receipt wallet-core verifies for this site and its nonce is accepted.
        let input: Value = serde_json::from_slice(data).expect("accepted input is JSON");
        let signed: SignedReceipt =
            serde_json::from_value(input["receipt"].clone()).expect("accepted a non-receipt");
        let origin = Origin::parse(ORIGIN).expect("origin");
        let nonce = Nonce::parse(NONCE).expect("nonce");
        let now = Timestamp::from_millis(NOW);
        let verified = verify(&signed, &h.keys, &origin, &nonce, now)
            .expect("accepted a receipt wallet-core refuses");
        // The site trusts no issuer: no claim's latest answer may be issuer-backed.
        for (claim, _) in verified.answers() {
            assert_eq!(
                verified.latest_issuer(claim),
                None,
                "accepted an issuer-backed answer with no trusted issuer"
            );
        }
        let before = h.accepted.fetch_add(1, Ordering::SeqCst);
        assert_eq!(before, 0, "accepted the single nonce twice");
        return;
    }
    assert_eq!(envelope["ok"], false, "not an envelope: {envelope}");
    let error = envelope["error"].as_object().expect("error object");
    let code = error["code"].as_str().expect("code");
    assert!(Code::parse(code).is_some(), "unknown code {code}");
    assert!(error["message"].is_string(), "{envelope}");
    assert!(
        error
            .keys()
            .all(|k| ["code", "message", "claim"].contains(&k.as_str())),
        "{envelope}"
    );
    if status != StatusCode::OK {
        assert_eq!(code, "invalid_input", "status {status} with {code}");
    }
});

// Half of the mutations edit one JSON value at a time (see `tacit_fuzz::mutate_json`).
fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    tacit_fuzz::mutate_json(data, size, max_size, seed)
});
