//! The site server's API through its router (`oneshot`), on a real SQLite file: requirements
//! signed by the site, the verdict decided on the server, and every attack that must fail.

#![cfg(not(target_arch = "wasm32"))] // the server and its tests are native
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
#[path = "../../../interop/node.rs"]
#[allow(dead_code)] // the SD-JWT helpers are for the other includers
mod node;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::*;
use serde_json::{Value, json};
use tacit_protocol::site_auth::{Attestation, Requirements, SiteKeys, verify_requirements};
use tacit_site::NonceState;
use tacit_site::nonce::NONCE_LIFETIME_MS;
use tacit_site::server::{ManualClock, routes::CONTENT_SECURITY_POLICY};
use tacit_store::sqlite_url;
use tacit_testkit::openapi::{assert_paths_documented, assert_samples_match};
use wallet_core::{Outcome, Timestamp};

struct Fixture {
    _dir: tempfile::TempDir,
    url: String,
    clock: Arc<ManualClock>,
    state: tacit_site::server::SiteState,
    router: axum::Router,
}

impl Fixture {
    async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = sqlite_url(&dir.path().join("data/nonces.db"));
        let clock = Arc::new(ManualClock::new(NOW));
        let state = housing_site(
            &url,
            dir.path(),
            key_set(&[&signer_key()], NOW),
            clock.clone(),
        )
        .await;
        let router = router(&state);
        Self {
            _dir: dir,
            url,
            clock,
            state,
            router,
        }
    }

    /// A good receipt for fresh requirements, issued a minute after they were.
    async fn good_receipt(&self) -> (Value, Value) {
        let req = requirements(&self.router).await;
        let issued = self.clock.now_plus(MINUTE);
        let receipt = receipt(
            &housing_origin(),
            &nonce_of(&req),
            &all_satisfied(),
            issued,
            &signer_key(),
        );
        self.clock.set(issued.plus_millis(MINUTE));
        (req, receipt)
    }

    async fn submit(&self, receipt: &Value) -> (StatusCode, Value) {
        let (status, body, _) = post(&self.router, "/api/applications", &submission(receipt)).await;
        (status, body)
    }
}

trait NowPlus {
    fn now_plus(&self, ms: i64) -> Timestamp;
}

impl NowPlus for ManualClock {
    fn now_plus(&self, ms: i64) -> Timestamp {
        use tacit_site::server::Clock as _;
        self.now().plus_millis(ms)
    }
}

#[tokio::test]
async fn requirements_are_signed_by_the_key_the_site_publishes() {
    let f = Fixture::new().await;
    let req = requirements(&f.router).await;
    // Exactly the wallet's request_claims input: the requirements and the attestation.
    assert_eq!(sorted_keys(&req), REQUEST_CLAIMS_KEYS);
    assert_eq!(req["origin"], "http://127.0.0.1:8081");
    assert_eq!(req["claims"], json!(housing_config().policy.claims));

    let (status, doc, headers) = get(&f.router, "/.well-known/tacit-site.json").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["access-control-allow-origin"], "*");
    let keys = SiteKeys::parse(doc.to_string().as_bytes()).unwrap();
    assert_eq!(keys.origin, housing_origin());
    assert_eq!(keys.site_name, "City Housing Programme");

    let attestation: Attestation = serde_json::from_value(req["attestation"].clone()).unwrap();
    let mut bare = req.clone();
    bare.as_object_mut().unwrap().remove("attestation");
    let asked: Requirements = serde_json::from_value(bare).unwrap();
    assert_eq!(
        verify_requirements(&keys, &asked, &attestation, NOW),
        Ok(())
    );
    // The attestation expires with the nonce, and the nonce is a row in the database.
    assert_eq!(attestation.expires_at_ms, NOW.millis() + NONCE_LIFETIME_MS);
    let nonce = nonce_of(&req);
    assert_eq!(nonce.as_str().len(), 32);
    assert_eq!(
        f.state.nonces().state(&nonce, NOW).await.unwrap(),
        NonceState::Open
    );
    // A second call hands out another nonce.
    let again = requirements(&f.router).await;
    assert_ne!(again["nonce"], req["nonce"]);
}

