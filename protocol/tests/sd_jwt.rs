//! SD-JWT VC: round trips, a frozen vector, the RFC 9901 disclosure digest, every refusal of
//! `verify_presentation` (altered/extra/duplicate disclosure, wrong aud/nonce, missing/stale/
//! future KB, bad sd_hash, unknown kid/issuer, expired, tampered payload, wrong holder key),
//! strict parsing, JWKS and issuer metadata, and a property: a presentation carries exactly the
//! disclosures it was asked for.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::SigningKey;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tacit_protocol::sd_jwt::*;
use wallet_core::Timestamp;

mod sd_jwt_fixtures;
use sd_jwt_fixtures::*;

const KID: &str = "k1";

fn issuer_key() -> SigningKey {
    key("tacit/sd-jwt-test/issuer")
}
fn holder_key() -> SigningKey {
    key("tacit/sd-jwt-test/holder")
}
fn jwks() -> Jwks {
    jwks_with(KID, &issuer_key())
}
fn trusted() -> Vec<TrustedIssuer> {
    vec![TrustedIssuer {
        iss: ISS.into(),
        jwks: jwks(),
    }]
}

fn claims() -> IssuedClaims {
    income_claims(&holder_key())
}

fn disclosable() -> Vec<(String, Value)> {
    vec![
        ("income_below_25000".into(), json!(false)),
        ("income_below_30000".into(), json!(true)),
        ("income_below_35000".into(), json!(true)),
    ]
}

fn salts(n: usize) -> Vec<[u8; 16]> {
    (0..n).map(|i| [i as u8 + 1; 16]).collect()
}

fn credential_text() -> String {
    issue(
        &issuer_key(),
        KID,
        &claims(),
        &disclosable(),
        &salts(disclosable().len()),
    )
    .unwrap()
}

fn presentation(keep: &[&str]) -> String {
    let c = Credential::parse(&credential_text()).unwrap();
    present(&c, keep, &holder_key(), AUD, NONCE, now()).unwrap()
}

fn verify(text: &str) -> Result<VerifiedPresentation, SdJwtError> {
    verify_presentation(text, &trusted(), AUD, NONCE, now(), DEFAULT_MAX_KB_AGE_MS)
}

