//! Judging a submission: strict input, wallet-core's verifier, the nonce's state, the policy's
//! claims, and one code per reason so an agent knows what to do next.
//!
//! Order of checks: [`check_receipt`] runs wallet-core's [`PublishedKeys::verify`] (signature,
//! chain, audience, named nonce, window, then the signer's revoked receipts; the first failure
//! is reported); the server then reads the nonce's row and
//! [`decide`] refuses a nonce that is not open and a receipt that does not show every required
//! claim satisfied, or answers [`Verdict::Consume`]: accept, **provided the server consumes the
//! nonce atomically**. If that consume changes no row, the nonce was spent or lapsed in between
//! and the answer is [`nonce_refusal`] of its state then. Only an accepted submission consumes
//! its nonce, so a refusal for a claim leaves the nonce open for a corrected receipt.
//!
//! Issuer-backed answers: between the receipt check and the decision the server checks the
//! submission's SD-JWT `presentations` ([`crate::proof::check_presentations`]); [`decide`] reads
//! that answer after the nonce's state, before the claims. A policy may also name claim kinds
//! it takes only with an issuer's proof (`require_proof`).

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use wallet_core::{
    ChainBroken, Claim, KeyId, MalformedReceipt, Nonce, Origin, PublishedKeys, SessionId,
    SignedReceipt, Timestamp, VerifiedReceipt, VerifyError,
};

use crate::api::{RequirementsInput, SubmissionBody};
use crate::nonce::NonceState;
use crate::policy::{Policy, describe};
use crate::proof::{Proofs, Proven};

/// Why a submission was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    InvalidInput,
    UnknownNonce,
    ReplayedNonce,
    WrongAudience,
    NonceMismatch,
    BadSignature,
    UnknownKey,
    ChainBroken,
    Expired,
    NotYetValid,
    ClaimNotSatisfied,
    SignerUnreachable,
    /// The page could not reach its site's server; nothing was decided.
    SiteUnreachable,
    /// The site is starting or busy; nothing was decided.
    Busy,
    /// An issuer-backed answer came without its presentation.
    ProofMissing,
    /// A presentation does not verify (the message names the SD-JWT error code).
    ProofInvalid,
    /// An answer or a presentation names an issuer this site does not trust.
    UntrustedIssuer,
    /// A presentation proves something other than the receipt's answer, or is left over.
    ProofMismatch,
    /// The policy takes this claim only with an issuer's proof, and the answer is self-asserted.
    ProofRequired,
    /// The signer revoked the receipt: the wallet install it was signed for was revoked.
    ReceiptRevoked,
    /// The issuer revoked the credential behind a presentation (its status list says so).
    CredentialRevoked,
    /// The issuer's status list could not be read, so a presentation's status is unknown;
    /// nothing was decided.
    StatusUnavailable,
}

impl Code {
    pub const ALL: [Code; 22] = [
        Code::InvalidInput,
        Code::UnknownNonce,
        Code::ReplayedNonce,
        Code::WrongAudience,
        Code::NonceMismatch,
        Code::BadSignature,
        Code::UnknownKey,
        Code::ChainBroken,
        Code::Expired,
        Code::NotYetValid,
        Code::ClaimNotSatisfied,
        Code::SignerUnreachable,
        Code::SiteUnreachable,
        Code::Busy,
        Code::ProofMissing,
        Code::ProofInvalid,
        Code::UntrustedIssuer,
        Code::ProofMismatch,
        Code::ProofRequired,
        Code::ReceiptRevoked,
        Code::CredentialRevoked,
        Code::StatusUnavailable,
    ];

