//! Issuer-backed answers, judged by the pure rules the server runs (parse, receipt check,
//! presentations against the trusted issuers, nonce state, decide, consume): every way a
//! presentation can fail to prove an answer is refused with its code, and no refusal spends the
//! nonce.

#![cfg(not(target_arch = "wasm32"))] // the server and its tests are native
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::collections::HashMap;

use common::issuer::*;
use common::*;
use serde_json::{Value, json};
use tacit_protocol::sd_jwt::{Credential, Disclosure};
use tacit_site::nonce::NonceRecord;
use tacit_site::{
    Accepted, Code, NonceState, Policy, Proofs, Proven, Refusal, Trust, Verdict,
    check_presentations, check_receipt, decide, make_nonce, nonce_refusal, parse_submission,
};
use wallet_core::{Claim, Nonce, Origin, Outcome, PublishedKeys, Timestamp};

/// When the submissions arrive: a minute after the receipt and the key binding.
const AT: Timestamp = NOW.plus_millis(MINUTE);

struct Site {
    policy: Policy,
    origin: Origin,
    trust: Trust,
    keys: PublishedKeys,
    rows: HashMap<Nonce, NonceRecord>,
    issued: u8,
}

impl Site {
    fn housing() -> Self {
        Self::new(
            housing_config().policy,
            housing_origin(),
            &[&TestIssuer::tax_office()],
        )
    }

    fn new(policy: Policy, origin: Origin, trusted: &[&TestIssuer]) -> Self {
        Self {
            policy,
            origin,
            trust: trust(trusted),
            keys: key_set(&[&signer_key()], NOW).into(),
            rows: HashMap::new(),
            issued: 0,
        }
    }

    /// A fresh nonce, issued a minute before NOW.
    fn nonce(&mut self) -> Nonce {
        self.issued += 1;
        let nonce = make_nonce([self.issued; 16]);
        self.rows
            .insert(nonce.clone(), NonceRecord::issue(NOW.plus_millis(-MINUTE)));
        nonce
    }

    fn state(&self, nonce: &Nonce) -> NonceState {
        NonceState::of(self.rows.get(nonce), AT)
    }

    /// What the server does with `{receipt, presentations}` at AT.
    fn submit(&mut self, receipt: &Value, presentations: &[String]) -> Result<Accepted, Refusal> {
        let input = json!({ "receipt": receipt, "presentations": presentations });
        let submission = parse_submission(&input)?;
        let verified = check_receipt(&self.policy, &self.origin, &submission, &self.keys, AT)?;
        let proofs = check_presentations(
            &verified,
            &submission.presentations,
            &self.trust,
            &self.origin,
            AT,
        );
        let state = NonceState::of(self.rows.get(verified.nonce()), AT);
        match decide(&self.policy, &verified, &proofs, state) {
            Verdict::Refuse(refusal) => Err(refusal),
            Verdict::Consume { nonce, accepted } => {
                match self.rows.get_mut(&nonce).map(|r| r.consume(AT)) {
                    Some(Ok(())) => Ok(accepted),
                    Some(Err(state)) => Err(nonce_refusal(state, &self.policy)),
                    None => Err(nonce_refusal(NonceState::Unknown, &self.policy)),
                }
            }
        }
    }

    /// Only the presentations' check.
    fn proofs(&self, receipt: &Value, presentations: &[String]) -> Proofs {
        let input = json!({ "receipt": receipt, "presentations": presentations });
        let submission = parse_submission(&input).unwrap();
        let verified =
            check_receipt(&self.policy, &self.origin, &submission, &self.keys, AT).unwrap();
        check_presentations(
            &verified,
            &submission.presentations,
            &self.trust,
            &self.origin,
            AT,
        )
    }

    fn receipt(&self, nonce: &Nonce, answers: &[Answer]) -> Value {
        receipt_with(&self.origin, nonce, answers, NOW, &signer_key())
    }

    /// Refused with `code`, its message containing `needle`, and the nonce still open.
    fn refused(
        &mut self,
        nonce: &Nonce,
        receipt: &Value,
        presentations: &[String],
        code: Code,
        needle: &str,
    ) -> Refusal {
        let refusal = self.submit(receipt, presentations).unwrap_err();
        assert_eq!(refusal.code, code, "{}", refusal.message);
        assert!(
            refusal.message.contains(needle),
            "{needle:?} not in: {}",
            refusal.message
        );
        assert_eq!(
            self.state(nonce),
            NonceState::Open,
            "a refusal spent the nonce"
        );
        refusal
    }
}

