//! OpenID for Verifiable Credential Issuance 1.0 (OpenID4VCI), as Tacit's issuers speak it and
//! its wallet asks: the pre-authorized code flow with a transaction code, a nonce endpoint, and
//! one credential request carrying a batch of `jwt` proofs, one per holder key.
//!
//! The flow, all on the credential issuer's origin (it is its own authorization server):
//! 1. The person receives a **credential offer** ([`CredentialOffer`]):
//!    `openid-credential-offer://?credential_offer=<JSON>` naming the issuer, its one
//!    configuration and a `pre-authorized_code`, and asking for a `tx_code` — the one-time
//!    enrolment code the office hands out on another channel (printed, read out).
//! 2. `POST` [`TOKEN_PATH`] (form-encoded, [`parse_token_request`]) with `grant_type`
//!    [`PRE_AUTHORIZED_GRANT`], the code and the `tx_code`; or, for a later batch, `grant_type
//!    refresh_token` with the refresh token of the previous answer. Both are single-use. The
//!    answer ([`TokenResponse`]) is a Bearer access token (single-use, [`ACCESS_TOKEN_VALIDITY_MS`])
//!    and a new refresh token.
//! 3. `POST` [`NONCE_PATH`]: `{"c_nonce": …}`, single-use, five minutes.
//! 4. `POST` [`CREDENTIAL_PATH`] with `Authorization: Bearer <access token>` and
//!    `{"credential_configuration_id": …, "proofs": {"jwt": [ … ]}}` ([`check_credential_request`]):
//!    one proof JWT per holder key ([`verify_proof`]: `typ` [`PROOF_TYP`], ES256, the holder key
//!    as the header's `jwk`, `aud` the issuer, the `c_nonce`, a recent `iat`). The answer
//!    ([`credential_response`]) is `{"credentials": [{"credential": "<SD-JWT VC>"}, …]}`, one per
//!    proof, in order.
//!
//! Refusals are OAuth's and OpenID4VCI's error codes ([`TokenError`], [`CredentialError`]) in
//! `{"error", "error_description"}`. Pure: time is an argument; no I/O, no randomness.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Verifier;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use wallet_core::Timestamp;

use crate::issuance::{NONCE_VALIDITY_MS, token_shaped};
use crate::limits::MAX_BATCH;
use crate::request_auth::{EnrolmentCode, InstallKey, Jwk};

/// The credential issuer metadata, below the issuer's origin.
pub const METADATA_PATH: &str = "/.well-known/openid-credential-issuer";
/// The authorization server metadata (RFC 8414): the issuer is its own authorization server.
pub const AS_METADATA_PATH: &str = "/.well-known/oauth-authorization-server";
/// The token endpoint.
pub const TOKEN_PATH: &str = "/token";
/// The nonce endpoint.
pub const NONCE_PATH: &str = "/nonce";
/// The credential endpoint.
pub const CREDENTIAL_PATH: &str = "/credential";
/// The pre-authorized code grant type.
pub const PRE_AUTHORIZED_GRANT: &str = "urn:ietf:params:oauth:grant-type:pre-authorized_code";
/// The refresh token grant type.
pub const REFRESH_GRANT: &str = "refresh_token";
/// The `typ` of a key proof JWT.
pub const PROOF_TYP: &str = "openid4vci-proof+jwt";
/// The credential format: SD-JWT VC.
pub const FORMAT: &str = "dc+sd-jwt";
/// How a credential offer travels by value.
pub const OFFER_SCHEME: &str = "openid-credential-offer://";
/// How long an access token is usable: five minutes, once.
pub const ACCESS_TOKEN_VALIDITY_MS: i64 = 5 * 60 * 1000;
/// How far in the future a proof's `iat` may be (clock skew).
pub const MAX_PROOF_FUTURE_MS: i64 = 60_000;
/// The longest request body read at the token endpoint.
pub const MAX_FORM_BYTES: usize = 4096;
/// The longest proof JWT read.
pub const MAX_PROOF_LEN: usize = 2048;
/// The longest credential offer read.
pub const MAX_OFFER_LEN: usize = 4096;

/// The transaction code an offer asks for (Tacit's issuers ask for their one-time enrolment
/// code). Every member is optional in the specification, and other issuers' offers may carry
/// members this wallet does not know: they are kept out, not refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxCode {
    /// `numeric` (the specification's default) or `text`.
    #[serde(default = "numeric")]
    pub input_mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

fn numeric() -> String {
    "numeric".to_owned()
}

