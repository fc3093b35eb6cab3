//! Revoked receipts: the digest a signer publishes, the list in a key document (old documents
//! without one still read), and the rule a site applies (`PublishedKeys::verify`).

// clippy.toml allows unwrap in `#[test]` fns only; the helpers here are test code too.
#![allow(clippy::unwrap_used)]

use ed25519_dalek::SigningKey;
use wallet_core::receipt::{REVOCATION_DOMAIN, sign};
use wallet_core::{
    ComparisonLog, Hash, KeySet, KeyStatus, Nonce, Origin, PublicKeyEntry, PublishedKeys,
    ReceiptPayload, RevokedReceipts, SessionId, SignedReceipt, Timestamp, VerifyError,
    revocation_digest,
};

const T0: i64 = 1_777_627_800_000; // 2026-05-01T09:30:00Z
const MINUTE: i64 = 60_000;

fn key() -> SigningKey {
    SigningKey::from_bytes(Hash::digest(b"tacit/test-signing-key/v1").as_bytes())
}

fn site() -> Origin {
    Origin::parse("https://housing.example").unwrap()
}

fn nonce(n: &str) -> Nonce {
    Nonce::parse(n).unwrap()
}

/// A receipt for `nonce`, signed at T0, valid ten minutes.
fn receipt(session: &str, n: &str) -> SignedReceipt {
    let payload = ReceiptPayload::new(
        SessionId::parse(session).unwrap(),
        site(),
        nonce(n),
        Timestamp::from_millis(T0),
        Timestamp::from_millis(T0 + 10 * MINUTE),
        &ComparisonLog::new(),
    )
    .unwrap();
    sign(payload, &key(), Timestamp::from_millis(T0))
}

fn key_set() -> KeySet {
    KeySet {
        keys: vec![PublicKeyEntry::new(
            &key().verifying_key(),
            Timestamp::from_millis(T0 - MINUTE),
            None,
            KeyStatus::Active,
        )],
    }
}

fn published(revoked: &[&SignedReceipt]) -> PublishedKeys {
    PublishedKeys {
        key_set: key_set(),
        revoked_receipts: RevokedReceipts::new(
            revoked.iter().map(|r| revocation_digest(&r.payload)),
        ),
    }
}

fn at(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms)
}

#[test]
fn the_digest_is_sha256_of_the_domain_and_the_signing_bytes() {
    let r = receipt("s-1", "n-1");
    let mut input = REVOCATION_DOMAIN.to_vec();
    input.extend_from_slice(&r.payload.signing_bytes());
    assert_eq!(revocation_digest(&r.payload), Hash::digest(&input));
    assert_eq!(REVOCATION_DOMAIN, b"tacit/receipt-revocation/v1\0");
    // Another receipt, another digest; the signature and signed_at play no part.
    assert_ne!(
        revocation_digest(&r.payload),
        revocation_digest(&receipt("s-1", "n-2").payload)
    );
    let mut resigned = r.clone();
    resigned.signed_at = at(T0 + 1);
    assert!(published(&[&r]).revoked_receipts.revokes(&resigned));
}

#[test]
fn a_listed_receipt_is_revoked_and_an_unlisted_one_is_not() {
    let revoked = receipt("s-1", "n-1");
    let other = receipt("s-2", "n-2");
    let keys = published(&[&revoked]);
    assert_eq!(
        keys.verify(&revoked, &site(), &nonce("n-1"), at(T0 + MINUTE)),
        Err(VerifyError::Revoked)
    );
    let verified = keys
        .verify(&other, &site(), &nonce("n-2"), at(T0 + MINUTE))
        .unwrap();
    assert_eq!(verified.nonce(), &nonce("n-2"));
    // Without revocations (pinned keys, an older signer) both verify.
    let plain = PublishedKeys::from(key_set());
    assert!(
        plain
            .verify(&revoked, &site(), &nonce("n-1"), at(T0 + MINUTE))
            .is_ok()
    );
    assert_eq!(
        VerifyError::Revoked.to_string(),
        "receipt revoked by its signer"
    );
}

