//! Issuer key sets: a JWK Set of P-256 keys, each with a `kid`, and the SD-JWT VC issuer
//! metadata document that carries it (`/.well-known/jwt-vc-issuer`).

use super::{SdJwtError, jwk_to_key, key_to_jwk};
use crate::request_auth::Jwk;
use p256::ecdsa::VerifyingKey;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most keys a [`Jwks`] may hold (current and rotated-out keys of one issuer).
pub const MAX_JWKS_KEYS: usize = 32;
/// The longest `kid` accepted.
pub const MAX_KID_LEN: usize = 128;
/// The largest JWKS or issuer-metadata document [`Jwks::parse`] / [`IssuerMetadata::parse`] read.
pub const MAX_JWKS_BYTES: usize = 16 * 1024;

/// One issuer key: a P-256 public key with its key id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuerKey {
    pub kid: String,
    pub key: VerifyingKey,
}

impl IssuerKey {
    /// This key as a JWK (`kty`, `crv`, `x`, `y`), without its `kid`.
    pub fn jwk(&self) -> Jwk {
        key_to_jwk(&self.key)
    }
}

/// A JWK Set of ES256 (P-256) keys, each named by a distinct `kid`.
///
/// Strict on input: every key is `kty` `EC`, `crv` `P-256`, a point on the curve, with a `kid` of
/// 1 to [`MAX_KID_LEN`] printable ASCII characters; `alg` (if present) is `ES256` and `use` (if
/// present) is `sig`; no other members; at most [`MAX_JWKS_KEYS`] keys; no `kid` twice.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "JwksWire", into = "JwksWire")]
pub struct Jwks {
    keys: Vec<IssuerKey>,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JwksWire {
    keys: Vec<JwkWire>,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JwkWire {
    kty: String,
    crv: String,
    x: String,
    y: String,
    kid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    alg: Option<String>,
    #[serde(default, rename = "use", skip_serializing_if = "Option::is_none")]
    use_: Option<String>,
}

/// `{"keys": [ {…}, … ]}` with every key an object whose optional `alg` and `use` are strings.
fn jwks_shape_ok(value: &Value) -> bool {
    let Some(keys) = value
        .as_object()
        .and_then(|o| o.get("keys"))
        .and_then(Value::as_array)
    else {
        return false;
    };
    keys.iter().all(|key| {
        key.as_object().is_some_and(|k| {
            ["alg", "use"]
                .iter()
                .all(|m| k.get(*m).is_none_or(Value::is_string))
        })
    })
}

fn kid_ok(kid: &str) -> bool {
    !kid.is_empty() && kid.len() <= MAX_KID_LEN && kid.bytes().all(|b| b.is_ascii_graphic())
}

impl Jwks {
    /// A key set of the given keys (refused if a `kid` is malformed or repeated, or too many).
    pub fn new(keys: Vec<IssuerKey>) -> Result<Self, SdJwtError> {
        if keys.len() > MAX_JWKS_KEYS {
            return Err(SdJwtError::BadJwks);
        }
        for (i, k) in keys.iter().enumerate() {
            if !kid_ok(&k.kid) || keys.iter().skip(i + 1).any(|o| o.kid == k.kid) {
                return Err(SdJwtError::BadJwks);
            }
        }
        Ok(Self { keys })
    }

    /// Parses a JWK Set document (`{"keys":[…]}`), strictly; see [`Jwks`]. Objects only where the
    /// format has objects (serde would read a struct from an array of its fields), no member
    /// twice, no `null` for an optional member.
    pub fn parse(bytes: &[u8]) -> Result<Self, SdJwtError> {
        if bytes.len() > MAX_JWKS_BYTES {
            return Err(SdJwtError::BadJwks);
        }
        let value = super::strict_json::parse(bytes).ok_or(SdJwtError::BadJwks)?;
        if !jwks_shape_ok(&value) {
            return Err(SdJwtError::BadJwks);
        }
        serde_json::from_value(value).map_err(|_| SdJwtError::BadJwks)
    }

    /// The key named `kid`.
    pub fn key(&self, kid: &str) -> Option<&VerifyingKey> {
        self.keys.iter().find(|k| k.kid == kid).map(|k| &k.key)
    }

    /// Every key, in order.
    pub fn keys(&self) -> &[IssuerKey] {
        &self.keys
    }

    /// The JSON document (`{"keys":[{"kty":"EC","crv":"P-256","x":…,"y":…,"kid":…,"alg":"ES256","use":"sig"}]}`).
    pub fn to_json(&self) -> String {
        serde_json::to_string(&JwksWire::from(self.clone())).unwrap_or_default()
    }
}

impl TryFrom<JwksWire> for Jwks {
    type Error = SdJwtError;
    fn try_from(wire: JwksWire) -> Result<Self, SdJwtError> {
        if wire.keys.len() > MAX_JWKS_KEYS {
            return Err(SdJwtError::BadJwks);
        }
        let mut keys = Vec::with_capacity(wire.keys.len());
        for k in wire.keys {
            if k.alg.as_deref().is_some_and(|a| a != "ES256")
                || k.use_.as_deref().is_some_and(|u| u != "sig")
            {
                return Err(SdJwtError::BadJwks);
            }
            let jwk = Jwk {
                kty: k.kty,
                crv: k.crv,
                x: k.x,
                y: k.y,
            };
            let key = jwk_to_key(&jwk).map_err(|_| SdJwtError::BadJwks)?;
            keys.push(IssuerKey { kid: k.kid, key });
        }
        Self::new(keys)
    }
}

impl From<Jwks> for JwksWire {
    fn from(set: Jwks) -> Self {
        Self {
            keys: set
                .keys
                .into_iter()
                .map(|k| {
                    let jwk = key_to_jwk(&k.key);
                    JwkWire {
                        kty: jwk.kty,
                        crv: jwk.crv,
                        x: jwk.x,
                        y: jwk.y,
                        kid: k.kid,
                        alg: Some("ES256".to_owned()),
                        use_: Some("sig".to_owned()),
                    }
                })
                .collect(),
        }
    }
}

/// SD-JWT VC issuer metadata, served at `<issuer>/.well-known/jwt-vc-issuer`:
/// `{ "issuer": "<iss>", "jwks": { "keys": [ … ] } }`.
///
/// A verifier pins this document (or the [`Jwks`] in it) per issuer; it never fetches a key from a
/// URL named inside a token.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerMetadata {
    pub issuer: String,
    pub jwks: Jwks,
}

/// Why an answer did not give an issuer's keys ([`IssuerMetadata::keys_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IssuerKeysError {
    /// Well-formed metadata of a different issuer.
    #[error("the issuer metadata names another issuer")]
    OtherIssuer,
    /// Neither metadata nor (where allowed) a bare key set.
    #[error("not issuer metadata nor a JWK set")]
    NotKeys,
    /// Not metadata, where only metadata counts (a fetched answer).
    #[error("the answer is not issuer metadata")]
    NotMetadata,
}