impl TxCode {
    /// The enrolment code: 16 characters of letters and digits.
    pub fn enrolment_code() -> Self {
        Self {
            input_mode: "text".to_owned(),
            length: Some(16),
            description: Some(
                "The one-time code the office gave you, in four groups of four".to_owned(),
            ),
        }
    }
}

/// A credential offer for the pre-authorized code flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialOffer {
    /// The issuer's identifier (its origin).
    pub credential_issuer: String,
    /// The configurations offered (Tacit's issuers have one).
    pub credential_configuration_ids: Vec<String>,
    /// The pre-authorized code (single-use, redeemed with the transaction code).
    pub pre_authorized_code: String,
    /// What the transaction code is.
    pub tx_code: TxCode,
}

/// Why a credential offer was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OfferError {
    #[error("this is not a credential offer: paste the whole offer the office gave you")]
    NotAnOffer,
    #[error("the credential offer is not the pre-authorized kind this wallet can use")]
    Unsupported,
    #[error("the credential offer's issuer is not an address this wallet can use")]
    BadIssuer,
}

impl CredentialOffer {
    /// The offer's JSON.
    pub fn to_json(&self) -> String {
        json!({
            "credential_issuer": self.credential_issuer,
            "credential_configuration_ids": self.credential_configuration_ids,
            "grants": {
                PRE_AUTHORIZED_GRANT: {
                    "pre-authorized_code": self.pre_authorized_code,
                    "tx_code": self.tx_code,
                }
            }
        })
        .to_string()
    }

    /// The offer by value: `openid-credential-offer://?credential_offer=<JSON, percent-encoded>`.
    pub fn to_uri(&self) -> String {
        let query: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("credential_offer", &self.to_json())
            .finish();
        format!("{OFFER_SCHEME}?{query}")
    }

    /// Reads an offer as pasted: the `openid-credential-offer://` URI (or any URI whose query
    /// carries `credential_offer`), or the bare JSON. Only by value: an offer by reference
    /// (`credential_offer_uri`) is refused as [`OfferError::Unsupported`].
    pub fn parse(text: &str) -> Result<Self, OfferError> {
        let text = text.trim();
        if text.len() > MAX_OFFER_LEN {
            return Err(OfferError::NotAnOffer);
        }
        let json = if text.starts_with('{') {
            text.to_owned()
        } else {
            let (_, query) = text.split_once('?').ok_or(OfferError::NotAnOffer)?;
            let mut offer = None;
            for (key, value) in form_urlencoded::parse(query.as_bytes()) {
                match key.as_ref() {
                    "credential_offer" if offer.is_none() => offer = Some(value.into_owned()),
                    "credential_offer_uri" => return Err(OfferError::Unsupported),
                    _ => return Err(OfferError::NotAnOffer),
                }
            }
            offer.ok_or(OfferError::NotAnOffer)?
        };
        let value: Value = serde_json::from_str(&json).map_err(|_| OfferError::NotAnOffer)?;
        let issuer = value["credential_issuer"]
            .as_str()
            .ok_or(OfferError::NotAnOffer)?;
        if !origin_shaped(issuer) {
            return Err(OfferError::BadIssuer);
        }
        let ids: Vec<String> = value["credential_configuration_ids"]
            .as_array()
            .ok_or(OfferError::NotAnOffer)?
            .iter()
            .map(|id| id.as_str().map(str::to_owned).ok_or(OfferError::NotAnOffer))
            .collect::<Result<_, _>>()?;
        if ids.is_empty() || ids.iter().any(|id| id.is_empty() || id.len() > 128) {
            return Err(OfferError::NotAnOffer);
        }
        let grant = &value["grants"][PRE_AUTHORIZED_GRANT];
        let code = grant["pre-authorized_code"]
            .as_str()
            .ok_or(OfferError::Unsupported)?;
        if !token_shaped(code) {
            return Err(OfferError::Unsupported);
        }
        let tx_code: TxCode = serde_json::from_value(grant["tx_code"].clone())
            .map_err(|_| OfferError::Unsupported)?;
        Ok(Self {
            credential_issuer: issuer.to_owned(),
            credential_configuration_ids: ids,
            pre_authorized_code: code.to_owned(),
            tx_code,
        })
    }
}

/// `http(s)://host[:port]`, nothing after it: how Tacit names an issuer.
fn origin_shaped(text: &str) -> bool {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"));
    rest.is_some_and(|host| {
        !host.is_empty()
            && host.len() <= 253
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
    })
}

