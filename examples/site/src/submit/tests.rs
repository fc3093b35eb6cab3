use std::collections::HashMap;

use ed25519_dalek::SigningKey;
use serde_json::json;
use tacit_protocol::sd_jwt::MAX_SD_JWT_LEN;
use tacit_testkit::fixtures::{MINUTE, key_set, payload};
use wallet_core::receipt::{MAX_RECEIPT_BYTES, sign};
use wallet_core::{KeySet, KeyStatus, Outcome, PublicKeyEntry, RevokedReceipts, revocation_digest};

use super::*;
use crate::nonce::{NonceRecord, make_nonce};
use crate::proof::{Trust, check_presentations};

const NOW: Timestamp = Timestamp::from_millis(1_800_000_000_000);

fn policy() -> Policy {
    let claims = serde_json::from_value(json!([
        { "kind": "age_at_least", "years": 18 },
        { "kind": "has_none_of", "conditions": ["anticoagulant-therapy", "liver-disease", "pregnancy"] }
    ]))
    .unwrap();
    Policy {
        site_name: "Pharmacy".into(),
        purpose: "Restricted medicine".into(),
        requirements_tool: "pharmacy_requirements".into(),
        submit_tool: "pharmacy_checkout".into(),
        submission: "order".into(),
        accepted_text: "Order placed.".into(),
        claims,
        require_proof: Vec::new(),
    }
}

fn origin() -> Origin {
    Origin::parse("http://127.0.0.1:8082").unwrap()
}

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn keys_for(keys: &[&SigningKey]) -> KeySet {
    key_set(keys, NOW)
}

fn all_satisfied() -> Vec<(Claim, Outcome)> {
    policy()
        .claims
        .into_iter()
        .map(|c| (c, Outcome::Satisfied))
        .collect()
}

/// The site's nonce rows in memory, consumed the way the server's database does it.
struct Fixture {
    policy: Policy,
    rows: HashMap<Nonce, NonceRecord>,
    nonce: Nonce,
    signer: SigningKey,
    keys: PublishedKeys,
}

impl Fixture {
    fn new() -> Self {
        let nonce = make_nonce([7; 16]);
        let rows = HashMap::from([(nonce.clone(), NonceRecord::issue(NOW.plus_millis(-MINUTE)))]);
        let signer = key(1);
        let keys = keys_for(&[&signer]).into();
        Self {
            policy: policy(),
            rows,
            nonce,
            signer,
            keys,
        }
    }

    fn state(&self, at: Timestamp) -> NonceState {
        NonceState::of(self.rows.get(&self.nonce), at)
    }

    fn receipt(&self, answers: &[(Claim, Outcome)]) -> SignedReceipt {
        sign(
            payload(&origin(), &self.nonce, answers, NOW),
            &self.signer,
            NOW,
        )
    }

    /// What the server does: check, read the row, decide, consume.
    fn submit(&mut self, submission: &Submission, at: Timestamp) -> Result<Accepted, Refusal> {
        let verified = check_receipt(&self.policy, &origin(), submission, &self.keys, at)?;
        let proofs = check_presentations(
            &verified,
            &submission.presentations,
            &Trust::default(),
            &origin(),
            at,
        );
        let state = NonceState::of(self.rows.get(verified.nonce()), at);
        match decide(&self.policy, &verified, &proofs, state) {
            Verdict::Refuse(refusal) => Err(refusal),
            Verdict::Consume { nonce, accepted } => {
                assert_eq!(nonce, accepted.nonce);
                match self.rows.get_mut(&nonce).map(|r| r.consume(at)) {
                    Some(Ok(())) => Ok(accepted),
                    Some(Err(state)) => Err(nonce_refusal(state, &self.policy)),
                    None => Err(nonce_refusal(NonceState::Unknown, &self.policy)),
                }
            }
        }
    }

