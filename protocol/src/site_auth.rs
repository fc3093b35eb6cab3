//! Signed site requirements: a relying site proves that the requirements an agent relays are
//! its own.
//!
//! A site publishes its Ed25519 public keys at `<origin>/.well-known/tacit-site.json`
//! ([`SiteKeys`], JWK-shaped: `{"kty":"OKP","crv":"Ed25519","x":…,"kid":…}`) and adds an
//! [`Attestation`] to every set of requirements it hands out. The signature covers
//! [`requirements_signing_bytes`]: a domain tag, then the origin, nonce, site name, purpose,
//! every claim in its canonical form and the expiry, each length-prefixed, so no field can be
//! moved into another and none can be changed without breaking the signature.
//!
//! The wallet fetches the keys document itself from the origin the requirements name and calls
//! [`verify_requirements`]; each failure has its own [`SiteAuthError`] variant.
//!
//! Rules:
//! - the keys document must be for the requirements' origin (a document served for another
//!   origin proves nothing about this one);
//! - the attestation's `kid` must be listed in it;
//! - the signature must verify (`verify_strict`) over exactly the requirements shown;
//! - the attestation must not have expired (`now < expires_at`) and may not reach further ahead
//!   than [`MAX_ATTESTATION_LIFETIME_MS`].

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use wallet_core::{Claim, Nonce, Origin, Timestamp};

/// The domain tag that opens [`requirements_signing_bytes`].
pub const REQUIREMENTS_DOMAIN: &[u8] = b"tacit/site-requirements/v1\0";

/// Where a site publishes its keys, under its origin.
pub const SITE_KEYS_PATH: &str = "/.well-known/tacit-site.json";

/// The furthest ahead of `now` an attestation may expire: one day. A site's nonces live an
/// hour; an attestation that claims to last longer is refused as malformed.
pub const MAX_ATTESTATION_LIFETIME_MS: i64 = 24 * 60 * 60 * 1000;

/// Largest keys document [`SiteKeys::parse`] reads.
pub const MAX_SITE_KEYS_BYTES: usize = 64 * 1024;

/// Most keys one document may list.
pub const MAX_SITE_KEYS: usize = 16;

/// Longest `kid`.
pub const MAX_KID_LEN: usize = 64;

/// Why requirements are not the site's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SiteAuthError {
    /// The keys document is for another origin than the requirements name.
    #[error("the site's keys are published for another origin")]
    OriginMismatch,
    /// The attestation names a key the site does not publish.
    #[error("the attestation names a key the site does not publish")]
    UnknownKey,
    /// The signature does not verify over these requirements.
    #[error("the site's signature does not verify")]
    BadSignature,
    /// The attestation's expiry has passed.
    #[error("the site's attestation has expired")]
    Expired,
    /// A field does not have its form (base64url, length, kty/crv, kid charset, expiry range).
    #[error("malformed site attestation or keys: {0}")]
    Malformed(&'static str),
}

/// One published site key, as a JWK (RFC 8037 OKP).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteKey {
    /// Always `"OKP"`.
    pub kty: String,
    /// Always `"Ed25519"`.
    pub crv: String,
    /// The 32-byte public key, base64url without padding.
    pub x: String,
    /// The key's id, named by attestations.
    pub kid: String,
}

impl SiteKey {
    /// The JWK of `key`, with its [`derive_site_kid`] id.
    pub fn from_verifying_key(key: &VerifyingKey) -> Self {
        let x = URL_SAFE_NO_PAD.encode(key.as_bytes());
        Self {
            kid: derive_site_kid(key),
            kty: "OKP".to_owned(),
            crv: "Ed25519".to_owned(),
            x,
        }
    }

    /// The public key, if the JWK has its form.
    pub fn verifying_key(&self) -> Result<VerifyingKey, SiteAuthError> {
        if self.kty != "OKP" || self.crv != "Ed25519" {
            return Err(SiteAuthError::Malformed("a key is not an OKP Ed25519 JWK"));
        }
        let bytes: [u8; 32] = decode_fixed(&self.x).ok_or(SiteAuthError::Malformed(
            "a key's x is not 32 bytes of base64url",
        ))?;
        VerifyingKey::from_bytes(&bytes)
            .map_err(|_| SiteAuthError::Malformed("a key's x is not an Ed25519 point"))
    }
}