/// What an issuer states about itself at [`METADATA_PATH`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuerDescription<'a> {
    /// The issuer's identifier (its origin).
    pub issuer: &'a str,
    /// Its name for people.
    pub name: &'a str,
    /// Its one credential configuration's id.
    pub configuration_id: &'a str,
    /// The credential type.
    pub vct: &'a str,
    /// The claims its credentials may disclose (predicate names, never values).
    pub claims: &'a [String],
    /// Most proofs (holder keys) in one credential request.
    pub batch_size: usize,
}

impl IssuerDescription<'_> {
    /// The credential issuer metadata document.
    pub fn metadata(&self) -> Value {
        let claims: Vec<Value> = self
            .claims
            .iter()
            .map(|name| json!({ "path": [name] }))
            .collect();
        json!({
            "credential_issuer": self.issuer,
            "credential_endpoint": format!("{}{CREDENTIAL_PATH}", self.issuer),
            "nonce_endpoint": format!("{}{NONCE_PATH}", self.issuer),
            "batch_credential_issuance": { "batch_size": self.batch_size },
            "display": [{ "name": self.name, "locale": "en" }],
            "credential_configurations_supported": {
                self.configuration_id: {
                    "format": FORMAT,
                    "vct": self.vct,
                    "scope": self.configuration_id,
                    "cryptographic_binding_methods_supported": ["jwk"],
                    "credential_signing_alg_values_supported": ["ES256"],
                    "proof_types_supported": {
                        "jwt": { "proof_signing_alg_values_supported": ["ES256"] }
                    },
                    "credential_metadata": {
                        "display": [{ "name": self.name, "locale": "en" }],
                        "claims": claims,
                    }
                }
            }
        })
    }

    /// The authorization server metadata document: only the token endpoint, the pre-authorized
    /// code grant without client authentication, and refresh.
    pub fn authorization_server(&self) -> Value {
        json!({
            "issuer": self.issuer,
            "token_endpoint": format!("{}{TOKEN_PATH}", self.issuer),
            "grant_types_supported": [PRE_AUTHORIZED_GRANT, REFRESH_GRANT],
            "pre-authorized_grant_anonymous_access_supported": true,
            "token_endpoint_auth_methods_supported": ["none"],
            "response_types_supported": [],
        })
    }
}

/// What a token request redeems.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRequest {
    /// A credential offer's pre-authorized code with the transaction code (the enrolment code).
    PreAuthorized {
        pre_authorized_code: String,
        tx_code: EnrolmentCode,
    },
    /// The refresh token of an earlier answer.
    Refresh { refresh_token: String },
}

/// Why a token request was refused (RFC 6749 §5.2 codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Malformed: not a form, a parameter twice, one missing.
    #[error(
        "the request must be a form with grant_type and, for the pre-authorized code grant, \
         pre-authorized_code and tx_code, or for refresh, refresh_token; each once"
    )]
    InvalidRequest,
    #[error("only the pre-authorized code and refresh token grants are supported")]
    UnsupportedGrantType,
    /// The code, transaction code or refresh token is unknown, used, expired or mistyped.
    #[error(
        "the pre-authorized code, transaction code or refresh token is not valid: it may be \
         mistyped, already used or expired"
    )]
    InvalidGrant,
}

impl TokenError {
    /// The OAuth error code.
    pub fn code(self) -> &'static str {
        match self {
            TokenError::InvalidRequest => "invalid_request",
            TokenError::UnsupportedGrantType => "unsupported_grant_type",
            TokenError::InvalidGrant => "invalid_grant",
        }
    }
}