#[tokio::test]
async fn a_good_receipt_is_accepted_once_then_replayed_nonce() {
    let f = Fixture::new().await;
    let (req, receipt) = f.good_receipt().await;
    let (status, body) = f.submit(&receipt).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["ok"], true, "{body}");
    assert_eq!(body["result"]["accepted"], true);
    assert_eq!(body["result"]["nonce"], req["nonce"]);
    assert_eq!(body["result"]["audience"], "http://127.0.0.1:8081");
    let (status, body) = f.submit(&receipt).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(code(&body), "replayed_nonce");
    // Naming the nonce explicitly changes nothing.
    let (_, body, _) = post(
        &f.router,
        "/api/applications",
        &json!({ "receipt": receipt, "nonce": req["nonce"] }),
    )
    .await;
    assert_eq!(code(&body), "replayed_nonce");
}

#[tokio::test]
async fn a_receipt_for_another_site_is_wrong_audience_and_spends_nothing() {
    let f = Fixture::new().await;
    let req = requirements(&f.router).await;
    let nonce = nonce_of(&req);
    // A genuine receipt, but made for the pharmacy with this site's nonce.
    let other = receipt(
        &pharmacy_origin(),
        &nonce,
        &all_satisfied(),
        NOW,
        &signer_key(),
    );
    f.clock.set(NOW.plus_millis(MINUTE));
    let (status, body) = f.submit(&other).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(code(&body), "wrong_audience");
    let now = NOW.plus_millis(MINUTE);
    assert_eq!(
        f.state.nonces().state(&nonce, now).await.unwrap(),
        NonceState::Open
    );
}

#[tokio::test]
async fn forged_receipts_are_refused() {
    let f = Fixture::new().await;
    let (_, honest) = f.good_receipt().await;
    // Signed by a key the signer does not publish.
    let nonce = wallet_core::Nonce::parse(honest["payload"]["nonce"].as_str().unwrap()).unwrap();
    let issued = Timestamp::from_millis(honest["payload"]["issued_at"].as_i64().unwrap());
    let theirs = receipt(
        &housing_origin(),
        &nonce,
        &all_satisfied(),
        issued,
        &attacker_key(),
    );
    assert_eq!(code(&f.submit(&theirs).await.1), "unknown_key");
    // Signed by the attacker, but naming the signer's key id.
    let mut named = theirs.clone();
    named["key_id"] = honest["key_id"].clone();
    assert_eq!(code(&f.submit(&named).await.1), "bad_signature");
    // The honest receipt with its expiry moved.
    let mut later = honest.clone();
    later["payload"]["expires_at"] = json!(issued.millis() + 20 * MINUTE);
    assert_eq!(code(&f.submit(&later).await.1), "bad_signature");
    // An all-zero signature.
    let mut zero = honest.clone();
    zero["signature"] = json!("0".repeat(128));
    assert_eq!(code(&f.submit(&zero).await.1), "bad_signature");
    // None of that spent the nonce: the honest receipt still goes through.
    assert_eq!(f.submit(&honest).await.1["ok"], true);
}

#[tokio::test]
async fn a_url_parameter_changes_no_trust() {
    let f = Fixture::new().await;
    let req = requirements(&f.router).await;
    let nonce = nonce_of(&req);
    let theirs = receipt(
        &housing_origin(),
        &nonce,
        &all_satisfied(),
        NOW,
        &attacker_key(),
    );
    f.clock.set(NOW.plus_millis(MINUTE));
    let (_, body, _) = post(
        &f.router,
        "/api/applications?signer=http://127.0.0.1:9999",
        &submission(&theirs),
    )
    .await;
    assert_eq!(code(&body), "unknown_key");
    let (_, body, _) = get(&f.router, "/api/requirements?signer=http://127.0.0.1:9999").await;
    assert_eq!(body["result"]["origin"], "http://127.0.0.1:8081");
}

#[tokio::test]
async fn a_nonce_this_site_never_issued_is_unknown() {
    let f = Fixture::new().await;
    let stranger = tacit_site::make_nonce([3; 16]);
    let made_up = receipt(
        &housing_origin(),
        &stranger,
        &all_satisfied(),
        NOW,
        &signer_key(),
    );
    f.clock.set(NOW.plus_millis(MINUTE));
    assert_eq!(code(&f.submit(&made_up).await.1), "unknown_nonce");
}

