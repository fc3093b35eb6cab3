//! An issuer's `POST /v1/credentials` answer into the wallet:
//! `capability_gate::credentials::Credentials::accept_batch`, for an income issuer (a tax office)
//! or an age issuer (a civil registry), into an empty store or one that already holds a batch
//! from that issuer, with a fixed issuer key set, fixed holder keys and a fixed time.
//!
//! The first byte picks the case: bit 0 the mode, bit 1 the issuer (income or age), bit 2 whether
//! the store already holds a batch of 2 from that issuer.
//! - mode 0: the rest is the answer's body, sent for holder keys 0..10. Nobody but the harness
//!   holds the issuer key, so only the harness's own credentials can be accepted.
//! - mode 1: the harness issues a batch from a recipe (the rest): how many holder keys (0 to 21),
//!   the person's income or age, and one change — to one credential: another person's value
//!   (tagging), another `iss`, `vct`, currency, `exp`, an expired `exp`, another signing key, an
//!   unknown `kid`, a `cnf` bound to the next holder key, an extra plain claim; or to the answer:
//!   another `issuer`, a malformed refresh token, one holder key fewer than credentials, a holder
//!   key sent twice. A model predicts the exact `CredentialError`, or acceptance.
//!
//! Asserts, besides never panicking:
//! - a refused batch changes nothing (the stored JSON is byte-identical);
//! - an accepted batch is what the wallet promises to keep: one credential per holder key, each
//!   checked here independently (parses, verifies under the issuer's keys, `iss` = the issuer
//!   asked, its `vct`, not expired, bound to the holder key sent at its position, only the
//!   currency as plain claim, only boolean predicates of the issuer's attribute, consistent), and
//!   every credential of the batch saying the same thing (same `kid`, `iat`, `exp`, plain claims,
//!   predicate names and values: no tagging);
//! - afterwards the store answers every predicate the batch carries with the batch's value and
//!   this issuer, nothing off the ladder, nothing in another currency; it survives its own JSON;
//!   `take_for` hands out a credential that, signed by the holder key it names, verifies as a
//!   presentation disclosing exactly that predicate, and one proof fewer is left.
//!
//! Seeds (`fuzz/seeds/credential_batch/`): `answer-*` are mode-0 answers made by the harness;
//! `built-*` mode-1 recipes. Regenerate the answers with
//! `TACIT_FUZZ_WRITE_SEEDS=fuzz/seeds/credential_batch <binary> -runs=1 <any seed>`.
#![no_main]

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use capability_gate::credentials::{CredentialError, Credentials, IssuerInfo};
use libfuzzer_sys::fuzz_target;
use p256::ecdsa::SigningKey;
use serde_json::{Map, Value, json};
use tacit_fuzz::recipe::Recipe;
use tacit_protocol::predicates::{self, AGE_THRESHOLDS};
use tacit_protocol::request_auth::{InstallKey, Jwk};
use tacit_protocol::sd_jwt::{
    Credential, DEFAULT_MAX_KB_AGE_MS, IssuedClaims, IssuerKey, Jwks, SdJwtError, TrustedIssuer,
    issue, present, verify_presentation,
};
use wallet_core::{Attribute, Claim, Currency, Money, Origin, Timestamp};

const TAX: &str = "http://127.0.0.1:8791";
const REGISTRY: &str = "http://127.0.0.1:8792";
const KID: &str = "k1";
/// 2026-12-01T10:00:00Z.
const NOW_MS: i64 = 1_796_119_200_000;
const DAY_MS: i64 = 86_400_000;
/// 2026-12-01T00:00:00Z: every credential issued today carries it as `iat`.
const TODAY_MS: i64 = NOW_MS - NOW_MS % DAY_MS;
/// Holder keys 0..21 are for batches; 21 and 22 for the batch already in the store.
const HOLDERS: usize = 23;
const RAW_HOLDERS: usize = 10;

struct Harness {
    issuer: SigningKey,
    stranger: SigningKey,
    holders: Vec<SigningKey>,
    jwks: Jwks,
    income: IssuerInfo,
    age: IssuerInfo,
}

fn key(tag: u8, i: u8) -> SigningKey {
    let mut scalar = [tag; 32];
    scalar[31] = i;
    SigningKey::from_slice(&scalar).expect("a fixed scalar")
}