/// A site key's id: the RFC 7638 JWK thumbprint, base64url (43 characters) of SHA-256 of
/// `{"crv":"Ed25519","kty":"OKP","x":"…"}`.
pub fn derive_site_kid(key: &VerifyingKey) -> String {
    let x = URL_SAFE_NO_PAD.encode(key.as_bytes());
    let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// The body of `GET <origin>/.well-known/tacit-site.json`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteKeys {
    /// The origin these keys speak for.
    pub origin: Origin,
    /// The site's name, as its requirements give it.
    pub site_name: String,
    /// Current and still-valid older keys.
    pub keys: Vec<SiteKey>,
}

impl SiteKeys {
    /// A document for `origin` listing `keys`.
    pub fn new(origin: Origin, site_name: impl Into<String>, keys: &[VerifyingKey]) -> Self {
        Self {
            origin,
            site_name: site_name.into(),
            keys: keys.iter().map(SiteKey::from_verifying_key).collect(),
        }
    }

    /// Parses and checks a keys document: at most [`MAX_SITE_KEYS_BYTES`], one to
    /// [`MAX_SITE_KEYS`] keys, each a well-formed Ed25519 JWK with a valid, distinct `kid`.
    /// Never panics.
    pub fn parse(bytes: &[u8]) -> Result<Self, SiteAuthError> {
        if bytes.len() > MAX_SITE_KEYS_BYTES {
            return Err(SiteAuthError::Malformed("the keys document is too large"));
        }
        let keys: Self = serde_json::from_slice(bytes)
            .map_err(|_| SiteAuthError::Malformed("the keys document is not valid"))?;
        keys.check()?;
        Ok(keys)
    }

    /// The checks [`SiteKeys::parse`] makes, for a document built in code.
    pub fn check(&self) -> Result<(), SiteAuthError> {
        if self.keys.is_empty() || self.keys.len() > MAX_SITE_KEYS {
            return Err(SiteAuthError::Malformed(
                "the keys document must list 1 to 16 keys",
            ));
        }
        for (i, key) in self.keys.iter().enumerate() {
            check_kid(&key.kid)?;
            key.verifying_key()?;
            if self.keys[..i].iter().any(|k| k.kid == key.kid) {
                return Err(SiteAuthError::Malformed("a kid is listed twice"));
            }
        }
        Ok(())
    }

    /// The key named `kid`.
    pub fn key(&self, kid: &str) -> Option<&SiteKey> {
        self.keys.iter().find(|k| k.kid == kid)
    }
}

fn check_kid(kid: &str) -> Result<(), SiteAuthError> {
    let ok = !kid.is_empty()
        && kid.len() <= MAX_KID_LEN
        && kid
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(SiteAuthError::Malformed(
            "a kid must match [A-Za-z0-9_-]{1,64}",
        ))
    }
}

/// What a site asks for: exactly the wallet's `request_claims` input, less the attestation.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirements {
    pub origin: Origin,
    pub nonce: Nonce,
    pub site_name: String,
    pub purpose: String,
    pub claims: Vec<Claim>,
}

/// The site's signature over a set of requirements.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Attestation {
    /// The signing key's id in the site's keys document.
    pub kid: String,
    /// Unix milliseconds after which the attestation no longer holds (the nonce's expiry).
    pub expires_at_ms: i64,
    /// The 64-byte Ed25519 signature, base64url without padding.
    pub signature: String,
}

impl Attestation {
    /// The expiry as a [`Timestamp`].
    pub fn expires_at(&self) -> Timestamp {
        Timestamp::from_millis(self.expires_at_ms)
    }
}

fn push_field(out: &mut Vec<u8>, bytes: &[u8]) {
    // Every field is bounded far below 4 GiB by the wallet's and the site's own limits; a
    // longer one saturates the prefix and can only fail to verify.
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(bytes);
}

