//! The signer signs only for enrolled wallets: enrolment with one-time codes, and every refusal
//! of `POST /v1/receipts` (unsigned, unknown or revoked install, stale, replayed, forged), through
//! the router with `oneshot`. Every scenario runs on a SQLite file and on a real PostgreSQL
//! (`tacit_store::testing::PgCluster`), and the multi-instance ones with two signer states on one
//! database.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::*;
use serde_json::json;
use signer::{AppState, Config, KeyStore, SignerDb, enrol_code};
use tacit_protocol::request_auth::{
    EnrolmentCode, HEADER_INSTALL, HEADER_SIGNATURE, HEADER_TIMESTAMP, MAX_CLOCK_SKEW_MS,
    REPLAY_KEEP_MS, make_enrolment_code,
};
use tacit_store::sqlx::{self, Row};
use wallet_core::receipt::verify;
use wallet_core::{KeySet, SignedReceipt, Timestamp};

const NOW: i64 = T0 + MINUTE;

/// A signer on `url` (a second one on the same URL is another instance), `test_install`
/// enrolled, clock at NOW.
async fn instance(url: &str) -> TestApp {
    let db = SignerDb::open(url).await.unwrap();
    TestApp::on(db, &config(), NOW, None).await
}

/// A second instance on the same database (no new enrolment), sharing `first`'s clock.
async fn second_instance(url: &str, first: &TestApp) -> AppState {
    let db = SignerDb::open(url).await.unwrap();
    state_on(db, &config(), &first.clock)
}

async fn code_for(app: &TestApp, label: &str, valid_for: Duration) -> EnrolmentCode {
    enrol_code(
        app.db(),
        label,
        valid_for,
        Timestamp::from_millis(app.clock.now()),
    )
    .await
    .unwrap()
}

fn enrolment_body(code: &str, install: &Install) -> Vec<u8> {
    serde_json::to_vec(&json!({ "code": code, "public_key": install.webcrypto_jwk() })).unwrap()
}

/// `POST /v1/installs` for `install` with `code`, signed by `install`.
fn enrol_request(app: &TestApp, code: &str, install: &Install) -> Request<Body> {
    app.signed_by(
        install,
        "/v1/installs",
        Some("application/json"),
        enrolment_body(code, install),
    )
}

/// A receipt request signed by `install` at timestamp `ts`.
fn receipt_at(install: &Install, ts: i64) -> Request<Body> {
    let body = serde_json::to_vec(&payload_json(NOW)).unwrap();
    let mut request = Request::post("/v1/receipts")
        .header("content-type", "application/json")
        .header("origin", WALLET);
    for (name, value) in install.headers("POST", "/v1/receipts", ts, &body) {
        request = request.header(name, value);
    }
    request.body(Body::from(body)).unwrap()
}

/// Replaces one header of a request.
fn with_header(mut request: Request<Body>, name: &'static str, value: &str) -> Request<Body> {
    request.headers_mut().insert(name, value.parse().unwrap());
    request
}