    fn judge_at(&mut self, receipt: &SignedReceipt, at: Timestamp) -> Result<Accepted, Code> {
        let submission = Submission {
            receipt: receipt.clone(),
            nonce: None,
            presentations: Vec::new(),
        };
        self.submit(&submission, at).map_err(|r| r.code)
    }

    fn judge(&mut self, receipt: &SignedReceipt) -> Result<Accepted, Code> {
        self.judge_at(receipt, NOW.plus_millis(MINUTE))
    }
}

#[test]
fn a_good_receipt_is_accepted_once() {
    let mut f = Fixture::new();
    let receipt = f.receipt(&all_satisfied());
    let accepted = f.judge(&receipt).unwrap();
    assert_eq!(accepted.nonce, f.nonce);
    assert_eq!(accepted.claims, f.policy.claims);
    let envelope = accepted.envelope(&f.policy);
    assert_eq!(envelope["ok"], true);
    assert_eq!(envelope["result"]["accepted"], true);
    assert_eq!(envelope["result"]["audience"], "http://127.0.0.1:8082");
    assert_eq!(f.judge(&receipt), Err(Code::ReplayedNonce));
}

#[test]
fn a_receipt_for_another_site_is_wrong_audience_and_spends_nothing() {
    let mut f = Fixture::new();
    let other = Origin::parse("http://127.0.0.1:8081").unwrap();
    let receipt = sign(payload(&other, &f.nonce, &[], NOW), &f.signer, NOW);
    assert_eq!(f.judge(&receipt), Err(Code::WrongAudience));
    assert_eq!(f.state(NOW), NonceState::Open);
}

#[test]
fn tampering_is_a_bad_signature() {
    let mut f = Fixture::new();
    let answers = vec![
        (f.policy.claims[0].clone(), Outcome::Satisfied),
        (f.policy.claims[1].clone(), Outcome::NotSatisfied),
    ];
    let honest = f.receipt(&answers);
    // Flip the unfavourable answer and fix the hashes so the chain still holds.
    let mut forged = honest.clone();
    forged.payload.entries[1].outcome = Outcome::Satisfied;
    forged.payload.entries[1].hash = forged.payload.entries[1].compute_hash();
    forged.payload.log_head = forged.payload.entries[1].hash;
    assert_eq!(f.judge(&forged), Err(Code::BadSignature));
    let mut later = honest.clone();
    later.payload.expires_at = later.payload.expires_at.plus_millis(60 * MINUTE);
    assert_eq!(f.judge(&later), Err(Code::BadSignature));
    let mut garbled = honest;
    garbled.signature = "zz".into();
    assert_eq!(f.judge(&garbled), Err(Code::BadSignature));
}

#[test]
fn a_receipt_the_signer_revoked_is_refused_and_spends_nothing() {
    let mut f = Fixture::new();
    let receipt = f.receipt(&all_satisfied());
    let keys = f.keys.clone();
    f.keys.revoked_receipts = RevokedReceipts::new([revocation_digest(&receipt.payload)]);
    assert_eq!(f.judge(&receipt), Err(Code::ReceiptRevoked));
    let submission = Submission {
        receipt: receipt.clone(),
        nonce: None,
        presentations: Vec::new(),
    };
    let refusal = f.submit(&submission, NOW.plus_millis(MINUTE)).unwrap_err();
    assert_eq!(refusal.code.as_str(), "receipt_revoked");
    assert!(refusal.message.contains("revoked"), "{}", refusal.message);
    assert!(
        refusal.message.contains(&f.policy.site_name),
        "{}",
        refusal.message
    );
    assert!(Code::ReceiptRevoked.for_person().contains("revoked"));
    // The nonce is still open: under keys that list nothing the same receipt is accepted.
    f.keys = keys;
    assert!(f.judge(&receipt).is_ok());
}

