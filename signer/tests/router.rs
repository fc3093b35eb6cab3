//! Every endpoint and every refusal, through the router with `tower::ServiceExt::oneshot`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::*;
use serde_json::json;
use signer::{Config, KEYS_CACHE_CONTROL, MAX_BODY_BYTES};
use wallet_core::receipt::verify;
use wallet_core::{KeySet, KeyStatus, SignedReceipt, Timestamp, derive_key_id};

const NOW: i64 = T0 + MINUTE;

async fn keys(app: &axum::Router) -> KeySet {
    let (status, _, json) = send(app, Request::get("/v1/keys").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    serde_json::from_value(json).unwrap()
}

#[tokio::test]
async fn post_signs_a_valid_payload_that_verifies() {
    let app = app_at(NOW).await;
    let response = send(&app, app.post_json(&payload_json(NOW))).await;
    let (status, headers, json) = &response;
    assert_eq!(*status, StatusCode::OK, "{json}");
    assert_eq!(headers["access-control-allow-origin"], WALLET);
    let object = json.as_object().unwrap();
    let mut fields: Vec<&str> = object.keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(fields, ["key_id", "payload", "signature", "signed_at"]);
    let signed: SignedReceipt = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(signed.payload, payload_at(NOW));
    assert_eq!(signed.key_id, derive_key_id(&test_key().verifying_key()));
    assert_eq!(signed.signed_at, Timestamp::from_millis(NOW));
    let verified = verify(
        &signed,
        &keys(&app).await,
        &site(),
        &nonce(),
        Timestamp::from_millis(NOW + MINUTE),
    )
    .unwrap();
    assert!(verified.satisfies(&income_below(3_000_000)));
}

#[tokio::test]
async fn post_accepts_json_with_a_charset() {
    let app = app_at(NOW).await;
    let request = app.signed_by(
        &app.install,
        "/v1/receipts",
        Some("application/json; charset=utf-8"),
        serde_json::to_vec(&payload_json(NOW)).unwrap(),
    );
    let (status, _, json) = send(&app, request).await;
    assert_eq!(status, StatusCode::OK, "{json}");
}

#[tokio::test]
async fn post_refuses_an_extra_field_carrying_a_raw_value() {
    let app = app_at(NOW).await;
    let mut top = payload_json(NOW);
    top["income"] = json!(4_242_424_242_u64);
    let mut nested = payload_json(NOW);
    nested["entries"][0]["income"] = json!(4_242_424_242_u64);
    let mut in_claim = payload_json(NOW);
    in_claim["entries"][1]["claim"]["value"] = json!("4242424242");
    for body in [top, nested, in_claim] {
        let response = send(&app, app.post_json(&body)).await;
        let message = assert_error(
            &response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_payload",
        );
        assert!(!message.contains("4242424242"), "echoed input: {message}");
        assert!(!message.contains("income"), "echoed input: {message}");
    }
}

#[tokio::test]
async fn post_refuses_malformed_bodies_without_echoing_them() {
    let app = app_at(NOW).await;
    let mut missing = payload_json(NOW);
    missing.as_object_mut().unwrap().remove("nonce");
    let mut wrong_type = payload_json(NOW);
    wrong_type["issued_at"] = json!("soon");
    for body in [
        b"{ not json".to_vec(),
        b"[]".to_vec(),
        Vec::new(),
        serde_json::to_vec(&missing).unwrap(),
        serde_json::to_vec(&wrong_type).unwrap(),
    ] {
        let request = app.post_bytes(body);
        let message = assert_error(
            &send(&app, request).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_payload",
        );
        assert!(!message.contains("soon") && !message.contains("not json"));
    }
}

#[tokio::test]
async fn post_refuses_a_tampered_chain() {
    let app = app_at(NOW).await;
    type Edit = (&'static str, fn(&mut serde_json::Value), usize);
    let edits: [Edit; 4] = [
        (
            "outcome edited",
            |p| p["entries"][0]["outcome"] = json!("not_satisfied"),
            0,
        ),
        (
            "entry removed from the front",
            |p| {
                p["entries"].as_array_mut().unwrap().remove(0);
            },
            0,
        ),
        (
            "entry cut from the end",
            |p| {
                p["entries"].as_array_mut().unwrap().pop();
            },
            1,
        ),
        (
            "head replaced",
            |p| p["log_head"] = json!("00".repeat(32)),
            2,
        ),
    ];
    for (name, edit, index) in edits {
        let mut body = payload_json(NOW);
        edit(&mut body);
        let message = assert_error(
            &send(&app, app.post_json(&body)).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "chain_broken",
        );
        assert!(
            message.contains(&format!("entry {index}")),
            "{name}: {message}"
        );
    }
}

#[tokio::test]
async fn post_refuses_an_expired_window() {
    // Issued 1 minute ago (inside the skew allowance) but already expired.
    let mut body = payload_json(NOW - MINUTE);
    body["expires_at"] = json!(NOW);
    let app = app_at(NOW).await;
    let response = send(&app, app.post_json(&body)).await;
    assert_error(&response, StatusCode::UNPROCESSABLE_ENTITY, "expired");
}

#[tokio::test]
async fn post_refuses_issued_at_beyond_two_minutes_of_the_clock() {
    let app = app_at(NOW).await;
    for issued in [
        NOW - 2 * MINUTE - 1,
        NOW + 2 * MINUTE + 1,
        NOW - 10 * MINUTE,
        NOW + 10 * MINUTE,
    ] {
        let mut body = payload_json(issued);
        // Still open at NOW and within the longest window, so only issued_at is wrong.
        body["expires_at"] = json!(issued.max(NOW) + 5 * MINUTE);
        let response = send(&app, app.post_json(&body)).await;
        assert_error(
            &response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "issued_at_out_of_range",
        );
    }
    for issued in [NOW - 2 * MINUTE, NOW + 2 * MINUTE] {
        let (status, _, json) = send(&app, app.post_json(&payload_json(issued))).await;
        assert_eq!(status, StatusCode::OK, "edge {issued}: {json}");
    }
}

#[tokio::test]
async fn post_refuses_a_window_longer_than_fifteen_minutes_or_empty() {
    let app = app_at(NOW).await;
    for (expires, reason) in [
        (NOW + 15 * MINUTE + 1, "longer than 15 minutes"),
        (NOW + 24 * HOUR, "longer than 15 minutes"),
        (NOW, "expires_at must be after issued_at"),
    ] {
        let mut body = payload_json(NOW);
        body["expires_at"] = json!(expires);
        let message = assert_error(
            &send(&app, app.post_json(&body)).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_receipt",
        );
        assert!(message.contains(reason), "{message}");
    }
    let mut body = payload_json(NOW);
    body["expires_at"] = json!(NOW + 15 * MINUTE);
    assert_eq!(send(&app, app.post_json(&body)).await.0, StatusCode::OK);
}

/// Found by `fuzz/` (signer_body; the input is its crash, kept as a seed): an `issued_at` near
/// `i64::MIN` overflowed wallet-core's window check and panicked the handler.
#[tokio::test]
async fn post_refuses_a_window_from_the_start_of_time() {
    let app = app_at(NOW).await;
    let crash: &'static [u8] =
        include_bytes!("../../fuzz/seeds/signer_body/crash-window-overflow.json");
    let request = app.post_bytes(crash.to_vec());
    let mut responses = vec![send(&app, request).await];
    for issued_at in [i64::MIN, i64::MIN + 1] {
        let mut body = payload_json(NOW);
        body["issued_at"] = json!(issued_at);
        responses.push(send(&app, app.post_json(&body)).await);
    }
    for response in &responses {
        let message = assert_error(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_receipt",
        );
        assert!(message.contains("longer than 15 minutes"), "{message}");
    }
}

#[tokio::test]
async fn post_refuses_entries_for_another_audience_and_other_versions() {
    let app = app_at(NOW).await;
    let mut audience = payload_json(NOW);
    audience["audience"] = json!("https://pharmacy.example");
    let mut version = payload_json(NOW);
    version["version"] = json!(2);
    for body in [audience, version] {
        assert_error(
            &send(&app, app.post_json(&body)).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_receipt",
        );
    }
}

#[tokio::test]
async fn post_refuses_an_oversize_body() {
    let app = app_at(NOW).await;
    let mut body = serde_json::to_vec(&payload_json(NOW)).unwrap();
    body.resize(MAX_BODY_BYTES + 1, b' ');
    let mut request = app.post_bytes(body);
    let length = (MAX_BODY_BYTES + 1).to_string();
    request
        .headers_mut()
        .insert("content-length", length.parse().unwrap());
    assert_error(
        &send(&app, request).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
    );

    // Exactly at the limit is read (and signed: trailing whitespace is valid JSON).
    let mut body = serde_json::to_vec(&payload_json(NOW)).unwrap();
    body.resize(MAX_BODY_BYTES, b' ');
    let request = app.post_bytes(body);
    assert_eq!(send(&app, request).await.0, StatusCode::OK);
}

#[tokio::test]
async fn post_refuses_a_wrong_content_type() {
    let app = app_at(NOW).await;
    let body = serde_json::to_vec(&payload_json(NOW)).unwrap();
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let request = app.signed_by(&app.install, "/v1/receipts", content_type, body.clone());
        assert_error(
            &send(&app, request).await,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        );
    }
}

#[tokio::test]
async fn post_from_a_disallowed_origin_gets_no_grant_and_no_signature() {
    let app = app_at(NOW).await;
    let evil = "https://evil.example";

    // The browser's preflight: no CORS grant, so it never sends the POST.
    let preflight = Request::options("/v1/receipts")
        .header("origin", evil)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .body(Body::empty())
        .unwrap();
    let (_, headers, _) = send(&app, preflight).await;
    assert!(headers.get("access-control-allow-origin").is_none());

    // A POST that comes anyway is refused, also without a grant.
    let mut request = app.post_json(&payload_json(NOW));
    request
        .headers_mut()
        .insert("origin", evil.parse().unwrap());
    let response = send(&app, request).await;
    assert_error(&response, StatusCode::FORBIDDEN, "origin_not_allowed");
    assert!(response.1.get("access-control-allow-origin").is_none());

    // The `null` origin (sandboxed frames, file://) is not a wallet either.
    let mut request = app.post_json(&payload_json(NOW));
    request
        .headers_mut()
        .insert("origin", "null".parse().unwrap());
    assert_error(
        &send(&app, request).await,
        StatusCode::FORBIDDEN,
        "origin_not_allowed",
    );
}

#[tokio::test]
async fn preflight_from_the_wallet_origin_is_granted() {
    let app = app_at(NOW).await;
    let preflight = Request::options("/v1/receipts")
        .header("origin", WALLET)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .body(Body::empty())
        .unwrap();
    let (status, headers, _) = send(&app, preflight).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["access-control-allow-origin"], WALLET);
    let methods = headers["access-control-allow-methods"].to_str().unwrap();
    assert!(methods.contains("POST"), "{methods}");
    let allowed = headers["access-control-allow-headers"].to_str().unwrap();
    assert!(allowed.contains("content-type"), "{allowed}");
}

