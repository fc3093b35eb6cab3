//! The crate's one error type, and how each refusal looks on the wire.
//!
//! Every HTTP error is `{ "error": code, "message": sentence }`. Codes and sentences are fixed
//! strings (or numbers such as an entry index): a request's bytes are never echoed back, and
//! anything that is not the client's fault is answered as `internal` without details.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tacit_service::error::Operational;

/// Everything that can go wrong in the signer and the verifier CLI.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The body is not a receipt payload: bad JSON, a wrong type, or an unknown field.
    #[error(
        "the body is not a valid receipt payload: it must match the schema exactly, \
         with no unknown fields"
    )]
    InvalidPayload,

    /// The payload parsed but is not well-formed (version, origins, window); the reason is
    /// wallet-core's fixed sentence.
    #[error("the receipt payload is malformed: {0}")]
    InvalidReceipt(&'static str),

    /// The payload's comparison log does not chain (or does not end at `log_head`).
    #[error("the comparison log's hash chain is broken at entry {index}")]
    ChainBroken { index: usize },

    /// The payload's window has already ended by the signer's clock.
    #[error("the receipt's validity window has already ended")]
    Expired,

    /// `issued_at` is more than two minutes away from the signer's clock.
    #[error("issued_at must be within 2 minutes of the signer's clock")]
    IssuedAtOutOfRange,

    /// A browser origin that is not a configured wallet origin asked for a signature.
    #[error("this origin may not ask the signer for signatures")]
    OriginNotAllowed,

    /// A signing or enrolment request without the install signature headers.
    #[error(
        "this request must be signed by an enrolled wallet install (tacit-install, \
         tacit-timestamp and tacit-signature headers)"
    )]
    Unauthenticated,

    /// The signature headers are malformed, or the signature does not verify.
    #[error("the request signature is malformed or does not verify")]
    BadRequestSignature,

    /// The install is not enrolled, or was revoked.
    #[error("this wallet install is not enrolled with this signer, or was revoked")]
    UnknownInstall,

    /// The request's timestamp is more than two minutes from the signer's clock.
    #[error("the request's timestamp must be within 2 minutes of the signer's clock")]
    StaleRequest,

    /// This exact signed request was already received.
    #[error("this signed request was already received; sign each request afresh")]
    ReplayedRequest,

    /// An enrolment whose `tacit-install` is not the thumbprint of the key it registers.
    #[error("tacit-install must be the JWK thumbprint of the public key being enrolled")]
    InstallMismatch,

    /// The enrolment code is unknown, used or expired.
    #[error("the enrolment code is not valid: it may be mistyped, already used or expired")]
    EnrolmentRefused,

    /// The key being enrolled is already known to this signer.
    #[error("this install key is already enrolled (or was revoked); make a new key to enrol again")]
    AlreadyEnrolled,

    /// The enrolment body is not `{ "code": …, "public_key": <P-256 JWK> }`.
    #[error(
        "the body must be {{\"code\": \"…\", \"public_key\": <P-256 JWK>}} with no other fields"
    )]
    InvalidEnrolment,

    /// Refused before a handler ran, a body that is not JSON or cannot be read, a key file, the
    /// socket, a file operation, the random number generator, the configuration or the database
    /// (answered as `tacit-service` decides).
    #[error(transparent)]
    Operational(#[from] Operational),

    /// `tacit-verify` could not load the key set.
    #[error("could not load the key set: {0}")]
    Keys(String),

    /// `tacit-verify` refused the receipt; wallet-core names the reason.
    #[error(transparent)]
    Verify(wallet_core::VerifyError),
}

impl Error {
    /// Maps wallet-core's refusal of a payload (`ReceiptPayload::check_signable`) to the
    /// signer's answer.
    pub fn from_structure(error: wallet_core::SignableError) -> Self {
        use wallet_core::{ChainBroken, MalformedReceipt, SignableError as E};
        match error {
            E::Expired => Error::Expired,
            E::IssuedAtOutOfRange => Error::IssuedAtOutOfRange,
            E::ChainBroken(ChainBroken { index }) => Error::ChainBroken { index },
            E::Malformed(MalformedReceipt(reason)) => Error::InvalidReceipt(reason),
        }
    }

    /// Maps a refused request signature to the signer's answer.
    pub fn from_auth(error: tacit_protocol::request_auth::AuthError) -> Self {
        use tacit_protocol::request_auth::AuthError;
        match error {
            AuthError::Missing => Error::Unauthenticated,
            AuthError::Stale => Error::StaleRequest,
            AuthError::WrongKey => Error::UnknownInstall,
            AuthError::Malformed | AuthError::BadSignature => Error::BadRequestSignature,
            AuthError::BadKey | AuthError::BadCode => Error::InvalidEnrolment,
        }
    }

    /// The HTTP status and the stable code a client can match on.
    pub fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            Error::InvalidPayload => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_payload"),
            Error::InvalidReceipt(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_receipt"),
            Error::ChainBroken { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "chain_broken"),
            Error::Expired => (StatusCode::UNPROCESSABLE_ENTITY, "expired"),
            Error::IssuedAtOutOfRange => {
                (StatusCode::UNPROCESSABLE_ENTITY, "issued_at_out_of_range")
            }
            Error::OriginNotAllowed => (StatusCode::FORBIDDEN, "origin_not_allowed"),
            Error::Unauthenticated => (StatusCode::UNAUTHORIZED, "unauthenticated"),
            Error::BadRequestSignature => (StatusCode::UNAUTHORIZED, "bad_request_signature"),
            Error::UnknownInstall => (StatusCode::UNAUTHORIZED, "unknown_install"),
            Error::StaleRequest => (StatusCode::UNAUTHORIZED, "stale_request"),
            Error::ReplayedRequest => (StatusCode::UNAUTHORIZED, "replayed_request"),
            Error::InstallMismatch => (StatusCode::UNAUTHORIZED, "install_mismatch"),
            Error::EnrolmentRefused => (StatusCode::FORBIDDEN, "enrolment_refused"),
            Error::AlreadyEnrolled => (StatusCode::CONFLICT, "already_enrolled"),
            Error::InvalidEnrolment => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_enrolment"),
            _ => self.shared_status_and_code(),
        }
    }
}

tacit_service::operational_from!(Error);

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let mut response = self.json_response("signer");
        if response.status() == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("TacitInstall realm=\"tacit-signer\""),
            );
        }
        response
    }
}
