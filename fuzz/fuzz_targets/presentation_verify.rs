//! `verify_presentation` as a relying site runs it on what an agent submits: bytes as an SD-JWT
//! VC presentation, checked against one fixed trusted issuer (a tax office's income credential
//! and a civil registry's age credential, both signed by the same pinned key), for a fixed
//! audience, nonce and time.
//!
//! The first byte picks the mode:
//! - even: the rest is the presentation text. Nobody but the harness holds the issuer and holder
//!   keys, so whatever verifies must be one of the harness's own presentations: its issuer JWT
//!   carries exactly one of the two issued payloads, every disclosed claim is one the credential
//!   carries with the same value, one per disclosure segment, and the very same text is refused
//!   for another audience (`wrong_audience`), another nonce (`wrong_nonce`), with no trusted
//!   issuer (`unknown_issuer`), with an impostor key under the pinned `kid`
//!   (`bad_issuer_signature`) and once the credential has expired (`expired`).
//! - odd: a presentation is built by the harness from the input — which credential, which
//!   disclosures to keep (a bit mask), the KB-JWT's `iat` offset, signed by the holder or by
//!   another key, the `aud` and `nonce` it names (the fixed ones or the input's text), at the
//!   credential's expiry or not, trusted under the right key, an impostor key or not at all, and
//!   after signing: nothing, one kept disclosure's value flipped, a disclosure that was not kept
//!   appended, or a kept one repeated, or the KB-JWT dropped. A model of RFC 9901 §7 (in the
//!   order `verify_presentation` documents) predicts the exact outcome: the refusal code, or
//!   acceptance disclosing exactly the kept claims.
//!
//! Seeds (`fuzz/seeds/presentation_verify/`): `valid-*` are mode-0 presentations that verify;
//! `built-*` are mode-1 recipes. Regenerate the valid ones with
//! `TACIT_FUZZ_WRITE_SEEDS=fuzz/seeds/presentation_verify <binary> -runs=1 <any seed>` (the
//! harness is deterministic: fixed keys, fixed salts, RFC 6979 signatures).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Map, Value, json};
use tacit_fuzz::recipe::Recipe;
use tacit_protocol::request_auth::InstallKey;
use tacit_protocol::sd_jwt::{
    Credential, DEFAULT_MAX_KB_AGE_MS, Disclosure, IssuedClaims, IssuerKey, Jwks, MAX_SD_JWT_LEN,
    SdJwtError, TrustedIssuer, finish_presentation, issue, kb_jwt_signing_input,
    presentation_without_kb, verify_presentation,
};
use wallet_core::Timestamp;

const ISS: &str = "http://127.0.0.1:8791";
const KID: &str = "fuzz-k1";
const AUD: &str = "http://127.0.0.1:8081";
const NONCE: &str = "n-0123456789abcdef0123456789abcd";
/// 2026-12-01T10:00:00Z.
const NOW_MS: i64 = 1_796_119_200_000;
const DAY_MS: i64 = 86_400_000;
const INCOME_VCT: &str = "https://tacit.example/vct/income";
const AGE_VCT: &str = "https://tacit.example/vct/age";

struct Harness {
    holder: SigningKey,
    stranger: SigningKey,
    /// Income (39 ladder steps, plain `currency`) and age (4 thresholds).
    credentials: Vec<Credential>,
    trusted: Vec<TrustedIssuer>,
    impostor: Vec<TrustedIssuer>,
}

fn key(byte: u8) -> SigningKey {
    let mut scalar = [0x5a; 32];
    scalar[31] = byte;
    SigningKey::from_slice(&scalar).expect("a fixed scalar")
}

fn jwks_of(k: &SigningKey) -> Jwks {
    Jwks::new(vec![IssuerKey {
        kid: KID.into(),
        key: *k.verifying_key(),
    }])
    .expect("one key")
}

