//! The wallet's credentials: SD-JWT VCs from issuers (a tax office, a civil registry) that carry
//! issuer-fixed predicates (`income_below_30000`, `age_equal_or_over_18`), never a raw value.
//!
//! Pure: no clock, no I/O. The page fetches, generates holder keys and signs; this module decides
//! what a batch must be to be kept ([`Credentials::accept_batch`]), which claim a credential
//! answers ([`Credentials::answer`]) and which credential a release presents
//! ([`Credentials::take_for`]). It is serialisable so the page can seal it with the vault.
//!
//! # What a batch must be
//! An issuer answers `POST /v1/credentials` with one credential per holder key the wallet sent.
//! Every credential is checked: the issuer's signature with the key set of the issuer's metadata
//! (whose `issuer` must be the origin asked, [`jwks_from_metadata`]), `iss` = that origin, `vct` =
//! the type for the issuer's attribute, not expired, bound (`cnf.jwk`) to the holder key sent at
//! its position. And every credential of a batch must say **the same thing** (same key id, same
//! `iat` and `exp`, the same plain claims, the same predicate names and values): otherwise the
//! issuer could tag each credential, and a site could tell which of the person's presentations it
//! received. The only plain claim allowed is an income credential's `currency`; every disclosure
//! must be a boolean predicate of the issuer's attribute, and the predicates must be consistent
//! (below a step implies below every higher step; over an age implies over every lower one).
//!
//! A batch must also look like **everyone's batch that day**, so that neither two sites holding
//! one presentation each of it, nor the issuer and one site, can match a presentation to a
//! batch: every credential's `iat` is midnight UTC of the day it is received (or of the
//! neighbouring day, within [`sd_jwt::MAX_FUTURE_SKEW_MS`] of midnight) and its `exp` exactly
//! [`CREDENTIAL_VALIDITY_MS`] later (`tacit_protocol::issuance::claims::on_issuance_grid`), and
//! it is signed with the issuer's **current key**: the first key of the key set its metadata
//! publishes (issuers list their active key first and keep rotated-out keys after it, only so
//! that what they signed keeps verifying). A batch off the grid or under another key is refused
//! whole ([`CredentialError::OffGrid`], [`CredentialError::NotCurrentKey`]).
//!
//! # An age predicate a birthday may have turned
//! An age credential does not end at the person's next birthday (its `exp` would tell any site
//! the date). Its predicates describe the UTC day of its `iat`; the wallet knows the date of
//! birth the person typed, and a `false` `age_equal_or_over_<n>` that the typed date says may
//! have turned since that day (a birthday between `iat` and now) is not used any more: the
//! `*_typed` methods ([`Credentials::answer_typed`], [`Credentials::take_for_typed`]) skip it
//! (the claim is then answered from the typed profile), and [`Credentials::needs_refill_typed`]
//! / [`Credentials::refills_due`] ask for a new batch, as when proofs run low. The methods
//! without a profile ([`Credentials::answer`], …) trust a credential until its `exp`.
//!
//! # One credential per presentation
//! A presentation reveals its credential's issuer signature, salts and holder key, so the wallet
//! never presents one credential twice: [`Credentials::take_for`] marks the credential it picks as
//! used at once, and the page must persist the credentials before anything leaves.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tacit_protocol::issuance::claims::{age_may_have_turned, on_issuance_grid};
use tacit_protocol::predicates::{self, CURRENCY_CLAIM, IssuerAttribute};
use tacit_protocol::request_auth::InstallKey;
use tacit_protocol::sd_jwt::{self, Credential, IssuerMetadata, MAX_FUTURE_SKEW_MS, SdJwtError};
use wallet_core::{Attribute, Claim, Currency, Origin, Profile, Timestamp};

/// How long every issuer credential lives: `exp` = `iat` + this (30 days), `iat` being midnight
/// UTC of the day of issuance. The protocol's, shared with the issuers.
pub use tacit_protocol::issuance::claims::CREDENTIAL_VALIDITY_MS;

pub use tacit_protocol::request_auth::Jwk;
pub use tacit_protocol::sd_jwt::Jwks;

/// Most issuers the wallet keeps credentials from.
pub const MAX_ISSUERS: usize = 4;
/// Most credentials kept per issuer.
pub const MAX_PER_ISSUER: usize = 40;
/// Most credentials one batch may carry (the issuer's own limit), and how many holder keys the
/// wallet asks a batch for: the protocol's, shared with the issuers.
pub use tacit_protocol::limits::{DEFAULT_BATCH, MAX_BATCH};
/// Below this many unused credentials, the page fetches a new batch.
pub const REFILL_BELOW: usize = 3;
/// Largest issuer answer read (bytes).
pub const MAX_RESPONSE_BYTES: usize = 1 << 20;
/// Longest issuer display name (characters).
pub const MAX_NAME_CHARS: usize = 120;
/// Longest refresh token accepted (bytes).
pub const MAX_REFRESH_TOKEN_LEN: usize = 256;
/// Longest `vct` accepted (bytes).
pub const MAX_VCT_LEN: usize = 256;