#[test]
fn another_receipt_is_not_refused_for_a_revoked_one() {
    let mut f = Fixture::new();
    let receipt = f.receipt(&all_satisfied());
    let other = sign(
        payload(&origin(), &make_nonce([8; 16]), &all_satisfied(), NOW),
        &f.signer,
        NOW,
    );
    f.keys.revoked_receipts = RevokedReceipts::new([revocation_digest(&other.payload)]);
    assert!(f.judge(&receipt).is_ok());
}

#[test]
fn an_unpublished_key_is_unknown() {
    let mut f = Fixture::new();
    let receipt = sign(
        payload(&origin(), &f.nonce, &all_satisfied(), NOW),
        &key(2),
        NOW,
    );
    assert_eq!(f.judge(&receipt), Err(Code::UnknownKey));
}

#[test]
fn a_retired_key_still_vouches_for_what_it_signed() {
    let mut f = Fixture::new();
    let receipt = f.receipt(&all_satisfied());
    let next = key(2);
    f.keys = KeySet {
        keys: vec![
            PublicKeyEntry::new(&next.verifying_key(), NOW, None, KeyStatus::Active),
            PublicKeyEntry::new(
                &f.signer.verifying_key(),
                NOW.plus_millis(-24 * 60 * MINUTE),
                Some(NOW.plus_millis(2 * MINUTE)),
                KeyStatus::Retired,
            ),
        ],
    }
    .into();
    assert!(f.judge(&receipt).is_ok());
}

#[test]
fn the_window_is_enforced() {
    let mut f = Fixture::new();
    let receipt = f.receipt(&all_satisfied());
    assert_eq!(
        f.judge_at(&receipt, NOW.plus_millis(-1)),
        Err(Code::NotYetValid)
    );
    assert_eq!(
        f.judge_at(&receipt, NOW.plus_millis(15 * MINUTE)),
        Err(Code::Expired)
    );
    assert_eq!(f.state(NOW), NonceState::Open);
}

#[test]
fn a_broken_chain_is_named() {
    let mut f = Fixture::new();
    let mut p = payload(&origin(), &f.nonce, &all_satisfied(), NOW);
    p.entries.swap(0, 1);
    let receipt = sign(p, &f.signer, NOW);
    assert_eq!(f.judge(&receipt), Err(Code::ChainBroken));
}

#[test]
fn nonces_must_be_ours_and_named_right() {
    let mut f = Fixture::new();
    let stranger = make_nonce([9; 16]);
    let receipt = sign(
        payload(&origin(), &stranger, &all_satisfied(), NOW),
        &f.signer,
        NOW,
    );
    assert_eq!(f.judge(&receipt), Err(Code::UnknownNonce));

    let ours = f.receipt(&all_satisfied());
    let named_wrong = Submission {
        receipt: ours.clone(),
        nonce: Some(stranger),
        presentations: Vec::new(),
    };
    let at = NOW.plus_millis(MINUTE);
    let out = f.submit(&named_wrong, at);
    assert_eq!(out.map_err(|r| r.code), Err(Code::NonceMismatch));
    let named_right = Submission {
        receipt: ours,
        nonce: Some(f.nonce.clone()),
        presentations: Vec::new(),
    };
    assert!(f.submit(&named_right, at).is_ok());
}

#[test]
fn a_lapsed_nonce_is_unknown() {
    let mut f = Fixture::new();
    let late = NOW.plus_millis(crate::nonce::NONCE_LIFETIME_MS);
    let receipt = sign(
        payload(&origin(), &f.nonce, &all_satisfied(), late),
        &f.signer,
        late,
    );
    assert_eq!(
        f.judge_at(&receipt, late.plus_millis(1)),
        Err(Code::UnknownNonce)
    );
}

