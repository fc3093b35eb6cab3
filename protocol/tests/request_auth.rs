//! Request authentication: frozen vectors (one signed by Node's WebCrypto, the API the wallet
//! uses), bad headers, stale and future timestamps, signatures over something else, high-S,
//! wrong keys, and enrolment codes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use proptest::prelude::*;
use sha2::{Digest, Sha256};
use tacit_protocol::request_auth::*;
use wallet_core::Timestamp;

const TS: i64 = 1_777_627_800_000;
const BODY: &[u8] = br#"{"hello":"tacit"}"#;
const PATH: &str = "/v1/receipts";

/// The public key as WebCrypto's `exportKey("jwk")` wrote it (members in its order).
const WEBCRYPTO_JWK: &str = r#"{"key_ops":["verify"],"ext":true,"kty":"EC","x":"ULg6IHAsjqRyXwR8ueGBwuFnFcTdRZ8yKO8usFlPdKM","y":"1s_dfSlU25slwuyX-riMFnRMD8eSRFspqR21qCkBvNM","crv":"P-256"}"#;
const THUMBPRINT: &str = "tAUrqdqviBaO8shvWjItiozwExdA0WyIR2MYaEuMEMY";
/// `crypto.subtle.sign({name:"ECDSA",hash:"SHA-256"}, key, signing_input("POST", PATH, TS, BODY))`
/// in Node 20, base64url.
const WEBCRYPTO_SIGNATURE: &str =
    "_V2af0I1ENZ8XLBUKzu_MAnx3ivNKgi9KXkBVsHTGBoLYsv852-2kp5X1E03LAeu4NTQ2Bv9FrBAgrjjzbqyjA";

/// The same fixed test key: d = SHA-256("tacit/request-auth-test-key/v1").
fn test_key() -> SigningKey {
    let d = Sha256::digest(b"tacit/request-auth-test-key/v1");
    SigningKey::from_slice(&d).unwrap()
}

fn other_key() -> SigningKey {
    SigningKey::from_slice(&Sha256::digest(b"tacit/request-auth-test-key/other")).unwrap()
}

fn install_key(key: &SigningKey) -> InstallKey {
    InstallKey::from_verifying_key(*key.verifying_key())
}

fn sign(key: &SigningKey, method: &str, path: &str, ts: i64, body: &[u8]) -> String {
    let sig: Signature = key.sign(signing_input(method, path, ts, body).as_bytes());
    URL_SAFE_NO_PAD.encode(sig.to_bytes())
}

fn headers(key: &SigningKey, method: &str, path: &str, ts: i64, body: &[u8]) -> RequestAuth {
    let id = install_key(key).id();
    RequestAuth::parse(
        Some(id.as_str()),
        Some(&ts.to_string()),
        Some(&sign(key, method, path, ts, body)),
    )
    .unwrap()
}

fn at(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms)
}

/// `s` replaced by `n - s`: the other signature that verifies for the same message.
fn flip_s(encoded: &str) -> String {
    let sig = Signature::from_slice(&URL_SAFE_NO_PAD.decode(encoded).unwrap()).unwrap();
    let (r, s) = sig.split_scalars();
    let flipped = Signature::from_scalars(r.to_bytes(), (-*s).to_bytes()).unwrap();
    URL_SAFE_NO_PAD.encode(flipped.to_bytes())
}

#[test]
fn frozen_signing_input() {
    assert_eq!(
        signing_input("post", PATH, TS, BODY),
        "tacit-signer-request-v1\nPOST\n/v1/receipts\n1777627800000\n\
         20bOVzyCN6l6_n6bWvf3_9BR8MwqkHEXbR8S7RlztVc"
    );
    // The empty body's digest is SHA-256 of nothing.
    assert!(
        signing_input("GET", "/v1/keys", 0, b"")
            .ends_with("\n0\n47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU")
    );
}