/// Why a batch (or an issuer's description of itself) was refused. Each says what to tell the
/// person; none echoes the credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    #[error("the issuer's name must be 1 to 120 printable characters")]
    BadIssuerName,
    #[error("this issuer vouches for something the wallet cannot use (only income and age)")]
    UnsupportedAttribute,
    #[error("the issuer's credential type is not the one the wallet knows for {0}")]
    UnknownVct(&'static str),
    #[error("the issuer's description could not be read")]
    BadIssuerInfo,
    #[error("the issuer's key set could not be read")]
    BadMetadata,
    #[error("the issuer's metadata names another issuer than the one asked")]
    MetadataIssuerMismatch,
    #[error("the issuer's answer is too large")]
    TooLarge,
    #[error("the issuer's answer is not the expected JSON")]
    BadJson,
    #[error("the issuer's answer names another issuer than the one asked")]
    WrongIssuer,
    #[error("the issuer's answer is for another credential type")]
    WrongVct,
    #[error("the issuer's answer holds no credential")]
    EmptyBatch,
    #[error("the issuer's answer holds more than 20 credentials")]
    TooManyCredentials,
    #[error("the issuer sent {got} credentials for {sent} holder keys")]
    CountMismatch { got: usize, sent: usize },
    #[error("holder key {index} is not a P-256 key")]
    BadHolderKey { index: usize },
    #[error("the same holder key was used twice")]
    DuplicateHolderKey,
    #[error("credential {index} is not valid: {error}")]
    Invalid { index: usize, error: SdJwtError },
    #[error("credential {index} has already expired")]
    Expired { index: usize },
    #[error("credential {index} names another issuer than the one asked")]
    CredentialIssuer { index: usize },
    #[error("credential {index} is of another type than the issuer's")]
    CredentialVct { index: usize },
    #[error("credential {index} is bound to another key than the one the wallet sent for it")]
    HolderKeyMismatch { index: usize },
    #[error(
        "credential {index} carries claims the wallet does not expect (only boolean predicates \
         and, for income, the currency); they could identify the person"
    )]
    UnexpectedClaims { index: usize },
    #[error("the credential carries no predicate")]
    NoPredicates,
    #[error("the credential's predicates contradict each other")]
    Inconsistent,
    #[error(
        "credential {index} differs from the first of its batch; such a batch could tell the \
         person's presentations apart, so none is kept"
    )]
    Tagged { index: usize },
    #[error(
        "credential {index} is not on the issuers' daily grid (issued at midnight UTC today, \
         valid 30 days); such times could tell the person's presentations apart, so none is kept"
    )]
    OffGrid { index: usize },
    #[error(
        "credential {index} is not signed with the issuer's current key (the first key it \
         publishes); a key for some people only could tell them apart, so none is kept"
    )]
    NotCurrentKey { index: usize },
    #[error("the issuer's refresh token is malformed")]
    BadRefreshToken,
    #[error("the wallet keeps credentials from at most 4 issuers; remove one first")]
    TooManyIssuers,
}

/// What the wallet knows about an issuer before it asks for credentials (its `GET /v1/issuer`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerInfo {
    /// The origin the person typed (the `iss` every credential must carry).
    pub origin: Origin,
    /// The display name ("Tax Office Nordstadt").
    pub name: String,
    /// What it vouches for: [`Attribute::Income`] or [`Attribute::Age`].
    pub attribute: Attribute,
    /// The credential type.
    pub vct: String,
}

impl IssuerInfo {
    /// Reads an issuer's `GET /v1/issuer` answer for `origin`: its `issuer` must be `origin`, its
    /// `attribute` `income` or `birth_date`, its `vct` the type the wallet knows for it, its
    /// `name` 1 to [`MAX_NAME_CHARS`] printable characters.
    pub fn parse(origin: &Origin, bytes: &[u8]) -> Result<Self, CredentialError> {
        if bytes.len() > sd_jwt::MAX_JWKS_BYTES {
            return Err(CredentialError::BadIssuerInfo);
        }
        let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(bytes) else {
            return Err(CredentialError::BadIssuerInfo);
        };
        let text = |key: &str| map.get(key).and_then(Value::as_str);
        if text("issuer") != Some(origin.as_str()) {
            return Err(CredentialError::MetadataIssuerMismatch);
        }
        let attribute = text("attribute")
            .and_then(IssuerAttribute::parse)
            .ok_or(CredentialError::UnsupportedAttribute)?
            .proves();
        let info = Self {
            origin: origin.clone(),
            name: text("name")
                .ok_or(CredentialError::BadIssuerName)?
                .to_owned(),
            attribute,
            vct: text("vct")
                .ok_or(CredentialError::BadIssuerInfo)?
                .to_owned(),
        };
        info.check()?;
        Ok(info)
    }

    fn check(&self) -> Result<(), CredentialError> {
        check_name(&self.name)?;
        let expected = expected_vct(self.attribute)?;
        if self.vct != expected {
            return Err(CredentialError::UnknownVct(self.attribute.name()));
        }
        Ok(())
    }
}

/// The attributes an issuer can vouch for, each with the issuer's attribute. An attribute not
/// listed (a claim kind added later) has no credential until it is listed here: the safe default.
const ISSUED: [(Attribute, IssuerAttribute); 2] = [
    (Attribute::Income, IssuerAttribute::Income),
    (Attribute::Age, IssuerAttribute::BirthDate),
];

/// The one credential type the wallet accepts for `attribute`.
pub fn expected_vct(attribute: Attribute) -> Result<&'static str, CredentialError> {
    ISSUED
        .iter()
        .find(|(a, _)| *a == attribute)
        .map(|(_, issued)| issued.default_vct())
        .ok_or(CredentialError::UnsupportedAttribute)
}

fn check_name(name: &str) -> Result<(), CredentialError> {
    let count = name.chars().count();
    let printable = !name.chars().any(char::is_control);
    if (1..=MAX_NAME_CHARS).contains(&count) && printable && name.trim() == name {
        Ok(())
    } else {
        Err(CredentialError::BadIssuerName)
    }
}

