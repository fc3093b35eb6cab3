//! SD-JWT VC credentials and presentations (IETF SD-JWT, RFC 9901, in the SD-JWT VC format),
//! ES256 on P-256 only.
//!
//! # Why a module of our own
//!
//! The Rust SD-JWT crates do not fit: `sd-jwt-rs` 0.7 implements draft 7 (no `sd_hash` in the
//! form RFC 9901 fixed, legacy `typ`), pulls `jsonwebtoken` (ring: does not build for
//! `wasm32-unknown-unknown` without extra glue) and signs the key-binding JWT itself, which needs
//! the holder's private key as bytes — Tacit's holder keys are non-extractable WebCrypto keys. So
//! this is a small module on `p256` (RustCrypto), pure like the rest of the crate: no clock (every
//! time is an argument), no randomness (salts are arguments; `p256` ES256 signing is RFC 6979
//! deterministic), no I/O, builds for wasm32. It is checked against an independent
//! implementation (`@sd-jwt/sd-jwt-vc`, see `interop/` and `tests/sd_jwt_interop.rs`) and fuzzed
//! (`fuzz/fuzz_targets/sd_jwt_parse.rs`).
//!
//! # Format
//!
//! - Issuer-signed JWT: header `{"alg":"ES256","kid":…,"typ":"dc+sd-jwt"}`; payload with `_sd`
//!   (sorted base64url SHA-256 digests of the disclosures), `_sd_alg` = `sha-256`, `iss`, `vct`,
//!   `iat`, `exp` (seconds), `cnf.jwk` (the holder's P-256 key) and the always-visible `plain`
//!   claims. Members are written in lexical order (serde_json's map).
//! - A [`Disclosure`] is the base64url (no padding) of the compact JSON array
//!   `[salt, name, value]`; its digest is the base64url SHA-256 of that ASCII text. Only
//!   top-level object properties are selectively disclosable (no nested `_sd`, no array
//!   elements); issuers write predicates as flat names (`age_equal_or_over_18`,
//!   `income_below_30000`). A credential with nested `_sd` or `...` is refused.
//! - Credential (as issued): `<issuer-jwt>~<d1>~…~<dn>~`.
//! - Presentation: `<issuer-jwt>~<kept disclosures>~…~<kb-jwt>` where the KB-JWT has header
//!   `{"alg":"ES256","typ":"kb+jwt"}` and payload `{"aud","iat","nonce","sd_hash"}`, `sd_hash`
//!   being the base64url SHA-256 of everything before the KB-JWT (up to and including the last
//!   `~`), signed by the `cnf.jwk` key.
//!
//! # API
//!
//! - Issuer: [`issue`] with [`IssuedClaims`]; publishes [`IssuerMetadata`] (its [`Jwks`]) at
//!   `/.well-known/jwt-vc-issuer`.
//! - Wallet: [`Credential::parse`], [`Credential::verify_issuer`], then per presentation
//!   [`presentation_without_kb`] → [`kb_jwt_signing_input`] → WebCrypto signs those UTF-8 bytes
//!   (ECDSA P-256 SHA-256, 64-byte P1363 result) → [`finish_presentation`]. Natively,
//!   [`present`] does the three steps with a `p256` key.
//! - Verifier: [`verify_presentation`] against pinned [`TrustedIssuer`]s (never a key named by a
//!   URL inside the token); every refusal is a distinct [`SdJwtError`] with a [`SdJwtError::code`].
//!
//! Strictness: the whole text is capped at [`MAX_SD_JWT_LEN`] bytes, at most
//! [`MAX_DISCLOSURES`] disclosures of at most [`MAX_DISCLOSURE_LEN`] bytes each; JSON with a
//! duplicate member name is refused; headers carry exactly the members above; every
//! disclosure's digest must appear in `_sd`, none twice, and no disclosure may name a reserved
//! claim ([`RESERVED_NAMES`]) or a claim already in the payload.

use crate::status_list::StatusRef;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use wallet_core::Timestamp;

use crate::request_auth::Jwk;

mod jwks;
mod strict_json;

pub use jwks::{
    IssuerKey, IssuerKeysError, IssuerMetadata, Jwks, MAX_JWKS_BYTES, MAX_JWKS_KEYS, MAX_KID_LEN,
};