/// Reads a token request body (`application/x-www-form-urlencoded`). Parameters it does not
/// use are ignored, as OAuth requires (`client_id`, `scope`); one it uses given twice is
/// refused. A transaction code that cannot be an enrolment code, or a code or token that cannot
/// be one of the issuer's, is [`TokenError::InvalidGrant`] before any database is asked.
pub fn parse_token_request(body: &[u8]) -> Result<TokenRequest, TokenError> {
    if body.len() > MAX_FORM_BYTES {
        return Err(TokenError::InvalidRequest);
    }
    let mut grant_type = None;
    let mut code = None;
    let mut tx_code = None;
    let mut refresh = None;
    for (key, value) in form_urlencoded::parse(body) {
        let slot = match key.as_ref() {
            "grant_type" => &mut grant_type,
            "pre-authorized_code" => &mut code,
            "tx_code" => &mut tx_code,
            "refresh_token" => &mut refresh,
            _ => continue,
        };
        if slot.replace(value.into_owned()).is_some() {
            return Err(TokenError::InvalidRequest);
        }
    }
    match grant_type.as_deref() {
        Some(PRE_AUTHORIZED_GRANT) => {
            let (Some(code), Some(tx_code)) = (code, tx_code) else {
                return Err(TokenError::InvalidRequest);
            };
            if !token_shaped(&code) {
                return Err(TokenError::InvalidGrant);
            }
            let tx_code = EnrolmentCode::parse(&tx_code).map_err(|_| TokenError::InvalidGrant)?;
            Ok(TokenRequest::PreAuthorized {
                pre_authorized_code: code,
                tx_code,
            })
        }
        Some(REFRESH_GRANT) => {
            let token = refresh.ok_or(TokenError::InvalidRequest)?;
            if !token_shaped(&token) {
                return Err(TokenError::InvalidGrant);
            }
            Ok(TokenRequest::Refresh {
                refresh_token: token,
            })
        }
        Some(_) => Err(TokenError::UnsupportedGrantType),
        None => Err(TokenError::InvalidRequest),
    }
}

/// A token request's body as the wallet sends it.
pub fn token_request_body(request: &TokenRequest) -> String {
    let mut form = form_urlencoded::Serializer::new(String::new());
    match request {
        TokenRequest::PreAuthorized {
            pre_authorized_code,
            tx_code,
        } => form
            .append_pair("grant_type", PRE_AUTHORIZED_GRANT)
            .append_pair("pre-authorized_code", pre_authorized_code)
            .append_pair("tx_code", tx_code.canonical()),
        TokenRequest::Refresh { refresh_token } => form
            .append_pair("grant_type", REFRESH_GRANT)
            .append_pair("refresh_token", refresh_token),
    };
    form.finish()
}

/// The token endpoint's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenResponse {
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: String,
    /// Seconds.
    pub expires_in: u64,
    /// Single-use: the grant of the next batch.
    pub refresh_token: String,
}

impl TokenResponse {
    /// A Bearer answer valid [`ACCESS_TOKEN_VALIDITY_MS`].
    pub fn bearer(access_token: String, refresh_token: String) -> Self {
        Self {
            access_token,
            token_type: "Bearer".to_owned(),
            expires_in: u64::try_from(ACCESS_TOKEN_VALIDITY_MS / 1000).unwrap_or(300),
            refresh_token,
        }
    }

    /// Reads an issuer's answer (the wallet): a Bearer token and a refresh token, both shaped as
    /// the issuer's tokens; other members are ignored.
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        let response: Self = serde_json::from_slice(bytes).ok()?;
        (response.token_type.eq_ignore_ascii_case("bearer")
            && token_shaped(&response.access_token)
            && token_shaped(&response.refresh_token))
        .then_some(response)
    }
}

/// The access token of an `Authorization: Bearer …` header, if it is shaped as one.
pub fn bearer_token(header: Option<&str>) -> Option<&str> {
    let (scheme, token) = header?.split_once(' ')?;
    (scheme.eq_ignore_ascii_case("bearer") && token_shaped(token)).then_some(token)
}

/// The nonce endpoint's answer.
pub fn nonce_response(c_nonce: &str) -> Value {
    json!({ "c_nonce": c_nonce })
}

/// Why a credential request (or one of its proofs) was refused (OpenID4VCI §8.3.1.2 codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    #[error(
        "the body must be {{\"credential_configuration_id\", \"proofs\": {{\"jwt\": [ … ]}}}} \
         with 1 to 20 proofs"
    )]
    InvalidCredentialRequest,
    #[error("this issuer offers no credential configuration of that id")]
    UnknownCredentialConfiguration,
    #[error("proof {index} is not a valid key proof for this issuer")]
    InvalidProof { index: usize },
    #[error("each proof must name the same fresh c_nonce from the nonce endpoint")]
    InvalidNonce,
    #[error("each holder key may appear only once in a batch")]
    DuplicateHolderKey,
}