fn jwk(k: &SigningKey) -> Jwk {
    InstallKey::from_verifying_key(*k.verifying_key()).to_jwk()
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let issuer = key(0x61, 1);
        let jwks = Jwks::new(vec![IssuerKey {
            kid: KID.into(),
            key: *issuer.verifying_key(),
        }])
        .expect("one key");
        let info = |origin: &str, name: &str, attribute| IssuerInfo {
            origin: Origin::parse(origin).expect("origin"),
            name: name.into(),
            attribute,
            vct: capability_gate::credentials::expected_vct(attribute)
                .expect("income and age have a vct")
                .into(),
        };
        let h = Harness {
            issuer,
            stranger: key(0x61, 2),
            holders: (0..HOLDERS)
                .map(|i| key(0x62, u8::try_from(i + 1).expect("few")))
                .collect(),
            jwks,
            income: info(TAX, "Tax Office Nordstadt", Attribute::Income),
            age: info(REGISTRY, "Civil Registry Nordstadt", Attribute::Age),
        };
        if let Some(dir) = std::env::var_os("TACIT_FUZZ_WRITE_SEEDS") {
            write_seeds(&h, std::path::Path::new(&dir));
        }
        h
    })
}

/// The predicates a person's fact gives: income in major units, or age in years.
fn predicates_for(attribute: Attribute, fact: u64) -> Vec<(String, Value)> {
    match attribute {
        Attribute::Income => predicates::income_ladder()
            .map(|step| (predicates::income_claim_name(step), json!(fact < step)))
            .collect(),
        _ => AGE_THRESHOLDS
            .iter()
            .map(|&y| (predicates::age_claim_name(y), json!(fact >= u64::from(y))))
            .collect(),
    }
}

/// One credential as the issuer makes it, with the changes asked for.
#[derive(Clone)]
struct Spec {
    iss: String,
    vct: String,
    currency: Option<String>,
    extra_plain: bool,
    iat_ms: i64,
    exp_ms: i64,
    signer: u8, // 0 issuer, 1 stranger
    kid: String,
    holder: usize,
    fact: u64,
}

fn base_spec(h: &Harness, info: &IssuerInfo, holder: usize, fact: u64) -> Spec {
    let _ = h;
    Spec {
        iss: info.origin.as_str().to_owned(),
        vct: info.vct.clone(),
        currency: (info.attribute == Attribute::Income).then(|| "EUR".to_owned()),
        extra_plain: false,
        // The issuers' daily grid: midnight UTC of today, valid 30 days.
        iat_ms: TODAY_MS,
        exp_ms: TODAY_MS + 30 * DAY_MS,
        signer: 0,
        kid: KID.into(),
        holder,
        fact,
    }
}

/// Issued credentials by recipe: issuing (one ES256 signature and a parse) dominates a run, and
/// most recipes repeat. Bounded; deterministic either way.
fn make(h: &Harness, info: &IssuerInfo, spec: &Spec, salt_tag: u8) -> String {
    thread_local! {
        static MADE: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
    }
    let key = format!(
        "{:?}|{}|{}|{:?}|{}|{}|{}|{}|{}|{}|{}|{salt_tag}",
        info.attribute,
        spec.iss,
        spec.vct,
        spec.currency,
        spec.extra_plain,
        spec.iat_ms,
        spec.exp_ms,
        spec.signer,
        spec.kid,
        spec.holder,
        spec.fact
    );
    if let Some(text) = MADE.with(|m| m.borrow().get(&key).cloned()) {
        return text;
    }
    let text = issue_spec(h, info, spec, salt_tag);
    MADE.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= 4096 {
            m.clear();
        }
        m.insert(key, text.clone());
    });
    text
}

fn issue_spec(h: &Harness, info: &IssuerInfo, spec: &Spec, salt_tag: u8) -> String {
    let mut plain = Map::new();
    if let Some(c) = &spec.currency {
        plain.insert("currency".into(), json!(c));
    }
    if spec.extra_plain {
        plain.insert("given_name".into(), json!("Ana"));
    }
    let claims = IssuedClaims {
        iss: spec.iss.clone(),
        vct: spec.vct.clone(),
        iat: Timestamp::from_millis(spec.iat_ms),
        exp: Timestamp::from_millis(spec.exp_ms),
        cnf_jwk: jwk(&h.holders[spec.holder]),
        plain,
    };
    let disclosable = predicates_for(info.attribute, spec.fact);
    let salts: Vec<[u8; 16]> = (0..disclosable.len())
        .map(|i| {
            let mut s = [salt_tag; 16];
            s[0] = u8::try_from(i).expect("few");
            s[1] = u8::try_from(spec.holder).expect("few");
            s
        })
        .collect();
    let key = if spec.signer == 0 {
        &h.issuer
    } else {
        &h.stranger
    };
    issue(key, &spec.kid, &claims, &disclosable, &salts).expect("issues")
}

