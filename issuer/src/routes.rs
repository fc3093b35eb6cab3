//! The HTTP surface.
//!
//! | route                             | what                                                   |
//! |-----------------------------------|--------------------------------------------------------|
//! | `GET /.well-known/jwt-vc-issuer`  | SD-JWT VC issuer metadata: `{issuer, jwks: {keys}}`    |
//! | `GET /v1/issuer`                  | name, attribute, `vct`, batch limits (for the wallet)  |
//! | `GET /v1/nonce`                   | a fresh single-use nonce, valid five minutes           |
//! | `POST /v1/credentials`            | a batch of SD-JWT VCs, one per holder key              |
//! | `GET /status/1`                   | the Token Status List (`statuslist+jwt`) they name      |
//! | OpenID4VCI 1.0                    | metadata, `/token`, `/nonce`, `/credential` ([`crate::oid4vci`]) |
//! | `GET /v1/openapi.json`            | the OpenAPI 3.1 document of these routes               |
//! | `GET /healthz`                    | liveness                                               |
//!
//! Every route answers any origin (CORS `*`, no credentials): nothing here rides on cookies or
//! ambient authority; a batch needs a code or refresh token and proofs by the holder keys.
//!
//! Outside in: request trace (method and route template only), request timeout, body limit,
//! CORS, per-client rate limit (nonce and credentials), handler.

use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{Method, header};
use axum::middleware::{from_fn_with_state, map_response};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use tacit_protocol::issuance::{CheckedGrant, Holder, check_request};
use tacit_protocol::oid4vci;
use tacit_protocol::request_auth::Jwk;
use tacit_protocol::sd_jwt::WELL_KNOWN_PATH;
use tacit_protocol::status_list::{self, STATUS_PATH, StatusList, StatusRef};
use tacit_service::error::Operational;
use tacit_service::middleware::{
    api_security_headers, json_for_bare_errors, rate_limit, read_json_body, request_span, timeout,
};
use tower_http::cors::{Any, CorsLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

use crate::credential::{Issuance, issue_batch};
use crate::db::Grant;
use crate::{AppState, Error};

pub use tacit_protocol::limits::MAX_BODY_BYTES;

pub use tacit_protocol::limits::{DEFAULT_BATCH, MAX_BATCH};

/// The body of `POST /v1/credentials`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CredentialRequest {
    /// The one-time enrolment code (first batch); exactly one of this and `refresh_token`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The refresh token from the previous batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// A nonce from `GET /v1/nonce`.
    pub nonce: String,
    /// 1 to [`MAX_BATCH`] distinct holder keys, each with its proof of possession.
    pub holder_keys: Vec<HolderKey>,
}

/// One holder key and its proof (see [`crate::pop`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HolderKey {
    pub jwk: Jwk,
    pub proof: String,
}

/// The answer to `POST /v1/credentials`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CredentialResponse {
    /// One SD-JWT VC per holder key, in request order.
    pub credentials: Vec<String>,
    /// When they expire, in milliseconds since the Unix epoch (their `exp` is this in seconds).
    pub expires_at: i64,
    /// Single-use: send it as `refresh_token` to fetch the next batch.
    pub refresh_token: String,
    /// The issuer (`iss`).
    pub issuer: String,
    /// The issuer's name for people.
    pub issuer_name: String,
    /// The credential type.
    pub vct: String,
}

/// The answer to `GET /v1/nonce`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NonceResponse {
    pub nonce: String,
    /// Milliseconds since the Unix epoch.
    pub expires_at: i64,
}

/// The answer to `GET /v1/issuer`: what the wallet shows and checks before it asks for a batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssuerInfo {
    /// The issuer (`iss`), this service's origin.
    pub issuer: String,
    /// Its name for people.
    pub name: String,
    /// The one attribute it vouches for (`income` or `birth_date`).
    pub attribute: String,
    /// The credential type.
    pub vct: String,
    /// Where its SD-JWT VC issuer metadata is (a path on this origin).
    pub metadata_url: String,
    /// Most holder keys in one batch.
    pub max_batch: usize,
    /// The batch size wallets ask for by default.
    pub default_batch: usize,
}

