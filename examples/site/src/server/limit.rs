//! The rate limit on the site API: `GET /api/requirements` (which writes a nonce row per call)
//! and `POST /api/applications`, the same buckets for both.
//!
//! The services' shared middleware ([`tacit_service::middleware`]) over the rule of
//! [`tacit_protocol::rate_limit`], at three tiers ([`tacit_service::Budgets`]):
//! - per client, `rate_limit_per_minute` (default [`DEFAULT_RATE_LIMIT_PER_MINUTE`]): a peer IP
//!   address, IPv4 as is, IPv6 by its /64, IPv4-mapped IPv6 as the IPv4 client;
//! - per IPv6 /48, `rate_limit_per_minute_per_48` (default 5 × the per-client budget): every
//!   /64 inside it together, so a host minting a fresh /64 per request still meets a cap;
//! - overall, `rate_limit_per_minute_overall` (default 50 × the per-client budget): every
//!   request together, so very many /48s or IPv4 addresses still do.
//!
//! Each is a token bucket of that many requests of burst, refilled evenly over a minute; a
//! request passes only if every tier has a token for it, and a refused one takes nothing.
//! `X-Forwarded-For` is not trusted; behind a reverse proxy every client shares the proxy's
//! bucket, so rate-limit there. Loopback is not exempt: it is one client with the same bounded
//! burst. The client and /48 tables are capped at [`tacit_service::MAX_TRACKED_CLIENTS`] keys
//! each (idle keys are forgotten first, then the least recently seen eighth; the overall bucket
//! is never forgotten). Requests without a peer address (in-process `oneshot` tests) share one
//! client bucket.
//!
//! Over any tier: **429** with `Retry-After` (whole seconds until every tier has a token) and
//! the envelope `{ok: false, error: {code: "rate_limited", message}}`. Nothing is issued or
//! decided. `0` turns a tier off; `rate_limit_per_minute = 0` alone turns all three off (the
//! wider tiers' defaults scale from it).

use axum::http::StatusCode;
use axum::http::header::{self, HeaderValue};
use axum::response::{IntoResponse, Response};
use tacit_service::middleware::{Limits, Service};
use wallet_core::Timestamp;

use super::SiteState;
use super::routes::api_error;

/// Requests a client may make per minute when `site.toml` does not say.
pub const DEFAULT_RATE_LIMIT_PER_MINUTE: u32 = 120;

/// The site's answers to the shared middleware ([`tacit_service::middleware`]): the limited
/// routes' peer address comes from the `ConnectInfo` that [`super::serve`] attaches to each
/// request; over the limit, 429 with the envelope; a timeout or a wrong method, the bare
/// `{"error": code, "message": sentence}` shape.
impl Service for SiteState {
    fn limits(&self) -> &Limits {
        SiteState::limits(self)
    }

    fn now(&self) -> Timestamp {
        SiteState::now(self)
    }

    fn rate_limited(retry_after_secs: u64) -> Response {
        too_many(retry_after_secs)
    }

    fn timed_out() -> Response {
        api_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            "The request took too long and was abandoned.",
        )
    }

    /// Axum's bodiless 405; an unknown `/api/...` route has its own JSON 404 and anything else
    /// is the page's (static files).
    fn bare_error(status: StatusCode) -> Option<Response> {
        (status == StatusCode::METHOD_NOT_ALLOWED).then(|| {
            api_error(
                status,
                "method_not_allowed",
                "This route does not take that method.",
            )
        })
    }
}