async fn keys(app: &axum::Router) -> KeySet {
    let (status, _, json) = send(app, Request::get("/v1/keys").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    serde_json::from_value(json).unwrap()
}

// ---- scenarios: each takes the URL of a fresh, empty database ----

/// Enrol with a code typed as a person would, then sign a receipt that verifies.
async fn enrol_then_sign(url: String) {
    let app = instance(&url).await;
    let code = code_for(&app, "Ana's laptop", Duration::from_secs(3600)).await;
    let newcomer = Install::fixed("newcomer");
    let typed = code.to_string().to_lowercase();
    let response = send(&app, enrol_request(&app, &typed, &newcomer)).await;
    let (status, headers, json) = &response;
    assert_eq!(*status, StatusCode::CREATED, "{json}");
    assert_eq!(headers["access-control-allow-origin"], WALLET);
    assert_eq!(json["install_id"], newcomer.id().as_str());
    assert_eq!(json["signer_origin"], "http://127.0.0.1:8787");
    assert_eq!(json["keys_url"], "/v1/keys");
    assert_eq!(json.as_object().unwrap().len(), 3);

    let (status, _, json) = send(&app, receipt_at(&newcomer, app.next_ts())).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    let signed: SignedReceipt = serde_json::from_value(json).unwrap();
    let checked = verify(
        &signed,
        &keys(&app).await,
        &site(),
        &nonce(),
        Timestamp::from_millis(NOW),
    );
    assert!(checked.is_ok(), "{checked:?}");

    let listed = app.db().installs().await.unwrap();
    let mine = listed
        .iter()
        .find(|i| i.install_id == newcomer.id().as_str())
        .unwrap();
    assert_eq!(mine.label, "Ana's laptop");
    assert_eq!(mine.created_at, Timestamp::from_millis(NOW));
    assert_eq!(mine.revoked_at, None);

    // The code is stored only as a hash: its characters are nowhere in the table.
    let rows = sqlx::query("SELECT code_hash, label FROM enrolment_codes")
        .fetch_all(app.db().store().pool())
        .await
        .unwrap();
    for row in rows {
        let hash: String = row.try_get(0).unwrap();
        assert!(!hash.contains(&code.canonical().to_lowercase()));
        assert!(!hash.to_uppercase().contains(code.canonical()));
    }
}

/// Every refusal of an enrolment, and that a refused attempt does not burn the code.
async fn enrolment_refusals(url: String) {
    let app = instance(&url).await;
    let code = code_for(&app, "", Duration::from_secs(600)).await;
    let shown = code.to_string();
    let newcomer = Install::fixed("newcomer");
    let stranger = Install::fixed("stranger");

    // Unsigned.
    let request = Request::post("/v1/installs")
        .header("content-type", "application/json")
        .body(Body::from(enrolment_body(&shown, &newcomer)))
        .unwrap();
    assert_error(
        &send(&app, request).await,
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
    );

    // tacit-install names another key than the one enrolled.
    let body = enrolment_body(&shown, &newcomer);
    let mut request = Request::post("/v1/installs")
        .header("content-type", "application/json")
        .header("origin", WALLET);
    for (name, value) in stranger.headers("POST", "/v1/installs", app.next_ts(), &body) {
        request = request.header(name, value);
    }
    let request = request.body(Body::from(body.clone())).unwrap();
    assert_error(
        &send(&app, request).await,
        StatusCode::UNAUTHORIZED,
        "install_mismatch",
    );

    // The right id, signed by another key: no proof of possession.
    let ts = app.next_ts();
    let mut request = Request::post("/v1/installs")
        .header("content-type", "application/json")
        .header(HEADER_INSTALL, newcomer.id().as_str())
        .header(HEADER_TIMESTAMP, ts.to_string())
        .header(
            HEADER_SIGNATURE,
            stranger.signature("POST", "/v1/installs", ts, &body),
        );
    request = request.header("origin", WALLET);
    let request = request.body(Body::from(body)).unwrap();
    assert_error(
        &send(&app, request).await,
        StatusCode::UNAUTHORIZED,
        "bad_request_signature",
    );

    // Wrong, malformed, and look-alike-free wrong codes.
    let wrong = make_enrolment_code([7; 10]).to_string();
    for bad in [wrong.as_str(), "not-a-code", ""] {
        let message = assert_error(
            &send(&app, enrol_request(&app, bad, &newcomer)).await,
            StatusCode::FORBIDDEN,
            "enrolment_refused",
        );
        assert!(!message.contains(bad) || bad.is_empty(), "{message}");
    }

    // Not a P-256 JWK, or an extra field.
    let mut jwk = newcomer.webcrypto_jwk();
    jwk["crv"] = json!("P-384");
    let body = serde_json::to_vec(&json!({ "code": shown, "public_key": jwk })).unwrap();
    let request = app.signed_by(&newcomer, "/v1/installs", Some("application/json"), body);
    assert_error(
        &send(&app, request).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_enrolment",
    );
    let body = serde_json::to_vec(
        &json!({ "code": shown, "public_key": newcomer.webcrypto_jwk(), "label": "me" }),
    )
    .unwrap();
    let request = app.signed_by(&newcomer, "/v1/installs", Some("application/json"), body);
    assert_error(
        &send(&app, request).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_enrolment",
    );

    // An already enrolled key: refused, and the code is not consumed by it.
    let message = assert_error(
        &send(&app, enrol_request(&app, &shown, &app.install)).await,
        StatusCode::CONFLICT,
        "already_enrolled",
    );
    assert!(message.contains("new key"), "{message}");

    // After all that, the code still works once...
    let response = send(&app, enrol_request(&app, &shown, &newcomer)).await;
    assert_eq!(response.0, StatusCode::CREATED, "{}", response.2);
    // ...and only once.
    assert_error(
        &send(&app, enrol_request(&app, &shown, &stranger)).await,
        StatusCode::FORBIDDEN,
        "enrolment_refused",
    );
}

/// A code past its validity is refused, at the edge.
async fn expired_codes_are_refused(url: String) {
    let app = instance(&url).await;
    let code = code_for(&app, "", Duration::from_secs(60))
        .await
        .to_string();
    let late = Install::fixed("late");
    app.clock.set(NOW + MINUTE);
    assert_error(
        &send(&app, enrol_request(&app, &code, &late)).await,
        StatusCode::FORBIDDEN,
        "enrolment_refused",
    );
    let fresh = code_for(&app, "", Duration::from_secs(60))
        .await
        .to_string();
    app.clock.set(NOW + 2 * MINUTE - 1);
    let response = send(&app, enrol_request(&app, &fresh, &late)).await;
    assert_eq!(response.0, StatusCode::CREATED, "{}", response.2);
}

/// Twenty wallets race for one code on two instances: exactly one wins.
async fn a_code_races_on_two_instances(url: String) {
    let app = instance(&url).await;
    let other = signer::app(second_instance(&url, &app).await);
    let code = code_for(&app, "", Duration::from_secs(600))
        .await
        .to_string();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let install = Install::fixed(&format!("racer-{i}"));
        let request = enrol_request(&app, &code, &install);
        let router = if i % 2 == 0 {
            app.app.clone()
        } else {
            other.clone()
        };
        tasks.push(tokio::spawn(async move { send(&router, request).await }));
    }
    let mut created = 0;
    for task in tasks {
        let (status, _, json) = task.await.unwrap();
        match status {
            StatusCode::CREATED => created += 1,
            StatusCode::FORBIDDEN => assert_eq!(json["error"], "enrolment_refused"),
            other => panic!("{other}: {json}"),
        }
    }
    assert_eq!(created, 1);
    // The winner plus test_install.
    assert_eq!(app.db().installs().await.unwrap().len(), 2);
}