fn income() -> Claim {
    housing_config().policy.claims[0].clone()
}

fn district() -> Claim {
    housing_config().policy.claims[1].clone()
}

fn tax() -> Origin {
    TestIssuer::tax_office().origin
}

/// Income from the tax office, district in the person's own word.
fn backed_income(outcome: Outcome) -> Vec<Answer> {
    vec![
        (income(), outcome, Some(tax())),
        (district(), Outcome::Satisfied, None),
    ]
}

const BELOW_30K: &str = "income_below_30000";

/// A person with 28,500.00 EUR a year, holder key `seed`.
fn low_income(seed: u8) -> (Credential, p256::ecdsa::SigningKey) {
    let holder = holder_key(seed);
    let credential = tax_income(&holder, 2_850_000, "EUR");
    (credential, holder)
}

/// A tax-office income credential for `holder`, issued a day before [`NOW`].
fn tax_income(holder: &p256::ecdsa::SigningKey, income_minor: u64, currency: &str) -> Credential {
    TestIssuer::tax_office().income_credential(
        holder,
        income_minor,
        currency,
        NOW.plus_millis(-DAY),
    )
}

/// A presentation of `credential` disclosing income_below_30000 only, bound by `holder` to
/// `audience` and `nonce` at `at`.
fn show_below_30k(
    credential: &Credential,
    holder: &p256::ecdsa::SigningKey,
    audience: &Origin,
    nonce: &Nonce,
    at: Timestamp,
) -> String {
    presentation(credential, &[BELOW_30K], holder, audience, nonce, at)
}

/// The presentation the wallet makes for `nonce`: income_below_30000, bound to the housing site.
fn honest(nonce: &Nonce) -> String {
    let (credential, holder) = low_income(1);
    show_below_30k(&credential, &holder, &housing_origin(), nonce, NOW)
}

#[test]
fn an_issuer_backed_answer_with_its_presentation_is_accepted_and_named() {
    let mut site = Site::housing();
    let nonce = site.nonce();
    let receipt = site.receipt(&nonce, &backed_income(Outcome::Satisfied));
    let accepted = site.submit(&receipt, &[honest(&nonce)]).unwrap();
    assert_eq!(
        accepted.proven,
        [Proven {
            claim: income(),
            issuer: tax(),
            issuer_name: "Tax Office Nordstadt".into(),
        }]
    );
    let envelope = accepted.envelope(&site.policy);
    let result = &envelope["result"];
    assert_eq!(
        result["proven"],
        json!([{ "claim": income(), "issuer": "http://127.0.0.1:8791", "issuer_name": "Tax Office Nordstadt" }])
    );
    let message = result["message"].as_str().unwrap();
    assert!(
        message.contains("(income proven by Tax Office Nordstadt; district: your word)"),
        "{message}"
    );
    assert_eq!(site.state(&nonce), NonceState::Used);
    // The same receipt and presentation again: the nonce is spent.
    assert_eq!(
        site.submit(&receipt, &[honest(&nonce)]).unwrap_err().code,
        Code::ReplayedNonce
    );
}

#[test]
fn self_asserted_answers_need_no_presentation() {
    let mut site = Site::housing();
    let nonce = site.nonce();
    let answers = vec![
        (income(), Outcome::Satisfied, None),
        (district(), Outcome::Satisfied, None),
    ];
    let accepted = site.submit(&site.receipt(&nonce, &answers), &[]).unwrap();
    assert!(accepted.proven.is_empty());
    let envelope = accepted.envelope(&site.policy);
    assert_eq!(envelope["result"]["proven"], json!([]));
    assert!(
        envelope["result"]["message"]
            .as_str()
            .unwrap()
            .contains("(income: your word; district: your word)")
    );
}

#[test]
fn a_missing_presentation_is_refused_and_spends_nothing() {
    let mut site = Site::housing();
    let nonce = site.nonce();
    let receipt = site.receipt(&nonce, &backed_income(Outcome::Satisfied));
    let refusal = site.refused(
        &nonce,
        &receipt,
        &[],
        Code::ProofMissing,
        "Tax Office Nordstadt vouches for income_below 3000000 EUR (household income below \
         30,000.00 EUR), but the submission carries no presentations (1 expected",
    );
    assert_eq!(refusal.claim, Some(income()));
    assert_eq!(refusal.envelope()["error"]["code"], "proof_missing");
    // The same receipt with its presentation is then accepted: the nonce was not spent.
    assert!(site.submit(&receipt, &[honest(&nonce)]).is_ok());
}