#[test]
fn every_other_failure_comes_before_revocation() {
    let revoked = receipt("s-1", "n-1");
    let keys = published(&[&revoked]);
    let check = |r: &SignedReceipt, audience: &Origin, n: &str, now: i64| {
        keys.verify(r, audience, &nonce(n), at(now)).unwrap_err()
    };
    let elsewhere = Origin::parse("https://pharmacy.example").unwrap();
    assert_eq!(
        check(&revoked, &elsewhere, "n-1", T0 + MINUTE),
        VerifyError::AudienceMismatch
    );
    assert_eq!(
        check(&revoked, &site(), "n-9", T0 + MINUTE),
        VerifyError::NonceMismatch
    );
    assert_eq!(
        check(&revoked, &site(), "n-1", T0 + 11 * MINUTE),
        VerifyError::Expired
    );
    let mut altered = revoked.clone();
    altered.payload.session_id = SessionId::parse("s-other").unwrap();
    assert_eq!(
        check(&altered, &site(), "n-1", T0 + MINUTE),
        VerifyError::BadSignature
    );
}

#[test]
fn the_list_reads_sorted_once_each_and_old_documents_read_as_none() {
    let (a, b) = (receipt("s-1", "n-1"), receipt("s-2", "n-2"));
    let (da, db) = (revocation_digest(&a.payload), revocation_digest(&b.payload));
    let list = RevokedReceipts::new([db, da, db]);
    assert_eq!(list.len(), 2);
    let mut sorted = [da, db];
    sorted.sort_unstable_by(|x, y| x.as_bytes().cmp(y.as_bytes()));
    assert_eq!(list.digests(), sorted);
    assert!(list.contains(&da) && list.contains(&db));
    assert!(!list.contains(&Hash::ZERO));

    // A document as signers wrote it before revocations: no revoked_receipts, none revoked.
    let old = serde_json::to_vec(&key_set()).unwrap();
    let keys = PublishedKeys::parse(&old).unwrap();
    assert!(keys.revoked_receipts.is_empty());
    assert_eq!(keys.key_set, key_set());
    // Written without revocations, the document is exactly the old one.
    assert_eq!(serde_json::to_vec(&keys).unwrap(), old);

    // With revocations: the field is there, in any order it reads sorted, and a KeySet reader
    // (the wallet) still reads the keys.
    let json = serde_json::json!({
        "keys": serde_json::to_value(key_set()).unwrap()["keys"],
        "revoked_receipts": [db.to_hex(), da.to_hex()],
    });
    let bytes = serde_json::to_vec(&json).unwrap();
    let keys = PublishedKeys::parse(&bytes).unwrap();
    assert_eq!(keys.revoked_receipts, list);
    assert_eq!(KeySet::parse(&bytes).unwrap(), key_set());
    let written = serde_json::to_value(&keys).unwrap();
    assert_eq!(written["revoked_receipts"][0], sorted[0].to_hex());

    // Strict: a bad digest or an unknown field is refused.
    for bad in [
        serde_json::json!({ "keys": [], "revoked_receipts": ["ABCD"] }),
        serde_json::json!({ "keys": [], "revoked_receipts": [da.to_hex().to_uppercase()] }),
        serde_json::json!({ "keys": [], "revoked": [] }),
        serde_json::json!({ "revoked_receipts": [] }),
    ] {
        let bytes = serde_json::to_vec(&bad).unwrap();
        assert!(PublishedKeys::parse(&bytes).is_err(), "{bad}");
        assert!(KeySet::parse(&bytes).is_err(), "{bad}");
    }
    assert!(PublishedKeys::parse(&vec![b' '; KeySet::MAX_BYTES + 1]).is_err());
}