/// Missing or malformed headers, wrong method/path/body/time, another key: refused.
async fn unsigned_and_forged_requests_are_refused(url: String) {
    let app = instance(&url).await;
    let install = &app.install;
    let body = serde_json::to_vec(&payload_json(NOW)).unwrap();

    // No headers at all: the curl forgery from the issue, with and without an Origin.
    for origin in [None, Some(WALLET)] {
        let mut request = Request::post("/v1/receipts").header("content-type", "application/json");
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        let response = send(&app, request.body(Body::from(body.clone())).unwrap()).await;
        assert_error(&response, StatusCode::UNAUTHORIZED, "unauthenticated");
        assert!(response.1.contains_key("www-authenticate"));
    }
    // Any one header missing.
    for missing in [HEADER_INSTALL, HEADER_TIMESTAMP, HEADER_SIGNATURE] {
        let mut request = receipt_at(install, app.next_ts());
        request.headers_mut().remove(missing);
        assert_error(
            &send(&app, request).await,
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
        );
    }
    // Malformed values.
    for (name, value) in [
        (HEADER_SIGNATURE, "not base64!"),
        (HEADER_SIGNATURE, "AAAA"),
        (HEADER_TIMESTAMP, "yesterday"),
        (HEADER_TIMESTAMP, "-5"),
        (HEADER_INSTALL, "short"),
    ] {
        let request = with_header(receipt_at(install, app.next_ts()), name, value);
        assert_error(
            &send(&app, request).await,
            StatusCode::UNAUTHORIZED,
            "bad_request_signature",
        );
    }
    // A signature over something else: another body, path, method or time.
    let ts = app.next_ts();
    let other_body = serde_json::to_vec(&payload_json(NOW - 1)).unwrap();
    let forgeries = [
        install.signature("POST", "/v1/receipts", ts, &other_body),
        install.signature("POST", "/v1/installs", ts, &body),
        install.signature("PUT", "/v1/receipts", ts, &body),
        install.signature("POST", "/v1/receipts", ts + 1, &body),
        Install::fixed("stranger").signature("POST", "/v1/receipts", ts, &body),
    ];
    for forged in forgeries {
        let request = Request::post("/v1/receipts")
            .header("content-type", "application/json")
            .header(HEADER_INSTALL, install.id().as_str())
            .header(HEADER_TIMESTAMP, ts.to_string())
            .header(HEADER_SIGNATURE, forged)
            .body(Body::from(body.clone()))
            .unwrap();
        assert_error(
            &send(&app, request).await,
            StatusCode::UNAUTHORIZED,
            "bad_request_signature",
        );
    }
    // A well-signed request from a key that was never enrolled.
    let stranger = Install::fixed("stranger");
    assert_error(
        &send(&app, receipt_at(&stranger, app.next_ts())).await,
        StatusCode::UNAUTHORIZED,
        "unknown_install",
    );
    // Signed and enrolled, but from a browser origin that is not a wallet: still refused.
    let request = with_header(
        receipt_at(install, app.next_ts()),
        "origin",
        "https://evil.example",
    );
    assert_error(
        &send(&app, request).await,
        StatusCode::FORBIDDEN,
        "origin_not_allowed",
    );
    // A signed request without any Origin (a CLI wallet) is served.
    let mut request = receipt_at(install, app.next_ts());
    request.headers_mut().remove("origin");
    assert_eq!(send(&app, request).await.0, StatusCode::OK);
}

