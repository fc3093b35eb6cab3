//! WebAuthn verification: assertions and registrations made here with `p256` the way a platform
//! authenticator makes them, then each part changed the way a page script could change it
//! (challenge, origin, relying party, ceremony type, flags, signature, key, credential id).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use proptest::prelude::*;
use sha2::{Digest, Sha256};
use tacit_protocol::webauthn::*;

const ORIGIN: &str = "http://localhost:8080";
const RP: &str = "localhost";
const CHALLENGE: [u8; 32] = [7u8; 32];
const CRED: &[u8] = b"credential-id-0001";

fn key(label: &str) -> SigningKey {
    SigningKey::from_slice(&Sha256::digest(label.as_bytes())).unwrap()
}

fn spki(key: &SigningKey) -> Vec<u8> {
    spki_of(key.verifying_key())
}

/// A DER INTEGER of a 32-byte big-endian scalar (minimal, positive), written independently of
/// the parser under test.
fn der_int(bytes: &[u8]) -> Vec<u8> {
    let mut b: Vec<u8> = bytes.iter().copied().skip_while(|&x| x == 0).collect();
    if b.is_empty() {
        b.push(0);
    }
    if b[0] & 0x80 != 0 {
        b.insert(0, 0);
    }
    let mut out = vec![0x02, b.len() as u8];
    out.extend(b);
    out
}

fn der(sig: &Signature) -> Vec<u8> {
    let raw = sig.to_bytes();
    let body = [der_int(&raw[..32]), der_int(&raw[32..])].concat();
    let mut out = vec![0x30, body.len() as u8];
    out.extend(body);
    out
}

fn client_data(kind: &str, challenge: &[u8], origin: &str) -> Vec<u8> {
    format!(
        r#"{{"type":"{kind}","challenge":"{}","origin":"{origin}","crossOrigin":false}}"#,
        URL_SAFE_NO_PAD.encode(challenge)
    )
    .into_bytes()
}

fn auth_data(rp: &str, flags: u8) -> Vec<u8> {
    let mut out = Sha256::digest(rp.as_bytes()).to_vec();
    out.push(flags);
    out.extend(42u32.to_be_bytes());
    out
}

struct Made {
    client_data: Vec<u8>,
    auth_data: Vec<u8>,
    signature: Vec<u8>,
}

fn sign_assertion(key: &SigningKey, client_data: Vec<u8>, auth_data: Vec<u8>) -> Made {
    let signed = [&auth_data[..], Sha256::digest(&client_data).as_slice()].concat();
    let sig: Signature = key.sign(&signed);
    Made {
        client_data,
        auth_data,
        signature: der(&sig),
    }
}

fn good() -> Made {
    sign_assertion(
        &key("holder"),
        client_data("webauthn.get", &CHALLENGE, ORIGIN),
        auth_data(RP, FLAG_UP | FLAG_UV),
    )
}

fn expected() -> Expected<'static> {
    Expected {
        challenge: &CHALLENGE,
        origin: ORIGIN,
        rp_id: RP,
        credential_id: CRED,
    }
}

fn check(made: &Made) -> Result<(), WebAuthnError> {
    check_with(made, CRED, &spki(&key("holder")))
}

fn check_with(made: &Made, credential: &[u8], spki: &[u8]) -> Result<(), WebAuthnError> {
    verify_assertion(
        spki,
        &Assertion {
            credential_id: credential,
            client_data_json: &made.client_data,
            authenticator_data: &made.auth_data,
            signature_der: &made.signature,
        },
        &expected(),
    )
}

#[test]
fn a_proper_assertion_verifies() {
    assert_eq!(check(&good()), Ok(()));
}

#[test]
fn browser_extra_client_data_members_are_allowed() {
    let cd = format!(
        r#"{{"type":"webauthn.get","challenge":"{}","origin":"{ORIGIN}","crossOrigin":false,"other_keys_can_be_added_here":"do not compare clientDataJSON against a template. See https://goo.gl/yabPex"}}"#,
        URL_SAFE_NO_PAD.encode(CHALLENGE)
    );
    let made = sign_assertion(&key("holder"), cd.into_bytes(), auth_data(RP, 0x05));
    assert_eq!(check(&made), Ok(()));
    // Also without crossOrigin (older browsers leave it out).
    let cd = format!(
        r#"{{"type":"webauthn.get","challenge":"{}","origin":"{ORIGIN}"}}"#,
        URL_SAFE_NO_PAD.encode(CHALLENGE)
    );
    let made = sign_assertion(&key("holder"), cd.into_bytes(), auth_data(RP, 0x05));
    assert_eq!(check(&made), Ok(()));
}

