//! Interop: presentations made by `tacit_protocol::sd_jwt` checked by an independent
//! implementation, the npm package `@sd-jwt/sd-jwt-vc` (pinned in `interop/package-lock.json`),
//! through `interop/verify.mjs`. Accepted as produced; refused when a disclosure is altered, the
//! `aud` or `nonce` differs, the KB-JWT is missing, stale or from the future, the credential has
//! expired, or the issuer key is unknown. Every verdict is also compared with our own
//! `verify_presentation`. Both accept both ECDSA S forms (WebCrypto does not normalise S, so
//! about half of the wallet's KB-JWT signatures are high-S). Presentations made by the wallet in
//! Chromium go through the same script in `tests/tests/credential_interop.rs`.
//!
//! Needs `node` and `npm` (fails with the install command when missing; never skipped). The
//! first run installs `interop/node_modules` with `npm ci` (from npm's cache when offline).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use p256::ecdsa::SigningKey;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tacit_protocol::sd_jwt::*;
use wallet_core::Timestamp;

mod sd_jwt_fixtures;
use sd_jwt_fixtures::*;

const KID: &str = "2026-05";

#[path = "../../interop/node.rs"]
mod node;

struct Fixture {
    issuer: SigningKey,
    holder: SigningKey,
    credential: Credential,
}

fn fixture() -> Fixture {
    let issuer = key("tacit/sd-jwt-interop/issuer");
    let holder = key("tacit/sd-jwt-interop/holder");
    let claims = income_claims(&holder);
    let disclosable: Vec<(String, Value)> = (2..=40)
        .map(|i| {
            (
                format!("income_below_{}", i * 5000),
                json!(i * 5000 > 27_500),
            )
        })
        .collect();
    let salts: Vec<[u8; 16]> = (0..disclosable.len())
        .map(|i| {
            let mut s = [0u8; 16];
            s.copy_from_slice(&Sha256::digest(format!("salt {i}").as_bytes())[..16]);
            s
        })
        .collect();
    let text = issue(&issuer, KID, &claims, &disclosable, &salts).unwrap();
    Fixture {
        issuer,
        holder,
        credential: Credential::parse(&text).unwrap(),
    }
}

struct Case {
    id: &'static str,
    presentation: String,
    jwks: Jwks,
    aud: &'static str,
    nonce: &'static str,
    now: Timestamp,
    accept: bool,
    /// For a refusal: whether the library itself refuses (else `verify.mjs`'s own check does,
    /// for what the library leaves to its caller: `aud`, KB `iat` age, pinned `kid`, RFC 9901
    /// §7.1 unreferenced disclosures).
    by_library: bool,
}

impl Case {
    fn json(&self) -> Value {
        json!({
            "id": self.id,
            "presentation": self.presentation,
            "issuer_jwks": serde_json::from_str::<Value>(&self.jwks.to_json()).unwrap(),
            "iss": ISS,
            "aud": self.aud,
            "nonce": self.nonce,
            "now": self.now.millis() / 1000,
            "max_kb_age_seconds": DEFAULT_MAX_KB_AGE_MS / 1000,
        })
    }
    fn ours(&self) -> Result<VerifiedPresentation, SdJwtError> {
        let trusted = [TrustedIssuer {
            iss: ISS.into(),
            jwks: self.jwks.clone(),
        }];
        verify_presentation(
            &self.presentation,
            &trusted,
            self.aud,
            self.nonce,
            self.now,
            DEFAULT_MAX_KB_AGE_MS,
        )
    }
}