impl CredentialError {
    /// The OpenID4VCI error code.
    pub fn code(self) -> &'static str {
        match self {
            CredentialError::InvalidCredentialRequest | CredentialError::DuplicateHolderKey => {
                "invalid_credential_request"
            }
            CredentialError::UnknownCredentialConfiguration => "unknown_credential_configuration",
            CredentialError::InvalidProof { .. } => "invalid_proof",
            CredentialError::InvalidNonce => "invalid_nonce",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestWire {
    credential_configuration_id: String,
    proofs: ProofsWire,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProofsWire {
    jwt: Vec<String>,
}

/// A credential request that passed [`check_credential_request`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedCredentialRequest {
    /// The `c_nonce` every proof names (the issuer consumes it).
    pub nonce: String,
    /// The holder keys, in proof order, as the credentials will carry them (`cnf.jwk`).
    pub holder_jwks: Vec<Jwk>,
}

/// The checks of a credential request to `issuer`, whose one configuration is
/// `configuration_id`, at `now`, before any database is asked: the shape (1 to [`MAX_BATCH`]
/// proofs, nothing else), the configuration, every proof ([`verify_proof`]), one nonce for all,
/// and no holder key twice (one credential per key, so presentations cannot be linked by one).
pub fn check_credential_request(
    body: &[u8],
    issuer: &str,
    configuration_id: &str,
    now: Timestamp,
) -> Result<CheckedCredentialRequest, CredentialError> {
    let request: RequestWire =
        serde_json::from_slice(body).map_err(|_| CredentialError::InvalidCredentialRequest)?;
    if request.credential_configuration_id != configuration_id {
        return Err(CredentialError::UnknownCredentialConfiguration);
    }
    let proofs = request.proofs.jwt;
    if proofs.is_empty() || proofs.len() > MAX_BATCH {
        return Err(CredentialError::InvalidCredentialRequest);
    }
    let mut nonce: Option<String> = None;
    let mut holder_jwks: Vec<Jwk> = Vec::with_capacity(proofs.len());
    let mut seen = Vec::with_capacity(proofs.len());
    for (index, proof) in proofs.iter().enumerate() {
        let checked = verify_proof(proof, issuer, now)
            .map_err(|_| CredentialError::InvalidProof { index })?;
        match &nonce {
            None => nonce = Some(checked.nonce),
            Some(first) if *first == checked.nonce => {}
            Some(_) => return Err(CredentialError::InvalidNonce),
        }
        let id = checked.key.id();
        if seen.contains(&id) {
            return Err(CredentialError::DuplicateHolderKey);
        }
        seen.push(id);
        holder_jwks.push(checked.key.to_jwk());
    }
    Ok(CheckedCredentialRequest {
        nonce: nonce.ok_or(CredentialError::InvalidCredentialRequest)?,
        holder_jwks,
    })
}

/// A key proof that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedProof {
    pub key: InstallKey,
    pub nonce: String,
}

/// Why a key proof was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    #[error("the proof is not a compact JWS of JSON objects")]
    Malformed,
    #[error("the proof's header is not typ openid4vci-proof+jwt, alg ES256 and a P-256 jwk")]
    BadHeader,
    #[error("the proof is not for this issuer")]
    WrongAudience,
    #[error("the proof's iat is missing, too old or in the future")]
    BadTime,
    #[error("the proof carries no nonce of this issuer's shape")]
    BadNonce,
    #[error("the proof's signature does not verify with its jwk")]
    BadSignature,
}

fn json_part(text: &str) -> Result<Map<String, Value>, ProofError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(text)
        .map_err(|_| ProofError::Malformed)?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(ProofError::Malformed),
    }
}