/// The issuer JWT's `typ`.
pub const TYP_SD_JWT_VC: &str = "dc+sd-jwt";
/// The key-binding JWT's `typ`.
pub const TYP_KB_JWT: &str = "kb+jwt";
/// The only `_sd_alg`.
pub const SD_ALG: &str = "sha-256";
/// The path of the issuer metadata document.
pub const WELL_KNOWN_PATH: &str = "/.well-known/jwt-vc-issuer";
/// The longest credential or presentation accepted (bytes).
pub const MAX_SD_JWT_LEN: usize = 32 * 1024;
/// The most disclosures one credential may carry.
pub const MAX_DISCLOSURES: usize = 128;
/// The longest encoded disclosure accepted (bytes).
pub const MAX_DISCLOSURE_LEN: usize = 1024;
/// How far in the future an issuer `iat` or a KB-JWT `iat` may be (clock skew).
pub const MAX_FUTURE_SKEW_MS: i64 = 60_000;
/// The default largest age of a KB-JWT a verifier accepts.
pub const DEFAULT_MAX_KB_AGE_MS: i64 = 5 * 60_000;
/// Claim names that are never selectively disclosable and never in `plain`.
pub const RESERVED_NAMES: &[&str] = &[
    "_sd",
    "_sd_alg",
    "...",
    "iss",
    "vct",
    "vct#integrity",
    "iat",
    "exp",
    "nbf",
    "cnf",
    "status",
];

/// Why a credential or presentation was refused (one variant per failure; see [`Self::code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SdJwtError {
    #[error("the SD-JWT is too large")]
    TooLarge,
    #[error("the SD-JWT is malformed")]
    Malformed,
    #[error("the JWT header is not the expected ES256 header")]
    BadHeader,
    #[error("the SD-JWT's digest algorithm is not sha-256")]
    UnsupportedSdAlg,
    #[error("the holder key (cnf.jwk) is not a P-256 key")]
    BadHolderKey,
    #[error("a disclosure or claim uses a reserved or already present name")]
    ReservedName,
    #[error("a disclosure is malformed")]
    MalformedDisclosure,
    #[error("a disclosure's digest is not in the credential")]
    UnknownDisclosure,
    #[error("a disclosure appears twice")]
    DuplicateDisclosure,
    #[error("a credential was expected but a presentation with key binding was given")]
    UnexpectedKeyBinding,
    #[error("the issuer is not trusted")]
    UnknownIssuer,
    #[error("the issuer key id is unknown")]
    UnknownKey,
    #[error("the issuer signature does not verify")]
    BadIssuerSignature,
    #[error("the credential has expired")]
    Expired,
    #[error("the credential was issued in the future")]
    IssuedInFuture,
    #[error("the presentation has no key-binding JWT")]
    MissingKeyBinding,
    #[error("the key-binding JWT is malformed")]
    MalformedKeyBinding,
    #[error("the key-binding signature does not verify with the holder key")]
    BadKeyBindingSignature,
    #[error("the key-binding JWT does not cover this presentation")]
    BadSdHash,
    #[error("the presentation is for another audience")]
    WrongAudience,
    #[error("the presentation answers another nonce")]
    WrongNonce,
    #[error("the key-binding JWT is too old")]
    StaleKeyBinding,
    #[error("the key-binding JWT is dated in the future")]
    KeyBindingInFuture,
    #[error("the credential has no such disclosable claim")]
    NotDisclosable,
    #[error("the claims cannot be issued as given")]
    BadIssuance,
    #[error("the key set is malformed")]
    BadJwks,
}

impl SdJwtError {
    /// A stable machine-readable code for this refusal.
    pub const fn code(self) -> &'static str {
        match self {
            Self::TooLarge => "too_large",
            Self::Malformed => "malformed",
            Self::BadHeader => "bad_header",
            Self::UnsupportedSdAlg => "unsupported_sd_alg",
            Self::BadHolderKey => "bad_holder_key",
            Self::ReservedName => "reserved_claim_name",
            Self::MalformedDisclosure => "malformed_disclosure",
            Self::UnknownDisclosure => "unknown_disclosure",
            Self::DuplicateDisclosure => "duplicate_disclosure",
            Self::UnexpectedKeyBinding => "unexpected_key_binding",
            Self::UnknownIssuer => "unknown_issuer",
            Self::UnknownKey => "unknown_key",
            Self::BadIssuerSignature => "bad_issuer_signature",
            Self::Expired => "expired",
            Self::IssuedInFuture => "issued_in_future",
            Self::MissingKeyBinding => "missing_key_binding",
            Self::MalformedKeyBinding => "malformed_key_binding",
            Self::BadKeyBindingSignature => "bad_key_binding_signature",
            Self::BadSdHash => "bad_sd_hash",
            Self::WrongAudience => "wrong_audience",
            Self::WrongNonce => "wrong_nonce",
            Self::StaleKeyBinding => "stale_key_binding",
            Self::KeyBindingInFuture => "key_binding_in_future",
            Self::NotDisclosable => "not_disclosable",
            Self::BadIssuance => "bad_issuance",
            Self::BadJwks => "bad_jwks",
        }
    }
}

