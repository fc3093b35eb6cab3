//! Signed signer requests from enrolled installs.
//!
//! A wallet install holds a non-extractable WebCrypto P-256 key. Every request it sends the
//! signer carries three headers: [`HEADER_INSTALL`] (the key's RFC 7638 thumbprint),
//! [`HEADER_TIMESTAMP`] (decimal milliseconds since the Unix epoch) and [`HEADER_SIGNATURE`]
//! (base64url, no padding, of the 64-byte P1363 `r||s` ES256 signature over
//! [`signing_input`]). The signer parses them with [`RequestAuth::parse`] and checks them with
//! [`RequestAuth::verify`]; it keeps [`RequestAuth::replay_token`] to refuse a second use.
//!
//! Enrolment codes ([`EnrolmentCode`]) are 80 random bits written as 16 Crockford base32
//! characters; the signer stores only [`derive_code_hash`].

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use wallet_core::Timestamp;

mod enrolment;
pub use enrolment::{
    CodeValidityError, EnrolmentCode, EnrolmentRequest, EnrolmentResponse, MAX_CODE_VALIDITY,
    MIN_CODE_VALIDITY, check_code_validity, code_expiry, derive_code_hash, make_enrolment_code,
    parse_code_validity,
};

/// The install id header (the key's thumbprint).
pub const HEADER_INSTALL: &str = "tacit-install";
/// The timestamp header (decimal milliseconds since the Unix epoch).
pub const HEADER_TIMESTAMP: &str = "tacit-timestamp";
/// The signature header (base64url without padding of the 64-byte `r||s`).
pub const HEADER_SIGNATURE: &str = "tacit-signature";
/// The first line of every [`signing_input`].
pub const SIGNING_DOMAIN: &str = "tacit-signer-request-v1";
/// How far a request's timestamp may be from the signer's clock, either way.
pub const MAX_CLOCK_SKEW_MS: i64 = 120_000;
/// How long past its timestamp a request's [`RequestAuth::replay_token`] is kept: the skew
/// window on both sides. A request stays fresh until `timestamp + MAX_CLOCK_SKEW_MS` on the
/// clock of the instance that checks it, and the instance that purges old tokens may run up to
/// [`MAX_CLOCK_SKEW_MS`] ahead of that one, so a token kept any shorter could be purged while
/// a replay of its request would still be fresh somewhere.
pub const REPLAY_KEEP_MS: i64 = 2 * MAX_CLOCK_SKEW_MS;

/// Why a request's authentication (or an enrolment's key or code) was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("the request carries no install signature")]
    Missing,
    #[error("the install signature headers are malformed")]
    Malformed,
    #[error("the request's timestamp is too far from the signer's clock")]
    Stale,
    #[error("the install id does not name the key that was given")]
    WrongKey,
    #[error("the request signature does not verify")]
    BadSignature,
    #[error("the public key is not a P-256 JWK")]
    BadKey,
    #[error("the enrolment code is not 16 Crockford base32 characters")]
    BadCode,
}

/// The bytes an install signs: domain, method, path, timestamp and body digest, one a line.
pub fn signing_input(method: &str, path: &str, timestamp_ms: i64, body: &[u8]) -> String {
    let digest = URL_SAFE_NO_PAD.encode(Sha256::digest(body));
    format!(
        "{SIGNING_DOMAIN}\n{}\n{path}\n{timestamp_ms}\n{digest}",
        method.to_ascii_uppercase()
    )
}

/// A P-256 public key as a JWK. Members WebCrypto adds (`ext`, `key_ops`) are ignored on input;
/// any other member is refused.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "JwkWire")]
pub struct Jwk {
    pub kty: String,
    pub crv: String,
    pub x: String,
    pub y: String,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JwkWire {
    kty: String,
    crv: String,
    x: String,
    y: String,
    #[serde(default, rename = "ext")]
    _ext: Option<bool>,
    #[serde(default, rename = "key_ops")]
    _key_ops: Option<Vec<String>>,
}

impl From<JwkWire> for Jwk {
    fn from(w: JwkWire) -> Self {
        Self {
            kty: w.kty,
            crv: w.crv,
            x: w.x,
            y: w.y,
        }
    }
}

/// An install's RFC 7638 JWK thumbprint: 43 base64url characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct InstallId(String);

impl InstallId {
    pub fn parse(text: &str) -> Result<Self, AuthError> {
        let ok = text.len() == 43
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && URL_SAFE_NO_PAD.decode(text).is_ok();
        ok.then(|| Self(text.to_owned()))
            .ok_or(AuthError::Malformed)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for InstallId {
    type Error = AuthError;
    fn try_from(text: String) -> Result<Self, AuthError> {
        Self::parse(&text)
    }
}

impl From<InstallId> for String {
    fn from(id: InstallId) -> Self {
        id.0
    }
}

impl core::fmt::Display for InstallId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An enrolled install's public key (P-256, on the curve, not the identity).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallKey(VerifyingKey);

impl InstallKey {
    pub fn from_jwk(jwk: &Jwk) -> Result<Self, AuthError> {
        if jwk.kty != "EC" || jwk.crv != "P-256" {
            return Err(AuthError::BadKey);
        }
        let coordinate = |text: &str| -> Result<[u8; 32], AuthError> {
            let bytes = URL_SAFE_NO_PAD
                .decode(text)
                .map_err(|_| AuthError::BadKey)?;
            bytes.try_into().map_err(|_| AuthError::BadKey)
        };
        let mut sec1 = [4u8; 65];
        sec1[1..33].copy_from_slice(&coordinate(&jwk.x)?);
        sec1[33..].copy_from_slice(&coordinate(&jwk.y)?);
        VerifyingKey::from_sec1_bytes(&sec1)
            .map(Self)
            .map_err(|_| AuthError::BadKey)
    }

    /// The key of install `id` from its JWK: refused unless the JWK is a P-256 key
    /// ([`AuthError::BadKey`]) whose thumbprint is `id` ([`AuthError::WrongKey`]). For a key read
    /// back from storage: a stored row that no longer matches its id is not trusted.
    pub fn for_install(jwk: &Jwk, id: &InstallId) -> Result<Self, AuthError> {
        let key = Self::from_jwk(jwk)?;
        if key.id() == *id {
            Ok(key)
        } else {
            Err(AuthError::WrongKey)
        }
    }

    pub fn from_verifying_key(key: VerifyingKey) -> Self {
        Self(key)
    }

    pub fn to_jwk(&self) -> Jwk {
        let point = self.0.to_sec1_point(false);
        let bytes = point.as_bytes();
        let (x, y) = bytes.get(1..33).zip(bytes.get(33..65)).unwrap_or_default();
        Jwk {
            kty: "EC".to_owned(),
            crv: "P-256".to_owned(),
            x: URL_SAFE_NO_PAD.encode(x),
            y: URL_SAFE_NO_PAD.encode(y),
        }
    }

    /// The RFC 7638 thumbprint: base64url SHA-256 of the required members in lexical order.
    pub fn id(&self) -> InstallId {
        let jwk = self.to_jwk();
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk.x, jwk.y
        );
        InstallId(URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes())))
    }
}