#[test]
fn node_sd_jwt_vc_agrees_with_our_presentations() {
    let f = fixture();
    let good_jwks = jwks_with(KID, &f.issuer);
    let keep = ["income_below_30000"];
    let at = |t: Timestamp| present(&f.credential, &keep, &f.holder, AUD, NONCE, t).unwrap();
    let good = at(now());

    // An altered disclosure (value flipped), KB-JWT left as signed.
    let segments: Vec<&str> = good.split('~').collect();
    let d = Disclosure::decode(segments[1]).unwrap();
    let flipped = Disclosure {
        value: json!(false),
        ..d
    }
    .encode();
    let altered = good.replacen(segments[1], &flipped, 1);
    // The same alteration with the KB-JWT re-signed by the holder over the altered text.
    let altered_without = format!("{}~{flipped}~", segments[0]);
    let input = kb_jwt_signing_input(AUD, NONCE, now(), &altered_without);
    let sig: p256::ecdsa::Signature =
        p256::ecdsa::signature::Signer::sign(&f.holder, input.as_bytes());
    let altered_resigned = finish_presentation(&altered_without, &input, &sig.to_bytes().into());
    // A disclosure the holder did not present, appended after signing.
    let other = presentation_without_kb(&f.credential, &["income_below_35000"]).unwrap();
    let extra_d = other.split('~').nth(1).unwrap();
    let kb = segments.last().unwrap();
    let extra = format!("{}~{}~{extra_d}~{kb}", segments[0], segments[1]);

    let base = |id, presentation: String, accept| Case {
        id,
        presentation,
        jwks: good_jwks.clone(),
        aud: AUD,
        nonce: NONCE,
        now: now(),
        accept,
        by_library: true,
    };
    let cases = vec![
        base("as produced", good.clone(), true),
        base("altered disclosure", altered, false),
        Case {
            by_library: false,
            ..base("altered disclosure, KB re-signed", altered_resigned, false)
        },
        base("extra disclosure", extra, false),
        Case {
            aud: "http://127.0.0.1:8082",
            by_library: false,
            ..base("other aud", good.clone(), false)
        },
        Case {
            nonce: "ffffffffffffffffffffffffffffffff",
            ..base("other nonce", good.clone(), false)
        },
        base(
            "missing KB-JWT",
            presentation_without_kb(&f.credential, &keep).unwrap(),
            false,
        ),
        Case {
            by_library: false,
            ..base("stale KB-JWT", at(now().plus_millis(-10 * 60_000)), false)
        },
        Case {
            by_library: false,
            ..base("future KB-JWT", at(now().plus_millis(10 * 60_000)), false)
        },
        Case {
            jwks: jwks_with("another-kid", &f.issuer),
            by_library: false,
            ..base("unknown issuer kid", good.clone(), false)
        },
        Case {
            jwks: jwks_with(KID, &key("impostor")),
            ..base("unknown issuer key", good.clone(), false)
        },
        Case {
            now: Timestamp::from_millis(IAT_MS + 31 * DAY_MS),
            ..base(
                "expired credential",
                at(Timestamp::from_millis(IAT_MS + 31 * DAY_MS)),
                false,
            )
        },
        base(
            "no disclosure",
            present(&f.credential, &[], &f.holder, AUD, NONCE, now()).unwrap(),
            true,
        ),
    ];

    let verdicts = node::verify(&cases.iter().map(Case::json).collect::<Vec<_>>());
    let mut failures = Vec::new();
    for (case, verdict) in cases.iter().zip(&verdicts) {
        assert_eq!(verdict["id"], case.id);
        let node_accepts = verdict["verdict"] == "accepted";
        let ours = case.ours();
        if node_accepts != case.accept {
            failures.push(format!(
                "{}: @sd-jwt/sd-jwt-vc said {verdict}, expected {}",
                case.id,
                if case.accept { "accepted" } else { "refused" }
            ));
        }
        let by_script = verdict["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("script:"));
        if !case.accept && !node_accepts && by_script == case.by_library {
            failures.push(format!(
                "{}: refused by {} ({verdict}), expected by {}",
                case.id,
                if by_script {
                    "verify.mjs"
                } else {
                    "the library"
                },
                if case.by_library {
                    "the library"
                } else {
                    "verify.mjs"
                }
            ));
        }
        if ours.is_ok() != case.accept {
            failures.push(format!("{}: ours said {ours:?}", case.id));
        }
        if let (true, Ok(v)) = (node_accepts, &ours) {
            let node_disclosed: Map<String, Value> =
                serde_json::from_value(verdict["disclosed"].clone()).unwrap();
            if node_disclosed != v.disclosed || verdict["iss"] != ISS || verdict["vct"] != VCT {
                failures.push(format!(
                    "{}: node read {verdict}, we read {:?}",
                    case.id, v.disclosed
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // One pinned key instead of a key set (`issuer_jwk`): the same verdicts for the right key and
    // for an impostor's.
    let mut single = cases[0].json();
    single["issuer_jwk"] = serde_json::to_value(jwk_of(&f.issuer)).unwrap();
    single.as_object_mut().unwrap().remove("issuer_jwks");
    let mut impostor = single.clone();
    impostor["issuer_jwk"] = serde_json::to_value(jwk_of(&key("impostor"))).unwrap();
    let v = node::verify(&[single, impostor]);
    assert_eq!(v[0]["verdict"], "accepted", "{}", v[0]);
    assert_eq!(v[1]["verdict"], "refused", "{}", v[1]);
    assert_eq!(
        verdicts[0]["disclosed"],
        json!({"income_below_30000": true}),
        "the independent verifier sees exactly the one disclosure"
    );
}

/// The other direction: a credential issued and presented by `@sd-jwt/sd-jwt-vc`
/// (`interop/issue.mjs`) parses and verifies with ours, disclosing exactly what it presented; and
/// our refusals still hold on its output.
#[test]
fn our_verifier_accepts_node_sd_jwt_vc_presentations() {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let issuer = key("tacit/sd-jwt-interop/node-issuer");
    let holder = key("tacit/sd-jwt-interop/node-holder");
    let private = |k: &SigningKey| {
        let mut v = serde_json::to_value(jwk_of(k)).unwrap();
        v["d"] = json!(URL_SAFE_NO_PAD.encode(k.to_bytes()));
        v
    };
    let input = json!({
        "issuer_private_jwk": private(&issuer),
        "kid": KID,
        "holder_private_jwk": private(&holder),
        "payload": {
            "iss": ISS, "vct": VCT, "iat": IAT_MS / 1000, "exp": (IAT_MS + 30 * DAY_MS) / 1000,
            "currency": "EUR",
            "income_below_25000": false, "income_below_30000": true, "income_below_35000": true,
        },
        "disclosable": ["income_below_25000", "income_below_30000", "income_below_35000"],
        "present": ["income_below_30000"],
        "aud": AUD, "nonce": NONCE, "kb_iat": now().millis() / 1000,
    });
    let made = node::run("issue.mjs", &input);
    let credential_text = made["credential"].as_str().unwrap();
    let presentation = made["presentation"].as_str().unwrap();

    let credential = Credential::parse(credential_text).unwrap();
    let jwks = jwks_with(KID, &issuer);
    credential.verify_issuer(&jwks, now()).unwrap();
    assert_eq!(credential.iss(), ISS);
    assert_eq!(credential.holder_key(), holder.verifying_key());
    assert_eq!(credential.disclosures().len(), 3);
    assert_eq!(
        credential.disclosure("income_below_30000").unwrap().value,
        json!(true)
    );
    assert_eq!(credential.plain().get("currency"), Some(&json!("EUR")));

    let trusted = [TrustedIssuer {
        iss: ISS.into(),
        jwks,
    }];
    let verify = |text: &str, aud: &str, nonce: &str| {
        verify_presentation(text, &trusted, aud, nonce, now(), DEFAULT_MAX_KB_AGE_MS)
    };
    let v = verify(presentation, AUD, NONCE).unwrap();
    assert_eq!(
        v.disclosed,
        json!({"income_below_30000": true})
            .as_object()
            .cloned()
            .unwrap()
    );
    assert_eq!(
        verify(presentation, "http://127.0.0.1:8082", NONCE),
        Err(SdJwtError::WrongAudience)
    );
    assert_eq!(
        verify(presentation, AUD, "other"),
        Err(SdJwtError::WrongNonce)
    );
    let without_kb = &presentation[..=presentation.rfind('~').unwrap()];
    assert_eq!(
        verify(without_kb, AUD, NONCE),
        Err(SdJwtError::MissingKeyBinding)
    );
    // Our own presentation from the library's credential verifies too.
    let ours = present(
        &credential,
        &["income_below_35000"],
        &holder,
        AUD,
        NONCE,
        now(),
    )
    .unwrap();
    assert_eq!(
        verify(&ours, AUD, NONCE).unwrap().disclosed,
        json!({"income_below_35000": true})
            .as_object()
            .cloned()
            .unwrap()
    );
}

/// `r || n - s` for a base64url P1363 signature: the other of the two valid encodings.
fn other_s(signature_b64: &str) -> String {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let bytes = URL_SAFE_NO_PAD.decode(signature_b64).unwrap();
    let signature = p256::ecdsa::Signature::from_slice(&bytes).unwrap();
    let (r, s) = signature.split_scalars();
    let flipped = p256::ecdsa::Signature::from_scalars(r, -s).unwrap();
    URL_SAFE_NO_PAD.encode(flipped.to_bytes())
}

/// `jws` with its signature replaced by the other S form.
fn with_other_s(jws: &str) -> String {
    let (input, signature) = jws.rsplit_once('.').unwrap();
    format!("{input}.{}", other_s(signature))
}

/// WebCrypto's ECDSA does not normalise S, so about half of the wallet's key-binding signatures
/// are "high-S"; issuers on other stacks may sign high-S too. Both verifiers accept both forms of
/// the KB-JWT signature and of the issuer signature, and both still refuse a flipped S on a
/// signature over other bytes.
#[test]
fn both_signature_forms_verify_in_both_implementations() {
    let f = fixture();
    let jwks = jwks_with(KID, &f.issuer);
    let keep = ["income_below_30000"];
    let good = present(&f.credential, &keep, &f.holder, AUD, NONCE, now()).unwrap();
    let (without_kb, kb) = good.split_at(good.rfind('~').unwrap() + 1);
    let kb_flipped = format!("{without_kb}{}", with_other_s(kb));
    assert_ne!(kb_flipped, good);

    // The issuer JWT with the other S, then presented as usual (a fresh KB-JWT over it).
    let issuer_jwt = f.credential.issuer_jwt();
    let credential_text = presentation_without_kb(&f.credential, &[])
        .unwrap()
        .replacen(issuer_jwt, &with_other_s(issuer_jwt), 1);
    let mut full = credential_text.clone();
    for d in f.credential.disclosures() {
        let one = presentation_without_kb(&f.credential, &[d.name.as_str()]).unwrap();
        full.push_str(one.rsplit('~').nth(1).unwrap());
        full.push('~');
    }
    let issuer_flipped_credential = Credential::parse(&full).unwrap();
    assert_ne!(issuer_flipped_credential.issuer_jwt(), issuer_jwt);
    let issuer_flipped = present(
        &issuer_flipped_credential,
        &keep,
        &f.holder,
        AUD,
        NONCE,
        now(),
    )
    .unwrap();
    // A flipped S is still a signature over the same bytes only: over other bytes it fails.
    let other_nonce = present(&f.credential, &keep, &f.holder, AUD, "another", now()).unwrap();
    let (other_without, other_kb) = other_nonce.split_at(other_nonce.rfind('~').unwrap() + 1);
    let (other_input, _) = other_kb.rsplit_once('.').unwrap();
    let (_, flipped_sig) = with_other_s(kb)
        .rsplit_once('.')
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .unwrap();
    let grafted = format!("{other_without}{other_input}.{flipped_sig}");

    let case = |id: &str, presentation: &str| {
        json!({
            "id": id,
            "presentation": presentation,
            "issuer_jwks": serde_json::from_str::<Value>(&jwks.to_json()).unwrap(),
            "iss": ISS, "aud": AUD, "nonce": NONCE,
            "now": now().millis() / 1000,
        })
    };
    let verdicts = node::verify(&[
        case("as produced", &good),
        case("KB-JWT with the other S", &kb_flipped),
        case("issuer JWT with the other S", &issuer_flipped),
    ]);
    let trusted = [TrustedIssuer {
        iss: ISS.into(),
        jwks: jwks.clone(),
    }];
    let ours = |text: &str, nonce: &str| {
        verify_presentation(text, &trusted, AUD, nonce, now(), DEFAULT_MAX_KB_AGE_MS)
    };
    for (verdict, text) in verdicts.iter().zip([&good, &kb_flipped, &issuer_flipped]) {
        assert_eq!(verdict["verdict"], "accepted", "{verdict}");
        assert_eq!(verdict["disclosed"], json!({"income_below_30000": true}));
        let v = ours(text, NONCE).unwrap_or_else(|e| panic!("{}: ours {e:?}", verdict["id"]));
        assert_eq!(
            Value::Object(v.disclosed),
            json!({"income_below_30000": true})
        );
    }
    assert_eq!(
        ours(&grafted, "another"),
        Err(SdJwtError::BadKeyBindingSignature)
    );
    let v = node::verify(&[json!({
        "id": "grafted", "presentation": grafted,
        "issuer_jwks": serde_json::from_str::<Value>(&jwks.to_json()).unwrap(),
        "iss": ISS, "aud": AUD, "nonce": "another", "now": now().millis() / 1000,
    })]);
    assert_eq!(v[0]["verdict"], "refused", "{}", v[0]);
}
