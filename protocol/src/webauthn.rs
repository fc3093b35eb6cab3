//! The person's act, checked: WebAuthn (Web Authentication Level 2) registration and assertion
//! verification for ES256 platform authenticators, the way the wallet page asks a person to
//! confirm a grant, a release or the end of a session.
//!
//! A page script can replace `navigator.credentials.get` and hand back anything; what counts is
//! that [`verify_assertion`] holds:
//! - `clientDataJSON` is strict JSON whose `type` is `webauthn.get`, whose `challenge` is the
//!   base64url (no padding) of the fresh challenge the wallet made, whose `origin` is the wallet's
//!   origin, and which is not `crossOrigin`;
//! - the authenticator data is at least 37 bytes, its `rpIdHash` is SHA-256 of the relying party
//!   id, and both user presence (UP, `0x01`) and user verification (UV, `0x04`) are set;
//! - the credential is the one registered, and its ES256 signature (ASN.1 DER) over
//!   `authenticatorData ‖ SHA-256(clientDataJSON)` verifies under the public key kept sealed
//!   with the vault (an SPKI DER P-256 key, as `response.getPublicKey()` gives it).
//!
//! Around it, for the wallet's confirmations: the challenge is [`act_challenge`] (a hash of the
//! act's sentence and fresh randomness), and the signature counter must advance
//! ([`check_sign_count`], 0 for authenticators without one).
//!
//! Pure: no clock, no randomness, no I/O. The challenge is made by the caller.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use thiserror::Error;

/// The user-present flag of the authenticator data.
pub const FLAG_UP: u8 = 0x01;
/// The user-verified flag of the authenticator data.
pub const FLAG_UV: u8 = 0x04;
/// `rpIdHash (32) ‖ flags (1) ‖ signCount (4)`.
pub const AUTH_DATA_MIN: usize = 37;
/// The COSE algorithm identifier of ES256 (`pubKeyCredParams`).
pub const COSE_ES256: i32 = -7;

/// The DER prefix of a `SubjectPublicKeyInfo` holding an uncompressed P-256 point:
/// `SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING (0 unused bits) 04 ‖ x ‖ y }`.
const SPKI_P256_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// Why a registration or an assertion is refused.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum WebAuthnError {
    #[error("the client data is not valid JSON of the expected shape")]
    ClientData,
    #[error("the client data is of another ceremony type")]
    WrongType,
    #[error("the challenge is not the one this wallet issued")]
    WrongChallenge,
    #[error("the origin is not this wallet's")]
    WrongOrigin,
    #[error("the ceremony ran in a cross-origin frame")]
    CrossOrigin,
    #[error("the authenticator data is truncated")]
    AuthenticatorData,
    #[error("the authenticator data is for another relying party")]
    WrongRelyingParty,
    #[error("the authenticator did not see the user present")]
    UserNotPresent,
    #[error("the authenticator did not verify the user")]
    UserNotVerified,
    #[error("the credential is not the registered one")]
    WrongCredential,
    #[error("the public key is not an uncompressed P-256 key in SPKI DER")]
    BadKey,
    #[error("the signature is not an ASN.1 DER ECDSA signature")]
    MalformedSignature,
    #[error("the signature does not verify")]
    BadSignature,
    #[error(
        "the device's signature counter did not advance (the assertion may come from a copy of \
         its key, or be replayed)"
    )]
    CounterNotAdvanced,
}

/// The rule for an authenticator's signature counter (`signCount`), given the one kept from
/// its last confirmation (`stored`; 0 at registration) and the one an assertion carries (`got`):
/// an authenticator that counts must count up; one that does not support a counter says 0
/// every time, and then 0 after 0 is accepted. Anything else — a repeat, a step back, or 0
/// after a count — is refused ([`WebAuthnError::CounterNotAdvanced`]).
pub fn check_sign_count(stored: u32, got: u32) -> Result<(), WebAuthnError> {
    if got > stored || (stored == 0 && got == 0) {
        Ok(())
    } else {
        Err(WebAuthnError::CounterNotAdvanced)
    }
}