#[test]
fn frozen_webcrypto_key_thumbprint_and_signature() {
    let jwk: Jwk = serde_json::from_str(WEBCRYPTO_JWK).unwrap();
    let key = InstallKey::from_jwk(&jwk).unwrap();
    assert_eq!(key, install_key(&test_key()));
    assert_eq!(key.id().as_str(), THUMBPRINT);
    assert_eq!(key.to_jwk(), jwk);
    let json = serde_json::to_value(key.to_jwk()).unwrap();
    assert_eq!(json.as_object().unwrap().len(), 4, "{json}");
    let auth = RequestAuth::parse(
        Some(THUMBPRINT),
        Some("1777627800000"),
        Some(WEBCRYPTO_SIGNATURE),
    )
    .unwrap();
    assert_eq!(auth.install_id().as_str(), THUMBPRINT);
    assert_eq!(auth.timestamp_ms(), TS);
    assert_eq!(auth.verify(&key, "POST", PATH, BODY, at(TS)), Ok(()));
    // One byte of body, the path, the method, the time: each changes the answer.
    assert_eq!(
        auth.verify(&key, "POST", PATH, br#"{"hello":"tacit!"}"#, at(TS)),
        Err(AuthError::BadSignature)
    );
    assert_eq!(
        auth.verify(&key, "POST", "/v1/installs", BODY, at(TS)),
        Err(AuthError::BadSignature)
    );
    assert_eq!(
        auth.verify(&key, "PUT", PATH, BODY, at(TS)),
        Err(AuthError::BadSignature)
    );
    let later = RequestAuth::parse(
        Some(THUMBPRINT),
        Some("1777627800001"),
        Some(WEBCRYPTO_SIGNATURE),
    )
    .unwrap();
    assert_eq!(
        later.verify(&key, "POST", PATH, BODY, at(TS)),
        Err(AuthError::BadSignature)
    );
}

#[test]
fn both_s_forms_verify_and_share_one_replay_token() {
    let key = install_key(&test_key());
    let flipped = flip_s(WEBCRYPTO_SIGNATURE);
    assert_ne!(flipped, WEBCRYPTO_SIGNATURE);
    let original = RequestAuth::parse(
        Some(THUMBPRINT),
        Some("1777627800000"),
        Some(WEBCRYPTO_SIGNATURE),
    )
    .unwrap();
    let other =
        RequestAuth::parse(Some(THUMBPRINT), Some("1777627800000"), Some(&flipped)).unwrap();
    assert_eq!(original.verify(&key, "POST", PATH, BODY, at(TS)), Ok(()));
    assert_eq!(other.verify(&key, "POST", PATH, BODY, at(TS)), Ok(()));
    // A replayer who flips s must not get a fresh token.
    assert_eq!(original.replay_token(), other.replay_token());
    // Exactly one of the two is high-S.
    let high = |e: &str| {
        let s = Signature::from_slice(&URL_SAFE_NO_PAD.decode(e).unwrap()).unwrap();
        s.normalize_s() != s
    };
    assert_ne!(high(WEBCRYPTO_SIGNATURE), high(&flipped));
}

#[test]
fn distinct_signatures_have_distinct_replay_tokens() {
    let a = headers(&test_key(), "POST", PATH, TS, BODY);
    let b = headers(&test_key(), "POST", PATH, TS + 1, BODY);
    assert_ne!(a.replay_token(), b.replay_token());
}

#[test]
fn stale_and_future_timestamps_are_refused_at_the_edge() {
    let key = install_key(&test_key());
    let auth = headers(&test_key(), "POST", PATH, TS, BODY);
    for now in [TS - MAX_CLOCK_SKEW_MS, TS, TS + MAX_CLOCK_SKEW_MS] {
        assert_eq!(
            auth.verify(&key, "POST", PATH, BODY, at(now)),
            Ok(()),
            "{now}"
        );
    }
    for now in [
        TS - MAX_CLOCK_SKEW_MS - 1,
        TS + MAX_CLOCK_SKEW_MS + 1,
        0,
        i64::MIN,
        i64::MAX,
    ] {
        assert_eq!(
            auth.verify(&key, "POST", PATH, BODY, at(now)),
            Err(AuthError::Stale),
            "{now}"
        );
    }
}

#[test]
fn replay_tokens_are_kept_while_a_replay_could_still_be_fresh_anywhere() {
    assert_eq!(REPLAY_KEEP_MS, 2 * MAX_CLOCK_SKEW_MS);
    assert_eq!(REPLAY_KEEP_MS, 240_000);
    let key = test_key();
    let auth = headers(&key, "POST", PATH, TS, BODY);
    let keep_until = auth.replay_keep_until();
    assert_eq!(keep_until, at(TS + 240_000));
    // The last instant any instance takes the request as fresh, by its own clock…
    let last_fresh = TS + MAX_CLOCK_SKEW_MS;
    assert_eq!(
        auth.verify(&install_key(&key), "POST", PATH, BODY, at(last_fresh)),
        Ok(())
    );
    // …while a purging instance may run a whole skew ahead: the token must outlive that
    // (purges delete `expires_at < now`).
    assert!(keep_until >= at(last_fresh + MAX_CLOCK_SKEW_MS));
    // Once the token may go, every instance within the skew calls the request stale.
    for clock in [
        keep_until.millis() - MAX_CLOCK_SKEW_MS + 1,
        keep_until.millis(),
    ] {
        assert_eq!(
            auth.verify(&install_key(&key), "POST", PATH, BODY, at(clock)),
            Err(AuthError::Stale),
            "{clock}"
        );
    }
    // Timestamps come from the request (16 digits at most): no overflow.
    let far = RequestAuth::parse(
        Some(install_key(&key).id().as_str()),
        Some("9999999999999999"),
        Some(&sign(&key, "POST", PATH, 9_999_999_999_999_999, BODY)),
    )
    .unwrap();
    assert_eq!(
        far.replay_keep_until(),
        at(9_999_999_999_999_999 + REPLAY_KEEP_MS)
    );
}

#[test]
fn a_signature_by_another_key_or_for_another_install_is_refused() {
    let mine = install_key(&test_key());
    let theirs = install_key(&other_key());
    // Signed by the other key but naming mine: wrong signature.
    let forged = RequestAuth::parse(
        Some(THUMBPRINT),
        Some(&TS.to_string()),
        Some(&sign(&other_key(), "POST", PATH, TS, BODY)),
    )
    .unwrap();
    assert_eq!(
        forged.verify(&mine, "POST", PATH, BODY, at(TS)),
        Err(AuthError::BadSignature)
    );
    // A key that is not the install named is refused before any signature check.
    let auth = headers(&test_key(), "POST", PATH, TS, BODY);
    assert_eq!(
        auth.verify(&theirs, "POST", PATH, BODY, at(TS)),
        Err(AuthError::WrongKey)
    );
    // …and before the clock: an enrolment whose body key is not the headers' install is told
    // so even when it is also stale (the signer answers `install_mismatch`).
    assert_eq!(
        auth.verify(&theirs, "POST", PATH, BODY, at(TS + 10 * MAX_CLOCK_SKEW_MS)),
        Err(AuthError::WrongKey)
    );
}

#[test]
fn a_stored_key_is_trusted_only_for_its_own_install() {
    let mine = install_key(&test_key());
    let theirs = install_key(&other_key());
    let id = mine.id();
    assert_eq!(
        InstallKey::for_install(&mine.to_jwk(), &id),
        Ok(mine.clone())
    );
    assert_eq!(
        InstallKey::for_install(&theirs.to_jwk(), &id),
        Err(AuthError::WrongKey)
    );
    let mut off_curve = mine.to_jwk();
    off_curve.x = off_curve.y.clone();
    assert_eq!(
        InstallKey::for_install(&off_curve, &id),
        Err(AuthError::BadKey)
    );
}

#[test]
fn missing_and_malformed_headers_are_refused() {
    let id = THUMBPRINT;
    let ts = "1777627800000";
    let sig = WEBCRYPTO_SIGNATURE;
    let missing: [(Option<&str>, Option<&str>, Option<&str>); 4] = [
        (None, None, None),
        (None, Some(ts), Some(sig)),
        (Some(id), None, Some(sig)),
        (Some(id), Some(ts), None),
    ];
    for (i, t, s) in missing {
        assert_eq!(RequestAuth::parse(i, t, s), Err(AuthError::Missing));
    }
    let zero_sig = URL_SAFE_NO_PAD.encode([0u8; 64]);
    let padded_sig = format!("{sig}==");
    let std_b64_sig = sig.replace('-', "+").replace('_', "/");
    let short_sig = &sig[..85];
    let long_sig = URL_SAFE_NO_PAD.encode([1u8; 65]);
    // s = n (the group order) is out of range.
    let mut order = [0u8; 64];
    order[31] = 1;
    order[32..].copy_from_slice(
        &hex::decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551").unwrap(),
    );
    let order_sig = URL_SAFE_NO_PAD.encode(order);
    let short_id = &id[..42];
    let bad_id = format!("{}=", &id[..42]);
    let malformed: Vec<(&str, &str, &str)> = vec![
        (short_id, ts, sig),
        (&bad_id, ts, sig),
        ("", ts, sig),
        (id, "", sig),
        (id, "-1", sig),
        (id, "+1777627800000", sig),
        (id, "1777627800000.0", sig),
        (id, " 1777627800000", sig),
        (id, "0x1f", sig),
        (id, "99999999999999999999", sig),
        (id, ts, ""),
        (id, ts, &zero_sig),
        (id, ts, &padded_sig),
        (id, ts, &std_b64_sig),
        (id, ts, short_sig),
        (id, ts, &long_sig),
        (id, ts, &order_sig),
    ];
    for (i, t, s) in malformed {
        assert_eq!(
            RequestAuth::parse(Some(i), Some(t), Some(s)),
            Err(AuthError::Malformed),
            "{i:?} {t:?} {s:?}"
        );
    }
}

#[test]
fn jwks_that_are_not_p256_points_are_refused() {
    let good: serde_json::Value = serde_json::from_str(WEBCRYPTO_JWK).unwrap();
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = good.clone();
        f(&mut v);
        v
    };
    // Members other than the four and WebCrypto's two are refused at parse time.
    let extra = edit(&|v| v["d"] = "secret".into());
    assert!(serde_json::from_value::<Jwk>(extra).is_err());
    let extra = edit(&|v| v["alg"] = "ES256".into());
    assert!(serde_json::from_value::<Jwk>(extra).is_err());
    let refused = [
        edit(&|v| v["kty"] = "OKP".into()),
        edit(&|v| v["crv"] = "P-384".into()),
        edit(&|v| v["x"] = "AAAA".into()),
        edit(&|v| v["x"] = URL_SAFE_NO_PAD.encode([0u8; 32]).into()),
        edit(&|v| v["y"] = URL_SAFE_NO_PAD.encode([7u8; 32]).into()),
        edit(&|v| v["y"] = format!("{}=", v["y"].as_str().unwrap()).into()),
        edit(&|v| v["y"] = URL_SAFE_NO_PAD.encode([0xffu8; 33]).into()),
    ];
    for value in refused {
        let jwk: Jwk = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(
            InstallKey::from_jwk(&jwk),
            Err(AuthError::BadKey),
            "{value}"
        );
    }
}

