//! Token Status List (draft-ietf-oauth-status-list): an issuer's signed list saying which of
//! its credentials it revoked, and the reference each credential carries to its entry.
//!
//! - A credential's `status` claim is `{"status_list": {"idx": N, "uri": "<issuer>/status/1"}}`
//!   ([`StatusRef`]). The index is drawn at random for each credential, never per person (the
//!   issuer keeps which person each index is), so an index names no one and two credentials'
//!   indexes are unrelated.
//! - The list ([`StatusList`]) is a string of `bits`-bit entries (1, 2, 4 or 8; 0 valid, 1
//!   invalid, 2 suspended), entry 0 in the least significant bits of byte 0, compressed with
//!   DEFLATE in the ZLIB format and base64url-encoded without padding: `{"bits": 1, "lst": …}`.
//! - The Status List Token ([`sign_token`], [`verify_token`]) is a JWT with `typ:
//!   statuslist+jwt`, signed ES256 with one of the issuer's keys (the keys its credentials are
//!   checked with), whose `sub` is the list's URI, with `iat`, `exp` and `ttl` (seconds: how long
//!   a reader may keep it before fetching again).
//!
//! A reader refuses a token that is not for the URI the credential names, not signed by the
//! issuer's key, expired, or whose list inflates beyond [`MAX_LIST_BYTES`] (checked while
//! inflating). Pure: no clock (time is an argument), no I/O.

use std::io::Read;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Map, Value, json};
use wallet_core::Timestamp;

use crate::sd_jwt::Jwks;

/// The JWT `typ` of a Status List Token.
pub const TYP: &str = "statuslist+jwt";
/// The media type a Status List Token is served and asked for with.
pub const MEDIA_TYPE: &str = "application/statuslist+jwt";
/// Where an issuer serves its (one) status list, below its origin.
pub const STATUS_PATH: &str = "/status/1";
/// The most bytes a list may inflate to (8 million one-bit entries): a larger one is refused
/// before more is inflated.
pub const MAX_LIST_BYTES: usize = 1 << 20;
/// The longest token accepted, in bytes.
pub const MAX_TOKEN_LEN: usize = 2 * MAX_LIST_BYTES;
/// How far in the future a token's `iat` may be, in milliseconds (clock skew).
pub const MAX_FUTURE_SKEW_MS: i64 = 60_000;

/// An entry's status.
pub const VALID: u8 = 0;
/// Revoked, for good.
pub const INVALID: u8 = 1;
/// Suspended (this issuer never writes it; readers treat it as not valid).
pub const SUSPENDED: u8 = 2;

/// Why a status list, its token or a credential's reference was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StatusError {
    #[error("the status list is malformed")]
    Malformed,
    #[error("the status list inflates beyond the size accepted")]
    TooLarge,
    #[error("the status list token is not signed by a key of the credential's issuer")]
    BadSignature,
    #[error("the status list token is for another list than the credential names")]
    WrongList,
    #[error("the status list token has expired")]
    Expired,
    #[error("the status list token was issued in the future")]
    IssuedInFuture,
    #[error("the credential's status reference is malformed")]
    BadReference,
    #[error("the credential's index is outside the status list")]
    OutOfRange,
}

impl StatusError {
    /// A stable code for logs and refusals.
    pub fn code(self) -> &'static str {
        match self {
            Self::Malformed => "status_list_malformed",
            Self::TooLarge => "status_list_too_large",
            Self::BadSignature => "status_list_bad_signature",
            Self::WrongList => "status_list_wrong_uri",
            Self::Expired => "status_list_expired",
            Self::IssuedInFuture => "status_list_in_future",
            Self::BadReference => "status_reference_malformed",
            Self::OutOfRange => "status_index_out_of_range",
        }
    }
}

/// A list of `bits`-bit statuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusList {
    bits: u8,
    bytes: Vec<u8>,
}

impl StatusList {
    /// A list of `entries` one-bit statuses, all valid (rounded up to whole bytes).
    pub fn new(entries: usize) -> Self {
        Self {
            bits: 1,
            bytes: vec![0; entries.div_ceil(8)],
        }
    }

    /// How many bits each entry takes.
    pub fn bits(&self) -> u8 {
        self.bits
    }

    /// How many entries the list holds.
    pub fn len(&self) -> usize {
        self.bytes.len() * 8 / usize::from(self.bits)
    }

    /// Whether the list holds no entry.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The status of entry `idx`; `None` outside the list.
    pub fn get(&self, idx: u64) -> Option<u8> {
        let (byte, shift, mask) = self.place(idx)?;
        Some((self.bytes[byte] >> shift) & mask)
    }