#[test]
fn every_required_claim_must_be_shown_satisfied() {
    let mut f = Fixture::new();
    let [age, conditions] = [f.policy.claims[0].clone(), f.policy.claims[1].clone()];
    let cases = [
        (
            vec![
                (age.clone(), Outcome::Satisfied),
                (conditions.clone(), Outcome::NotSatisfied),
            ],
            &conditions,
            "answers it not_satisfied",
        ),
        (
            vec![(conditions.clone(), Outcome::Satisfied)],
            &age,
            "does not answer it",
        ),
        (
            vec![
                (age.clone(), Outcome::Declined),
                (conditions.clone(), Outcome::Satisfied),
            ],
            &age,
            "answers it declined",
        ),
        (
            vec![
                (age.clone(), Outcome::Satisfied),
                (age.clone(), Outcome::NotSatisfied),
                (conditions.clone(), Outcome::Satisfied),
            ],
            &age,
            "answers it satisfied, then not_satisfied",
        ),
    ];
    for (answers, failing, how) in cases {
        let receipt = f.receipt(&answers);
        let submission = Submission {
            receipt,
            nonce: None,
            presentations: Vec::new(),
        };
        let at = NOW.plus_millis(MINUTE);
        let refusal = f.submit(&submission, at).unwrap_err();
        assert_eq!(refusal.code, Code::ClaimNotSatisfied);
        assert_eq!(refusal.claim.as_ref(), Some(failing));
        assert!(refusal.message.contains(how), "{}", refusal.message);
        assert!(refusal.message.contains(&failing.canonical()));
        let envelope = refusal.envelope();
        assert_eq!(envelope["error"]["code"], "claim_not_satisfied");
        assert_eq!(envelope["error"]["claim"], json!(failing));
        // A refusal for a claim leaves the nonce open for a corrected receipt.
        assert_eq!(f.state(NOW), NonceState::Open);
    }
    // Extra answers to other questions do not hurt.
    let mut answers = all_satisfied();
    answers.push((Claim::age_at_least(65).unwrap(), Outcome::NotSatisfied));
    assert!(f.judge(&f.receipt(&answers)).is_ok());
}

#[test]
fn input_is_validated_strictly() {
    let f = Fixture::new();
    let receipt = serde_json::to_value(f.receipt(&all_satisfied())).unwrap();
    let ok = parse_submission(&json!({ "receipt": receipt.clone() })).unwrap();
    assert_eq!(ok.nonce, None);
    assert!(ok.presentations.is_empty());
    let named = parse_submission(&json!({ "receipt": receipt.clone(), "nonce": "abc" })).unwrap();
    assert_eq!(named.nonce.unwrap().as_str(), "abc");
    let shown = parse_submission(
        &json!({ "receipt": receipt.clone(), "presentations": ["a.b.c~d~e.f.g", "x~"] }),
    )
    .unwrap();
    assert_eq!(shown.presentations, ["a.b.c~d~e.f.g", "x~"]);
    let full = "x".repeat(MAX_SD_JWT_LEN);
    let eight =
        parse_submission(&json!({ "receipt": receipt.clone(), "presentations": vec![full; 8] }))
            .unwrap();
    assert_eq!(eight.presentations.len(), 8);
    let mut extra_inside = receipt.clone();
    extra_inside["payload"]["income"] = json!(2_840_000);
    let cases = [
        (
            json!(null),
            "Missing field \"receipt\". Submit the `receipt` object",
        ),
        (json!([]), "must be a JSON object"),
        (json!("receipt"), "must be a JSON object"),
        (json!({}), "Missing field \"receipt\""),
        (
            json!({ "receipt": receipt.clone(), "extra": 1 }),
            "Unknown field \"extra\", expected one of \"receipt\"",
        ),
        (
            json!({ "receipt": receipt.to_string() }),
            "not its JSON text",
        ),
        (json!({ "receipt": 5 }), "must be an object"),
        (json!({ "receipt": {} }), "not a signed Tacit receipt"),
        (
            json!({ "receipt": extra_inside }),
            "not a signed Tacit receipt",
        ),
        (
            json!({ "receipt": receipt.clone(), "nonce": 5 }),
            "must be a string",
        ),
        (
            json!({ "receipt": receipt.clone(), "nonce": "has space" }),
            "must match",
        ),
        (
            json!({ "receipt": { "pad": "x".repeat(MAX_RECEIPT_BYTES) } }),
            "larger than 1 MiB",
        ),
        (
            json!({ "receipt": receipt.clone(), "presentations": "a~b~" }),
            "must be an array of strings",
        ),
        (
            json!({ "receipt": receipt.clone(), "presentations": null }),
            "must be an array of strings",
        ),
        (
            json!({ "receipt": receipt.clone(), "presentations": [5] }),
            "Presentation 1 must be a string",
        ),
        (
            json!({ "receipt": receipt.clone(), "presentations": ["a~", ""] }),
            "Presentation 2 is empty",
        ),
        (
            json!({ "receipt": receipt.clone(), "presentations": vec!["a~"; 9] }),
            "holds 9 items; at most 8",
        ),
        (
            json!({ "receipt": receipt.clone(), "presentations": ["x".repeat(MAX_SD_JWT_LEN + 1)] }),
            "longer than 32768 bytes",
        ),
        (
            json!({ "receipt": receipt.clone(), "presentations": ["a~b c~"] }),
            "is not an SD-JWT",
        ),
    ];
    for (input, needle) in cases {
        let refusal = parse_submission(&input).unwrap_err();
        assert_eq!(refusal.code, Code::InvalidInput, "{input}");
        assert!(
            refusal.message.contains(needle),
            "{needle}: {}",
            refusal.message
        );
        assert!(refusal.message.len() < 400, "{}", refusal.message);
    }
    assert!(parse_requirements_input(&json!({})).is_ok());
    assert!(parse_requirements_input(&json!(null)).is_ok());
    for bad in [json!({ "nonce": "x" }), json!([]), json!(1)] {
        assert_eq!(
            parse_requirements_input(&bad).unwrap_err().code,
            Code::InvalidInput
        );
    }
}

