//! Interop end to end: SD-JWT VC presentations **made by the wallet in Chromium** (its holder
//! keys are non-extractable WebCrypto keys; the KB-JWT is signed in the page) checked by an
//! independent implementation, the npm package `@sd-jwt/sd-jwt-vc` (pinned in
//! `interop/package-lock.json`), through `interop/verify.mjs`, with the keys the issuer publishes
//! at `/.well-known/jwt-vc-issuer`.
//!
//! Two presentations from one wallet holding Ana's credentials: income below 30,000.00 EUR from a
//! tax office (for a housing audience) and age 18 or over from a civil registry (for a pharmacy
//! audience), each issued by an in-process `tacit-issuer` (`TestIssuer`). Each is accepted as
//! produced, disclosing exactly the one predicate the site asked about; refused
//! when a disclosure is altered, the `aud` or the `nonce` differs, the KB-JWT is missing or
//! stale, or the issuer key is unknown (another key under the issuer's `kid`, or a `kid` the
//! pinned set does not list). Every verdict is compared with our own `verify_presentation`,
//! which must refuse for the expected reason (its error code), and node's refusal must come from
//! the expected side (the library or the script's own checks, see `verify.mjs`).
//!
//! The same matrix also runs on a presentation made natively (`mutation_matrix_on_a_native_
//! presentation`), so a refusal of the wallet's presentation can't pass for the wrong reason
//! unnoticed.
//!
//! Needs `node` and `npm` (fails with the install command; never skipped), Chromium with WebMCP
//! and the built wallet (`cargo xtask build-web`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::SigningKey;
use serde_json::{Map, Value, json};
use signer::{KeyStore, system_now};
use tacit_e2e::Browser;
use tacit_e2e::issuer_proc::TestIssuer;
use tacit_e2e::signer_proc::TestSigner;
use tacit_e2e::wallet::{Wallet, housing_policy};
use tacit_protocol::request_auth::InstallKey;
use tacit_protocol::sd_jwt::{
    Credential, DEFAULT_MAX_KB_AGE_MS, Disclosure, IssuedClaims, IssuerKey, Jwks, SdJwtError,
    TrustedIssuer, VerifiedPresentation, issue, present, verify_presentation,
};
use wallet_core::Timestamp;

const AUDIENCE: &str = "http://127.0.0.1:8081";
const INCOME_VCT: &str = "https://tacit.example/vct/income";
const AGE_VCT: &str = "https://tacit.example/vct/age";
/// The housing policy's limit, 30,000.00 EUR: a ladder step, so the credential answers it.
const STEP: &str = "income_below_30000";

/// One browser test at a time: they share two cores and Argon2id at 64 MiB.
#[path = "../../interop/node.rs"]
mod node;

/// What a verifier is told: the presentation's issuer, its pinned keys, the audience and nonce
/// the presentation was made for, and the time it was made.
struct Made {
    presentation: String,
    iss: String,
    jwks: Jwks,
    aud: String,
    nonce: String,
    now: Timestamp,
    /// What must be disclosed: exactly this.
    disclosed: Map<String, Value>,
    vct: String,
}

/// Who must refuse a case in node: the library, or `verify.mjs`'s own checks (for what the
/// library leaves to its caller: `aud`, KB `iat` age, pinned `kid`).
#[derive(Clone, Copy, PartialEq, Debug)]
enum By {
    Library,
    Script,
}

struct Case {
    id: &'static str,
    presentation: String,
    jwks: Jwks,
    aud: String,
    nonce: String,
    now: Timestamp,
    /// `None`: accepted; else our refusal and who refuses in node.
    refusal: Option<(SdJwtError, By)>,
}

impl Case {
    fn json(&self, iss: &str) -> Value {
        json!({
            "id": self.id,
            "presentation": self.presentation,
            "issuer_jwks": serde_json::from_str::<Value>(&self.jwks.to_json()).unwrap(),
            "iss": iss,
            "aud": self.aud,
            "nonce": self.nonce,
            "now": self.now.millis() / 1000,
            "max_kb_age_seconds": DEFAULT_MAX_KB_AGE_MS / 1000,
        })
    }

