//! The HTTP surface: three routes, and the layers that bound them.
//!
//! | route               | who may call it                                   |
//! |---------------------|---------------------------------------------------|
//! | `POST /v1/receipts` | the configured wallet origins (CORS and `Origin`) |
//! | `GET /v1/keys`      | anyone, from any origin: verifiers on relying sites fetch it from their own pages, and public keys are public |
//! | `GET /healthz`      | anyone, same-origin only                          |
//!
//! A request without an `Origin` header is not from a browser page (a CLI, a server, a test);
//! CORS does not concern it and it is served, under the same rate limit. A present `Origin` that
//! is not a wallet origin is refused outright, not only denied the CORS grant.
//!
//! Outside in: request trace (method and route template only, never the path or body), request
//! timeout, body limit, CORS per route, per-client rate limit (receipts only), handler.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, FromRequest, MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state, map_response};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tower_http::cors::{AllowOrigin, Any, CorsLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;
use wallet_core::ReceiptPayload;

use crate::state::origin_listed;
use crate::{AppState, Error, check_signable};

/// Largest request body: 64 KiB.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// How long browsers and verifiers may cache `GET /v1/keys`.
pub const KEYS_CACHE_CONTROL: &str = "public, max-age=300";

/// The service. Serve it with `into_make_service_with_connect_info::<SocketAddr>()` so the rate
/// limiter can tell clients apart; without that (as in `oneshot` tests) all share one bucket.
pub fn app(state: AppState) -> Router {
    let receipts = post(sign_receipt)
        .route_layer(from_fn_with_state(state.clone(), rate_limit))
        .layer(wallet_cors(&state));
    let keys = get(get_keys).layer(
        CorsLayer::new()
            .allow_origin(Any)
            .allow_methods([Method::GET]),
    );
    let trace = TraceLayer::new_for_http()
        .make_span_with(|request: &Request| {
            let route = request
                .extensions()
                .get::<MatchedPath>()
                .map_or("(unmatched)", MatchedPath::as_str)
                .to_owned();
            tracing::info_span!("request", method = %request.method(), route)
        })
        .on_response(DefaultOnResponse::new().level(Level::INFO));
    Router::new()
        .route("/v1/receipts", receipts)
        .route("/v1/keys", keys)
        .route("/healthz", get(healthz))
        .layer(map_response(json_for_bare_errors))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(from_fn_with_state(state.clone(), timeout))
        .layer(trace)
        .with_state(state)
}

/// CORS for the signing route: a grant for the configured wallet origins only, POST with a JSON
/// body; `Retry-After` is exposed so the wallet can read a 429.
fn wallet_cors(state: &AppState) -> CorsLayer {
    let allowed = state.allowed_origins();
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            origin_listed(&allowed, origin.as_bytes())
        }))
        .allow_methods([Method::POST])
        .allow_headers([header::CONTENT_TYPE])
        .expose_headers([header::RETRY_AFTER])
        .max_age(Duration::from_secs(600))
}

/// `POST /v1/receipts`: check, then sign wallet-core's canonical bytes.
async fn sign_receipt(State(state): State<AppState>, request: Request) -> Result<Response, Error> {
    // CORS only stops a browser reading the answer; refuse the request itself too.
    if let Some(origin) = request.headers().get(header::ORIGIN)
        && !state.is_wallet_origin(origin.as_bytes())
    {
        return Err(Error::OriginNotAllowed);
    }
    if !is_json(request.headers().get(header::CONTENT_TYPE)) {
        return Err(Error::UnsupportedMediaType);
    }
    let body = Bytes::from_request(request, &())
        .await
        .map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                Error::PayloadTooLarge
            } else {
                Error::UnreadableBody
            }
        })?;
    let payload: ReceiptPayload =
        serde_json::from_slice(&body).map_err(|_| Error::InvalidPayload)?;
    let now = state.now();
    check_signable(&payload, now)?;
    let entries = payload.entries.len();
    let signed = state.keys().sign(payload, now);
    tracing::info!(key_id = %signed.key_id, entries, "signed a receipt");
    Ok(axum::Json(signed).into_response())
}

/// `application/json`, with or without parameters such as `charset=utf-8`.
fn is_json(value: Option<&HeaderValue>) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// `GET /v1/keys`: wallet-core's `KeySet`, cacheable.
async fn get_keys(State(state): State<AppState>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, KEYS_CACHE_CONTROL),
        ],
        state.key_set_json(),
    )
        .into_response()
}

/// `GET /healthz`.
async fn healthz(State(state): State<AppState>) -> Response {
    axum::Json(serde_json::json!({
        "status": "ok",
        "active_key_id": state.keys().active_key_id(),
    }))
    .into_response()
}

/// Answers 429 with `Retry-After` once the peer's bucket is empty.
async fn rate_limit(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip());
    match state.limiter().check(client, state.now()) {
        Ok(()) => next.run(request).await,
        Err(retry_after_secs) => Error::RateLimited { retry_after_secs }.into_response(),
    }
}

/// Abandons a request (body reading included) after the configured time.
async fn timeout(State(state): State<AppState>, request: Request, next: Next) -> Response {
    match tokio::time::timeout(state.timeout(), next.run(request)).await {
        Ok(response) => response,
        Err(_) => Error::Timeout.into_response(),
    }
}

/// Gives axum's own bodiless 404 and 405 answers the JSON error shape (keeping `Allow`).
async fn json_for_bare_errors(response: Response) -> Response {
    let status = response.status();
    let bare = !response.headers().contains_key(header::CONTENT_TYPE);
    let replacement = match status {
        StatusCode::NOT_FOUND if bare => Error::NotFound,
        StatusCode::METHOD_NOT_ALLOWED if bare => Error::MethodNotAllowed,
        _ => return response,
    };
    let (parts, _) = response.into_parts();
    let mut fresh = replacement.into_response();
    for (name, value) in &parts.headers {
        if !fresh.headers().contains_key(name) {
            fresh.headers_mut().insert(name.clone(), value.clone());
        }
    }
    fresh
}