fn answer(info: &IssuerInfo, credentials: &[String], refresh: &str, issuer: &str) -> Vec<u8> {
    json!({
        "credentials": credentials,
        "expires_at": NOW_MS + 30 * DAY_MS,
        "refresh_token": refresh,
        "issuer": issuer,
        "issuer_name": info.name,
        "vct": info.vct,
    })
    .to_string()
    .into_bytes()
}

const REFRESH: &str = "rt-0123456789abcdef0123456789abcdef0123456";

/// A store holding a batch of 2 (holder keys 21 and 22) from `info`, for a person with `fact`.
fn prefilled(h: &Harness, info: &IssuerInfo, fact: u64) -> Credentials {
    let texts: Vec<String> = (21..23)
        .map(|i| make(h, info, &base_spec(h, info, i, fact), 0x33))
        .collect();
    let holders: Vec<Jwk> = (21..23).map(|i| jwk(&h.holders[i])).collect();
    let mut store = Credentials::new();
    let body = answer(info, &texts, REFRESH, info.origin.as_str());
    store
        .accept_batch(info, &h.jwks, &body, &holders, now())
        .expect("the prefilled batch is accepted");
    store
}

fn now() -> Timestamp {
    Timestamp::from_millis(NOW_MS)
}

fn write_seeds(h: &Harness, dir: &std::path::Path) {
    std::fs::create_dir_all(dir).expect("seed dir");
    // Ana: 28,500 EUR, 36 years; Ben: 72,000 EUR, 18.
    for (name, info, first, fact, prefix) in [
        ("answer-income-ana", &h.income, 0u8, 28_500u64, 0u8),
        ("answer-income-ben", &h.income, 0, 72_000, 0),
        ("answer-age-ana", &h.age, 2, 36, 0),
        ("answer-age-ben-prefilled", &h.age, 6, 18, 0),
    ] {
        let _ = prefix;
        let texts: Vec<String> = (0..RAW_HOLDERS)
            .map(|i| make(h, info, &base_spec(h, info, i, fact), 0x44))
            .collect();
        let mut bytes = vec![first];
        bytes.extend(answer(info, &texts, REFRESH, info.origin.as_str()));
        std::fs::write(dir.join(format!("{name}.bin")), bytes).expect("write seed");
    }
}

/// Everything the wallet promises about a batch it accepted, checked here on the answer itself.
fn check_accepted(
    h: &Harness,
    info: &IssuerInfo,
    body: &[u8],
    holders: &[Jwk],
) -> BTreeMap<String, bool> {
    let json: Value = serde_json::from_slice(body).expect("an accepted answer is JSON");
    let texts = json["credentials"].as_array().expect("credentials");
    assert_eq!(texts.len(), holders.len(), "one credential per holder key");
    assert!(!texts.is_empty());
    let mut first: Option<(
        String,
        Timestamp,
        Timestamp,
        Map<String, Value>,
        BTreeMap<String, bool>,
    )> = None;
    for (i, text) in texts.iter().enumerate() {
        let c = Credential::parse(text.as_str().expect("text")).expect("parses");
        c.verify_issuer(&h.jwks, now())
            .expect("verifies, not expired");
        assert_eq!(c.iss(), info.origin.as_str());
        assert_eq!(c.vct(), info.vct);
        assert!(c.exp() > now());
        assert_eq!(
            c.holder_jwk(),
            &holders[i],
            "credential {i} bound elsewhere"
        );
        let plain = c.plain().clone();
        match info.attribute {
            Attribute::Income => {
                assert_eq!(plain.len(), 1, "{plain:?}");
                let code = plain["currency"].as_str().expect("currency");
                assert!(Currency::parse(code).is_ok(), "{code}");
            }
            _ => assert!(plain.is_empty(), "{plain:?}"),
        }
        let mut values = BTreeMap::new();
        for d in c.disclosures() {
            let Value::Bool(b) = d.value else {
                panic!("a non-boolean predicate {} was accepted", d.name);
            };
            let prefix = match info.attribute {
                Attribute::Income => predicates::INCOME_PREFIX,
                _ => predicates::AGE_PREFIX,
            };
            assert!(d.name.starts_with(prefix), "{}", d.name);
            values.insert(d.name.clone(), b);
        }
        assert!(!values.is_empty());
        let said = (c.kid().to_owned(), c.iat(), c.exp(), plain, values);
        match &first {
            None => first = Some(said),
            Some(f) => assert!(
                f == &said,
                "credential {i} says something else than the first"
            ),
        }
    }
    first.map(|f| f.4).unwrap_or_default()
}

