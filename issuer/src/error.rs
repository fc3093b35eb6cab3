//! The crate's one error type, and how each refusal looks on the wire.
//!
//! Every HTTP error is `{ "error": code, "message": sentence }`. Codes and sentences are fixed
//! strings: a request's bytes are never echoed back, and anything that is not the client's fault
//! is answered as `internal` without details.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use tacit_service::error::Operational;

/// Everything that can go wrong in the issuer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The body does not match the schema (bad JSON, a wrong type, an unknown or missing field).
    #[error(
        "the body must be {{\"code\" or \"refresh_token\", \"nonce\", \"holder_keys\": \
         [{{\"jwk\", \"proof\"}}, …]}} with no other fields"
    )]
    InvalidRequest,

    /// Both or neither of `code` and `refresh_token`.
    #[error("send exactly one of code (first batch) and refresh_token (later batches)")]
    CodeOrRefreshToken,

    #[error("holder_keys must hold between 1 and 20 keys")]
    BatchSize,

    #[error("each holder key may appear only once in a batch")]
    DuplicateHolderKey,

    #[error("holder key {index} is not a P-256 public JWK")]
    BadHolderKey { index: usize },

    #[error(
        "the proof of possession for holder key {index} does not verify over this issuer and nonce"
    )]
    BadProof { index: usize },

    /// The nonce is unknown, already used or expired.
    #[error("the nonce is unknown, already used or expired; fetch a fresh one from /v1/nonce")]
    NonceRefused,

    /// The enrolment code is unknown, used or expired.
    #[error("the enrolment code is not valid: it may be mistyped, already used or expired")]
    CodeRefused,

    /// The refresh token is unknown, used or expired.
    #[error(
        "the refresh token is not valid: it may be already used or expired; enrol again with a new code"
    )]
    RefreshRefused,

    /// The OpenID4VCI access token is unknown, used or expired.
    #[error(
        "the access token is not valid: it may be already used or expired; ask the token endpoint again"
    )]
    AccessTokenRefused,

    /// The code or refresh token belongs to a refresh chain the issuer revoked
    /// (`tacit-issuer revoke`).
    #[error(
        "the issuer has revoked this person's credentials: this refresh token or enrolment code \
         no longer works; ask the issuer for a new enrolment code"
    )]
    Revoked,

    /// `tacit-issuer revoke`: nobody on record has this id or name.
    #[error("nobody on record has this id or name")]
    UnknownPerson,

    /// `tacit-issuer revoke`: several people on record have this name.
    #[error("several people on record have this name; give the person's id instead")]
    AmbiguousPerson,

    /// This issuer holds no record of the kind it vouches for about this person.
    #[error("this issuer holds no record it could vouch for about this person")]
    NoRecord,

    /// Refused before a handler ran, a body that is not JSON or cannot be read, a key file, the
    /// socket, a file operation, the random number generator, the configuration or the database
    /// (answered as `tacit-service` decides).
    #[error(transparent)]
    Operational(#[from] Operational),

    /// A stored record cannot become a credential (the reason is a fixed sentence).
    #[error("a stored record is unusable: {0}")]
    Record(#[from] crate::predicates::PredicateError),

    /// The credential could not be encoded.
    #[error("the credential could not be issued: {0}")]
    Issue(String),
}

impl Error {
    /// The answer to a request [`tacit_protocol::issuance::check_request`] refused.
    pub fn from_request(error: tacit_protocol::issuance::RequestError) -> Self {
        use tacit_protocol::issuance::RequestError as R;
        match error {
            R::CodeOrRefreshToken => Error::CodeOrRefreshToken,
            R::CodeRefused => Error::CodeRefused,
            R::RefreshRefused => Error::RefreshRefused,
            R::BatchSize => Error::BatchSize,
            R::NonceRefused => Error::NonceRefused,
            R::DuplicateHolderKey => Error::DuplicateHolderKey,
            R::BadHolderKey { index } => Error::BadHolderKey { index },
            R::BadProof { index } => Error::BadProof { index },
        }
    }

    /// The HTTP status and the stable code a client can match on.
    pub fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            Error::InvalidRequest => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"),
            Error::CodeOrRefreshToken => {
                (StatusCode::UNPROCESSABLE_ENTITY, "code_or_refresh_token")
            }
            Error::BatchSize => (StatusCode::UNPROCESSABLE_ENTITY, "batch_size"),
            Error::DuplicateHolderKey => (StatusCode::UNPROCESSABLE_ENTITY, "duplicate_holder_key"),
            Error::BadHolderKey { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "bad_holder_key"),
            Error::BadProof { .. } => (StatusCode::UNAUTHORIZED, "bad_proof"),
            Error::NonceRefused => (StatusCode::UNAUTHORIZED, "nonce_refused"),
            Error::CodeRefused => (StatusCode::FORBIDDEN, "code_refused"),
            Error::RefreshRefused => (StatusCode::FORBIDDEN, "refresh_refused"),
            Error::AccessTokenRefused => (StatusCode::UNAUTHORIZED, "invalid_token"),
            Error::Revoked => (StatusCode::FORBIDDEN, "revoked"),
            Error::UnknownPerson => (StatusCode::NOT_FOUND, "unknown_person"),
            Error::AmbiguousPerson => (StatusCode::CONFLICT, "ambiguous_person"),
            Error::NoRecord => (StatusCode::CONFLICT, "no_record"),
            _ => self.shared_status_and_code(),
        }
    }
}

tacit_service::operational_from!(Error);

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        self.json_response("issuer")
    }
}