/// The issuer's key set from its `/.well-known/jwt-vc-issuer` document, whose `issuer` must be
/// exactly `origin` (never a key named inside a token).
pub fn jwks_from_metadata(origin: &Origin, bytes: &[u8]) -> Result<Jwks, CredentialError> {
    let meta = IssuerMetadata::parse(bytes).map_err(|_| CredentialError::BadMetadata)?;
    if meta.issuer != origin.as_str() {
        return Err(CredentialError::MetadataIssuerMismatch);
    }
    if meta.jwks.keys().is_empty() {
        return Err(CredentialError::BadMetadata);
    }
    Ok(meta.jwks)
}

/// The RFC 7638 thumbprint of a holder key (what the page stores its key pair under, and what
/// [`ProofToSign::holder_key_id`] names).
///
/// [`ProofToSign::holder_key_id`]: crate::gate::ProofToSign::holder_key_id
pub fn holder_key_id(jwk: &Jwk) -> Option<String> {
    InstallKey::from_jwk(jwk)
        .ok()
        .map(|k| k.id().as_str().to_owned())
}

/// The bytes each holder key signs to prove possession to `issuer` for `nonce` (UTF-8).
pub fn pop_input(issuer: &Origin, nonce: &str) -> String {
    tacit_protocol::issuer_pop::pop_signing_input(issuer.as_str(), nonce)
}

/// What authorises a batch: the one-time code (first batch) or the latest refresh token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchGrant<'a> {
    Code(&'a str),
    RefreshToken(&'a str),
}

/// The body of `POST /v1/credentials`: the grant, the issuer's nonce, and each holder key with its
/// 64-byte P1363 proof (WebCrypto's signature over [`pop_input`]), in the order the credentials
/// should come back.
pub fn request_body(grant: BatchGrant<'_>, nonce: &str, holder: &[(Jwk, [u8; 64])]) -> String {
    let keys: Vec<Value> = holder
        .iter()
        .map(|(jwk, proof)| {
            json!({
                "jwk": { "kty": jwk.kty, "crv": jwk.crv, "x": jwk.x, "y": jwk.y },
                "proof": URL_SAFE_NO_PAD.encode(proof),
            })
        })
        .collect();
    let body = match grant {
        BatchGrant::Code(code) => json!({ "code": code, "nonce": nonce, "holder_keys": keys }),
        BatchGrant::RefreshToken(token) => {
            json!({ "refresh_token": token, "nonce": nonce, "holder_keys": keys })
        }
    };
    body.to_string()
}

/// One stored credential. Its `Debug` does not print the credential.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredCredential {
    /// The compact SD-JWT as issued (`<issuer-jwt>~<d1>~…~`).
    sd_jwt: String,
    /// The RFC 7638 thumbprint of its holder key.
    holder_key_id: String,
    /// Its `iat`: its predicates are those of this UTC day. (Absent in records kept before it
    /// was stored; read from `sd_jwt` then.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    iat: Option<Timestamp>,
    exp: Timestamp,
    used: bool,
}

impl core::fmt::Debug for StoredCredential {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StoredCredential")
            .field("exp", &self.exp)
            .field("used", &self.used)
            .finish_non_exhaustive()
    }
}

impl StoredCredential {
    pub fn holder_key_id(&self) -> &str {
        &self.holder_key_id
    }
    pub fn exp(&self) -> Timestamp {
        self.exp
    }
    pub fn is_used(&self) -> bool {
        self.used
    }
    /// The compact SD-JWT as issued. Never hand it to an agent: it holds every disclosure.
    pub fn sd_jwt(&self) -> &str {
        &self.sd_jwt
    }
    /// Its `iat` (the day its predicates describe).
    pub fn iat(&self) -> Option<Timestamp> {
        self.iat
            .or_else(|| Credential::parse(&self.sd_jwt).ok().map(|c| c.iat()))
    }
    fn usable(&self, now: Timestamp) -> bool {
        !self.used && self.exp > now
    }
}

/// The threshold of an age predicate's disclosure name (`age_equal_or_over_18` → 18).
fn age_years(name: &str) -> Option<u8> {
    name.strip_prefix(predicates::AGE_PREFIX)?.parse().ok()
}

/// Everything kept from one issuer. Its `Debug` prints neither credentials nor refresh token.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerCredentials {
    origin: Origin,
    name: String,
    attribute: Attribute,
    vct: String,
    /// The plain `currency` of income credentials.
    currency: Option<Currency>,
    /// Disclosure name → value, the same in every credential kept.
    predicates: BTreeMap<String, bool>,
    /// The issuer's keys, to verify again.
    jwks: Jwks,
    /// The newest refresh token.
    refresh_token: Option<String>,
    credentials: Vec<StoredCredential>,
}

impl core::fmt::Debug for IssuerCredentials {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("IssuerCredentials")
            .field("origin", &self.origin)
            .field("name", &self.name)
            .field("attribute", &self.attribute)
            .field("credentials", &self.credentials.len())
            .finish_non_exhaustive()
    }
}

