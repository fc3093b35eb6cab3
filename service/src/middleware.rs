//! The middleware the services' routers share: the per-client rate limit, the request timeout,
//! the JSON shape for axum's bodiless errors, and the `application/json` test of a request's
//! `Content-Type`. Each service says how its refusals look ([`Service`]); the glue is here once.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest as _, MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use wallet_core::Timestamp;

use crate::RateLimiter;
use crate::error::Operational;
use crate::response::error_response;

/// What a service's state carries for the shared middleware and serve loop: its one rate
/// limiter and its two time limits.
#[derive(Debug)]
pub struct Limits {
    limiter: RateLimiter,
    request_timeout: Duration,
    header_read_timeout: Duration,
}

impl Limits {
    /// `per_minute` requests per client (0: off) on the limited routes; `request_timeout_secs`
    /// for a whole request, body included; `header_read_timeout_secs` to send a request head.
    pub fn new(per_minute: u32, request_timeout_secs: u64, header_read_timeout_secs: u64) -> Self {
        Self {
            limiter: RateLimiter::new(per_minute),
            request_timeout: Duration::from_secs(request_timeout_secs),
            header_read_timeout: Duration::from_secs(header_read_timeout_secs),
        }
    }

    /// The same limits with another limiter (the site's table).
    pub fn with_limiter(self, limiter: RateLimiter) -> Self {
        Self { limiter, ..self }
    }

    /// The same limits with another request timeout.
    pub fn with_request_timeout(self, request_timeout: Duration) -> Self {
        Self {
            request_timeout,
            ..self
        }
    }

    pub fn limiter(&self) -> &RateLimiter {
        &self.limiter
    }

    /// How long a request (reading its body included) may take.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// How long a client has to send a complete request head.
    pub fn header_read_timeout(&self) -> Duration {
        self.header_read_timeout
    }
}

/// What the shared middleware needs of a service's state, and how the service answers. The
/// answers default to the signer's and the issuer's JSON errors
/// ([`crate::response::error_response`]: `rate_limited` 429 with `Retry-After`, `timeout` 503,
/// `not_found` 404, `method_not_allowed` 405).
pub trait Service: Clone + Send + Sync + 'static {
    /// The service's limiter and time limits.
    fn limits(&self) -> &Limits;
    /// The service's clock.
    fn now(&self) -> Timestamp;

    /// The 429 answer, carrying `Retry-After: retry_after_secs`.
    fn rate_limited(retry_after_secs: u64) -> Response {
        Refusal::RateLimited { retry_after_secs }.into_response()
    }

    /// The answer to a request abandoned after [`Limits::request_timeout`].
    fn timed_out() -> Response {
        Refusal::Timeout.into_response()
    }

    /// The JSON answer that replaces axum's own bodiless answer with `status`, if this service
    /// replaces it (by default 404 and 405).
    fn bare_error(status: StatusCode) -> Option<Response> {
        match status {
            StatusCode::NOT_FOUND => Some(Refusal::NotFound.into_response()),
            StatusCode::METHOD_NOT_ALLOWED => Some(Refusal::MethodNotAllowed.into_response()),
            _ => None,
        }
    }
}

/// The refusals the shared middleware makes before any handler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("too many requests; retry after {retry_after_secs} seconds")]
    RateLimited { retry_after_secs: u64 },
    #[error("the request took too long and was abandoned")]
    Timeout,
    #[error("there is no such endpoint")]
    NotFound,
    #[error("this endpoint does not accept that method")]
    MethodNotAllowed,
}

impl Refusal {
    /// The HTTP status and the stable code a client can match on.
    pub fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            Refusal::RateLimited { .. } => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            Refusal::Timeout => (StatusCode::SERVICE_UNAVAILABLE, "timeout"),
            Refusal::NotFound => (StatusCode::NOT_FOUND, "not_found"),
            Refusal::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
        }
    }

    /// The `Retry-After` seconds a 429 carries.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Refusal::RateLimited { retry_after_secs } => Some(*retry_after_secs),
            _ => None,
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        // None of these is a 500, so the service's name never shows.
        error_response("service", status, code, &self, self.retry_after())
    }
}

/// Serves `state`'s router (`app`) on `listener` until `shutdown` completes, with the state's
/// [`Limits::header_read_timeout`]: [`crate::serve::serve`].
pub async fn serve_state<S: Service>(
    listener: tokio::net::TcpListener,
    state: S,
    app: impl FnOnce(S) -> Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let header_read_timeout = state.limits().header_read_timeout();
    crate::serve::serve(listener, app(state), header_read_timeout, shutdown).await
}

/// A service whose state makes its router, so that [`serve_app`] serves it without a wrapper in
/// each service.
pub trait App: Service {
    /// The service's router over this state.
    fn app(self) -> Router;
}

