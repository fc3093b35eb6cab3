//! What an issuer decides about a credential request before it touches its database, and how
//! long what it hands out lives. The issuer service reads the body, calls [`check_request`],
//! then redeems the nonce and the grant ([`crate::single_use`]) and signs.
//!
//! Rules, in the order [`check_request`] applies them (the first broken one is the answer):
//! 1. exactly one grant: a one-time enrolment code (the first batch) or the refresh token handed
//!    out with the previous batch; a code must read as an [`EnrolmentCode`], a refresh token must
//!    be [`token_shaped`];
//! 2. 1 to [`MAX_BATCH`] holder keys;
//! 3. the nonce is [`token_shaped`] (an issuer's nonces and refresh tokens are 32 random bytes,
//!    base64url);
//! 4. every holder key is a P-256 JWK, and no key is asked for twice (one credential per key,
//!    so presentations from one batch cannot be linked by a shared key);
//! 5. every key's proof of possession verifies over this issuer's origin and the nonce
//!    ([`verify_pop`]).
//!
//! Which predicates a credential carries, and until when it is valid: [`claims`].
//!
//! Lifetimes: a nonce [`NONCE_VALIDITY_MS`], a refresh token [`REFRESH_VALIDITY_MS`], an
//! enrolment code [`DEFAULT_CODE_VALIDITY_MS`] unless the operator says otherwise (never longer
//! than [`crate::request_auth::MAX_CODE_VALIDITY`]).

pub mod claims;

use crate::issuer_pop::{PopError, verify_pop};
pub use crate::limits::MAX_BATCH;
use crate::request_auth::{EnrolmentCode, InstallKey, Jwk, MAX_CODE_VALIDITY};

/// How long an issuer's nonce (`GET /v1/nonce`) stays usable: five minutes.
pub const NONCE_VALIDITY_MS: i64 = 5 * 60 * 1000;

/// How long a refresh token stays usable: 180 days.
pub const REFRESH_VALIDITY_MS: i64 = 180 * 24 * 3600 * 1000;

/// How long an enrolment code an issuer makes stays usable unless the operator says otherwise:
/// 30 days, the longest any enrolment code may live.
pub const DEFAULT_CODE_VALIDITY_MS: i64 = 30 * 24 * 3600 * 1000;

const _: () = assert!(DEFAULT_CODE_VALIDITY_MS as u128 <= MAX_CODE_VALIDITY.as_millis());

/// Length of an issuer's random tokens (nonces, refresh tokens): 32 bytes as base64url.
pub const TOKEN_LEN: usize = 43;

/// Whether `text` could be one of an issuer's random tokens: [`TOKEN_LEN`] base64url characters.
pub fn token_shaped(text: &str) -> bool {
    text.len() == TOKEN_LEN
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Why a credential request is refused before the database is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("send exactly one of code and refresh_token")]
    CodeOrRefreshToken,
    #[error("the enrolment code is not valid")]
    CodeRefused,
    #[error("the refresh token is not valid")]
    RefreshRefused,
    #[error("ask for 1 to {MAX_BATCH} holder keys")]
    BatchSize,
    #[error("the nonce is not valid")]
    NonceRefused,
    #[error("a holder key is listed twice")]
    DuplicateHolderKey,
    #[error("holder key {index} is not a P-256 JWK")]
    BadHolderKey { index: usize },
    #[error("the proof for holder key {index} does not verify")]
    BadProof { index: usize },
}

/// What a checked request redeems.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckedGrant<'a> {
    /// A one-time enrolment code, read.
    Code(EnrolmentCode),
    /// A refresh token, token-shaped.
    RefreshToken(&'a str),
}

/// A request that passed [`check_request`]: its grant and its holder keys, each proven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedRequest<'a> {
    pub grant: CheckedGrant<'a>,
    /// The holder keys in request order, as the credentials will carry them (`cnf.jwk`).
    pub holder_jwks: Vec<Jwk>,
}

/// One holder key and its proof of possession, as the request carries them.
#[derive(Debug, Clone, Copy)]
pub struct Holder<'a> {
    pub jwk: &'a Jwk,
    pub proof: &'a str,
}

/// The checks of a credential request to the issuer at `issuer_origin` (see the module
/// documentation for the rules and their order).
pub fn check_request<'a>(
    code: Option<&str>,
    refresh_token: Option<&'a str>,
    nonce: &str,
    holders: &[Holder<'_>],
    issuer_origin: &str,
) -> Result<CheckedRequest<'a>, RequestError> {
    let grant = match (code, refresh_token) {
        (Some(code), None) => {
            CheckedGrant::Code(EnrolmentCode::parse(code).map_err(|_| RequestError::CodeRefused)?)
        }
        (None, Some(token)) if token_shaped(token) => CheckedGrant::RefreshToken(token),
        (None, Some(_)) => return Err(RequestError::RefreshRefused),
        _ => return Err(RequestError::CodeOrRefreshToken),
    };
    if holders.is_empty() || holders.len() > MAX_BATCH {
        return Err(RequestError::BatchSize);
    }
    if !token_shaped(nonce) {
        return Err(RequestError::NonceRefused);
    }
    let mut seen = Vec::with_capacity(holders.len());
    for (index, holder) in holders.iter().enumerate() {
        let id = InstallKey::from_jwk(holder.jwk)
            .map_err(|_| RequestError::BadHolderKey { index })?
            .id();
        if seen.contains(&id) {
            return Err(RequestError::DuplicateHolderKey);
        }
        seen.push(id);
    }
    let holder_jwks = holders
        .iter()
        .enumerate()
        .map(|(index, holder)| {
            verify_pop(holder.jwk, holder.proof, issuer_origin, nonce)
                .map(|key| key.to_jwk())
                .map_err(|e| match e {
                    PopError::BadKey => RequestError::BadHolderKey { index },
                    PopError::Malformed | PopError::BadSignature => {
                        RequestError::BadProof { index }
                    }
                })
        })
        .collect::<Result<_, _>>()?;
    Ok(CheckedRequest { grant, holder_jwks })
}