impl IssuerCredentials {
    pub fn origin(&self) -> &Origin {
        &self.origin
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn attribute(&self) -> Attribute {
        self.attribute
    }
    pub fn vct(&self) -> &str {
        &self.vct
    }
    pub fn currency(&self) -> Option<&Currency> {
        self.currency.as_ref()
    }
    pub fn jwks(&self) -> &Jwks {
        &self.jwks
    }
    pub fn credentials(&self) -> &[StoredCredential] {
        &self.credentials
    }
    /// Unused, unexpired credentials at `now`.
    pub fn left(&self, now: Timestamp) -> usize {
        self.credentials.iter().filter(|c| c.usable(now)).count()
    }
    /// Whether `credential`'s predicate `name` may have turned by `now` for the person whose
    /// typed profile is `typed`: a `false` age predicate with a birthday (by the typed date)
    /// between the credential's `iat` day and today. Without a typed profile, or for any other
    /// predicate, `false`. A credential whose `iat` cannot be read counts as turned.
    fn turned(
        &self,
        credential: &StoredCredential,
        name: &str,
        now: Timestamp,
        typed: Option<&Profile>,
    ) -> bool {
        let (Some(profile), Some(years), Some(false)) =
            (typed, age_years(name), self.predicates.get(name).copied())
        else {
            return false;
        };
        let days = credential
            .iat()
            .and_then(|iat| iat.checked_date_utc())
            .zip(now.checked_date_utc());
        match days {
            Some((issued, today)) => {
                age_may_have_turned(profile.date_of_birth(), years, issued, today)
            }
            None => true,
        }
    }

    /// Whether any predicate of `credential` may have turned ([`Self::turned`]).
    fn stale(
        &self,
        credential: &StoredCredential,
        now: Timestamp,
        typed: Option<&Profile>,
    ) -> bool {
        self.predicates
            .keys()
            .any(|name| self.turned(credential, name, now, typed))
    }

    /// Unused, unexpired credentials at `now` none of whose predicates may have turned for the
    /// typed profile (all unused, unexpired ones without one).
    pub fn left_typed(&self, now: Timestamp, typed: Option<&Profile>) -> usize {
        self.credentials
            .iter()
            .filter(|c| c.usable(now) && !self.stale(c, now, typed))
            .count()
    }

    /// Whether a credential can still answer the predicate `name` at `now`.
    fn answers(&self, name: &str, now: Timestamp, typed: Option<&Profile>) -> bool {
        self.credentials
            .iter()
            .any(|c| c.usable(now) && !self.turned(c, name, now, typed))
    }

    /// The value this issuer's credentials give `claim`, if they prove it.
    fn value_of(&self, claim: &Claim) -> Option<(String, bool)> {
        if claim.attribute() != self.attribute {
            return None;
        }
        let name = predicates::disclosure_for(claim, self.currency.as_ref())?;
        let value = *self.predicates.get(&name)?;
        Some((name, value))
    }
}

/// An issuer's credential and what the person typed answer one of the issuer's questions
/// differently ([`Credentials::disagreements`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    pub issuer: Origin,
    pub issuer_name: String,
    pub attribute: Attribute,
    /// The first question they answer differently (the lowest income step, the youngest age).
    pub claim: Claim,
    /// The credential's answer to it; what the person typed answers the opposite.
    pub credential_says: bool,
}

/// Sorts an issuer's questions: income steps by amount, ages by years.
fn order_key(claim: &Claim) -> u64 {
    match claim {
        Claim::IncomeBelow { limit } => limit.amount_minor,
        Claim::AgeAtLeast { years } => u64::from(*years),
        _ => u64::MAX,
    }
}

/// For the page: one line per issuer ("From Tax Office Nordstadt · valid until … · 7 proofs left").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CredentialSummary {
    pub origin: Origin,
    pub name: String,
    pub attribute: Attribute,
    /// The latest expiry among the unused credentials (`None` when none is left).
    pub valid_until: Option<Timestamp>,
    /// Unused, unexpired credentials.
    pub left: usize,
    /// Fewer than [`REFILL_BELOW`] left: fetch a batch with the refresh token.
    pub needs_refill: bool,
}

/// A credential picked for one presentation (see [`Credentials::take_for`]).
#[derive(Clone, PartialEq, Eq)]
pub struct Picked {
    /// The holder key that must sign the key-binding JWT.
    pub holder_key_id: String,
    /// `<issuer-jwt>~<the one disclosure>~`.
    pub without_kb: String,
    /// The disclosure's name (`income_below_30000`).
    pub disclosure: String,
}

impl core::fmt::Debug for Picked {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Picked")
            .field("disclosure", &self.disclosure)
            .finish_non_exhaustive()
    }
}

/// Why no credential could be picked for a presentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TakeError {
    /// No credentials from this issuer (removed, or never added).
    UnknownIssuer,
    /// The issuer's credentials do not prove this claim, or no longer give this answer.
    Mismatch,
    /// Every credential is used or expired.
    NoneLeft,
}

/// The wallet's credentials from every issuer. See the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, try_from = "CredentialsWire")]
pub struct Credentials {
    issuers: Vec<IssuerCredentials>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CredentialsWire {
    issuers: Vec<IssuerCredentials>,
}

/// Why a stored credentials record is not accepted (serde's `try_from` reports it).
#[derive(Debug, thiserror::Error)]
enum WireError {
    #[error("too many issuers")]
    TooManyIssuers,
    #[error("an issuer appears twice")]
    IssuerTwice,
    #[error("too many credentials")]
    TooManyCredentials,
    #[error(transparent)]
    Name(#[from] CredentialError),
}

impl TryFrom<CredentialsWire> for Credentials {
    type Error = WireError;
    fn try_from(wire: CredentialsWire) -> Result<Self, WireError> {
        if wire.issuers.len() > MAX_ISSUERS {
            return Err(WireError::TooManyIssuers);
        }
        for (i, issuer) in wire.issuers.iter().enumerate() {
            if wire.issuers[..i].iter().any(|o| o.origin == issuer.origin) {
                return Err(WireError::IssuerTwice);
            }
            if issuer.credentials.len() > MAX_PER_ISSUER {
                return Err(WireError::TooManyCredentials);
            }
            check_name(&issuer.name)?;
        }
        Ok(Self {
            issuers: wire.issuers,
        })
    }
}

/// A credential checked by [`Credentials::accept_batch`], before it is kept.
struct Checked {
    kid: String,
    iat: Timestamp,
    exp: Timestamp,
    currency: Option<Currency>,
    predicates: BTreeMap<String, bool>,
    stored: StoredCredential,
}

impl Credentials {
    /// No credentials.
    pub fn new() -> Self {
        Self::default()
    }