/// The challenge of the assertion that confirms an act: SHA-256 over a domain tag, `fresh`
/// (32 random bytes, one per ceremony) and the act's sentence exactly as the person is shown
/// it. The challenge therefore names the act: an assertion the person gave for one sentence
/// verifies for no other ([`WebAuthnError::WrongChallenge`]).
pub fn act_challenge(fresh: &[u8; 32], act: &str) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(b"tacit/webauthn-act/v1\0");
    hash.update(fresh);
    hash.update((act.len() as u64).to_be_bytes());
    hash.update(act.as_bytes());
    hash.finalize().into()
}

/// What an assertion (`navigator.credentials.get`) handed back, as bytes.
#[derive(Debug, Clone, Copy)]
pub struct Assertion<'a> {
    /// `credential.rawId`.
    pub credential_id: &'a [u8],
    /// `response.clientDataJSON`.
    pub client_data_json: &'a [u8],
    /// `response.authenticatorData`.
    pub authenticator_data: &'a [u8],
    /// `response.signature` (ASN.1 DER ECDSA).
    pub signature_der: &'a [u8],
}

/// What the wallet expects: the challenge it made, its origin and relying party id, and the
/// registered credential's id.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub challenge: &'a [u8],
    pub origin: &'a str,
    pub rp_id: &'a str,
    pub credential_id: &'a [u8],
}

/// The flags and counter of an authenticator data that passed [`check_authenticator_data`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthenticatorData {
    pub flags: u8,
    pub sign_count: u32,
}

/// `CollectedClientData`. Browsers may add members (Chrome sometimes adds
/// `other_keys_can_be_added_here`), so unknown members are allowed; a member given twice is not.
#[derive(Deserialize)]
struct ClientData {
    #[serde(rename = "type")]
    kind: String,
    challenge: String,
    origin: String,
    #[serde(rename = "crossOrigin", default)]
    cross_origin: Option<bool>,
}

/// Checks `clientDataJSON` of a ceremony of `kind` (`webauthn.create` or `webauthn.get`).
fn check_client_data(
    client_data_json: &[u8],
    kind: &str,
    challenge: &[u8],
    origin: &str,
) -> Result<(), WebAuthnError> {
    let data: ClientData =
        serde_json::from_slice(client_data_json).map_err(|_| WebAuthnError::ClientData)?;
    if data.kind != kind {
        return Err(WebAuthnError::WrongType);
    }
    let got = URL_SAFE_NO_PAD
        .decode(data.challenge.as_bytes())
        .map_err(|_| WebAuthnError::WrongChallenge)?;
    if challenge.is_empty() || got != challenge {
        return Err(WebAuthnError::WrongChallenge);
    }
    if data.origin != origin {
        return Err(WebAuthnError::WrongOrigin);
    }
    if data.cross_origin == Some(true) {
        return Err(WebAuthnError::CrossOrigin);
    }
    Ok(())
}

/// Checks a registration's `clientDataJSON` (`navigator.credentials.create`): type
/// `webauthn.create`, the wallet's challenge and origin, not cross-origin.
pub fn verify_registration(
    client_data_json: &[u8],
    expected_challenge: &[u8],
    expected_origin: &str,
) -> Result<(), WebAuthnError> {
    check_client_data(
        client_data_json,
        "webauthn.create",
        expected_challenge,
        expected_origin,
    )
}

/// Checks authenticator data: long enough, for `rp_id`, user present and user verified.
pub fn check_authenticator_data(
    authenticator_data: &[u8],
    rp_id: &str,
) -> Result<AuthenticatorData, WebAuthnError> {
    if authenticator_data.len() < AUTH_DATA_MIN {
        return Err(WebAuthnError::AuthenticatorData);
    }
    let (rp_id_hash, rest) = authenticator_data.split_at(32);
    if rp_id_hash != Sha256::digest(rp_id.as_bytes()).as_slice() {
        return Err(WebAuthnError::WrongRelyingParty);
    }
    let flags = rest[0];
    if flags & FLAG_UP == 0 {
        return Err(WebAuthnError::UserNotPresent);
    }
    if flags & FLAG_UV == 0 {
        return Err(WebAuthnError::UserNotVerified);
    }
    let sign_count = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]);
    Ok(AuthenticatorData { flags, sign_count })
}