#[test]
fn install_ids_round_trip_through_serde_and_refuse_junk() {
    let id = install_key(&test_key()).id();
    let json = serde_json::to_string(&id).unwrap();
    assert_eq!(json, format!("\"{THUMBPRINT}\""));
    assert_eq!(serde_json::from_str::<InstallId>(&json).unwrap(), id);
    assert!(serde_json::from_str::<InstallId>("\"abc\"").is_err());
    assert!(serde_json::from_str::<InstallId>(&format!("\"{}!\"", &THUMBPRINT[..42])).is_err());
}

#[test]
fn enrolment_codes_format_parse_and_hash() {
    let code = make_enrolment_code([0u8; 10]);
    assert_eq!(code.to_string(), "0000-0000-0000-0000");
    let code = make_enrolment_code([0xff; 10]);
    assert_eq!(code.to_string(), "ZZZZ-ZZZZ-ZZZZ-ZZZZ");
    // 0x01 0x23 … spelled 5 bits at a time.
    let code = make_enrolment_code([0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23]);
    assert_eq!(code.to_string(), "04HM-ASW9-NF6Y-Y093");
    assert_eq!(code.canonical(), "04HMASW9NF6YY093");
    for typed in [
        "04HM-ASW9-NF6Y-Y093",
        "04hmasw9nf6yy093",
        "o4hm-asw9-nf6y-yo93",
        " 04HM ASW9 NF6Y Y093 ",
    ] {
        assert_eq!(EnrolmentCode::parse(typed).unwrap(), code, "{typed}");
    }
    assert_eq!(
        EnrolmentCode::parse("1111-1111-1111-1111"),
        EnrolmentCode::parse("ilIL-1111-1111-1111")
    );
    for bad in [
        "",
        "04HM-ASW9-NF6Y-Y09",
        "04HM-ASW9-NF6Y-Y0933",
        "04HM-ASW9-NF6Y-Y09U",
        "04HM_ASW9_NF6Y_Y093",
        "04HM-ASW9-NF6Y-Y09é",
    ] {
        assert_eq!(EnrolmentCode::parse(bad), Err(AuthError::BadCode), "{bad}");
    }
    // Debug never shows the code.
    assert!(!format!("{code:?}").contains("04HM"));
    // The hash is frozen, and differs per code.
    assert_eq!(
        hex::encode(derive_code_hash(&code)),
        hex::encode(derive_code_hash(
            &EnrolmentCode::parse("04hmasw9nf6yy093").unwrap()
        ))
    );
    assert_ne!(
        derive_code_hash(&code),
        derive_code_hash(&make_enrolment_code([0u8; 10]))
    );
}