#[tokio::test]
async fn an_expired_nonce_is_refused() {
    let f = Fixture::new().await;
    let req = requirements(&f.router).await;
    let nonce = nonce_of(&req);
    // The receipt itself is fresh; its nonce lapsed an hour after it was issued.
    let late = NOW.plus_millis(NONCE_LIFETIME_MS);
    let lapsed = receipt(
        &housing_origin(),
        &nonce,
        &all_satisfied(),
        late,
        &signer_key(),
    );
    f.clock.set(late.plus_millis(MINUTE));
    let (status, body) = f.submit(&lapsed).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(code(&body), "unknown_nonce");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("lapsed")
    );
    // One millisecond before its expiry it would have been accepted.
    let f = Fixture::new().await;
    let req = requirements(&f.router).await;
    let edge = NOW.plus_millis(NONCE_LIFETIME_MS - 1);
    let in_time = receipt(
        &housing_origin(),
        &nonce_of(&req),
        &all_satisfied(),
        edge,
        &signer_key(),
    );
    f.clock.set(edge);
    assert_eq!(f.submit(&in_time).await.1["ok"], true);
}

/// Unused nonce rows go at their expiry (issue 28, item 11: a flood of requirements calls kept
/// one row each for a week); the forgotten nonce is still refused `unknown_nonce`. A used row
/// is kept a week past its expiry, so a late replay still reads `replayed_nonce`; forgotten
/// after that, it is refused `unknown_nonce`.
#[tokio::test]
async fn a_forgotten_nonce_is_still_refused() {
    use tacit_site::nonce::NONCE_RETENTION_MS;

    let f = Fixture::new().await;
    let req = requirements(&f.router).await;
    let nonce = nonce_of(&req);
    let expiry = NOW.plus_millis(NONCE_LIFETIME_MS);
    // Not before its expiry...
    assert_eq!(
        f.state
            .nonces()
            .forget_old(expiry.plus_millis(-1))
            .await
            .unwrap(),
        0
    );
    // ...but at it, the unused row goes.
    f.clock.set(expiry.plus_millis(MINUTE));
    assert_eq!(f.state.nonces().forget_old(expiry).await.unwrap(), 1);
    assert_eq!(
        f.state.nonces().state(&nonce, expiry).await.unwrap(),
        NonceState::Unknown
    );
    let late = receipt(
        &housing_origin(),
        &nonce,
        &all_satisfied(),
        expiry,
        &signer_key(),
    );
    let (status, body) = f.submit(&late).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(code(&body), "unknown_nonce");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no longer knows it"),
        "{body}"
    );

    // A used nonce is kept past its expiry and a replay still reads as one.
    let f = Fixture::new().await;
    let (req, good) = f.good_receipt().await;
    assert_eq!(f.submit(&good).await.1["ok"], true);
    let nonce = nonce_of(&req);
    let kept_until = NOW.plus_millis(NONCE_LIFETIME_MS + NONCE_RETENTION_MS);
    let replay_at = kept_until.plus_millis(-MINUTE);
    let replay = receipt(
        &housing_origin(),
        &nonce,
        &all_satisfied(),
        replay_at,
        &signer_key(),
    );
    f.clock.set(replay_at.plus_millis(1));
    assert_eq!(f.state.nonces().forget_old(replay_at).await.unwrap(), 0);
    assert_eq!(code(&f.submit(&replay).await.1), "replayed_nonce");
    // A week past its expiry it is forgotten, and still refused.
    assert_eq!(f.state.nonces().forget_old(kept_until).await.unwrap(), 1);
    let replay = receipt(
        &housing_origin(),
        &nonce,
        &all_satisfied(),
        kept_until,
        &signer_key(),
    );
    f.clock.set(kept_until.plus_millis(1));
    assert_eq!(code(&f.submit(&replay).await.1), "unknown_nonce");
}

#[tokio::test]
async fn an_unsatisfied_claim_is_refused_and_spends_nothing() {
    let f = Fixture::new().await;
    let req = requirements(&f.router).await;
    let nonce = nonce_of(&req);
    let mut answers = all_satisfied();
    answers[1].1 = Outcome::NotSatisfied;
    let bad = receipt(&housing_origin(), &nonce, &answers, NOW, &signer_key());
    f.clock.set(NOW.plus_millis(MINUTE));
    let (status, body) = f.submit(&bad).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(code(&body), "claim_not_satisfied");
    assert_eq!(body["error"]["claim"], json!(answers[1].0));
    // Only a claim is named: the answer carries no value.
    let good = receipt(
        &housing_origin(),
        &nonce,
        &all_satisfied(),
        NOW,
        &signer_key(),
    );
    assert_eq!(f.submit(&good).await.1["ok"], true);
}