#[test]
fn an_altered_disclosure_is_invalid() {
    let mut site = Site::housing();
    let nonce = site.nonce();
    // 45,000.00 EUR: income_below_30000 is false; the agent flips the disclosure to true.
    let holder = holder_key(2);
    let credential = tax_income(&holder, 4_500_000, "EUR");
    let real = show_below_30k(&credential, &holder, &site.origin, &nonce, NOW);
    let original = credential.disclosure(BELOW_30K).unwrap().encode();
    let forged = Disclosure::new(&[0xAB; 16], BELOW_30K, json!(true)).encode();
    let tampered = real.replace(&original, &forged);
    assert_ne!(tampered, real);
    let receipt = site.receipt(&nonce, &backed_income(Outcome::Satisfied));
    site.refused(
        &nonce,
        &receipt,
        &[tampered],
        Code::ProofInvalid,
        "unknown_disclosure",
    );

    // A genuine disclosure of the credential swapped in after the key binding was signed.
    let other = credential
        .disclosure("income_below_50000")
        .unwrap()
        .encode();
    let swapped = real.replace(&original, &other);
    site.refused(
        &nonce,
        &receipt,
        &[swapped],
        Code::ProofInvalid,
        "bad_sd_hash",
    );

    // The honest presentation says false: it does not back a "satisfied".
    site.refused(&nonce, &receipt, &[real], Code::ProofMismatch, "disagree");
}

#[test]
fn the_key_binding_must_name_this_site_this_nonce_and_be_fresh() {
    let mut site = Site::housing();
    let nonce = site.nonce();
    let receipt = site.receipt(&nonce, &backed_income(Outcome::Satisfied));
    let (credential, holder) = low_income(3);
    let pharmacy = pharmacy_origin();
    let cases = [
        (
            show_below_30k(&credential, &holder, &pharmacy, &nonce, NOW),
            "wrong_audience",
        ),
        (
            show_below_30k(
                &credential,
                &holder,
                &housing_origin(),
                &make_nonce([99; 16]),
                NOW,
            ),
            "wrong_nonce",
        ),
        (
            show_below_30k(
                &credential,
                &holder,
                &housing_origin(),
                &nonce,
                AT.plus_millis(-5 * MINUTE - 1000),
            ),
            "stale_key_binding",
        ),
        (
            show_below_30k(
                &credential,
                &holder,
                &housing_origin(),
                &nonce,
                AT.plus_millis(2 * MINUTE),
            ),
            "key_binding_in_future",
        ),
        (
            // Signed by a key that is not the credential's holder key.
            show_below_30k(&credential, &holder_key(4), &housing_origin(), &nonce, NOW),
            "bad_key_binding_signature",
        ),
        (
            honest(&nonce).rsplit_once('~').unwrap().0.to_owned() + "~",
            "missing_key_binding",
        ),
    ];
    for (text, code) in cases {
        let refusal = site.refused(&nonce, &receipt, &[text], Code::ProofInvalid, code);
        assert!(
            refusal
                .message
                .starts_with("Presentation 1 does not verify")
        );
    }
    // An expired credential.
    let old = TestIssuer::tax_office().income_credential(
        &holder,
        2_850_000,
        "EUR",
        NOW.plus_millis(-31 * DAY),
    );
    let text = show_below_30k(&old, &holder, &housing_origin(), &nonce, NOW);
    site.refused(&nonce, &receipt, &[text], Code::ProofInvalid, "expired");
    assert!(site.submit(&receipt, &[honest(&nonce)]).is_ok());
}