/// What an accepted store must do with the predicates it now holds.
fn check_store(
    h: &Harness,
    store: &mut Credentials,
    info: &IssuerInfo,
    values: &BTreeMap<String, bool>,
) {
    let origin = &info.origin;
    let again = Credentials::from_json(&store.to_json()).expect("reads its own JSON");
    assert_eq!(&again, store);
    let currency = store.issuer(origin).and_then(|i| i.currency().copied());
    let left = store.left(origin, now());
    assert!(left > 0);
    for (name, value) in values {
        let claim = predicates::claim_for(name, currency.as_ref()).expect("a predicate");
        assert_eq!(
            store.answer(&claim, now()),
            Some((*value, origin.clone())),
            "{name}"
        );
    }
    // Off the ladder, and in another currency: the credential does not answer.
    if info.attribute == Attribute::Income {
        for claim in [
            Claim::income_below(money(3_000_001, "EUR")).expect("claim"),
            Claim::income_below(money(3_000_000, "CHF")).expect("claim"),
        ] {
            if claim_currency_differs_or_off_ladder(&claim, currency.as_ref()) {
                assert_eq!(store.answer(&claim, now()), None, "{claim:?}");
            }
        }
    } else {
        let claim = Claim::age_at_least(19).expect("claim");
        assert_eq!(store.answer(&claim, now()), None);
    }
    // One presentation from the store verifies and discloses exactly its one predicate.
    let Some((name, value)) = values.iter().next() else {
        return;
    };
    let claim = predicates::claim_for(name, currency.as_ref()).expect("a predicate");
    let picked = store
        .take_for(origin, &claim, *value, now())
        .expect("a credential is left");
    assert_eq!(&picked.disclosure, name);
    assert_eq!(store.left(origin, now()), left - 1);
    let holder = h
        .holders
        .iter()
        .find(|k| {
            InstallKey::from_verifying_key(*k.verifying_key())
                .id()
                .as_str()
                == picked.holder_key_id
        })
        .expect("one of the holder keys");
    let credential = Credential::parse(&picked.without_kb).expect("parses");
    let text = present(
        &credential,
        &[name.as_str()],
        holder,
        "http://127.0.0.1:8081",
        "n-fuzz",
        now(),
    )
    .expect("presents");
    let trusted = [TrustedIssuer {
        iss: origin.as_str().to_owned(),
        jwks: h.jwks.clone(),
    }];
    let v = verify_presentation(
        &text,
        &trusted,
        "http://127.0.0.1:8081",
        "n-fuzz",
        now(),
        DEFAULT_MAX_KB_AGE_MS,
    )
    .expect("the store's presentation verifies");
    assert_eq!(v.disclosed.len(), 1);
    assert_eq!(v.disclosed.get(name), Some(&Value::Bool(*value)));
}

fn money(amount_minor: u64, currency: &str) -> Money {
    Money {
        amount_minor,
        currency: Currency::parse(currency).expect("a known currency"),
    }
}

fn claim_currency_differs_or_off_ladder(claim: &Claim, currency: Option<&Currency>) -> bool {
    predicates::disclosure_for(claim, currency).is_none()
}

fn run(
    h: &Harness,
    info: &IssuerInfo,
    store: &mut Credentials,
    body: &[u8],
    holders: &[Jwk],
) -> Result<usize, CredentialError> {
    let before = store.to_json();
    let result = store.accept_batch(info, &h.jwks, body, holders, now());
    match &result {
        Ok(n) => {
            assert_eq!(*n, holders.len());
            let values = check_accepted(h, info, body, holders);
            check_store(h, store, info, &values);
        }
        Err(_) => assert_eq!(store.to_json(), before, "a refused batch changed the store"),
    }
    result
}