    /// Sets entry `idx` to `status` (masked to the entry's bits); `false` outside the list.
    pub fn set(&mut self, idx: u64, status: u8) -> bool {
        let Some((byte, shift, mask)) = self.place(idx) else {
            return false;
        };
        self.bytes[byte] = (self.bytes[byte] & !(mask << shift)) | ((status & mask) << shift);
        true
    }

    fn place(&self, idx: u64) -> Option<(usize, u8, u8)> {
        let idx = usize::try_from(idx).ok()?;
        let per_byte = 8 / usize::from(self.bits);
        let byte = idx / per_byte;
        if byte >= self.bytes.len() {
            return None;
        }
        let shift = u8::try_from((idx % per_byte) * usize::from(self.bits)).ok()?;
        let mask = u8::try_from((1u16 << self.bits) - 1).ok()?;
        Some((byte, shift, mask))
    }

    /// The `status_list` claim: `{"bits": …, "lst": …}`.
    pub fn to_claim(&self) -> Value {
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        // Writing to a Vec cannot fail.
        let compressed = std::io::Write::write_all(&mut encoder, &self.bytes)
            .and_then(|()| encoder.finish())
            .unwrap_or_default();
        json!({ "bits": self.bits, "lst": URL_SAFE_NO_PAD.encode(compressed) })
    }

    /// Reads a `status_list` claim; the list may inflate to at most `max_bytes`.
    pub fn from_claim(claim: &Value, max_bytes: usize) -> Result<Self, StatusError> {
        let object = claim.as_object().ok_or(StatusError::Malformed)?;
        let bits = match object.get("bits").and_then(Value::as_u64) {
            Some(b @ (1 | 2 | 4 | 8)) => u8::try_from(b).map_err(|_| StatusError::Malformed)?,
            _ => return Err(StatusError::Malformed),
        };
        let lst = object
            .get("lst")
            .and_then(Value::as_str)
            .ok_or(StatusError::Malformed)?;
        let compressed = URL_SAFE_NO_PAD
            .decode(lst)
            .map_err(|_| StatusError::Malformed)?;
        // Inflate at most one byte more than allowed: more than `max_bytes` is refused, and a
        // zip bomb is never inflated further.
        let limit = u64::try_from(max_bytes)
            .map_err(|_| StatusError::TooLarge)?
            .saturating_add(1);
        let mut bytes = Vec::new();
        flate2::read::ZlibDecoder::new(compressed.as_slice())
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|_| StatusError::Malformed)?;
        if bytes.len() > max_bytes {
            return Err(StatusError::TooLarge);
        }
        Ok(Self { bits, bytes })
    }
}

/// A credential's `status` claim: its entry `idx` in the list at `uri`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusRef {
    pub idx: u64,
    pub uri: String,
}

impl StatusRef {
    /// The claim: `{"status_list": {"idx": …, "uri": …}}`.
    pub fn claim(&self) -> Value {
        json!({ "status_list": { "idx": self.idx, "uri": self.uri } })
    }

    /// Reads a `status` claim (one that names a status list; other status mechanisms are
    /// refused: this wallet's issuers and sites use this one).
    pub fn from_claim(claim: &Value) -> Result<Self, StatusError> {
        let list = claim
            .get("status_list")
            .and_then(Value::as_object)
            .ok_or(StatusError::BadReference)?;
        let idx = list
            .get("idx")
            .and_then(Value::as_u64)
            .ok_or(StatusError::BadReference)?;
        let uri = list
            .get("uri")
            .and_then(Value::as_str)
            .filter(|u| (u.starts_with("https://") || u.starts_with("http://")) && u.len() <= 2048)
            .ok_or(StatusError::BadReference)?;
        Ok(Self {
            idx,
            uri: uri.to_owned(),
        })
    }
}

/// What a verified Status List Token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusListToken {
    /// The list's URI (`sub`).
    pub uri: String,
    pub iat: Timestamp,
    pub exp: Timestamp,
    /// How long it may be kept before fetching again, in seconds.
    pub ttl: u64,
    pub list: StatusList,
}

impl StatusListToken {
    /// The status of `reference`'s entry, once the token is known to be for its list.
    pub fn status_of(&self, reference: &StatusRef) -> Result<u8, StatusError> {
        if reference.uri != self.uri {
            return Err(StatusError::WrongList);
        }
        self.list.get(reference.idx).ok_or(StatusError::OutOfRange)
    }
}

fn seconds(t: Timestamp) -> i64 {
    t.millis().div_euclid(1000)
}