#[test]
fn issuers_the_site_does_not_trust_count_for_nothing() {
    let mut site = Site::housing();
    let nonce = site.nonce();
    let rogue = TestIssuer::new(40, "http://127.0.0.1:9999", "Rogue Office");
    let holder = holder_key(5);
    let credential = rogue.income_credential(&holder, 2_850_000, "EUR", NOW.plus_millis(-DAY));
    let text = show_below_30k(&credential, &holder, &site.origin, &nonce, NOW);

    // The receipt says the rogue vouches.
    let answers = vec![
        (income(), Outcome::Satisfied, Some(rogue.origin.clone())),
        (district(), Outcome::Satisfied, None),
    ];
    let receipt = site.receipt(&nonce, &answers);
    let refusal = site.refused(
        &nonce,
        &receipt,
        std::slice::from_ref(&text),
        Code::UntrustedIssuer,
        "http://127.0.0.1:9999",
    );
    assert!(
        refusal
            .message
            .contains("Tax Office Nordstadt at http://127.0.0.1:8791")
    );
    assert_eq!(refusal.claim, Some(income()));

    // The receipt says the tax office vouches; the presentation comes from the rogue.
    let receipt = site.receipt(&nonce, &backed_income(Outcome::Satisfied));
    site.refused(
        &nonce,
        &receipt,
        &[text],
        Code::UntrustedIssuer,
        "issued by http://127.0.0.1:9999, which this site does not trust",
    );

    // The rogue's key, claiming to be the tax office: under the office's kid the signature
    // fails; under another kid the office has no such key (and a refetch is asked for).
    for (kid, code) in [
        ("kid-31", "bad_issuer_signature"),
        ("kid-40", "unknown_key"),
    ] {
        let impostor = TestIssuer {
            key: ec_key(40),
            kid: kid.into(),
            origin: tax(),
            name: "Tax Office Nordstadt".into(),
        };
        let credential =
            impostor.income_credential(&holder, 2_850_000, "EUR", NOW.plus_millis(-DAY));
        let text = show_below_30k(&credential, &holder, &site.origin, &nonce, NOW);
        site.refused(
            &nonce,
            &receipt,
            std::slice::from_ref(&text),
            Code::ProofInvalid,
            code,
        );
        let proofs = site.proofs(&receipt, &[text]);
        assert_eq!(proofs.refetch, (code == "unknown_key").then(tax));
    }

    // A site that trusts nobody refuses every issuer-backed answer.
    site.trust = Trust::default();
    site.refused(
        &nonce,
        &receipt,
        &[honest(&nonce)],
        Code::UntrustedIssuer,
        "(none)",
    );
}

#[test]
fn an_issuer_whose_keys_are_not_fetched_yet_is_invalid_for_now() {
    let mut site = Site::housing();
    site.trust.issuers[0].jwks = None;
    let nonce = site.nonce();
    let receipt = site.receipt(&nonce, &backed_income(Outcome::Satisfied));
    site.refused(
        &nonce,
        &receipt,
        &[honest(&nonce)],
        Code::ProofInvalid,
        "could not fetch the keys of Tax Office Nordstadt",
    );
    let proofs = site.proofs(&receipt, &[honest(&nonce)]);
    assert_eq!(proofs.refetch, Some(tax()));
    assert!(proofs.checked.is_err());
    // Once the keys are in, the same submission is accepted.
    site.trust = trust(&[&TestIssuer::tax_office()]);
    assert!(site.submit(&receipt, &[honest(&nonce)]).is_ok());
}

#[test]
fn a_presentation_must_disclose_exactly_the_answer_it_backs() {
    let mut site = Site::housing();
    let nonce = site.nonce();
    let receipt = site.receipt(&nonce, &backed_income(Outcome::Satisfied));
    let (credential, holder) = low_income(6);
    let show =
        |keep: &[&str]| presentation(&credential, keep, &holder, &housing_origin(), &nonce, NOW);
    // Another claim of the ladder (true, but not the one asked).
    let refusal = site.refused(
        &nonce,
        &receipt,
        &[show(&["income_below_50000"])],
        Code::ProofMismatch,
        "no presentation from Tax Office Nordstadt discloses the claim that proves it",
    );
    assert_eq!(refusal.claim, Some(income()));
    // More than the one claim, or none.
    site.refused(
        &nonce,
        &receipt,
        &[show(&[BELOW_30K, "income_below_50000"])],
        Code::ProofMismatch,
        "discloses 2 claims",
    );
    site.refused(
        &nonce,
        &receipt,
        &[show(&[])],
        Code::ProofMismatch,
        "discloses 0 claims",
    );
    // An extra presentation beside the right one, and a second copy of the right one.
    site.refused(
        &nonce,
        &receipt,
        &[show(&[BELOW_30K]), show(&["income_below_50000"])],
        Code::ProofMismatch,
        "Presentation 2 (income_below_50000 from http://127.0.0.1:8791) proves no",
    );
    site.refused(
        &nonce,
        &receipt,
        &[show(&[BELOW_30K]), show(&[BELOW_30K])],
        Code::ProofMismatch,
        "Presentation 2",
    );
    // A presentation beside a receipt that is all the person's word.
    let own_word = site.receipt(
        &nonce,
        &[
            (income(), Outcome::Satisfied, None),
            (district(), Outcome::Satisfied, None),
        ],
    );
    site.refused(
        &nonce,
        &own_word,
        &[show(&[BELOW_30K])],
        Code::ProofMismatch,
        "proves no",
    );
    // A credential in another currency proves nothing about a EUR limit.
    let dollars = tax_income(&holder, 2_850_000, "USD");
    let text = show_below_30k(&dollars, &holder, &housing_origin(), &nonce, NOW);
    site.refused(
        &nonce,
        &receipt,
        &[text],
        Code::ProofMismatch,
        "discloses the claim",
    );
    assert!(site.submit(&receipt, &[show(&[BELOW_30K])]).is_ok());
}

