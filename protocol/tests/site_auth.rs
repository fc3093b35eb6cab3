//! Signed site requirements: the round trip, every tampering refused with its own error, and a
//! frozen vector so the signed bytes never drift.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::SigningKey;
use serde_json::json;
use sha2::Digest as _;
use tacit_protocol::site_auth::{
    Attestation, MAX_ATTESTATION_LIFETIME_MS, Requirements, SiteAuthError, SiteKey, SiteKeys,
    attest_for_nonce, derive_site_kid, requirements_signing_bytes, sign_requirements,
    verify_requirements,
};
use wallet_core::{Claim, Nonce, Origin, Timestamp};

const NOW: Timestamp = Timestamp::from_millis(1_800_000_000_000);
const HOUR: i64 = 60 * 60 * 1000;

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn origin() -> Origin {
    Origin::parse("http://127.0.0.1:8081").unwrap()
}

fn requirements() -> Requirements {
    serde_json::from_value(json!({
        "origin": "http://127.0.0.1:8081",
        "nonce": "0123456789abcdef",
        "site_name": "City Housing Programme",
        "purpose": "Eligibility for subsidised housing",
        "claims": [
            { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } },
            { "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] }
        ]
    }))
    .unwrap()
}

fn keys_doc(signing: &[&SigningKey]) -> SiteKeys {
    let verifying: Vec<_> = signing.iter().map(|k| k.verifying_key()).collect();
    SiteKeys::new(origin(), "City Housing Programme", &verifying)
}

fn attest(k: &SigningKey, req: &Requirements) -> Attestation {
    sign_requirements(
        k,
        &derive_site_kid(&k.verifying_key()),
        req,
        NOW.plus_millis(HOUR),
    )
}

#[test]
fn round_trip() {
    let k = key(1);
    let req = requirements();
    let att = attest(&k, &req);
    assert_eq!(att.expires_at_ms, NOW.millis() + HOUR);
    assert_eq!(URL_SAFE_NO_PAD.decode(&att.signature).unwrap().len(), 64);
    assert_eq!(
        verify_requirements(&keys_doc(&[&k]), &req, &att, NOW),
        Ok(())
    );
    // Any listed key will do: a rotated site lists the old key and the new.
    let doc = keys_doc(&[&key(9), &k]);
    assert_eq!(verify_requirements(&doc, &req, &att, NOW), Ok(()));
    // The wire forms round-trip through JSON unchanged.
    let doc_json = serde_json::to_vec(&doc).unwrap();
    assert_eq!(SiteKeys::parse(&doc_json).unwrap(), doc);
    let att_json = serde_json::to_value(&att).unwrap();
    let mut names: Vec<_> = att_json.as_object().unwrap().keys().cloned().collect();
    names.sort();
    assert_eq!(names, ["expires_at_ms", "kid", "signature"]);
    assert_eq!(
        serde_json::from_value::<Attestation>(att_json).unwrap(),
        att
    );
}

#[test]
fn an_attestation_for_a_nonce_lapses_with_the_nonce() {
    let k = key(1);
    let kid = derive_site_kid(&k.verifying_key());
    let req = requirements();
    let doc = keys_doc(&[&k]);
    let nonce_expires = NOW.plus_millis(HOUR);
    let att = attest_for_nonce(&k, &kid, &req, NOW, nonce_expires);
    assert_eq!(att.expires_at(), nonce_expires);
    assert_eq!(att.kid, kid);
    assert_eq!(verify_requirements(&doc, &req, &att, NOW), Ok(()));
    let lapsed = verify_requirements(&doc, &req, &att, nonce_expires);
    assert_eq!(lapsed, Err(SiteAuthError::Expired));
    // It signs exactly these requirements: another nonce does not verify.
    let mut other = req.clone();
    other.nonce = Nonce::parse("fedcba9876543210").unwrap();
    assert_eq!(
        verify_requirements(&doc, &other, &att, NOW),
        Err(SiteAuthError::BadSignature)
    );
    // A nonce that would outlive what a wallet accepts: the attestation stops at the wallet's
    // limit, so it is never refused as too long at issue.
    let long = attest_for_nonce(&k, &kid, &req, NOW, NOW.plus_millis(48 * HOUR));
    assert_eq!(
        long.expires_at(),
        NOW.plus_millis(MAX_ATTESTATION_LIFETIME_MS)
    );
    assert_eq!(verify_requirements(&doc, &req, &long, NOW), Ok(()));
}