/// 429 with `Retry-After` and the envelope.
fn too_many(retry_after_secs: u64) -> Response {
    let body = crate::api::RefusalEnvelope {
        ok: false,
        is_error: true,
        error: crate::api::RefusalError {
            code: "rate_limited".to_owned(),
            message: format!(
                "Too many requests from this address, its network or all clients together; \
                 nothing was issued or decided. Try again in {retry_after_secs} seconds."
            ),
            claim: None,
        },
    };
    let mut response = (StatusCode::TOO_MANY_REQUESTS, axum::Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::path::Path;
    use std::sync::Arc;

    use axum::Router;
    use axum::body::Body;
    use axum::http::Request;
    use ed25519_dalek::SigningKey;
    use http_body_util::BodyExt as _;
    use serde_json::Value;
    use tower::ServiceExt as _;
    use wallet_core::{KeySet, KeyStatus, PublicKeyEntry};

    use std::net::SocketAddr;

    use axum::extract::ConnectInfo;

    use super::*;
    use crate::server::{Config, ManualClock, Nonces, SignerKeys, SiteKey, SiteParts, app};

    const NOW: Timestamp = Timestamp::from_millis(1_800_000_000_000);

    /// A housing site on a fresh SQLite file with the API limited to `per_minute`.
    async fn site(root: &Path, per_minute: u32) -> (Router, Arc<ManualClock>) {
        let config =
            Config::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../housing/site.toml"))
                .unwrap();
        let signer = SigningKey::from_bytes(&[1; 32]);
        let keys = KeySet {
            keys: vec![PublicKeyEntry::new(
                &signer.verifying_key(),
                NOW.plus_millis(-86_400_000),
                None,
                KeyStatus::Active,
            )],
        };
        let static_dir = root.join("static");
        std::fs::create_dir_all(&static_dir).unwrap();
        std::fs::write(static_dir.join("index.html"), "<!doctype html>").unwrap();
        let clock = Arc::new(ManualClock::new(NOW));
        let state = SiteState::with_rate_limit(
            SiteParts {
                policy: config.policy,
                origin: wallet_core::Origin::parse("http://127.0.0.1:8081").unwrap(),
                site_key: SiteKey::from_bytes(&[9; 32]),
                nonces: Nonces::open(&tacit_store::sqlite_url(&root.join("nonces.db")))
                    .await
                    .unwrap(),
                signer: SignerKeys::pinned(keys),
                issuers: crate::server::IssuerKeys::none(),
                static_dir,
                clock: Box::new(clock.clone()),
            },
            per_minute,
        )
        .unwrap();
        (app(state), clock)
    }

    fn from(peer: &str, request: axum::http::request::Builder, body: Body) -> Request<Body> {
        let mut request = request.body(body).unwrap();
        let peer: SocketAddr = peer.parse().unwrap();
        request.extensions_mut().insert(ConnectInfo(peer));
        request
    }

    fn requirements(peer: &str) -> Request<Body> {
        from(peer, Request::get("/api/requirements"), Body::empty())
    }

    fn application(peer: &str) -> Request<Body> {
        from(
            peer,
            Request::post("/api/applications").header("content-type", "application/json"),
            Body::from(r#"{"receipt": 1}"#),
        )
    }

    async fn send(router: &Router, request: Request<Body>) -> (StatusCode, Value, Option<String>) {
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let retry = response
            .headers()
            .get(header::RETRY_AFTER)
            .map(|v| v.to_str().unwrap().to_owned());
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&bytes).unwrap(), retry)
    }

    #[tokio::test]
    async fn over_the_limit_is_429_with_retry_after_and_the_envelope() {
        let root = tempfile::tempdir().unwrap();
        let (router, clock) = site(root.path(), 3).await;
        let client = "192.0.2.1:40000";
        for _ in 0..3 {
            let (status, body, retry) = send(&router, requirements(client)).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(body["ok"], true);
            assert_eq!(retry, None);
        }
        // 3 a minute: the next token is 20 s away.
        let (status, body, retry) = send(&router, requirements(client)).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(retry.as_deref(), Some("20"));
        assert_eq!(body["ok"], false);
        assert_eq!(body["error"]["code"], "rate_limited");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("20 seconds")
        );
        assert!(body.get("result").is_none());
        // The same bucket covers submissions, from another port of the same address.
        let (status, body, _) = send(&router, application("192.0.2.1:40001")).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
        // A token comes back with time.
        clock.advance(20_000);
        let (status, body, _) = send(&router, requirements(client)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, _, retry) = send(&router, requirements(client)).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(retry.as_deref(), Some("20"));
    }

    #[tokio::test]
    async fn another_client_is_unaffected_and_ipv6_is_keyed_by_its_64() {
        let root = tempfile::tempdir().unwrap();
        let (router, _clock) = site(root.path(), 1).await;
        let (status, _, _) = send(&router, requirements("[2001:db8:1:2::1]:5000")).await;
        assert_eq!(status, StatusCode::OK);
        // Another address in the same /64 is the same client.
        let (status, body, _) = send(
            &router,
            requirements("[2001:db8:1:2:ffff:eeee:dddd:cccc]:5000"),
        )
        .await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(body["error"]["code"], "rate_limited");
        // The next /64 and an IPv4 client each have their own bucket.
        for other in ["[2001:db8:1:3::1]:5000", "198.51.100.7:1234"] {
            let (status, body, retry) = send(&router, requirements(other)).await;
            assert_eq!(status, StatusCode::OK, "{other}: {body}");
            assert_eq!(body["ok"], true);
            assert_eq!(retry, None);
        }
        // A submission from a fresh client reaches the verdict (a 400 for this body), not 429.
        let (status, body, _) = send(&router, application("203.0.113.9:1")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"]["code"], "invalid_input");
    }

    #[tokio::test]
    async fn unlimited_routes_and_a_zero_limit_pass() {
        let root = tempfile::tempdir().unwrap();
        let (router, _clock) = site(root.path(), 1).await;
        for _ in 0..5 {
            let request = from("192.0.2.1:1", Request::get("/api/site"), Body::empty());
            let (status, _, _) = send(&router, request).await;
            assert_eq!(status, StatusCode::OK);
        }
        let root = tempfile::tempdir().unwrap();
        let (router, _clock) = site(root.path(), 0).await;
        for _ in 0..200 {
            let (status, _, _) = send(&router, requirements("192.0.2.1:1")).await;
            assert_eq!(status, StatusCode::OK);
        }
    }

    /// Asserts a 429 with `Retry-After: <secs>` and the envelope.
    fn assert_limited((status, body, retry): (StatusCode, Value, Option<String>), secs: &str) {
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
        assert_eq!(retry.as_deref(), Some(secs), "{body}");
        assert_eq!(body["ok"], false);
        assert_eq!(body["error"]["code"], "rate_limited");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("Try again in {secs} seconds")),
            "{body}"
        );
        assert!(body.get("result").is_none());
    }

    /// The `host`th address of /64 number `net64` inside /48 number `net48`, as a peer.
    fn v6_peer(net48: u16, net64: u16, host: u16) -> String {
        format!("[2001:db8:{net48:x}:{net64:x}::{host:x}]:5000")
    }

    /// Issue 28, item 11: a hostile host inside one IPv6 /48 mints a fresh /64 (so a fresh
    /// client bucket) per requirements call. At the default budgets (120 a client) the /48 gets
    /// 600 and is then refused 429 with `Retry-After`, no row written; another /48 and IPv4 are
    /// unaffected.
    #[tokio::test]
    async fn many_64s_inside_one_48_are_refused_429() {
        let root = tempfile::tempdir().unwrap();
        let (router, clock) = site(root.path(), DEFAULT_RATE_LIMIT_PER_MINUTE).await;
        for i in 0..600u16 {
            let (status, body, retry) = send(&router, requirements(&v6_peer(1, i, 1))).await;
            assert_eq!(status, StatusCode::OK, "/64 number {i}: {body}");
            assert_eq!(retry, None);
        }
        for i in 600..610u16 {
            // 600 a minute: the next token is 100 ms away, a whole second as a wait.
            assert_limited(send(&router, requirements(&v6_peer(1, i, 1))).await, "1");
        }
        // Submissions from that /48 meet the same cap.
        assert_limited(send(&router, application(&v6_peer(1, 9_999, 1))).await, "1");
        for other in [v6_peer(2, 0, 1), "198.51.100.7:1".to_owned()] {
            let (status, body, _) = send(&router, requirements(&other)).await;
            assert_eq!(status, StatusCode::OK, "{other}: {body}");
        }
        // The /48's bucket refills at its own rate.
        clock.advance(100);
        let (status, body, _) = send(&router, requirements(&v6_peer(1, 700, 1))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_limited(send(&router, requirements(&v6_peer(1, 701, 1))).await, "1");
    }

    /// Issue 28, item 11: very many /48s (and IPv4 clients) together meet the overall cap. At 2
    /// a client (so 10 a /48, 100 overall), 100 /48s each make one call and every further
    /// client, whatever its address, is refused 429 until the overall bucket refills.
    #[tokio::test]
    async fn many_48s_meet_the_overall_cap() {
        let root = tempfile::tempdir().unwrap();
        let (router, clock) = site(root.path(), 2).await;
        for i in 0..100u16 {
            let (status, body, _) = send(&router, requirements(&v6_peer(i, 0, 1))).await;
            assert_eq!(status, StatusCode::OK, "/48 number {i}: {body}");
        }
        // 100 a minute: the next token is 600 ms away.
        for peer in [
            v6_peer(100, 0, 1),
            v6_peer(101, 0, 1),
            "192.0.2.1:1".to_owned(),
            "127.0.0.1:1".to_owned(),
        ] {
            assert_limited(send(&router, requirements(&peer)).await, "1");
        }
        clock.advance(600);
        let (status, body, _) = send(&router, requirements(&v6_peer(102, 0, 1))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_limited(send(&router, requirements(&v6_peer(103, 0, 1))).await, "1");
    }

    /// Loopback is not exempt: it is one client with the same bounded burst (IPv4 and IPv6 each
    /// their own), then 429.
    #[tokio::test]
    async fn loopback_gets_a_bounded_burst() {
        let root = tempfile::tempdir().unwrap();
        let (router, _clock) = site(root.path(), 5).await;
        for peer in ["127.0.0.1:4000", "[::1]:4000"] {
            for _ in 0..5 {
                let (status, body, _) = send(&router, requirements(peer)).await;
                assert_eq!(status, StatusCode::OK, "{peer}: {body}");
            }
            assert_limited(send(&router, requirements(peer)).await, "12");
        }
    }
}