    /// The code an agent reads as `name`.
    pub fn parse(name: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// As the agent reads it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Code::InvalidInput => "invalid_input",
            Code::UnknownNonce => "unknown_nonce",
            Code::ReplayedNonce => "replayed_nonce",
            Code::WrongAudience => "wrong_audience",
            Code::NonceMismatch => "nonce_mismatch",
            Code::BadSignature => "bad_signature",
            Code::UnknownKey => "unknown_key",
            Code::ChainBroken => "chain_broken",
            Code::Expired => "expired",
            Code::NotYetValid => "not_yet_valid",
            Code::ClaimNotSatisfied => "claim_not_satisfied",
            Code::SignerUnreachable => "signer_unreachable",
            Code::SiteUnreachable => "site_unreachable",
            Code::Busy => "busy",
            Code::ProofMissing => "proof_missing",
            Code::ProofInvalid => "proof_invalid",
            Code::UntrustedIssuer => "untrusted_issuer",
            Code::ProofMismatch => "proof_mismatch",
            Code::ProofRequired => "proof_required",
            Code::ReceiptRevoked => "receipt_revoked",
            Code::CredentialRevoked => "credential_revoked",
            Code::StatusUnavailable => "status_unavailable",
        }
    }

    /// As the person reads it on the page.
    pub const fn for_person(self) -> &'static str {
        match self {
            Code::InvalidInput => "Your agent sent something that is not a Tacit receipt.",
            Code::UnknownNonce => "The receipt answers a request this site did not make.",
            Code::ReplayedNonce => "This receipt was already used once.",
            Code::WrongAudience => "The receipt was made for another site.",
            Code::NonceMismatch => "The receipt belongs to another request.",
            Code::BadSignature => "The receipt was changed after it was signed.",
            Code::UnknownKey => "The receipt is signed with a key the signer does not publish.",
            Code::ChainBroken => "The receipt's record of answers is broken.",
            Code::Expired => "The receipt has expired.",
            Code::NotYetValid => "The receipt is not valid yet.",
            Code::ClaimNotSatisfied => "The receipt does not show every requirement met.",
            Code::SignerUnreachable => {
                "The signer's keys could not be fetched to check the receipt."
            }
            Code::SiteUnreachable => "This page could not reach the site's server.",
            Code::Busy => "The site was busy; your agent can try again.",
            Code::ProofMissing => {
                "An answer said to come from an issuer arrived without the issuer's proof."
            }
            Code::ProofInvalid => "An issuer's proof did not check out.",
            Code::UntrustedIssuer => "An answer relies on an issuer this site does not trust.",
            Code::ProofMismatch => "An issuer's proof does not match the answers in the receipt.",
            Code::ProofRequired => {
                "This site needs an issuer's proof for an answer, not only your word."
            }
            Code::ReceiptRevoked => {
                "The signer has revoked this receipt: the wallet that asked for it was disabled."
            }
            Code::CredentialRevoked => {
                "The issuer has revoked the credential behind one of your proven answers."
            }
            Code::StatusUnavailable => {
                "The site could not check with the issuer that a proof still holds; your agent \
                 can try again."
            }
        }
    }
}

/// A refusal: a code, a sentence for the agent, and for `claim_not_satisfied` the claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: Code,
    pub message: String,
    pub claim: Option<Claim>,
}

impl Refusal {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            claim: None,
        }
    }

    /// `{ok: false, isError: true, error: {code, message[, claim]}}`.
    pub fn envelope(&self) -> Value {
        json!(crate::api::RefusalEnvelope {
            ok: false,
            is_error: true,
            error: crate::api::RefusalError {
                code: self.code.as_str().to_owned(),
                message: self.message.clone(),
                claim: self.claim.clone(),
            },
        })
    }
}

fn invalid(message: impl Into<String>) -> Refusal {
    Refusal::new(Code::InvalidInput, message)
}