fn issue_one(
    issuer: &SigningKey,
    holder: &SigningKey,
    vct: &str,
    plain: Map<String, Value>,
    disclosable: &[(String, Value)],
    salt_tag: u8,
) -> Credential {
    let claims = IssuedClaims {
        iss: ISS.into(),
        vct: vct.into(),
        iat: Timestamp::from_millis(NOW_MS - DAY_MS),
        exp: Timestamp::from_millis(NOW_MS + 29 * DAY_MS),
        cnf_jwk: InstallKey::from_verifying_key(*holder.verifying_key()).to_jwk(),
        plain,
    };
    let salts: Vec<[u8; 16]> = (0..disclosable.len())
        .map(|i| {
            let mut s = [salt_tag; 16];
            s[0] = u8::try_from(i).expect("few disclosures");
            s
        })
        .collect();
    let text = issue(issuer, KID, &claims, disclosable, &salts).expect("issues");
    Credential::parse(&text).expect("parses")
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let issuer = key(1);
        let holder = key(2);
        let mut plain = Map::new();
        plain.insert("currency".into(), json!("EUR"));
        // Ana: 28,500.00 EUR.
        let income: Vec<(String, Value)> = (2..=40u32)
            .map(|i| {
                (
                    format!("income_below_{}", i * 5000),
                    json!(i * 5000 > 28_500),
                )
            })
            .collect();
        let age: Vec<(String, Value)> = [16, 18, 21, 65]
            .iter()
            .map(|y| (format!("age_equal_or_over_{y}"), json!(*y <= 36)))
            .collect();
        let credentials = vec![
            issue_one(&issuer, &holder, INCOME_VCT, plain, &income, 0xa1),
            issue_one(&issuer, &holder, AGE_VCT, Map::new(), &age, 0xb2),
        ];
        let harness = Harness {
            holder,
            stranger: key(3),
            credentials,
            trusted: vec![TrustedIssuer {
                iss: ISS.into(),
                jwks: jwks_of(&issuer),
            }],
            impostor: vec![TrustedIssuer {
                iss: ISS.into(),
                jwks: jwks_of(&key(4)),
            }],
        };
        if let Some(dir) = std::env::var_os("TACIT_FUZZ_WRITE_SEEDS") {
            write_seeds(&harness, std::path::Path::new(&dir));
        }
        harness
    })
}

fn sign(key: &SigningKey, without_kb: &str, aud: &str, nonce: &str, iat: Timestamp) -> String {
    let input = kb_jwt_signing_input(aud, nonce, iat, without_kb);
    let signature: Signature = key.sign(input.as_bytes());
    finish_presentation(without_kb, &input, &signature.to_bytes().into())
}

fn write_seeds(h: &Harness, dir: &std::path::Path) {
    std::fs::create_dir_all(dir).expect("seed dir");
    let now = Timestamp::from_millis(NOW_MS);
    let income = &h.credentials[0];
    let age = &h.credentials[1];
    let all_income: Vec<&str> = income
        .disclosures()
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    let cases: [(&str, &Credential, &[&str]); 5] = [
        ("valid-income-30000", income, &["income_below_30000"]),
        (
            "valid-income-two",
            income,
            &["income_below_25000", "income_below_30000"],
        ),
        ("valid-income-none", income, &[]),
        ("valid-income-all", income, &all_income),
        ("valid-age-18", age, &["age_equal_or_over_18"]),
    ];
    for (name, credential, keep) in cases {
        let without = presentation_without_kb(credential, keep).expect("names");
        let text = sign(&h.holder, &without, AUD, NONCE, now);
        let mut bytes = vec![0u8];
        bytes.extend_from_slice(text.as_bytes());
        std::fs::write(dir.join(format!("{name}.bin")), bytes).expect("write seed");
    }
}

/// `header.payload` of a JWS (everything before the last `.`).
fn signing_input(jws: &str) -> &str {
    jws.rfind('.').map_or(jws, |i| &jws[..i])
}