/// Serves `state`'s router ([`App::app`]) on `listener` until `shutdown` completes, then stops
/// accepting connections and waits for in-flight requests to finish: [`serve_state`]. Each
/// request carries its peer address as `ConnectInfo<SocketAddr>`.
pub async fn serve_app<S: App>(
    listener: tokio::net::TcpListener,
    state: S,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_state(listener, state, S::app, shutdown).await
}

/// The peer address the serve loop ([`crate::serve::serve`]) attaches to each request; `None`
/// for requests without one (in-process tests), which share one bucket.
pub fn peer_ip(request: &Request) -> Option<IpAddr> {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip())
}

/// Takes one request from the peer's bucket, or answers [`Service::rate_limited`] without
/// running the handler.
pub async fn rate_limit<S: Service>(
    State(state): State<S>,
    request: Request,
    next: Next,
) -> Response {
    match state
        .limits()
        .limiter()
        .check(peer_ip(&request), state.now())
    {
        Ok(()) => next.run(request).await,
        Err(retry_after_secs) => {
            tracing::info!(retry_after_secs, "rate limited");
            S::rate_limited(retry_after_secs)
        }
    }
}

/// Abandons a request (body reading included) after [`Limits::request_timeout`].
pub async fn timeout<S: Service>(State(state): State<S>, request: Request, next: Next) -> Response {
    match tokio::time::timeout(state.limits().request_timeout(), next.run(request)).await {
        Ok(response) => response,
        Err(_) => S::timed_out(),
    }
}

/// Gives axum's own bodiless answers (no `Content-Type`) the service's JSON shape
/// ([`Service::bare_error`]), keeping their headers (`Allow` on a 405).
pub async fn json_for_bare_errors<S: Service>(response: Response) -> Response {
    if response.headers().contains_key(header::CONTENT_TYPE) {
        return response;
    }
    let Some(mut fresh) = S::bare_error(response.status()) else {
        return response;
    };
    let (parts, _) = response.into_parts();
    for (name, value) in &parts.headers {
        if !fresh.headers().contains_key(name) {
            fresh.headers_mut().insert(name.clone(), value.clone());
        }
    }
    fresh
}

/// The Content-Security-Policy of every API response: nothing in it may load anything or be
/// framed (a JSON answer is never a page).
pub const API_CONTENT_SECURITY_POLICY: &str = "default-src 'none'; frame-ancestors 'none'";

/// The headers every API response carries, whatever answered it: [`API_CONTENT_SECURITY_POLICY`],
/// `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY` (for browsers that predate
/// `frame-ancestors`). Layer it outermost (`map_response(api_security_headers)`).
pub async fn api_security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in API_SECURITY_HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// See [`api_security_headers`].
pub const API_SECURITY_HEADERS: [(header::HeaderName, &str); 3] = [
    (header::CONTENT_SECURITY_POLICY, API_CONTENT_SECURITY_POLICY),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::X_FRAME_OPTIONS, "DENY"),
];

/// The span a service's trace layer opens for a request (`make_span_with(request_span)`): the
/// method and the route template, never the path (which may carry ids or tokens);
/// `(unmatched)` where no route matched (the site's static files, unknown routes).
pub fn request_span(request: &Request) -> tracing::Span {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("(unmatched)", MatchedPath::as_str)
        .to_owned();
    tracing::info_span!("request", method = %request.method(), route)
}

/// Why a request's body could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyError {
    /// Larger than the router's `DefaultBodyLimit`.
    TooLarge,
    /// The connection failed or the body was malformed.
    Unreadable,
}

/// The whole body of `request`, within the router's body limit.
pub async fn read_body(request: Request) -> Result<Bytes, BodyError> {
    Bytes::from_request(request, &())
        .await
        .map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                BodyError::TooLarge
            } else {
                BodyError::Unreadable
            }
        })
}

/// The whole body of `request`, which must be sent as JSON, within the router's body limit.
pub async fn read_json_body(request: Request) -> Result<Bytes, Operational> {
    if !is_json(request.headers().get(header::CONTENT_TYPE)) {
        return Err(Operational::UnsupportedMediaType);
    }
    Ok(read_body(request).await?)
}