impl IssuerKeysError {
    /// The sentence, for callers that carry `&'static str` reasons.
    pub fn reason(self) -> &'static str {
        match self {
            Self::OtherIssuer => "the issuer metadata names another issuer",
            Self::NotKeys => "not issuer metadata nor a JWK set",
            Self::NotMetadata => "the answer is not issuer metadata",
        }
    }
}

impl IssuerMetadata {
    /// The keys `issuer` publishes, read from `bytes`: its metadata, which must name `issuer`
    /// itself (so one issuer's answer never supplies another's keys), or — only when `bare_ok`,
    /// for a file the site's operator pinned — a bare JWK set. A fetched answer must say whose
    /// keys it holds, so a bare set is refused there.
    pub fn keys_of(bytes: &[u8], issuer: &str, bare_ok: bool) -> Result<Jwks, IssuerKeysError> {
        match Self::parse(bytes) {
            Ok(meta) if meta.issuer == issuer => Ok(meta.jwks),
            Ok(_) => Err(IssuerKeysError::OtherIssuer),
            Err(_) if bare_ok => Jwks::parse(bytes).map_err(|_| IssuerKeysError::NotKeys),
            Err(_) => Err(IssuerKeysError::NotMetadata),
        }
    }

    /// Parses the metadata document strictly (size capped; `issuer` non-empty, at most 2 KiB).
    pub fn parse(bytes: &[u8]) -> Result<Self, SdJwtError> {
        if bytes.len() > MAX_JWKS_BYTES {
            return Err(SdJwtError::BadJwks);
        }
        let value = super::strict_json::parse(bytes).ok_or(SdJwtError::BadJwks)?;
        let shape_ok = value
            .as_object()
            .and_then(|o| o.get("jwks"))
            .is_some_and(jwks_shape_ok);
        if !shape_ok {
            return Err(SdJwtError::BadJwks);
        }
        let meta: Self = serde_json::from_value(value).map_err(|_| SdJwtError::BadJwks)?;
        if meta.issuer.is_empty() || meta.issuer.len() > 2048 {
            return Err(SdJwtError::BadJwks);
        }
        Ok(meta)
    }

    /// The JSON document.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}