/// Verifies one key proof JWT for `issuer` at `now`: header `typ` [`PROOF_TYP`], `alg` ES256,
/// the holder key as `jwk` (a public P-256 key; no `kid`, `x5c` or other key reference), payload
/// `aud` the issuer, a token-shaped `nonce`, and an `iat` no older than a nonce lives and at most
/// [`MAX_PROOF_FUTURE_MS`] ahead; signed by that key (low-S or high-S, as WebCrypto makes
/// either). `iss` is not required (the pre-authorized flow is anonymous).
pub fn verify_proof(jwt: &str, issuer: &str, now: Timestamp) -> Result<CheckedProof, ProofError> {
    if jwt.len() > MAX_PROOF_LEN {
        return Err(ProofError::Malformed);
    }
    let mut parts = jwt.split('.');
    let (Some(h), Some(p), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ProofError::Malformed);
    };
    let mut header = json_part(h)?;
    let payload = json_part(p)?;
    if header.remove("typ").as_ref().and_then(Value::as_str) != Some(PROOF_TYP)
        || header.remove("alg").as_ref().and_then(Value::as_str) != Some("ES256")
    {
        return Err(ProofError::BadHeader);
    }
    let jwk: Jwk = header
        .remove("jwk")
        .and_then(|jwk| serde_json::from_value(jwk).ok())
        .ok_or(ProofError::BadHeader)?;
    if !header.is_empty() {
        return Err(ProofError::BadHeader);
    }
    let key = InstallKey::from_jwk(&jwk).map_err(|_| ProofError::BadHeader)?;
    let aud_ok = match payload.get("aud") {
        Some(Value::String(aud)) => aud == issuer,
        Some(Value::Array(auds)) => auds.len() == 1 && auds[0].as_str() == Some(issuer),
        _ => false,
    };
    if !aud_ok {
        return Err(ProofError::WrongAudience);
    }
    let iat = payload
        .get("iat")
        .and_then(Value::as_i64)
        .and_then(|s| s.checked_mul(1000))
        .ok_or(ProofError::BadTime)?;
    let now_ms = now.millis();
    if iat > now_ms.saturating_add(MAX_PROOF_FUTURE_MS)
        || iat < now_ms.saturating_sub(NONCE_VALIDITY_MS)
    {
        return Err(ProofError::BadTime);
    }
    let nonce = payload
        .get("nonce")
        .and_then(Value::as_str)
        .filter(|n| token_shaped(n))
        .ok_or(ProofError::BadNonce)?;
    let signature = URL_SAFE_NO_PAD
        .decode(s)
        .ok()
        .filter(|bytes| bytes.len() == 64)
        .and_then(|bytes| p256::ecdsa::Signature::from_slice(&bytes).ok())
        .ok_or(ProofError::BadSignature)?;
    let verifying = crate::sd_jwt::jwk_to_key(&jwk).map_err(|_| ProofError::BadHeader)?;
    let input = &jwt.as_bytes()[..h.len() + 1 + p.len()];
    verifying
        .verify(input, &signature)
        .map_err(|_| ProofError::BadSignature)?;
    Ok(CheckedProof {
        key,
        nonce: nonce.to_owned(),
    })
}

/// The signing input of a key proof by `jwk` for `issuer` and `nonce` at `iat` (the wallet
/// signs it with the holder key and finishes it with [`finish_proof`]).
pub fn proof_signing_input(jwk: &Jwk, issuer: &str, nonce: &str, iat: Timestamp) -> String {
    let header = json!({
        "typ": PROOF_TYP,
        "alg": "ES256",
        "jwk": { "kty": jwk.kty, "crv": jwk.crv, "x": jwk.x, "y": jwk.y },
    });
    let payload = json!({
        "aud": issuer,
        "iat": iat.millis().div_euclid(1000),
        "nonce": nonce,
    });
    format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(payload.to_string())
    )
}

/// The proof JWT: the signing input and the 64-byte `r||s` signature over it.
pub fn finish_proof(signing_input: &str, signature: &[u8; 64]) -> String {
    format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature))
}

/// The body of a credential request for `configuration_id` with `proofs`.
pub fn credential_request_body(configuration_id: &str, proofs: &[String]) -> String {
    json!({
        "credential_configuration_id": configuration_id,
        "proofs": { "jwt": proofs },
    })
    .to_string()
}

/// The credential endpoint's answer: one object per credential, in proof order.
pub fn credential_response(credentials: &[String]) -> Value {
    let credentials: Vec<Value> = credentials
        .iter()
        .map(|credential| json!({ "credential": credential }))
        .collect();
    json!({ "credentials": credentials })
}