/// The bytes a site signs: [`REQUIREMENTS_DOMAIN`], then origin, nonce, site name, purpose (each
/// as a 4-byte big-endian length and UTF-8), the number of claims (4 bytes) and each claim's
/// canonical form (length-prefixed), then the expiry as 8-byte big-endian signed milliseconds.
pub fn requirements_signing_bytes(
    origin: &Origin,
    nonce: &Nonce,
    site_name: &str,
    purpose: &str,
    claims: &[Claim],
    expires_at: Timestamp,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(REQUIREMENTS_DOMAIN);
    push_field(&mut out, origin.as_str().as_bytes());
    push_field(&mut out, nonce.as_str().as_bytes());
    push_field(&mut out, site_name.as_bytes());
    push_field(&mut out, purpose.as_bytes());
    let count = u32::try_from(claims.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&count.to_be_bytes());
    for claim in claims {
        push_field(&mut out, claim.canonical().as_bytes());
    }
    out.extend_from_slice(&expires_at.millis().to_be_bytes());
    out
}

fn signing_bytes_of(requirements: &Requirements, expires_at: Timestamp) -> Vec<u8> {
    requirements_signing_bytes(
        &requirements.origin,
        &requirements.nonce,
        &requirements.site_name,
        &requirements.purpose,
        &requirements.claims,
        expires_at,
    )
}

/// Signs `requirements` with the site's `key` (published under `kid`), valid until
/// `expires_at`.
pub fn sign_requirements(
    key: &SigningKey,
    kid: &str,
    requirements: &Requirements,
    expires_at: Timestamp,
) -> Attestation {
    let signature = key.sign(&signing_bytes_of(requirements, expires_at));
    Attestation {
        kid: kid.to_owned(),
        expires_at_ms: expires_at.millis(),
        signature: URL_SAFE_NO_PAD.encode(signature.to_bytes()),
    }
}

/// The attestation a site hands out with the requirements for one nonce it has just issued
/// (`issued_at`, open until `nonce_expires_at`): signed over exactly those requirements, and
/// lapsing when the nonce does — so an agent never holds signed requirements for a nonce the
/// site no longer honours — but never later than a wallet accepts
/// ([`MAX_ATTESTATION_LIFETIME_MS`] after issue).
pub fn attest_for_nonce(
    key: &SigningKey,
    kid: &str,
    requirements: &Requirements,
    issued_at: Timestamp,
    nonce_expires_at: Timestamp,
) -> Attestation {
    let latest = issued_at.plus_millis(MAX_ATTESTATION_LIFETIME_MS);
    sign_requirements(key, kid, requirements, nonce_expires_at.min(latest))
}

/// Checks that `attestation` is the site's signature over exactly `requirements`, by a key in
/// `keys` (which must be the keys document of the requirements' origin), at `now`.
pub fn verify_requirements(
    keys: &SiteKeys,
    requirements: &Requirements,
    attestation: &Attestation,
    now: Timestamp,
) -> Result<(), SiteAuthError> {
    if keys.origin != requirements.origin {
        return Err(SiteAuthError::OriginMismatch);
    }
    check_kid(&attestation.kid)?;
    let key = keys
        .key(&attestation.kid)
        .ok_or(SiteAuthError::UnknownKey)?
        .verifying_key()?;
    let signature: [u8; 64] = decode_fixed(&attestation.signature).ok_or(
        SiteAuthError::Malformed("the signature is not 64 bytes of base64url"),
    )?;
    let expires_at = attestation.expires_at();
    if expires_at.millis() > now.millis().saturating_add(MAX_ATTESTATION_LIFETIME_MS) {
        return Err(SiteAuthError::Malformed(
            "the attestation expires more than a day ahead",
        ));
    }
    key.verify_strict(
        &signing_bytes_of(requirements, expires_at),
        &Signature::from_bytes(&signature),
    )
    .map_err(|_| SiteAuthError::BadSignature)?;
    if now >= expires_at {
        return Err(SiteAuthError::Expired);
    }
    Ok(())
}

/// Exactly `N` bytes of unpadded base64url, or nothing.
fn decode_fixed<const N: usize>(text: &str) -> Option<[u8; N]> {
    // 4 characters per 3 bytes, rounded up: refuse anything longer before decoding.
    if text.len() > N.div_ceil(3) * 4 {
        return None;
    }
    URL_SAFE_NO_PAD.decode(text).ok()?.try_into().ok()
}