#[tokio::test]
async fn a_receipt_replayed_after_a_restart_is_refused() {
    let f = Fixture::new().await;
    // Requirements from the first process; the submission reaches the restarted one.
    let (req, receipt) = f.good_receipt().await;
    let now = {
        use tacit_site::server::Clock as _;
        f.clock.now()
    };
    f.state.nonces().db().close().await;
    drop(f.router);
    drop(f.state);

    let restarted = housing_site(
        &f.url,
        f._dir.path(),
        key_set(&[&signer_key()], NOW),
        Arc::new(ManualClock::new(now)),
    )
    .await;
    let router = router(&restarted);
    let (_, body, _) = post(&router, "/api/applications", &submission(&receipt)).await;
    assert_eq!(
        body["ok"], true,
        "a nonce issued before the restart is still ours: {body}"
    );
    assert_eq!(body["result"]["nonce"], req["nonce"]);
    restarted.nonces().db().close().await;
    drop(router);
    drop(restarted);

    let again = housing_site(
        &f.url,
        f._dir.path(),
        key_set(&[&signer_key()], NOW),
        Arc::new(ManualClock::new(now)),
    )
    .await;
    let (_, body, _) = post(
        &router_of(&again),
        "/api/applications",
        &submission(&receipt),
    )
    .await;
    assert_eq!(code(&body), "replayed_nonce");
}

fn router_of(state: &tacit_site::server::SiteState) -> axum::Router {
    router(state)
}

#[tokio::test]
async fn concurrent_submissions_of_one_receipt_accept_once_on_sqlite() {
    let f = Fixture::new().await;
    let (_, receipt) = f.good_receipt().await;
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let router = f.router.clone();
        let body = submission(&receipt);
        tasks.push(tokio::spawn(async move {
            post(&router, "/api/applications", &body).await.1
        }));
    }
    let mut accepted = 0;
    for task in tasks {
        let body = task.await.unwrap();
        if body["ok"] == true {
            accepted += 1;
        } else {
            assert_eq!(code(&body), "replayed_nonce");
        }
    }
    assert_eq!(accepted, 1);
}