#[test]
fn a_presentation_replayed_for_a_new_nonce_is_refused() {
    let mut site = Site::housing();
    let first = site.nonce();
    let kept = honest(&first);
    let receipt = site.receipt(&first, &backed_income(Outcome::Satisfied));
    assert!(site.submit(&receipt, std::slice::from_ref(&kept)).is_ok());
    // The agent kept the presentation and pairs it with a receipt for a fresh nonce.
    let second = site.nonce();
    let receipt = site.receipt(&second, &backed_income(Outcome::Satisfied));
    site.refused(
        &second,
        &receipt,
        std::slice::from_ref(&kept),
        Code::ProofInvalid,
        "wrong_nonce",
    );
    // On the spent nonce, the nonce is named first.
    let again = site.receipt(&first, &backed_income(Outcome::Satisfied));
    assert_eq!(
        site.submit(&again, &[kept]).unwrap_err().code,
        Code::ReplayedNonce
    );
    assert!(site.submit(&receipt, &[honest(&second)]).is_ok());
}

#[test]
fn the_latest_answer_decides_what_must_be_proven() {
    let mut site = Site::housing();
    let nonce = site.nonce();
    // First self-asserted, then issuer-backed: the issuer-backed answer needs its proof.
    let answers = vec![
        (income(), Outcome::Satisfied, None),
        (income(), Outcome::Satisfied, Some(tax())),
        (district(), Outcome::Satisfied, None),
    ];
    let receipt = site.receipt(&nonce, &answers);
    site.refused(&nonce, &receipt, &[], Code::ProofMissing, "income_below");
    // First issuer-backed, then the person's word: the latest is self-asserted, and the
    // earlier presentation is left over.
    let answers = vec![
        (income(), Outcome::Satisfied, Some(tax())),
        (income(), Outcome::Satisfied, None),
        (district(), Outcome::Satisfied, None),
    ];
    let receipt = site.receipt(&nonce, &answers);
    site.refused(
        &nonce,
        &receipt,
        &[honest(&nonce)],
        Code::ProofMismatch,
        "proves no",
    );
    let accepted = site.submit(&receipt, &[]).unwrap();
    assert!(accepted.proven.is_empty());
}

#[test]
fn a_policy_may_require_proof() {
    let mut policy = housing_config().policy;
    policy.require_proof = vec![wallet_core::ClaimKind::IncomeBelow];
    let mut site = Site::new(policy, housing_origin(), &[&TestIssuer::tax_office()]);
    let nonce = site.nonce();
    let own_word = site.receipt(
        &nonce,
        &[
            (income(), Outcome::Satisfied, None),
            (district(), Outcome::Satisfied, None),
        ],
    );
    let refusal = site.refused(
        &nonce,
        &own_word,
        &[],
        Code::ProofRequired,
        "only with an issuer's proof",
    );
    assert_eq!(refusal.claim, Some(income()));
    assert!(
        refusal.message.contains("multiples of 5,000.00"),
        "{}",
        refusal.message
    );
    // An unmet claim is named before the missing proof.
    let unmet = site.receipt(
        &nonce,
        &[
            (income(), Outcome::NotSatisfied, None),
            (district(), Outcome::Satisfied, None),
        ],
    );
    assert_eq!(
        site.submit(&unmet, &[]).unwrap_err().code,
        Code::ClaimNotSatisfied
    );
    let backed = site.receipt(&nonce, &backed_income(Outcome::Satisfied));
    let accepted = site.submit(&backed, &[honest(&nonce)]).unwrap();
    assert_eq!(accepted.proven.len(), 1);
}