    /// As JSON, for the page to seal with the vault.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads what [`Self::to_json`] wrote (bounded: at most [`MAX_ISSUERS`] issuers and
    /// [`MAX_PER_ISSUER`] credentials each).
    pub fn from_json(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }

    pub fn is_empty(&self) -> bool {
        self.issuers.is_empty()
    }

    /// Every issuer kept, in the order added.
    pub fn issuers(&self) -> &[IssuerCredentials] {
        &self.issuers
    }

    pub fn issuer(&self, origin: &Origin) -> Option<&IssuerCredentials> {
        self.issuers.iter().find(|i| &i.origin == origin)
    }

    /// Checks an issuer's `POST /v1/credentials` answer (see the module docs) and keeps its
    /// credentials and refresh token. `holder_jwks[i]` is the key the wallet sent at position
    /// `i`; `jwks` the key set from the issuer's metadata ([`jwks_from_metadata`]). Returns how
    /// many credentials were added. Nothing changes unless the whole batch is accepted.
    ///
    /// Credentials already kept from this issuer that are used or expired are dropped; if the new
    /// batch says something else than the kept ones (the fact changed), all the kept ones are
    /// dropped. At most [`MAX_PER_ISSUER`] are kept (the newest).
    pub fn accept_batch(
        &mut self,
        meta: &IssuerInfo,
        jwks: &Jwks,
        response_json: &[u8],
        holder_jwks: &[Jwk],
        now: Timestamp,
    ) -> Result<usize, CredentialError> {
        meta.check()?;
        if response_json.len() > MAX_RESPONSE_BYTES {
            return Err(CredentialError::TooLarge);
        }
        let answer: BatchAnswer =
            serde_json::from_slice(response_json).map_err(|_| CredentialError::BadJson)?;
        if answer
            .issuer
            .as_deref()
            .is_some_and(|i| i != meta.origin.as_str())
        {
            return Err(CredentialError::WrongIssuer);
        }
        if answer.vct.as_deref().is_some_and(|v| v != meta.vct) {
            return Err(CredentialError::WrongVct);
        }
        let texts = answer.credentials;
        if texts.is_empty() {
            return Err(CredentialError::EmptyBatch);
        }
        if texts.len() > MAX_BATCH {
            return Err(CredentialError::TooManyCredentials);
        }
        if texts.len() != holder_jwks.len() {
            return Err(CredentialError::CountMismatch {
                got: texts.len(),
                sent: holder_jwks.len(),
            });
        }
        let mut ids: Vec<String> = Vec::with_capacity(holder_jwks.len());
        for (index, jwk) in holder_jwks.iter().enumerate() {
            let id = holder_key_id(jwk).ok_or(CredentialError::BadHolderKey { index })?;
            let known = self
                .issuers
                .iter()
                .flat_map(|i| &i.credentials)
                .any(|c| c.holder_key_id == id);
            if ids.contains(&id) || known {
                return Err(CredentialError::DuplicateHolderKey);
            }
            ids.push(id);
        }
        let refresh_token = answer
            .refresh_token
            .map(|t| {
                let ok = !t.is_empty()
                    && t.len() <= MAX_REFRESH_TOKEN_LEN
                    && t.bytes().all(|b| b.is_ascii_graphic());
                if ok {
                    Ok(t)
                } else {
                    Err(CredentialError::BadRefreshToken)
                }
            })
            .transpose()?;

        let mut checked: Vec<Checked> = Vec::with_capacity(texts.len());
        for (index, ((text, jwk), id)) in texts.iter().zip(holder_jwks).zip(ids).enumerate() {
            let one = check_credential(index, text, jwk, id, meta, jwks, now)?;
            if let Some(first) = checked.first() {
                let same = first.kid == one.kid
                    && first.iat == one.iat
                    && first.exp == one.exp
                    && first.currency == one.currency
                    && first.predicates == one.predicates;
                if !same {
                    return Err(CredentialError::Tagged { index });
                }
            }
            checked.push(one);
        }
        let Some(first) = checked.first() else {
            return Err(CredentialError::EmptyBatch);
        };
        let (currency, predicates) = (first.currency, first.predicates.clone());
        check_consistent(meta.attribute, &predicates)?;

        let added = checked.len();
        let new: Vec<StoredCredential> = checked.into_iter().map(|c| c.stored).collect();
        match self.issuers.iter_mut().find(|i| i.origin == meta.origin) {
            Some(issuer) => {
                let same_fact = issuer.attribute == meta.attribute
                    && issuer.currency == currency
                    && issuer.predicates == predicates;
                if same_fact {
                    issuer.credentials.retain(|c| c.usable(now));
                } else {
                    issuer.credentials.clear();
                }
                issuer.credentials.extend(new);
                let excess = issuer.credentials.len().saturating_sub(MAX_PER_ISSUER);
                issuer.credentials.drain(..excess);
                issuer.name = meta.name.clone();
                issuer.attribute = meta.attribute;
                issuer.vct = meta.vct.clone();
                issuer.currency = currency;
                issuer.predicates = predicates;
                issuer.jwks = jwks.clone();
                if refresh_token.is_some() {
                    issuer.refresh_token = refresh_token;
                }
            }
            None => {
                if self.issuers.len() >= MAX_ISSUERS {
                    return Err(CredentialError::TooManyIssuers);
                }
                self.issuers.push(IssuerCredentials {
                    origin: meta.origin.clone(),
                    name: meta.name.clone(),
                    attribute: meta.attribute,
                    vct: meta.vct.clone(),
                    currency,
                    predicates,
                    jwks: jwks.clone(),
                    refresh_token,
                    credentials: new,
                });
            }
        }
        Ok(added)
    }