#[test]
fn every_tampered_field_is_refused() {
    let k = key(1);
    let doc = keys_doc(&[&k]);
    let req = requirements();
    let att = attest(&k, &req);
    let bad = |changed: Requirements, what: &str| {
        // The keys document is for the changed origin too, so only the signature can refuse.
        let mut doc = doc.clone();
        doc.origin = changed.origin.clone();
        assert_eq!(
            verify_requirements(&doc, &changed, &att, NOW),
            Err(SiteAuthError::BadSignature),
            "{what}"
        );
    };
    let mut r = req.clone();
    r.origin = Origin::parse("http://127.0.0.1:8082").unwrap();
    bad(r, "origin");
    let mut r = req.clone();
    r.nonce = Nonce::parse("0123456789abcdee").unwrap();
    bad(r, "nonce");
    let mut r = req.clone();
    r.site_name = "City Housing Programme!".into();
    bad(r, "site_name");
    let mut r = req.clone();
    r.purpose = "Something else".into();
    bad(r, "purpose");
    let mut r = req.clone();
    r.claims[0] = serde_json::from_value(
        json!({ "kind": "income_below", "limit": { "amount_minor": 3_000_001, "currency": "EUR" } }),
    )
    .unwrap();
    bad(r, "a claim's threshold");
    let mut r = req.clone();
    r.claims.pop();
    bad(r, "a claim dropped");
    let mut r = req.clone();
    r.claims.swap(0, 1);
    bad(r, "claims reordered");
    let mut r = req.clone();
    r.claims.push(Claim::age_at_least(18).unwrap());
    bad(r, "a claim added");

    // The expiry is signed too: moving it later breaks the signature.
    let mut later = att.clone();
    later.expires_at_ms += 1;
    assert_eq!(
        verify_requirements(&doc, &req, &later, NOW),
        Err(SiteAuthError::BadSignature)
    );
    // A flipped signature bit.
    let mut sig = URL_SAFE_NO_PAD.decode(&att.signature).unwrap();
    sig[5] ^= 1;
    let mut flipped = att.clone();
    flipped.signature = URL_SAFE_NO_PAD.encode(&sig);
    assert_eq!(
        verify_requirements(&doc, &req, &flipped, NOW),
        Err(SiteAuthError::BadSignature)
    );
}

#[test]
fn fields_cannot_slide_into_each_other() {
    // Without length prefixes "ab" + "c" and "a" + "bc" would sign the same bytes.
    let req = requirements();
    let one = requirements_signing_bytes(
        &req.origin,
        &req.nonce,
        "City Housing",
        " Programme",
        &req.claims,
        NOW,
    );
    let two = requirements_signing_bytes(
        &req.origin,
        &req.nonce,
        "City Housing ",
        "Programme",
        &req.claims,
        NOW,
    );
    assert_ne!(one, two);
}

#[test]
fn another_sites_key_or_an_unknown_kid_is_refused() {
    let site = key(1);
    let attacker = key(2);
    let req = requirements();
    // The attacker signs with its own key and names the site's kid.
    let forged = sign_requirements(
        &attacker,
        &derive_site_kid(&site.verifying_key()),
        &req,
        NOW.plus_millis(HOUR),
    );
    assert_eq!(
        verify_requirements(&keys_doc(&[&site]), &req, &forged, NOW),
        Err(SiteAuthError::BadSignature)
    );
    // Or names its own kid, which the site does not publish.
    let own = attest(&attacker, &req);
    assert_eq!(
        verify_requirements(&keys_doc(&[&site]), &req, &own, NOW),
        Err(SiteAuthError::UnknownKey)
    );
}