#[test]
fn another_challenge_is_refused() {
    let mut other = CHALLENGE;
    other[31] ^= 1;
    let made = sign_assertion(
        &key("holder"),
        client_data("webauthn.get", &other, ORIGIN),
        auth_data(RP, 0x05),
    );
    assert_eq!(check(&made), Err(WebAuthnError::WrongChallenge));
    // A prefix of the challenge, and the challenge with padding, are not the challenge.
    let made = sign_assertion(
        &key("holder"),
        client_data("webauthn.get", &CHALLENGE[..31], ORIGIN),
        auth_data(RP, 0x05),
    );
    assert_eq!(check(&made), Err(WebAuthnError::WrongChallenge));
    let padded = format!(
        r#"{{"type":"webauthn.get","challenge":"{}","origin":"{ORIGIN}"}}"#,
        URL_SAFE.encode(CHALLENGE)
    );
    let made = sign_assertion(&key("holder"), padded.into_bytes(), auth_data(RP, 0x05));
    assert_eq!(check(&made), Err(WebAuthnError::WrongChallenge));
}

#[test]
fn an_empty_expected_challenge_never_matches() {
    let made = sign_assertion(
        &key("holder"),
        client_data("webauthn.get", b"", ORIGIN),
        auth_data(RP, 0x05),
    );
    let result = verify_assertion(
        &spki(&key("holder")),
        &Assertion {
            credential_id: CRED,
            client_data_json: &made.client_data,
            authenticator_data: &made.auth_data,
            signature_der: &made.signature,
        },
        &Expected {
            challenge: b"",
            ..expected()
        },
    );
    assert_eq!(result, Err(WebAuthnError::WrongChallenge));
}

#[test]
fn another_origin_is_refused() {
    for origin in [
        "http://127.0.0.1:8080",
        "http://localhost:8081",
        "https://localhost:8080",
        "http://localhost:8080/",
        "http://evil.localhost:8080",
    ] {
        let made = sign_assertion(
            &key("holder"),
            client_data("webauthn.get", &CHALLENGE, origin),
            auth_data(RP, 0x05),
        );
        assert_eq!(check(&made), Err(WebAuthnError::WrongOrigin), "{origin}");
    }
}

#[test]
fn a_cross_origin_frame_is_refused() {
    let cd = format!(
        r#"{{"type":"webauthn.get","challenge":"{}","origin":"{ORIGIN}","crossOrigin":true}}"#,
        URL_SAFE_NO_PAD.encode(CHALLENGE)
    );
    let made = sign_assertion(&key("holder"), cd.into_bytes(), auth_data(RP, 0x05));
    assert_eq!(check(&made), Err(WebAuthnError::CrossOrigin));
}

#[test]
fn another_relying_party_is_refused() {
    for rp in ["127.0.0.1", "example.com", "localhost.", "LOCALHOST"] {
        let made = sign_assertion(
            &key("holder"),
            client_data("webauthn.get", &CHALLENGE, ORIGIN),
            auth_data(rp, 0x05),
        );
        assert_eq!(check(&made), Err(WebAuthnError::WrongRelyingParty), "{rp}");
    }
}

#[test]
fn a_registration_client_data_is_not_an_assertion() {
    let made = sign_assertion(
        &key("holder"),
        client_data("webauthn.create", &CHALLENGE, ORIGIN),
        auth_data(RP, 0x05),
    );
    assert_eq!(check(&made), Err(WebAuthnError::WrongType));
    let made = sign_assertion(
        &key("holder"),
        client_data("payment.get", &CHALLENGE, ORIGIN),
        auth_data(RP, 0x05),
    );
    assert_eq!(check(&made), Err(WebAuthnError::WrongType));
}

