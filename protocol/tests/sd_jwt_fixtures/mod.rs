//! What `sd_jwt.rs` and `sd_jwt_interop.rs` both start from: the issuer, audience and nonce, the
//! clock, keys derived from a label, and the income credential's claims.
#![allow(dead_code)]

use p256::ecdsa::SigningKey;
use serde_json::{Map, json};
use sha2::{Digest, Sha256};
use tacit_protocol::request_auth::{InstallKey, Jwk};
use tacit_protocol::sd_jwt::{IssuedClaims, IssuerKey, Jwks};
use wallet_core::Timestamp;

pub const ISS: &str = "http://127.0.0.1:8091";
pub const VCT: &str = "https://tacit.example/vct/income";
pub const AUD: &str = "http://127.0.0.1:8081";
pub const NONCE: &str = "0123456789abcdef0123456789abcdef";
/// 2026-05-01T09:30:00Z.
pub const IAT_MS: i64 = 1_777_627_800_000;
pub const DAY_MS: i64 = 86_400_000;

/// A P-256 key derived from `label`.
pub fn key(label: &str) -> SigningKey {
    SigningKey::from_slice(&Sha256::digest(label.as_bytes())).unwrap()
}

pub fn jwk_of(k: &SigningKey) -> Jwk {
    InstallKey::from_verifying_key(*k.verifying_key()).to_jwk()
}

/// A JWKS holding `k` alone, under `kid`.
pub fn jwks_with(kid: &str, k: &SigningKey) -> Jwks {
    Jwks::new(vec![IssuerKey {
        kid: kid.into(),
        key: *k.verifying_key(),
    }])
    .unwrap()
}

/// A day after issuance.
pub fn now() -> Timestamp {
    Timestamp::from_millis(IAT_MS + DAY_MS)
}

/// The plain claims of an income credential from `ISS` bound to `holder`, valid 30 days from
/// `IAT_MS`, with the currency EUR.
pub fn income_claims(holder: &SigningKey) -> IssuedClaims {
    let mut plain = Map::new();
    plain.insert("currency".into(), json!("EUR"));
    IssuedClaims {
        iss: ISS.into(),
        vct: VCT.into(),
        iat: Timestamp::from_millis(IAT_MS),
        exp: Timestamp::from_millis(IAT_MS + 30 * DAY_MS),
        cnf_jwk: jwk_of(holder),
        plain,
    }
}
