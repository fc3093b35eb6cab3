//! A site's policy: who it is, the yes/no claims it requires (public parameters only), and the
//! two WebMCP tools it offers, as plain data.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tacit_protocol::predicates::disclosure_for;
use tacit_protocol::site_auth::{Attestation, Requirements};
use wallet_core::profile::format_minor;
use wallet_core::{Claim, ClaimKind, Money, Nonce, Origin, ToolName};

#[cfg(not(target_arch = "wasm32"))]
use crate::api::{RequirementsInput, SubmissionBody, input_schema};

/// Most claims one policy may require (the wallet's `request_claims` takes at most eight).
pub const MAX_CLAIMS: usize = 8;

/// Longest `site_name` the wallet accepts.
pub const MAX_SITE_NAME: usize = 120;

/// Longest `purpose` the wallet accepts.
pub const MAX_PURPOSE: usize = 512;

/// What a relying site asks for and how it names its tools. Every field is public; it is read
/// from the `[policy]` table of the site's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Shown to the person by the wallet.
    pub site_name: String,
    /// Why the site asks, shown to the person by the wallet.
    pub purpose: String,
    /// The read-only tool that hands out the policy and a fresh nonce.
    pub requirements_tool: String,
    /// The consequential tool that takes a signed receipt.
    pub submit_tool: String,
    /// What is being submitted, for tool titles and messages ("application", "order").
    pub submission: String,
    /// What the person reads when a submission is accepted.
    pub accepted_text: String,
    /// Every claim must be shown satisfied by the receipt.
    pub claims: Vec<Claim>,
    /// Claim kinds (`income_below`, `age_at_least`) this site takes only issuer-backed: a
    /// self-asserted answer to such a claim is refused `proof_required`. Each must name a kind
    /// of `claims` an issuer can prove (a ladder step, an age threshold). Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub require_proof: Vec<ClaimKind>,
}

/// Why a policy cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PolicyError(pub &'static str);

impl Policy {
    /// Checks what the wallet will check: tool names, lengths, one to eight distinct claims.
    pub fn check(&self) -> Result<(), PolicyError> {
        for name in [&self.requirements_tool, &self.submit_tool] {
            ToolName::parse(name).map_err(|_| PolicyError("a tool name is not a valid name"))?;
        }
        if self.requirements_tool == self.submit_tool {
            return Err(PolicyError("the two tools need different names"));
        }
        if self.site_name.is_empty() || self.site_name.chars().count() > MAX_SITE_NAME {
            return Err(PolicyError("the site name must be 1 to 120 characters"));
        }
        if self.purpose.chars().count() > MAX_PURPOSE {
            return Err(PolicyError("the purpose must be at most 512 characters"));
        }
        if self.submission.is_empty() || self.submission.chars().count() > 40 {
            return Err(PolicyError(
                "the submission word must be 1 to 40 characters",
            ));
        }
        if self.accepted_text.chars().count() > MAX_PURPOSE {
            return Err(PolicyError(
                "the accepted text must be at most 512 characters",
            ));
        }
        if self.claims.is_empty() || self.claims.len() > MAX_CLAIMS {
            return Err(PolicyError("a policy requires one to eight claims"));
        }
        for (i, claim) in self.claims.iter().enumerate() {
            if self.claims[..i].contains(claim) {
                return Err(PolicyError("a policy lists a claim twice"));
            }
        }
        for (i, kind) in self.require_proof.iter().enumerate() {
            if self.require_proof[..i].contains(kind) {
                return Err(PolicyError("require_proof lists a kind twice"));
            }
            let mut of_kind = self
                .claims
                .iter()
                .filter(|c| c.claim_kind() == *kind)
                .peekable();
            if of_kind.peek().is_none() {
                return Err(PolicyError(
                    "require_proof names a kind none of the policy's claims has",
                ));
            }
            if !of_kind.all(provable) {
                return Err(PolicyError(
                    "require_proof names a claim no issuer can prove (income_below at a whole \
                     5,000.00 step from 10,000.00 to 200,000.00, or age_at_least 16, 18, 21 or 65)",
                ));
            }
        }
        Ok(())
    }