#[test]
fn user_presence_and_verification_are_both_required() {
    for (flags, error) in [
        (FLAG_UV, WebAuthnError::UserNotPresent),
        (FLAG_UP, WebAuthnError::UserNotVerified),
        (0x00, WebAuthnError::UserNotPresent),
        (!FLAG_UV, WebAuthnError::UserNotVerified),
    ] {
        let made = sign_assertion(
            &key("holder"),
            client_data("webauthn.get", &CHALLENGE, ORIGIN),
            auth_data(RP, flags),
        );
        assert_eq!(check(&made), Err(error), "flags {flags:#04x}");
    }
    // Other flags (backup eligibility and state, extensions) change nothing.
    let made = sign_assertion(
        &key("holder"),
        client_data("webauthn.get", &CHALLENGE, ORIGIN),
        auth_data(RP, FLAG_UP | FLAG_UV | 0x08 | 0x10),
    );
    assert_eq!(check(&made), Ok(()));
}

#[test]
fn truncated_authenticator_data_is_refused() {
    let full = auth_data(RP, 0x05);
    for len in [0, 1, 32, 33, 36] {
        let made = sign_assertion(
            &key("holder"),
            client_data("webauthn.get", &CHALLENGE, ORIGIN),
            full[..len].to_vec(),
        );
        assert_eq!(
            check(&made),
            Err(WebAuthnError::AuthenticatorData),
            "len {len}"
        );
    }
}

#[test]
fn a_changed_signed_part_breaks_the_signature() {
    // The authenticator data's counter changed after signing.
    let mut made = good();
    made.auth_data[36] ^= 1;
    assert_eq!(check(&made), Err(WebAuthnError::BadSignature));
    // Extension bytes appended after signing.
    let mut made = good();
    made.auth_data.push(0);
    assert_eq!(check(&made), Err(WebAuthnError::BadSignature));
    // The client data re-serialised (same members, other spacing): a different hash.
    let mut made = good();
    let text = String::from_utf8(made.client_data.clone()).unwrap();
    made.client_data = text.replace(",\"origin\"", ", \"origin\"").into_bytes();
    assert_eq!(check(&made), Err(WebAuthnError::BadSignature));
}

#[test]
fn a_signature_over_the_raw_client_data_is_refused() {
    // Signed over authData ‖ clientDataJSON instead of its hash.
    let cd = client_data("webauthn.get", &CHALLENGE, ORIGIN);
    let ad = auth_data(RP, 0x05);
    let sig: Signature = key("holder").sign(&[&ad[..], &cd[..]].concat());
    let made = Made {
        client_data: cd,
        auth_data: ad,
        signature: der(&sig),
    };
    assert_eq!(check(&made), Err(WebAuthnError::BadSignature));
}

#[test]
fn another_key_is_refused() {
    let made = sign_assertion(
        &key("someone else"),
        client_data("webauthn.get", &CHALLENGE, ORIGIN),
        auth_data(RP, 0x05),
    );
    assert_eq!(check(&made), Err(WebAuthnError::BadSignature));
    // And the right signature under another registered key.
    assert_eq!(
        check_with(&good(), CRED, &spki(&key("someone else"))),
        Err(WebAuthnError::BadSignature)
    );
}

#[test]
fn another_credential_id_is_refused() {
    assert_eq!(
        check_with(&good(), b"credential-id-0002", &spki(&key("holder"))),
        Err(WebAuthnError::WrongCredential)
    );
    assert_eq!(
        check_with(&good(), b"", &spki(&key("holder"))),
        Err(WebAuthnError::WrongCredential)
    );
    // An empty registered id matches nothing, not even an empty id.
    let made = good();
    let result = verify_assertion(
        &spki(&key("holder")),
        &Assertion {
            credential_id: b"",
            client_data_json: &made.client_data,
            authenticator_data: &made.auth_data,
            signature_der: &made.signature,
        },
        &Expected {
            credential_id: b"",
            ..expected()
        },
    );
    assert_eq!(result, Err(WebAuthnError::WrongCredential));
}