#[tokio::test]
async fn configured_origins_replace_the_default() {
    let config = Config {
        allowed_origins: vec![wallet_core::Origin::parse("https://wallet.example").unwrap()],
        ..Config::default()
    };
    let app = TestApp::sqlite(&config, NOW).await;
    let mut request = app.post_json(&payload_json(NOW));
    request
        .headers_mut()
        .insert("origin", "https://wallet.example".parse().unwrap());
    let (status, headers, _) = send(&app, request).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://wallet.example"
    );
    // The default origin is no longer allowed.
    assert_error(
        &send(&app, app.post_json(&payload_json(NOW))).await,
        StatusCode::FORBIDDEN,
        "origin_not_allowed",
    );
}

#[tokio::test]
async fn post_is_rate_limited_with_retry_after() {
    let mut config = Config::default();
    config.limit_flags.rate_limit_per_minute = 2;
    let app = TestApp::sqlite(&config, NOW).await;
    let clock = app.clock.clone();
    for _ in 0..2 {
        assert_eq!(
            send(&app, app.post_json(&payload_json(NOW))).await.0,
            StatusCode::OK
        );
    }
    let response = send(&app, app.post_json(&payload_json(NOW))).await;
    assert_error(&response, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    assert_eq!(response.1["retry-after"], "30");
    // The wallet can read the answer: CORS grant and Retry-After exposed.
    assert_eq!(response.1["access-control-allow-origin"], WALLET);
    let exposed = response.1["access-control-expose-headers"]
        .to_str()
        .unwrap();
    assert!(exposed.contains("retry-after"), "{exposed}");
    // Reading keys and health is not limited.
    assert_eq!(keys(&app).await.keys.len(), 1);
    let health = Request::get("/healthz").body(Body::empty()).unwrap();
    assert_eq!(send(&app, health).await.0, StatusCode::OK);
    // Half a minute later one more request fits.
    clock.set(NOW + 30_000);
    assert_eq!(
        send(&app, app.post_json(&payload_json(NOW))).await.0,
        StatusCode::OK
    );
    assert_eq!(
        send(&app, app.post_json(&payload_json(NOW))).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
}

#[tokio::test]
async fn get_keys_publishes_the_active_key_cacheable_to_any_origin() {
    let app = app_at(NOW).await;
    let request = Request::get("/v1/keys")
        .header("origin", "https://housing.example")
        .body(Body::empty())
        .unwrap();
    let (status, headers, json) = send(&app, request).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["cache-control"], KEYS_CACHE_CONTROL);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["access-control-allow-origin"], "*");
    let set = KeySet::parse(&serde_json::to_vec(&json).unwrap()).unwrap();
    assert_eq!(set.keys.len(), 1);
    let entry = &set.keys[0];
    assert_eq!(entry.key_id, derive_key_id(&test_key().verifying_key()));
    assert_eq!(entry.status, KeyStatus::Active);
    assert_eq!(entry.not_after, None);
    assert_eq!(entry.verifying_key(), Some(test_key().verifying_key()));
}