    /// The answer a credential gives `claim` at `now` and its issuer: only for a claim at a
    /// ladder step (in the credential's currency) or an age threshold, and only from an issuer
    /// with at least one unused, unexpired credential left. Otherwise `None` (the claim is
    /// answered from what the person typed). Trusts a credential until its `exp`; with the
    /// typed profile at hand, use [`Self::answer_typed`].
    pub fn answer(&self, claim: &Claim, now: Timestamp) -> Option<(bool, Origin)> {
        self.answer_typed(claim, now, None)
    }

    /// [`Self::answer`], skipping an age predicate that the date of birth in `typed` (the
    /// person's profile) says may have turned since its credential's `iat`: such a claim is
    /// answered from the profile until a new batch comes ([`Self::needs_refill_typed`]).
    pub fn answer_typed(
        &self,
        claim: &Claim,
        now: Timestamp,
        typed: Option<&Profile>,
    ) -> Option<(bool, Origin)> {
        self.issuers.iter().find_map(|i| {
            let (name, value) = i.value_of(claim)?;
            i.answers(&name, now, typed)
                .then(|| (value, i.origin.clone()))
        })
    }

    /// Where what the person typed and an issuer's credential answer one of the issuer's
    /// questions differently, one per issuer whose credentials can still answer (the lowest
    /// such income step, or the youngest such age), in the order the issuers were added. For the
    /// page to tell the person beside the fact: sites that ask one of these questions are told
    /// the credential's answer ([`crate::Gate`] answers every question a credential can answer
    /// from it, so neither the label nor any refusal depends on whether they disagree).
    /// A typed income in another currency than the credential's answers none of its questions
    /// and is not counted as a disagreement.
    pub fn disagreements(&self, typed: &Profile, now: Timestamp) -> Vec<Disagreement> {
        self.issuers
            .iter()
            .filter_map(|i| {
                let mut differing: Vec<(u64, Claim, bool)> = i
                    .predicates
                    .iter()
                    .filter(|(name, _)| i.answers(name, now, Some(typed)))
                    .filter_map(|(name, &says)| {
                        let claim = predicates::claim_for(name, i.currency.as_ref())?;
                        let typed_says = wallet_core::evaluate(typed, &claim, now.date_utc())
                            .ok()?
                            .satisfied;
                        (typed_says != says).then(|| (order_key(&claim), claim, says))
                    })
                    .collect();
                differing.sort_by_key(|(key, _, _)| *key);
                let (_, claim, says) = differing.into_iter().next()?;
                Some(Disagreement {
                    issuer: i.origin.clone(),
                    issuer_name: i.name.clone(),
                    attribute: i.attribute,
                    claim,
                    credential_says: says,
                })
            })
            .collect()
    }

    /// What a credential answers `claim` at `now` when what the person typed answers it the
    /// other way, and whose credential it is; `None` when they agree, or no credential can
    /// answer it. For the consent card, beside the question.
    pub fn disagreement_on(
        &self,
        claim: &Claim,
        typed: &Profile,
        now: Timestamp,
    ) -> Option<(bool, Origin)> {
        let (says, issuer) = self.answer_typed(claim, now, Some(typed))?;
        let typed_says = wallet_core::evaluate(typed, claim, now.date_utc())
            .ok()?
            .satisfied;
        (typed_says != says).then_some((says, issuer))
    }

    /// Unused, unexpired credentials from `issuer` at `now` (0 for an unknown issuer).
    pub fn left(&self, issuer: &Origin, now: Timestamp) -> usize {
        self.issuer(issuer).map_or(0, |i| i.left(now))
    }

    /// Whether the page should fetch a new batch from `issuer` (a known issuer with fewer than
    /// [`REFILL_BELOW`] left). With the typed profile at hand, use [`Self::needs_refill_typed`].
    pub fn needs_refill(&self, issuer: &Origin, now: Timestamp) -> bool {
        self.needs_refill_typed(issuer, now, None)
    }

    /// Whether the page should fetch a new batch from `issuer`: a known issuer with fewer than
    /// [`REFILL_BELOW`] unused, unexpired credentials none of whose predicates the date of birth
    /// in `typed` says may have turned since the credential's `iat` (so a birthday that flips a
    /// `false` refills at once; the new batch, saying something else, replaces the old).
    pub fn needs_refill_typed(
        &self,
        issuer: &Origin,
        now: Timestamp,
        typed: Option<&Profile>,
    ) -> bool {
        self.issuer(issuer)
            .is_some_and(|i| i.left_typed(now, typed) < REFILL_BELOW)
    }

