//! The HTTP surface.
//!
//! | route                              | answers |
//! |------------------------------------|---------|
//! | `GET /api/site`                    | the page's words, the two tools' definitions (public policy) and the trusted issuers' names |
//! | `GET /api/requirements`            | envelope: the requirements with a fresh nonce and the site's attestation (the wallet's `request_claims` input) |
//! | `POST /api/applications`           | envelope: the verdict, decided here |
//! | `GET /api/openapi.json`            | the OpenAPI 3.1 document of this API |
//! | `GET /.well-known/tacit-site.json` | the site's public keys (CORS `*`) |
//! | anything else                      | the built page (static files) |
//!
//! Status codes of `POST /api/applications`: **200** for every verdict on a well-formed
//! submission, accepted or refused (`{ok: true, result}` / `{ok: false, error: {code, message}}`
//! — an agent reads the envelope); **400** (`invalid_input`) for a body that is not JSON or not
//! `{receipt, presentations?, nonce?}`; **413** for a body over 64 KiB; **415** for a body that is not
//! `application/json`; **503** (`signer_unreachable` or `busy`) when nothing could be decided
//! and a retry may succeed. Those carry the envelope too. Answers that never reach a handler
//! (unknown API route, wrong method, timeout) are `{"error": code, "message": sentence}`.
//!
//! Both API routes that do work are rate-limited per client (`rate_limit_per_minute` in
//! `site.toml`, see [`super::limit`]): over the limit, **429** with `Retry-After` and the
//! envelope `{ok: false, error: {code: "rate_limited", message}}`, before anything is issued or
//! decided.
//!
//! Every response carries the security headers: `Origin-Agent-Cluster: ?1`, the CSP — the
//! page's (`script-src 'self' 'wasm-unsafe-eval'`, `connect-src 'self'`: the page talks to its
//! own server only; `frame-ancestors 'none'`) on pages and files, `default-src 'none';
//! frame-ancestors 'none'` on `/api/` and `/.well-known/` answers —, `X-Frame-Options: DENY`,
//! `Permissions-Policy: tools=(self)` (WebMCP tools for the page itself, never a frame),
//! `X-Content-Type-Options: nosniff`, `Cache-Control: no-store`.

use std::path::Path;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header::{self, HeaderName, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use serde_json::{Value, json};
use tacit_protocol::site_auth::{SITE_KEYS_PATH, attest_for_nonce};
use tacit_service::middleware::{
    API_CONTENT_SECURITY_POLICY, BodyError, is_json, json_for_bare_errors, rate_limit, read_body,
    request_span, timeout,
};
use tower_http::cors::{Any, CorsLayer};
use tower_http::services::ServeDir;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

use super::SiteState;
use crate::proof::check_presentations;
use crate::submit::{
    Accepted, Code, Refusal, Verdict, check_receipt, decide, nonce_refusal, parse_submission,
};

/// Largest `POST /api/applications` body: 64 KiB.
pub use tacit_protocol::limits::MAX_BODY_BYTES;

/// The Content-Security-Policy every response carries.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; \
     script-src 'self' 'wasm-unsafe-eval'; \
     style-src 'self'; \
     img-src 'self' data:; \
     connect-src 'self'; \
     object-src 'none'; \
     base-uri 'none'; \
     form-action 'self'; \
     frame-ancestors 'none'";

/// The site server's router.
pub fn app(state: SiteState) -> Router {
    let static_files = static_service(state.static_dir());
    let well_known = get(site_keys).layer(
        CorsLayer::new()
            .allow_origin(Any)
            .allow_methods([Method::GET]),
    );
    // Per client, one bucket for both routes that do work (see `limit`).
    let limited = middleware::from_fn_with_state(state.clone(), rate_limit::<SiteState>);
    let trace = TraceLayer::new_for_http()
        .make_span_with(request_span)
        .on_response(DefaultOnResponse::new().level(Level::DEBUG));
    Router::new()
        .route("/api/site", get(site))
        .route(
            "/api/requirements",
            get(requirements).layer(limited.clone()),
        )
        .route(
            "/api/applications",
            axum::routing::post(applications).layer(limited),
        )
        .route("/api/openapi.json", get(openapi))
        .route("/api/{*rest}", any(api_not_found))
        .route(SITE_KEYS_PATH, well_known)
        .fallback_service(static_files)
        .layer(middleware::map_response(json_for_bare_errors::<SiteState>))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            timeout::<SiteState>,
        ))
        .layer(middleware::from_fn(security_headers))
        .layer(trace)
        .with_state(state)
}

fn static_service(dir: &Path) -> ServeDir {
    ServeDir::new(dir).append_index_html_on_directories(true)
}

