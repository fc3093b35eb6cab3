//! SD-JWT fixtures: an issuer whose key the test makes (`sd_jwt::issue`, the issuer's own
//! ladder rules), native holder keys (`sd_jwt::present`), receipts whose entries name issuers.

use p256::ecdsa::SigningKey as EcKey;
use serde_json::{Map, Value, json};
use tacit_protocol::predicates::{self, AGE_THRESHOLDS};
use tacit_protocol::request_auth::Jwk;
use tacit_protocol::sd_jwt::{
    Credential, IssuedClaims, IssuerKey, IssuerMetadata, Jwks, issue, present,
};
use tacit_site::{Issuer, Trust};
use wallet_core::receipt::sign;
use wallet_core::{Attribute, Nonce, Origin, Timestamp};

pub use tacit_testkit::fixtures::{Answer, payload_with};

use super::MINUTE;

pub const DAY: i64 = 24 * 60 * MINUTE;

/// A P-256 key from a seed byte (never zero).
pub fn ec_key(seed: u8) -> EcKey {
    EcKey::from_slice(&[seed; 32]).unwrap()
}

/// A holder key the wallet would keep in WebCrypto.
pub fn holder_key(seed: u8) -> EcKey {
    ec_key(seed.wrapping_add(100))
}

pub fn jwk_of(key: &EcKey) -> Jwk {
    IssuerKey {
        kid: "x".into(),
        key: *key.verifying_key(),
    }
    .jwk()
}

/// The credential type of the test issuers' income credentials.
pub const INCOME_VCT: &str = "https://tacit.example/vct/income";
/// The credential type of the test issuers' age credentials.
pub const AGE_VCT: &str = "https://tacit.example/vct/age";

/// An issuer the test runs: its key, `kid`, origin and name.
pub struct TestIssuer {
    pub key: EcKey,
    pub kid: String,
    pub origin: Origin,
    pub name: String,
}

impl TestIssuer {
    pub fn new(seed: u8, origin: &str, name: &str) -> Self {
        Self {
            key: ec_key(seed),
            kid: format!("kid-{seed}"),
            origin: Origin::parse(origin).unwrap(),
            name: name.to_owned(),
        }
    }

    /// The tax office the housing site trusts.
    pub fn tax_office() -> Self {
        Self::new(31, "http://127.0.0.1:8791", "Tax Office Nordstadt")
    }

    /// The civil registry the pharmacy trusts.
    pub fn registry() -> Self {
        Self::new(32, "http://127.0.0.1:8792", "Civil Registry Nordstadt")
    }

    pub fn jwks(&self) -> Jwks {
        Jwks::new(vec![IssuerKey {
            kid: self.kid.clone(),
            key: *self.key.verifying_key(),
        }])
        .unwrap()
    }

    /// What `/.well-known/jwt-vc-issuer` serves.
    pub fn metadata_json(&self) -> String {
        IssuerMetadata {
            issuer: self.origin.as_str().to_owned(),
            jwks: self.jwks(),
        }
        .to_json()
    }

    /// This issuer as a site trusts it, keys in hand: a civil registry for age (its
    /// `age_credential`s), any other for income (its `income_credential`s).
    pub fn trusted(&self) -> Issuer {
        let (vouches_for, vct) = if self.name.starts_with("Civil Registry") {
            (Attribute::Age, AGE_VCT)
        } else {
            (Attribute::Income, INCOME_VCT)
        };
        Issuer {
            issuer: self.origin.clone(),
            name: self.name.clone(),
            vouches_for,
            vct: vct.to_owned(),
            jwks: Some(self.jwks()),
            status: None,
        }
    }

    /// A credential of type `vct` with `plain` and the disclosable `claims`, valid 30 days.
    pub fn issue(
        &self,
        holder: &EcKey,
        vct: &str,
        plain: Map<String, Value>,
        claims: Vec<(String, Value)>,
        iat: Timestamp,
    ) -> Credential {
        let salts: Vec<[u8; 16]> = (0..claims.len())
            .map(|i| {
                let mut salt = [holder.to_bytes()[0]; 16];
                salt[0] = i as u8;
                salt
            })
            .collect();
        let text = issue(
            &self.key,
            &self.kid,
            &IssuedClaims {
                iss: self.origin.as_str().to_owned(),
                vct: vct.to_owned(),
                iat,
                exp: iat.plus_millis(30 * DAY),
                cnf_jwk: jwk_of(holder),
                plain,
            },
            &claims,
            &salts,
        )
        .unwrap();
        Credential::parse(&text).unwrap()
    }

    /// An income credential (the ladder, plain `currency`) for an income of `income_minor`.
    pub fn income_credential(
        &self,
        holder: &EcKey,
        income_minor: u64,
        currency: &str,
        iat: Timestamp,
    ) -> Credential {
        let mut plain = Map::new();
        plain.insert("currency".into(), json!(currency));
        let ladder = predicates::income_ladder()
            .map(|step| {
                (
                    predicates::income_claim_name(step),
                    json!(income_minor < step * 100),
                )
            })
            .collect();
        self.issue(holder, INCOME_VCT, plain, ladder, iat)
    }

    /// An age credential for someone `age` years old.
    pub fn age_credential(&self, holder: &EcKey, age: u8, iat: Timestamp) -> Credential {
        let claims = AGE_THRESHOLDS
            .into_iter()
            .map(|years| (predicates::age_claim_name(years), json!(age >= years)))
            .collect();
        self.issue(holder, AGE_VCT, Map::new(), claims, iat)
    }
}

/// A trust list of `issuers`, keys in hand.
pub fn trust(issuers: &[&TestIssuer]) -> Trust {
    Trust {
        issuers: issuers.iter().map(|i| i.trusted()).collect(),
    }
}

/// A presentation of `credential` disclosing `keep`, key-bound to `aud` and `nonce` at `iat`.
pub fn presentation(
    credential: &Credential,
    keep: &[&str],
    holder: &EcKey,
    aud: &Origin,
    nonce: &Nonce,
    iat: Timestamp,
) -> String {
    present(credential, keep, holder, aud.as_str(), nonce.as_str(), iat).unwrap()
}

/// A signed receipt with issuer-backed entries, as the JSON check_proposal returns.
pub fn receipt_with(
    audience: &Origin,
    nonce: &Nonce,
    answers: &[Answer],
    issued: Timestamp,
    key: &ed25519_dalek::SigningKey,
) -> Value {
    serde_json::to_value(sign(
        payload_with(audience, nonce, answers, issued),
        key,
        issued,
    ))
    .unwrap()
}