/// `application/json`, with or without parameters such as `charset=utf-8`.
pub fn is_json(value: Option<&HeaderValue>) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::sync::Arc;

    use axum::Router;
    use axum::body::Body;
    use axum::middleware::{from_fn_with_state, map_response};
    use axum::routing::{get, post};
    use tower::ServiceExt as _;

    use super::*;

    /// The defaults: the signer's and the issuer's answers.
    #[derive(Clone)]
    struct Plain(Arc<Limits>);

    impl Service for Plain {
        fn limits(&self) -> &Limits {
            &self.0
        }
        fn now(&self) -> Timestamp {
            Timestamp::from_millis(0)
        }
    }

    fn app(per_minute: u32, limit: Duration) -> Router {
        let limits = Limits::new(per_minute, 5, 5).with_request_timeout(limit);
        let state = Plain(Arc::new(limits));
        Router::new()
            .route(
                "/limited",
                post(|| async { "done" })
                    .route_layer(from_fn_with_state(state.clone(), rate_limit::<Plain>)),
            )
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    "late"
                }),
            )
            .layer(map_response(json_for_bare_errors::<Plain>))
            .layer(from_fn_with_state(state.clone(), timeout::<Plain>))
            .with_state(state)
    }

    async fn send(app: &Router, request: Request) -> (StatusCode, Option<String>, String) {
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let allow = response
            .headers()
            .get(header::ALLOW)
            .map(|v| v.to_str().unwrap().to_owned());
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        (status, allow, String::from_utf8(body.to_vec()).unwrap())
    }

    async fn fetch(app: &Router, path: &str) -> (StatusCode, Option<String>, String) {
        send(app, Request::get(path).body(Body::empty()).unwrap()).await
    }

    fn post_from(peer: &str) -> Request {
        let mut request = Request::post("/limited").body(Body::empty()).unwrap();
        request
            .extensions_mut()
            .insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
        request
    }

    #[tokio::test]
    async fn the_limit_is_per_peer_and_refuses_before_the_handler() {
        let app = app(1, Duration::from_secs(5));
        // An answer with a body of its own passes untouched.
        let (status, _, body) = send(&app, post_from("192.0.2.1:1")).await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "done"));
        let (status, _, body) = send(&app, post_from("192.0.2.1:2")).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert!(body.contains("retry after 60 seconds"), "{body}");
        assert_eq!(send(&app, post_from("192.0.2.2:1")).await.0, StatusCode::OK);
    }

    #[tokio::test]
    async fn a_slow_request_is_abandoned() {
        let app = app(0, Duration::from_millis(20));
        let (status, _, body) = fetch(&app, "/slow").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(body.contains(r#""error":"timeout""#), "{body}");
    }

    #[tokio::test]
    async fn bare_errors_get_the_services_shape_and_keep_allow() {
        let app = app(0, Duration::from_secs(5));
        let (status, allow, body) = fetch(&app, "/limited").await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(allow.as_deref(), Some("POST"));
        assert!(body.contains(r#""error":"method_not_allowed""#), "{body}");
        let (status, _, body) = fetch(&app, "/nowhere").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(body.contains(r#""error":"not_found""#), "{body}");
    }

    #[tokio::test]
    async fn the_default_answers_are_the_services_json_errors() {
        let json = |response: Response| async move {
            let status = response.status();
            let retry = response.headers().get(header::RETRY_AFTER).cloned();
            let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
                .await
                .unwrap();
            let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            (
                status,
                body["error"].clone(),
                body["message"].clone(),
                retry,
            )
        };
        let (status, code, message, retry) = json(Plain::rate_limited(7)).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(code, "rate_limited");
        assert_eq!(message, "too many requests; retry after 7 seconds");
        assert_eq!(retry.unwrap(), "7");
        let (status, code, _, retry) = json(Plain::timed_out()).await;
        assert_eq!(
            (status, code),
            (StatusCode::SERVICE_UNAVAILABLE, "timeout".into())
        );
        assert!(retry.is_none());
        let (status, code, _, _) = json(Plain::bare_error(StatusCode::NOT_FOUND).unwrap()).await;
        assert_eq!((status, code), (StatusCode::NOT_FOUND, "not_found".into()));
        let answer = Plain::bare_error(StatusCode::METHOD_NOT_ALLOWED).unwrap();
        let (status, code, _, _) = json(answer).await;
        assert_eq!(
            (status, code),
            (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed".into())
        );
        assert!(Plain::bare_error(StatusCode::BAD_REQUEST).is_none());
        let limits = Limits::new(0, 10, 5);
        assert!(!limits.limiter().is_enabled());
        assert_eq!(limits.request_timeout(), Duration::from_secs(10));
        assert_eq!(limits.header_read_timeout(), Duration::from_secs(5));
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_too_large() {
        use axum::extract::DefaultBodyLimit;
        let app = Router::new()
            .route(
                "/",
                post(|request: Request| async move {
                    match read_body(request).await {
                        Ok(body) => format!("{} bytes", body.len()),
                        Err(e) => format!("{e:?}"),
                    }
                }),
            )
            .layer(DefaultBodyLimit::max(8));
        let post = |body: &'static str| Request::post("/").body(Body::from(body)).unwrap();
        assert_eq!(send(&app, post("12345678")).await.2, "8 bytes");
        assert_eq!(send(&app, post("123456789")).await.2, "TooLarge");
    }

    #[test]
    fn json_with_or_without_parameters() {
        for yes in [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/json ;x",
        ] {
            assert!(is_json(Some(&HeaderValue::from_static(yes))), "{yes}");
        }
        for no in [
            "text/plain",
            "application/jsonx",
            "application/json-seq",
            "",
        ] {
            assert!(!is_json(Some(&HeaderValue::from_static(no))), "{no}");
        }
        assert!(!is_json(None));
    }
}