    /// Every issuer [`Self::needs_refill_typed`] says to fetch a new batch from, in the order
    /// added: for the page to check when it unlocks and after any answer, not only after a
    /// presentation (a credential turned stale is no longer presented, so nothing else would).
    pub fn refills_due(&self, now: Timestamp, typed: Option<&Profile>) -> Vec<Origin> {
        self.issuers
            .iter()
            .filter(|i| i.left_typed(now, typed) < REFILL_BELOW)
            .map(|i| i.origin.clone())
            .collect()
    }

    /// One line per issuer, for display.
    pub fn summary(&self, now: Timestamp) -> Vec<CredentialSummary> {
        self.issuers
            .iter()
            .map(|i| CredentialSummary {
                origin: i.origin.clone(),
                name: i.name.clone(),
                attribute: i.attribute,
                valid_until: i
                    .credentials
                    .iter()
                    .filter(|c| c.usable(now))
                    .map(|c| c.exp)
                    .max(),
                left: i.left(now),
                needs_refill: i.left(now) < REFILL_BELOW,
            })
            .collect()
    }

    /// The issuer's display name.
    pub fn issuer_name(&self, issuer: &Origin) -> Option<&str> {
        self.issuer(issuer).map(|i| i.name.as_str())
    }

    /// The status list URI `issuer`'s credentials name (the first that names one), for the page
    /// to read ([`Credentials::drop_revoked`]).
    pub fn status_uri(&self, issuer: &Origin) -> Option<String> {
        self.issuer(issuer)?.credentials.iter().find_map(|c| {
            Credential::parse(&c.sd_jwt)
                .ok()?
                .status()
                .map(|s| s.uri.clone())
        })
    }

    /// Drops `issuer`'s credentials whose entry in `list` (its status list, verified by the page
    /// with the issuer's keys for the URI they name) is not valid. Returns the holder key ids of
    /// the dropped ones, for the page to delete. When none is left, the issuer is forgotten (its
    /// refresh token is of a revoked chain too).
    pub fn drop_revoked(
        &mut self,
        issuer: &Origin,
        list: &tacit_protocol::status_list::StatusListToken,
    ) -> Vec<String> {
        let Some(held) = self.issuers.iter_mut().find(|i| &i.origin == issuer) else {
            return Vec::new();
        };
        let mut dropped = Vec::new();
        held.credentials.retain(|c| {
            let revoked = Credential::parse(&c.sd_jwt)
                .ok()
                .and_then(|cred| cred.status().map(|s| list.status_of(s)))
                .is_some_and(
                    |status| matches!(status, Ok(s) if s != tacit_protocol::status_list::VALID),
                );
            if revoked {
                dropped.push(c.holder_key_id.clone());
            }
            !revoked
        });
        if !dropped.is_empty() && held.credentials.is_empty() {
            dropped.extend(self.remove_issuer(issuer));
        }
        dropped
    }

    /// Forgets an issuer. Returns the holder key ids of its credentials, for the page to delete.
    pub fn remove_issuer(&mut self, issuer: &Origin) -> Vec<String> {
        let mut ids = Vec::new();
        self.issuers.retain(|i| {
            if &i.origin == issuer {
                ids.extend(i.credentials.iter().map(|c| c.holder_key_id.clone()));
                false
            } else {
                true
            }
        });
        ids
    }

    /// The newest refresh token from `issuer`.
    pub fn refresh_token(&self, issuer: &Origin) -> Option<&str> {
        self.issuer(issuer)?.refresh_token.as_deref()
    }

    /// Every holder key id still referenced (the page may delete any other holder key).
    pub fn holder_key_ids(&self) -> Vec<String> {
        self.issuers
            .iter()
            .flat_map(|i| &i.credentials)
            .map(|c| c.holder_key_id.clone())
            .collect()
    }

    /// Drops used and expired credentials; returns their holder key ids.
    pub fn prune(&mut self, now: Timestamp) -> Vec<String> {
        let mut ids = Vec::new();
        for issuer in &mut self.issuers {
            issuer.credentials.retain(|c| {
                if c.usable(now) {
                    true
                } else {
                    ids.push(c.holder_key_id.clone());
                    false
                }
            });
        }
        ids
    }

    /// Picks an unused, unexpired credential from `issuer` that proves `claim` with the answer
    /// `satisfied` (the one expiring soonest), marks it used, and returns what to present: the
    /// issuer JWT with that one disclosure. The caller must persist the credentials before the
    /// presentation leaves. With the typed profile at hand, use [`Self::take_for_typed`].
    pub fn take_for(
        &mut self,
        issuer: &Origin,
        claim: &Claim,
        satisfied: bool,
        now: Timestamp,
    ) -> Result<Picked, TakeError> {
        self.take_for_typed(issuer, claim, satisfied, now, None)
    }