fn raw(h: &Harness, text: &str) {
    let now = Timestamp::from_millis(NOW_MS);
    let verify = |trusted: &[TrustedIssuer], aud: &str, nonce: &str, now: Timestamp| {
        verify_presentation(text, trusted, aud, nonce, now, DEFAULT_MAX_KB_AGE_MS)
    };
    let Ok(v) = verify(&h.trusted, AUD, NONCE, now) else {
        return;
    };
    assert_eq!(v.iss, ISS);
    let issuer_jwt = text.split('~').next().unwrap_or_default();
    let credential = h
        .credentials
        .iter()
        .find(|c| signing_input(c.issuer_jwt()) == signing_input(issuer_jwt))
        .expect("an accepted issuer JWT carries one of the issued payloads");
    assert_eq!(v.vct, credential.vct());
    assert_eq!(&v.plain, credential.plain());
    let segments = text.split('~').count().saturating_sub(2);
    assert_eq!(
        v.disclosed.len(),
        segments,
        "one disclosed claim per segment"
    );
    for (name, value) in &v.disclosed {
        let d = credential
            .disclosure(name)
            .unwrap_or_else(|| panic!("{name} is not in the credential"));
        assert_eq!(&d.value, value, "{name} disclosed with another value");
    }
    assert_eq!(
        verify(&h.trusted, "http://127.0.0.1:8082", NONCE, now),
        Err(SdJwtError::WrongAudience)
    );
    assert_eq!(
        verify(&h.trusted, AUD, "another nonce", now),
        Err(SdJwtError::WrongNonce)
    );
    assert_eq!(verify(&[], AUD, NONCE, now), Err(SdJwtError::UnknownIssuer));
    assert_eq!(
        verify(&h.impostor, AUD, NONCE, now),
        Err(SdJwtError::BadIssuerSignature)
    );
    assert_eq!(
        verify(&h.trusted, AUD, NONCE, credential.exp()),
        Err(SdJwtError::Expired)
    );
}