/// Timestamps beyond two minutes either way are stale; the edges are not.
async fn stale_requests_are_refused(url: String) {
    let app = instance(&url).await;
    for ts in [
        NOW - MAX_CLOCK_SKEW_MS - 1,
        NOW + MAX_CLOCK_SKEW_MS + 1,
        0,
        NOW - HOUR,
    ] {
        assert_error(
            &send(&app, receipt_at(&app.install, ts)).await,
            StatusCode::UNAUTHORIZED,
            "stale_request",
        );
    }
    for ts in [NOW - MAX_CLOCK_SKEW_MS, NOW + MAX_CLOCK_SKEW_MS] {
        let (status, _, json) = send(&app, receipt_at(&app.install, ts)).await;
        assert_eq!(status, StatusCode::OK, "{ts}: {json}");
    }
}

/// A request is taken once: replayed to the same instance, to another instance, or with its
/// signature's `s` flipped to the other valid form.
async fn replays_are_refused_across_instances(url: String) {
    let app = instance(&url).await;
    let other = signer::app(second_instance(&url, &app).await);
    let (first, again) = duplicate(receipt_at(&app.install, app.next_ts())).await;
    let (again, on_other) = duplicate(again).await;
    let (status, _, json) = send(&app, first).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    assert_error(
        &send(&app, again).await,
        StatusCode::UNAUTHORIZED,
        "replayed_request",
    );
    assert_error(
        &send(&other, on_other).await,
        StatusCode::UNAUTHORIZED,
        "replayed_request",
    );

    // The malleated twin of a taken signature is the same request.
    let request = receipt_at(&app.install, app.next_ts());
    let signature = request.headers()[HEADER_SIGNATURE]
        .to_str()
        .unwrap()
        .to_owned();
    let (request, twin) = duplicate(request).await;
    assert_eq!(send(&app, request).await.0, StatusCode::OK);
    let twin = with_header(twin, HEADER_SIGNATURE, &flip_s(&signature));
    assert_error(
        &send(&other, twin).await,
        StatusCode::UNAUTHORIZED,
        "replayed_request",
    );

    // A refused payload still uses up its signed request.
    let bad = app.post_bytes(b"{\"income\": 1}".to_vec());
    let (bad, bad_again) = duplicate(bad).await;
    assert_eq!(send(&app, bad).await.0, StatusCode::UNPROCESSABLE_ENTITY);
    assert_error(
        &send(&app, bad_again).await,
        StatusCode::UNAUTHORIZED,
        "replayed_request",
    );

    // Enrolments are signed requests too, and taken once.
    let code = code_for(&app, "", Duration::from_secs(600))
        .await
        .to_string();
    let (enrol, enrol_again) = duplicate(enrol_request(&app, &code, &Install::fixed("n"))).await;
    assert_eq!(send(&app, enrol).await.0, StatusCode::CREATED);
    assert_error(
        &send(&other, enrol_again).await,
        StatusCode::UNAUTHORIZED,
        "replayed_request",
    );

    // Tokens are kept while their request could still be fresh, then purged.
    let kept = app.db().seen_count().await.unwrap();
    assert!(kept >= 4, "{kept}");
    let purged = app
        .db()
        .purge_seen(Timestamp::from_millis(NOW))
        .await
        .unwrap();
    assert_eq!(purged, 0);
    let later = Timestamp::from_millis(NOW + REPLAY_KEEP_MS + 10 * MINUTE);
    assert_eq!(app.db().purge_seen(later).await.unwrap(), kept as u64);
    assert_eq!(app.db().seen_count().await.unwrap(), 0);
}