/// Reads a tool's input as `T`: no argument (`null`) is `{}`; anything else must deserialise,
/// which refuses unknown, missing, mistyped and over-long fields (`T`'s fields say what is wrong
/// in their own words). The refusal is `invalid_input`.
pub fn parse<T: DeserializeOwned>(input: &Value) -> Result<T, Refusal> {
    let value = match input {
        Value::Null => Value::Object(Map::new()),
        Value::Object(_) => input.clone(),
        _ => return Err(invalid("The input must be a JSON object.")),
    };
    serde_json::from_value(value).map_err(|e| {
        // serde quotes names with backticks; these messages quote with `"`.
        let why = e.to_string().replace('`', "\"");
        let mut chars = why.chars();
        let mut message: String = chars
            .next()
            .map(|c| c.to_ascii_uppercase())
            .into_iter()
            .collect();
        message.extend(chars.take(300));
        if !message.ends_with('.') {
            message.push('.');
        }
        invalid(message)
    })
}

/// The requirements tool takes nothing: `{}` or no input ([`RequirementsInput`]).
pub fn parse_requirements_input(input: &Value) -> Result<(), Refusal> {
    parse::<RequirementsInput>(input).map(|_| ())
}

/// A submission that passed input validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    pub receipt: SignedReceipt,
    /// The nonce the agent says the receipt is for, if it said.
    pub nonce: Option<Nonce>,
    /// The SD-JWT presentations for the receipt's issuer-backed answers (none when every answer
    /// is self-asserted).
    pub presentations: Vec<String>,
}

impl From<SubmissionBody> for Submission {
    fn from(body: SubmissionBody) -> Self {
        Self {
            receipt: body.receipt,
            nonce: body.nonce,
            presentations: body.presentations.0,
        }
    }
}

/// Validates the submission tool's input (the body of `POST /api/applications`): it must read
/// as a [`SubmissionBody`], nothing else.
pub fn parse_submission(input: &Value) -> Result<Submission, Refusal> {
    parse::<SubmissionBody>(input)
        .map(Submission::from)
        .map_err(|mut refusal| {
            if refusal.message.starts_with("Missing field") {
                refusal
                    .message
                    .push_str(" Submit the `receipt` object check_proposal returned, unchanged.");
            }
            refusal
        })
}

/// An accepted submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub audience: Origin,
    pub nonce: Nonce,
    pub session_id: SessionId,
    pub key_id: KeyId,
    pub issued_at: Timestamp,
    pub expires_at: Timestamp,
    pub claims: Vec<Claim>,
    /// The issuer-backed answers, each proven by a presentation that verified.
    pub proven: Vec<Proven>,
}

/// A short name for what a claim is about ("income", "district"), for messages.
pub fn topic(claim: &Claim) -> &'static str {
    claim.attribute().name()
}

impl Accepted {
    /// For each required claim, who vouches for it: "income proven by Tax Office Nordstadt;
    /// district: your word".
    pub fn provenance_text(&self) -> String {
        let parts: Vec<String> = self
            .claims
            .iter()
            .map(
                |claim| match self.proven.iter().find(|p| &p.claim == claim) {
                    Some(p) => format!("{} proven by {}", topic(claim), p.issuer_name),
                    None => format!("{}: your word", topic(claim)),
                },
            )
            .collect();
        parts.join("; ")
    }

    /// `{ok: true, result: {accepted: true, ...}}`.
    pub fn envelope(&self, policy: &Policy) -> Value {
        json!(crate::api::Answer::new(crate::api::AcceptedResult {
            accepted: true,
            site_name: policy.site_name.clone(),
            audience: self.audience.clone(),
            nonce: self.nonce.clone(),
            session_id: self.session_id.clone(),
            key_id: self.key_id.clone(),
            issued_at_ms: self.issued_at.millis(),
            expires_at_ms: self.expires_at.millis(),
            claims: self.claims.clone(),
            proven: self.proven.clone(),
            message: format!(
                "Accepted: {} received your {} and every requirement is met ({}). Tell the \
                 person; nothing else is needed. The nonce is now spent.",
                policy.site_name,
                policy.submission,
                self.provenance_text()
            ),
        }))
    }
}