fn built(h: &Harness, data: &[u8]) {
    let mut r = Recipe(data);
    let credential = &h.credentials[usize::from(r.byte() % 2)];
    let flags = r.byte();
    let more = r.byte();
    let offset_s = i64::from(i16::from_le_bytes([r.byte(), r.byte()]));
    let mut mask = [0u8; 8];
    for b in &mut mask {
        *b = r.byte();
    }
    let mask = u64::from_le_bytes(mask);
    let text = String::from_utf8_lossy(r.0).into_owned();

    let names: Vec<&str> = credential
        .disclosures()
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    let keep: Vec<&str> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| mask >> i & 1 == 1)
        .map(|(_, n)| *n)
        .collect();
    let by_stranger = flags & 1 != 0;
    let aud = if flags & 2 != 0 { text.as_str() } else { AUD };
    let nonce = if flags & 4 != 0 { text.as_str() } else { NONCE };
    let drop_kb = flags & 8 != 0;
    let after = (flags >> 4) & 3; // 0 nothing, 1 flip a kept value, 2 append, 3 repeat
    let at_expiry = flags & 0x40 != 0;
    let trust = more % 3; // 0 right key, 1 impostor key, 2 nobody

    let now = if at_expiry {
        credential.exp()
    } else {
        Timestamp::from_millis(NOW_MS)
    };
    let iat = now.plus_millis(offset_s * 1000);
    let without = presentation_without_kb(credential, &keep).expect("its own names");
    let signer = if by_stranger { &h.stranger } else { &h.holder };
    let signed = sign(signer, &without, aud, nonce, iat);
    let kb = &signed[without.len()..];

    // The segments of `without` (issuer JWT, then the kept disclosures), then the change.
    let mut segments: Vec<String> = without
        .trim_end_matches('~')
        .split('~')
        .map(str::to_owned)
        .collect();
    let pick = usize::from(more >> 2);
    let mut after_effect = None;
    match after {
        1 if !keep.is_empty() => {
            let i = 1 + pick % keep.len();
            let mut d = Disclosure::decode(&segments[i]).expect("ours");
            d.value = match d.value {
                Value::Bool(b) => Value::Bool(!b),
                other => Value::Array(vec![other]),
            };
            segments[i] = d.encode();
            after_effect = Some(SdJwtError::UnknownDisclosure);
        }
        2 if keep.len() < names.len() => {
            let others: Vec<&str> = names
                .iter()
                .filter(|n| !keep.contains(n))
                .copied()
                .collect();
            let extra = presentation_without_kb(credential, &[others[pick % others.len()]])
                .expect("its own name");
            let d = extra.trim_end_matches('~').rsplit('~').next().expect("one");
            segments.push(d.to_owned());
            after_effect = Some(SdJwtError::BadSdHash);
        }
        3 if !keep.is_empty() => {
            let i = 1 + pick % keep.len();
            let again = segments[i].clone();
            segments.push(again);
            after_effect = Some(SdJwtError::DuplicateDisclosure);
        }
        _ => {}
    }
    let mut presentation = segments.join("~");
    presentation.push('~');
    if !drop_kb {
        presentation.push_str(kb);
    }
    let trusted: &[TrustedIssuer] = match trust {
        0 => &h.trusted,
        1 => &h.impostor,
        _ => &[],
    };

    // RFC 9901 §7.1 and §7.3, in the order `verify_presentation` checks them.
    let expected = if presentation.len() > MAX_SD_JWT_LEN {
        Err(SdJwtError::TooLarge)
    } else if let Some(e @ (SdJwtError::UnknownDisclosure | SdJwtError::DuplicateDisclosure)) =
        after_effect
    {
        Err(e)
    } else if trust == 2 {
        Err(SdJwtError::UnknownIssuer)
    } else if trust == 1 {
        Err(SdJwtError::BadIssuerSignature)
    } else if at_expiry {
        Err(SdJwtError::Expired)
    } else if drop_kb {
        Err(SdJwtError::MissingKeyBinding)
    } else if [aud, nonce].iter().any(|t| t.is_empty() || t.len() > 2048) {
        // The KB-JWT's claims are 1 to 2048 bytes.
        Err(SdJwtError::MalformedKeyBinding)
    } else if by_stranger {
        Err(SdJwtError::BadKeyBindingSignature)
    } else if let Some(e) = after_effect {
        Err(e)
    } else if aud != AUD {
        Err(SdJwtError::WrongAudience)
    } else if nonce != NONCE {
        Err(SdJwtError::WrongNonce)
    } else if offset_s > 60 {
        Err(SdJwtError::KeyBindingInFuture)
    } else if offset_s < -300 {
        Err(SdJwtError::StaleKeyBinding)
    } else {
        Ok(keep
            .iter()
            .map(|n| {
                let d = credential.disclosure(n).expect("kept");
                (d.name.clone(), d.value.clone())
            })
            .collect::<Map<String, Value>>())
    };
    let got = verify_presentation(
        &presentation,
        trusted,
        AUD,
        NONCE,
        now,
        DEFAULT_MAX_KB_AGE_MS,
    )
    .map(|v| {
        assert_eq!(v.iss, ISS);
        assert_eq!(v.vct, credential.vct());
        v.disclosed
    });
    assert_eq!(
        got, expected,
        "flags {flags:#04x}, more {more}, offset {offset_s}s, kept {keep:?}"
    );
    // Whatever the model says, mode 0's oracles hold for the same text.
    raw(h, &presentation);
}

fuzz_target!(|data: &[u8]| {
    let h = harness();
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        if let Ok(text) = core::str::from_utf8(rest) {
            raw(h, text);
        }
    } else {
        built(h, rest);
    }
});