#[tokio::test]
async fn malformed_bodies_get_4xx_and_the_envelope() {
    let f = Fixture::new().await;
    let send_raw = |content_type: &'static str, body: Vec<u8>| {
        let router = f.router.clone();
        async move {
            let request = Request::post("/api/applications")
                .header("content-type", content_type)
                .body(Body::from(body))
                .unwrap();
            send(&router, request).await
        }
    };
    let (status, body, _) = send_raw("text/plain", b"{}".to_vec()).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(code(&body), "invalid_input");
    let (status, body, _) = send_raw("application/json", b"{not json".to_vec()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(code(&body), "invalid_input");
    let (status, body, _) =
        send_raw("application/json", b"{\"a\":1,\"receipt\":{}}".to_vec()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Unknown field \"a\"")
    );
    let (status, body, _) = send_raw("application/json", b"{\"receipt\":\"text\"}".to_vec()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(code(&body), "invalid_input");
    // 33 levels deep (a receipt inside 32 arrays): refused for its depth, in the words every
    // door uses; 32 levels is read (and refused for its shape).
    for (depth, says) in [
        (33, "nested deeper than 32 levels"),
        (32, "must be an object"),
    ] {
        let deep = format!(
            "{{\"receipt\":{}1{}}}",
            "[".repeat(depth - 1),
            "]".repeat(depth - 1)
        );
        let (status, body, _) = send_raw("application/json", deep.into_bytes()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{depth}");
        assert_eq!(code(&body), "invalid_input");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{depth}: {message}");
    }
    let huge = format!("{{\"receipt\":{{\"pad\":\"{}\"}}}}", "x".repeat(70 * 1024));
    let (status, body, _) = send_raw("application/json", huge.into_bytes()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(code(&body), "invalid_input");
}

#[tokio::test]
async fn the_page_and_the_api_carry_the_security_headers() {
    let f = Fixture::new().await;
    for path in [
        "/",
        "/index.html",
        "/boot.js",
        "/api/site",
        "/api/requirements",
        "/nope",
    ] {
        let request = Request::get(path).body(Body::empty()).unwrap();
        let (status, _, headers) = send(&f.router, request).await;
        assert!(
            status == StatusCode::OK || status == StatusCode::NOT_FOUND,
            "{path}"
        );
        assert_eq!(headers["origin-agent-cluster"], "?1", "{path}");
        let csp = if path.starts_with("/api/") {
            "default-src 'none'; frame-ancestors 'none'"
        } else {
            CONTENT_SECURITY_POLICY
        };
        assert_eq!(headers["content-security-policy"], csp, "{path}");
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(headers["x-frame-options"], "DENY", "{path}");
        assert_eq!(headers["permissions-policy"], "tools=(self)", "{path}");
        assert_eq!(headers["cache-control"], "no-store", "{path}");
    }
    // No page of the site may be framed.
    assert!(CONTENT_SECURITY_POLICY.contains("frame-ancestors 'none'"));
    let request = Request::get("/.well-known/tacit-site.json")
        .body(Body::empty())
        .unwrap();
    let (_, _, headers) = send(&f.router, request).await;
    assert_eq!(
        headers["content-security-policy"],
        "default-src 'none'; frame-ancestors 'none'"
    );
    let request = Request::get("/boot.js").body(Body::empty()).unwrap();
    let (_, _, headers) = send(&f.router, request).await;
    assert_eq!(headers["content-type"], "text/javascript");
    // The page may talk to its own server only.
    assert!(CONTENT_SECURITY_POLICY.contains("connect-src 'self';"));
    // An unknown API route is a JSON 404, a wrong method a JSON 405.
    let (status, body, _) = get(&f.router, "/api/nothing").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "not_found");
    let (status, body, headers) = post(&f.router, "/api/requirements", &json!({})).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(body["error"], "method_not_allowed");
    assert!(headers.contains_key("allow"));
    let request = Request::get("/api/applications")
        .body(Body::empty())
        .unwrap();
    let (status, _, _) = send(&f.router, request).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn the_page_gets_the_public_policy_and_tools() {
    let f = Fixture::new().await;
    let (status, site, _) = get(&f.router, "/api/site").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(site["site_name"], "City Housing Programme");
    assert_eq!(site["tools"][0]["name"], "housing_requirements");
    assert_eq!(site["tools"][1]["name"], "housing_submit_application");
    assert_eq!(site["tools"][1]["annotations"]["consequentialHint"], true);
    // Words and tools only: no keys, no nonce, nothing that decides.
    let mut names: Vec<&String> = site.as_object().unwrap().keys().collect();
    names.sort();
    assert_eq!(
        names,
        [
            "accepted_text",
            "needs",
            "site_name",
            "submission",
            "tools",
            "trusted_issuers"
        ]
    );
    assert_eq!(site["trusted_issuers"], json!([]));
}

#[tokio::test]
async fn the_shipped_configs_parse_and_pin_the_loopback_signer() {
    for (name, origin, tools) in [
        (
            "housing",
            "http://127.0.0.1:8081",
            ("housing_requirements", "housing_submit_application"),
        ),
        (
            "pharmacy",
            "http://127.0.0.1:8082",
            ("pharmacy_requirements", "pharmacy_checkout"),
        ),
    ] {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../{name}/site.toml"));
        let config = tacit_site::server::Config::load(&path).unwrap();
        assert_eq!(config.origin.as_ref().unwrap().as_str(), origin);
        assert_eq!(
            config.listen.to_string(),
            origin.trim_start_matches("http://")
        );
        assert_eq!(config.policy.requirements_tool, tools.0);
        assert_eq!(config.policy.submit_tool, tools.1);
        assert_eq!(
            config.signer.keys_url.as_deref(),
            Some("http://127.0.0.1:8787/v1/keys")
        );
        assert!(config.static_dir.ends_with(format!("target/site/{name}")));
        // Each trusts its issuer on loopback through its well-known metadata.
        assert_eq!(config.trusted_issuers.len(), 1);
        let issuer = &config.trusted_issuers[0];
        assert_eq!(
            issuer.keys_url.as_deref(),
            Some(format!("{}/.well-known/jwt-vc-issuer", issuer.issuer).as_str())
        );
        assert!(issuer.pinned_keys.is_none());
    }
}

#[tokio::test]
async fn the_attestation_binds_the_nonce() {
    // The attestation binds the nonce: changing it in the requirements breaks the signature.
    let f = Fixture::new().await;
    let req = requirements(&f.router).await;
    let (_, doc, _) = get(&f.router, "/.well-known/tacit-site.json").await;
    let keys = SiteKeys::parse(doc.to_string().as_bytes()).unwrap();
    let attestation: Attestation = serde_json::from_value(req["attestation"].clone()).unwrap();
    let mut bare = req.clone();
    bare.as_object_mut().unwrap().remove("attestation");
    bare["nonce"] = json!("0000");
    let asked: Requirements = serde_json::from_value(bare).unwrap();
    assert!(verify_requirements(&keys, &asked, &attestation, NOW).is_err());
}

/// A receipt as the wallet makes it since issue 12: a session id of this audience's own
/// (`s-` and 18 hex digits), pseudo-random grant ids, and only the answers the person kept,
/// chained afresh from genesis (an earlier request's answer and a declined call stay behind).
fn wallet_receipt(nonce: &wallet_core::Nonce, keep: &[usize], issued: Timestamp) -> Value {
    use wallet_core::{
        Claim, ComparisonLog, GrantId, ReceiptPayload, SessionId, ToolName, receipt::sign,
    };
    let audience = housing_origin();
    let claims = housing_config().policy.claims;
    let age = Claim::age_at_least(18).unwrap();
    let mut log = ComparisonLog::new();
    let mut append = |claim: &Claim, outcome: Outcome, grant: &str| {
        log.append(
            issued.plus_millis(-2_000),
            audience.clone(),
            ToolName::parse(&format!("claim.{}.{grant}", claim.kind())).unwrap(),
            claim.clone(),
            outcome,
            GrantId::parse(grant).unwrap(),
            None,
        );
    };
    append(&age, Outcome::Satisfied, "g5e1f0c2a9b3d4e67"); // an earlier request's
    append(&claims[0], Outcome::Satisfied, "g0a9c3e5f7b1d2468");
    append(&claims[1], Outcome::Declined, "g93b1d7f0c2e4a658"); // refused after revoke
    append(&claims[1], Outcome::Satisfied, "g7c2e4a6b8d0f1357");
    // The card's items are this request's latest answers: entries 1 and 3.
    let items = [&log.entries()[1], &log.entries()[3]];
    let kept = wallet_core::rechain(keep.iter().map(|&i| items[i]));
    let payload = ReceiptPayload::from_entries(
        SessionId::parse("s-3fa91c07be55d2e04a").unwrap(),
        audience,
        nonce.clone(),
        issued,
        issued.plus_millis(15 * MINUTE),
        kept,
    )
    .unwrap();
    serde_json::to_value(sign(payload, &signer_key(), issued)).unwrap()
}

#[tokio::test]
async fn the_wallets_kept_answers_are_accepted_and_a_dropped_requirement_is_refused() {
    let f = Fixture::new().await;
    let req = requirements(&f.router).await;
    let nonce = nonce_of(&req);
    let issued = f.clock.now_plus(MINUTE);
    f.clock.set(issued.plus_millis(MINUTE));
    // The person dropped the income answer: the site cannot accept, and spends nothing.
    let (status, body) = f.submit(&wallet_receipt(&nonce, &[1], issued)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(code(&body), "claim_not_satisfied");
    // Both kept: exactly this request's answers, chained from genesis: accepted.
    let receipt = wallet_receipt(&nonce, &[0, 1], issued);
    assert_eq!(receipt["payload"]["entries"].as_array().unwrap().len(), 2);
    let (status, body) = f.submit(&receipt).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["ok"], true, "{body}");
    assert_eq!(body["result"]["session_id"], "s-3fa91c07be55d2e04a");
}

/// The served OpenAPI document is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator), and
/// real answers of the real router over SQLite — the site, requirements, an acceptance, a
/// refused verdict, a bad submission, the keys — validate against the components it names (Ajv,
/// JSON Schema 2020-12); bodies the site never sends are refused.
#[tokio::test]
async fn the_served_openapi_is_valid_and_describes_real_answers() {
    let f = Fixture::new().await;
    let (status, document, _) = get(&f.router, "/api/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    assert_paths_documented(
        &document,
        &[
            "/api/site",
            "/api/requirements",
            "/api/applications",
            "/api/openapi.json",
            "/.well-known/tacit-site.json",
        ],
    );
    let (_, site, _) = get(&f.router, "/api/site").await;
    let (_, requirements_answer, _) = get(&f.router, "/api/requirements").await;
    let (_, keys, _) = get(&f.router, "/.well-known/tacit-site.json").await;
    let (_, receipt) = f.good_receipt().await;
    let (status, accepted) = f.submit(&receipt).await;
    assert_eq!(
        (status, accepted["ok"].clone()),
        (StatusCode::OK, json!(true)),
        "{accepted}"
    );
    let (status, replayed) = f.submit(&receipt).await;
    assert_eq!(
        (status, code(&replayed)),
        (StatusCode::OK, "replayed_nonce")
    );
    let (status, bad, _) = post(&f.router, "/api/applications", &json!({ "receipt": 3 })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let mut extra = accepted.clone();
    extra["result"]["income"] = json!(28_400);
    let mut unsigned = requirements_answer.clone();
    unsigned["result"]
        .as_object_mut()
        .unwrap()
        .remove("attestation");
    assert_samples_match(
        node::run,
        &document,
        &[
            ("site", "SiteInfo", &site),
            (
                "requirements",
                "Answer_AttestedRequirements",
                &requirements_answer,
            ),
            ("keys", "SiteKeys", &keys),
            ("accepted", "Answer_AcceptedResult", &accepted),
            ("replayed", "RefusalEnvelope", &replayed),
            ("bad submission", "RefusalEnvelope", &bad),
            ("submission", "SubmissionBody", &submission(&receipt)),
        ],
        &[
            ("a raw value", "Answer_AcceptedResult", &extra),
            ("no attestation", "Answer_AttestedRequirements", &unsigned),
        ],
    );
}

/// The two tools' `inputSchema`, as `GET /api/site` serves them, are the schemas generated from
/// the types their input is read as; and schema and reading agree: every input of a corpus
/// (good ones, and ones with an extra property, an over-long or mistyped value, a missing field)
/// is accepted by Ajv against the served schema exactly when the site reads it, and each one
/// the site refuses is answered 400 `invalid_input` by the real route.
#[tokio::test]
async fn the_tools_schemas_are_generated_and_agree_with_the_reading() {
    use tacit_protocol::sd_jwt::MAX_SD_JWT_LEN;
    use tacit_site::api::{RequirementsInput, SubmissionBody, input_schema};
    use tacit_site::parse_submission;
    use tacit_site::proof::MAX_PRESENTATIONS;
    use tacit_site::submit::parse_requirements_input;

    let f = Fixture::new().await;
    let (status, site, _) = get(&f.router, "/api/site").await;
    assert_eq!(status, StatusCode::OK);
    let requirements_schema = site["tools"][0]["inputSchema"].clone();
    let submit_schema = site["tools"][1]["inputSchema"].clone();
    assert_eq!(requirements_schema, input_schema::<RequirementsInput>());
    assert_eq!(submit_schema, input_schema::<SubmissionBody>());
    assert_eq!(
        requirements_schema,
        json!({ "type": "object", "properties": {}, "additionalProperties": false })
    );
    // What the generated schema must say, pinned against the limits it is generated from.
    assert_eq!(submit_schema["type"], "object");
    assert_eq!(submit_schema["additionalProperties"], false);
    assert_eq!(submit_schema["required"], json!(["receipt"]));
    let mut names: Vec<&String> = submit_schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    names.sort();
    assert_eq!(names, ["nonce", "presentations", "receipt"]);
    let properties = &submit_schema["properties"];
    assert_eq!(properties["receipt"]["type"], "object");
    assert_eq!(properties["receipt"]["additionalProperties"], false);
    assert_eq!(properties["nonce"]["type"], "string");
    assert_eq!(
        properties["nonce"]["maxLength"],
        wallet_core::Nonce::MAX_LEN
    );
    assert_eq!(properties["presentations"]["maxItems"], MAX_PRESENTATIONS);
    assert_eq!(
        properties["presentations"]["items"]["maxLength"],
        MAX_SD_JWT_LEN
    );
    assert!(
        !submit_schema.to_string().contains("$ref"),
        "one self-contained schema: {submit_schema}"
    );

    let (_, receipt) = f.good_receipt().await;
    let mut extra_inside = receipt.clone();
    extra_inside["payload"]["income"] = json!(2_840_000);
    let mut unsigned = receipt.clone();
    unsigned.as_object_mut().unwrap().remove("signature");
    let long = "x".repeat(MAX_SD_JWT_LEN);
    let with = |field: &str, value: Value| {
        let mut input = json!({ "receipt": receipt.clone() });
        input[field] = value;
        input
    };
    let submit_cases: Vec<(&str, Value)> = vec![
        ("the receipt alone", json!({ "receipt": receipt.clone() })),
        ("a nonce", with("nonce", json!("abc"))),
        ("a longest nonce", with("nonce", json!("n".repeat(128)))),
        ("no presentations", with("presentations", json!([]))),
        (
            "a presentation",
            with("presentations", json!(["a.b.c~d~e.f.g"])),
        ),
        (
            "eight longest presentations",
            with("presentations", json!(vec![long.clone(); 8])),
        ),
        ("missing receipt", json!({})),
        ("missing receipt, a nonce", json!({ "nonce": "abc" })),
        ("an extra property", with("extra", json!(1))),
        (
            "an extra property in the receipt",
            json!({ "receipt": extra_inside }),
        ),
        (
            "a receipt without signature",
            json!({ "receipt": unsigned }),
        ),
        (
            "the receipt as text",
            json!({ "receipt": receipt.to_string() }),
        ),
        ("a number as receipt", json!({ "receipt": 5 })),
        ("a number as nonce", with("nonce", json!(5))),
        ("a null nonce", with("nonce", Value::Null)),
        ("an empty nonce", with("nonce", json!(""))),
        ("a too long nonce", with("nonce", json!("n".repeat(129)))),
        ("a nonce with a space", with("nonce", json!("has space"))),
        (
            "presentations as text",
            with("presentations", json!("a~b~")),
        ),
        ("null presentations", with("presentations", Value::Null)),
        ("a number presentation", with("presentations", json!([5]))),
        (
            "an empty presentation",
            with("presentations", json!(["a~", ""])),
        ),
        (
            "nine presentations",
            with("presentations", json!(vec!["a~"; 9])),
        ),
        (
            "a too long presentation",
            with("presentations", json!([format!("{long}x")])),
        ),
        (
            "a presentation with a space",
            with("presentations", json!(["a~b c~"])),
        ),
        ("an array", json!([receipt.clone()])),
    ];
    let requirements_cases: Vec<(&str, Value)> = vec![
        ("nothing", json!({})),
        ("a property", json!({ "nonce": "x" })),
        ("an array", json!([])),
        ("a number", json!(1)),
    ];

    let (_, mut document, _) = get(&f.router, "/api/openapi.json").await;
    document["components"]["schemas"]["SubmitToolInput"] = submit_schema.clone();
    document["components"]["schemas"]["RequirementsToolInput"] = requirements_schema.clone();
    // Each case with the tool it is for: the submit tool's, then the requirements tool's.
    let cases_len = submit_cases.len() + requirements_cases.len();
    let cases: Vec<(bool, &str, &Value)> = submit_cases
        .iter()
        .map(|(id, input)| (true, *id, input))
        .chain(
            requirements_cases
                .iter()
                .map(|(id, input)| (false, *id, input)),
        )
        .collect();
    let samples: Vec<Value> = cases
        .iter()
        .map(|(submit, id, input)| {
            let schema = if *submit {
                "SubmitToolInput"
            } else {
                "RequirementsToolInput"
            };
            json!({ "id": id, "schema": schema, "value": input })
        })
        .collect();
    let verdict = node::run(
        "openapi.mjs",
        &json!({ "document": document, "samples": samples }),
    );
    let judged = verdict["samples"].as_array().unwrap();
    assert_eq!(judged.len(), cases.len());

    let mut refused = 0;
    for ((submit, id, input), ajv) in cases.into_iter().zip(judged) {
        let read = if submit {
            parse_submission(input).map(drop)
        } else {
            parse_requirements_input(input)
        };
        assert_eq!(
            ajv["valid"].as_bool(),
            Some(read.is_ok()),
            "{id}: the schema says {ajv}, the site read {read:?}"
        );
        let Err(refusal) = read else { continue };
        refused += 1;
        assert_eq!(refusal.code, tacit_site::Code::InvalidInput, "{id}");
        if submit {
            let (status, body, _) = post(&f.router, "/api/applications", input).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{id}: {body}");
            assert_eq!(code(&body), "invalid_input", "{id}");
            assert_eq!(body["isError"], true, "{id}");
            assert_eq!(body["error"]["message"], refusal.message, "{id}");
        }
    }
    // Six good submissions and one good requirements input; every other case is refused.
    assert_eq!(refused, cases_len - 7);
}