/// Revoking an install refuses its next request, on every instance.
async fn revoked_installs_are_refused(url: String) {
    let app = instance(&url).await;
    let other = signer::app(second_instance(&url, &app).await);
    assert_eq!(
        send(&app, receipt_at(&app.install, app.next_ts())).await.0,
        StatusCode::OK
    );
    let id = app.install.id();
    let now = Timestamp::from_millis(NOW);
    assert!(app.db().revoke_install(id.as_str(), now).await.unwrap());
    assert!(!app.db().revoke_install(id.as_str(), now).await.unwrap());
    assert!(
        !app.db()
            .revoke_install("no-such-install", now)
            .await
            .unwrap()
    );
    for router in [&app.app, &other] {
        assert_error(
            &send(router, receipt_at(&app.install, app.next_ts())).await,
            StatusCode::UNAUTHORIZED,
            "unknown_install",
        );
    }
    let listed = app.db().installs().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].revoked_at, Some(now));
    // A revoked key cannot enrol again with a fresh code.
    let code = code_for(&app, "", Duration::from_secs(600))
        .await
        .to_string();
    assert_error(
        &send(&app, enrol_request(&app, &code, &app.install)).await,
        StatusCode::CONFLICT,
        "already_enrolled",
    );
}

tacit_testkit::on_both_backends!(
    worker_threads = 2,
    sqlite_file = "signer.db";
    enrol_then_sign,
    enrolment_refusals,
    expired_codes_are_refused,
    a_code_races_on_two_instances,
    unsigned_and_forged_requests_are_refused,
    stale_requests_are_refused,
    replays_are_refused_across_instances,
    revoked_installs_are_refused,
);

// ---- without a database backend of their own ----

#[tokio::test]
async fn preflight_allows_the_signature_headers_on_both_routes() {
    let app = app_at(NOW).await;
    for path in ["/v1/receipts", "/v1/installs"] {
        let preflight = Request::options(path)
            .header("origin", WALLET)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "content-type,tacit-install,tacit-timestamp,tacit-signature",
            )
            .body(Body::empty())
            .unwrap();
        let (status, headers, _) = send(&app, preflight).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers["access-control-allow-origin"], WALLET);
        let allowed = headers["access-control-allow-headers"].to_str().unwrap();
        for name in [
            "content-type",
            HEADER_INSTALL,
            HEADER_TIMESTAMP,
            HEADER_SIGNATURE,
        ] {
            assert!(allowed.contains(name), "{path}: {allowed}");
        }
    }
}