fn b64(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn sha256_b64(text: &str) -> String {
    b64(Sha256::digest(text.as_bytes()))
}

/// A P-256 JWK to a verifying key (on the curve, not the identity).
pub(crate) fn jwk_to_key(jwk: &Jwk) -> Result<VerifyingKey, SdJwtError> {
    if jwk.kty != "EC" || jwk.crv != "P-256" {
        return Err(SdJwtError::BadHolderKey);
    }
    let coordinate = |text: &str| -> Result<[u8; 32], SdJwtError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| SdJwtError::BadHolderKey)?;
        bytes.try_into().map_err(|_| SdJwtError::BadHolderKey)
    };
    let mut sec1 = [4u8; 65];
    sec1[1..33].copy_from_slice(&coordinate(&jwk.x)?);
    sec1[33..].copy_from_slice(&coordinate(&jwk.y)?);
    VerifyingKey::from_sec1_bytes(&sec1).map_err(|_| SdJwtError::BadHolderKey)
}

/// A verifying key as a JWK (`kty`, `crv`, `x`, `y`).
pub(crate) fn key_to_jwk(key: &VerifyingKey) -> Jwk {
    let point = key.to_sec1_point(false);
    let bytes = point.as_bytes();
    let (x, y) = bytes.get(1..33).zip(bytes.get(33..65)).unwrap_or_default();
    Jwk {
        kty: "EC".to_owned(),
        crv: "P-256".to_owned(),
        x: b64(x),
        y: b64(y),
    }
}

fn seconds(t: Timestamp) -> i64 {
    t.millis().div_euclid(1000)
}

fn from_seconds(s: i64) -> Option<Timestamp> {
    s.checked_mul(1000).map(Timestamp::from_millis)
}

// ---------------------------------------------------------------------------------------------
// Disclosures

/// One selectively disclosable claim: `[salt, name, value]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Disclosure {
    /// The salt as written in the disclosure (base64url of 16 random bytes when we issue).
    pub salt: String,
    pub name: String,
    pub value: Value,
}

impl Disclosure {
    /// A disclosure with the salt written as base64url (no padding) of `salt`.
    pub fn new(salt: &[u8; 16], name: &str, value: Value) -> Self {
        Self {
            salt: b64(salt),
            name: name.to_owned(),
            value,
        }
    }

    /// base64url (no padding) of the compact JSON array `[salt, name, value]`.
    pub fn encode(&self) -> String {
        let array = Value::Array(vec![
            Value::String(self.salt.clone()),
            Value::String(self.name.clone()),
            self.value.clone(),
        ]);
        b64(serde_json::to_vec(&array).unwrap_or_default())
    }

    /// base64url SHA-256 of this disclosure's [`Self::encode`]d text.
    pub fn digest(&self) -> String {
        Self::digest_of(&self.encode())
    }

    /// base64url SHA-256 of an encoded disclosure, exactly as written.
    pub fn digest_of(encoded: &str) -> String {
        sha256_b64(encoded)
    }