/// `{ok: false, error: {code, message}}` with `status`.
fn refused(status: StatusCode, refusal: &Refusal) -> Response {
    (status, axum::Json(refusal.envelope())).into_response()
}

fn busy() -> Response {
    refused(
        StatusCode::SERVICE_UNAVAILABLE,
        &Refusal::new(
            Code::Busy,
            "The site could not reach its database; nothing was decided or spent. Try again in a \
             moment.",
        ),
    )
}

/// `GET /api/openapi.json`: the OpenAPI 3.1 document of the API ([`super::openapi`]).
async fn openapi(State(state): State<SiteState>) -> Response {
    axum::Json(super::openapi::document(state.policy(), SITE_KEYS_PATH)).into_response()
}

/// `GET /api/site`: the policy's words and tools, and the issuers whose proof counts here.
async fn site(State(state): State<SiteState>) -> Response {
    let policy = state.policy();
    let trusted_issuers = state
        .issuers()
        .trust()
        .issuers
        .iter()
        .map(|i| crate::api::IssuerName {
            issuer: i.issuer.to_string(),
            name: i.name.clone(),
        })
        .collect();
    axum::Json(crate::api::SiteInfo {
        trusted_issuers,
        ..policy.site_info()
    })
    .into_response()
}

/// `GET /api/requirements`: a fresh nonce stored in the database, the requirements for it, the
/// attestation ([`attest_for_nonce`]: it lapses with the nonce).
async fn requirements(State(state): State<SiteState>) -> Response {
    let now = state.now();
    let (nonce, record) = match state.nonces().issue(now).await {
        Ok(issued) => issued,
        Err(e) => {
            tracing::error!(error = %e, "could not issue a nonce");
            return busy();
        }
    };
    let requirements = state.policy().requirements(state.origin(), &nonce);
    let key = state.site_key();
    let attestation = attest_for_nonce(
        key.signing_key(),
        key.kid(),
        &requirements,
        record.issued_at,
        record.expires_at,
    );
    tracing::info!("issued requirements");
    axum::Json(crate::api::Answer::new(crate::api::AttestedRequirements {
        requirements,
        attestation,
    }))
    .into_response()
}

/// `GET /.well-known/tacit-site.json`.
async fn site_keys(State(state): State<SiteState>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        state.site_keys_json().to_owned(),
    )
        .into_response()
}