#[test]
fn a_consume_lost_to_a_racing_submission_is_a_replay() {
    // Two submissions of one receipt both read the row open and both get `Consume`; the
    // database lets one change the row. The other's answer comes from the state it then reads.
    let mut f = Fixture::new();
    let receipt = f.receipt(&all_satisfied());
    let at = NOW.plus_millis(MINUTE);
    let submission = Submission {
        receipt,
        nonce: None,
        presentations: Vec::new(),
    };
    let verified = check_receipt(&f.policy, &origin(), &submission, &f.keys, at).unwrap();
    let proofs = check_presentations(&verified, &[], &Trust::default(), &origin(), at);
    let first = decide(&f.policy, &verified, &proofs, f.state(at));
    let second = decide(&f.policy, &verified, &proofs, f.state(at));
    assert!(matches!(first, Verdict::Consume { .. }));
    assert_eq!(first, second);
    let row = f.rows.get_mut(&f.nonce).unwrap();
    assert_eq!(row.consume(at), Ok(()));
    let lost = row.consume(at).unwrap_err();
    assert_eq!(nonce_refusal(lost, &f.policy).code, Code::ReplayedNonce);
}

#[test]
fn an_unknown_nonce_with_unmet_claims_is_named_for_its_nonce() {
    let mut f = Fixture::new();
    let stranger = make_nonce([3; 16]);
    let receipt = sign(payload(&origin(), &stranger, &[], NOW), &f.signer, NOW);
    assert_eq!(f.judge(&receipt), Err(Code::UnknownNonce));
}

#[test]
fn codes_are_distinct_snake_case() {
    let names: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    for (i, name) in names.iter().enumerate() {
        assert!(!names[..i].contains(name));
        assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
        assert!(!Code::ALL[i].for_person().is_empty());
        assert_eq!(Code::parse(name), Some(Code::ALL[i]));
    }
    assert_eq!(Code::parse("ok"), None);
}