#[test]
fn a_keys_document_for_another_origin_proves_nothing() {
    // The attacker runs its own origin with its own key and relays requirements naming the
    // victim's origin: the wallet fetched the attacker's document, whose origin differs.
    let attacker = key(2);
    let req = requirements();
    let att = attest(&attacker, &req);
    let theirs = SiteKeys::new(
        Origin::parse("http://127.0.0.1:9999").unwrap(),
        "City Housing Programme",
        &[attacker.verifying_key()],
    );
    assert_eq!(
        verify_requirements(&theirs, &req, &att, NOW),
        Err(SiteAuthError::OriginMismatch)
    );
}

#[test]
fn expired_and_too_long_attestations_are_refused() {
    let k = key(1);
    let doc = keys_doc(&[&k]);
    let req = requirements();
    let att = attest(&k, &req);
    let end = att.expires_at();
    assert_eq!(
        verify_requirements(&doc, &req, &att, end.plus_millis(-1)),
        Ok(())
    );
    assert_eq!(
        verify_requirements(&doc, &req, &att, end),
        Err(SiteAuthError::Expired)
    );
    assert_eq!(
        verify_requirements(&doc, &req, &att, end.plus_millis(HOUR)),
        Err(SiteAuthError::Expired)
    );
    let kid = derive_site_kid(&k.verifying_key());
    let forever = sign_requirements(&k, &kid, &req, Timestamp::from_millis(i64::MAX));
    assert!(matches!(
        verify_requirements(&doc, &req, &forever, NOW),
        Err(SiteAuthError::Malformed(_))
    ));
    let a_day = sign_requirements(&k, &kid, &req, NOW.plus_millis(MAX_ATTESTATION_LIFETIME_MS));
    assert_eq!(verify_requirements(&doc, &req, &a_day, NOW), Ok(()));
}

#[test]
fn malformed_signatures_and_kids_are_refused() {
    let k = key(1);
    let doc = keys_doc(&[&k]);
    let req = requirements();
    let att = attest(&k, &req);
    let malformed = |a: &Attestation, what: &str| {
        assert!(
            matches!(
                verify_requirements(&doc, &req, a, NOW),
                Err(SiteAuthError::Malformed(_))
            ),
            "{what}: {:?}",
            verify_requirements(&doc, &req, a, NOW)
        );
    };
    let sig = URL_SAFE_NO_PAD.decode(&att.signature).unwrap();
    for (text, what) in [
        (String::new(), "empty"),
        (URL_SAFE_NO_PAD.encode(&sig[..63]), "63 bytes"),
        (
            URL_SAFE_NO_PAD.encode([sig.as_slice(), &[0]].concat()),
            "65 bytes",
        ),
        (format!("{}==", att.signature), "padded"),
        (att.signature.replace(['-', '_'], "+"), "standard alphabet"),
        (hex::encode(&sig), "hex"),
        ("!".repeat(86), "not base64"),
        ("A".repeat(100_000), "huge"),
    ] {
        if text == att.signature {
            continue; // the replacement changed nothing
        }
        let mut a = att.clone();
        a.signature = text;
        malformed(&a, what);
    }
    for kid in ["", "has space", &"k".repeat(65), "ünï"] {
        let mut a = att.clone();
        a.kid = kid.to_owned();
        malformed(&a, "kid");
    }
    // Unknown fields in an attestation are refused when parsed.
    let mut extra = serde_json::to_value(&att).unwrap();
    extra["alg"] = json!("none");
    assert!(serde_json::from_value::<Attestation>(extra).is_err());
}