/// The service. Serve it with `ConnectInfo<SocketAddr>` (as [`crate::serve`] does) so the rate
/// limiter can tell clients apart; without it (as in `oneshot` tests) all share one bucket.
pub fn app(state: AppState) -> Router {
    let cors = CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::POST])
        .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION])
        .expose_headers([header::RETRY_AFTER, header::WWW_AUTHENTICATE])
        .max_age(Duration::from_secs(600));
    let limited = from_fn_with_state(state.clone(), rate_limit::<AppState>);
    let trace = TraceLayer::new_for_http()
        .make_span_with(request_span)
        .on_response(DefaultOnResponse::new().level(Level::INFO));
    Router::new()
        .route(WELL_KNOWN_PATH, get(metadata))
        .route("/v1/issuer", get(info))
        .route("/v1/nonce", get(nonce).route_layer(limited.clone()))
        .route(
            "/v1/credentials",
            post(credentials).route_layer(limited.clone()),
        )
        .route(STATUS_PATH, get(status))
        .route(oid4vci::METADATA_PATH, get(crate::oid4vci::issuer_metadata))
        .route(
            oid4vci::AS_METADATA_PATH,
            get(crate::oid4vci::authorization_server),
        )
        .route(
            oid4vci::TOKEN_PATH,
            post(crate::oid4vci::token).route_layer(limited.clone()),
        )
        .route(
            oid4vci::NONCE_PATH,
            post(crate::oid4vci::nonce).route_layer(limited.clone()),
        )
        .route(
            oid4vci::CREDENTIAL_PATH,
            post(crate::oid4vci::credential).route_layer(limited),
        )
        .route("/v1/openapi.json", get(openapi))
        .route("/healthz", get(healthz))
        .layer(cors)
        .layer(map_response(json_for_bare_errors::<AppState>))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(from_fn_with_state(state.clone(), timeout::<AppState>))
        .layer(map_response(api_security_headers))
        .layer(trace)
        .with_state(state)
}

/// `GET /.well-known/jwt-vc-issuer`.
async fn metadata(State(state): State<AppState>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "public, max-age=300"),
        ],
        state.metadata_json().to_owned(),
    )
        .into_response()
}

/// `GET /v1/openapi.json`: the OpenAPI 3.1 document of these routes ([`crate::openapi`]).
async fn openapi(State(state): State<AppState>) -> Response {
    axum::Json(crate::openapi::document(&state)).into_response()
}

/// `GET /v1/issuer`.
async fn info(State(state): State<AppState>) -> Response {
    axum::Json(IssuerInfo {
        issuer: state.issuer().to_owned(),
        name: state.name().to_owned(),
        attribute: state.attribute().as_str().to_owned(),
        vct: state.vct().to_owned(),
        metadata_url: WELL_KNOWN_PATH.to_owned(),
        max_batch: MAX_BATCH,
        default_batch: DEFAULT_BATCH,
    })
    .into_response()
}

/// How long a served status list token is valid, and how long a reader may keep it.
const STATUS_TOKEN_VALIDITY_MS: i64 = 3_600_000;
/// The `ttl` of a served token, in seconds: a site sees a revocation within this.
pub const STATUS_TTL_SECONDS: u64 = 60;

/// `GET /status/1`: the Token Status List, signed now with the active key (the one the
/// credentials are checked with), every revoked entry set.
async fn status(State(state): State<AppState>) -> Result<Response, Error> {
    let now = state.now();
    let mut list = StatusList::new(usize::try_from(crate::db::STATUS_LIST_ENTRIES).unwrap_or(0));
    for idx in state.db().revoked_indexes().await? {
        list.set(idx, status_list::INVALID);
    }
    let keys = state.keys();
    let token = status_list::sign_token(
        keys.signing_key(),
        keys.active_kid(),
        state.issuer(),
        &format!("{}{STATUS_PATH}", state.issuer()),
        &list,
        now,
        now.plus_millis(STATUS_TOKEN_VALIDITY_MS),
        STATUS_TTL_SECONDS,
    );
    let max_age = format!("public, max-age={STATUS_TTL_SECONDS}");
    Ok((
        [
            (header::CONTENT_TYPE, status_list::MEDIA_TYPE.to_owned()),
            (header::CACHE_CONTROL, max_age),
        ],
        token,
    )
        .into_response())
}