#[tokio::test]
async fn get_keys_lists_retired_keys_after_rotation() {
    let mut store =
        signer::KeyStore::from_signing_key(test_key(), Timestamp::from_millis(T0 - HOUR));
    store
        .rotate_to(other_key(), Timestamp::from_millis(T0))
        .unwrap();
    let app = app_at(NOW).await;
    app.state.replace_keys(store);
    let set = keys(&app).await;
    assert_eq!(set.keys.len(), 2);
    assert_eq!(
        set.keys[0].key_id,
        derive_key_id(&other_key().verifying_key())
    );
    assert_eq!(set.keys[0].status, KeyStatus::Active);
    assert_eq!(set.keys[0].not_before, Timestamp::from_millis(T0));
    assert_eq!(
        set.keys[1].key_id,
        derive_key_id(&test_key().verifying_key())
    );
    assert_eq!(set.keys[1].status, KeyStatus::Retired);
    assert_eq!(
        set.keys[1].not_after,
        Some(Timestamp::from_millis(
            T0 + wallet_core::receipt::ISSUE_SKEW_MS
        ))
    );
    // New receipts are signed with the new key.
    let (_, _, json) = send(&app, app.post_json(&payload_json(NOW))).await;
    assert_eq!(json["key_id"], set.keys[0].key_id.as_str());
}

