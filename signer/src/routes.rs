//! The HTTP surface: five routes, and the layers that bound them.
//!
//! | route               | who may call it                                                  |
//! |---------------------|------------------------------------------------------------------|
//! | `POST /v1/receipts` | an enrolled, unrevoked wallet install, its request signed (below) |
//! | `POST /v1/installs` | a wallet holding a one-time enrolment code, signed by the new key |
//! | `GET /v1/keys`      | anyone, from any origin: verifiers on relying sites fetch it from their own pages, and public keys are public (with them, the digests of revoked receipts) |
//! | `GET /v1/openapi.json` | anyone, from any origin: the OpenAPI 3.1 document of these routes |
//! | `GET /healthz`      | anyone, same-origin only                                         |
//!
//! Both POST routes require `tacit-install`, `tacit-timestamp` and `tacit-signature`
//! (`tacit_protocol::request_auth`): an ES256 signature by the install key over the method, the
//! path, the timestamp and the body's digest. Without them there is no signature, whatever the
//! `Origin` (a missing `Origin` is no longer a way in). Browsers additionally get CORS for the
//! configured wallet origins, and a present `Origin` that is not one is refused outright.
//!
//! Outside in: request trace (method and route template only, never the path or body), request
//! timeout, body limit, CORS per route, per-client rate limit (POST routes), handler.

use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{from_fn_with_state, map_response};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tacit_protocol::request_auth::{
    EnrolmentCode, EnrolmentRequest, EnrolmentResponse, HEADER_INSTALL, HEADER_SIGNATURE,
    HEADER_TIMESTAMP, InstallKey, RequestAuth,
};
use tacit_service::middleware::{
    api_security_headers, json_for_bare_errors, rate_limit, read_json_body, request_span, timeout,
};
use tower_http::cors::{AllowOrigin, Any, CorsLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;
use wallet_core::ReceiptPayload;

use crate::db::Enrolment;
use crate::state::origin_listed;
use crate::{AppState, Error, check_signable};

pub use tacit_protocol::limits::MAX_BODY_BYTES;

/// How long browsers, verifiers and caches may keep `GET /v1/keys`: five seconds, since it
/// carries the revoked receipts (a site judges with keys at most
/// `tacit_protocol::trust::MAX_KEY_AGE` old).
pub const KEYS_CACHE_CONTROL: &str = "public, max-age=5";

/// The service. Serve it with `into_make_service_with_connect_info::<SocketAddr>()` so the rate
/// limiter can tell clients apart; without that (as in `oneshot` tests) all share one bucket.
pub fn app(state: AppState) -> Router {
    let receipts = post(sign_receipt)
        .route_layer(from_fn_with_state(state.clone(), rate_limit::<AppState>))
        .layer(wallet_cors(&state));
    let installs = post(enrol)
        .route_layer(from_fn_with_state(state.clone(), rate_limit::<AppState>))
        .layer(wallet_cors(&state));
    let keys = get(get_keys).layer(
        CorsLayer::new()
            .allow_origin(Any)
            .allow_methods([Method::GET]),
    );
    let openapi = get(get_openapi).layer(
        CorsLayer::new()
            .allow_origin(Any)
            .allow_methods([Method::GET]),
    );
    let trace = TraceLayer::new_for_http()
        .make_span_with(request_span)
        .on_response(DefaultOnResponse::new().level(Level::INFO));
    Router::new()
        .route("/v1/receipts", receipts)
        .route("/v1/installs", installs)
        .route("/v1/keys", keys)
        .route("/v1/openapi.json", openapi)
        .route("/healthz", get(healthz))
        .layer(map_response(json_for_bare_errors::<AppState>))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(from_fn_with_state(state.clone(), timeout::<AppState>))
        .layer(map_response(api_security_headers))
        .layer(trace)
        .with_state(state)
}

/// CORS for the POST routes: a grant for the configured wallet origins only, POST with a JSON
/// body and the three signature headers; `Retry-After` is exposed so the wallet can read a 429.
fn wallet_cors(state: &AppState) -> CorsLayer {
    let allowed = state.allowed_origins();
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            origin_listed(&allowed, origin.as_bytes())
        }))
        .allow_methods([Method::POST])
        .allow_headers([
            header::CONTENT_TYPE,
            header::HeaderName::from_static(HEADER_INSTALL),
            header::HeaderName::from_static(HEADER_TIMESTAMP),
            header::HeaderName::from_static(HEADER_SIGNATURE),
        ])
        .expose_headers([header::RETRY_AFTER])
        .max_age(Duration::from_secs(600))
}

/// `GET /v1/openapi.json`: the OpenAPI 3.1 document of these routes ([`crate::openapi`]).
async fn get_openapi() -> Response {
    axum::Json(crate::openapi::document()).into_response()
}