#[test]
fn malformed_signatures_are_refused() {
    let made = good();
    let raw = {
        // The raw r ‖ s form (what WebCrypto gives) is not DER.
        let signed = [
            &made.auth_data[..],
            Sha256::digest(&made.client_data).as_slice(),
        ]
        .concat();
        let sig: Signature = key("holder").sign(&signed);
        sig.to_bytes().to_vec()
    };
    let mut cases: Vec<Vec<u8>> = vec![Vec::new(), vec![0x30, 0x00], raw];
    // Trailing byte after the sequence; length that disagrees; an integer with a needless zero.
    let mut trailing = made.signature.clone();
    trailing.push(0);
    cases.push(trailing);
    let mut short = made.signature.clone();
    short[1] -= 1;
    cases.push(short);
    let sig = Signature::from_der_like(&made.signature);
    let padded_r = [vec![0x02, 0x21, 0x00], sig.0.to_vec()].concat();
    let needless = {
        let r = sig.0;
        // Only needless if r's top bit is clear.
        let mut body = if r[0] & 0x80 == 0 {
            padded_r.clone()
        } else {
            [vec![0x02, 0x22, 0x00, 0x00], r.to_vec()].concat()
        };
        body.extend(der_int(&sig.1));
        let mut out = vec![0x30, body.len() as u8];
        out.extend(body);
        out
    };
    cases.push(needless);
    for case in cases {
        let mut m = good();
        m.signature = case.clone();
        assert_eq!(
            check(&m),
            Err(WebAuthnError::MalformedSignature),
            "{}",
            hex::encode(&case)
        );
    }
}

/// Reads r and s back out of a DER signature made by [`der`] (test helper only).
trait FromDerLike {
    fn from_der_like(der: &[u8]) -> ([u8; 32], [u8; 32]);
}

impl FromDerLike for Signature {
    fn from_der_like(der: &[u8]) -> ([u8; 32], [u8; 32]) {
        let mut at = 2;
        let mut int = || {
            let len = der[at + 1] as usize;
            let body = &der[at + 2..at + 2 + len];
            at += 2 + len;
            let body = if body.len() == 33 { &body[1..] } else { body };
            let mut out = [0u8; 32];
            out[32 - body.len()..].copy_from_slice(body);
            out
        };
        let r = int();
        let s = int();
        (r, s)
    }
}

#[test]
fn both_s_forms_verify() {
    // Authenticators do not all normalise S: n - s verifies too (ECDSA is malleable; the
    // challenge, not the signature bytes, makes an assertion single-use).
    let made = good();
    let (r, s) = Signature::from_der_like(&made.signature);
    let sig = Signature::from_scalars(r, s).unwrap();
    let flipped = match sig.normalize_s() {
        n if n != sig => n,
        _ => {
            // s was low: make the high form n - s.
            let n = hex::decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
                .unwrap();
            let mut out = [0u8; 32];
            let mut borrow = 0i16;
            for i in (0..32).rev() {
                let v = n[i] as i16 - s[i] as i16 - borrow;
                borrow = i16::from(v < 0);
                out[i] = v.rem_euclid(256) as u8;
            }
            Signature::from_scalars(r, out).unwrap()
        }
    };
    assert_ne!(flipped, sig);
    let mut m = good();
    m.signature = der(&flipped);
    assert_eq!(check(&m), Ok(()));
}