#[test]
fn malformed_keys_documents_are_refused() {
    let k = key(1);
    let good = serde_json::to_value(keys_doc(&[&k])).unwrap();
    assert!(SiteKeys::parse(good.to_string().as_bytes()).is_ok());
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut doc = good.clone();
        f(&mut doc);
        SiteKeys::parse(doc.to_string().as_bytes())
    };
    let is_malformed =
        |r: Result<SiteKeys, SiteAuthError>| matches!(r, Err(SiteAuthError::Malformed(_)));
    assert!(is_malformed(edit(&|d| d["keys"] = json!([]))));
    assert!(is_malformed(edit(&|d| d["keys"][0]["kty"] = json!("EC"))));
    assert!(is_malformed(edit(
        &|d| d["keys"][0]["crv"] = json!("X25519")
    )));
    assert!(is_malformed(edit(&|d| d["keys"][0]["x"] = json!("AAAA"))));
    assert!(is_malformed(edit(&|d| d["keys"][0]["x"] = json!("!!!"))));
    assert!(is_malformed(edit(&|d| d["keys"][0]["kid"] = json!("a b"))));
    assert!(is_malformed(edit(&|d| d["keys"][0]["d"] = json!("secret"))));
    assert!(is_malformed(edit(&|d| d["extra"] = json!(1))));
    assert!(is_malformed(edit(&|d| d["origin"] = json!("ftp://x"))));
    assert!(is_malformed(edit(&|d| {
        let first = d["keys"][0].clone();
        d["keys"] = json!([first.clone(), first]);
    })));
    assert!(is_malformed(edit(&|d| {
        let first = d["keys"][0].clone();
        d["keys"] = json!(vec![first; 17]);
    })));
    assert!(is_malformed(SiteKeys::parse(b"not json")));
    assert!(is_malformed(SiteKeys::parse(&vec![b' '; 64 * 1024 + 1])));
    // A listed key whose x is not a point is refused when used, too.
    let mut doc = keys_doc(&[&k]);
    doc.keys[0].x = URL_SAFE_NO_PAD.encode([0xffu8; 32]);
    let req = requirements();
    let att = attest(&k, &req);
    assert!(matches!(
        verify_requirements(&doc, &req, &att, NOW),
        Err(SiteAuthError::Malformed(_)) | Err(SiteAuthError::BadSignature)
    ));
}

#[test]
fn kid_is_the_rfc7638_thumbprint() {
    // RFC 8037 appendix A.3: the thumbprint of its Ed25519 example key.
    let x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
    let bytes: [u8; 32] = URL_SAFE_NO_PAD.decode(x).unwrap().try_into().unwrap();
    let vk = ed25519_dalek::VerifyingKey::from_bytes(&bytes).unwrap();
    assert_eq!(
        derive_site_kid(&vk),
        "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    );
    let jwk = SiteKey::from_verifying_key(&vk);
    assert_eq!(jwk.x, x);
    assert_eq!(jwk.verifying_key().unwrap(), vk);
}

/// Frozen (the digest, kid and signature were computed independently with Python's hashlib and
/// `cryptography` Ed25519): the signing bytes' digest and the signature of a fixed key over fixed requirements.
/// If this changes, every deployed wallet stops verifying every deployed site.
#[test]
fn frozen_vector() {
    let k = key(7);
    let req = requirements();
    let expires = Timestamp::from_millis(1_800_003_600_000);
    let bytes = requirements_signing_bytes(
        &req.origin,
        &req.nonce,
        &req.site_name,
        &req.purpose,
        &req.claims,
        expires,
    );
    assert!(bytes.starts_with(b"tacit/site-requirements/v1\0\0\0\0\x15http://127.0.0.1:8081"));
    assert_eq!(
        hex::encode(sha2::Sha256::digest(&bytes)),
        "5f282193e122333f401a5c23c85fca2e2b5dfa418a28b738461681aadcd08303"
    );
    let kid = derive_site_kid(&k.verifying_key());
    assert_eq!(kid, "--6IM5l0OosLj9yWskISYhUA3n_3CURQkmrYMSha_ck");
    let att = sign_requirements(&k, &kid, &req, expires);
    assert_eq!(
        att.signature,
        "eqEpiek_VNfi5Yu5eNJLqJvsS_rhLhY4FsUI6bscVT7Vya6ZLq_vYJgsE5N6dPOjgWUKGjvGG_k46Eo9r1q-AQ"
    );
    let doc = keys_doc(&[&k]);
    assert_eq!(
        verify_requirements(&doc, &req, &att, Timestamp::from_millis(1_800_000_000_000)),
        Ok(())
    );
}