/// Signs the Status List Token for `list` at `uri`, issued by `iss` at `iat` and valid until
/// `exp`, to be kept at most `ttl` seconds, with `key` (`kid`).
#[allow(clippy::too_many_arguments)]
pub fn sign_token(
    key: &SigningKey,
    kid: &str,
    iss: &str,
    uri: &str,
    list: &StatusList,
    iat: Timestamp,
    exp: Timestamp,
    ttl: u64,
) -> String {
    let header = json!({ "alg": "ES256", "kid": kid, "typ": TYP });
    let payload = json!({
        "iss": iss,
        "sub": uri,
        "iat": seconds(iat),
        "exp": seconds(exp),
        "ttl": ttl,
        "status_list": list.to_claim(),
    });
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(payload.to_string())
    );
    let signature: Signature = key.sign(input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

fn part(text: &str) -> Result<Map<String, Value>, StatusError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(text)
        .map_err(|_| StatusError::Malformed)?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(StatusError::Malformed),
    }
}

/// Verifies a Status List Token: ES256 by a key of `jwks` (the credential issuer's), `typ`
/// `statuslist+jwt`, `sub` equal to `uri` (the list the credential names), not expired at `now`
/// and not issued in the future; its list within [`MAX_LIST_BYTES`].
pub fn verify_token(
    token: &str,
    jwks: &Jwks,
    uri: &str,
    now: Timestamp,
) -> Result<StatusListToken, StatusError> {
    if token.len() > MAX_TOKEN_LEN {
        return Err(StatusError::TooLarge);
    }
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(StatusError::Malformed);
    };
    let head = part(header)?;
    if head.get("alg").and_then(Value::as_str) != Some("ES256")
        || head.get("typ").and_then(Value::as_str) != Some(TYP)
    {
        return Err(StatusError::Malformed);
    }
    let kid = head
        .get("kid")
        .and_then(Value::as_str)
        .ok_or(StatusError::Malformed)?;
    let key = jwks.key(kid).ok_or(StatusError::BadSignature)?;
    let signature = URL_SAFE_NO_PAD
        .decode(signature)
        .ok()
        .and_then(|s| Signature::from_slice(&s).ok())
        .ok_or(StatusError::BadSignature)?;
    let input_len = header.len() + 1 + payload.len();
    key.verify(&token.as_bytes()[..input_len], &signature)
        .map_err(|_| StatusError::BadSignature)?;
    let body = part(payload)?;
    let sub = body
        .get("sub")
        .and_then(Value::as_str)
        .ok_or(StatusError::Malformed)?;
    if sub != uri {
        return Err(StatusError::WrongList);
    }
    let time = |name: &str| {
        body.get(name)
            .and_then(Value::as_i64)
            .and_then(|s| s.checked_mul(1000))
            .map(Timestamp::from_millis)
            .ok_or(StatusError::Malformed)
    };
    let (iat, exp) = (time("iat")?, time("exp")?);
    if now.millis() >= exp.millis() {
        return Err(StatusError::Expired);
    }
    if iat.millis() > now.millis().saturating_add(MAX_FUTURE_SKEW_MS) {
        return Err(StatusError::IssuedInFuture);
    }
    let ttl = body.get("ttl").and_then(Value::as_u64).unwrap_or(0);
    let list = StatusList::from_claim(
        body.get("status_list").ok_or(StatusError::Malformed)?,
        MAX_LIST_BYTES,
    )?;
    Ok(StatusListToken {
        uri: sub.to_owned(),
        iat,
        exp,
        ttl,
        list,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sd_jwt::IssuerKey;

    fn key() -> SigningKey {
        SigningKey::from_slice(&[7; 32]).unwrap()
    }

    fn jwks() -> Jwks {
        Jwks::new(vec![IssuerKey {
            kid: "k1".into(),
            key: *key().verifying_key(),
        }])
        .unwrap()
    }

    const URI: &str = "https://tax.example/status/1";
    const T: i64 = 1_764_417_600_000;

    #[test]
    fn entries_sit_least_significant_bit_first() {
        let mut list = StatusList::new(16);
        assert!(list.set(0, INVALID) && list.set(9, INVALID));
        assert_eq!(list.bytes, vec![0b0000_0001, 0b0000_0010]);
        assert_eq!(list.get(0), Some(INVALID));
        assert_eq!(list.get(1), Some(VALID));
        assert_eq!(list.get(16), None);
        assert!(!list.set(16, INVALID));
        // The specification's example of a 2-bit list: statuses 1,2,0,3,0,1,0,1,1,2,3,3 are
        // the bytes c9 44 f9.
        let mut two = StatusList {
            bits: 2,
            bytes: vec![0; 3],
        };
        for (i, s) in [1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3].into_iter().enumerate() {
            assert!(two.set(i as u64, s));
        }
        assert_eq!(two.bytes, vec![0xc9, 0x44, 0xf9]);
    }

    #[test]
    fn the_specifications_one_bit_example_reads() {
        // draft-ietf-oauth-status-list, section 4.1: statuses 1,0,0,1,1,1,0,1 then 1,1,0,0,0,1,
        // 0,1 encode as `{"bits": 1, "lst": "eNrbuRgAAhcBXQ"}`.
        let list =
            StatusList::from_claim(&json!({"bits": 1, "lst": "eNrbuRgAAhcBXQ"}), 16).unwrap();
        let got: Vec<u8> = (0..16).map(|i| list.get(i).unwrap()).collect();
        assert_eq!(got, vec![1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1]);
    }

    #[test]
    fn a_list_round_trips_and_a_bomb_is_refused() {
        let mut list = StatusList::new(100_000);
        for i in [3, 77, 99_999] {
            list.set(i, INVALID);
        }
        let back = StatusList::from_claim(&list.to_claim(), MAX_LIST_BYTES).unwrap();
        assert_eq!(back, list);
        assert_eq!(
            StatusList::from_claim(&list.to_claim(), 1000),
            Err(StatusError::TooLarge)
        );
        for bad in [
            json!({"bits": 3, "lst": "eNrbuRgAAhcBXQ"}),
            json!({"bits": 1, "lst": "!!"}),
            json!({"bits": 1, "lst": "aGVsbG8"}),
            json!({"bits": 1}),
            json!([1]),
        ] {
            assert!(StatusList::from_claim(&bad, 1000).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_token_verifies_only_for_its_list_key_and_time() {
        let mut list = StatusList::new(64);
        list.set(5, INVALID);
        let (iat, exp) = (
            Timestamp::from_millis(T),
            Timestamp::from_millis(T + 3_600_000),
        );
        let signed_by = |key: &SigningKey| {
            sign_token(key, "k1", "https://tax.example", URI, &list, iat, exp, 300)
        };
        let token = signed_by(&key());
        let now = Timestamp::from_millis(T + 1000);
        let read = verify_token(&token, &jwks(), URI, now).unwrap();
        assert_eq!(read.ttl, 300);
        let five = StatusRef {
            idx: 5,
            uri: URI.into(),
        };
        assert_eq!(read.status_of(&five), Ok(INVALID));
        let six = StatusRef {
            idx: 6,
            ..five.clone()
        };
        assert_eq!(read.status_of(&six), Ok(VALID));
        let far = StatusRef {
            idx: 64,
            ..five.clone()
        };
        assert_eq!(read.status_of(&far), Err(StatusError::OutOfRange));
        assert_eq!(
            verify_token(&token, &jwks(), "https://tax.example/status/2", now),
            Err(StatusError::WrongList)
        );
        assert_eq!(
            verify_token(&token, &jwks(), URI, exp),
            Err(StatusError::Expired)
        );
        assert_eq!(
            verify_token(&token, &jwks(), URI, Timestamp::from_millis(T - 120_000)),
            Err(StatusError::IssuedInFuture)
        );
        // Another key, a flipped payload, a missing part.
        let forged = signed_by(&SigningKey::from_slice(&[8; 32]).unwrap());
        assert_eq!(
            verify_token(&forged, &jwks(), URI, now),
            Err(StatusError::BadSignature)
        );
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        let mut emptied = list.clone();
        emptied.set(5, VALID);
        let payload = json!({"iss": "https://tax.example", "sub": URI, "iat": T / 1000,
                             "exp": T / 1000 + 3600, "ttl": 300, "status_list": emptied.to_claim()});
        parts[1] = URL_SAFE_NO_PAD.encode(payload.to_string());
        assert_eq!(
            verify_token(&parts.join("."), &jwks(), URI, now),
            Err(StatusError::BadSignature)
        );
        assert!(verify_token("a.b", &jwks(), URI, now).is_err());
    }

    #[test]
    fn a_reference_names_a_list_by_http_uri() {
        let r = StatusRef {
            idx: 42,
            uri: URI.into(),
        };
        assert_eq!(StatusRef::from_claim(&r.claim()), Ok(r));
        for bad in [
            json!({"status_list": {"idx": -1, "uri": URI}}),
            json!({"status_list": {"idx": 1, "uri": "ftp://x"}}),
            json!({"status_list": {"uri": URI}}),
            json!({"other": {}}),
        ] {
            assert_eq!(
                StatusRef::from_claim(&bad),
                Err(StatusError::BadReference),
                "{bad}"
            );
        }
    }
}