#[test]
fn client_data_must_be_strict_json_of_the_shape() {
    let challenge = URL_SAFE_NO_PAD.encode(CHALLENGE);
    for cd in [
        String::new(),
        "null".to_owned(),
        "[]".to_owned(),
        format!(r#"{{"challenge":"{challenge}","origin":"{ORIGIN}"}}"#),
        format!(r#"{{"type":"webauthn.get","origin":"{ORIGIN}"}}"#),
        format!(r#"{{"type":"webauthn.get","challenge":"{challenge}"}}"#),
        // A member twice: which one would count?
        format!(
            r#"{{"type":"webauthn.get","challenge":"{challenge}","origin":"http://evil","origin":"{ORIGIN}"}}"#
        ),
        format!(
            r#"{{"type":"webauthn.create","type":"webauthn.get","challenge":"{challenge}","origin":"{ORIGIN}"}}"#
        ),
        format!(r#"{{"type":"webauthn.get","challenge":"{challenge}","origin":"{ORIGIN}"}} x"#),
    ] {
        let made = sign_assertion(&key("holder"), cd.clone().into_bytes(), auth_data(RP, 0x05));
        assert_eq!(check(&made), Err(WebAuthnError::ClientData), "{cd}");
    }
}

#[test]
fn public_keys_are_uncompressed_p256_spki_only() {
    let good_spki = spki(&key("holder"));
    assert!(check_public_key(&good_spki).is_ok());
    let mut truncated = good_spki.clone();
    truncated.pop();
    let mut longer = good_spki.clone();
    longer.push(0);
    let mut off_curve = good_spki.clone();
    let last = off_curve.len() - 1;
    off_curve[last] ^= 1;
    let mut other_curve = good_spki.clone();
    other_curve[20] = 0x22; // secp384r1's last OID byte
    let compressed = {
        let point = key("holder").verifying_key().to_sec1_point(true);
        [&good_spki[..26], point.as_bytes()].concat()
    };
    for bad in [
        Vec::new(),
        truncated,
        longer,
        off_curve,
        other_curve,
        compressed,
        good_spki[26..].to_vec(),
    ] {
        assert_eq!(check_public_key(&bad), Err(WebAuthnError::BadKey));
        assert_eq!(check_with(&good(), CRED, &bad), Err(WebAuthnError::BadKey));
    }
}

#[test]
fn registration_client_data() {
    let ok = client_data("webauthn.create", &CHALLENGE, ORIGIN);
    assert_eq!(verify_registration(&ok, &CHALLENGE, ORIGIN), Ok(()));
    assert_eq!(
        verify_registration(
            &client_data("webauthn.get", &CHALLENGE, ORIGIN),
            &CHALLENGE,
            ORIGIN
        ),
        Err(WebAuthnError::WrongType)
    );
    assert_eq!(
        verify_registration(&ok, &[8u8; 32], ORIGIN),
        Err(WebAuthnError::WrongChallenge)
    );
    assert_eq!(
        verify_registration(&ok, &CHALLENGE, "http://localhost:9999"),
        Err(WebAuthnError::WrongOrigin)
    );
}

#[test]
fn authenticator_data_flags_and_counter() {
    let ad = auth_data(RP, 0x45);
    assert_eq!(
        check_authenticator_data(&ad, RP),
        Ok(AuthenticatorData {
            flags: 0x45,
            sign_count: 42
        })
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any one flipped bit in the authenticator data, the client data or the signature is refused.
    #[test]
    fn any_flipped_bit_is_refused(part in 0usize..3, at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let mut made = good();
        let bytes = match part {
            0 => &mut made.auth_data,
            1 => &mut made.client_data,
            _ => &mut made.signature,
        };
        let i = at.index(bytes.len());
        bytes[i] ^= 1 << bit;
        prop_assert!(check(&made).is_err());
    }
}

/// What Chromium's WebAuthn produced (DevTools virtual authenticator: ctap2, internal, user
/// verification on) on `http://localhost:8765`: a registration with challenge `[1; 32]`, then an
/// assertion with challenge `[3; 32]`.
mod chromium {
    pub const ORIGIN: &str = "http://localhost:8765";
    pub const RAW_ID: &str = "-rbVLU-SoIdwfg1rm0UrM4mKTl9mqd5nT7qKXWSakLM";
    pub const SPKI: &str = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE-bqavUGm0B6RmXdhbnXWEXMEnXGlQlPcvOMY50nw9yETbOLu-Rn04yjPy2NTGzeU_P-sHnNpfkg2sDvgjLBcVg";
    pub const REG_CLIENT_DATA: &str = "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiQVFFQkFRRUJBUUVCQVFFQkFRRUJBUUVCQVFFQkFRRUJBUUVCQVFFQkFRRSIsIm9yaWdpbiI6Imh0dHA6Ly9sb2NhbGhvc3Q6ODc2NSIsImNyb3NzT3JpZ2luIjpmYWxzZX0";
    pub const REG_AUTH_DATA: &str = "SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2NFAAAAAQECAwQFBgcIAQIDBAUGBwgAIPq21S1PkqCHcH4Na5tFKzOJik5fZqneZ0-6il1kmpCzpQECAyYgASFYIPm6mr1BptAekZl3YW511hFzBJ1xpUJT3LzjGOdJ8PchIlggE2zi7vkZ9OMoz8tjUxs3lPz_rB5zaX5INrA74IywXFY";
    pub const CLIENT_DATA: &str = "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiQXdNREF3TURBd01EQXdNREF3TURBd01EQXdNREF3TURBd01EQXdNREF3TSIsIm9yaWdpbiI6Imh0dHA6Ly9sb2NhbGhvc3Q6ODc2NSIsImNyb3NzT3JpZ2luIjpmYWxzZX0";
    pub const AUTH_DATA: &str = "SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAg";
    pub const SIGNATURE: &str = "MEUCIQD77H7ZFupdR-wPrICAR-2qQbmnE2gxHlYBTSb7cI9chgIgL_R7y3kkA61OG6iPyyjn6FEmLxz8252ME5WG8a3Tsqw";
}

fn b64(text: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD.decode(text).unwrap()
}

#[test]
fn chromium_registration_and_assertion_verify() {
    use chromium::*;
    assert_eq!(
        verify_registration(&b64(REG_CLIENT_DATA), &[1u8; 32], ORIGIN),
        Ok(())
    );
    let flags = check_authenticator_data(&b64(REG_AUTH_DATA), "localhost").unwrap();
    assert_eq!(flags.flags & (FLAG_UP | FLAG_UV), FLAG_UP | FLAG_UV);
    assert!(check_public_key(&b64(SPKI)).is_ok());
    let (spki, raw_id, client_data, auth_data, signature) = (
        b64(SPKI),
        b64(RAW_ID),
        b64(CLIENT_DATA),
        b64(AUTH_DATA),
        b64(SIGNATURE),
    );
    let assertion = Assertion {
        credential_id: &raw_id,
        client_data_json: &client_data,
        authenticator_data: &auth_data,
        signature_der: &signature,
    };
    let want = Expected {
        challenge: &[3u8; 32],
        origin: ORIGIN,
        rp_id: "localhost",
        credential_id: &raw_id,
    };
    assert_eq!(verify_assertion(&spki, &assertion, &want), Ok(()));
    // The same answer for another challenge, origin or relying party, or under the
    // registration's challenge, is refused.
    let refused = |e: Expected<'_>| verify_assertion(&spki, &assertion, &e);
    assert_eq!(
        refused(Expected {
            challenge: &[1u8; 32],
            ..want
        }),
        Err(WebAuthnError::WrongChallenge)
    );
    assert_eq!(
        refused(Expected {
            origin: "http://localhost:8080",
            ..want
        }),
        Err(WebAuthnError::WrongOrigin)
    );
    assert_eq!(
        refused(Expected {
            rp_id: "127.0.0.1",
            ..want
        }),
        Err(WebAuthnError::WrongRelyingParty)
    );
    // The registration's client data is not an assertion's.
    let reg = b64(REG_CLIENT_DATA);
    assert_eq!(
        verify_assertion(
            &spki,
            &Assertion {
                client_data_json: &reg,
                ..assertion
            },
            &Expected {
                challenge: &[1u8; 32],
                ..want
            }
        ),
        Err(WebAuthnError::WrongType)
    );
}

#[test]
fn a_counter_must_count_up_unless_the_authenticator_keeps_none() {
    for (stored, got) in [
        (0, 0),
        (0, 1),
        (5, 6),
        (5, u32::MAX),
        (u32::MAX - 1, u32::MAX),
    ] {
        assert_eq!(check_sign_count(stored, got), Ok(()), "{stored} -> {got}");
    }
    for (stored, got) in [(1, 0), (5, 5), (5, 4), (5, 0), (u32::MAX, u32::MAX)] {
        assert_eq!(
            check_sign_count(stored, got),
            Err(WebAuthnError::CounterNotAdvanced),
            "{stored} -> {got}"
        );
    }
}

#[test]
fn the_challenge_names_the_act_so_an_assertion_for_one_act_confirms_no_other() {
    let fresh = [1u8; 32];
    let grant = act_challenge(&fresh, "Grant 2 of the 2 questions.");
    // Deterministic, and changed by any byte of the sentence or of the randomness.
    assert_eq!(grant, act_challenge(&fresh, "Grant 2 of the 2 questions."));
    for other in [
        act_challenge(&fresh, "Grant 1 of the 2 questions."),
        act_challenge(&fresh, "Grant 2 of the 2 questions"),
        act_challenge(&[2u8; 32], "Grant 2 of the 2 questions."),
    ] {
        assert_ne!(grant, other);
    }
    let made = sign_assertion(
        &key("holder"),
        client_data("webauthn.get", &grant, ORIGIN),
        auth_data(RP, FLAG_UP | FLAG_UV),
    );
    let verify = |challenge: &[u8]| {
        verify_assertion(
            &spki(&key("holder")),
            &Assertion {
                credential_id: CRED,
                client_data_json: &made.client_data,
                authenticator_data: &made.auth_data,
                signature_der: &made.signature,
            },
            &Expected {
                challenge,
                ..expected()
            },
        )
    };
    assert_eq!(verify(&grant), Ok(()));
    let release = act_challenge(&fresh, "Release 2 of the 2 answers.");
    assert_eq!(verify(&release), Err(WebAuthnError::WrongChallenge));
}