/// The credentials of a credential endpoint's answer (the wallet), in order; `None` when it is
/// not one, holds none, or holds more than [`MAX_BATCH`].
pub fn parse_credential_response(bytes: &[u8]) -> Option<Vec<String>> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let list = value.get("credentials")?.as_array()?;
    if list.is_empty() || list.len() > MAX_BATCH {
        return None;
    }
    list.iter()
        .map(|item| item.get("credential")?.as_str().map(str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use p256::ecdsa::SigningKey;
    use p256::ecdsa::signature::Signer;

    const ISSUER: &str = "http://127.0.0.1:8091";
    const NONCE: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    const NOW: i64 = 1_780_000_000_000;

    fn key(seed: u8) -> SigningKey {
        SigningKey::from_slice(&[seed; 32]).unwrap()
    }

    fn jwk_of(key: &SigningKey) -> Jwk {
        crate::sd_jwt::key_to_jwk(key.verifying_key())
    }

    fn proof(key: &SigningKey, issuer: &str, nonce: &str, iat: i64) -> String {
        let input = proof_signing_input(&jwk_of(key), issuer, nonce, Timestamp::from_millis(iat));
        let signature: p256::ecdsa::Signature = key.sign(input.as_bytes());
        finish_proof(&input, &signature.to_bytes().into())
    }

    fn now() -> Timestamp {
        Timestamp::from_millis(NOW)
    }

    #[test]
    fn a_proof_made_by_the_wallet_verifies_and_names_its_key_and_nonce() {
        let k = key(7);
        let checked = verify_proof(&proof(&k, ISSUER, NONCE, NOW), ISSUER, now()).unwrap();
        assert_eq!(checked.nonce, NONCE);
        assert_eq!(checked.key.to_jwk(), jwk_of(&k));
    }

    #[test]
    fn a_proof_for_another_issuer_an_old_or_future_iat_or_a_forged_signature_is_refused() {
        let k = key(7);
        let other = proof(&k, "http://127.0.0.1:9999", NONCE, NOW);
        assert_eq!(
            verify_proof(&other, ISSUER, now()),
            Err(ProofError::WrongAudience)
        );
        let old = proof(&k, ISSUER, NONCE, NOW - NONCE_VALIDITY_MS - 1000);
        assert_eq!(verify_proof(&old, ISSUER, now()), Err(ProofError::BadTime));
        let ahead = proof(&k, ISSUER, NONCE, NOW + MAX_PROOF_FUTURE_MS + 1000);
        assert_eq!(
            verify_proof(&ahead, ISSUER, now()),
            Err(ProofError::BadTime)
        );
        let good = proof(&k, ISSUER, NONCE, NOW);
        let (input, _) = good.rsplit_once('.').unwrap();
        let by_other: p256::ecdsa::Signature = key(8).sign(input.as_bytes());
        let forged = finish_proof(input, &by_other.to_bytes().into());
        assert_eq!(
            verify_proof(&forged, ISSUER, now()),
            Err(ProofError::BadSignature)
        );
        let short_nonce = proof(&k, ISSUER, "abc", NOW);
        assert_eq!(
            verify_proof(&short_nonce, ISSUER, now()),
            Err(ProofError::BadNonce)
        );
    }

    #[test]
    fn a_proof_header_with_a_kid_another_typ_or_a_private_key_is_refused() {
        let k = key(7);
        let jwk = jwk_of(&k);
        let sign = |header: Value| {
            let payload = json!({"aud": ISSUER, "iat": NOW / 1000, "nonce": NONCE});
            let input = format!(
                "{}.{}",
                URL_SAFE_NO_PAD.encode(header.to_string()),
                URL_SAFE_NO_PAD.encode(payload.to_string())
            );
            let signature: p256::ecdsa::Signature = k.sign(input.as_bytes());
            finish_proof(&input, &signature.to_bytes().into())
        };
        let base = json!({"typ": PROOF_TYP, "alg": "ES256", "jwk": jwk});
        assert!(verify_proof(&sign(base.clone()), ISSUER, now()).is_ok());
        let mut with_kid = base.clone();
        with_kid["kid"] = json!("k1");
        let mut jwt_typ = base.clone();
        jwt_typ["typ"] = json!("JWT");
        let mut none = base.clone();
        none["alg"] = json!("none");
        let mut private = base.clone();
        private["jwk"]["d"] = json!(URL_SAFE_NO_PAD.encode([7u8; 32]));
        for header in [with_kid, jwt_typ, none, private] {
            assert_eq!(
                verify_proof(&sign(header), ISSUER, now()),
                Err(ProofError::BadHeader)
            );
        }
    }

    #[test]
    fn a_batch_request_checks_every_proof_one_nonce_and_distinct_keys() {
        let proofs: Vec<String> = (1..=3)
            .map(|s| proof(&key(s), ISSUER, NONCE, NOW))
            .collect();
        let body = credential_request_body("income", &proofs);
        let checked = check_credential_request(body.as_bytes(), ISSUER, "income", now()).unwrap();
        assert_eq!(checked.nonce, NONCE);
        assert_eq!(checked.holder_jwks.len(), 3);
        assert_eq!(
            check_credential_request(body.as_bytes(), ISSUER, "age", now()),
            Err(CredentialError::UnknownCredentialConfiguration)
        );
        let twice = credential_request_body("income", &[proofs[0].clone(), proofs[0].clone()]);
        assert_eq!(
            check_credential_request(twice.as_bytes(), ISSUER, "income", now()),
            Err(CredentialError::DuplicateHolderKey)
        );
        let other_nonce = proof(&key(4), ISSUER, &"B".repeat(43), NOW);
        let mixed = credential_request_body("income", &[proofs[0].clone(), other_nonce]);
        assert_eq!(
            check_credential_request(mixed.as_bytes(), ISSUER, "income", now()),
            Err(CredentialError::InvalidNonce)
        );
        let mut bad = proofs.clone();
        bad[2] = proof(&key(3), "http://elsewhere", NONCE, NOW);
        let bad = credential_request_body("income", &bad);
        assert_eq!(
            check_credential_request(bad.as_bytes(), ISSUER, "income", now()),
            Err(CredentialError::InvalidProof { index: 2 })
        );
        let too_many: Vec<String> = (1..=21)
            .map(|s| proof(&key(s), ISSUER, NONCE, NOW))
            .collect();
        let too_many = credential_request_body("income", &too_many);
        assert_eq!(
            check_credential_request(too_many.as_bytes(), ISSUER, "income", now()),
            Err(CredentialError::InvalidCredentialRequest)
        );
        let singular = json!({"credential_configuration_id": "income", "proof": {"proof_type": "jwt", "jwt": proofs[0]}});
        assert_eq!(
            check_credential_request(singular.to_string().as_bytes(), ISSUER, "income", now()),
            Err(CredentialError::InvalidCredentialRequest)
        );
    }

    #[test]
    fn token_requests_read_both_grants_ignore_unknown_parameters_and_refuse_repeats() {
        let code = EnrolmentCode::parse("ABCD-EFGH-JKMN-PQRS").unwrap();
        let pre = TokenRequest::PreAuthorized {
            pre_authorized_code: NONCE.to_owned(),
            tx_code: code,
        };
        let body = token_request_body(&pre);
        assert_eq!(parse_token_request(body.as_bytes()), Ok(pre));
        let with_client = format!("{body}&client_id=someone");
        assert!(parse_token_request(with_client.as_bytes()).is_ok());
        let twice = format!("{body}&tx_code=ABCDEFGHJKMNPQRS");
        assert_eq!(
            parse_token_request(twice.as_bytes()),
            Err(TokenError::InvalidRequest)
        );
        let refresh = TokenRequest::Refresh {
            refresh_token: NONCE.to_owned(),
        };
        assert_eq!(
            parse_token_request(token_request_body(&refresh).as_bytes()),
            Ok(refresh)
        );
        assert_eq!(
            parse_token_request(b"grant_type=authorization_code&code=x"),
            Err(TokenError::UnsupportedGrantType)
        );
        assert_eq!(
            parse_token_request(b"pre-authorized_code=x"),
            Err(TokenError::InvalidRequest)
        );
        let no_tx = format!("grant_type={PRE_AUTHORIZED_GRANT}&pre-authorized_code={NONCE}");
        assert_eq!(
            parse_token_request(no_tx.as_bytes()),
            Err(TokenError::InvalidRequest)
        );
        let bad_tx = format!("{no_tx}&tx_code=1234");
        assert_eq!(
            parse_token_request(bad_tx.as_bytes()),
            Err(TokenError::InvalidGrant)
        );
    }

    #[test]
    fn an_offer_survives_its_uri_and_an_offer_by_reference_is_refused() {
        let offer = CredentialOffer {
            credential_issuer: ISSUER.to_owned(),
            credential_configuration_ids: vec!["income".to_owned()],
            pre_authorized_code: NONCE.to_owned(),
            tx_code: TxCode::enrolment_code(),
        };
        assert_eq!(CredentialOffer::parse(&offer.to_uri()), Ok(offer.clone()));
        assert_eq!(CredentialOffer::parse(&offer.to_json()), Ok(offer.clone()));
        assert_eq!(
            CredentialOffer::parse(
                "openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fx"
            ),
            Err(OfferError::Unsupported)
        );
        assert_eq!(CredentialOffer::parse("hello"), Err(OfferError::NotAnOffer));
        let mut elsewhere = offer;
        elsewhere.credential_issuer = "javascript:alert(1)".to_owned();
        assert_eq!(
            CredentialOffer::parse(&elsewhere.to_uri()),
            Err(OfferError::BadIssuer)
        );
    }

    #[test]
    fn a_bearer_header_is_read_only_when_shaped_as_an_issuer_token() {
        assert_eq!(bearer_token(Some(&format!("Bearer {NONCE}"))), Some(NONCE));
        assert_eq!(bearer_token(Some(&format!("bearer {NONCE}"))), Some(NONCE));
        assert_eq!(bearer_token(Some(&format!("DPoP {NONCE}"))), None);
        assert_eq!(bearer_token(Some("Bearer short")), None);
        assert_eq!(bearer_token(None), None);
    }
}