    /// Whether the policy takes `claim` only with an issuer's proof.
    pub fn requires_proof(&self, claim: &Claim) -> bool {
        self.require_proof.contains(&claim.claim_kind())
    }

    /// The requirements for `origin` with a fresh `nonce`: exactly the wallet's
    /// `request_claims` input, less the site's attestation.
    pub fn requirements(&self, origin: &Origin, nonce: &Nonce) -> Requirements {
        Requirements {
            origin: origin.clone(),
            nonce: nonce.clone(),
            site_name: self.site_name.clone(),
            purpose: self.purpose.clone(),
            claims: self.claims.clone(),
        }
    }

    /// What the page needs to start: the words it shows and the two tools it registers. Public,
    /// like everything in a policy. (Native: the server hands it to the page.)
    #[cfg(not(target_arch = "wasm32"))]
    pub fn site_json(&self) -> Value {
        json!(self.site_info())
    }

    /// The page's words and tools (`GET /api/site` adds the trusted issuers).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn site_info(&self) -> crate::api::SiteInfo {
        crate::api::SiteInfo {
            site_name: self.site_name.clone(),
            submission: self.submission.clone(),
            accepted_text: self.accepted_text.clone(),
            needs: self.claims.iter().map(|c| self.need(c)).collect(),
            tools: vec![self.requirements_tool_json(), self.submit_tool_json()],
            trusted_issuers: Vec::new(),
        }
    }

    /// The requirements tool, as `registerTool` takes it (without `execute`); its
    /// `inputSchema` is generated from [`RequirementsInput`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn requirements_tool_json(&self) -> Value {
        let needs: Vec<String> = self.claims.iter().map(|c| self.need(c)).collect();
        json!({
            "name": self.requirements_tool,
            "title": format!("{}: what we need to know", self.site_name),
            "description": format!(
                "Returns what {} needs before it accepts your {}: its origin, a fresh single-use \
                 nonce, and the yes/no claims it requires with their public parameters ({}), \
                 signed by the site (attestation). The result is exactly the input of the Tacit \
                 wallet's request_claims tool: pass it unchanged. Never asks for a personal value. \
                 Then, once the wallet has released a signed receipt for this origin and nonce, \
                 call {}: that tool exists only while a nonce this page handed out is open (it \
                 appears after this call, and leaves once an application is accepted or the \
                 nonce expires).",
                self.site_name,
                self.submission,
                needs.join("; "),
                self.submit_tool
            ),
            "inputSchema": input_schema::<RequirementsInput>(),
            "annotations": { "readOnlyHint": true },
        })
    }

    /// A claim in words, with "(proven by an issuer)" when the policy requires proof.
    #[cfg(not(target_arch = "wasm32"))]
    fn need(&self, claim: &Claim) -> String {
        if self.requires_proof(claim) {
            format!("{} (proven by an issuer)", describe(claim))
        } else {
            describe(claim)
        }
    }

    /// The submission tool, as `registerTool` takes it (without `execute`); its `inputSchema`
    /// is generated from [`SubmissionBody`], the type its input is read as.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn submit_tool_json(&self) -> Value {
        json!({
            "name": self.submit_tool,
            "title": format!("{}: submit {}", self.site_name, self.submission),
            "description": format!(
                "Submits your {} to {} with the signed Tacit receipt the wallet's check_proposal \
                 returned (its `receipt` object, unchanged) and, when it returned them, its \
                 `presentations` (one SD-JWT per answer an issuer vouches for, unchanged). The \
                 site's server checks the signer's signature against the signer keys it trusts, \
                 that the receipt is for this site's origin and for a nonce {} issued and nobody \
                 used yet, its validity window, each presentation against the issuers it trusts \
                 (bound to this origin and the receipt's nonce, at most five minutes old, \
                 disclosing exactly the answer it proves, not revoked in its issuer's status \
                 list), and that every required claim is \
                 satisfied{}. Answers {{ok: true, result: {{accepted: true, proven, ...}}}} or \
                 {{ok: false, error: {{code, message}}}}; codes: invalid_input, unknown_nonce, \
                 replayed_nonce, wrong_audience, nonce_mismatch, bad_signature, unknown_key, \
                 chain_broken, expired, not_yet_valid, claim_not_satisfied, signer_unreachable, \
                 site_unreachable, busy, proof_missing, proof_invalid, untrusted_issuer, \
                 proof_mismatch, proof_required, receipt_revoked, credential_revoked, \
                 status_unavailable; grant_expired or grant_revoked when called \
                 after the tool left (call {} again).",
                self.submission,
                self.site_name,
                self.requirements_tool,
                if self.require_proof.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (and, for {}, proven by an issuer)",
                        self.require_proof
                            .iter()
                            .map(|k| k.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
                self.requirements_tool,
            ),
            "inputSchema": input_schema::<SubmissionBody>(),
            "annotations": { "consequentialHint": true },
        })
    }
}

