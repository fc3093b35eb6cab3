//! Receipts: signing bytes, the verifier's distinct failures, strict parsing and frozen vectors.

// clippy.toml allows unwrap in `#[test]` fns only; the helpers here are test code too.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::LazyLock;

use ed25519_dalek::SigningKey;
use proptest::prelude::*;
use wallet_core::receipt::{MAX_RECEIPT_BYTES, RECEIPT_DOMAIN, RECEIPT_VERSION, sign, verify};
use wallet_core::{
    ChainBroken, Claim, ComparisonLog, Currency, DistrictId, GrantId, Hash, KeySet, KeyStatus,
    MalformedReceipt, Money, Nonce, Origin, Outcome, Provenance, PublicKeyEntry, ReceiptPayload,
    SessionId, SignableError, SignedReceipt, StructureError, Timestamp, ToolName, VerifyError,
    derive_key_id,
};

mod common;

const T0: i64 = 1_777_627_800_000; // 2026-05-01T09:30:00Z
const MINUTE: i64 = 60_000;
const DAY: i64 = 86_400_000;

const RECEIPT_VECTOR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/receipt-v1.json");
const KEYS_VECTOR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/vectors/receipt-v1-keys.json"
);
/// SHA-256 of the frozen receipt's signing bytes. If this changes, the signing format changed.
const VECTOR_SIGNING_BYTES_SHA256: &str =
    "5583f1ce23a9f4149f9d55020718b066665fe84162933e6555173be170dae3b4";

/// The deterministic test key: its seed is SHA-256 of a fixed label. Never used outside tests.
fn test_key() -> SigningKey {
    SigningKey::from_bytes(Hash::digest(b"tacit/test-signing-key/v1").as_bytes())
}

fn other_key() -> SigningKey {
    SigningKey::from_bytes(Hash::digest(b"tacit/test-signing-key/other").as_bytes())
}

fn site() -> Origin {
    Origin::parse("https://housing.example").unwrap()
}

fn nonce() -> Nonce {
    Nonce::parse("n-4f1c2a9e7b3d").unwrap()
}

fn session() -> SessionId {
    SessionId::parse("s-20260501-1").unwrap()
}

fn income_below(minor: u64) -> Claim {
    Claim::income_below(Money {
        amount_minor: minor,
        currency: Currency::parse("EUR").unwrap(),
    })
    .unwrap()
}

fn three_districts() -> Claim {
    Claim::resides_in(["altstadt", "nordhafen", "westend"].map(|c| DistrictId::parse(c).unwrap()))
        .unwrap()
}

fn append(log: &mut ComparisonLog, origin: &Origin, at: i64, claim: Claim, outcome: Outcome) {
    log.append(
        Timestamp::from_millis(at),
        origin.clone(),
        ToolName::parse(&format!("tacit.claim.{}", claim.kind())).unwrap(),
        claim,
        outcome,
        GrantId::parse("g-housing-1").unwrap(),
        None,
    );
}

/// The session's log for the housing site: three answers.
fn session_log() -> ComparisonLog {
    let mut log = ComparisonLog::new();
    for (at, claim, outcome) in [
        (T0, income_below(3_000_000), Outcome::Satisfied),
        (T0 + 2_000, three_districts(), Outcome::Satisfied),
        (
            T0 + 4_000,
            Claim::age_at_least(18).unwrap(),
            Outcome::Declined,
        ),
    ] {
        append(&mut log, &site(), at, claim, outcome);
    }
    log
}

fn payload() -> ReceiptPayload {
    payload_of(&session_log()).unwrap()
}

/// `ReceiptPayload::new` for the session, site and nonce, over `log`, issued at T0 + 1 min and
/// expiring at T0 + 11 min.
fn payload_of(log: &ComparisonLog) -> Result<ReceiptPayload, StructureError> {
    payload_between(T0 + MINUTE, T0 + 11 * MINUTE, log)
}

/// `ReceiptPayload::new` for the session, site and nonce, over `log`, valid from `issued_at` to
/// `expires_at` (ms).
fn payload_between(
    issued_at: i64,
    expires_at: i64,
    log: &ComparisonLog,
) -> Result<ReceiptPayload, StructureError> {
    ReceiptPayload::new(
        session(),
        site(),
        nonce(),
        Timestamp::from_millis(issued_at),
        Timestamp::from_millis(expires_at),
        log,
    )
}