    fn ours(&self, iss: &str) -> Result<VerifiedPresentation, SdJwtError> {
        let trusted = [TrustedIssuer {
            iss: iss.to_owned(),
            jwks: self.jwks.clone(),
        }];
        verify_presentation(
            &self.presentation,
            &trusted,
            &self.aud,
            &self.nonce,
            self.now,
            DEFAULT_MAX_KB_AGE_MS,
        )
    }
}

fn impostor_key() -> SigningKey {
    SigningKey::from_slice(&[0x77; 32]).unwrap()
}

/// The cases: as produced, and each alteration a relying site must refuse.
fn cases(made: &Made) -> Vec<Case> {
    let p = &made.presentation;
    let segments: Vec<&str> = p.split('~').collect();
    assert!(
        segments.len() >= 3,
        "a presentation with at least one disclosure and a KB-JWT: {p}"
    );
    // The first disclosure with its value flipped (same salt and name), the KB-JWT as signed.
    let d = Disclosure::decode(segments[1]).unwrap();
    let flipped = Disclosure {
        value: match d.value {
            Value::Bool(b) => Value::Bool(!b),
            other => json!([other]),
        },
        ..d
    }
    .encode();
    let altered = p.replacen(segments[1], &flipped, 1);
    let without_kb = p[..=p.rfind('~').unwrap()].to_owned();
    let kid = Credential::parse(&format!("{}~", segments[0]))
        .unwrap()
        .kid()
        .to_owned();
    let impostor = Jwks::new(vec![IssuerKey {
        kid: kid.clone(),
        key: *impostor_key().verifying_key(),
    }])
    .unwrap();
    let renamed = Jwks::new(
        made.jwks
            .keys()
            .iter()
            .map(|k| IssuerKey {
                kid: format!("not-{}", k.kid),
                key: k.key,
            })
            .collect(),
    )
    .unwrap();

    let base = |id, presentation: String, refusal| Case {
        id,
        presentation,
        jwks: made.jwks.clone(),
        aud: made.aud.clone(),
        nonce: made.nonce.clone(),
        now: made.now,
        refusal,
    };
    vec![
        base("as produced", p.clone(), None),
        base(
            "altered disclosure",
            altered,
            Some((SdJwtError::UnknownDisclosure, By::Library)),
        ),
        Case {
            aud: "https://elsewhere.example".into(),
            ..base(
                "other aud",
                p.clone(),
                Some((SdJwtError::WrongAudience, By::Script)),
            )
        },
        Case {
            nonce: format!("{}x", made.nonce),
            ..base(
                "other nonce",
                p.clone(),
                Some((SdJwtError::WrongNonce, By::Library)),
            )
        },
        base(
            "missing KB-JWT",
            without_kb,
            Some((SdJwtError::MissingKeyBinding, By::Library)),
        ),
        Case {
            now: made.now.plus_millis(DEFAULT_MAX_KB_AGE_MS + 60_000),
            ..base(
                "stale KB-JWT",
                p.clone(),
                Some((SdJwtError::StaleKeyBinding, By::Script)),
            )
        },
        Case {
            jwks: impostor,
            ..base(
                "unknown issuer key (impostor under the kid)",
                p.clone(),
                Some((SdJwtError::BadIssuerSignature, By::Library)),
            )
        },
        Case {
            jwks: renamed,
            ..base(
                "unknown issuer key (kid not pinned)",
                p.clone(),
                Some((SdJwtError::UnknownKey, By::Script)),
            )
        },
    ]
}

