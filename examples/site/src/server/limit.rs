//! The per-client rate limit on the site API: `GET /api/requirements` (which writes a nonce row
//! per call) and `POST /api/applications`, one bucket per client for both.
//!
//! The services' shared middleware ([`tacit_service::middleware`]) over the rule of
//! [`tacit_protocol::rate_limit`]: a token bucket of `rate_limit_per_minute` requests, refilled evenly over a minute, per peer IP address
//! (IPv4 as is, IPv6 by its /64, IPv4-mapped IPv6 as the IPv4 client; `X-Forwarded-For` is not
//! trusted), over a table capped at [`tacit_service::MAX_TRACKED_CLIENTS`] clients (idle clients
//! are forgotten first, then the least recently seen eighth). Behind a reverse proxy every client
//! shares the proxy's bucket, so rate-limit there. Requests without a peer address (in-process
//! `oneshot` tests) share one bucket.
//!
//! Over the limit: **429** with `Retry-After` (whole seconds) and the envelope
//! `{ok: false, error: {code: "rate_limited", message}}`. Nothing is issued or decided.
//! `rate_limit_per_minute = 0` in `site.toml` turns it off.

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
                "Too many requests from this address; nothing was issued or decided. Try again \
                 in {retry_after_secs} seconds."
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
}
