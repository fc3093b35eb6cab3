//! What the page shows for a server envelope, as plain data (pure, tested natively); the wasm
//! page (`web`) only puts these texts into its elements with `textContent`.

use serde_json::Value;

use crate::submit::{Code, topic};

/// The latest thing that happened, as the status area shows it: what the server answered.
#[derive(Debug, Clone)]
pub enum Outcome {
    Waiting,
    Asked(String),
    Accepted {
        nonce: String,
        key_id: String,
        /// Each required claim in words, with the issuer that proved it (`None`: the person's
        /// word).
        claims: Vec<(String, Option<String>)>,
        /// "income proven by Tax Office Nordstadt; district: your word".
        provenance: String,
    },
    Refused {
        code: String,
        message: String,
        claim: Option<String>,
    },
}

impl Outcome {
    /// Reads a server envelope (`submit`: the verdict tool's; otherwise the requirements').
    pub fn of(envelope: &Value, submit: bool) -> Self {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        if envelope["ok"] == true {
            let result = &envelope["result"];
            if !submit {
                return Outcome::Asked(text(&result["nonce"]));
            }
            let proven: Vec<(&Value, String)> = result["proven"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .map(|p| (&p["claim"], text(&p["issuer_name"])))
                        .collect()
                })
                .unwrap_or_default();
            let by = |claim: &Value| {
                proven
                    .iter()
                    .find(|(c, _)| *c == claim)
                    .map(|(_, name)| name.clone())
            };
            let listed = result["claims"].as_array().cloned().unwrap_or_default();
            let claims = listed.iter().map(|c| (describe_json(c), by(c))).collect();
            let provenance: Vec<String> = listed
                .iter()
                .map(|c| {
                    let topic = serde_json::from_value::<wallet_core::Claim>(c.clone())
                        .map_or("answer", |claim| topic(&claim));
                    match by(c) {
                        Some(name) => format!("{topic} proven by {name}"),
                        None => format!("{topic}: your word"),
                    }
                })
                .collect();
            return Outcome::Accepted {
                nonce: text(&result["nonce"]),
                key_id: text(&result["key_id"]),
                claims,
                provenance: provenance.join("; "),
            };
        }
        let error = &envelope["error"];
        Outcome::Refused {
            code: text(&error["code"]),
            message: text(&error["message"]),
            claim: error.get("claim").map(describe_json),
        }
    }

    /// What the status area shows for this outcome, on the site called `site_name`, whose
    /// submission is called `submission` and whose acceptance reads `accepted_text`. The title,
    /// text, items and next step are for the person; `code` and `detail` (request references,
    /// key ids, reason codes, the server's message) go under "For developers".
    pub fn status(&self, site_name: &str, submission: &str, accepted_text: &str) -> Status {
        let (class, title, text, items, next, code, detail): (
            _,
            String,
            String,
            Vec<(&'static str, String)>,
            String,
            _,
            _,
        ) = match self {
            Outcome::Waiting => (
                "status idle",
                "Waiting for your agent".to_owned(),
                format!(
                    "Ask your agent to handle this {submission} for you. It reads what we need, \
                     asks for your consent in your Tacit wallet, and brings back a signed yes/no \
                     receipt."
                ),
                Vec::new(),
                String::new(),
                String::new(),
                String::new(),
            ),
            Outcome::Asked(nonce) => (
                "status asked",
                "Your agent asked what we need".to_owned(),
                "Approve the questions in your Tacit wallet. Your agent then sends us the signed \
                 answers."
                    .to_owned(),
                Vec::new(),
                format!("Our answer appears here as soon as {site_name} has checked them."),
                format!("Request reference (nonce) {nonce}"),
                String::new(),
            ),
            Outcome::Accepted {
                nonce,
                key_id,
                claims,
                provenance,
            } => (
                "status ok",
                format!("Accepted by {site_name}"),
                accepted_text.to_owned(),
                claims
                    .iter()
                    .map(|(c, by)| match by {
                        Some(name) => ("yes proven", format!("✓ {c} — proven by {name}")),
                        None => ("yes", format!("✓ {c} — your word")),
                    })
                    .collect(),
                format!(
                    "What happens next: nothing more is needed from you. {site_name} asked for no \
                     name and no address, so it cannot write to you: this page shows its answer \
                     until you close or reload it, and your agent received the same answer."
                ),
                format!(
                    "Receipt for request {nonce} · signer key {key_id} · checked by the site's server"
                ),
                provenance.clone(),
            ),
            Outcome::Refused {
                code,
                message,
                claim,
            } => {
                let known = Code::parse(code);
                let undecided = matches!(
                    known,
                    Some(Code::Busy | Code::SiteUnreachable | Code::SignerUnreachable)
                );
                (
                    "status bad",
                    if undecided {
                        format!("Not decided: {site_name} could not check it")
                    } else {
                        format!("Refused by {site_name}")
                    },
                    known
                        .map_or("The site refused the request.", Code::for_person)
                        .to_owned(),
                    claim
                        .iter()
                        .map(|c| {
                            let proof = code.starts_with("proof_") || code == "untrusted_issuer";
                            let how = if proof { "Not proven" } else { "Not shown" };
                            ("no", format!("✗ {how}: {c}"))
                        })
                        .collect(),
                    if undecided {
                        "What happens next: nothing was decided and nothing was used up; your \
                         agent can send the same answers again in a moment."
                            .to_owned()
                    } else {
                        format!(
                            "What happens next: nothing was accepted from these answers. If you \
                             meet every requirement above, your agent can start this {submission} \
                             again, and your wallet asks you before it answers."
                        )
                    },
                    format!("Reason code: {code}"),
                    if known == Some(Code::Busy) {
                        String::new()
                    } else {
                        message.clone()
                    },
                )
            }
        };
        Status {
            class,
            title,
            text,
            items,
            next,
            code,
            detail,
        }
    }

    pub fn summary(&self) -> String {
        match self {
            Outcome::Waiting => "waiting".to_owned(),
            Outcome::Asked(nonce) => format!("requirements issued, nonce {nonce}"),
            Outcome::Accepted { nonce, .. } => format!("accepted, nonce {nonce}"),
            Outcome::Refused { code, .. } => format!("refused: {code}"),
        }
    }
}