#[tokio::test]
async fn enrolment_is_rate_limited_too() {
    let mut config = Config::default();
    config.limit_flags.rate_limit_per_minute = 2;
    let app = TestApp::sqlite(&config, NOW).await;
    let wrong = make_enrolment_code([1; 10]).to_string();
    for _ in 0..2 {
        let request = enrol_request(&app, &wrong, &Install::fixed("guesser"));
        assert_eq!(send(&app, request).await.0, StatusCode::FORBIDDEN);
    }
    let request = enrol_request(&app, &wrong, &Install::fixed("guesser"));
    assert_error(
        &send(&app, request).await,
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
    );
}

#[tokio::test]
async fn enrol_code_refuses_odd_labels_and_validity() {
    let (db, _dir) = sqlite_db().await;
    let now = Timestamp::from_millis(NOW);
    for (label, valid_for) in [
        ("tab\there", Duration::from_secs(60)),
        (&*"x".repeat(101), Duration::from_secs(60)),
        ("ok", Duration::ZERO),
        ("ok", Duration::from_secs(31 * 24 * 3600)),
    ] {
        assert!(matches!(
            enrol_code(&db, label, valid_for, now).await,
            Err(signer::Error::Operational(
                tacit_service::error::Operational::Config(_)
            ))
        ));
    }
    let a = enrol_code(&db, "ok", Duration::from_secs(60), now)
        .await
        .unwrap();
    let b = enrol_code(&db, "ok", Duration::from_secs(60), now)
        .await
        .unwrap();
    assert_ne!(a, b, "codes come from the operating system's generator");
}

#[tokio::test]
async fn a_reloaded_key_set_is_served_and_signs() {
    let app = app_at(NOW).await;
    let mut store = KeyStore::from_signing_key(test_key(), Timestamp::from_millis(T0 - HOUR));
    store
        .rotate_to(other_key(), Timestamp::from_millis(T0))
        .unwrap();
    app.state.replace_keys(store);
    assert_eq!(keys(&app).await.keys.len(), 2);
    let (_, _, json) = send(&app, app.post_json(&payload_json(NOW))).await;
    assert_eq!(
        json["key_id"],
        wallet_core::derive_key_id(&other_key().verifying_key()).as_str()
    );
}

/// `s` replaced by `n - s`.
fn flip_s(encoded: &str) -> String {
    let bytes = URL_SAFE_NO_PAD.decode(encoded).unwrap();
    let signature = p256::ecdsa::Signature::from_slice(&bytes).unwrap();
    let (r, s) = signature.split_scalars();
    let flipped = p256::ecdsa::Signature::from_scalars(r.to_bytes(), (-*s).to_bytes()).unwrap();
    URL_SAFE_NO_PAD.encode(flipped.to_bytes())
}

#[tokio::test]
async fn expired_replay_tokens_are_purged_as_new_ones_arrive() {
    let (db, _dir) = sqlite_db().await;
    let now = Timestamp::from_millis(NOW);
    // Requests long stale by now: their tokens are kept until a purge runs.
    let stale = Timestamp::from_millis(REPLAY_KEEP_MS);
    for i in 0..255u8 {
        assert!(db.remember_request(&[i; 32], stale, now).await.unwrap());
    }
    assert!(!db.remember_request(&[0; 32], stale, now).await.unwrap());
    assert_eq!(db.seen_count().await.unwrap(), 255);
    // A fresh one arrives: the 256th new token purges the expired ones, and is kept itself.
    let fresh = now.plus_millis(REPLAY_KEEP_MS);
    assert!(db.remember_request(&[255; 32], fresh, now).await.unwrap());
    assert_eq!(db.seen_count().await.unwrap(), 1);
}