fn built(h: &Harness, info: &IssuerInfo, store: &mut Credentials, data: &[u8]) {
    let mut r = Recipe(data);
    let n = usize::from(r.byte() % 22);
    let fact = match info.attribute {
        Attribute::Income => u64::from(u16::from_le_bytes([r.byte(), r.byte()])) * 4,
        _ => u64::from(r.byte() % 100),
    };
    let other_fact = match info.attribute {
        Attribute::Income => u64::from(u16::from_le_bytes([r.byte(), r.byte()])) * 4,
        _ => u64::from(r.byte() % 100),
    };
    let change = r.byte() % 16;
    let j = if n == 0 { 0 } else { usize::from(r.byte()) % n };

    let mut specs: Vec<Spec> = (0..n).map(|i| base_spec(h, info, i, fact)).collect();
    let mut holders: Vec<Jwk> = (0..n).map(|i| jwk(&h.holders[i])).collect();
    let mut refresh = REFRESH.to_owned();
    let mut issuer = info.origin.as_str().to_owned();
    let tagged = |j: usize| CredentialError::Tagged { index: j.max(1) };
    let same_values =
        predicates_for(info.attribute, fact) == predicates_for(info.attribute, other_fact);
    // The model: what accept_batch must answer (None: accepted).
    let mut expected: Option<CredentialError> = None;
    if n > 0 {
        match change {
            1 => {
                specs[j].fact = other_fact;
                if n > 1 && !same_values {
                    expected = Some(tagged(j));
                }
            }
            2 => {
                specs[j].iss = "http://127.0.0.1:8793".into();
                expected = Some(CredentialError::CredentialIssuer { index: j });
            }
            3 => {
                specs[j].vct = "https://tacit.example/vct/other".into();
                expected = Some(CredentialError::CredentialVct { index: j });
            }
            4 => {
                specs[j].currency = match info.attribute {
                    Attribute::Income => Some("CHF".into()),
                    _ => Some("EUR".into()),
                };
                expected = match info.attribute {
                    Attribute::Income if n > 1 => Some(tagged(j)),
                    Attribute::Income => None,
                    _ => Some(CredentialError::UnexpectedClaims { index: j }),
                };
            }
            5 => {
                // Off the daily grid: refused for that, before it is compared with the others.
                specs[j].exp_ms += 1000;
                expected = Some(CredentialError::OffGrid { index: j });
            }
            6 => {
                specs[j].exp_ms = NOW_MS - i64::from(r.byte()) * 1000;
                specs[j].iat_ms = specs[j].exp_ms - DAY_MS;
                expected = Some(CredentialError::Expired { index: j });
            }
            7 => {
                specs[j].signer = 1;
                expected = Some(CredentialError::Invalid {
                    index: j,
                    error: SdJwtError::BadIssuerSignature,
                });
            }
            8 => {
                specs[j].kid = "k2".into();
                expected = Some(CredentialError::Invalid {
                    index: j,
                    error: SdJwtError::UnknownKey,
                });
            }
            9 => {
                specs[j].holder = (j + 1) % HOLDERS;
                expected = Some(CredentialError::HolderKeyMismatch { index: j });
            }
            10 => {
                specs[j].extra_plain = true;
                expected = Some(CredentialError::UnexpectedClaims { index: j });
            }
            11 => {
                issuer = format!("{issuer}/");
                expected = Some(CredentialError::WrongIssuer);
            }
            12 => {
                refresh = String::new();
                expected = Some(CredentialError::BadRefreshToken);
            }
            13 => {
                holders.pop();
                expected = Some(CredentialError::CountMismatch {
                    got: n,
                    sent: n - 1,
                });
            }
            14 if n > 1 => {
                // Holder key j sent twice (in place of key j + 1's slot or j - 1's).
                let k = if j + 1 < n { j + 1 } else { j - 1 };
                holders[k] = holders[j].clone();
                specs[k].holder = specs[j].holder;
                expected = Some(CredentialError::DuplicateHolderKey);
            }
            _ => {}
        }
    }
    let texts: Vec<String> = specs.iter().map(|s| make(h, info, s, 0x55)).collect();
    let body = answer(info, &texts, &refresh, &issuer);
    let expected = if n == 0 {
        Some(CredentialError::EmptyBatch)
    } else if n > 20 && change != 11 {
        Some(CredentialError::TooManyCredentials)
    } else {
        expected
    };
    let got = run(h, info, store, &body, &holders);
    match expected {
        None => assert!(got.is_ok(), "change {change} at {j} of {n}: {got:?}"),
        Some(e) => assert_eq!(got, Err(e), "change {change} at {j} of {n}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let h = harness();
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let info = if first & 2 == 0 { &h.income } else { &h.age };
    let mut store = if first & 4 != 0 {
        let fact = if info.attribute == Attribute::Income {
            15_000
        } else {
            68
        };
        prefilled(h, info, fact)
    } else {
        Credentials::new()
    };
    if first & 1 == 0 {
        let holders: Vec<Jwk> = h.holders[..RAW_HOLDERS].iter().map(jwk).collect();
        let _ = run(h, info, &mut store, rest, &holders);
    } else {
        built(h, info, &mut store, rest);
    }
});