/// A claim from the server's JSON, in words (the raw JSON if it is not a claim).
fn describe_json(claim: &Value) -> String {
    serde_json::from_value::<wallet_core::Claim>(claim.clone())
        .map(|c| crate::policy::describe(&c))
        .unwrap_or_else(|_| claim.to_string())
}

/// The sentence under the requirements: whose proof this site accepts.
pub fn issuers_text(names: &[String]) -> String {
    match names {
        [] => "Every answer is your word: this site accepts no issuer's proof.".to_owned(),
        names => format!(
            "An answer can carry proof from {}, if your wallet holds its credential; any other \
             answer is your word.",
            names.join(" or ")
        ),
    }
}

/// The status area's texts: its class, title, sentence, item lines (class, text) and next step,
/// which the person reads, then the reference line and detail, which the page keeps under
/// "For developers".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub class: &'static str,
    pub title: String,
    pub text: String,
    pub items: Vec<(&'static str, String)>,
    /// What happens next, in plain words (empty while nothing is asked yet).
    pub next: String,
    pub code: String,
    pub detail: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;
    use wallet_core::{Claim, KeyId, Nonce, Origin, SessionId, Timestamp};

    use super::*;
    use crate::policy::Policy;
    use crate::proof::Proven;
    use crate::submit::{Accepted, Refusal};

    fn policy() -> Policy {
        serde_json::from_value(json!({
            "site_name": "City Housing Programme", "purpose": "p",
            "requirements_tool": "housing_requirements",
            "submit_tool": "housing_submit_application", "submission": "application",
            "accepted_text": "Eligible.",
            "claims": [
                { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } },
                { "kind": "resides_in", "districts": ["altstadt"] }
            ]
        }))
        .unwrap()
    }

    fn accepted(proven: Vec<Proven>) -> Value {
        let policy = policy();
        Accepted {
            audience: Origin::parse("http://127.0.0.1:8081").unwrap(),
            nonce: Nonce::parse("n1").unwrap(),
            session_id: SessionId::parse("s").unwrap(),
            key_id: KeyId::parse(&"ab".repeat(8)).unwrap(),
            issued_at: Timestamp::from_millis(0),
            expires_at: Timestamp::from_millis(1),
            claims: policy.claims.clone(),
            proven,
        }
        .envelope(&policy)
    }

    #[test]
    fn the_page_says_who_proved_each_answer() {
        let income: Claim = policy().claims[0].clone();
        let envelope = accepted(vec![Proven {
            claim: income,
            issuer: Origin::parse("http://127.0.0.1:8791").unwrap(),
            issuer_name: "Tax Office Nordstadt".into(),
        }]);
        let status = Outcome::of(&envelope, true).status(
            "City Housing Programme",
            "application",
            "Eligible.",
        );
        assert_eq!(status.class, "status ok");
        assert_eq!(status.text, "Eligible.");
        assert_eq!(
            status.items,
            [
                (
                    "yes proven",
                    "✓ household income below 30,000.00 EUR — proven by Tax Office Nordstadt"
                        .to_owned()
                ),
                ("yes", "✓ lives in Altstadt — your word".to_owned()),
            ]
        );
        assert_eq!(
            status.detail,
            "income proven by Tax Office Nordstadt; district: your word"
        );
        // The same words the server's message gives the agent.
        let message = envelope["result"]["message"].as_str().unwrap();
        assert!(message.contains(&status.detail), "{message}");

        let own = Outcome::of(&accepted(Vec::new()), true).status(
            "City Housing Programme",
            "application",
            "Eligible.",
        );
        assert_eq!(own.detail, "income: your word; district: your word");
    }

    #[test]
    fn the_page_names_the_issuers_it_trusts() {
        assert_eq!(
            issuers_text(&["Tax Office Nordstadt".to_owned()]),
            "An answer can carry proof from Tax Office Nordstadt, if your wallet holds its \
             credential; any other answer is your word."
        );
        assert!(issuers_text(&[]).contains("no issuer's proof"));
    }

    #[test]
    fn a_refused_proof_names_the_claim_not_proven() {
        let refusal = Refusal {
            code: Code::ProofMissing,
            message: "The receipt says Tax Office Nordstadt vouches for …".into(),
            claim: Some(policy().claims[0].clone()),
        };
        let status = Outcome::of(&refusal.envelope(), true).status(
            "City Housing Programme",
            "application",
            "Eligible.",
        );
        assert_eq!(status.class, "status bad");
        assert_eq!(status.text, Code::ProofMissing.for_person());
        assert_eq!(
            status.items,
            [(
                "no",
                "✗ Not proven: household income below 30,000.00 EUR".to_owned()
            )]
        );
        assert_eq!(status.code, "Reason code: proof_missing");
        assert!(status.detail.starts_with("The receipt says Tax Office"));
    }

    #[test]
    fn the_status_names_the_site_and_what_happens_next() {
        let site = "City Housing Programme";
        let accepted =
            Outcome::of(&accepted(Vec::new()), true).status(site, "application", "Eligible.");
        assert_eq!(accepted.title, "Accepted by City Housing Programme");
        assert!(
            accepted.next.contains("cannot write to you"),
            "{}",
            accepted.next
        );
        // Developer details stay out of what the person reads.
        for person in [&accepted.title, &accepted.text, &accepted.next] {
            assert!(
                !person.contains("n1") && !person.contains("abab"),
                "{person}"
            );
        }
        assert!(
            accepted.code.contains("signer key abab"),
            "{}",
            accepted.code
        );

        let refused = Outcome::of(&Refusal::new(Code::ReplayedNonce, "spent").envelope(), true)
            .status(site, "application", "Eligible.");
        assert_eq!(refused.title, "Refused by City Housing Programme");
        assert!(
            refused.next.contains("nothing was accepted"),
            "{}",
            refused.next
        );
        assert!(!refused.text.contains("replayed_nonce"));
        assert_eq!(refused.code, "Reason code: replayed_nonce");

        let busy = Outcome::of(
            &Refusal::new(Code::SiteUnreachable, "down").envelope(),
            true,
        )
        .status(site, "application", "Eligible.");
        assert!(busy.title.starts_with("Not decided"), "{}", busy.title);
        assert!(busy.next.contains("nothing was used up"), "{}", busy.next);

        let asked = Outcome::Asked("n1".into()).status(site, "application", "Eligible.");
        assert!(!asked.next.contains("n1") && asked.code.contains("n1"));
        assert!(
            Outcome::Waiting
                .status(site, "application", "x")
                .next
                .is_empty()
        );
    }
}