#[tokio::test]
async fn healthz_answers_ok() {
    let (status, _, json) = send(
        &app_at(NOW).await.app,
        Request::get("/healthz").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json["status"], "ok");
    assert_eq!(
        json["active_key_id"],
        derive_key_id(&test_key().verifying_key()).as_str()
    );
}

#[tokio::test]
async fn unknown_routes_and_methods_are_json_errors() {
    let app = app_at(NOW).await;
    let missing = Request::get("/v1/receipts/../../etc/passwd")
        .body(Body::empty())
        .unwrap();
    let message = assert_error(
        &send(&app, missing).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert!(!message.contains("passwd"));
    let wrong = Request::get("/v1/receipts").body(Body::empty()).unwrap();
    let response = send(&app, wrong).await;
    assert_error(
        &response,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
    );
    assert_eq!(response.1["allow"], "POST");
    let wrong = Request::delete("/v1/keys").body(Body::empty()).unwrap();
    assert_error(
        &send(&app, wrong).await,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
    );
}

#[tokio::test]
async fn every_answer_refuses_to_be_framed_or_to_load_anything() {
    let app = app_at(NOW).await;
    let answers = [
        send(&app, app.post_json(&payload_json(NOW))).await,
        send(&app, Request::get("/v1/keys").body(Body::empty()).unwrap()).await,
        send(&app, Request::get("/healthz").body(Body::empty()).unwrap()).await,
        send(
            &app,
            Request::get("/v1/openapi.json")
                .body(Body::empty())
                .unwrap(),
        )
        .await,
        send(&app, Request::get("/nope").body(Body::empty()).unwrap()).await,
        send(
            &app,
            Request::get("/v1/receipts").body(Body::empty()).unwrap(),
        )
        .await,
    ];
    for (status, headers, _) in &answers {
        assert_eq!(
            headers["content-security-policy"], "default-src 'none'; frame-ancestors 'none'",
            "{status}"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff", "{status}");
        assert_eq!(headers["x-frame-options"], "DENY", "{status}");
    }
    let statuses: Vec<u16> = answers.iter().map(|(s, _, _)| s.as_u16()).collect();
    assert_eq!(statuses, [200, 200, 200, 200, 404, 405]);
}