    /// Decodes one encoded disclosure (object-property form only).
    pub fn decode(encoded: &str) -> Result<Self, SdJwtError> {
        if encoded.is_empty() || encoded.len() > MAX_DISCLOSURE_LEN {
            return Err(SdJwtError::MalformedDisclosure);
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(encoded)
            .map_err(|_| SdJwtError::MalformedDisclosure)?;
        let Some(Value::Array(mut items)) = strict_json::parse(&bytes) else {
            return Err(SdJwtError::MalformedDisclosure);
        };
        if items.len() != 3 {
            return Err(SdJwtError::MalformedDisclosure);
        }
        let value = items.pop().unwrap_or_default();
        let (Some(Value::String(name)), Some(Value::String(salt))) = (items.pop(), items.pop())
        else {
            return Err(SdJwtError::MalformedDisclosure);
        };
        if salt.is_empty() || salt.len() > 128 || name.is_empty() || name.len() > 128 {
            return Err(SdJwtError::MalformedDisclosure);
        }
        if RESERVED_NAMES.contains(&name.as_str()) {
            return Err(SdJwtError::ReservedName);
        }
        if contains_sd_markers(&value) {
            return Err(SdJwtError::MalformedDisclosure);
        }
        Ok(Self { salt, name, value })
    }
}

/// Whether a value holds nested selective-disclosure markers (`_sd` members or `{"...": …}`
/// array elements), which this module does not support.
fn contains_sd_markers(v: &Value) -> bool {
    match v {
        Value::Object(o) => {
            o.contains_key("_sd") || o.contains_key("...") || o.values().any(contains_sd_markers)
        }
        Value::Array(a) => a.iter().any(contains_sd_markers),
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Issuance

/// What an issuer states in every credential of a batch (besides the disclosable claims).
#[derive(Debug, Clone, PartialEq)]
pub struct IssuedClaims {
    /// The issuer identifier (its origin; the metadata lives at `iss` + [`WELL_KNOWN_PATH`]).
    pub iss: String,
    /// The credential type.
    pub vct: String,
    /// Issued at (written in whole seconds, rounded down).
    pub iat: Timestamp,
    /// Expires at (written in whole seconds, rounded down).
    pub exp: Timestamp,
    /// The holder key this credential is bound to (`cnf.jwk`).
    pub cnf_jwk: Jwk,
    /// Always-visible claims (none of [`RESERVED_NAMES`]).
    pub plain: Map<String, Value>,
}

/// Issues one SD-JWT VC: `<issuer-jwt>~<d1>~…~<dn>~`, the disclosures in the order given, the
/// `_sd` digests sorted. `salts[i]` salts `disclosable[i]`; salts must be distinct.
///
/// Refused ([`SdJwtError::BadIssuance`]) when the counts differ, a name repeats or is reserved or
/// also plain, a salt repeats, `exp` is not after `iat`, the `kid` is malformed or the result would
/// not parse back within the limits; [`SdJwtError::BadHolderKey`] for a bad `cnf_jwk`.
pub fn issue(
    issuer_key: &SigningKey,
    kid: &str,
    claims: &IssuedClaims,
    disclosable: &[(String, Value)],
    salts: &[[u8; 16]],
) -> Result<String, SdJwtError> {
    issue_with_status(issuer_key, kid, claims, None, disclosable, salts)
}

/// [`issue`], with the credential's entry in its issuer's status list (`status`, always
/// visible: see [`crate::status_list`]).
pub fn issue_with_status(
    issuer_key: &SigningKey,
    kid: &str,
    claims: &IssuedClaims,
    status: Option<&StatusRef>,
    disclosable: &[(String, Value)],
    salts: &[[u8; 16]],
) -> Result<String, SdJwtError> {
    jwk_to_key(&claims.cnf_jwk)?;
    let kid_ok =
        !kid.is_empty() && kid.len() <= MAX_KID_LEN && kid.bytes().all(|b| b.is_ascii_graphic());
    if !kid_ok
        || salts.len() != disclosable.len()
        || disclosable.len() > MAX_DISCLOSURES
        || claims.iss.is_empty()
        || claims.vct.is_empty()
        || seconds(claims.exp) <= seconds(claims.iat)
    {
        return Err(SdJwtError::BadIssuance);
    }
    for (i, (name, value)) in disclosable.iter().enumerate() {
        if RESERVED_NAMES.contains(&name.as_str())
            || claims.plain.contains_key(name)
            || disclosable.iter().skip(i + 1).any(|(n, _)| n == name)
            || salts.iter().skip(i + 1).any(|s| s == &salts[i])
            || contains_sd_markers(value)
        {
            return Err(SdJwtError::BadIssuance);
        }
    }
    if claims
        .plain
        .iter()
        .any(|(k, v)| RESERVED_NAMES.contains(&k.as_str()) || contains_sd_markers(v))
    {
        return Err(SdJwtError::BadIssuance);
    }

    let encoded: Vec<String> = disclosable
        .iter()
        .zip(salts)
        .map(|((name, value), salt)| Disclosure::new(salt, name, value.clone()).encode())
        .collect();
    let mut digests: Vec<Value> = encoded
        .iter()
        .map(|e| Value::String(Disclosure::digest_of(e)))
        .collect();
    digests.sort_by(|a, b| a.as_str().cmp(&b.as_str()));

    let mut payload = claims.plain.clone();
    payload.insert("iss".into(), Value::String(claims.iss.clone()));
    payload.insert("vct".into(), Value::String(claims.vct.clone()));
    payload.insert("iat".into(), Value::from(seconds(claims.iat)));
    payload.insert("exp".into(), Value::from(seconds(claims.exp)));
    let mut jwk = Map::new();
    jwk.insert("kty".into(), Value::String(claims.cnf_jwk.kty.clone()));
    jwk.insert("crv".into(), Value::String(claims.cnf_jwk.crv.clone()));
    jwk.insert("x".into(), Value::String(claims.cnf_jwk.x.clone()));
    jwk.insert("y".into(), Value::String(claims.cnf_jwk.y.clone()));
    let mut cnf = Map::new();
    cnf.insert("jwk".into(), Value::Object(jwk));
    payload.insert("cnf".into(), Value::Object(cnf));
    payload.insert("_sd_alg".into(), Value::String(SD_ALG.into()));
    if let Some(status) = status {
        payload.insert("status".into(), status.claim());
    }
    if !digests.is_empty() {
        payload.insert("_sd".into(), Value::Array(digests));
    }

    let mut header = Map::new();
    header.insert("alg".into(), Value::String("ES256".into()));
    header.insert("kid".into(), Value::String(kid.into()));
    header.insert("typ".into(), Value::String(TYP_SD_JWT_VC.into()));

    let signing_input = format!(
        "{}.{}",
        b64(serde_json::to_vec(&header).map_err(|_| SdJwtError::BadIssuance)?),
        b64(serde_json::to_vec(&payload).map_err(|_| SdJwtError::BadIssuance)?)
    );
    let signature: Signature = issuer_key.sign(signing_input.as_bytes());
    let mut out = format!("{signing_input}.{}~", b64(signature.to_bytes()));
    for e in &encoded {
        out.push_str(e);
        out.push('~');
    }
    // What we issue must be what we accept.
    Credential::parse(&out).map_err(|_| SdJwtError::BadIssuance)?;
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Parsing

/// A parsed (not yet issuer-verified) SD-JWT VC as issued: issuer JWT plus all its disclosures.
#[derive(Debug, Clone, PartialEq)]
pub struct Credential {
    issuer_jwt: String,
    signing_input_len: usize,
    signature: Signature,
    kid: String,
    iss: String,
    vct: String,
    iat: Timestamp,
    exp: Timestamp,
    holder: Jwk,
    holder_key: VerifyingKey,
    status: Option<StatusRef>,
    plain: Map<String, Value>,
    encoded: Vec<String>,
    disclosures: Vec<Disclosure>,
}

/// A compact JWS taken apart: header, payload, signature, signing-input length.
type JwsParts = (Map<String, Value>, Map<String, Value>, Signature, usize);

/// Splits a compact JWS into (header JSON object, payload JSON object, signature, signing input
/// length). Any fault is `err`.
fn split_jws(jwt: &str, err: SdJwtError) -> Result<JwsParts, SdJwtError> {
    let mut parts = jwt.split('.');
    let (Some(h), Some(p), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(err);
    };
    let object = |part: &str| -> Result<Map<String, Value>, SdJwtError> {
        let bytes = URL_SAFE_NO_PAD.decode(part).map_err(|_| err)?;
        match strict_json::parse(&bytes) {
            Some(Value::Object(o)) => Ok(o),
            _ => Err(err),
        }
    };
    let header = object(h)?;
    let payload = object(p)?;
    let sig = URL_SAFE_NO_PAD.decode(s).map_err(|_| err)?;
    if sig.len() != 64 {
        return Err(err);
    }
    let signature = Signature::from_slice(&sig).map_err(|_| err)?;
    Ok((header, payload, signature, h.len() + 1 + p.len()))
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.remove(key) {
        Some(Value::String(s)) if !s.is_empty() && s.len() <= 2048 => Some(s),
        _ => None,
    }
}

fn take_seconds(map: &mut Map<String, Value>, key: &str) -> Option<Timestamp> {
    map.remove(key)?.as_i64().and_then(from_seconds)
}

impl Credential {
    /// Parses an SD-JWT VC as issued (`<issuer-jwt>~<d1>~…~<dn>~`, no key-binding JWT), strictly;
    /// see the module docs. The issuer signature is not checked here: call
    /// [`Self::verify_issuer`].
    pub fn parse(text: &str) -> Result<Self, SdJwtError> {
        if text.len() > MAX_SD_JWT_LEN {
            return Err(SdJwtError::TooLarge);
        }
        let Some(last) = text.rfind('~') else {
            return Err(SdJwtError::Malformed);
        };
        if last + 1 != text.len() {
            return Err(SdJwtError::UnexpectedKeyBinding);
        }
        Self::parse_sd_jwt(text)
    }

    /// Parses `<issuer-jwt>~<d1>~…~<dn>~` (ends with `~`; length already capped).
    fn parse_sd_jwt(text: &str) -> Result<Self, SdJwtError> {
        let body = text.strip_suffix('~').ok_or(SdJwtError::Malformed)?;
        let mut segments = body.split('~');
        let issuer_jwt = segments.next().ok_or(SdJwtError::Malformed)?;
        let (header, mut payload, signature, signing_input_len) =
            split_jws(issuer_jwt, SdJwtError::Malformed)?;

        // Header: exactly alg, typ, kid.
        let kid = match (
            header.get("alg").and_then(Value::as_str),
            header.get("typ").and_then(Value::as_str),
            header.get("kid").and_then(Value::as_str),
        ) {
            (Some("ES256"), Some(TYP_SD_JWT_VC), Some(kid)) if header.len() == 3 => kid.to_owned(),
            _ => return Err(SdJwtError::BadHeader),
        };
        if kid.is_empty() || kid.len() > MAX_KID_LEN || !kid.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(SdJwtError::BadHeader);
        }

        // Payload.
        if payload.remove("_sd_alg").as_ref().and_then(Value::as_str) != Some(SD_ALG) {
            return Err(SdJwtError::UnsupportedSdAlg);
        }
        let sd: Vec<String> = match payload.remove("_sd") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) if s.len() == 43 && URL_SAFE_NO_PAD.decode(&s).is_ok() => {
                        Ok(s)
                    }
                    _ => Err(SdJwtError::Malformed),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(SdJwtError::Malformed),
        };
        if sd.len() > MAX_DISCLOSURES * 2
            || sd.iter().enumerate().any(|(i, d)| sd[i + 1..].contains(d))
        {
            return Err(SdJwtError::Malformed);
        }
        let iss = take_string(&mut payload, "iss").ok_or(SdJwtError::Malformed)?;
        let vct = take_string(&mut payload, "vct").ok_or(SdJwtError::Malformed)?;
        let iat = take_seconds(&mut payload, "iat").ok_or(SdJwtError::Malformed)?;
        let exp = take_seconds(&mut payload, "exp").ok_or(SdJwtError::Malformed)?;
        let holder = match payload.remove("cnf") {
            Some(Value::Object(mut cnf)) if cnf.len() == 1 => {
                let jwk = cnf.remove("jwk").ok_or(SdJwtError::BadHolderKey)?;
                serde_json::from_value::<Jwk>(jwk).map_err(|_| SdJwtError::BadHolderKey)?
            }
            _ => return Err(SdJwtError::BadHolderKey),
        };
        let holder_key = jwk_to_key(&holder)?;
        // Its entry in the issuer's status list, if it has one: always visible, well-formed.
        let status = payload
            .remove("status")
            .map(|v| StatusRef::from_claim(&v))
            .transpose()
            .map_err(|_| SdJwtError::Malformed)?;
        if payload
            .iter()
            .any(|(k, v)| RESERVED_NAMES.contains(&k.as_str()) || contains_sd_markers(v))
        {
            return Err(SdJwtError::Malformed);
        }

        // Disclosures.
        let mut encoded = Vec::new();
        let mut disclosures: Vec<Disclosure> = Vec::new();
        let mut seen_digests: Vec<String> = Vec::new();
        for segment in segments {
            if encoded.len() == MAX_DISCLOSURES {
                return Err(SdJwtError::TooLarge);
            }
            let disclosure = Disclosure::decode(segment)?;
            let digest = Disclosure::digest_of(segment);
            if seen_digests.contains(&digest) {
                return Err(SdJwtError::DuplicateDisclosure);
            }
            if !sd.contains(&digest) {
                return Err(SdJwtError::UnknownDisclosure);
            }
            if payload.contains_key(&disclosure.name) {
                return Err(SdJwtError::ReservedName);
            }
            if disclosures.iter().any(|d| d.name == disclosure.name) {
                return Err(SdJwtError::DuplicateDisclosure);
            }
            seen_digests.push(digest);
            encoded.push(segment.to_owned());
            disclosures.push(disclosure);
        }

        Ok(Self {
            issuer_jwt: issuer_jwt.to_owned(),
            signing_input_len,
            signature,
            kid,
            iss,
            vct,
            iat,
            exp,
            holder,
            holder_key,
            status,
            plain: payload,
            encoded,
            disclosures,
        })
    }

    /// Checks the issuer signature with the key `kid` of `jwks`, that the credential has not
    /// expired at `now` and was not issued more than [`MAX_FUTURE_SKEW_MS`] after `now`.
    pub fn verify_issuer(&self, jwks: &Jwks, now: Timestamp) -> Result<(), SdJwtError> {
        let key = jwks.key(&self.kid).ok_or(SdJwtError::UnknownKey)?;
        let input = self
            .issuer_jwt
            .get(..self.signing_input_len)
            .ok_or(SdJwtError::Malformed)?;
        key.verify(input.as_bytes(), &self.signature)
            .map_err(|_| SdJwtError::BadIssuerSignature)?;
        if now.millis() >= self.exp.millis() {
            return Err(SdJwtError::Expired);
        }
        if self.iat.millis() > now.millis().saturating_add(MAX_FUTURE_SKEW_MS) {
            return Err(SdJwtError::IssuedInFuture);
        }
        Ok(())
    }

    /// Its entry in the issuer's status list (`status`), if it has one.
    pub fn status(&self) -> Option<&StatusRef> {
        self.status.as_ref()
    }

    /// The issuer (`iss`).
    pub fn iss(&self) -> &str {
        &self.iss
    }
    /// The credential type (`vct`).
    pub fn vct(&self) -> &str {
        &self.vct
    }
    /// Issued at (whole seconds).
    pub fn iat(&self) -> Timestamp {
        self.iat
    }
    /// Expires at (whole seconds).
    pub fn exp(&self) -> Timestamp {
        self.exp
    }
    /// The issuer key id (`kid`).
    pub fn kid(&self) -> &str {
        &self.kid
    }
    /// The holder key (`cnf.jwk`).
    pub fn holder_jwk(&self) -> &Jwk {
        &self.holder
    }
    /// The holder key as a P-256 verifying key.
    pub fn holder_key(&self) -> &VerifyingKey {
        &self.holder_key
    }
    /// The always-visible claims (payload members other than the reserved ones).
    pub fn plain(&self) -> &Map<String, Value> {
        &self.plain
    }
    /// Every disclosure, in the order carried.
    pub fn disclosures(&self) -> &[Disclosure] {
        &self.disclosures
    }
    /// The disclosure of claim `name`, if the credential carries it.
    pub fn disclosure(&self, name: &str) -> Option<&Disclosure> {
        self.disclosures.iter().find(|d| d.name == name)
    }
    /// The issuer-signed JWT (first segment).
    pub fn issuer_jwt(&self) -> &str {
        &self.issuer_jwt
    }
}

// ---------------------------------------------------------------------------------------------
// Presentation

/// `<issuer-jwt>~<d>~…~` with exactly the disclosures named in `keep` (in the credential's
/// order, each once). [`SdJwtError::NotDisclosable`] if a name is not a disclosure of `credential`.
pub fn presentation_without_kb(
    credential: &Credential,
    keep: &[&str],
) -> Result<String, SdJwtError> {
    if keep.iter().any(|k| credential.disclosure(k).is_none()) {
        return Err(SdJwtError::NotDisclosable);
    }
    let mut out = format!("{}~", credential.issuer_jwt);
    for (encoded, d) in credential.encoded.iter().zip(&credential.disclosures) {
        if keep.contains(&d.name.as_str()) {
            out.push_str(encoded);
            out.push('~');
        }
    }
    Ok(out)
}

/// The `sd_hash` of a presentation without its KB-JWT: base64url SHA-256 of the ASCII text.
pub fn sd_hash(presentation_without_kb: &str) -> String {
    sha256_b64(presentation_without_kb)
}

/// The KB-JWT signing input `base64url(header).base64url(payload)`: header
/// `{"alg":"ES256","typ":"kb+jwt"}`, payload `{"aud","iat","nonce","sd_hash"}` (`iat` in whole
/// seconds). The holder key signs exactly these UTF-8 bytes (WebCrypto ECDSA P-256 SHA-256).
pub fn kb_jwt_signing_input(
    aud: &str,
    nonce: &str,
    iat: Timestamp,
    presentation_without_kb: &str,
) -> String {
    let header = r#"{"alg":"ES256","typ":"kb+jwt"}"#;
    let mut payload = Map::new();
    payload.insert("aud".into(), Value::String(aud.into()));
    payload.insert("iat".into(), Value::from(seconds(iat)));
    payload.insert("nonce".into(), Value::String(nonce.into()));
    payload.insert(
        "sd_hash".into(),
        Value::String(sd_hash(presentation_without_kb)),
    );
    format!(
        "{}.{}",
        b64(header),
        b64(serde_json::to_vec(&payload).unwrap_or_default())
    )
}

/// `presentation_without_kb` + `kb_signing_input` + `.` + base64url of the 64-byte P1363
/// signature (what WebCrypto returns).
pub fn finish_presentation(
    presentation_without_kb: &str,
    kb_signing_input: &str,
    signature_p1363: &[u8; 64],
) -> String {
    format!(
        "{presentation_without_kb}{kb_signing_input}.{}",
        b64(signature_p1363)
    )
}

/// The three presentation steps with a native holder key (tests, benches, native holders).
pub fn present(
    credential: &Credential,
    keep: &[&str],
    holder_key: &SigningKey,
    aud: &str,
    nonce: &str,
    iat: Timestamp,
) -> Result<String, SdJwtError> {
    let without = presentation_without_kb(credential, keep)?;
    let input = kb_jwt_signing_input(aud, nonce, iat, &without);
    let signature: Signature = holder_key.sign(input.as_bytes());
    let bytes: [u8; 64] = signature.to_bytes().into();
    Ok(finish_presentation(&without, &input, &bytes))
}

// ---------------------------------------------------------------------------------------------
// Verification

/// An issuer a verifier trusts: its identifier and its pinned key set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedIssuer {
    pub iss: String,
    pub jwks: Jwks,
}