/// `POST /v1/receipts`: authenticate the install, check, then sign wallet-core's canonical
/// bytes.
async fn sign_receipt(State(state): State<AppState>, request: Request) -> Result<Response, Error> {
    let signed = read_signed(&state, request).await?;
    let now = state.now();
    let key = state
        .db()
        .install_key(signed.auth.install_id())
        .await?
        .ok_or(Error::UnknownInstall)?;
    signed.verify_signature(&key, now)?;
    let payload = serde_json::from_slice::<ReceiptPayload>(&signed.body)
        .map_err(|_| Error::InvalidPayload)
        .and_then(|payload| check_signable(&payload, now).map(|()| payload));
    // The replay token and, for a payload that will be signed, its revocation record: one
    // write, in the database's group commit. Recorded before the receipt is handed out:
    // revoking the install then revokes this receipt too.
    let record = payload
        .as_ref()
        .ok()
        .map(|payload| (wallet_core::revocation_digest(payload), payload.expires_at));
    let fresh = state
        .db()
        .take_request(
            &signed.auth.replay_token(),
            signed.auth.replay_keep_until(),
            record
                .as_ref()
                .map(|(digest, expires_at)| (signed.auth.install_id(), digest, *expires_at)),
            now,
        )
        .await?;
    if !fresh {
        return Err(Error::ReplayedRequest);
    }
    let payload = payload?;
    let entries = payload.entries.len();
    let receipt = state.keys().sign(payload, now);
    tracing::info!(key_id = %receipt.key_id, entries, "signed a receipt");
    Ok(axum::Json(receipt).into_response())
}

/// `POST /v1/installs`: a new install key, signed by itself, redeems a one-time code.
async fn enrol(State(state): State<AppState>, request: Request) -> Result<Response, Error> {
    let signed = read_signed(&state, request).await?;
    let now = state.now();
    let body: EnrolmentRequest =
        serde_json::from_slice(&signed.body).map_err(|_| Error::InvalidEnrolment)?;
    let key = InstallKey::from_jwk(&body.public_key).map_err(|_| Error::InvalidEnrolment)?;
    // `RequestAuth::verify` refuses a key that is not the install the headers name; for an
    // enrolment that is the body's key disagreeing with the headers.
    signed
        .verify(&state, &key, now)
        .await
        .map_err(|e| match e {
            Error::UnknownInstall => Error::InstallMismatch,
            other => other,
        })?;
    let code = EnrolmentCode::parse(&body.code).map_err(|_| Error::EnrolmentRefused)?;
    match state.db().enrol(&code, &key, now).await? {
        Enrolment::Enrolled => {}
        Enrolment::CodeRefused => return Err(Error::EnrolmentRefused),
        Enrolment::AlreadyEnrolled => return Err(Error::AlreadyEnrolled),
    }
    tracing::info!("enrolled a wallet install");
    let answer = EnrolmentResponse {
        install_id: key.id(),
        signer_origin: state.signer_origin().to_owned(),
        keys_url: "/v1/keys".to_owned(),
    };
    Ok((StatusCode::CREATED, axum::Json(answer)).into_response())
}

/// A POST with its signature headers parsed and its body read, not yet verified.
struct SignedRequest {
    auth: RequestAuth,
    method: Method,
    path: String,
    body: Bytes,
}

impl SignedRequest {
    /// Verifies the signature with `key` at `now` (and nothing else).
    fn verify_signature(&self, key: &InstallKey, now: wallet_core::Timestamp) -> Result<(), Error> {
        self.auth
            .verify(key, self.method.as_str(), &self.path, &self.body, now)
            .map_err(Error::from_auth)
    }

    /// Verifies the signature with `key` at `now`, then records the request so it is taken once.
    async fn verify(
        &self,
        state: &AppState,
        key: &InstallKey,
        now: wallet_core::Timestamp,
    ) -> Result<(), Error> {
        self.verify_signature(key, now)?;
        let token = self.auth.replay_token();
        if !state
            .db()
            .remember_request(&token, self.auth.replay_keep_until(), now)
            .await?
        {
            return Err(Error::ReplayedRequest);
        }
        Ok(())
    }
}

/// The checks every POST shares: a browser origin must be a wallet's, the three signature
/// headers must be there and well-formed, the body must be JSON and fit.
async fn read_signed(state: &AppState, request: Request) -> Result<SignedRequest, Error> {
    let headers = request.headers();
    // CORS only stops a browser reading the answer; refuse the request itself too.
    if let Some(origin) = headers.get(header::ORIGIN)
        && !state.is_wallet_origin(origin.as_bytes())
    {
        return Err(Error::OriginNotAllowed);
    }
    let text = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or("\u{0}"));
    let auth = RequestAuth::parse(
        text(HEADER_INSTALL),
        text(HEADER_TIMESTAMP),
        text(HEADER_SIGNATURE),
    )
    .map_err(Error::from_auth)?;
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let body = read_json_body(request).await?;
    Ok(SignedRequest {
        auth,
        method,
        path,
        body,
    })
}

/// `GET /v1/keys`: wallet-core's `PublishedKeys` (the keys, and the digests of the unexpired
/// receipts of revoked installs), cacheable briefly. When the database cannot say what is
/// revoked the answer is an error, never the keys without the revocations: a site keeps its
/// last good set.
async fn get_keys(State(state): State<AppState>) -> Result<Response, Error> {
    let body = state.published_keys_json().await?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, KEYS_CACHE_CONTROL),
        ],
        body,
    )
        .into_response())
}

/// `GET /healthz`.
async fn healthz(State(state): State<AppState>) -> Response {
    axum::Json(serde_json::json!({
        "status": "ok",
        "active_key_id": state.keys().active_key_id(),
    }))
    .into_response()
}