fn signed_at() -> Timestamp {
    Timestamp::from_millis(T0 + MINUTE)
}

fn keys_for(key: &SigningKey) -> KeySet {
    KeySet {
        keys: vec![PublicKeyEntry::new(
            &key.verifying_key(),
            Timestamp::from_millis(T0 - 30 * DAY),
            None,
            KeyStatus::Active,
        )],
    }
}

fn now() -> Timestamp {
    Timestamp::from_millis(T0 + 5 * MINUTE)
}

fn check(
    signed: &SignedReceipt,
    keys: &KeySet,
) -> Result<wallet_core::VerifiedReceipt, VerifyError> {
    verify(signed, keys, &site(), &nonce(), now())
}

/// A named way of tampering with a value.
type Edit<T> = (&'static str, fn(&mut T));

/// Signs a payload built field by field, skipping `ReceiptPayload::new`'s checks, as a
/// misbehaving wallet or signer could.
fn sign_raw(payload: ReceiptPayload) -> SignedReceipt {
    sign(payload, &test_key(), signed_at())
}

#[test]
fn sign_and_verify_ok() {
    let signed = sign(payload(), &test_key(), signed_at());
    assert_eq!(signed.key_id, derive_key_id(&test_key().verifying_key()));
    assert_eq!(signed.signature.len(), 128);
    let verified = check(&signed, &keys_for(&test_key())).unwrap();
    assert_eq!(verified.audience(), &site());
    assert_eq!(verified.nonce(), &nonce());
    assert_eq!(verified.session_id(), &session());
    assert_eq!(verified.issued_at(), Timestamp::from_millis(T0 + MINUTE));
    assert_eq!(
        verified.expires_at(),
        Timestamp::from_millis(T0 + 11 * MINUTE)
    );
    assert_eq!(verified.key_id(), &signed.key_id);
    assert_eq!(verified.signed_at(), signed_at());
    assert_eq!(verified.provenance(), Provenance::SelfAsserted);
    assert_eq!(verified.log_head(), session_log().head());
    assert_eq!(
        verified.answers(),
        &[
            (income_below(3_000_000), Outcome::Satisfied),
            (three_districts(), Outcome::Satisfied),
            (Claim::age_at_least(18).unwrap(), Outcome::Declined),
        ]
    );
    assert!(verified.satisfies(&income_below(3_000_000)));
    assert!(verified.satisfies(&three_districts()));
    assert!(verified.satisfies_all(&[income_below(3_000_000), three_districts()]));
    // Declined is not a yes; an unasked claim is not a yes; parameters must match exactly.
    assert!(!verified.satisfies(&Claim::age_at_least(18).unwrap()));
    assert!(!verified.satisfies(&income_below(3_000_001)));
    assert!(!verified.satisfies_all(&[income_below(3_000_000), Claim::age_at_least(18).unwrap()]));
}

#[test]
fn verify_accepts_an_empty_session() {
    let empty = payload_between(T0, T0 + 11 * MINUTE, &ComparisonLog::new()).unwrap();
    assert_eq!(empty.log_head, Hash::ZERO);
    let verified = check(&sign_raw(empty), &keys_for(&test_key())).unwrap();
    assert!(verified.answers().is_empty());
    assert!(!verified.satisfies(&income_below(3_000_000)));
}

#[test]
fn satisfies_refuses_contradicting_answers() {
    let mut log = session_log();
    append(
        &mut log,
        &site(),
        T0 + 5_000,
        income_below(3_000_000),
        Outcome::NotSatisfied,
    );
    let payload = payload_of(&log).unwrap();
    let verified = check(&sign_raw(payload), &keys_for(&test_key())).unwrap();
    assert!(!verified.satisfies(&income_below(3_000_000)));
    assert!(verified.satisfies(&three_districts()));
}

#[test]
fn verify_unknown_key() {
    let signed = sign_raw(payload());
    // Not in the set at all.
    assert_eq!(
        check(&signed, &keys_for(&other_key())),
        Err(VerifyError::UnknownKey)
    );
    assert_eq!(
        check(&signed, &KeySet::default()),
        Err(VerifyError::UnknownKey)
    );

    // Known, but issued before the key's window opened (beyond the two-minute skew allowance)
    // or after it closed.
    let mut keys = keys_for(&test_key());
    keys.keys[0].not_before = Timestamp::from_millis(signed_at().millis() + 2 * MINUTE + 1);
    assert_eq!(check(&signed, &keys), Err(VerifyError::UnknownKey));
    keys.keys[0].not_before = Timestamp::from_millis(signed_at().millis() + 2 * MINUTE);
    assert!(check(&signed, &keys).is_ok(), "within the skew allowance");
    let mut keys = keys_for(&test_key());
    keys.keys[0].not_after = Some(signed_at());
    assert_eq!(check(&signed, &keys), Err(VerifyError::UnknownKey));

    // An entry whose id does not derive from its key, or whose key is malformed.
    let mut keys = keys_for(&other_key());
    keys.keys[0].key_id = signed.key_id.clone();
    assert_eq!(check(&signed, &keys), Err(VerifyError::UnknownKey));
    let mut keys = keys_for(&test_key());
    keys.keys[0].public_key = keys.keys[0].public_key.to_uppercase();
    assert_eq!(check(&signed, &keys), Err(VerifyError::UnknownKey));
    keys.keys[0].public_key = "00".repeat(31);
    assert_eq!(check(&signed, &keys), Err(VerifyError::UnknownKey));

    // The receipt names another key id.
    let mut renamed = signed;
    renamed.key_id = derive_key_id(&other_key().verifying_key());
    assert_eq!(
        check(&renamed, &keys_for(&test_key())),
        Err(VerifyError::UnknownKey)
    );
}

/// `signed` with its signature replaced by `signature` is refused as a bad signature.
fn assert_bad_signature(signed: &SignedReceipt, keys: &KeySet, signature: String, label: &str) {
    let mut tampered = signed.clone();
    tampered.signature = signature;
    assert_eq!(
        check(&tampered, keys),
        Err(VerifyError::BadSignature),
        "{label}"
    );
}

#[test]
fn verify_bad_signature_flipped_byte() {
    let signed = sign_raw(payload());
    let keys = keys_for(&test_key());
    for position in [0, 31, 32, 63] {
        let mut bytes = hex::decode(&signed.signature).unwrap();
        bytes[position] ^= 0x01;
        assert_bad_signature(
            &signed,
            &keys,
            hex::encode(bytes),
            &format!("byte {position}"),
        );
    }
}

#[test]
fn verify_bad_signature_malformed() {
    let signed = sign_raw(payload());
    let keys = keys_for(&test_key());
    let good = signed.signature.clone();
    for bad in [
        String::new(),
        good[..126].to_owned(),
        format!("{good}00"),
        good.to_uppercase(),
        format!("x{}", &good[1..]),
        "0".repeat(128),
    ] {
        let label = format!("{bad:?}");
        assert_bad_signature(&signed, &keys, bad, &label);
    }
}

#[test]
fn verify_bad_signature_payload_edited_after_signing() {
    let signed = sign_raw(payload());
    let keys = keys_for(&test_key());
    let edits: Vec<Edit<ReceiptPayload>> = vec![
        ("session_id", |p| {
            p.session_id = SessionId::parse("s-other").unwrap()
        }),
        ("audience", |p| {
            p.audience = Origin::parse("https://evil.example").unwrap()
        }),
        ("nonce", |p| p.nonce = Nonce::parse("n-other").unwrap()),
        ("issued_at", |p| p.issued_at = p.issued_at.plus_millis(-1)),
        ("expires_at", |p| {
            p.expires_at = p.expires_at.plus_millis(DAY)
        }),
        ("log_head", |p| p.log_head = Hash::ZERO),
        ("version", |p| p.version = 2),
        ("entry outcome", |p| {
            p.entries[2].outcome = Outcome::Satisfied
        }),
        ("entry rehashed", |p| {
            p.entries[2].outcome = Outcome::Satisfied;
            p.entries[2].hash = p.entries[2].compute_hash();
            p.log_head = p.entries[2].hash;
        }),
        ("entry removed", |p| {
            p.entries.pop();
        }),
    ];
    for (name, edit) in edits {
        let mut tampered = signed.clone();
        edit(&mut tampered.payload);
        assert_ne!(
            tampered.payload.signing_bytes(),
            signed.payload.signing_bytes(),
            "{name}"
        );
        assert_eq!(
            check(&tampered, &keys),
            Err(VerifyError::BadSignature),
            "{name}"
        );
    }
}

#[test]
fn verify_expired() {
    let signed = sign_raw(payload());
    let keys = keys_for(&test_key());
    let expires = signed.payload.expires_at;
    for now in [
        expires,
        expires.plus_millis(1),
        Timestamp::from_millis(i64::MAX),
    ] {
        assert_eq!(
            verify(&signed, &keys, &site(), &nonce(), now),
            Err(VerifyError::Expired)
        );
    }
    verify(&signed, &keys, &site(), &nonce(), expires.plus_millis(-1)).unwrap();
}

#[test]
fn verify_not_yet_valid() {
    let signed = sign_raw(payload());
    let keys = keys_for(&test_key());
    let issued = signed.payload.issued_at;
    for now in [issued.plus_millis(-1), Timestamp::from_millis(i64::MIN)] {
        assert_eq!(
            verify(&signed, &keys, &site(), &nonce(), now),
            Err(VerifyError::NotYetValid)
        );
    }
    verify(&signed, &keys, &site(), &nonce(), issued).unwrap();
}

#[test]
fn verify_audience_mismatch() {
    let signed = sign_raw(payload());
    let other = Origin::parse("https://pharmacy.example").unwrap();
    assert_eq!(
        verify(&signed, &keys_for(&test_key()), &other, &nonce(), now()),
        Err(VerifyError::AudienceMismatch)
    );
}

#[test]
fn verify_nonce_mismatch() {
    let signed = sign_raw(payload());
    for other in ["n-4f1c2a9e7b3", "n-4f1c2a9e7b3e", "n-4f1c2a9e7b3d0"] {
        let other = Nonce::parse(other).unwrap();
        assert_eq!(
            verify(&signed, &keys_for(&test_key()), &site(), &other, now()),
            Err(VerifyError::NonceMismatch)
        );
    }
}

#[test]
fn verify_chain_broken_with_one_entry_removed() {
    let keys = keys_for(&test_key());
    // The middle entry removed, head unchanged: the chain breaks where the gap is.
    let mut payload = payload();
    payload.entries.remove(1);
    assert_eq!(
        check(&sign_raw(payload), &keys),
        Err(VerifyError::ChainBroken(ChainBroken { index: 1 }))
    );
    // The last entry removed, the signed head still names it.
    let mut payload = self::payload();
    payload.entries.pop();
    assert_eq!(
        check(&sign_raw(payload), &keys),
        Err(VerifyError::ChainBroken(ChainBroken { index: 2 }))
    );
    // The first entry removed.
    let mut payload = self::payload();
    payload.entries.remove(0);
    assert_eq!(
        check(&sign_raw(payload), &keys),
        Err(VerifyError::ChainBroken(ChainBroken { index: 0 }))
    );
}

#[test]
fn verify_rejects_an_entry_with_another_origin() {
    let pharmacy = Origin::parse("https://pharmacy.example").unwrap();
    let mut log = session_log();
    append(
        &mut log,
        &pharmacy,
        T0 + 6_000,
        Claim::age_at_least(18).unwrap(),
        Outcome::Satisfied,
    );
    let expected = MalformedReceipt("an entry's origin is not the receipt's audience");
    let refused = payload_of(&log);
    assert_eq!(refused, Err(StructureError::Malformed(expected)));

    let mut payload = payload();
    payload.entries = log.entries().to_vec();
    payload.log_head = log.head();
    assert_eq!(
        check(&sign_raw(payload), &keys_for(&test_key())),
        Err(VerifyError::Malformed(expected))
    );
}

#[test]
fn verify_rejects_an_empty_window_and_other_versions() {
    let keys = keys_for(&test_key());
    let mut payload = payload();
    payload.expires_at = payload.issued_at;
    let expected = MalformedReceipt("expires_at must be after issued_at");
    assert_eq!(
        payload.check_structure(),
        Err(StructureError::Malformed(expected))
    );
    assert_eq!(
        check(&sign_raw(payload), &keys),
        Err(VerifyError::Malformed(expected))
    );

    let mut payload = self::payload();
    payload.version = RECEIPT_VERSION + 1;
    assert_eq!(
        check(&sign_raw(payload), &keys),
        Err(VerifyError::Malformed(MalformedReceipt(
            "unsupported receipt version"
        )))
    );

    let refused = payload_between(T0, T0 - 1, &session_log());
    assert_eq!(
        refused,
        Err(StructureError::Malformed(MalformedReceipt(
            "expires_at must be after issued_at"
        )))
    );
}

/// Found by `fuzz/` (signer_body): `issued_at` near `i64::MIN` made the window computation
/// overflow, a panic with overflow checks on, and without them a wrapped window that passed.
#[test]
fn a_window_at_the_ends_of_time_is_refused_without_overflow() {
    // A key valid since the beginning of time, so that `verify` reaches the structure check.
    let keys = KeySet {
        keys: vec![PublicKeyEntry::new(
            &test_key().verifying_key(),
            Timestamp::from_millis(i64::MIN),
            None,
            KeyStatus::Active,
        )],
    };
    let too_long = MalformedReceipt("validity window longer than 15 minutes");
    for (issued_at, expires_at) in [
        (i64::MIN, T0 + 11 * MINUTE),
        (i64::MIN + 1, T0 + 11 * MINUTE),
        (T0, T0 + 60 * MINUTE),
        (i64::MIN, i64::MAX),
        (-1, i64::MAX),
        (T0, i64::MAX),
    ] {
        let mut payload = payload();
        payload.issued_at = Timestamp::from_millis(issued_at);
        payload.expires_at = Timestamp::from_millis(expires_at);
        assert_eq!(
            payload.check_structure(),
            Err(StructureError::Malformed(too_long)),
            "{issued_at}..{expires_at}"
        );
        assert_eq!(
            check(&sign_raw(payload), &keys),
            Err(VerifyError::Malformed(too_long))
        );
    }
    let mut payload = payload();
    payload.issued_at = Timestamp::from_millis(i64::MAX - 15 * MINUTE);
    payload.expires_at = Timestamp::from_millis(i64::MAX);
    assert_eq!(
        payload.check_structure(),
        Ok(()),
        "exactly 15 minutes, at the end of time"
    );
    // One millisecond longer, anywhere: refused. A receipt a revoked install got proves
    // nothing a quarter of an hour later.
    payload.issued_at = Timestamp::from_millis(T0);
    payload.expires_at = Timestamp::from_millis(T0 + 15 * MINUTE + 1);
    assert_eq!(
        payload.check_structure(),
        Err(StructureError::Malformed(too_long))
    );
    payload.expires_at = Timestamp::from_millis(T0 + DAY);
    assert_eq!(
        payload.check_structure(),
        Err(StructureError::Malformed(too_long)),
        "a day, which was allowed once"
    );
}

#[test]
fn checks_run_in_the_documented_order() {
    // Everything wrong at once: the key is reported first, then the signature, and so on.
    let mut payload = payload();
    payload.entries.remove(1);
    let signed = sign_raw(payload);
    let wrong_site = Origin::parse("https://pharmacy.example").unwrap();
    let wrong_nonce = Nonce::parse("n-other").unwrap();
    let late = Timestamp::from_millis(i64::MAX);
    let keys = keys_for(&test_key());
    assert_eq!(
        verify(
            &signed,
            &keys_for(&other_key()),
            &wrong_site,
            &wrong_nonce,
            late
        ),
        Err(VerifyError::UnknownKey)
    );
    let mut bad_sig = signed.clone();
    bad_sig.signature = "00".repeat(64);
    assert_eq!(
        verify(&bad_sig, &keys, &wrong_site, &wrong_nonce, late),
        Err(VerifyError::BadSignature)
    );
    assert_eq!(
        verify(&signed, &keys, &wrong_site, &wrong_nonce, late),
        Err(VerifyError::ChainBroken(ChainBroken { index: 1 }))
    );
    let good = sign_raw(self::payload());
    assert_eq!(
        verify(&good, &keys, &wrong_site, &wrong_nonce, late),
        Err(VerifyError::AudienceMismatch)
    );
    assert_eq!(
        verify(&good, &keys, &site(), &wrong_nonce, late),
        Err(VerifyError::NonceMismatch)
    );
    assert_eq!(
        verify(&good, &keys, &site(), &nonce(), late),
        Err(VerifyError::Expired)
    );
}

#[test]
fn retired_keys_still_verify_old_receipts() {
    let old = sign_raw(payload());
    let keys = KeySet {
        keys: vec![
            PublicKeyEntry::new(
                &test_key().verifying_key(),
                Timestamp::from_millis(T0 - 30 * DAY),
                Some(Timestamp::from_millis(T0 + 2 * MINUTE)),
                KeyStatus::Retired,
            ),
            PublicKeyEntry::new(
                &other_key().verifying_key(),
                Timestamp::from_millis(T0 + 2 * MINUTE),
                None,
                KeyStatus::Active,
            ),
        ],
    };
    check(&old, &keys).unwrap();

    // The successor verifies what it signs, including payloads issued up to two minutes before
    // its window (the signer's clock skew allowance).
    let later = Timestamp::from_millis(T0 + 3 * MINUTE);
    check(&sign(payload(), &other_key(), later), &keys).unwrap();
    // The window is judged at the signed `issued_at`, never the unsigned `signed_at`: a holder
    // of the retired key cannot vouch for a payload issued after its window by backdating.
    let mut after_retirement = payload();
    after_retirement.issued_at = Timestamp::from_millis(T0 + 2 * MINUTE);
    after_retirement.expires_at = Timestamp::from_millis(T0 + 20 * MINUTE);
    let backdated = sign(after_retirement, &test_key(), signed_at());
    assert_eq!(
        verify(
            &backdated,
            &keys,
            &site(),
            &nonce(),
            Timestamp::from_millis(T0 + 3 * MINUTE)
        ),
        Err(VerifyError::UnknownKey)
    );
    // Nor may the successor vouch for a payload issued well before its window.
    let mut early = payload();
    early.issued_at = Timestamp::from_millis(T0 - MINUTE);
    early.expires_at = Timestamp::from_millis(T0 + 20 * MINUTE);
    assert_eq!(
        verify(
            &sign(early, &other_key(), later),
            &keys,
            &site(),
            &nonce(),
            later
        ),
        Err(VerifyError::UnknownKey)
    );
}

#[test]
fn payload_with_an_extra_income_field_fails_to_parse() {
    let signed = sign_raw(payload());
    let json = serde_json::to_value(&signed).unwrap();
    SignedReceipt::parse(&serde_json::to_vec(&json).unwrap()).unwrap();

    let income = serde_json::json!(2_500_000);
    let mut in_payload = json["payload"].clone();
    in_payload["income"] = income.clone();
    assert!(serde_json::from_value::<ReceiptPayload>(in_payload.clone()).is_err());

    let mut wrapped = json.clone();
    wrapped["payload"] = in_payload;
    let mut top = json.clone();
    top["income"] = income.clone();
    let mut in_entry = json.clone();
    in_entry["payload"]["entries"][0]["income"] = income.clone();
    let mut in_claim = json.clone();
    in_claim["payload"]["entries"][0]["claim"]["income"] = income;
    for (name, value) in [
        ("payload", wrapped),
        ("top level", top),
        ("entry", in_entry),
        ("claim", in_claim),
    ] {
        assert_eq!(
            SignedReceipt::parse(&serde_json::to_vec(&value).unwrap()),
            Err(MalformedReceipt("not a valid signed receipt")),
            "{name}"
        );
    }
}

#[test]
fn parse_refuses_invalid_field_values() {
    let json = serde_json::to_value(sign_raw(payload())).unwrap();
    let cases: Vec<Edit<serde_json::Value>> = vec![
        ("provenance", |v| {
            v["payload"]["provenance"] = "attested".into()
        }),
        ("audience with path", |v| {
            v["payload"]["audience"] = "https://housing.example/x".into()
        }),
        ("nonce with space", |v| v["payload"]["nonce"] = "n 1".into()),
        ("uppercase head", |v| {
            let head = v["payload"]["log_head"].as_str().unwrap().to_uppercase();
            v["payload"]["log_head"] = head.into();
        }),
        ("missing field", |v| {
            v["payload"].as_object_mut().unwrap().remove("nonce");
        }),
        ("negative version", |v| {
            v["payload"]["version"] = (-1).into()
        }),
        ("unknown district", |v| {
            v["payload"]["entries"][1]["claim"]["districts"][0] = "atlantis".into()
        }),
        ("key id with slash", |v| v["key_id"] = "a/b".into()),
    ];
    for (name, edit) in cases {
        let mut value = json.clone();
        edit(&mut value);
        assert!(
            SignedReceipt::parse(&serde_json::to_vec(&value).unwrap()).is_err(),
            "{name}"
        );
    }
    let duplicate = br#"{"key_id":"a","key_id":"b"}"#;
    assert!(SignedReceipt::parse(duplicate).is_err());
    assert_eq!(
        SignedReceipt::parse(&vec![b' '; MAX_RECEIPT_BYTES + 1]),
        Err(MalformedReceipt("receipt too large"))
    );
}

#[test]
fn signed_receipt_json_round_trips() {
    let signed = sign_raw(payload());
    let text = serde_json::to_string(&signed).unwrap();
    assert_eq!(SignedReceipt::parse(text.as_bytes()).unwrap(), signed);
    let keys = keys_for(&test_key());
    let keys_text = serde_json::to_string(&keys).unwrap();
    assert_eq!(KeySet::parse(keys_text.as_bytes()).unwrap(), keys);
    assert!(KeySet::parse(br#"{"keys":[],"extra":1}"#).is_err());
}

#[test]
fn signing_bytes_are_domain_separated_and_cover_every_field() {
    let payload = payload();
    let bytes = payload.signing_bytes();
    assert!(bytes.starts_with(RECEIPT_DOMAIN));
    // version: length 2, then 1 as u16 big-endian.
    assert_eq!(&bytes[RECEIPT_DOMAIN.len()..][..6], &[0, 0, 0, 2, 0, 1]);
    for entry in &payload.entries {
        let canonical = entry.canonical_bytes();
        assert!(bytes.windows(canonical.len()).any(|w| w == canonical));
    }
    // Moving bytes between adjacent text fields changes the signing bytes.
    let mut shifted = payload.clone();
    shifted.session_id = SessionId::parse("s-20260501-1n").unwrap();
    shifted.nonce = Nonce::parse("-4f1c2a9e7b3d").unwrap();
    assert_ne!(shifted.signing_bytes(), bytes);
}

#[test]
fn derive_key_id_is_16_lowercase_hex_digits() {
    let id = derive_key_id(&test_key().verifying_key());
    assert_eq!(id.as_str().len(), 16);
    assert!(
        id.as_str()
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    );
    let mut input = b"tacit/key-id/v1\0".to_vec();
    input.extend_from_slice(test_key().verifying_key().as_bytes());
    assert_eq!(id.as_str(), &Hash::digest(&input).to_hex()[..16]);
    assert_ne!(id, derive_key_id(&other_key().verifying_key()));
}

fn mutate(mut bytes: Vec<u8>, at: prop::sample::Index, byte: u8, kind: u8) -> Vec<u8> {
    let pos = at.index(bytes.len());
    match kind {
        0 => bytes[pos] = byte,
        1 => bytes.insert(pos, byte),
        _ => {
            bytes.remove(pos);
        }
    }
    bytes
}

proptest! {
    #[test]
    fn parse_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = SignedReceipt::parse(&bytes);
        let _ = KeySet::parse(&bytes);
    }

    /// A mutated receipt never panics the parser or verifier, and never verifies unless the
    /// mutation left the signed content unchanged (e.g. whitespace).
    #[test]
    fn parse_and_verify_of_mutated_receipt_never_panics(
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        kind in 0u8..3,
    ) {
        static SIGNED: LazyLock<SignedReceipt> = LazyLock::new(|| sign_raw(payload()));
        let bytes = mutate(serde_json::to_vec(&*SIGNED).unwrap(), at, byte, kind);
        if let Ok(parsed) = SignedReceipt::parse(&bytes)
            && check(&parsed, &keys_for(&test_key())).is_ok()
        {
            prop_assert_eq!(parsed.payload.signing_bytes(), SIGNED.payload.signing_bytes());
        }
    }
}

// ---- frozen vectors -------------------------------------------------------------------------

fn vector_receipt() -> (SignedReceipt, KeySet) {
    let keys = keys_for(&test_key());
    (sign(payload(), &test_key(), signed_at()), keys)
}

fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap() + "\n"
}

/// `TACIT_WRITE_VECTORS=1` rewrites both vectors from [`vector_receipt`] first.
#[test]
fn frozen_receipt_vector_verifies() {
    let (written, written_keys) = vector_receipt();
    common::assert_vector(Path::new(RECEIPT_VECTOR), pretty(&written).as_bytes());
    common::assert_vector(Path::new(KEYS_VECTOR), pretty(&written_keys).as_bytes());
    let receipt_text = std::fs::read_to_string(RECEIPT_VECTOR).unwrap();
    let keys_text = std::fs::read_to_string(KEYS_VECTOR).unwrap();
    let signed = SignedReceipt::parse(receipt_text.as_bytes()).unwrap();
    let keys = KeySet::parse(keys_text.as_bytes()).unwrap();

    let verified = verify(&signed, &keys, &site(), &nonce(), now()).unwrap();
    assert!(verified.satisfies_all(&[income_below(3_000_000), three_districts()]));
    assert_eq!(
        Hash::digest(&signed.payload.signing_bytes()).to_hex(),
        VECTOR_SIGNING_BYTES_SHA256
    );
    // The JSON shape is frozen too, and the key is the documented test key.
    assert_eq!(pretty(&signed), receipt_text);
    assert_eq!(pretty(&keys), keys_text);
    assert_eq!(
        keys.keys[0].key_id,
        derive_key_id(&test_key().verifying_key())
    );
    // Ed25519 signing is deterministic, so today's code reproduces the frozen receipt exactly.
    assert_eq!((signed, keys), vector_receipt());
}

#[test]
fn check_signable_wants_an_open_window_issued_near_the_signers_clock() {
    // payload(): issued at T0 + 1 min, expires at T0 + 11 min.
    let p = payload();
    let at = |ms: i64| Timestamp::from_millis(T0 + ms);
    assert_eq!(p.check_signable(at(MINUTE)), Ok(()));
    assert_eq!(
        p.check_signable(at(3 * MINUTE)),
        Ok(()),
        "two minutes after issue"
    );
    assert_eq!(
        p.check_signable(at(-MINUTE)),
        Ok(()),
        "two minutes before issue"
    );
    assert_eq!(
        p.check_signable(at(3 * MINUTE + 1)),
        Err(SignableError::IssuedAtOutOfRange)
    );
    assert_eq!(
        p.check_signable(at(-MINUTE - 1)),
        Err(SignableError::IssuedAtOutOfRange)
    );
    assert_eq!(
        p.check_signable(at(11 * MINUTE)),
        Err(SignableError::Expired)
    );
    let mut broken = payload();
    broken.entries.remove(0);
    assert!(matches!(
        broken.check_signable(at(MINUTE)),
        Err(SignableError::ChainBroken(ChainBroken { .. }))
    ));
}

/// A receipt with an issuer-backed answer says so as a whole and per entry, verifies, and a
/// provenance that disagrees with its entries is refused before signing and at verification.
#[test]
fn issuer_backed_answers_are_named_per_entry() {
    let tax = Origin::parse("http://127.0.0.1:8791").unwrap();
    let mut log = ComparisonLog::new();
    log.append(
        Timestamp::from_millis(T0),
        site(),
        ToolName::parse("tacit.claim.income_below").unwrap(),
        income_below(3_000_000),
        Outcome::Satisfied,
        GrantId::parse("g-housing-1").unwrap(),
        Some(tax.clone()),
    );
    append(
        &mut log,
        &site(),
        T0 + 1,
        three_districts(),
        Outcome::Satisfied,
    );
    let payload = payload_of(&log).unwrap();
    assert_eq!(payload.provenance, Provenance::IssuerBacked);
    let json = serde_json::to_value(&payload).unwrap();
    assert_eq!(json["provenance"], "issuer_backed");
    let signed = sign(payload.clone(), &test_key(), signed_at());
    let verified = check(&signed, &keys_for(&test_key())).unwrap();
    assert_eq!(verified.provenance(), Provenance::IssuerBacked);
    assert_eq!(verified.issuers(), &[Some(tax.clone()), None]);
    assert_eq!(verified.latest_issuer(&income_below(3_000_000)), Some(&tax));
    assert_eq!(verified.latest_issuer(&three_districts()), None);

    // A self-asserted payload claiming issuer_backed, and the reverse, are malformed.
    let mut lying = payload.clone();
    lying.provenance = Provenance::SelfAsserted;
    assert!(matches!(
        lying.check_structure(),
        Err(StructureError::Malformed(_))
    ));
    assert!(matches!(
        check(&sign_raw(lying), &keys_for(&test_key())),
        Err(VerifyError::Malformed(_))
    ));
    let mut boasting = self::payload();
    boasting.provenance = Provenance::IssuerBacked;
    assert!(matches!(
        boasting.check_structure(),
        Err(StructureError::Malformed(_))
    ));
}