#[test]
fn frozen_code_hash() {
    let code = make_enrolment_code([0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23]);
    let mut expected = Sha256::new();
    expected.update(b"tacit-enrolment-code-v1\0");
    expected.update(b"04HMASW9NF6YY093");
    assert_eq!(
        derive_code_hash(&code),
        <[u8; 32]>::from(expected.finalize())
    );
    assert_eq!(hex::encode(derive_code_hash(&code)), FROZEN_CODE_HASH,);
}

const FROZEN_CODE_HASH: &str = "f2a54a75edb807f539affa0551c357e3efacfc9a0e30fd79741cd76d7268d0cc";

#[test]
fn enrolment_bodies_are_strict() {
    let body = format!(r#"{{"code":"04HM-ASW9-NF6Y-Y093","public_key":{WEBCRYPTO_JWK}}}"#);
    let parsed: EnrolmentRequest = serde_json::from_str(&body).unwrap();
    assert_eq!(
        InstallKey::from_jwk(&parsed.public_key)
            .unwrap()
            .id()
            .as_str(),
        THUMBPRINT
    );
    let extra = format!(r#"{{"code":"x","public_key":{WEBCRYPTO_JWK},"label":"mine"}}"#);
    assert!(serde_json::from_str::<EnrolmentRequest>(&extra).is_err());
}

proptest! {
    #[test]
    fn codes_round_trip(bytes in any::<[u8; 10]>()) {
        let code = make_enrolment_code(bytes);
        let shown = code.to_string();
        prop_assert_eq!(shown.len(), 19);
        prop_assert_eq!(EnrolmentCode::parse(&shown).unwrap(), code.clone());
        prop_assert_eq!(EnrolmentCode::parse(&shown.to_lowercase()).unwrap(), code);
    }

    #[test]
    fn parse_never_panics(a in ".{0,80}", b in ".{0,40}", c in ".{0,120}") {
        let _ = RequestAuth::parse(Some(&a), Some(&b), Some(&c));
        let _ = EnrolmentCode::parse(&a);
    }

    #[test]
    fn a_signature_verifies_only_for_its_own_request(body in proptest::collection::vec(any::<u8>(), 0..64), flip in 0usize..64) {
        let key = install_key(&test_key());
        let auth = headers(&test_key(), "POST", PATH, TS, &body);
        prop_assert_eq!(auth.verify(&key, "POST", PATH, &body, at(TS)), Ok(()));
        let mut other = body.clone();
        if other.is_empty() { other.push(0) } else { let i = flip % other.len(); other[i] ^= 1; }
        prop_assert_eq!(auth.verify(&key, "POST", PATH, &other, at(TS)), Err(AuthError::BadSignature));
    }
}

/// The signer's wallet-origin rule: only a listed origin, byte for byte but for ASCII case.
#[test]
fn only_a_listed_wallet_origin_is_allowed() {
    use tacit_protocol::request_auth::origin_allowed;
    use wallet_core::Origin;
    let allowed = [
        Origin::parse("http://localhost:8080").unwrap(),
        Origin::parse("https://wallet.example").unwrap(),
    ];
    for ok in [
        "http://localhost:8080",
        "HTTP://LOCALHOST:8080",
        "https://wallet.example",
        "https://Wallet.Example",
    ] {
        assert!(origin_allowed(&allowed, ok.as_bytes()), "{ok} refused");
    }
    for refused in [
        "null",
        "",
        "http://localhost:8081",
        "http://localhost",
        "http://localhost:8080/",
        "http://localhost:8080 ",
        "https://localhost:8080",
        "http://wallet.example",
        "https://wallet.example.evil",
        "https://evil.wallet.example",
        "https://wallet.example\u{0}",
    ] {
        assert!(
            !origin_allowed(&allowed, refused.as_bytes()),
            "{refused:?} allowed"
        );
    }
    assert!(
        !origin_allowed(&[], b"http://localhost:8080"),
        "an empty list allows nothing"
    );
}

#[test]
fn enrolment_codes_are_valid_for_one_second_to_thirty_days() {
    use std::time::Duration;
    let day = 86_400;
    use CodeValidityError::*;
    let ok = |secs: u64| Ok(Duration::from_secs(secs));
    let cases = [
        ("1s", ok(1)),
        ("90s", ok(90)),
        ("30m", ok(1_800)),
        ("24h", ok(day)),
        ("7d", ok(7 * day)),
        (" 30d ", ok(30 * day)),
        ("720h", ok(30 * day)),
        ("2592000s", ok(30 * day)),
        ("", Err(NoUnit)),
        ("24", Err(NoUnit)),
        ("h", Err(NotANumber)),
        ("-1h", Err(NotANumber)),
        ("1.5h", Err(BadUnit)),
        ("24 h", Err(BadUnit)),
        ("24x", Err(BadUnit)),
        ("1w", Err(BadUnit)),
        ("0s", Err(OutOfRange)),
        ("31d", Err(OutOfRange)),
        ("721h", Err(OutOfRange)),
        ("2592001s", Err(OutOfRange)),
        ("365d", Err(OutOfRange)),
        // Saturating, not wrapping into a short validity.
        ("99999999999999999999d", Err(NotANumber)),
        ("18446744073709551615d", Err(OutOfRange)),
    ];
    for (text, answer) in cases {
        assert_eq!(parse_code_validity(text), answer, "{text:?}");
    }
    assert_eq!(MAX_CODE_VALIDITY, Duration::from_secs(30 * day));
    let now = at(TS);
    assert_eq!(
        code_expiry(now, Duration::from_secs(60)),
        Ok(at(TS + 60_000))
    );
    assert_eq!(
        code_expiry(now, MAX_CODE_VALIDITY),
        Ok(at(TS + 30 * day as i64 * 1000))
    );
    assert_eq!(
        code_expiry(now, Duration::from_millis(999)),
        Err(CodeValidityError::OutOfRange)
    );
    assert_eq!(
        code_expiry(now, MAX_CODE_VALIDITY + Duration::from_millis(1)),
        Err(CodeValidityError::OutOfRange)
    );
    assert_eq!(
        code_expiry(now, Duration::MAX),
        Err(CodeValidityError::OutOfRange)
    );
}
