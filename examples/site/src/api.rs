//! The site's JSON bodies as types: the server writes them, and its OpenAPI document
//! (`server::openapi`, native) is generated from them, so the two cannot drift. Every answer of
//! the two API routes is an envelope: `{ok: true, result}` or `{ok: false, error}`.

use serde::{Deserialize, Serialize};
use tacit_protocol::site_auth::{Attestation, Requirements};
use wallet_core::{Claim, KeyId, Nonce, Origin, SessionId, SignedReceipt};

use crate::proof::Proven;

/// `{ok: true, result: T}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(schemars::JsonSchema),
    schemars(rename = "Answer_{T}")
)]
#[serde(deny_unknown_fields)]
pub struct Answer<T> {
    /// Always `true`.
    pub ok: bool,
    pub result: T,
}

impl<T> Answer<T> {
    pub fn new(result: T) -> Self {
        Self { ok: true, result }
    }
}

/// `{ok: false, isError: true, error: {code, message[, claim]}}`: a refusal, on any status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RefusalEnvelope {
    /// Always `false`.
    pub ok: bool,
    /// Always `true`: generic clients look for `isError` to tell a refusal from an answer.
    #[serde(rename = "isError")]
    pub is_error: bool,
    pub error: RefusalError,
}

/// What was refused and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RefusalError {
    /// A stable code, e.g. `claim_not_satisfied`, `replayed_nonce`, `proof_missing`.
    pub code: String,
    /// A sentence for the agent to pass on.
    pub message: String,
    /// For `claim_not_satisfied`: the claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<Claim>,
}

/// The result of `GET /api/requirements`: exactly the wallet's `request_claims` input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct AttestedRequirements {
    #[serde(flatten)]
    pub requirements: Requirements,
    /// The site's signature over the requirements, expiring with the nonce.
    pub attestation: Attestation,
}

/// The result of an accepted `POST /api/applications`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AcceptedResult {
    /// Always `true`.
    pub accepted: bool,
    pub site_name: String,
    pub audience: Origin,
    pub nonce: Nonce,
    pub session_id: SessionId,
    pub key_id: KeyId,
    pub issued_at_ms: i64,
    pub expires_at_ms: i64,
    /// The claims the policy required, all satisfied.
    pub claims: Vec<Claim>,
    /// The issuer-backed ones and who proved them.
    pub proven: Vec<Proven>,
    /// A sentence for the agent to pass on.
    pub message: String,
}

/// The body of `POST /api/applications`. (The server reads it field by field to say precisely
/// what is wrong with a bad one; this is the shape it accepts.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SubmissionBody {
    /// The signed receipt from the wallet's `check_proposal`, unchanged.
    pub receipt: SignedReceipt,
    /// One SD-JWT VC presentation per issuer-backed answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presentations: Option<Vec<String>>,
    /// The nonce the application answers (the receipt's own if absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<Nonce>,
}

/// `GET /api/site`: the page's words, the two tools' definitions and the trusted issuers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SiteInfo {
    pub site_name: String,
    /// What the person submits ("application", "order").
    pub submission: String,
    pub accepted_text: String,
    /// Each required claim in words.
    pub needs: Vec<String>,
    /// The requirements tool and the submit tool, as `registerTool` takes them (no `execute`).
    pub tools: Vec<serde_json::Value>,
    /// Whose proofs count here.
    #[serde(default)]
    pub trusted_issuers: Vec<IssuerName>,
}

/// An issuer the site trusts, by origin and name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IssuerName {
    pub issuer: String,
    pub name: String,
}