/// `GET /v1/nonce`.
async fn nonce(State(state): State<AppState>) -> Result<Response, Error> {
    let (nonce, expires_at) = state.db().make_nonce(state.now()).await?;
    let body = NonceResponse {
        nonce,
        expires_at: expires_at.millis(),
    };
    Ok(([(header::CACHE_CONTROL, "no-store")], axum::Json(body)).into_response())
}

/// `POST /v1/credentials`: checks the schema, the holder keys and their proofs, then redeems
/// the nonce and the code (or refresh token) and signs the batch in one transaction.
async fn credentials(State(state): State<AppState>, request: Request) -> Result<Response, Error> {
    let body = read_json_body(request).await?;
    let request: CredentialRequest =
        serde_json::from_slice(&body).map_err(|_| Error::InvalidRequest)?;
    let holders: Vec<Holder<'_>> = request
        .holder_keys
        .iter()
        .map(|h| Holder {
            jwk: &h.jwk,
            proof: &h.proof,
        })
        .collect();
    let checked = check_request(
        request.code.as_deref(),
        request.refresh_token.as_deref(),
        &request.nonce,
        &holders,
        state.issuer(),
    )
    .map_err(Error::from_request)?;
    let holder_jwks = checked.holder_jwks;
    let grant = match &checked.grant {
        CheckedGrant::Code(code) => Grant::Code(code),
        CheckedGrant::RefreshToken(token) => Grant::RefreshToken(token),
    };
    let now = state.now();
    let mut redemption = state.db().redeem(&request.nonce, grant, now).await?;
    // Each credential's status list entry, drawn at random, kept only if the batch commits.
    let (_, expires_ms) = crate::predicates::credential_lifetime(now.millis())?;
    let uri = format!("{}{STATUS_PATH}", state.issuer());
    let statuses: Vec<StatusRef> = redemption
        .status_indexes(
            holder_jwks.len(),
            now,
            wallet_core::Timestamp::from_millis(expires_ms),
            crate::oid4vci::random_u64,
        )
        .await?
        .into_iter()
        .map(|idx| StatusRef {
            idx,
            uri: uri.clone(),
        })
        .collect();
    let issuance = Issuance {
        iss: state.issuer(),
        vct: state.vct(),
        attribute: state.attribute(),
    };
    let keys = state.keys();
    let (credentials, expires_at) = issue_batch(
        keys.signing_key(),
        keys.active_kid(),
        &issuance,
        &redemption.person,
        &holder_jwks,
        &statuses,
        now,
        crate::oid4vci::random_salt,
    )?;
    let refresh_token = redemption
        .commit(now, credentials.len(), expires_at)
        .await?
        .ok_or_else(|| Operational::Config("a code's batch hands out a refresh token".into()))?;
    tracing::info!(
        credentials = credentials.len(),
        kid = keys.active_kid(),
        "issued a batch"
    );
    let body = CredentialResponse {
        credentials,
        expires_at: expires_at.millis(),
        refresh_token,
        issuer: state.issuer().to_owned(),
        issuer_name: state.name().to_owned(),
        vct: state.vct().to_owned(),
    };
    Ok(([(header::CACHE_CONTROL, "no-store")], axum::Json(body)).into_response())
}

/// `GET /healthz`.
async fn healthz(State(state): State<AppState>) -> Response {
    axum::Json(serde_json::json!({
        "status": "ok",
        "kid": state.keys().active_kid(),
    }))
    .into_response()
}