/// The refusal for a receipt's verification error: one per [`VerifyError`], matched
/// exhaustively (a new way to fail does not compile until it has its words).
pub fn refusal_for(error: &VerifyError, origin: &Origin, policy: &Policy) -> Refusal {
    let (code, message) = match error {
        VerifyError::UnknownKey => (
            Code::UnknownKey,
            "The receipt names a signing key the signer does not publish for the time it was \
             issued. Ask the wallet to sign it again with the signer this site trusts."
                .to_owned(),
        ),
        VerifyError::BadSignature => (
            Code::BadSignature,
            "The receipt's signature does not verify: it was changed after signing. Submit the \
             receipt exactly as check_proposal returned it."
                .to_owned(),
        ),
        VerifyError::ChainBroken(ChainBroken { index }) => (
            Code::ChainBroken,
            format!(
                "The receipt's comparison log does not chain at entry {index}. Submit the receipt \
                 exactly as check_proposal returned it."
            ),
        ),
        VerifyError::AudienceMismatch => (
            Code::WrongAudience,
            format!(
                "This receipt was made for another site. This site is {origin}: call {} and ask \
                 the wallet for a receipt with that origin as its audience.",
                policy.requirements_tool
            ),
        ),
        VerifyError::NonceMismatch => (
            Code::NonceMismatch,
            "The receipt carries another nonce than the one you named. Submit the receipt the \
             wallet drafted for that nonce."
                .to_owned(),
        ),
        VerifyError::NotYetValid => (
            Code::NotYetValid,
            "The receipt's validity window has not started by this site's clock. Try again in a \
             minute; if it persists, a clock is wrong."
                .to_owned(),
        ),
        VerifyError::Expired => (
            Code::Expired,
            format!(
                "The receipt's validity window has ended. Call {} for a fresh nonce and have the \
                 wallet draft a new application.",
                policy.requirements_tool
            ),
        ),
        VerifyError::Malformed(MalformedReceipt(reason)) => (
            Code::InvalidInput,
            format!("The receipt is malformed: {reason}."),
        ),
        VerifyError::Revoked => (
            Code::ReceiptRevoked,
            format!(
                "The signer has revoked this receipt: the wallet install it was signed for was \
                 revoked by the signer's operator, so {} cannot accept it. Tell the person; a \
                 receipt from this wallet will not count until it is enrolled with the signer \
                 again.",
                policy.site_name
            ),
        ),
    };
    Refusal::new(code, message)
}

/// The refusal for a nonce that is not open: after [`decide`] read its state, or after the
/// server's atomic consume changed no row and it read the state again.
pub fn nonce_refusal(state: NonceState, policy: &Policy) -> Refusal {
    let fresh = format!(
        "Call {} for a fresh nonce, then ask the wallet (request_claims, draft_application) \
         for a receipt with it.",
        policy.requirements_tool
    );
    match state {
        NonceState::Used => Refusal::new(
            Code::ReplayedNonce,
            format!(
                "This receipt's nonce was already spent on an accepted {}; a receipt counts \
                 once. {fresh}",
                policy.submission
            ),
        ),
        NonceState::Lapsed => Refusal::new(
            Code::UnknownNonce,
            format!(
                "This site issued the receipt's nonce more than an hour ago; it has lapsed. {fresh}"
            ),
        ),
        NonceState::Unknown | NonceState::Open => Refusal::new(
            Code::UnknownNonce,
            format!("This site did not issue the receipt's nonce (or no longer knows it). {fresh}"),
        ),
    }
}

fn claim_refusal(claim: &Claim, verified: &VerifiedReceipt, policy: &Policy) -> Refusal {
    let answers: Vec<_> = verified
        .answers()
        .iter()
        .filter(|(c, _)| c == claim)
        .map(|(_, o)| *o)
        .collect();
    let how = if answers.is_empty() {
        "does not answer it at all (was its tool called before the grant ended?)".to_owned()
    } else {
        let said: Vec<&str> = answers.iter().map(|o| o.as_str()).collect();
        format!("answers it {}", said.join(", then "))
    };
    Refusal {
        code: Code::ClaimNotSatisfied,
        message: format!(
            "The receipt does not show the required claim {} ({}) satisfied: it {how}. {} \
             cannot accept this {}; tell the person which requirement is not met.",
            claim.canonical(),
            describe(claim),
            policy.site_name,
            policy.submission
        ),
        claim: Some(claim.clone()),
    }
}