/// `POST /api/applications`: the verdict.
async fn applications(State(state): State<SiteState>, request: Request) -> Response {
    let invalid =
        |status, message: &str| refused(status, &Refusal::new(Code::InvalidInput, message));
    if !is_json(request.headers().get(header::CONTENT_TYPE)) {
        return invalid(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Send the submission as application/json: {\"receipt\": {...}, \"presentations\": \
             [...], \"nonce\": \"...\"}.",
        );
    }
    let body = match read_body(request).await {
        Ok(body) => body,
        Err(BodyError::TooLarge) => {
            return invalid(
                StatusCode::PAYLOAD_TOO_LARGE,
                "The submission is larger than 64 KiB; a Tacit receipt and its presentations are \
                 far smaller.",
            );
        }
        Err(_) => return invalid(StatusCode::BAD_REQUEST, "The submission could not be read."),
    };
    // tool-gate's reader: a body nested deeper than `tool_gate::input::MAX_DEPTH` is refused
    // by name, as the page's tools and the wallet refuse it.
    let Ok(text) = std::str::from_utf8(&body) else {
        return invalid(StatusCode::BAD_REQUEST, "The submission is not JSON.");
    };
    if tool_gate::input::nested_too_deep(text) {
        return invalid(StatusCode::BAD_REQUEST, tool_gate::input::TOO_DEEP);
    }
    let Ok(input) = serde_json::from_str::<Value>(text) else {
        return invalid(StatusCode::BAD_REQUEST, "The submission is not JSON.");
    };
    let submission = match parse_submission(&input) {
        Ok(submission) => submission,
        Err(refusal) => return refused(StatusCode::BAD_REQUEST, &refusal),
    };
    let verdict = judge(&state, &submission).await;
    match verdict {
        Ok(Judged::Accepted(accepted)) => {
            tracing::info!(outcome = "accepted", "application");
            axum::Json(accepted.envelope(state.policy())).into_response()
        }
        Ok(Judged::Refused(refusal)) => {
            tracing::info!(outcome = refusal.code.as_str(), "application");
            refused(StatusCode::OK, &refusal)
        }
        Err(response) => response,
    }
}

enum Judged {
    Accepted(Accepted),
    Refused(Refusal),
}

/// Keys, receipt check (one refetch on an unknown key), presentations against the trusted
/// issuers (one refetch of an issuer's keys when they were missing or lacked the key id), nonce
/// state, pure decision, atomic consume. `Err` is an answer that decided nothing (503). No
/// refusal spends the nonce.
async fn judge(state: &SiteState, submission: &crate::Submission) -> Result<Judged, Response> {
    let policy = state.policy();
    let origin = state.origin();
    // At most MAX_KEY_AGE old: the set carries the signer's revoked receipts.
    let keys = state.signer().for_judging().await.map_err(|_| {
        refused(
            StatusCode::SERVICE_UNAVAILABLE,
            &Refusal::new(
                Code::SignerUnreachable,
                "The site could not fetch the signer's public keys, so it cannot check the \
                 receipt. Nothing was spent; submit again in a moment.",
            ),
        )
    })?;
    let now = state.now();
    let mut checked = check_receipt(policy, origin, submission, &keys, now);
    if matches!(&checked, Err(r) if r.code == Code::UnknownKey)
        && let Some(fresh) = state.signer().refresh_for_unknown_key().await
    {
        checked = check_receipt(policy, origin, submission, &fresh, now);
    }
    let verified = match checked {
        Ok(verified) => verified,
        Err(refusal) => return Ok(Judged::Refused(refusal)),
    };
    let issuers = state.issuers();
    let check = || {
        check_presentations(
            &verified,
            &submission.presentations,
            &issuers.trust(),
            origin,
            now,
        )
    };
    let mut proofs = check();
    // An issuer whose keys are missing or lack the presentation's key id: fetch once (each
    // issuer at most every few seconds) and check again.
    let mut refetched = Vec::new();
    while let Some(issuer) = proofs.refetch.clone() {
        if refetched.contains(&issuer) || !issuers.refresh_for(&issuer).await {
            break;
        }
        refetched.push(issuer);
        proofs = check();
    }
    // An issuer whose status list is not at hand (a presentation names an entry): read it
    // once and check again.
    let mut read = Vec::new();
    while let Some(issuer) = proofs.status_fetch.clone() {
        if read.contains(&issuer) || !issuers.refresh_status_for(&issuer, now).await {
            break;
        }
        read.push(issuer);
        proofs = check();
    }
    let nonces = state.nonces();
    let nonce_state = nonces
        .state(verified.nonce(), now)
        .await
        .map_err(|_| busy())?;
    match decide(policy, &verified, &proofs, nonce_state) {
        Verdict::Refuse(refusal) => Ok(Judged::Refused(refusal)),
        Verdict::Consume { nonce, accepted } => {
            if nonces.consume(&nonce, now).await.map_err(|_| busy())? {
                Ok(Judged::Accepted(accepted))
            } else {
                // Spent (or lapsed) since we read it: another submission won the race.
                let after = nonces.state(&nonce, now).await.map_err(|_| busy())?;
                Ok(Judged::Refused(nonce_refusal(after, policy)))
            }
        }
    }
}

/// An unknown `/api/...` route is a JSON 404, never the page.
async fn api_not_found() -> Response {
    api_error(
        StatusCode::NOT_FOUND,
        "not_found",
        "There is no such API route.",
    )
}

pub(super) fn api_error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        axum::Json(json!({ "error": code, "message": message })),
    )
        .into_response()
}

/// The page's WebMCP permission: its own tools, never a frame's (it is not framed anyway).
pub const PERMISSIONS_POLICY: &str = "tools=(self)";

async fn security_headers(request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let content_type = content_type_for(path);
    // JSON answers (the API and the site's keys) are never pages: nothing loads from them.
    let csp = if path.starts_with("/api/") || path.starts_with("/.well-known/") {
        API_CONTENT_SECURITY_POLICY
    } else {
        CONTENT_SECURITY_POLICY
    };
    let mut response = next.run(request).await;
    let is_file = response.status().is_success() || response.status() == StatusCode::NOT_MODIFIED;
    let headers = response.headers_mut();
    if let Some(content_type) = content_type
        && is_file
    {
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    let fixed: [(HeaderName, &'static str); 7] = [
        (HeaderName::from_static("origin-agent-cluster"), "?1"),
        (header::CONTENT_SECURITY_POLICY, csp),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (
            HeaderName::from_static("permissions-policy"),
            PERMISSIONS_POLICY,
        ),
        (header::CACHE_CONTROL, "no-store"),
        (header::REFERRER_POLICY, "no-referrer"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// The MIME types pinned rather than left to guessing.
fn content_type_for(path: &str) -> Option<&'static str> {
    let extension = Path::new(path).extension()?.to_str()?;
    match extension {
        "wasm" => Some("application/wasm"),
        "js" | "mjs" => Some("text/javascript"),
        _ => None,
    }
}