/// What a verified presentation establishes.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedPresentation {
    pub iss: String,
    pub vct: String,
    pub exp: Timestamp,
    /// The disclosed claims (name → value), exactly those the presentation carried.
    pub disclosed: Map<String, Value>,
    /// The always-visible claims of the credential.
    pub plain: Map<String, Value>,
    /// Its entry in the issuer's status list, if it names one: a verifier checks it there
    /// ([`crate::status_list`]).
    pub status: Option<StatusRef>,
}

/// Verifies a presentation `<issuer-jwt>~<d>~…~<kb-jwt>` for audience `aud` and `nonce` at
/// `now`: the issuer is one of `trusted` (by exact `iss`), its key is the pinned `kid`, the
/// issuer signature verifies, the credential has not expired, every disclosure's digest is in
/// `_sd` (once), a KB-JWT is present, signed by `cnf.jwk`, covers this presentation (`sd_hash`),
/// names `aud` and `nonce`, and its `iat` is at most `max_kb_age_ms` old and at most
/// [`MAX_FUTURE_SKEW_MS`] ahead.
pub fn verify_presentation(
    text: &str,
    trusted: &[TrustedIssuer],
    aud: &str,
    nonce: &str,
    now: Timestamp,
    max_kb_age_ms: i64,
) -> Result<VerifiedPresentation, SdJwtError> {
    if text.len() > MAX_SD_JWT_LEN {
        return Err(SdJwtError::TooLarge);
    }
    let last = text.rfind('~').ok_or(SdJwtError::Malformed)?;
    let (without_kb, kb) = text.split_at(last + 1);
    let credential = Credential::parse_sd_jwt(without_kb)?;
    let issuer = trusted
        .iter()
        .find(|t| t.iss == credential.iss)
        .ok_or(SdJwtError::UnknownIssuer)?;
    credential.verify_issuer(&issuer.jwks, now)?;
    if kb.is_empty() {
        return Err(SdJwtError::MissingKeyBinding);
    }

    let (header, mut payload, signature, input_len) =
        split_jws(kb, SdJwtError::MalformedKeyBinding)?;
    let header_ok = header.len() == 2
        && header.get("alg").and_then(Value::as_str) == Some("ES256")
        && header.get("typ").and_then(Value::as_str) == Some(TYP_KB_JWT);
    if !header_ok {
        return Err(SdJwtError::MalformedKeyBinding);
    }
    let kb_aud = take_string(&mut payload, "aud");
    let kb_nonce = take_string(&mut payload, "nonce");
    let kb_hash = take_string(&mut payload, "sd_hash");
    let kb_iat = payload.remove("iat").and_then(|v| v.as_i64());
    let (Some(kb_aud), Some(kb_nonce), Some(kb_hash), Some(kb_iat), true) =
        (kb_aud, kb_nonce, kb_hash, kb_iat, payload.is_empty())
    else {
        return Err(SdJwtError::MalformedKeyBinding);
    };
    let input = kb.get(..input_len).ok_or(SdJwtError::MalformedKeyBinding)?;
    credential
        .holder_key
        .verify(input.as_bytes(), &signature)
        .map_err(|_| SdJwtError::BadKeyBindingSignature)?;
    if kb_hash != sd_hash(without_kb) {
        return Err(SdJwtError::BadSdHash);
    }
    if kb_aud != aud {
        return Err(SdJwtError::WrongAudience);
    }
    if kb_nonce != nonce {
        return Err(SdJwtError::WrongNonce);
    }
    let iat_ms = kb_iat.saturating_mul(1000);
    if iat_ms > now.millis().saturating_add(MAX_FUTURE_SKEW_MS) {
        return Err(SdJwtError::KeyBindingInFuture);
    }
    if now.millis().saturating_sub(iat_ms) > max_kb_age_ms {
        return Err(SdJwtError::StaleKeyBinding);
    }

    let disclosed = credential
        .disclosures
        .into_iter()
        .map(|d| (d.name, d.value))
        .collect();
    Ok(VerifiedPresentation {
        iss: credential.iss,
        vct: credential.vct,
        exp: credential.exp,
        disclosed,
        plain: credential.plain,
        status: credential.status,
    })
}