/// Checks the receipt of `submission` for the site at `origin`, against the signer's published
/// `keys`, at `now`: signature, chain, audience, the nonce the agent named (if it named one),
/// window, then the signer's revoked receipts ([`PublishedKeys::verify`]).
pub fn check_receipt(
    policy: &Policy,
    origin: &Origin,
    submission: &Submission,
    keys: &PublishedKeys,
    now: Timestamp,
) -> Result<VerifiedReceipt, Refusal> {
    let signed = &submission.receipt;
    let expected = submission.nonce.as_ref().unwrap_or(&signed.payload.nonce);
    keys.verify(signed, origin, expected, now)
        .map_err(|e| refusal_for(&e, origin, policy))
}

/// What the server must do with a checked receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Accept, provided the server consumes `nonce` atomically (one row changed); otherwise
    /// answer [`nonce_refusal`] of the nonce's state.
    Consume { nonce: Nonce, accepted: Accepted },
    /// Refuse; nothing is spent.
    Refuse(Refusal),
}

/// Decides a `verified` receipt whose nonce stands at `nonce_state` (read from the server's
/// database), with its checked presentations `proofs` ([`crate::proof::check_presentations`]):
/// a nonce that is not open is refused; then presentations that did not prove the receipt's
/// issuer-backed answers; then a receipt that does not show every one of the policy's claims
/// satisfied; then a self-asserted answer to a claim kind the policy takes only with proof.
pub fn decide(
    policy: &Policy,
    verified: &VerifiedReceipt,
    proofs: &Proofs,
    nonce_state: NonceState,
) -> Verdict {
    if nonce_state != NonceState::Open {
        return Verdict::Refuse(nonce_refusal(nonce_state, policy));
    }
    let proven = match &proofs.checked {
        Ok(proven) => proven.clone(),
        Err(refusal) => return Verdict::Refuse(refusal.clone()),
    };
    if !verified.satisfies_all(&policy.claims) {
        // Name the first claim not shown satisfied (there is one, or satisfies_all held).
        let missing = policy.claims.iter().find(|c| !verified.satisfies(c));
        return Verdict::Refuse(match missing {
            Some(claim) => claim_refusal(claim, verified, policy),
            None => Refusal::new(
                Code::ClaimNotSatisfied,
                "The receipt does not show every required claim satisfied.",
            ),
        });
    }
    if let Some(claim) = policy
        .claims
        .iter()
        .find(|c| policy.requires_proof(c) && proofs.proven(c).is_none())
    {
        return Verdict::Refuse(Refusal {
            code: Code::ProofRequired,
            message: format!(
                "{} takes {} ({}) only with an issuer's proof, and the receipt's answer is the \
                 person's own word. The person can add a credential from an issuer this site \
                 trusts in the wallet (Settings, Credentials), then ask the wallet for a new \
                 application. Provable: {}.",
                policy.site_name,
                claim.canonical(),
                describe(claim),
                tacit_protocol::predicates::provable_thresholds(claim.attribute())
            ),
            claim: Some(claim.clone()),
        });
    }
    let nonce = verified.nonce().clone();
    Verdict::Consume {
        accepted: Accepted {
            audience: verified.audience().clone(),
            nonce: nonce.clone(),
            session_id: verified.session_id().clone(),
            key_id: verified.key_id().clone(),
            issued_at: verified.issued_at(),
            expires_at: verified.expires_at(),
            claims: policy.claims.clone(),
            proven,
        },
        nonce,
    }
}

#[cfg(test)]
mod tests;