/// Runs every case through node and ours; panics with every disagreement.
fn check_matrix(made: &Made) {
    let cases = cases(made);
    let verdicts = node::verify(&cases.iter().map(|c| c.json(&made.iss)).collect::<Vec<_>>());
    let mut failures = Vec::new();
    for (case, verdict) in cases.iter().zip(&verdicts) {
        assert_eq!(verdict["id"], case.id);
        let node_accepts = verdict["verdict"] == "accepted";
        let ours = case.ours(&made.iss);
        match (&case.refusal, node_accepts, &ours) {
            (None, true, Ok(v)) => {
                let node_disclosed: Map<String, Value> =
                    serde_json::from_value(verdict["disclosed"].clone()).unwrap();
                if node_disclosed != made.disclosed
                    || v.disclosed != made.disclosed
                    || verdict["iss"] != made.iss.as_str()
                    || verdict["vct"] != made.vct.as_str()
                    || v.iss != made.iss
                    || v.vct != made.vct
                {
                    failures.push(format!(
                        "{}: node read {verdict}, we read {v:?}, expected {:?} from {} ({})",
                        case.id, made.disclosed, made.iss, made.vct
                    ));
                }
            }
            (None, _, _) => failures.push(format!(
                "{}: expected acceptance; node said {verdict}, ours {ours:?}",
                case.id
            )),
            (Some((error, by)), false, Err(e)) => {
                let by_script = verdict["error"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("script:"));
                let node_by = if by_script { By::Script } else { By::Library };
                if e != error || node_by != *by {
                    failures.push(format!(
                        "{}: expected {} by ours and a refusal by {by:?} in node; ours said {}, \
                         node {verdict}",
                        case.id,
                        error.code(),
                        e.code()
                    ));
                }
            }
            (Some((error, _)), _, _) => failures.push(format!(
                "{}: expected a refusal ({}); node said {verdict}, ours {ours:?}",
                case.id,
                error.code()
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn ms_now() -> Timestamp {
    Timestamp::from_millis(system_now().millis())
}

/// The matrix on a presentation made natively with `present`, the same shape as the wallet's.
#[test]
fn mutation_matrix_on_a_native_presentation() {
    let issuer = SigningKey::from_slice(&[0x21; 32]).unwrap();
    let holder = SigningKey::from_slice(&[0x22; 32]).unwrap();
    let iss = "http://127.0.0.1:8791";
    let now = ms_now();
    let mut plain = Map::new();
    plain.insert("currency".into(), json!("EUR"));
    let claims = IssuedClaims {
        iss: iss.into(),
        vct: INCOME_VCT.into(),
        iat: now.plus_millis(-60_000),
        exp: now.plus_millis(30 * 86_400_000),
        cnf_jwk: InstallKey::from_verifying_key(*holder.verifying_key()).to_jwk(),
        plain,
    };
    let disclosable: Vec<(String, Value)> = (2..=40u32)
        .map(|i| {
            (
                format!("income_below_{}", i * 5000),
                json!(i * 5000 > 28_500),
            )
        })
        .collect();
    let salts: Vec<[u8; 16]> = (0..disclosable.len())
        .map(|i| [u8::try_from(i).unwrap(); 16])
        .collect();
    let kid = InstallKey::from_verifying_key(*issuer.verifying_key())
        .id()
        .as_str()
        .to_owned();
    let text = issue(&issuer, &kid, &claims, &disclosable, &salts).unwrap();
    let credential = Credential::parse(&text).unwrap();
    let nonce = "n-native-0123456789";
    let presentation = present(&credential, &[STEP], &holder, AUDIENCE, nonce, now).unwrap();
    check_matrix(&Made {
        presentation,
        iss: iss.into(),
        jwks: Jwks::new(vec![IssuerKey {
            kid,
            key: *issuer.verifying_key(),
        }])
        .unwrap(),
        aud: AUDIENCE.into(),
        nonce: nonce.into(),
        now,
        disclosed: json!({ STEP: true }).as_object().cloned().unwrap(),
        vct: INCOME_VCT.into(),
    });
}

/// The KB-JWT's payload, decoded.
fn kb_payload(presentation: &str) -> Value {
    let kb = presentation.rsplit('~').next().unwrap();
    let payload = kb.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

/// The agent asks `policy`'s questions, the person grants every one for ten minutes, the agent
/// asks each and drafts, the person releases; the page signs the KB-JWT with a holder key and the
/// signer signs the receipt. `check_proposal`'s presentations, and when they were made.
fn release_with_proofs(
    wallet: &mut Wallet<'_>,
    policy: Value,
    tools: usize,
) -> (Vec<String>, Timestamp) {
    let audience = policy["origin"].as_str().unwrap().to_owned();
    let nonce = policy["nonce"].as_str().unwrap().to_owned();
    let request = wallet.request(policy);
    for tool in wallet.grant(&request, "600000", tools) {
        assert_eq!(wallet.call(&tool, json!({}))["result"]["satisfied"], true);
    }
    let proposal = wallet.draft(&audience, &nonce);
    wallet.release(&proposal, true);
    let out = wallet.wait_signed_output(&proposal);
    let made_at = ms_now();
    let presentations = out["result"]["presentations"]
        .as_array()
        .unwrap_or_else(|| panic!("check_proposal returns presentations once signed: {out}"))
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    (presentations, made_at)
}

/// The KB-JWT names this audience and nonce and is dated about `made_at`; one disclosure.
fn assert_fresh_for(presentation: &str, audience: &str, nonce: &str, made_at: Timestamp) {
    let kb = kb_payload(presentation);
    assert_eq!(kb["aud"], audience, "{kb}");
    assert_eq!(kb["nonce"], nonce, "{kb}");
    let iat_ms = kb["iat"].as_i64().unwrap() * 1000;
    assert!(
        (made_at.millis() - 120_000..=made_at.millis() + 1_000).contains(&iat_ms),
        "KB-JWT iat {iat_ms} is not about now ({})",
        made_at.millis()
    );
    assert_eq!(
        presentation.split('~').count(),
        3,
        "exactly one disclosure: {presentation}"
    );
}

/// The key set an issuer publishes at `/.well-known/jwt-vc-issuer`, checked to name it.
fn published_jwks(issuer: &TestIssuer) -> Jwks {
    let metadata: Value = serde_json::from_str(issuer.metadata_json()).unwrap();
    assert_eq!(metadata["issuer"], issuer.origin().as_str());
    Jwks::parse(metadata["jwks"].to_string().as_bytes()).unwrap()
}

#[test]
fn wallet_presentations_pass_an_independent_verifier() {
    let _serial = tacit_e2e::serial();
    node::ensure_node_modules();
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let signer =
        TestSigner::start(KeyStore::make(system_now()).unwrap(), &[&server.origin()]).unwrap();
    let tax = TestIssuer::tax_office().unwrap();
    let registry = TestIssuer::civil_registry().unwrap();
    let browser = Browser::launch().unwrap();
    let mut wallet = Wallet::open(&browser, &server, "");
    wallet.enrol(&signer.url(), &signer.enrolment_code().unwrap());
    wallet.create_profile();
    wallet.add_credential(&tax.origin(), &tax.code_for("Ana").unwrap());
    wallet.add_credential(&registry.origin(), &registry.code_for("Ana").unwrap());

    // Housing: income below 30,000.00 EUR is proven by the tax office; the district is the
    // person's word (no presentation).
    let nonce = "n-credential-interop-income";
    let (presentations, made_at) =
        release_with_proofs(&mut wallet, housing_policy(AUDIENCE, nonce), 2);
    assert_eq!(presentations.len(), 1, "{presentations:?}");
    assert_fresh_for(&presentations[0], AUDIENCE, nonce, made_at);
    check_matrix(&Made {
        presentation: presentations[0].clone(),
        iss: tax.origin(),
        jwks: published_jwks(&tax),
        aud: AUDIENCE.into(),
        nonce: nonce.into(),
        now: made_at,
        // Ana: 28,500.00 EUR, below 30,000.
        disclosed: json!({ STEP: true }).as_object().cloned().unwrap(),
        vct: INCOME_VCT.into(),
    });

    // A pharmacy's age question, proven by the civil registry, for another audience.
    let pharmacy = "http://127.0.0.1:8082";
    let nonce = "n-credential-interop-age";
    let policy = json!({
        "origin": pharmacy,
        "nonce": nonce,
        "site_name": "Nordstadt Pharmacy",
        "purpose": "Age check for an over-the-counter medicine",
        "claims": [{ "kind": "age_at_least", "years": 18 }]
    });
    let (presentations, made_at) = release_with_proofs(&mut wallet, policy, 1);
    assert_eq!(presentations.len(), 1, "{presentations:?}");
    assert_fresh_for(&presentations[0], pharmacy, nonce, made_at);
    check_matrix(&Made {
        presentation: presentations[0].clone(),
        iss: registry.origin(),
        jwks: published_jwks(&registry),
        aud: pharmacy.into(),
        nonce: nonce.into(),
        now: made_at,
        // Ana: born 1990-04-12.
        disclosed: json!({ "age_equal_or_over_18": true })
            .as_object()
            .cloned()
            .unwrap(),
        vct: AGE_VCT.into(),
    });
}