/// The three authentication headers of one request, parsed but not yet checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestAuth {
    install: InstallId,
    timestamp_ms: i64,
    signature: Signature,
}

impl RequestAuth {
    /// Parses the header values; all three absent or any one absent is [`AuthError::Missing`].
    pub fn parse(
        install: Option<&str>,
        timestamp: Option<&str>,
        signature: Option<&str>,
    ) -> Result<Self, AuthError> {
        let (Some(install), Some(timestamp), Some(signature)) = (install, timestamp, signature)
        else {
            return Err(AuthError::Missing);
        };
        let install = InstallId::parse(install)?;
        if timestamp.is_empty()
            || timestamp.len() > 16
            || !timestamp.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(AuthError::Malformed);
        }
        let timestamp_ms = timestamp.parse().map_err(|_| AuthError::Malformed)?;
        let raw = URL_SAFE_NO_PAD
            .decode(signature)
            .map_err(|_| AuthError::Malformed)?;
        let signature = Signature::from_slice(&raw).map_err(|_| AuthError::Malformed)?;
        Ok(Self {
            install,
            timestamp_ms,
            signature,
        })
    }

    pub fn install_id(&self) -> &InstallId {
        &self.install
    }

    pub fn timestamp_ms(&self) -> i64 {
        self.timestamp_ms
    }

    /// Checks that `key` is the install named, the timestamp is within [`MAX_CLOCK_SKEW_MS`] of
    /// `now`, and the signature covers this method, path, timestamp and body. High-S and low-S
    /// signatures are both accepted (WebCrypto produces either).
    pub fn verify(
        &self,
        key: &InstallKey,
        method: &str,
        path: &str,
        body: &[u8],
        now: Timestamp,
    ) -> Result<(), AuthError> {
        if key.id() != self.install {
            return Err(AuthError::WrongKey);
        }
        let skew = i128::from(now.millis()) - i128::from(self.timestamp_ms);
        if skew.abs() > i128::from(MAX_CLOCK_SKEW_MS) {
            return Err(AuthError::Stale);
        }
        let input = signing_input(method, path, self.timestamp_ms, body);
        key.0
            .verify(input.as_bytes(), &self.signature)
            .map_err(|_| AuthError::BadSignature)
    }

    /// SHA-256 of the signature in low-S form, so that flipping `s` to `n - s` (which verifies
    /// too) does not make a replay look new.
    pub fn replay_token(&self) -> [u8; 32] {
        Sha256::digest(self.signature.normalize_s().to_bytes()).into()
    }

    /// Until when the signer must keep [`RequestAuth::replay_token`]: [`REPLAY_KEEP_MS`] past
    /// the request's timestamp (saturating). Purging a token at or after this time never lets a
    /// replay through, since [`RequestAuth::verify`] refuses it as stale by then.
    pub fn replay_keep_until(&self) -> Timestamp {
        Timestamp::from_millis(self.timestamp_ms.saturating_add(REPLAY_KEEP_MS))
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for InstallId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "InstallId".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string", "pattern": "^[A-Za-z0-9_-]{43}$",
            "description": "The install key's RFC 7638 JWK thumbprint (base64url)."
        })
    }
}

/// Whether a browser's `Origin` header names one of the wallet origins a signer serves. Scheme
/// and host compare without regard to case (RFC 6454 serialises them lower-case, but a header
/// is bytes); `null`, an origin with a path or port not listed, and anything else is refused.
/// A request without an `Origin` header (a non-browser client) is not a browser's and is judged
/// by its signature alone.
pub fn origin_allowed(allowed: &[wallet_core::Origin], header: &[u8]) -> bool {
    allowed
        .iter()
        .any(|o| o.as_str().as_bytes().eq_ignore_ascii_case(header))
}