    /// [`Self::take_for`], never picking a credential whose predicate for `claim` the date of
    /// birth in `typed` says may have turned since its `iat` ([`TakeError::NoneLeft`] if only
    /// such are left).
    pub fn take_for_typed(
        &mut self,
        issuer: &Origin,
        claim: &Claim,
        satisfied: bool,
        now: Timestamp,
        typed: Option<&Profile>,
    ) -> Result<Picked, TakeError> {
        let index = self
            .issuers
            .iter()
            .position(|i| &i.origin == issuer)
            .ok_or(TakeError::UnknownIssuer)?;
        let (name, value) = self.issuers[index]
            .value_of(claim)
            .ok_or(TakeError::Mismatch)?;
        if value != satisfied {
            return Err(TakeError::Mismatch);
        }
        loop {
            let entry = &self.issuers[index];
            let Some(pick) = entry
                .credentials
                .iter()
                .enumerate()
                .filter(|(_, c)| c.usable(now) && !entry.turned(c, &name, now, typed))
                .min_by_key(|(_, c)| c.exp)
                .map(|(i, _)| i)
            else {
                return Err(TakeError::NoneLeft);
            };
            let entry = &mut self.issuers[index];
            let stored = &mut entry.credentials[pick];
            // Mark it used whatever happens next: a credential that fails to present now is
            // not tried again.
            stored.used = true;
            let Ok(credential) = Credential::parse(&stored.sd_jwt) else {
                continue;
            };
            if credential.verify_issuer(&entry.jwks, now).is_err()
                || credential.disclosure(&name).map(|d| &d.value) != Some(&Value::Bool(value))
            {
                continue;
            }
            let Ok(without_kb) = sd_jwt::presentation_without_kb(&credential, &[name.as_str()])
            else {
                continue;
            };
            return Ok(Picked {
                holder_key_id: stored.holder_key_id.clone(),
                without_kb,
                disclosure: name,
            });
        }
    }

    /// The issuer's key set, to verify a presentation before it leaves.
    pub(crate) fn jwks_of(&self, issuer: &Origin) -> Option<&Jwks> {
        self.issuer(issuer).map(|i| &i.jwks)
    }
}

/// The issuer's `POST /v1/credentials` answer (members the wallet does not use are ignored).
#[derive(Deserialize)]
struct BatchAnswer {
    credentials: Vec<String>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    issuer: Option<String>,
    #[serde(default)]
    vct: Option<String>,
}

fn check_credential(
    index: usize,
    text: &str,
    jwk: &Jwk,
    holder_key_id: String,
    meta: &IssuerInfo,
    jwks: &Jwks,
    now: Timestamp,
) -> Result<Checked, CredentialError> {
    let invalid = |error| CredentialError::Invalid { index, error };
    let credential = Credential::parse(text).map_err(invalid)?;
    credential
        .verify_issuer(jwks, now)
        .map_err(|error| match error {
            SdJwtError::Expired => CredentialError::Expired { index },
            error => invalid(error),
        })?;
    if credential.iss() != meta.origin.as_str() {
        return Err(CredentialError::CredentialIssuer { index });
    }
    if credential.vct() != meta.vct {
        return Err(CredentialError::CredentialVct { index });
    }
    if credential.holder_jwk() != jwk {
        return Err(CredentialError::HolderKeyMismatch { index });
    }
    // The issuer's current key is the first it publishes.
    if jwks.keys().first().map(|k| k.kid.as_str()) != Some(credential.kid()) {
        return Err(CredentialError::NotCurrentKey { index });
    }
    if !on_issuance_grid(
        credential.iat().millis(),
        credential.exp().millis(),
        now.millis(),
        MAX_FUTURE_SKEW_MS,
    ) {
        return Err(CredentialError::OffGrid { index });
    }
    let unexpected = CredentialError::UnexpectedClaims { index };
    let plain = credential.plain();
    let currency = match meta.attribute {
        Attribute::Income => {
            let code = match (plain.len(), plain.get(CURRENCY_CLAIM)) {
                (1, Some(Value::String(code))) => code,
                _ => return Err(unexpected),
            };
            Some(Currency::parse(code).map_err(|_| unexpected.clone())?)
        }
        _ if !plain.is_empty() => return Err(unexpected),
        _ => None,
    };
    let mut values = BTreeMap::new();
    for disclosure in credential.disclosures() {
        let claim = predicates::claim_for(&disclosure.name, currency.as_ref())
            .filter(|c| c.attribute() == meta.attribute)
            .ok_or_else(|| unexpected.clone())?;
        // The name must be the canonical one for its claim.
        if predicates::disclosure_for(&claim, currency.as_ref()).as_deref()
            != Some(disclosure.name.as_str())
        {
            return Err(unexpected);
        }
        let Value::Bool(value) = disclosure.value else {
            return Err(unexpected);
        };
        values.insert(disclosure.name.clone(), value);
    }
    if values.is_empty() {
        return Err(CredentialError::NoPredicates);
    }
    Ok(Checked {
        kid: credential.kid().to_owned(),
        iat: credential.iat(),
        exp: credential.exp(),
        currency,
        predicates: values,
        stored: StoredCredential {
            sd_jwt: text.to_owned(),
            holder_key_id,
            iat: Some(credential.iat()),
            exp: credential.exp(),
            used: false,
        },
    })
}

/// Income: below a step implies below every higher step. Age: over an age implies over every
/// lower one.
fn check_consistent(
    attribute: Attribute,
    values: &BTreeMap<String, bool>,
) -> Result<(), CredentialError> {
    // Threshold → value, ordered by threshold.
    let mut ordered: Vec<(u64, bool)> = Vec::with_capacity(values.len());
    for (name, value) in values {
        let threshold = match attribute {
            Attribute::Income => name.strip_prefix(predicates::INCOME_PREFIX),
            _ => name.strip_prefix(predicates::AGE_PREFIX),
        }
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or(CredentialError::Inconsistent)?;
        ordered.push((threshold, *value));
    }
    ordered.sort_unstable();
    let consistent = ordered.windows(2).all(|pair| match pair {
        [(_, low), (_, high)] => match attribute {
            // income_below_low ⇒ income_below_high.
            Attribute::Income => !*low || *high,
            // over_high ⇒ over_low.
            _ => !*high || *low,
        },
        _ => true,
    });
    if consistent {
        Ok(())
    } else {
        Err(CredentialError::Inconsistent)
    }
}