/// The requirements tool's result: `requirements` with the site's `attestation` beside them,
/// exactly what the wallet's `request_claims` takes.
pub fn attested_json(requirements: &Requirements, attestation: &Attestation) -> Value {
    let mut out = json!(requirements);
    if let Value::Object(map) = &mut out {
        map.insert("attestation".into(), json!(attestation));
    }
    out
}

/// Whether an issuer can prove `claim`: an income limit at a ladder step (in its own
/// currency), an age at a threshold.
fn provable(claim: &Claim) -> bool {
    let currency = match claim {
        Claim::IncomeBelow { limit } => Some(&limit.currency),
        _ => None,
    };
    disclosure_for(claim, currency).is_some()
}

/// A sentence for people: the claim with its public parameters, using the catalogue's labels
/// and amounts as `30,000.00 EUR` (the claim catalogue's [`Claim::wording`]).
pub fn describe(claim: &Claim) -> String {
    let money = |m: &Money| format!("{} {}", format_minor(m.amount_minor), m.currency.as_str());
    claim.wording(&money).requirement
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Policy {
        let claims = serde_json::from_value(json!([
            { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } },
            { "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] }
        ]))
        .unwrap();
        Policy {
            site_name: "City Housing Programme".into(),
            purpose: "Eligibility for subsidised housing".into(),
            requirements_tool: "housing_requirements".into(),
            submit_tool: "housing_submit_application".into(),
            submission: "application".into(),
            accepted_text: "Eligible.".into(),
            claims,
            require_proof: Vec::new(),
        }
    }

    #[test]
    fn requirements_are_the_wallets_request_claims_input() {
        let policy = sample();
        let origin = Origin::parse("http://127.0.0.1:8081").unwrap();
        let nonce = Nonce::parse("0123456789abcdef").unwrap();
        let attestation = Attestation {
            kid: "k".into(),
            expires_at_ms: 5,
            signature: "s".into(),
        };
        let out = attested_json(&policy.requirements(&origin, &nonce), &attestation);
        assert_eq!(
            tacit_testkit::fixtures::sorted_keys(&out),
            tacit_testkit::fixtures::REQUEST_CLAIMS_KEYS
        );
        assert_eq!(
            out["attestation"],
            json!({ "kid": "k", "expires_at_ms": 5, "signature": "s" })
        );
        assert_eq!(out["origin"], "http://127.0.0.1:8081");
        assert_eq!(out["nonce"], "0123456789abcdef");
        assert_eq!(
            out["claims"],
            json!([
                { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } },
                { "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] }
            ])
        );
    }

    #[test]
    fn tools_carry_their_hints_and_a_strict_schema() {
        let policy = sample();
        let req = policy.requirements_tool_json();
        assert_eq!(req["name"], "housing_requirements");
        assert_eq!(req["annotations"], json!({ "readOnlyHint": true }));
        assert_eq!(req["inputSchema"]["additionalProperties"], false);
        let submit = policy.submit_tool_json();
        assert_eq!(submit["name"], "housing_submit_application");
        assert_eq!(submit["annotations"], json!({ "consequentialHint": true }));
        assert_eq!(submit["inputSchema"]["required"], json!(["receipt"]));
        let presentations = &submit["inputSchema"]["properties"]["presentations"];
        assert_eq!(presentations["type"], "array");
        assert_eq!(presentations["maxItems"], 8);
        assert_eq!(presentations["items"]["maxLength"], 32 * 1024);
        let description = submit["description"].as_str().unwrap();
        for code in crate::submit::Code::ALL {
            assert!(description.contains(code.as_str()), "{}", code.as_str());
        }
        assert!(
            req["description"]
                .as_str()
                .unwrap()
                .contains("below 30,000.00 EUR")
        );
    }

    #[test]
    fn people_read_labels() {
        let policy = sample();
        assert_eq!(
            describe(&policy.claims[0]),
            "household income below 30,000.00 EUR"
        );
        assert_eq!(
            describe(&policy.claims[1]),
            "lives in Altstadt, Nordhafen or Westend"
        );
        let none: Claim = serde_json::from_value(
            json!({ "kind": "has_none_of", "conditions": ["pregnancy", "liver-disease"] }),
        )
        .unwrap();
        assert_eq!(describe(&none), "none of: liver disease, pregnancy");
        assert_eq!(
            describe(&Claim::age_at_least(18).unwrap()),
            "at least 18 years old"
        );
    }

    #[test]
    fn bad_policies_are_refused() {
        assert_eq!(sample().check(), Ok(()));
        let mut p = sample();
        p.claims.clear();
        assert!(p.check().is_err());
        let mut p = sample();
        p.claims.push(p.claims[0].clone());
        assert!(p.check().is_err());
        let mut p = sample();
        p.submit_tool = "housing requirements".into();
        assert!(p.check().is_err());
        let mut p = sample();
        p.submit_tool = p.requirements_tool.clone();
        assert!(p.check().is_err());
        let mut p = sample();
        p.site_name = String::new();
        assert!(p.check().is_err());
    }

    #[test]
    fn require_proof_names_provable_kinds_of_the_policy() {
        let mut p = sample();
        p.require_proof = vec![ClaimKind::IncomeBelow];
        assert_eq!(p.check(), Ok(()));
        assert!(p.requires_proof(&p.claims[0]));
        assert!(!p.requires_proof(&p.claims[1]));
        assert!(
            p.site_json()["needs"][0]
                .as_str()
                .unwrap()
                .ends_with("(proven by an issuer)")
        );
        let description = p.submit_tool_json()["description"].clone();
        assert!(
            description
                .as_str()
                .unwrap()
                .contains("for income_below, proven by an issuer")
        );
        for (kinds, needle) in [
            (vec![ClaimKind::ResidesIn], "no issuer can prove"),
            (vec![ClaimKind::AgeAtLeast], "none of the policy's claims"),
            (
                vec![ClaimKind::IncomeBelow, ClaimKind::IncomeBelow],
                "twice",
            ),
        ] {
            let mut p = sample();
            p.require_proof = kinds;
            assert!(p.check().unwrap_err().0.contains(needle), "{needle}");
        }
        // A name outside the claim catalogue is refused when the configuration is read.
        let mut typo = serde_json::to_value(sample()).unwrap();
        typo["require_proof"] = json!(["income"]);
        assert!(serde_json::from_value::<Policy>(typo).is_err());
        // A limit between two ladder steps cannot be proven, so it cannot be required.
        let mut p = sample();
        p.claims[0] = serde_json::from_value(json!(
            { "kind": "income_below", "limit": { "amount_minor": 3_100_000, "currency": "EUR" } }
        ))
        .unwrap();
        p.require_proof = vec![ClaimKind::IncomeBelow];
        assert!(p.check().unwrap_err().0.contains("no issuer can prove"));
        // Parsed from the configuration's TOML shape, and absent means none.
        let parsed: Policy = serde_json::from_value(json!({
            "site_name": "S", "purpose": "P", "requirements_tool": "a_req",
            "submit_tool": "a_sub", "submission": "order", "accepted_text": "ok",
            "claims": [{ "kind": "age_at_least", "years": 18 }],
            "require_proof": ["age_at_least"]
        }))
        .unwrap();
        assert_eq!(parsed.check(), Ok(()));
        assert_eq!(sample().require_proof, Vec::<ClaimKind>::new());
    }

    #[test]
    fn the_page_gets_words_and_tools_only() {
        let site = sample().site_json();
        assert_eq!(site["tools"][0]["name"], "housing_requirements");
        assert_eq!(site["tools"][1]["name"], "housing_submit_application");
        assert_eq!(
            site["needs"],
            json!([
                "household income below 30,000.00 EUR",
                "lives in Altstadt, Nordhafen or Westend"
            ])
        );
    }
}