fn b64(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn unb64_json(part: &str) -> Value {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

/// Re-signs an issuer JWT with `payload` (and the same header) by `signer`.
fn resign_issuer_jwt(header: &Value, payload: &Value, signer: &SigningKey) -> String {
    use p256::ecdsa::Signature;
    use p256::ecdsa::signature::Signer;
    let input = format!(
        "{}.{}",
        b64(serde_json::to_vec(header).unwrap()),
        b64(serde_json::to_vec(payload).unwrap())
    );
    let sig: Signature = signer.sign(input.as_bytes());
    format!("{input}.{}", b64(sig.to_bytes()))
}

/// Builds a KB-JWT-terminated presentation from an arbitrary `without_kb` prefix.
fn with_kb(without_kb: &str, aud: &str, nonce: &str, iat: Timestamp, k: &SigningKey) -> String {
    use p256::ecdsa::Signature;
    use p256::ecdsa::signature::Signer;
    let input = kb_jwt_signing_input(aud, nonce, iat, without_kb);
    let sig: Signature = k.sign(input.as_bytes());
    finish_presentation(without_kb, &input, &sig.to_bytes().into())
}

// --- round trips --------------------------------------------------------------------------

#[test]
fn issue_parse_round_trip() {
    let text = credential_text();
    assert!(text.ends_with('~'));
    assert_eq!(text.matches('~').count(), 4);
    let c = Credential::parse(&text).unwrap();
    assert_eq!(c.iss(), ISS);
    assert_eq!(c.vct(), VCT);
    assert_eq!(c.kid(), KID);
    assert_eq!(c.iat(), Timestamp::from_millis(IAT_MS));
    assert_eq!(c.exp(), Timestamp::from_millis(IAT_MS + 30 * DAY_MS));
    assert_eq!(c.holder_jwk(), &jwk_of(&holder_key()));
    assert_eq!(c.holder_key(), holder_key().verifying_key());
    assert_eq!(c.plain().get("currency"), Some(&json!("EUR")));
    let names: Vec<_> = c.disclosures().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "income_below_25000",
            "income_below_30000",
            "income_below_35000"
        ]
    );
    assert_eq!(
        c.disclosure("income_below_30000").unwrap().value,
        json!(true)
    );
    c.verify_issuer(&jwks(), now()).unwrap();

    // Header and payload as the format requires; _sd sorted; no value in clear.
    let jwt = c.issuer_jwt();
    let mut parts = jwt.split('.');
    let header = unb64_json(parts.next().unwrap());
    assert_eq!(header, json!({"alg":"ES256","typ":"dc+sd-jwt","kid":KID}));
    let payload = unb64_json(parts.next().unwrap());
    assert_eq!(payload["_sd_alg"], "sha-256");
    assert_eq!(payload["iat"], IAT_MS / 1000);
    assert_eq!(payload["cnf"]["jwk"]["crv"], "P-256");
    let sd: Vec<&str> = payload["_sd"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut sorted = sd.clone();
    sorted.sort_unstable();
    assert_eq!(sd, sorted);
    assert_eq!(sd.len(), 3);
    assert!(!jwt.contains("income_below"));
    assert!(payload.get("income_below_30000").is_none());
}

#[test]
fn presentation_round_trip_discloses_exactly_what_was_kept() {
    let p = presentation(&["income_below_30000"]);
    assert_eq!(p.matches('~').count(), 2);
    let v = verify(&p).unwrap();
    assert_eq!(v.iss, ISS);
    assert_eq!(v.vct, VCT);
    assert_eq!(v.exp, Timestamp::from_millis(IAT_MS + 30 * DAY_MS));
    let mut expected = Map::new();
    expected.insert("income_below_30000".into(), json!(true));
    assert_eq!(v.disclosed, expected);
    assert_eq!(v.plain.get("currency"), Some(&json!("EUR")));

    // None kept: still a valid presentation that discloses nothing.
    let v = verify(&presentation(&[])).unwrap();
    assert!(v.disclosed.is_empty());
}

#[test]
fn split_presentation_matches_native_one() {
    // The WebCrypto path: the three steps with the signature computed outside.
    use p256::ecdsa::Signature;
    use p256::ecdsa::signature::Signer;
    let c = Credential::parse(&credential_text()).unwrap();
    let without = presentation_without_kb(&c, &["income_below_35000"]).unwrap();
    assert!(without.ends_with('~'));
    let input = kb_jwt_signing_input(AUD, NONCE, now(), &without);
    let mut parts = input.split('.');
    assert_eq!(
        unb64_json(parts.next().unwrap()),
        json!({"alg":"ES256","typ":"kb+jwt"})
    );
    assert_eq!(
        unb64_json(parts.next().unwrap()),
        json!({"aud":AUD,"nonce":NONCE,"iat":now().millis()/1000,"sd_hash":b64(Sha256::digest(without.as_bytes()))})
    );
    let sig: Signature = holder_key().sign(input.as_bytes());
    let p = finish_presentation(&without, &input, &sig.to_bytes().into());
    assert_eq!(
        p,
        present(
            &c,
            &["income_below_35000"],
            &holder_key(),
            AUD,
            NONCE,
            now()
        )
        .unwrap()
    );
    verify(&p).unwrap();
    // A high-S signature (as WebCrypto may produce) is accepted too.
    let high = sig.normalize_s();
    let (r, s) = high.split_scalars();
    let neg = Signature::from_scalars(r, -*s).unwrap();
    let p = finish_presentation(&without, &input, &neg.to_bytes().into());
    verify(&p).unwrap();
}

#[test]
fn not_disclosable_names_are_refused_when_presenting() {
    let c = Credential::parse(&credential_text()).unwrap();
    assert_eq!(
        presentation_without_kb(&c, &["income_below_40000"]),
        Err(SdJwtError::NotDisclosable)
    );
    assert_eq!(
        presentation_without_kb(&c, &["currency"]),
        Err(SdJwtError::NotDisclosable)
    );
}

// --- frozen vector ------------------------------------------------------------------------

/// The issuer-signed JWT both frozen texts begin with, all but its last character.
macro_rules! frozen_issuer_jwt {
    () => {
        concat!(
            "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiZGMrc2Qtand0In0.eyJfc2QiOlsiQnhRR1l1NkhTMWVXVG",
            "NZYnBFVW9PNzA3Zkx3dVoyMlZqSnlzWmF0SXdSNCIsIk9hQ21qaVNJZ2VuZlJZSHAwTDFRdkRwd0FqdVlYMmxWQU44",
            "VkRLejVlemciLCJSVmQ3YWVEQnIwMkcyb1NpYzVXUG9kNjNKSUlMaDluZVZha1NrdnJUOUVnIl0sIl9zZF9hbGciOi",
            "JzaGEtMjU2IiwiY25mIjp7Imp3ayI6eyJjcnYiOiJQLTI1NiIsImt0eSI6IkVDIiwieCI6InA2N0RNYURreFpqdVhT",
            "YTlYZGlYR3hiMmdYeWNWWDZwdFVHWlBkZFBmWUUiLCJ5IjoidUpxWU1rWE9CdXJBc0JLOXZOeGx6aXV2RndFTkZMdG",
            "9FVldlay1NZ1FxZyJ9fSwiY3VycmVuY3kiOiJFVVIiLCJleHAiOjE3ODAyMTk4MDAsImlhdCI6MTc3NzYyNzgwMCwi",
            "aXNzIjoiaHR0cDovLzEyNy4wLjAuMTo4MDkxIiwidmN0IjoiaHR0cHM6Ly90YWNpdC5leGFtcGxlL3ZjdC9pbmNvbW",
            "UifQ.fy4WmsXimDdhl78yo90zy8K87tPeh2SaOMBJDTf8sWReFENVYsFNhQ1psTmQ1O9ewVGdiWroWWB-UVXExBkoC",
        )
    };
}

/// Fixed keys, salts and times; ES256 signing is RFC 6979 deterministic, so the bytes are fixed.
/// A change here is a wire-format change.
const FROZEN_CREDENTIAL: &str = concat!(
    frozen_issuer_jwt!(),
    "g~WyJBUUVCQVFFQkFRRUJBUUVCQVFFQkFRIiwiaW5jb21lX2JlbG93XzI1MDAwIixmYWxzZV0~WyJBZ0lDQWdJQ0Fn",
    "SUNBZ0lDQWdJQ0FnIiwiaW5jb21lX2JlbG93XzMwMDAwIix0cnVlXQ~WyJBd01EQXdNREF3TURBd01EQXdNREF3Iiw",
    "iaW5jb21lX2JlbG93XzM1MDAwIix0cnVlXQ~",
);
/// `present(FROZEN_CREDENTIAL, ["income_below_30000"], holder, AUD, NONCE, now())`.
const FROZEN_PRESENTATION: &str = concat!(
    frozen_issuer_jwt!(),
    "g~WyJBZ0lDQWdJQ0FnSUNBZ0lDQWdJQ0FnIiwiaW5jb21lX2JlbG93XzMwMDAwIix0cnVlXQ~eyJhbGciOiJFUzI1N",
    "iIsInR5cCI6ImtiK2p3dCJ9.eyJhdWQiOiJodHRwOi8vMTI3LjAuMC4xOjgwODEiLCJpYXQiOjE3Nzc3MTQyMDAsIm",
    "5vbmNlIjoiMDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWYiLCJzZF9oYXNoIjoiaHZIMWpDWGl3MTJ6RVF5",
    "aWdKRElMMGVzOElONzVxWW9rNVBYNmc4UllEbyJ9.sY5i6ih2F_spXiNtzVarXpdEVISaokc-dI0prQ-GDyrbnNTH_",
    "fGq8EmPRsYYexF5omCLyX-hR869OaM7cBwXqQ",
);

#[test]
fn frozen_vector() {
    let text = credential_text();
    let p = present(
        &Credential::parse(&text).unwrap(),
        &["income_below_30000"],
        &holder_key(),
        AUD,
        NONCE,
        now(),
    )
    .unwrap();
    println!("{text}\n{p}");
    assert_eq!(text, FROZEN_CREDENTIAL);
    assert_eq!(p, FROZEN_PRESENTATION);
    let v = verify(FROZEN_PRESENTATION).unwrap();
    assert_eq!(v.disclosed.get("income_below_30000"), Some(&json!(true)));
}

#[test]
fn rfc_9901_disclosure_digest() {
    // RFC 9901 §5.2.1 / appendix example: the disclosure of family_name "Möbius".
    let encoded = "WyJfMjZiYzRMVC1hYzZxMktJNmNCVzVlcyIsICJmYW1pbHlfbmFtZSIsICJNw7ZiaXVzIl0";
    let d = Disclosure::decode(encoded).unwrap();
    assert_eq!(d.salt, "_26bc4LT-ac6q2KI6cBW5es");
    assert_eq!(d.name, "family_name");
    assert_eq!(d.value, json!("Möbius"));
    assert_eq!(
        Disclosure::digest_of(encoded),
        "X9yH0Ajrdm1Oij4tWso9UzzKJvPoDxwmuEcO3XAdRC0"
    );
    // Our own encoding is compact JSON; its digest is over what we wrote.
    let ours = Disclosure::new(&[7; 16], "age_equal_or_over_18", json!(true));
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(ours.encode()).unwrap()).unwrap();
    assert_eq!(
        text,
        format!(r#"["{}","age_equal_or_over_18",true]"#, b64([7u8; 16]))
    );
    assert_eq!(ours.digest(), b64(Sha256::digest(ours.encode().as_bytes())));
    assert_eq!(Disclosure::decode(&ours.encode()).unwrap(), ours);
}

// --- every refusal ------------------------------------------------------------------------

fn split(p: &str) -> (Vec<String>, String) {
    let mut segs: Vec<String> = p.split('~').map(str::to_owned).collect();
    let kb = segs.pop().unwrap();
    (segs, kb)
}

#[test]
fn altered_disclosure_is_refused() {
    let p = presentation(&["income_below_30000"]);
    let (mut segs, kb) = split(&p);
    let d = Disclosure::decode(&segs[1]).unwrap();
    let altered = Disclosure {
        value: json!(false),
        ..d
    };
    segs[1] = altered.encode();
    let forged = format!("{}~{kb}", segs.join("~"));
    assert_eq!(verify(&forged), Err(SdJwtError::UnknownDisclosure));
    // Even re-signed by the holder over the altered text, the digest is not in _sd.
    let without = format!("{}~", segs.join("~"));
    let forged = with_kb(&without, AUD, NONCE, now(), &holder_key());
    assert_eq!(verify(&forged), Err(SdJwtError::UnknownDisclosure));
}

#[test]
fn extra_disclosure_is_refused() {
    // Another disclosure of the same credential added after the holder signed: sd_hash.
    let full = credential_text();
    let (segs_full, _) = split(&full);
    let p = presentation(&["income_below_30000"]);
    let (segs, kb) = split(&p);
    // segs = [issuer-jwt, d(income_below_30000)]; segs_full[3] = d(income_below_35000).
    let forged = format!("{}~{}~{}~{kb}", segs[0], segs[1], segs_full[3]);
    assert_eq!(verify(&forged), Err(SdJwtError::BadSdHash));
    // The kept disclosure repeated after signing.
    let forged = format!("{}~{}~{}~{kb}", segs[0], segs[1], segs[1]);
    assert_eq!(verify(&forged), Err(SdJwtError::DuplicateDisclosure));

    // A disclosure from another credential (same name, other salt): not in _sd.
    let other = Disclosure::new(&[99; 16], "income_below_25000", json!(true)).encode();
    let without = format!("{}~{}~", segs[0], other);
    let forged = with_kb(&without, AUD, NONCE, now(), &holder_key());
    assert_eq!(verify(&forged), Err(SdJwtError::UnknownDisclosure));
}

#[test]
fn duplicate_disclosure_is_refused() {
    let c = Credential::parse(&credential_text()).unwrap();
    let once = presentation_without_kb(&c, &["income_below_30000"]).unwrap();
    let d = once.split('~').nth(1).unwrap();
    let twice = format!("{once}{d}~");
    let forged = with_kb(&twice, AUD, NONCE, now(), &holder_key());
    assert_eq!(verify(&forged), Err(SdJwtError::DuplicateDisclosure));
    // The same through Credential::parse.
    assert_eq!(
        Credential::parse(&twice),
        Err(SdJwtError::DuplicateDisclosure)
    );
}

#[test]
fn wrong_audience_and_nonce_are_refused() {
    let p = presentation(&["income_below_30000"]);
    assert_eq!(
        verify_presentation(
            &p,
            &trusted(),
            "http://127.0.0.1:8082",
            NONCE,
            now(),
            DEFAULT_MAX_KB_AGE_MS
        ),
        Err(SdJwtError::WrongAudience)
    );
    assert_eq!(
        verify_presentation(
            &p,
            &trusted(),
            AUD,
            "ffffffffffffffffffffffffffffffff",
            now(),
            DEFAULT_MAX_KB_AGE_MS
        ),
        Err(SdJwtError::WrongNonce)
    );
}

#[test]
fn missing_key_binding_is_refused() {
    let c = Credential::parse(&credential_text()).unwrap();
    let without = presentation_without_kb(&c, &["income_below_30000"]).unwrap();
    assert_eq!(verify(&without), Err(SdJwtError::MissingKeyBinding));
    // The full credential as issued is not a presentation either.
    assert_eq!(
        verify(&credential_text()),
        Err(SdJwtError::MissingKeyBinding)
    );
    // And a credential parser refuses a presentation.
    let p = presentation(&[]);
    assert_eq!(Credential::parse(&p), Err(SdJwtError::UnexpectedKeyBinding));
}

#[test]
fn stale_and_future_key_binding_are_refused() {
    let c = Credential::parse(&credential_text()).unwrap();
    let at = |iat_ms: i64| {
        present(
            &c,
            &["income_below_30000"],
            &holder_key(),
            AUD,
            NONCE,
            Timestamp::from_millis(iat_ms),
        )
        .unwrap()
    };
    let n = now().millis();
    verify(&at(n - DEFAULT_MAX_KB_AGE_MS)).unwrap();
    assert_eq!(
        verify(&at(n - DEFAULT_MAX_KB_AGE_MS - 1000)),
        Err(SdJwtError::StaleKeyBinding)
    );
    verify(&at(n + MAX_FUTURE_SKEW_MS)).unwrap();
    assert_eq!(
        verify(&at(n + MAX_FUTURE_SKEW_MS + 1000)),
        Err(SdJwtError::KeyBindingInFuture)
    );
    // A caller-chosen shorter window.
    assert_eq!(
        verify_presentation(&at(n - 10_000), &trusted(), AUD, NONCE, now(), 5_000),
        Err(SdJwtError::StaleKeyBinding)
    );
}

#[test]
fn bad_sd_hash_is_refused() {
    // The KB-JWT of one presentation moved onto another (fewer disclosures).
    let p = presentation(&["income_below_30000"]);
    let (segs, kb) = split(&p);
    let forged = format!("{}~{kb}", segs[0]);
    assert_eq!(verify(&forged), Err(SdJwtError::BadSdHash));
    // A KB-JWT signed over another presentation text.
    let c = Credential::parse(&credential_text()).unwrap();
    let without = presentation_without_kb(&c, &["income_below_30000"]).unwrap();
    let other = presentation_without_kb(&c, &["income_below_35000"]).unwrap();
    let input = kb_jwt_signing_input(AUD, NONCE, now(), &other);
    use p256::ecdsa::Signature;
    use p256::ecdsa::signature::Signer;
    let sig: Signature = holder_key().sign(input.as_bytes());
    let forged = finish_presentation(&without, &input, &sig.to_bytes().into());
    assert_eq!(verify(&forged), Err(SdJwtError::BadSdHash));
}

#[test]
fn key_binding_by_another_key_is_refused() {
    let c = Credential::parse(&credential_text()).unwrap();
    let p = present(
        &c,
        &["income_below_30000"],
        &key("someone else"),
        AUD,
        NONCE,
        now(),
    )
    .unwrap();
    assert_eq!(verify(&p), Err(SdJwtError::BadKeyBindingSignature));
    // A KB-JWT whose signature was altered.
    let p = presentation(&["income_below_30000"]);
    let mut bytes = p.into_bytes();
    let last = bytes.len() - 2;
    bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
    let p = String::from_utf8(bytes).unwrap();
    assert!(matches!(
        verify(&p),
        Err(SdJwtError::BadKeyBindingSignature | SdJwtError::MalformedKeyBinding)
    ));
}

#[test]
fn malformed_key_binding_is_refused() {
    let c = Credential::parse(&credential_text()).unwrap();
    let without = presentation_without_kb(&c, &["income_below_30000"]).unwrap();
    let sd = b64(Sha256::digest(without.as_bytes()));
    let sign = |header: Value, payload: Value| resign_issuer_jwt(&header, &payload, &holder_key());
    let good_payload = json!({"aud":AUD,"nonce":NONCE,"iat":now().millis()/1000,"sd_hash":sd});
    for (header, payload) in [
        (json!({"alg":"ES256","typ":"JWT"}), good_payload.clone()),
        (json!({"alg":"ES256"}), good_payload.clone()),
        (json!({"alg":"none","typ":"kb+jwt"}), good_payload.clone()),
        (
            json!({"alg":"ES256","typ":"kb+jwt","jwk":{}}),
            good_payload.clone(),
        ),
        (
            json!({"alg":"ES256","typ":"kb+jwt"}),
            json!({"aud":AUD,"nonce":NONCE,"sd_hash":sd}),
        ),
        (
            json!({"alg":"ES256","typ":"kb+jwt"}),
            json!({"aud":[AUD],"nonce":NONCE,"iat":1,"sd_hash":sd}),
        ),
        (
            json!({"alg":"ES256","typ":"kb+jwt"}),
            json!({"aud":AUD,"nonce":NONCE,"iat":"1","sd_hash":sd}),
        ),
        (
            json!({"alg":"ES256","typ":"kb+jwt"}),
            json!({"aud":AUD,"nonce":NONCE,"iat":1,"sd_hash":sd,"extra":1}),
        ),
    ] {
        let p = format!("{without}{}", sign(header, payload));
        assert_eq!(verify(&p), Err(SdJwtError::MalformedKeyBinding));
    }
    // The good shape signed the same way verifies (so the cases above fail for their fault).
    let p = format!(
        "{without}{}",
        sign(json!({"alg":"ES256","typ":"kb+jwt"}), good_payload)
    );
    verify(&p).unwrap();
    for junk in ["x", "a.b", "a.b.c.d", "e30.e30.", "e30.e30.AAAA"] {
        assert_eq!(
            verify(&format!("{without}{junk}")),
            Err(SdJwtError::MalformedKeyBinding)
        );
    }
}

#[test]
fn unknown_kid_and_unknown_issuer_are_refused() {
    let p = presentation(&["income_below_30000"]);
    let other_kid = vec![TrustedIssuer {
        iss: ISS.into(),
        jwks: Jwks::new(vec![IssuerKey {
            kid: "k2".into(),
            key: *issuer_key().verifying_key(),
        }])
        .unwrap(),
    }];
    assert_eq!(
        verify_presentation(&p, &other_kid, AUD, NONCE, now(), DEFAULT_MAX_KB_AGE_MS),
        Err(SdJwtError::UnknownKey)
    );
    let other_iss = vec![TrustedIssuer {
        iss: "http://127.0.0.1:8092".into(),
        jwks: jwks(),
    }];
    assert_eq!(
        verify_presentation(&p, &other_iss, AUD, NONCE, now(), DEFAULT_MAX_KB_AGE_MS),
        Err(SdJwtError::UnknownIssuer)
    );
    assert_eq!(
        verify_presentation(&p, &[], AUD, NONCE, now(), DEFAULT_MAX_KB_AGE_MS),
        Err(SdJwtError::UnknownIssuer)
    );
    // The right kid with another key behind it: the signature does not verify.
    let wrong_key = vec![TrustedIssuer {
        iss: ISS.into(),
        jwks: Jwks::new(vec![IssuerKey {
            kid: KID.into(),
            key: *key("impostor").verifying_key(),
        }])
        .unwrap(),
    }];
    assert_eq!(
        verify_presentation(&p, &wrong_key, AUD, NONCE, now(), DEFAULT_MAX_KB_AGE_MS),
        Err(SdJwtError::BadIssuerSignature)
    );
}

#[test]
fn expired_and_future_credentials_are_refused() {
    let p = presentation(&["income_below_30000"]);
    let exp = IAT_MS + 30 * DAY_MS;
    let at = |t: i64| {
        let c = Credential::parse(&credential_text()).unwrap();
        let p = present(
            &c,
            &[],
            &holder_key(),
            AUD,
            NONCE,
            Timestamp::from_millis(t),
        )
        .unwrap();
        verify_presentation(
            &p,
            &trusted(),
            AUD,
            NONCE,
            Timestamp::from_millis(t),
            DEFAULT_MAX_KB_AGE_MS,
        )
    };
    at(exp - 1).unwrap();
    assert_eq!(at(exp), Err(SdJwtError::Expired));
    assert_eq!(at(exp + DAY_MS), Err(SdJwtError::Expired));
    at(IAT_MS - MAX_FUTURE_SKEW_MS).unwrap();
    assert_eq!(
        at(IAT_MS - MAX_FUTURE_SKEW_MS - 1),
        Err(SdJwtError::IssuedInFuture)
    );
    let c = Credential::parse(&credential_text()).unwrap();
    assert_eq!(
        c.verify_issuer(&jwks(), Timestamp::from_millis(exp)),
        Err(SdJwtError::Expired)
    );
    verify(&p).unwrap();
}

#[test]
fn tampered_payload_is_refused() {
    let p = presentation(&["income_below_30000"]);
    let (segs, kb) = split(&p);
    let mut jwt = segs[0].split('.').map(str::to_owned).collect::<Vec<_>>();
    let mut payload = unb64_json(&jwt[1]);
    payload["exp"] = json!(payload["exp"].as_i64().unwrap() + 365 * 86_400);
    jwt[1] = b64(serde_json::to_vec(&payload).unwrap());
    let without = format!("{}~{}~", jwt.join("."), segs[1]);
    // Holder re-binds over the tampered text; the issuer signature still fails.
    let forged = with_kb(&without, AUD, NONCE, now(), &holder_key());
    assert_eq!(verify(&forged), Err(SdJwtError::BadIssuerSignature));
    let forged = format!("{without}{kb}");
    assert_eq!(verify(&forged), Err(SdJwtError::BadIssuerSignature));

    // Swapping in another holder key (to present someone else's credential) is tampering too.
    let mut payload = unb64_json(segs[0].split('.').nth(1).unwrap());
    let thief = key("thief");
    payload["cnf"]["jwk"] = serde_json::to_value(jwk_of(&thief)).unwrap();
    let mut jwt = segs[0].split('.').map(str::to_owned).collect::<Vec<_>>();
    jwt[1] = b64(serde_json::to_vec(&payload).unwrap());
    let without = format!("{}~{}~", jwt.join("."), segs[1]);
    let forged = with_kb(&without, AUD, NONCE, now(), &thief);
    assert_eq!(verify(&forged), Err(SdJwtError::BadIssuerSignature));
}

#[test]
fn issuer_header_and_payload_rules() {
    let text = credential_text();
    let (segs, _) = split(&text);
    let jwt: Vec<&str> = segs[0].split('.').collect();
    let header = unb64_json(jwt[0]);
    let payload = unb64_json(jwt[1]);
    let ik = issuer_key();
    let rest = segs[1..].join("~");
    let build = |h: &Value, p: &Value| format!("{}~{rest}~", resign_issuer_jwt(h, p, &ik));
    // Baseline: re-signing the same header and payload parses.
    Credential::parse(&build(&header, &payload)).unwrap();

    // Each edit of the header or the payload, re-signed by the issuer, and its refusal.
    let header_edits: [Refused; 4] = [
        (|h| h["typ"] = json!("vc+sd-jwt"), SdJwtError::BadHeader),
        (|h| h["alg"] = json!("ES384"), SdJwtError::BadHeader),
        (
            |h| h["jku"] = json!("https://evil.example/jwks"),
            SdJwtError::BadHeader,
        ),
        (|h| remove_member(h, "kid"), SdJwtError::BadHeader),
    ];
    for (edit, expected) in header_edits {
        let mut h = header.clone();
        edit(&mut h);
        assert_eq!(
            Credential::parse(&build(&h, &payload)),
            Err(expected),
            "{h}"
        );
    }
    let payload_edits: [Refused; 11] = [
        (
            |p| p["_sd_alg"] = json!("sha-512"),
            SdJwtError::UnsupportedSdAlg,
        ),
        (
            |p| remove_member(p, "_sd_alg"),
            SdJwtError::UnsupportedSdAlg,
        ),
        (
            |p| p["cnf"]["jwk"]["x"] = json!("AAAA"),
            SdJwtError::BadHolderKey,
        ),
        (|p| remove_member(p, "cnf"), SdJwtError::BadHolderKey),
        (|p| remove_member(p, "iss"), SdJwtError::Malformed),
        (|p| remove_member(p, "vct"), SdJwtError::Malformed),
        (|p| remove_member(p, "iat"), SdJwtError::Malformed),
        (|p| remove_member(p, "exp"), SdJwtError::Malformed),
        // A plain claim with the name of a disclosure.
        (
            |p| p["income_below_30000"] = json!(false),
            SdJwtError::ReservedName,
        ),
        // Nested selective disclosure is not supported: refused, not half-read.
        (
            |p| p["address"] = json!({"_sd": ["X9yH0Ajrdm1Oij4tWso9UzzKJvPoDxwmuEcO3XAdRC0"]}),
            SdJwtError::Malformed,
        ),
        // _sd with a repeated digest.
        (
            |p| {
                let first = p["_sd"][0].clone();
                p["_sd"].as_array_mut().unwrap().push(first);
            },
            SdJwtError::Malformed,
        ),
    ];
    for (edit, expected) in payload_edits {
        let mut p = payload.clone();
        edit(&mut p);
        assert_eq!(Credential::parse(&build(&header, &p)), Err(expected), "{p}");
    }
}

/// An edit of an issuer JWT's header or payload, and the refusal it must meet.
type Refused = (fn(&mut Value), SdJwtError);

fn remove_member(object: &mut Value, name: &str) {
    object.as_object_mut().unwrap().remove(name);
}

#[test]
fn duplicate_json_members_are_refused() {
    let text = credential_text();
    let (segs, _) = split(&text);
    let jwt: Vec<&str> = segs[0].split('.').collect();
    let payload = String::from_utf8(URL_SAFE_NO_PAD.decode(jwt[1]).unwrap()).unwrap();
    // A second "iss" appended: one parser would read the first, another the last.
    let dup = format!(
        r#"{},"iss":"http://evil.example"}}"#,
        payload.strip_suffix('}').unwrap()
    );
    use p256::ecdsa::Signature;
    use p256::ecdsa::signature::Signer;
    let input = format!("{}.{}", jwt[0], b64(dup.as_bytes()));
    let sig: Signature = issuer_key().sign(input.as_bytes());
    let forged = format!("{input}.{}~{}~", b64(sig.to_bytes()), segs[1..].join("~"));
    assert_eq!(Credential::parse(&forged), Err(SdJwtError::Malformed));
    // And in a disclosure.
    let d = b64(br#"["c2FsdHNhbHRzYWx0","a",true,"a"]"#);
    assert_eq!(Disclosure::decode(&d), Err(SdJwtError::MalformedDisclosure));
    let d = b64(br#"["c2FsdHNhbHRzYWx0","a",{"x":1,"x":2}]"#);
    assert_eq!(Disclosure::decode(&d), Err(SdJwtError::MalformedDisclosure));
}

#[test]
fn malformed_disclosures_are_refused() {
    for raw in [
        &br#"["salt","name"]"#[..],
        br#"["salt",1,true]"#,
        br#"[1,"name",true]"#,
        br#"{"salt":"s"}"#,
        br#"["","name",true]"#,
        br#"["salt","",true]"#,
        br#"["salt","name",{"_sd":[]}]"#,
        br#"["salt","name",[{"...":"x"}]]"#,
        b"not json",
    ] {
        assert_eq!(
            Disclosure::decode(&b64(raw)),
            Err(SdJwtError::MalformedDisclosure),
            "{}",
            String::from_utf8_lossy(raw)
        );
    }
    for name in ["_sd", "iss", "cnf", "exp", "vct", "..."] {
        let d = b64(format!(r#"["salt","{name}",true]"#));
        assert_eq!(Disclosure::decode(&d), Err(SdJwtError::ReservedName));
    }
    assert_eq!(
        Disclosure::decode("!!!"),
        Err(SdJwtError::MalformedDisclosure)
    );
    assert_eq!(
        Disclosure::decode(&"A".repeat(MAX_DISCLOSURE_LEN + 1)),
        Err(SdJwtError::MalformedDisclosure)
    );
}

#[test]
fn malformed_and_oversized_texts_are_refused() {
    for text in ["", "~", "abc", "a.b.c~", "~~", "e30.e30.e30~"] {
        assert!(Credential::parse(text).is_err(), "{text:?}");
        assert!(verify(text).is_err(), "{text:?}");
    }
    let text = credential_text();
    let (segs, _) = split(&text);
    // An empty disclosure segment in the middle.
    let gap = format!("{}~~{}~", segs[0], segs[1]);
    assert_eq!(
        Credential::parse(&gap),
        Err(SdJwtError::MalformedDisclosure)
    );
    let big = format!("{text}{}", "A".repeat(MAX_SD_JWT_LEN));
    assert_eq!(Credential::parse(&big), Err(SdJwtError::TooLarge));
    assert_eq!(verify(&big), Err(SdJwtError::TooLarge));
}

#[test]
fn issuance_refuses_what_it_cannot_state() {
    let ik = issuer_key();
    let d = disclosable();
    assert_eq!(
        issue(&ik, KID, &claims(), &d, &salts(2)),
        Err(SdJwtError::BadIssuance)
    );
    assert_eq!(
        issue(&ik, KID, &claims(), &d, &[[1; 16]; 3]),
        Err(SdJwtError::BadIssuance)
    );
    assert_eq!(
        issue(&ik, "", &claims(), &d, &salts(3)),
        Err(SdJwtError::BadIssuance)
    );
    let mut dup = d.clone();
    dup.push(d[0].clone());
    assert_eq!(
        issue(&ik, KID, &claims(), &dup, &salts(4)),
        Err(SdJwtError::BadIssuance)
    );
    let reserved = vec![("exp".to_owned(), json!(1))];
    assert_eq!(
        issue(&ik, KID, &claims(), &reserved, &salts(1)),
        Err(SdJwtError::BadIssuance)
    );
    let clash = vec![("currency".to_owned(), json!("USD"))];
    assert_eq!(
        issue(&ik, KID, &claims(), &clash, &salts(1)),
        Err(SdJwtError::BadIssuance)
    );
    let mut c = claims();
    c.exp = c.iat;
    assert_eq!(
        issue(&ik, KID, &c, &d, &salts(3)),
        Err(SdJwtError::BadIssuance)
    );
    let mut c = claims();
    c.plain.insert("cnf".into(), json!({}));
    assert_eq!(
        issue(&ik, KID, &c, &d, &salts(3)),
        Err(SdJwtError::BadIssuance)
    );
    let mut c = claims();
    c.cnf_jwk.x = "AAAA".into();
    assert_eq!(
        issue(&ik, KID, &c, &d, &salts(3)),
        Err(SdJwtError::BadHolderKey)
    );
    let many: Vec<(String, Value)> = (0..=MAX_DISCLOSURES)
        .map(|i| (format!("c{i}"), json!(true)))
        .collect();
    let many_salts: Vec<[u8; 16]> = (0..=MAX_DISCLOSURES)
        .map(|i| {
            let mut s = [0u8; 16];
            s[..8].copy_from_slice(&(i as u64).to_le_bytes());
            s
        })
        .collect();
    assert_eq!(
        issue(&ik, KID, &claims(), &many, &many_salts),
        Err(SdJwtError::BadIssuance)
    );
    // The income ladder an issuer writes (39 steps) fits.
    let ladder: Vec<(String, Value)> = (2..=40)
        .map(|i| (format!("income_below_{}", i * 5000), json!(true)))
        .collect();
    let t = issue(&ik, KID, &claims(), &ladder, &many_salts[..ladder.len()]).unwrap();
    assert_eq!(Credential::parse(&t).unwrap().disclosures().len(), 39);
}

#[test]
fn every_refusal_has_its_own_code() {
    use SdJwtError::*;
    let all = [
        TooLarge,
        Malformed,
        BadHeader,
        UnsupportedSdAlg,
        BadHolderKey,
        ReservedName,
        MalformedDisclosure,
        UnknownDisclosure,
        DuplicateDisclosure,
        UnexpectedKeyBinding,
        UnknownIssuer,
        UnknownKey,
        BadIssuerSignature,
        Expired,
        IssuedInFuture,
        MissingKeyBinding,
        MalformedKeyBinding,
        BadKeyBindingSignature,
        BadSdHash,
        WrongAudience,
        WrongNonce,
        StaleKeyBinding,
        KeyBindingInFuture,
        NotDisclosable,
        BadIssuance,
        BadJwks,
    ];
    let mut codes: Vec<&str> = all.iter().map(|e| e.code()).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), all.len());
    for e in all {
        assert!(!e.to_string().is_empty());
    }
}

// --- JWKS and metadata --------------------------------------------------------------------

#[test]
fn jwks_round_trip_and_strictness() {
    let set = Jwks::new(vec![
        IssuerKey {
            kid: "k1".into(),
            key: *issuer_key().verifying_key(),
        },
        IssuerKey {
            kid: "k0".into(),
            key: *key("old issuer key").verifying_key(),
        },
    ])
    .unwrap();
    let text = set.to_json();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["keys"][0]["kid"], "k1");
    assert_eq!(v["keys"][0]["kty"], "EC");
    assert_eq!(v["keys"][0]["crv"], "P-256");
    assert_eq!(v["keys"][0]["alg"], "ES256");
    assert_eq!(v["keys"][0]["use"], "sig");
    assert_eq!(Jwks::parse(text.as_bytes()).unwrap(), set);
    assert_eq!(set.key("k0"), Some(key("old issuer key").verifying_key()));
    assert_eq!(set.key("k9"), None);
    assert_eq!(set.keys()[0].jwk(), jwk_of(&issuer_key()));

    let jwk = jwk_of(&issuer_key());
    let entry = |extra: &str| {
        format!(
            r#"{{"keys":[{{"kty":"EC","crv":"P-256","x":"{}","y":"{}"{extra}}}]}}"#,
            jwk.x, jwk.y
        )
    };
    Jwks::parse(entry(r#","kid":"a""#).as_bytes()).unwrap();
    for bad in [
        entry(""),
        entry(r#","kid":"""#),
        entry(r#","kid":"a","alg":"ES384""#),
        entry(r#","kid":"a","use":"enc""#),
        entry(r#","kid":"a","d":"secret""#),
        entry(r#","kid":"a","x5u":"https://evil.example""#),
        entry(r#","kid":"a","kid":"b""#),
        format!(
            r#"{{"keys":[{{"kty":"EC","crv":"P-256","x":"{}","y":"AAAA","kid":"a"}}]}}"#,
            jwk.x
        ),
        format!(
            r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{}","y":"{}","kid":"a"}}]}}"#,
            jwk.x, jwk.y
        ),
        r#"{"keys":[],"extra":1}"#.to_owned(),
        "[]".to_owned(),
        // Structs written as arrays of their fields (serde would read them), nulls for absent
        // optional members, a repeated member name (found by the issuer_metadata fuzz target).
        "[[]]".to_owned(),
        format!(r#"[[["EC","P-256","{}","{}","a"]]]"#, jwk.x, jwk.y),
        format!(r#"{{"keys":[["EC","P-256","{}","{}","a"]]}}"#, jwk.x, jwk.y),
        entry(r#","kid":"a","alg":null"#),
        entry(r#","kid":"a","use":null"#),
        format!(
            r#"{{"keys":[{{"kty":"EC","crv":"P-256","x":"{0}","y":"{1}","kid":"a"}}],"keys":[]}}"#,
            jwk.x, jwk.y
        ),
    ] {
        assert_eq!(
            Jwks::parse(bad.as_bytes()),
            Err(SdJwtError::BadJwks),
            "{bad}"
        );
    }
    // Two keys with one kid.
    let two = format!(
        r#"{{"keys":[{{"kty":"EC","crv":"P-256","x":"{0}","y":"{1}","kid":"a"}},{{"kty":"EC","crv":"P-256","x":"{0}","y":"{1}","kid":"a"}}]}}"#,
        jwk.x, jwk.y
    );
    assert_eq!(Jwks::parse(two.as_bytes()), Err(SdJwtError::BadJwks));
    assert_eq!(
        Jwks::parse(&vec![b' '; MAX_JWKS_BYTES + 1]),
        Err(SdJwtError::BadJwks)
    );
    let too_many: Vec<IssuerKey> = (0..=MAX_JWKS_KEYS)
        .map(|i| IssuerKey {
            kid: format!("k{i}"),
            key: *issuer_key().verifying_key(),
        })
        .collect();
    assert_eq!(Jwks::new(too_many), Err(SdJwtError::BadJwks));
}

#[test]
fn issuer_metadata_round_trip() {
    let meta = IssuerMetadata {
        issuer: ISS.into(),
        jwks: jwks(),
    };
    let text = meta.to_json();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["issuer"], ISS);
    assert_eq!(v["jwks"]["keys"][0]["kid"], KID);
    assert_eq!(IssuerMetadata::parse(text.as_bytes()).unwrap(), meta);
    assert_eq!(
        IssuerMetadata::parse(br#"{"issuer":"","jwks":{"keys":[]}}"#),
        Err(SdJwtError::BadJwks)
    );
    assert_eq!(
        IssuerMetadata::parse(br#"{"issuer":"x","jwks":{"keys":[]},"jwks_uri":"https://evil"}"#),
        Err(SdJwtError::BadJwks)
    );
    for bad in [
        r#"["x",{"keys":[]}]"#.to_owned(),
        r#"{"issuer":"x","jwks":[[]]}"#.to_owned(),
        r#"{"issuer":"x","issuer":"y","jwks":{"keys":[]}}"#.to_owned(),
        format!(r#"{{"issuer":"x","jwks":{}}}"#, "[[]]"),
    ] {
        assert_eq!(
            IssuerMetadata::parse(bad.as_bytes()),
            Err(SdJwtError::BadJwks),
            "{bad}"
        );
    }
    assert_eq!(WELL_KNOWN_PATH, "/.well-known/jwt-vc-issuer");
}

// --- property -----------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever subset is asked for, the presentation carries exactly that subset and verifies.
    #[test]
    fn presentation_carries_exactly_the_asked_disclosures(
        values in prop::collection::vec(any::<bool>(), 1..12),
        mask in prop::collection::vec(any::<bool>(), 12),
        salt_seed in any::<u8>(),
    ) {
        let disclosable: Vec<(String, Value)> = values
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("income_below_{}", (i + 2) * 5000), json!(v)))
            .collect();
        let salts: Vec<[u8; 16]> = (0..disclosable.len())
            .map(|i| {
                let mut s = [salt_seed; 16];
                s[0] = i as u8;
                s
            })
            .collect();
        let text = issue(&issuer_key(), KID, &claims(), &disclosable, &salts).unwrap();
        let c = Credential::parse(&text).unwrap();
        let keep: Vec<&str> = disclosable
            .iter()
            .zip(&mask)
            .filter(|(_, m)| **m)
            .map(|((n, _), _)| n.as_str())
            .collect();
        let without = presentation_without_kb(&c, &keep).unwrap();
        // Every disclosure segment is one that was asked for, and each asked one is there once.
        let segs: Vec<&str> = without.trim_end_matches('~').split('~').skip(1).collect();
        prop_assert_eq!(segs.len(), keep.len());
        for s in &segs {
            let d = Disclosure::decode(s).unwrap();
            prop_assert!(keep.contains(&d.name.as_str()));
        }
        let p = present(&c, &keep, &holder_key(), AUD, NONCE, now()).unwrap();
        let v = verify(&p).unwrap();
        let mut got: Vec<&str> = v.disclosed.keys().map(String::as_str).collect();
        let mut want = keep.clone();
        got.sort_unstable();
        want.sort_unstable();
        prop_assert_eq!(got, want);
        for (name, value) in &v.disclosed {
            let expected = &disclosable.iter().find(|(n, _)| n == name).unwrap().1;
            prop_assert_eq!(value, expected);
        }
    }
}

/// A site takes an issuer's keys only from metadata naming that issuer; a bare JWK set only
/// from a file its operator pinned.
#[test]
fn issuer_keys_come_only_from_metadata_naming_that_issuer() {
    use tacit_protocol::sd_jwt::{IssuerKey, IssuerKeysError, IssuerMetadata, Jwks};
    let key = p256::ecdsa::SigningKey::from_slice(&[7; 32]).unwrap();
    let jwks = Jwks::new(vec![IssuerKey {
        kid: "k1".into(),
        key: *key.verifying_key(),
    }])
    .unwrap();
    let tax = "http://127.0.0.1:8791";
    let meta = |issuer: &str| {
        IssuerMetadata {
            issuer: issuer.into(),
            jwks: jwks.clone(),
        }
        .to_json()
    };
    for bare_ok in [false, true] {
        assert_eq!(
            IssuerMetadata::keys_of(meta(tax).as_bytes(), tax, bare_ok),
            Ok(jwks.clone())
        );
        for other in [
            "http://127.0.0.1:8792",
            "http://127.0.0.1:8791/",
            "HTTP://127.0.0.1:8791",
        ] {
            assert_eq!(
                IssuerMetadata::keys_of(meta(other).as_bytes(), tax, bare_ok),
                Err(IssuerKeysError::OtherIssuer),
                "{other}"
            );
        }
    }
    let bare = jwks.to_json();
    assert_eq!(
        IssuerMetadata::keys_of(bare.as_bytes(), tax, true),
        Ok(jwks.clone())
    );
    assert_eq!(
        IssuerMetadata::keys_of(bare.as_bytes(), tax, false),
        Err(IssuerKeysError::NotMetadata)
    );
    assert_eq!(
        IssuerMetadata::keys_of(b"{}", tax, true),
        Err(IssuerKeysError::NotKeys)
    );
    for e in [
        IssuerKeysError::OtherIssuer,
        IssuerKeysError::NotKeys,
        IssuerKeysError::NotMetadata,
    ] {
        assert_eq!(e.reason(), e.to_string());
    }
}