#[test]
fn a_proven_no_is_still_a_no() {
    // The pharmacy: the registry proves the person is not yet 18; the answer is proven, and the
    // order is refused for the claim, not for the proof.
    let config = {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pharmacy/site.toml");
        tacit_site::server::Config::load(&path).unwrap()
    };
    let registry = TestIssuer::registry();
    let mut site = Site::new(config.policy.clone(), pharmacy_origin(), &[&registry]);
    let [adult, conditions] = [
        config.policy.claims[0].clone(),
        config.policy.claims[1].clone(),
    ];
    let holder = holder_key(7);
    let teen = registry.age_credential(&holder, 16, NOW.plus_millis(-DAY));
    let nonce = site.nonce();
    let answers = vec![
        (
            adult.clone(),
            Outcome::NotSatisfied,
            Some(registry.origin.clone()),
        ),
        (conditions.clone(), Outcome::Satisfied, None),
    ];
    let receipt = site.receipt(&nonce, &answers);
    let text = presentation(
        &teen,
        &["age_equal_or_over_18"],
        &holder,
        &site.origin,
        &nonce,
        NOW,
    );
    let refusal = site.submit(&receipt, &[text]).unwrap_err();
    assert_eq!(refusal.code, Code::ClaimNotSatisfied);
    assert_eq!(refusal.claim, Some(adult.clone()));

    // An adult: accepted, "age proven by Civil Registry Nordstadt; conditions: your word".
    let grown = registry.age_credential(&holder, 30, NOW.plus_millis(-DAY));
    let nonce = site.nonce();
    let answers = vec![
        (adult, Outcome::Satisfied, Some(registry.origin.clone())),
        (conditions, Outcome::Satisfied, None),
    ];
    let receipt = site.receipt(&nonce, &answers);
    let text = presentation(
        &grown,
        &["age_equal_or_over_18"],
        &holder,
        &site.origin,
        &nonce,
        NOW,
    );
    let accepted = site.submit(&receipt, &[text]).unwrap();
    let message = accepted.envelope(&site.policy)["result"]["message"].clone();
    assert!(
        message
            .as_str()
            .unwrap()
            .contains("(age proven by Civil Registry Nordstadt; conditions: your word)"),
        "{message}"
    );
}

#[test]
fn new_codes_read_well() {
    for code in [
        Code::ProofMissing,
        Code::ProofInvalid,
        Code::UntrustedIssuer,
        Code::ProofMismatch,
        Code::ProofRequired,
    ] {
        assert!(Code::ALL.contains(&code));
        assert_eq!(Code::parse(code.as_str()), Some(code));
        assert!(code.for_person().ends_with('.'));
    }
}

#[test]
fn an_issuer_trusted_for_age_cannot_prove_income() {
    let mut site = Site::housing();
    for issuer in &mut site.trust.issuers {
        issuer.vouches_for = wallet_core::Attribute::Age;
    }
    let nonce = site.nonce();
    let receipt = site.receipt(&nonce, &backed_income(Outcome::Satisfied));
    let refusal = site.refused(
        &nonce,
        &receipt,
        &[honest(&nonce)],
        Code::UntrustedIssuer,
        "for age only",
    );
    assert_eq!(refusal.claim, Some(income()));
    // Trusted for income, the same proof is accepted.
    for issuer in &mut site.trust.issuers {
        issuer.vouches_for = wallet_core::Attribute::Income;
    }
    assert!(site.submit(&receipt, &[honest(&nonce)]).is_ok());
}

#[test]
fn a_credential_of_another_type_from_a_trusted_issuer_is_refused() {
    let mut site = Site::housing();
    let nonce = site.nonce();
    let receipt = site.receipt(&nonce, &backed_income(Outcome::Satisfied));
    let holder = holder_key(9);
    // The tax office's own key and the income ladder, but a credential type this site did not
    // pin for it (another programme's): not its word here.
    let mut plain = serde_json::Map::new();
    plain.insert("currency".into(), json!("EUR"));
    let credential = TestIssuer::tax_office().issue(
        &holder,
        "https://other.example/vct/income",
        plain,
        vec![(BELOW_30K.to_owned(), json!(true))],
        NOW.plus_millis(-DAY),
    );
    let text = show_below_30k(&credential, &holder, &housing_origin(), &nonce, NOW);
    let refusal = site.refused(
        &nonce,
        &receipt,
        std::slice::from_ref(&text),
        Code::ProofInvalid,
        "takes only \"https://tacit.example/vct/income\" from Tax Office Nordstadt",
    );
    assert!(refusal.message.contains("https://other.example/vct/income"));
    // The pinned type, same key and claims: accepted.
    assert!(site.submit(&receipt, &[honest(&nonce)]).is_ok());
}