/// A P-256 public key from its SPKI DER (uncompressed point, the only form browsers give).
pub fn public_key_from_spki(spki_der: &[u8]) -> Result<VerifyingKey, WebAuthnError> {
    let point = spki_der
        .strip_prefix(&SPKI_P256_PREFIX[..])
        .filter(|p| p.len() == 65 && p[0] == 0x04)
        .ok_or(WebAuthnError::BadKey)?;
    VerifyingKey::from_sec1_bytes(point).map_err(|_| WebAuthnError::BadKey)
}

/// Checks an SPKI DER public key (at registration, before it is sealed with the vault).
pub fn check_public_key(spki_der: &[u8]) -> Result<(), WebAuthnError> {
    public_key_from_spki(spki_der).map(|_| ())
}

/// Parses a DER `INTEGER` (positive, minimally encoded) into a 32-byte big-endian scalar.
fn der_integer(input: &[u8]) -> Option<([u8; 32], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&len, rest) = rest.split_first()?;
    let len = usize::from(len);
    if tag != 0x02 || len == 0 || len > 33 || rest.len() < len {
        return None;
    }
    let (body, rest) = rest.split_at(len);
    // Positive and minimal: no leading zero unless the next byte has its top bit set.
    if body[0] & 0x80 != 0 {
        return None;
    }
    if body.len() > 1 && body[0] == 0 && body[1] & 0x80 == 0 {
        return None;
    }
    let body = if body.len() == 33 { &body[1..] } else { body };
    if body.len() > 32 {
        return None;
    }
    let mut out = [0u8; 32];
    out[32 - body.len()..].copy_from_slice(body);
    Some((out, rest))
}

/// Parses `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }` (strict DER).
fn signature_from_der(der: &[u8]) -> Result<Signature, WebAuthnError> {
    let parse = || -> Option<Signature> {
        let (&tag, rest) = der.split_first()?;
        let (&len, body) = rest.split_first()?;
        if tag != 0x30 || len >= 0x80 || usize::from(len) != body.len() {
            return None;
        }
        let (r, rest) = der_integer(body)?;
        let (s, rest) = der_integer(rest)?;
        if !rest.is_empty() {
            return None;
        }
        let mut raw = [0u8; 64];
        raw[..32].copy_from_slice(&r);
        raw[32..].copy_from_slice(&s);
        Signature::from_slice(&raw).ok()
    };
    parse().ok_or(WebAuthnError::MalformedSignature)
}

/// Verifies an assertion from `navigator.credentials.get` against the registered credential's
/// SPKI DER public key: see the module documentation for every check.
pub fn verify_assertion(
    public_key_spki: &[u8],
    assertion: &Assertion<'_>,
    expected: &Expected<'_>,
) -> Result<(), WebAuthnError> {
    if expected.credential_id.is_empty() || assertion.credential_id != expected.credential_id {
        return Err(WebAuthnError::WrongCredential);
    }
    check_client_data(
        assertion.client_data_json,
        "webauthn.get",
        expected.challenge,
        expected.origin,
    )?;
    check_authenticator_data(assertion.authenticator_data, expected.rp_id)?;
    let key = public_key_from_spki(public_key_spki)?;
    let signature = signature_from_der(assertion.signature_der)?;
    let signed = [
        assertion.authenticator_data,
        Sha256::digest(assertion.client_data_json).as_slice(),
    ]
    .concat();
    key.verify(&signed, &signature)
        .map_err(|_| WebAuthnError::BadSignature)
}

/// The SPKI DER of a P-256 public key (tests and tools that make their own keys).
pub fn spki_of(key: &VerifyingKey) -> Vec<u8> {
    let point = key.to_sec1_point(false);
    [&SPKI_P256_PREFIX[..], point.as_bytes()].concat()
}
