//! Issue 10 in the gate: issuer-backed claims. Batches an issuer sends are checked before they are
//! kept; claims at a ladder step or age threshold are answered from the credential (through the
//! ledger); a release presents one fresh credential per issuer-backed claim, bound to the
//! audience and nonce; nothing credential-related reaches an agent before the person releases.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use capability_gate::credentials::{
    BatchGrant, CredentialError, Credentials, IssuerInfo, MAX_PER_ISSUER, REFILL_BELOW,
};
use capability_gate::{Acknowledgement, GateError, Lifetime, ProofToSign, ProposalState};
use common::*;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Map, Value, json};
use tacit_protocol::predicates::{AGE_THRESHOLDS, income_claim_name, income_ladder};
use tacit_protocol::request_auth::{InstallKey, Jwk};
use tacit_protocol::sd_jwt::{
    self, DEFAULT_MAX_KB_AGE_MS, IssuedClaims, IssuerKey, Jwks, SdJwtError, TrustedIssuer,
};
use wallet_core::{Attribute, LogEntry, Origin, Outcome, Timestamp};

const TAX: &str = "http://127.0.0.1:8791";
const REGISTRY: &str = "http://127.0.0.1:8792";
const TAX_NAME: &str = "Tax Office Nordstadt";
/// How the person is shown it: the name beside the address (`words::issuer_label`).
const TAX_LABEL: &str = "Tax Office Nordstadt (127.0.0.1:8791)";
const REGISTRY_NAME: &str = "Civil Registry Nordstadt";
const INCOME_VCT: &str = "https://tacit.example/vct/income";
const AGE_VCT: &str = "https://tacit.example/vct/age";
const DAY: i64 = 24 * 60 * 60 * 1000;
const REFRESH: &str = "refresh-token-0123456789abcdefghijklmnopqrstuv";
/// Midnight UTC of T0's day: the `iat` of every batch issued that day (the issuers' grid).
const ISSUED: i64 = T0 - T0 % DAY;
/// `ISSUED` + 30 days: the `exp` of every batch issued that day.
const EXPIRES: i64 = ISSUED + 30 * DAY;

fn now() -> Timestamp {
    Timestamp::from_millis(T0)
}

fn origin(text: &str) -> Origin {
    Origin::parse(text).unwrap()
}

// ----- a test issuer and native holder keys ---------------------------------------------------

struct Issuer {
    key: SigningKey,
    kid: String,
    origin: String,
    name: &'static str,
    attribute: Attribute,
    vct: &'static str,
}

impl Issuer {
    fn tax() -> Self {
        Self {
            key: SigningKey::from_slice(&[41; 32]).unwrap(),
            kid: "tax-key-1".into(),
            origin: TAX.into(),
            name: TAX_NAME,
            attribute: Attribute::Income,
            vct: INCOME_VCT,
        }
    }

    fn registry() -> Self {
        Self {
            key: SigningKey::from_slice(&[42; 32]).unwrap(),
            kid: "registry-key-1".into(),
            origin: REGISTRY.into(),
            name: REGISTRY_NAME,
            attribute: Attribute::Age,
            vct: AGE_VCT,
        }
    }

    fn jwks(&self) -> Jwks {
        Jwks::new(vec![IssuerKey {
            kid: self.kid.clone(),
            key: *self.key.verifying_key(),
        }])
        .unwrap()
    }

    fn info(&self) -> IssuerInfo {
        IssuerInfo {
            origin: origin(&self.origin),
            name: self.name.into(),
            attribute: self.attribute,
            vct: self.vct.into(),
        }
    }

    /// What every credential of a batch says for a person: income in minor units (EUR) or age.
    fn spec(&self, fact: u64) -> Spec {
        let (plain, disclosable) = match self.attribute {
            Attribute::Income => {
                let mut plain = Map::new();
                plain.insert("currency".into(), json!("EUR"));
                let ladder = income_ladder()
                    .map(|step| (income_claim_name(step), json!(fact < step * 100)))
                    .collect();
                (plain, ladder)
            }
            _ => {
                let ages = AGE_THRESHOLDS
                    .iter()
                    .map(|&y| {
                        (
                            format!("age_equal_or_over_{y}"),
                            json!(fact >= u64::from(y)),
                        )
                    })
                    .collect();
                (Map::new(), ages)
            }
        };
        Spec {
            iss: self.origin.clone(),
            vct: self.vct.into(),
            iat: ISSUED,
            exp: EXPIRES,
            plain,
            disclosable,
        }
    }

    fn issue(&self, spec: &Spec, holder: &Jwk, salt_seed: u32) -> String {
        self.issue_with_entry(spec, holder, salt_seed, None)
    }

    /// [`Issuer::issue`], the credential naming `entry` of this issuer's status list.
    fn issue_with_entry(
        &self,
        spec: &Spec,
        holder: &Jwk,
        salt_seed: u32,
        entry: Option<u64>,
    ) -> String {
        let status = entry.map(|idx| tacit_protocol::status_list::StatusRef {
            idx,
            uri: format!("{}/status/1", self.origin),
        });
        let salts: Vec<[u8; 16]> = (0..spec.disclosable.len() as u32)
            .map(|j| {
                let mut salt = [0u8; 16];
                salt[..4].copy_from_slice(&salt_seed.to_be_bytes());
                salt[4..8].copy_from_slice(&j.to_be_bytes());
                salt[8..12].copy_from_slice(&(self.kid.len() as u32).to_be_bytes());
                salt
            })
            .collect();
        sd_jwt::issue_with_status(
            &self.key,
            &self.kid,
            &IssuedClaims {
                iss: spec.iss.clone(),
                vct: spec.vct.clone(),
                iat: Timestamp::from_millis(spec.iat),
                exp: Timestamp::from_millis(spec.exp),
                cnf_jwk: holder.clone(),
                plain: spec.plain.clone(),
            },
            status.as_ref(),
            &spec.disclosable,
            &salts,
        )
        .unwrap()
    }

    /// A batch for `holders` (one credential each, in order) as the issuer answers it.
    fn batch(&self, spec: &Spec, holders: &[Holder]) -> Vec<String> {
        holders
            .iter()
            .map(|h| self.issue(spec, &h.jwk, h.seed))
            .collect()
    }

    /// What the wallet checks a batch with: this issuer's description and keys, its answer
    /// carrying `batch`, and the holder keys the wallet sent (`hs`).
    fn offer(&self, batch: &[String], hs: &[Holder]) -> Offer {
        (self.info(), self.jwks(), self.answer(batch), jwks_of(hs))
    }

    /// `credentials` accepts this issuer's answer carrying `batch` for the holder keys `hs`.
    fn deliver(
        &self,
        credentials: &mut Credentials,
        batch: &[String],
        hs: &[Holder],
        now: Timestamp,
    ) -> Result<usize, CredentialError> {
        let (info, jwks, answer, sent) = self.offer(batch, hs);
        credentials.accept_batch(&info, &jwks, &answer, &sent, now)
    }

    fn answer(&self, credentials: &[String]) -> Vec<u8> {
        json!({
            "credentials": credentials,
            "expires_at": EXPIRES,
            "refresh_token": REFRESH,
            "issuer": self.origin,
            "issuer_name": self.name,
            "vct": self.vct,
        })
        .to_string()
        .into_bytes()
    }
}

/// An issuer's description, its keys, its answer and the holder keys sent: what
/// `Credentials::accept_batch` checks.
type Offer = (IssuerInfo, Jwks, Vec<u8>, Vec<Jwk>);

#[derive(Clone)]
struct Spec {
    iss: String,
    vct: String,
    iat: i64,
    exp: i64,
    plain: Map<String, Value>,
    disclosable: Vec<(String, Value)>,
}

#[derive(Clone)]
struct Holder {
    key: SigningKey,
    jwk: Jwk,
    id: String,
    seed: u32,
}

fn holders(first: u8, n: u8) -> Vec<Holder> {
    (first..first + n)
        .map(|seed| {
            let key = SigningKey::from_slice(&[seed; 32]).unwrap();
            let install = InstallKey::from_verifying_key(*key.verifying_key());
            Holder {
                jwk: install.to_jwk(),
                id: install.id().as_str().to_owned(),
                key,
                seed: u32::from(seed),
            }
        })
        .collect()
}

fn jwks_of(holders: &[Holder]) -> Vec<Jwk> {
    holders.iter().map(|h| h.jwk.clone()).collect()
}

/// Credentials with one income batch (Ana: 28,500.00 EUR) of `n` credentials.
fn income_credentials(income_minor: u64, n: u8) -> (Credentials, Vec<Holder>) {
    let tax = Issuer::tax();
    let hs = holders(1, n);
    let mut credentials = Credentials::new();
    let batch = tax.batch(&tax.spec(income_minor), &hs);
    let added = tax.deliver(&mut credentials, &batch, &hs, now()).unwrap();
    assert_eq!(added, usize::from(n));
    (credentials, hs)
}

fn add_age(credentials: &mut Credentials, age: u64, first: u8, n: u8) -> Vec<Holder> {
    let registry = Issuer::registry();
    let hs = holders(first, n);
    let batch = registry.batch(&registry.spec(age), &hs);
    registry.deliver(credentials, &batch, &hs, now()).unwrap();
    hs
}

// ----- accepting a batch ------------------------------------------------------------------------

#[test]
fn a_genuine_batch_is_kept_with_its_refresh_token() {
    let (credentials, hs) = income_credentials(2_850_000, 10);
    let tax = origin(TAX);
    assert_eq!(credentials.left(&tax, now()), 10);
    assert!(!credentials.needs_refill(&tax, now()));
    assert_eq!(credentials.refresh_token(&tax), Some(REFRESH));
    let summary = credentials.summary(now());
    assert_eq!(summary.len(), 1);
    assert_eq!(summary[0].name, TAX_NAME);
    assert_eq!(summary[0].attribute, Attribute::Income);
    assert_eq!(summary[0].left, 10);
    assert_eq!(
        summary[0].valid_until,
        Some(Timestamp::from_millis(EXPIRES))
    );
    let ids = credentials.holder_key_ids();
    assert_eq!(ids, hs.iter().map(|h| h.id.clone()).collect::<Vec<_>>());
    // Expired credentials are not left.
    assert_eq!(
        credentials.left(&tax, Timestamp::from_millis(T0 + 31 * DAY)),
        0
    );
    assert!(credentials.needs_refill(&tax, Timestamp::from_millis(T0 + 31 * DAY)));
    assert!(
        !credentials.needs_refill(&origin(REGISTRY), now()),
        "unknown issuer"
    );
}

/// Tries a batch built by `build` against fresh credentials; returns the error, and checks that
/// nothing was kept.
fn refused(build: impl FnOnce(&Issuer, &[Holder]) -> Offer) -> CredentialError {
    let tax = Issuer::tax();
    let hs = holders(1, 3);
    let (info, jwks, answer, sent) = build(&tax, &hs);
    let mut credentials = Credentials::new();
    let err = credentials
        .accept_batch(&info, &jwks, &answer, &sent, now())
        .unwrap_err();
    assert!(credentials.is_empty(), "{err}: nothing may be kept");
    assert!(!err.to_string().is_empty());
    err
}

fn genuine(tax: &Issuer, hs: &[Holder], spec: &Spec) -> Offer {
    tax.offer(&tax.batch(spec, hs), hs)
}

/// [`refused`] for a batch whose every credential says what `edit` made of Ana's income spec.
fn refused_spec(edit: impl FnOnce(&mut Spec)) -> CredentialError {
    refused(|tax, hs| {
        let mut spec = tax.spec(2_850_000);
        edit(&mut spec);
        genuine(tax, hs, &spec)
    })
}

/// [`refused`] for Ana's genuine batch after `edit` changed its credentials.
fn refused_batch(edit: impl FnOnce(&Issuer, &[Holder], &mut Vec<String>)) -> CredentialError {
    refused(|tax, hs| {
        let mut batch = tax.batch(&tax.spec(2_850_000), hs);
        edit(tax, hs, &mut batch);
        tax.offer(&batch, hs)
    })
}

/// [`refused`] for Ana's genuine batch, the issuer's answer replaced by what `answer` makes of it.
fn refused_answer(answer: impl FnOnce(&Issuer, Vec<u8>) -> Vec<u8>) -> CredentialError {
    refused(|tax, hs| {
        let (info, jwks, genuine_answer, sent) = genuine(tax, hs, &tax.spec(2_850_000));
        (info, jwks, answer(tax, genuine_answer), sent)
    })
}

/// [`refused`] for Ana's genuine batch, the issuer's description changed by `edit`.
fn refused_info(edit: impl FnOnce(&mut IssuerInfo)) -> CredentialError {
    refused(|tax, hs| {
        let (mut info, jwks, answer, sent) = genuine(tax, hs, &tax.spec(2_850_000));
        edit(&mut info);
        (info, jwks, answer, sent)
    })
}

/// [`refused`] for Ana's genuine batch, the holder keys the wallet sent changed by `edit`.
fn refused_sent(edit: impl FnOnce(&mut Vec<Jwk>)) -> CredentialError {
    refused(|tax, hs| {
        let (info, jwks, answer, mut sent) = genuine(tax, hs, &tax.spec(2_850_000));
        edit(&mut sent);
        (info, jwks, answer, sent)
    })
}

/// The refusal of the credential at `index` for an SD-JWT `error`.
fn invalid(index: usize, error: SdJwtError) -> CredentialError {
    CredentialError::Invalid { index, error }
}

/// A JSON `answer` with `member` set to `value`.
fn with_member(answer: &[u8], member: &str, value: Value) -> Vec<u8> {
    let mut answer: Value = serde_json::from_slice(answer).unwrap();
    answer[member] = value;
    answer.to_string().into_bytes()
}

#[test]
fn attack_a_credential_naming_another_issuer_is_refused() {
    let err = refused_spec(|spec| spec.iss = "http://127.0.0.1:9999".into());
    assert_eq!(err, CredentialError::CredentialIssuer { index: 0 });
    // The answer's own `issuer` member must match too.
    let err =
        refused_answer(|_, answer| with_member(&answer, "issuer", json!("http://evil.example")));
    assert_eq!(err, CredentialError::WrongIssuer);
}

#[test]
fn attack_credentials_bound_to_the_wrong_positions_are_refused() {
    let err = refused_sent(|sent| sent.swap(0, 1));
    assert_eq!(err, CredentialError::HolderKeyMismatch { index: 0 });
    // A credential bound to a key the wallet never sent.
    let err = refused_batch(|tax, _, batch| {
        batch[2] = tax.issue(&tax.spec(2_850_000), &holders(200, 1)[0].jwk, 99);
    });
    assert_eq!(err, CredentialError::HolderKeyMismatch { index: 2 });
}

#[test]
fn attack_counts_that_do_not_match_are_refused() {
    let err = refused_sent(|sent| sent.push(holders(100, 1)[0].jwk.clone()));
    assert_eq!(err, CredentialError::CountMismatch { got: 3, sent: 4 });
    let err = refused_answer(|tax, _| tax.answer(&[]));
    assert_eq!(err, CredentialError::EmptyBatch);
    let err = refused(|tax, _| {
        let many = holders(1, 21);
        genuine(tax, &many, &tax.spec(2_850_000))
    });
    assert_eq!(err, CredentialError::TooManyCredentials);
}

#[test]
fn attack_an_expired_or_future_batch_is_refused() {
    let err = refused_spec(|spec| {
        spec.iat = T0 - 40 * DAY;
        spec.exp = T0 - DAY;
    });
    assert_eq!(err, CredentialError::Expired { index: 0 });
    let err = refused_spec(|spec| spec.iat = T0 + DAY);
    assert_eq!(err, invalid(0, SdJwtError::IssuedInFuture));
}

#[test]
fn attack_a_tampered_credential_or_another_key_is_refused() {
    // A disclosure flipped from false to true, re-encoded: its digest is not in `_sd`.
    let err = refused_batch(|_, _, batch| {
        let parts: Vec<&str> = batch[1].split('~').collect();
        let mut out = vec![parts[0].to_owned()];
        for part in &parts[1..] {
            if part.is_empty() {
                continue;
            }
            let mut d: Value =
                serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap();
            if d[1] == "income_below_25000" {
                d[2] = json!(true);
            }
            out.push(URL_SAFE_NO_PAD.encode(d.to_string()));
        }
        batch[1] = format!("{}~", out.join("~"));
    });
    assert_eq!(err, invalid(1, SdJwtError::UnknownDisclosure));
    // A byte of the issuer signature changed.
    let err = refused_batch(|_, _, batch| {
        let jwt_end = batch[0].find('~').unwrap();
        let mut bytes = batch[0].clone().into_bytes();
        let i = jwt_end - 5;
        bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
        batch[0] = String::from_utf8(bytes).unwrap();
    });
    assert!(
        matches!(err, CredentialError::Invalid { index: 0, .. }),
        "{err:?}"
    );
    // Signed by a key the issuer's metadata does not publish.
    let err = refused(|tax, hs| {
        let impostor = Issuer {
            key: SigningKey::from_slice(&[77; 32]).unwrap(),
            ..Issuer::tax()
        };
        tax.offer(&impostor.batch(&impostor.spec(2_850_000), hs), hs)
    });
    assert_eq!(err, invalid(0, SdJwtError::BadIssuerSignature));
}

#[test]
fn attack_a_tagged_batch_is_refused() {
    // One credential says something else (a predicate flipped): the site could tell which
    // presentation it got.
    let err = refused_batch(|tax, hs, batch| {
        let mut other = tax.spec(2_850_000);
        for predicate in &mut other.disclosable[..4] {
            predicate.1 = json!(true);
        }
        batch[2] = tax.issue(&other, &hs[2].jwk, hs[2].seed);
    });
    assert_eq!(err, CredentialError::Tagged { index: 2 });
    // The same predicates but one credential expires a second later: off the daily grid.
    let err = refused_batch(|tax, hs, batch| {
        let mut other = tax.spec(2_850_000);
        other.exp += 1_000;
        batch[1] = tax.issue(&other, &hs[1].jwk, hs[1].seed);
    });
    assert_eq!(err, CredentialError::OffGrid { index: 1 });
    // A plain serial number, even if it were the same in each.
    let err = refused_spec(|spec| {
        spec.plain.insert("serial".into(), json!(41234));
    });
    assert_eq!(err, CredentialError::UnexpectedClaims { index: 0 });
    // A disclosable claim that is not a predicate (a name, the raw income).
    let err = refused_spec(|spec| {
        spec.disclosable
            .push(("income_minor".into(), json!(2_850_000)));
    });
    assert_eq!(err, CredentialError::UnexpectedClaims { index: 0 });
    // A predicate that is not a boolean.
    let err = refused_spec(|spec| spec.disclosable[0].1 = json!("yes"));
    assert_eq!(err, CredentialError::UnexpectedClaims { index: 0 });
}

#[test]
fn attack_contradictory_predicates_are_refused() {
    let err = refused_spec(|spec| {
        // below 10,000 but not below 15,000
        spec.disclosable[0].1 = json!(true);
    });
    assert_eq!(err, CredentialError::Inconsistent);
}

#[test]
fn attack_garbage_answers_are_refused_without_panicking() {
    for answer in [
        b"".to_vec(),
        b"null".to_vec(),
        b"[]".to_vec(),
        b"{\"credentials\":\"x\"}".to_vec(),
        b"{\"credentials\":[1,2,3]}".to_vec(),
        b"\xff\xfe".to_vec(),
    ] {
        let err = refused_answer(|_, _| answer.clone());
        assert_eq!(err, CredentialError::BadJson);
    }
    let err = refused_answer(|_, _| {
        let answer = json!({ "credentials": ["x~", "y~", "not a jwt"] });
        answer.to_string().into_bytes()
    });
    assert!(matches!(err, CredentialError::Invalid { index: 0, .. }));
    let err = refused_answer(|_, _| vec![b' '; (1 << 20) + 1]);
    assert_eq!(err, CredentialError::TooLarge);
    // A credential longer than the SD-JWT limit.
    let err = refused_answer(|_, _| {
        let huge = "a".repeat(40 * 1024);
        let answer = json!({ "credentials": [huge, "b~", "c~"] });
        answer.to_string().into_bytes()
    });
    assert_eq!(err, invalid(0, SdJwtError::TooLarge));
    // Bad refresh token.
    let err =
        refused_answer(|_, answer| with_member(&answer, "refresh_token", json!("has a space")));
    assert_eq!(err, CredentialError::BadRefreshToken);
}

#[test]
fn attack_a_wrong_type_or_issuer_description_is_refused() {
    let err = refused_info(|info| info.vct = "https://evil.example/vct/income".into());
    assert_eq!(err, CredentialError::UnknownVct("income"));
    let err = refused_info(|info| info.attribute = Attribute::District);
    assert_eq!(err, CredentialError::UnsupportedAttribute);
    // An income issuer whose credentials carry age predicates.
    let err = refused(|tax, hs| {
        let registry = Issuer::registry();
        let mut spec = registry.spec(36);
        spec.iss = TAX.into();
        spec.vct = INCOME_VCT.into();
        spec.plain.insert("currency".into(), json!("EUR"));
        genuine(tax, hs, &spec)
    });
    assert_eq!(err, CredentialError::UnexpectedClaims { index: 0 });
    let err = refused_info(|info| info.name = "\u{202e}Tax\nOffice".into());
    assert_eq!(err, CredentialError::BadIssuerName);

    let tax = origin(TAX);
    let good = json!({"issuer": TAX, "name": TAX_NAME, "attribute": "income", "vct": INCOME_VCT,
        "metadata_url": "/.well-known/jwt-vc-issuer", "max_batch": 20, "default_batch": 10});
    assert_eq!(
        IssuerInfo::parse(&tax, good.to_string().as_bytes()).unwrap(),
        Issuer::tax().info()
    );
    let mut other = good.clone();
    other["issuer"] = json!("http://127.0.0.1:9999");
    assert_eq!(
        IssuerInfo::parse(&tax, other.to_string().as_bytes()),
        Err(CredentialError::MetadataIssuerMismatch)
    );
    let mut other = good.clone();
    other["attribute"] = json!("district");
    assert_eq!(
        IssuerInfo::parse(&tax, other.to_string().as_bytes()),
        Err(CredentialError::UnsupportedAttribute)
    );
    assert!(IssuerInfo::parse(&tax, b"not json").is_err());

    let metadata = json!({ "issuer": TAX, "jwks": serde_json::from_str::<Value>(&Issuer::tax().jwks().to_json()).unwrap() });
    let jwks = capability_gate::jwks_from_metadata(&tax, metadata.to_string().as_bytes()).unwrap();
    assert_eq!(jwks, Issuer::tax().jwks());
    assert_eq!(
        capability_gate::jwks_from_metadata(&origin(REGISTRY), metadata.to_string().as_bytes()),
        Err(CredentialError::MetadataIssuerMismatch)
    );
}

#[test]
fn attack_a_holder_key_sent_twice_or_reused_is_refused() {
    let err = refused_sent(|sent| sent[1] = sent[0].clone());
    assert_eq!(err, CredentialError::DuplicateHolderKey);
    // A second batch reusing a key already held.
    let (mut credentials, hs) = income_credentials(2_850_000, 3);
    let tax = Issuer::tax();
    let again = tax.batch(&tax.spec(2_850_000), &hs[..1]);
    let before = credentials.clone();
    assert_eq!(
        tax.deliver(&mut credentials, &again, &hs[..1], now()),
        Err(CredentialError::DuplicateHolderKey)
    );
    assert_eq!(credentials, before);
}

#[test]
fn a_refill_keeps_unused_credentials_and_a_changed_fact_replaces_them() {
    let (mut credentials, _) = income_credentials(2_850_000, 3);
    let tax = Issuer::tax();
    let hs = holders(50, 5);
    let batch = tax.batch(&tax.spec(2_850_000), &hs);
    let answer = with_member(&tax.answer(&batch), "refresh_token", json!("newer-token"));
    credentials
        .accept_batch(&tax.info(), &tax.jwks(), &answer, &jwks_of(&hs), now())
        .unwrap();
    assert_eq!(credentials.left(&origin(TAX), now()), 8);
    assert_eq!(credentials.refresh_token(&origin(TAX)), Some("newer-token"));
    // The income changed: the old credentials say something else and are dropped.
    let hs = holders(60, 4);
    let batch = tax.batch(&tax.spec(7_200_000), &hs);
    tax.deliver(&mut credentials, &batch, &hs, now()).unwrap();
    assert_eq!(credentials.left(&origin(TAX), now()), 4);
    let claim = income(3_000_000);
    assert_eq!(
        credentials.answer(&claim, now()),
        Some((false, origin(TAX)))
    );
    // Capped at MAX_PER_ISSUER.
    for round in 0..3u8 {
        let hs = holders(100 + round * 20, 20);
        let batch = tax.batch(&tax.spec(7_200_000), &hs);
        tax.deliver(&mut credentials, &batch, &hs, now()).unwrap();
    }
    assert_eq!(credentials.left(&origin(TAX), now()), MAX_PER_ISSUER);
}

#[test]
fn at_most_four_issuers_and_removal_returns_the_holder_keys() {
    let (mut credentials, hs) = income_credentials(2_850_000, 2);
    for (i, port) in [8793u16, 8794, 8795, 8796].iter().enumerate() {
        let issuer = Issuer {
            origin: format!("http://127.0.0.1:{port}"),
            ..Issuer::tax()
        };
        let hs = holders(10 + 2 * i as u8, 2);
        let batch = issuer.batch(&issuer.spec(2_850_000), &hs);
        let result = issuer.deliver(&mut credentials, &batch, &hs, now());
        if i < 3 {
            result.unwrap();
        } else {
            assert_eq!(result, Err(CredentialError::TooManyIssuers));
        }
    }
    assert_eq!(credentials.issuers().len(), 4);
    let removed = credentials.remove_issuer(&origin(TAX));
    assert_eq!(removed, hs.iter().map(|h| h.id.clone()).collect::<Vec<_>>());
    assert_eq!(credentials.issuers().len(), 3);
    assert_eq!(credentials.left(&origin(TAX), now()), 0);
}

#[test]
fn credentials_survive_a_serde_round_trip_and_debug_prints_none() {
    let (mut credentials, _) = income_credentials(2_850_000, 3);
    add_age(&mut credentials, 36, 30, 2);
    let text = credentials.to_json();
    let back = Credentials::from_json(&text).unwrap();
    assert_eq!(back, credentials);
    let debug = format!("{credentials:?}");
    for issuer in credentials.issuers() {
        for c in issuer.credentials() {
            let jwt = c.sd_jwt().split('~').next().unwrap();
            assert!(!debug.contains(jwt));
            assert!(!debug.contains(c.holder_key_id()));
        }
    }
    assert!(!debug.contains(REFRESH));
    // Oversized or malformed stored text is refused.
    let mut value: Value = serde_json::from_str(&text).unwrap();
    let first = value["issuers"][0].clone();
    value["issuers"] = json!([first, first]);
    assert!(
        Credentials::from_json(&value.to_string()).is_none(),
        "issuer twice"
    );
    let mut value: Value = serde_json::from_str(&text).unwrap();
    value["extra"] = json!(1);
    assert!(Credentials::from_json(&value.to_string()).is_none());
    assert!(Credentials::from_json("{").is_none());
    assert_eq!(
        Credentials::from_json(&Credentials::new().to_json()),
        Some(Credentials::new())
    );
}

#[test]
fn the_request_body_is_what_the_issuer_reads() {
    let hs = holders(1, 2);
    let proofs: Vec<(Jwk, [u8; 64])> = hs
        .iter()
        .map(|h| {
            let input = capability_gate::pop_input(&origin(TAX), "nonce-1");
            let sig: Signature = h.key.sign(input.as_bytes());
            (h.jwk.clone(), sig.to_bytes().into())
        })
        .collect();
    let body: Value = serde_json::from_str(&capability_gate::request_body(
        BatchGrant::Code("7K2M-Q9RD-4XWA-HT3B"),
        "nonce-1",
        &proofs,
    ))
    .unwrap();
    assert_eq!(body["code"], "7K2M-Q9RD-4XWA-HT3B");
    assert_eq!(body["nonce"], "nonce-1");
    assert!(body.get("refresh_token").is_none());
    let keys = body["holder_keys"].as_array().unwrap();
    assert_eq!(keys.len(), 2);
    for (key, h) in keys.iter().zip(&hs) {
        let jwk: Jwk = serde_json::from_value(key["jwk"].clone()).unwrap();
        assert_eq!(jwk, h.jwk);
        tacit_protocol::issuer_pop::verify_pop(
            &jwk,
            key["proof"].as_str().unwrap(),
            TAX,
            "nonce-1",
        )
        .unwrap();
    }
    let body: Value = serde_json::from_str(&capability_gate::request_body(
        BatchGrant::RefreshToken("tok"),
        "n",
        &proofs,
    ))
    .unwrap();
    assert_eq!(body["refresh_token"], "tok");
    assert!(body.get("code").is_none());
    assert_eq!(
        capability_gate::holder_key_id(&hs[0].jwk).as_deref(),
        Some(hs[0].id.as_str())
    );
}

// ----- answering claims -------------------------------------------------------------------------

fn income(minor: u64) -> wallet_core::Claim {
    wallet_core::Claim::income_below(wallet_core::Money {
        amount_minor: minor,
        currency: wallet_core::Currency::parse("EUR").unwrap(),
    })
    .unwrap()
}

fn policy(origin: &str, nonce: &str, claims: Value) -> Value {
    json!({ "origin": origin, "nonce": nonce, "claims": claims })
}

fn income_json(minor: u64) -> Value {
    json!({ "kind": "income_below", "limit": { "amount_minor": minor, "currency": "EUR" } })
}

/// Asks `claims` for `origin` with `nonce` and calls each granted tool once, in policy order.
fn ask(world: &mut World, origin: &str, nonce: &str, claims: Value) -> Vec<Value> {
    let request = world.request(policy(origin, nonce, claims));
    world.grant_all(&request, Lifetime::ONE_HOUR);
    let grants: Vec<String> = world
        .gate
        .request(&request)
        .map(|r| match &r.state {
            capability_gate::RequestState::Granted { grants } => {
                grants.iter().map(|g| g.as_str().to_owned()).collect()
            }
            _ => panic!("not granted"),
        })
        .unwrap();
    let names: Vec<String> = grants
        .iter()
        .map(|g| {
            let grant = world.gate.grants().find(|x| x.id.as_str() == g).unwrap();
            capability_gate::gate::tool_name_of(grant)
                .unwrap()
                .as_str()
                .to_owned()
        })
        .collect();
    names
        .iter()
        .map(|name| world.call(name, json!({})))
        .collect()
}

fn last_entry(world: &World) -> LogEntry {
    world.gate.log().entries().last().unwrap().clone()
}

fn with_credentials(credentials: Credentials) -> World {
    let mut world = World::unlocked();
    world.gate.set_credentials(credentials);
    world
}

#[test]
fn a_claim_at_a_ladder_step_is_answered_by_the_credential() {
    // The typed profile says 28,400.00; the tax office says 72,000.00. At a ladder step, the
    // credential answers.
    let (credentials, _) = income_credentials(7_200_000, 5);
    let mut world = with_credentials(credentials);
    let out = ask(&mut world, HOUSING, "n-1", json!([income_json(3_000_000)]));
    assert_eq!(out[0]["result"]["satisfied"], false, "{}", out[0]);
    let entry = last_entry(&world);
    assert_eq!(entry.outcome, Outcome::NotSatisfied);
    assert_eq!(entry.issuer, Some(origin(TAX)));
}

#[test]
fn a_claim_off_the_ladder_is_the_persons_own_word() {
    let (credentials, _) = income_credentials(7_200_000, 5);
    let mut world = with_credentials(credentials);
    // 29,000.00 is not a step: the typed 28,400.00 answers, self-asserted.
    let out = ask(&mut world, HOUSING, "n-1", json!([income_json(2_900_000)]));
    assert_eq!(out[0]["result"]["satisfied"], true);
    assert_eq!(last_entry(&world).issuer, None);
    // Another currency has no disclosure either: declined, never issuer-backed.
    let mut world = with_credentials(income_credentials(7_200_000, 5).0);
    let out = ask(
        &mut world,
        HOUSING,
        "n-2",
        json!([{ "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "USD" } }]),
    );
    assert_eq!(error_code(&out[0]), "declined_privacy_floor");
    assert_eq!(last_entry(&world).issuer, None);
    // Districts are always the person's word.
    let mut world = with_credentials(income_credentials(2_850_000, 5).0);
    ask(
        &mut world,
        HOUSING,
        "n-3",
        json!([{ "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] }]),
    );
    assert_eq!(last_entry(&world).issuer, None);
}

#[test]
fn age_thresholds_are_answered_by_the_registry() {
    let mut credentials = Credentials::new();
    add_age(&mut credentials, 17, 1, 3);
    let mut world = with_credentials(credentials);
    // The typed profile says 36; the registry says 17.
    let out = ask(
        &mut world,
        PHARMACY,
        "n-1",
        json!([{ "kind": "age_at_least", "years": 18 }]),
    );
    assert_eq!(out[0]["result"]["satisfied"], false);
    assert_eq!(last_entry(&world).issuer, Some(origin(REGISTRY)));
    // 30 is not a threshold: memory answers (under 18 so under 30), not issuer-backed.
    let out = ask(
        &mut world,
        PHARMACY,
        "n-2",
        json!([{ "kind": "age_at_least", "years": 30 }]),
    );
    assert_eq!(out[0]["result"]["satisfied"], false);
    assert_eq!(last_entry(&world).issuer, None);
    // In a fresh session, 30 is answered from the typed date of birth (36), self-asserted.
    let mut credentials = Credentials::new();
    add_age(&mut credentials, 17, 10, 3);
    let mut world = with_credentials(credentials);
    let out = ask(
        &mut world,
        PHARMACY,
        "n-3",
        json!([{ "kind": "age_at_least", "years": 30 }]),
    );
    assert_eq!(out[0]["result"]["satisfied"], true);
    assert_eq!(last_entry(&world).issuer, None);
}

#[test]
fn the_ledger_still_declines_an_issuer_backed_question_below_the_floor() {
    let (credentials, _) = income_credentials(2_850_000, 5);
    let mut world = with_credentials(credentials);
    // Self-asserted first: not below 27,500.00 (typed 28,400.00).
    let out = ask(&mut world, HOUSING, "n-1", json!([income_json(2_750_000)]));
    assert_eq!(out[0]["result"]["satisfied"], false);
    assert_eq!(last_entry(&world).issuer, None);
    // Then the ladder step 30,000.00 would leave a 2,500.00 band: declined, credential or not.
    let out = ask(&mut world, HOUSING, "n-2", json!([income_json(3_000_000)]));
    assert_eq!(error_code(&out[0]), "declined_privacy_floor");
    let entry = last_entry(&world);
    assert_eq!(entry.outcome, Outcome::Declined);
    assert_eq!(entry.issuer, None);
}

/// Issue 28 item 6: a question a credential answers is answered by it, labelled with its
/// issuer, whether or not the memory learned a different answer from what the person typed; so
/// neither the label nor a refusal tells a site that the typed fact and the credential disagree.
#[test]
fn issue28_item6_a_backed_answer_is_the_credentials_whatever_the_typed_memory_says() {
    // Disagreeing: typed 28,400.00, the tax office 72,000.00.
    let (credentials, _) = income_credentials(7_200_000, 5);
    let mut world = with_credentials(credentials);
    // Self-asserted: below 32,000.00 (typed). The memory now knows "below 35,000.00: yes".
    let out = ask(&mut world, HOUSING, "n-1", json!([income_json(3_200_000)]));
    assert_eq!(out[0]["result"]["satisfied"], true);
    assert_eq!(last_entry(&world).issuer, None);
    // 35,000.00 is a ladder step: the office's answer (no), labelled with the office.
    let out = ask(&mut world, HOUSING, "n-2", json!([income_json(3_500_000)]));
    assert_eq!(out[0]["result"]["satisfied"], false, "{}", out[0]);
    let disagreeing = last_entry(&world);
    assert_eq!(disagreeing.issuer, Some(origin(TAX)));

    // Agreeing: the office says 28,500.00. The same questions get the same label.
    let (credentials, _) = income_credentials(2_850_000, 5);
    let mut world = with_credentials(credentials);
    let out = ask(&mut world, HOUSING, "n-1", json!([income_json(3_200_000)]));
    assert_eq!(out[0]["result"]["satisfied"], true);
    assert_eq!(last_entry(&world).issuer, None);
    let out = ask(&mut world, HOUSING, "n-2", json!([income_json(3_500_000)]));
    assert_eq!(out[0]["result"]["satisfied"], true);
    let agreeing = last_entry(&world);
    assert_eq!(
        agreeing.issuer, disagreeing.issuer,
        "the label tells agreement"
    );

    // The memory's decline stands either way (decided from history alone): typed "not below
    // 27,500.00" then the step 30,000.00 would leave a 2,500.00 band, agreeing or not.
    for office in [2_850_000, 7_200_000] {
        let (credentials, _) = income_credentials(office, 5);
        let mut world = with_credentials(credentials);
        ask(&mut world, HOUSING, "n-1", json!([income_json(2_750_000)]));
        let out = ask(&mut world, HOUSING, "n-2", json!([income_json(3_000_000)]));
        assert_eq!(error_code(&out[0]), "declined_privacy_floor", "{office}");
        assert_eq!(last_entry(&world).issuer, None);
    }
}

/// Issue 28 item 6: the person is told where what they typed and a credential disagree, beside
/// the fact (every issuer, the first question they answer differently) and on the card (each
/// question a credential answers differently), and told nothing where they agree.
#[test]
fn issue28_item6_the_person_is_told_where_the_typed_fact_and_a_credential_disagree() {
    // Typed 28,400.00; the office says 31,000.00: they differ at the step 30,000.00 only.
    let (mut credentials, _) = income_credentials(3_100_000, 5);
    add_age(&mut credentials, 36, 20, 3);
    let typed = profile();
    let found = credentials.disagreements(&typed, now());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].issuer, origin(TAX));
    assert_eq!(found[0].attribute, Attribute::Income);
    assert_eq!(found[0].claim, income(3_000_000));
    assert!(!found[0].credential_says);
    assert_eq!(
        credentials.disagreement_on(&income(3_000_000), &typed, now()),
        Some((false, origin(TAX)))
    );
    assert_eq!(
        credentials.disagreement_on(&income(3_500_000), &typed, now()),
        None
    );
    // Off the ladder no credential answers, so there is nothing to disagree about.
    assert_eq!(
        credentials.disagreement_on(&income(2_900_000), &typed, now()),
        None
    );
    // Far apart (72,000.00): the lowest differing step is named.
    let (far, _) = income_credentials(7_200_000, 5);
    assert_eq!(far.disagreements(&typed, now())[0].claim, income(3_000_000));
    // Agreeing (28,500.00): nothing is said.
    let (agreeing, _) = income_credentials(2_850_000, 5);
    assert!(agreeing.disagreements(&typed, now()).is_empty());
    // An age credential saying 17 to a typed 36: the youngest differing threshold (18).
    let mut young = Credentials::new();
    add_age(&mut young, 17, 30, 3);
    let found = young.disagreements(&typed, now());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].claim,
        wallet_core::Claim::age_at_least(18).unwrap()
    );
    assert!(!found[0].credential_says);

    // Through the gate, on the card: the question at the differing step says so, naming the
    // office; the agreeing one says nothing; locked, nothing.
    let mut world = with_credentials(credentials);
    let request = world.request(policy(
        HOUSING,
        "n-1",
        json!([income_json(3_000_000), income_json(3_500_000)]),
    ));
    let note = world.gate.disagreement_on(&request, 0, now()).unwrap();
    assert!(note.contains(TAX_LABEL), "{note}");
    assert!(note.contains("answer this differently"), "{note}");
    assert!(
        !note.contains("31,000") && !note.contains("28,400"),
        "{note}"
    );
    assert_eq!(world.gate.disagreement_on(&request, 1, now()), None);
    assert_eq!(world.gate.disagreements(now()).len(), 1);
    // Beside the fact, in words.
    let said = capability_gate::words::disagreement_beside_fact(
        TAX_LABEL,
        &income(3_000_000),
        false,
        &|m: &wallet_core::Money| format!("{} {}", m.amount_minor / 100, m.currency.as_str()),
    );
    assert!(
        said.contains(TAX_LABEL) && said.contains("30000 EUR"),
        "{said}"
    );
    assert!(
        said.contains("with no; what you typed answers yes"),
        "{said}"
    );
    world.gate.lock();
    assert!(world.gate.disagreements(now()).is_empty());
}

#[test]
fn without_unused_credentials_the_answer_is_self_asserted_and_lock_forgets_them() {
    let (mut credentials, _) = income_credentials(7_200_000, 2);
    credentials
        .take_for(&origin(TAX), &income(3_000_000), false, now())
        .unwrap();
    credentials
        .take_for(&origin(TAX), &income(3_000_000), false, now())
        .unwrap();
    assert_eq!(credentials.left(&origin(TAX), now()), 0);
    assert_eq!(credentials.answer(&income(3_000_000), now()), None);
    let mut world = with_credentials(credentials);
    let out = ask(&mut world, HOUSING, "n-1", json!([income_json(3_000_000)]));
    assert_eq!(out[0]["result"]["satisfied"], true, "typed 28,400.00");
    assert_eq!(last_entry(&world).issuer, None);

    let (credentials, _) = income_credentials(2_850_000, 2);
    let mut world = with_credentials(credentials);
    // Editing the profile keeps them; locking forgets them.
    world.gate.replace_profile(profile());
    assert!(!world.gate.credentials().is_empty());
    world.gate.lock();
    assert!(world.gate.credentials().is_empty());
}

// ----- release and presentations ----------------------------------------------------------------

fn release(
    world: &mut World,
    id: &capability_gate::ProposalId,
) -> Result<capability_gate::Released, GateError> {
    let digest = world.gate.proposal(id).unwrap().digest().to_owned();
    let now = world.now;
    world
        .gate
        .release_with_proofs(id, &digest, Acknowledgement::UnconfirmedSite, now)
}

fn sign_with(holders: &[Holder], proof: &ProofToSign) -> [u8; 64] {
    let holder = holders
        .iter()
        .find(|h| h.id == proof.holder_key_id)
        .unwrap();
    let sig: Signature = holder.key.sign(proof.signing_input.as_bytes());
    sig.to_bytes().into()
}

fn jwt_signature(without_kb: &str) -> &str {
    without_kb
        .split('~')
        .next()
        .unwrap()
        .rsplit('.')
        .next()
        .unwrap()
}

fn disclosure_segment(without_kb: &str) -> &str {
    without_kb.split('~').nth(1).unwrap()
}

#[test]
fn two_audiences_get_unlinkable_presentations_and_proofs_run_out() {
    let (credentials, hs) = income_credentials(2_850_000, 2);
    let mut world = with_credentials(credentials);
    let mut proofs = Vec::new();
    for (audience, nonce) in [(HOUSING, "n-h"), (PHARMACY, "n-p")] {
        ask(&mut world, audience, nonce, json!([income_json(3_000_000)]));
        let id = world.draft_id(audience, nonce);
        let proposal = world.gate.proposal(&id).unwrap();
        assert_eq!(proposal.items[0].issuer, Some(origin(TAX)));
        assert_eq!(proposal.items[0].issuer_name.as_deref(), Some(TAX_NAME));
        let released = release(&mut world, &id).unwrap();
        assert_eq!(released.proofs.len(), 1);
        assert_eq!(
            released.payload.provenance,
            wallet_core::Provenance::IssuerBacked
        );
        assert_eq!(world.gate.proofs_to_sign(&id), released.proofs.as_slice());
        proofs.push((id, audience, nonce, released.proofs[0].clone()));
    }
    let (a, b) = (&proofs[0].3, &proofs[1].3);
    assert_ne!(a.holder_key_id, b.holder_key_id, "no shared holder key");
    assert_ne!(jwt_signature(&a.without_kb), jwt_signature(&b.without_kb));
    assert_ne!(
        disclosure_segment(&a.without_kb),
        disclosure_segment(&b.without_kb),
        "salts"
    );
    assert_eq!(world.gate.credentials().left(&origin(TAX), world.now), 0);
    let used: Vec<bool> = world.gate.credentials().issuers()[0]
        .credentials()
        .iter()
        .map(|c| c.is_used())
        .collect();
    assert_eq!(used, [true, true]);

    // Both presentations verify for their own audience and nonce only.
    let trusted = [TrustedIssuer {
        iss: TAX.into(),
        jwks: Issuer::tax().jwks(),
    }];
    for (id, audience, nonce, proof) in &proofs {
        let signature = sign_with(&hs, proof);
        let now = world.now;
        world
            .gate
            .attach_presentations(id, vec![signature], now)
            .unwrap();
        let texts = world.gate.presentations(id).unwrap().to_vec();
        assert_eq!(texts.len(), 1);
        let verified = sd_jwt::verify_presentation(
            &texts[0],
            &trusted,
            audience,
            nonce,
            now,
            DEFAULT_MAX_KB_AGE_MS,
        )
        .unwrap();
        let disclosed: BTreeMap<String, Value> = verified.disclosed.into_iter().collect();
        assert_eq!(
            disclosed,
            BTreeMap::from([("income_below_30000".to_owned(), json!(true))])
        );
        let other = if *audience == HOUSING {
            PHARMACY
        } else {
            HOUSING
        };
        assert_eq!(
            sd_jwt::verify_presentation(
                &texts[0],
                &trusted,
                other,
                nonce,
                now,
                DEFAULT_MAX_KB_AGE_MS
            ),
            Err(SdJwtError::WrongAudience)
        );
        assert_eq!(
            sd_jwt::verify_presentation(
                &texts[0],
                &trusted,
                audience,
                "n-other",
                now,
                DEFAULT_MAX_KB_AGE_MS
            ),
            Err(SdJwtError::WrongNonce)
        );
    }

    // A third audience: the credential answers no more (none left), so the claim is the
    // person's word and the release needs no proof.
    ask(
        &mut world,
        "http://127.0.0.1:8083",
        "n-3",
        json!([income_json(3_000_000)]),
    );
    assert_eq!(last_entry(&world).issuer, None);
}

#[test]
fn release_fails_whole_when_an_issuer_has_no_proof_left() {
    let (credentials, _) = income_credentials(2_850_000, 3);
    let mut world = with_credentials(credentials);
    // Three proposals drafted while credentials remain.
    let mut ids = Vec::new();
    for nonce in ["n-1", "n-2", "n-3"] {
        ask(&mut world, HOUSING, nonce, json!([income_json(3_000_000)]));
        ids.push(world.draft_id(HOUSING, nonce));
    }
    release(&mut world, &ids[0]).unwrap();
    release(&mut world, &ids[1]).unwrap();
    // Spend the last credential elsewhere (e.g. another tab's release).
    let now = world.now;
    world
        .gate
        .credentials_mut()
        .take_for(&origin(TAX), &income(3_000_000), true, now)
        .unwrap();
    let before = world.gate.credentials().clone();
    let err = release(&mut world, &ids[2]).unwrap_err();
    assert_eq!(
        err,
        GateError::NoProofsLeft {
            issuer: TAX_LABEL.into()
        }
    );
    assert_eq!(
        err.to_string(),
        "no proofs left from Tax Office Nordstadt (127.0.0.1:8791); add a credential again"
    );
    assert_eq!(world.gate.credentials(), &before, "nothing marked used");
    assert_eq!(
        world.gate.proposal(&ids[2]).unwrap().state,
        ProposalState::Held
    );

    // Removing the issuer fails the release the same way.
    let (credentials, _) = income_credentials(2_850_000, 3);
    let mut world = with_credentials(credentials);
    ask(&mut world, HOUSING, "n-1", json!([income_json(3_000_000)]));
    let id = world.draft_id(HOUSING, "n-1");
    world.gate.credentials_mut().remove_issuer(&origin(TAX));
    assert!(matches!(
        release(&mut world, &id),
        Err(GateError::NoProofsLeft { .. })
    ));
}

#[test]
fn two_issuer_backed_items_use_two_credentials_and_self_asserted_ones_none() {
    let (mut credentials, mut hs) = income_credentials(2_850_000, 3);
    hs.extend(add_age(&mut credentials, 36, 40, 3));
    let mut world = with_credentials(credentials);
    ask(
        &mut world,
        HOUSING,
        "n-1",
        json!([
            income_json(3_000_000),
            { "kind": "age_at_least", "years": 18 },
            { "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] },
        ]),
    );
    let id = world.draft_id(HOUSING, "n-1");
    let items = world.gate.proposal(&id).unwrap().items.clone();
    let provenance: Vec<Option<Origin>> = items.iter().map(|i| i.issuer.clone()).collect();
    assert_eq!(
        provenance,
        [Some(origin(TAX)), Some(origin(REGISTRY)), None]
    );
    let released = release(&mut world, &id).unwrap();
    assert_eq!(released.proofs.len(), 2);
    assert_eq!(released.proofs[0].issuer, origin(TAX));
    assert_eq!(released.proofs[1].issuer, origin(REGISTRY));
    let signatures: Vec<[u8; 64]> = released.proofs.iter().map(|p| sign_with(&hs, p)).collect();

    // Wrong count, then one signature by the wrong key: refused, nothing attached.
    let now = world.now;
    assert_eq!(
        world
            .gate
            .attach_presentations(&id, signatures[..1].to_vec(), now),
        Err(GateError::SignatureCount {
            expected: 2,
            got: 1
        })
    );
    let mut wrong = signatures.clone();
    wrong[1] = sign_with(&hs, &released.proofs[0]);
    assert_eq!(
        world.gate.attach_presentations(&id, wrong, now),
        Err(GateError::PresentationUnverified {
            index: 1,
            code: "bad_key_binding_signature"
        })
    );
    assert_eq!(
        world
            .gate
            .attach_presentations(&id, vec![[0u8; 64]; 2], now),
        Err(GateError::PresentationUnverified {
            index: 0,
            code: "malformed_key_binding"
        })
    );
    assert!(world.gate.presentations(&id).is_none());
    assert!(world.gate.awaits_presentations(&id));
    world
        .gate
        .attach_presentations(&id, signatures.clone(), now)
        .unwrap();
    assert_eq!(world.gate.presentations(&id).unwrap().len(), 2);
    assert!(!world.gate.awaits_presentations(&id));
    assert_eq!(
        world.gate.attach_presentations(&id, signatures, now),
        Err(GateError::NoProofsPending)
    );
}

#[test]
fn a_self_asserted_release_needs_no_proof() {
    let (credentials, _) = income_credentials(2_850_000, 3);
    let mut world = with_credentials(credentials);
    ask(&mut world, HOUSING, "n-1", json!([income_json(2_900_000)]));
    let id = world.draft_id(HOUSING, "n-1");
    let released = release(&mut world, &id).unwrap();
    assert!(released.proofs.is_empty());
    assert_eq!(
        released.payload.provenance,
        wallet_core::Provenance::SelfAsserted
    );
    assert_eq!(world.gate.credentials().left(&origin(TAX), world.now), 3);
    assert_eq!(
        world.gate.attach_presentations(&id, vec![], world.now),
        Err(GateError::NoProofsPending)
    );
}

#[test]
fn the_approval_digest_covers_provenance() {
    // Same claims and outcomes, once issuer-backed and once self-asserted: different digests.
    let (credentials, _) = income_credentials(2_850_000, 3);
    let mut backed = with_credentials(credentials);
    ask(&mut backed, HOUSING, "n-1", json!([income_json(3_000_000)]));
    let backed_id = backed.draft_id(HOUSING, "n-1");
    let mut plain = World::unlocked();
    ask(&mut plain, HOUSING, "n-1", json!([income_json(3_000_000)]));
    let plain_id = plain.draft_id(HOUSING, "n-1");
    let (a, b) = (
        backed.gate.proposal(&backed_id).unwrap(),
        plain.gate.proposal(&plain_id).unwrap(),
    );
    assert_eq!(a.items[0].satisfied, b.items[0].satisfied);
    assert_ne!(a.digest(), b.digest());
    // A digest shown for one does not release the other.
    let digest = b.digest().to_owned();
    let now = backed.now;
    assert_eq!(
        backed
            .gate
            .release_with_proofs(&backed_id, &digest, Acknowledgement::UnconfirmedSite, now),
        Err(GateError::ApprovalVoid)
    );
}

// ----- what the agent sees ----------------------------------------------------------------------

fn signer_key() -> ed25519_dalek::SigningKey {
    ed25519_dalek::SigningKey::from_bytes(&[3; 32])
}

fn signer_keys() -> wallet_core::KeySet {
    wallet_core::KeySet {
        keys: vec![wallet_core::PublicKeyEntry::new(
            &signer_key().verifying_key(),
            Timestamp::from_millis(T0 - DAY),
            None,
            wallet_core::KeyStatus::Active,
        )],
    }
}

#[test]
fn check_proposal_returns_presentations_only_once_everything_is_signed() {
    let (credentials, hs) = income_credentials(2_850_000, 3);
    let mut world = with_credentials(credentials);
    ask(&mut world, HOUSING, "n-1", json!([income_json(3_000_000)]));
    let id = world.draft_id(HOUSING, "n-1");
    let released = release(&mut world, &id).unwrap();
    let now = world.now;
    let signed = wallet_core::receipt::sign(released.payload.clone(), &signer_key(), now);
    world
        .gate
        .attach_signed(&id, signed, &signer_keys(), now)
        .unwrap();
    // The receipt is signed but the proofs are not: nothing to submit yet.
    let out = world.call("check_proposal", json!({ "proposal_id": id }));
    assert_eq!(out["result"]["signed"], false, "{out}");
    assert!(out["result"].get("receipt").is_none());
    assert!(out["result"].get("presentations").is_none());
    let signatures = released.proofs.iter().map(|p| sign_with(&hs, p)).collect();
    world
        .gate
        .attach_presentations(&id, signatures, now)
        .unwrap();
    let out = world.call("check_proposal", json!({ "proposal_id": id }));
    assert_eq!(out["result"]["signed"], true);
    assert!(out["result"]["receipt"].is_object());
    let presentations = out["result"]["presentations"].as_array().unwrap();
    assert_eq!(presentations.len(), 1);
    assert_eq!(
        presentations[0].as_str(),
        Some(world.gate.presentations(&id).unwrap()[0].as_str())
    );
    let message = out["result"]["message"].as_str().unwrap();
    assert!(
        message.contains("presentations") && message.contains("receipt"),
        "{message}"
    );
}

/// Every piece of a credential an agent must not see before release.
fn secrets(credentials: &Credentials, holders: &[Holder]) -> Vec<String> {
    let mut out = vec![
        REFRESH.to_owned(),
        TAX.to_owned(),
        REGISTRY.to_owned(),
        TAX_NAME.to_owned(),
        REGISTRY_NAME.to_owned(),
        "income_below_".to_owned(),
        "age_equal_or_over".to_owned(),
        "\"issuer\"".to_owned(),
        "issuer_name".to_owned(),
        "~".to_owned(),
    ];
    for issuer in credentials.issuers() {
        for c in issuer.credentials() {
            let mut parts = c.sd_jwt().split('~');
            let jwt = parts.next().unwrap();
            out.extend(jwt.split('.').map(str::to_owned));
            for d in parts.filter(|p| !p.is_empty()) {
                out.push(d.to_owned());
                let decoded: Value =
                    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(d).unwrap()).unwrap();
                out.push(decoded[0].as_str().unwrap().to_owned()); // the salt
            }
            out.push(c.holder_key_id().to_owned());
        }
    }
    for h in holders {
        out.push(h.jwk.x.clone());
        out.push(h.jwk.y.clone());
    }
    out
}

#[test]
fn canary_no_credential_reaches_an_agent_before_release() {
    let (mut credentials, mut hs) = income_credentials(2_850_000, 4);
    hs.extend(add_age(&mut credentials, 36, 40, 4));
    let secrets = secrets(&credentials, &hs);
    let mut world = with_credentials(credentials);
    let mut outputs: Vec<Value> = Vec::new();
    let (housing, pharmacy, tools) = world.grant_housing_and_pharmacy();
    for tool in &tools {
        outputs.push(world.call(tool, json!({})));
        outputs.push(world.call(tool, json!({ "nonce": "x" })));
        outputs.push(world.call(tool, json!({ "junk": 1 })));
    }
    assert!(
        world
            .gate
            .log()
            .entries()
            .iter()
            .any(|e| e.issuer.is_some()),
        "the canary must cover issuer-backed answers"
    );
    for (name, input) in [
        ("wallet_status", json!({})),
        ("check_request", json!({ "request_id": housing })),
        ("check_request", json!({ "request_id": pharmacy })),
        (
            "draft_application",
            json!({ "audience": HOUSING, "nonce": "n-h" }),
        ),
        (
            "draft_application",
            json!({ "audience": PHARMACY, "nonce": "n-p" }),
        ),
        (
            "request_claims",
            json!({ "origin": HOUSING, "nonce": "n-2", "claims": [income_json(3_000_000)] }),
        ),
    ] {
        outputs.push(world.call(name, input));
    }
    let proposals: Vec<capability_gate::ProposalId> =
        world.gate.proposals().map(|p| p.id.clone()).collect();
    for id in &proposals {
        outputs.push(world.call("check_proposal", json!({ "proposal_id": id })));
    }
    let mut texts: Vec<String> = outputs.iter().map(Value::to_string).collect();
    texts.extend(world.definition_texts());
    for text in &texts {
        for secret in &secrets {
            assert!(
                !text.contains(secret.as_str()),
                "{secret:?} leaked into {text}"
            );
        }
    }
    // After release, before the proofs are signed: the released payload names the issuer (that
    // is what the person approved), but no credential piece is out. The gate's own Debug (its
    // log names issuers) prints no credential piece either.
    let pieces: Vec<&String> = secrets
        .iter()
        .filter(|s| {
            ![
                TAX,
                REGISTRY,
                "\"issuer\"",
                "issuer_name",
                TAX_NAME,
                REGISTRY_NAME,
            ]
            .contains(&s.as_str())
        })
        .collect();
    let debug = format!("{:?}", world.gate);
    for piece in &pieces {
        assert!(
            !debug.contains(piece.as_str()),
            "{piece:?} in the gate's Debug"
        );
    }
    for id in &proposals {
        let released = release(&mut world, id).unwrap();
        assert!(!released.proofs.is_empty());
        let out = world
            .call("check_proposal", json!({ "proposal_id": id }))
            .to_string();
        for piece in &pieces {
            assert!(!out.contains(piece.as_str()), "{piece:?} leaked into {out}");
        }
        let debug = format!("{:?}", released.proofs);
        for piece in &pieces {
            assert!(
                !debug.contains(piece.as_str()),
                "{piece:?} in Debug: {debug}"
            );
        }
    }
}

#[test]
fn a_refill_is_due_below_three_unused() {
    let (mut credentials, _) = income_credentials(2_850_000, REFILL_BELOW as u8 + 1);
    let tax = origin(TAX);
    credentials
        .take_for(&tax, &income(3_000_000), true, now())
        .unwrap();
    assert_eq!(credentials.left(&tax, now()), REFILL_BELOW);
    assert!(!credentials.needs_refill(&tax, now()));
    credentials
        .take_for(&tax, &income(3_000_000), true, now())
        .unwrap();
    assert!(credentials.needs_refill(&tax, now()));
    assert!(credentials.summary(now())[0].needs_refill);
    // The wrong answer, or a claim the credential does not prove, takes nothing.
    let left = credentials.left(&tax, now());
    assert!(
        credentials
            .take_for(&tax, &income(3_000_000), false, now())
            .is_err()
    );
    assert!(
        credentials
            .take_for(&tax, &income(2_900_000), true, now())
            .is_err()
    );
    assert_eq!(credentials.left(&tax, now()), left);
    // Pruning drops the used ones and names their holder keys.
    assert_eq!(credentials.prune(now()).len(), 2);
    assert_eq!(credentials.issuers()[0].credentials().len(), left);
}

#[test]
fn a_fact_changed_since_the_answer_is_not_presented() {
    // Answered "below 30,000.00" from the tax office; then a new batch says 72,000.00 (the
    // income changed): the release must not present a credential saying the opposite.
    let (credentials, _) = income_credentials(2_850_000, 3);
    let mut world = with_credentials(credentials);
    ask(&mut world, HOUSING, "n-1", json!([income_json(3_000_000)]));
    let id = world.draft_id(HOUSING, "n-1");
    let tax = Issuer::tax();
    let hs = holders(80, 3);
    let batch = tax.batch(&tax.spec(7_200_000), &hs);
    let now = world.now;
    world
        .gate
        .credentials_mut()
        .accept_batch(
            &tax.info(),
            &tax.jwks(),
            &tax.answer(&batch),
            &jwks_of(&hs),
            now,
        )
        .unwrap();
    let before = world.gate.credentials().clone();
    assert_eq!(
        release(&mut world, &id),
        Err(GateError::ProofMismatch {
            issuer: TAX_LABEL.into()
        })
    );
    assert_eq!(world.gate.credentials(), &before);
    assert_eq!(world.gate.proposal(&id).unwrap().state, ProposalState::Held);
}

#[test]
fn presentations_attach_after_a_lock_and_expire_with_their_key_binding() {
    let (credentials, hs) = income_credentials(2_850_000, 3);
    let mut world = with_credentials(credentials);
    ask(&mut world, HOUSING, "n-1", json!([income_json(3_000_000)]));
    let id = world.draft_id(HOUSING, "n-1");
    let released = release(&mut world, &id).unwrap();
    let signatures: Vec<[u8; 64]> = released.proofs.iter().map(|p| sign_with(&hs, p)).collect();
    // Too late: the key-binding JWT would be stale at the site.
    let late = world.now.plus_millis(DEFAULT_MAX_KB_AGE_MS + 1_000);
    assert_eq!(
        world
            .gate
            .attach_presentations(&id, signatures.clone(), late),
        Err(GateError::PresentationUnverified {
            index: 0,
            code: "stale_key_binding"
        })
    );
    // Locking forgets the credentials but not how to check what was released.
    world.gate.lock();
    let now = world.now;
    world
        .gate
        .attach_presentations(&id, signatures, now)
        .unwrap();
    assert_eq!(world.gate.presentations(&id).unwrap().len(), 1);
    // An unknown proposal.
    assert_eq!(
        world.gate.attach_presentations(
            &capability_gate::ProposalId::parse("p999").unwrap(),
            vec![],
            now
        ),
        Err(GateError::UnknownProposal)
    );
}

#[test]
fn a_claim_in_flight_uses_the_credentials_held_when_it_finishes() {
    let (credentials, _) = income_credentials(7_200_000, 3);
    let mut world = with_credentials(credentials);
    let request = world.request(policy(HOUSING, "n-1", json!([income_json(3_000_000)])));
    let tools = world.grant_all(&request, Lifetime::ONE_HOUR);
    let handler = world.registry.handler(&tools[0]).unwrap().clone();
    let now = world.now;
    let pending = world.gate.begin(&handler, &json!({}), now);
    world.gate.credentials_mut().remove_issuer(&origin(TAX));
    let out = world.gate.finish(pending, now);
    assert_eq!(out["result"]["satisfied"], true, "typed 28,400.00: {out}");
    assert_eq!(last_entry(&world).issuer, None);
}

#[test]
fn session_receipts_carry_the_issuer_backed_provenance() {
    let (credentials, _) = income_credentials(2_850_000, 3);
    let mut world = with_credentials(credentials);
    ask(&mut world, HOUSING, "n-1", json!([income_json(3_000_000)]));
    ask(
        &mut world,
        PHARMACY,
        "n-2",
        json!([{ "kind": "age_at_least", "years": 30 }]),
    );
    let receipts = world.gate.session_receipts(world.now);
    assert_eq!(receipts.len(), 2);
    for receipt in receipts {
        let expected = if receipt.audience.as_str() == HOUSING {
            wallet_core::Provenance::IssuerBacked
        } else {
            wallet_core::Provenance::SelfAsserted
        };
        assert_eq!(receipt.provenance, expected);
    }
    // The exported log names the issuer of the issuer-backed entry only.
    let export = world.gate.log().export();
    assert_eq!(export.matches(TAX).count(), 1, "{export}");
}

#[test]
fn proofs_the_page_cannot_finish_are_reported_to_the_agent() {
    let (credentials, hs) = income_credentials(2_850_000, 3);
    let mut world = with_credentials(credentials);
    ask(&mut world, HOUSING, "n-1", json!([income_json(3_000_000)]));
    let id = world.draft_id(HOUSING, "n-1");
    let released = release(&mut world, &id).unwrap();
    assert_eq!(
        world.gate.fail_presentations(&id, "  "),
        Err(GateError::BadReason)
    );
    world
        .gate
        .fail_presentations(&id, "a holder key is missing in this browser")
        .unwrap();
    let out = world.call("check_proposal", json!({ "proposal_id": id }));
    assert_eq!(out["result"]["status"], "failed", "{out}");
    assert_eq!(
        out["result"]["reason"],
        "a holder key is missing in this browser"
    );
    assert!(out["result"].get("receipt").is_none());
    let signatures = released.proofs.iter().map(|p| sign_with(&hs, p)).collect();
    let now = world.now;
    assert_eq!(
        world.gate.attach_presentations(&id, signatures, now),
        Err(GateError::NoProofsPending)
    );
    assert_eq!(
        world.gate.fail_presentations(&id, "again"),
        Err(GateError::NoProofsPending)
    );
    assert_eq!(
        world
            .gate
            .fail_presentations(&capability_gate::ProposalId::parse("p999").unwrap(), "x"),
        Err(GateError::UnknownProposal)
    );
    // The used credential stays used.
    assert_eq!(world.gate.credentials().left(&origin(TAX), now), 2);
}

mod hostile {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Any byte of a genuine answer changed: refused with an error or, if the change is
        /// harmless (JSON whitespace, the expiry hint), accepted whole; never a panic, and
        /// never a partial batch.
        #[test]
        fn a_mutated_answer_is_refused_or_accepted_whole(at in any::<prop::sample::Index>(), byte in any::<u8>()) {
            let tax = Issuer::tax();
            let hs = holders(1, 2);
            let mut answer = tax.answer(&tax.batch(&tax.spec(2_850_000), &hs));
            let i = at.index(answer.len());
            answer[i] = byte;
            let mut credentials = Credentials::new();
            match credentials.accept_batch(&tax.info(), &tax.jwks(), &answer, &jwks_of(&hs), now()) {
                Ok(n) => {
                    prop_assert_eq!(n, 2);
                    prop_assert_eq!(credentials.left(&origin(TAX), now()), 2);
                    prop_assert_eq!(credentials.answer(&income(3_000_000), now()), Some((true, origin(TAX))));
                }
                Err(e) => {
                    prop_assert!(credentials.is_empty());
                    prop_assert!(!e.to_string().is_empty());
                }
            }
        }

        /// Arbitrary text as an answer, or as stored credentials, never panics.
        #[test]
        fn arbitrary_text_never_panics(text in ".{0,400}") {
            let tax = Issuer::tax();
            let hs = holders(1, 1);
            let mut credentials = Credentials::new();
            prop_assert!(credentials
                .accept_batch(&tax.info(), &tax.jwks(), text.as_bytes(), &jwks_of(&hs), now())
                .is_err());
            let wrapped = json!({ "credentials": [text.clone()] }).to_string();
            prop_assert!(credentials
                .accept_batch(&tax.info(), &tax.jwks(), wrapped.as_bytes(), &jwks_of(&hs), now())
                .is_err());
            let _ = Credentials::from_json(&text);
            let _ = IssuerInfo::parse(&origin(TAX), text.as_bytes());
            let _ = capability_gate::jwks_from_metadata(&origin(TAX), text.as_bytes());
        }
    }

    proptest! {
        // Each case signs and verifies dozens of ES256 signatures (slow unoptimised).
        #![proptest_config(ProptestConfig::with_cases(12))]

        /// Any sequence of questions, drafts, releases and refills: no credential (holder key,
        /// salt, issuer signature) is ever presented twice, every presentation discloses exactly
        /// the released answer, and each one verifies for its audience and nonce.
        #[test]
        fn no_credential_is_presented_twice(ops in prop::collection::vec(
            (prop_oneof![3 => Just(0u8), 3 => Just(1u8), 3 => Just(2u8), 1 => Just(3u8)], 0usize..3, 0usize..4), 4..32)) {
            let (mut credentials, mut hs) = income_credentials(2_850_000, 3);
            hs.extend(add_age(&mut credentials, 36, 40, 3));
            let mut world = with_credentials(credentials);
            let audiences = [HOUSING, PHARMACY, "http://127.0.0.1:8083"];
            let claims = [
                income_json(3_000_000),
                income_json(2_900_000),
                json!({ "kind": "age_at_least", "years": 18 }),
                income_json(3_500_000),
            ];
            let mut nonces: Vec<Option<String>> = vec![None; 3];
            let mut proofs: Vec<(capability_gate::ProposalId, ProofToSign)> = Vec::new();
            let mut refills = 0u8;
            for (i, (kind, a, c)) in ops.into_iter().enumerate() {
                match kind {
                    0 => {
                        let nonce = format!("n-{i}");
                        ask(&mut world, audiences[a], &nonce, json!([claims[c].clone()]));
                        nonces[a] = Some(nonce);
                    }
                    1 => {
                        let asked: Vec<usize> = (0..3).filter(|&i| nonces[i].is_some()).collect();
                        if let Some(&a) = asked.get(a % asked.len().max(1)) {
                            let nonce = nonces[a].clone().unwrap();
                            let out = world.call(
                                "draft_application",
                                json!({ "audience": audiences[a], "nonce": nonce }),
                            );
                            prop_assert!(out["ok"].is_boolean());
                        }
                    }
                    2 => {
                        let held = world.held_proposals();
                        if let Some(id) = held.get(c % held.len().max(1))
                            && let Ok(released) = release(&mut world, id)
                        {
                            let items = world.gate.proposal(id).unwrap().items.clone();
                            let backed = items.iter().filter(|i| i.issuer.is_some()).count();
                            prop_assert_eq!(released.proofs.len(), backed);
                            proofs.extend(released.proofs.into_iter().map(|p| (id.clone(), p)));
                        }
                    }
                    _ => {
                        refills += 1;
                        let tax = Issuer::tax();
                        let fresh = holders(100 + 2 * refills, 2);
                        let batch = tax.batch(&tax.spec(2_850_000), &fresh);
                        let now = world.now;
                        tax.deliver(world.gate.credentials_mut(), &batch, &fresh, now).unwrap();
                        hs.extend(fresh);
                    }
                }
            }
            let mut keys: Vec<&str> = proofs.iter().map(|(_, p)| p.holder_key_id.as_str()).collect();
            let mut signatures: Vec<&str> = proofs.iter().map(|(_, p)| jwt_signature(&p.without_kb)).collect();
            let mut salts: Vec<&str> = proofs.iter().map(|(_, p)| disclosure_segment(&p.without_kb)).collect();
            let n = proofs.len();
            keys.sort_unstable();
            keys.dedup();
            signatures.sort_unstable();
            signatures.dedup();
            salts.sort_unstable();
            salts.dedup();
            prop_assert_eq!((keys.len(), signatures.len(), salts.len()), (n, n, n));
            // Each proposal's presentations attach and disclose exactly its answers.
            let mut ids: Vec<capability_gate::ProposalId> = proofs.iter().map(|(id, _)| id.clone()).collect();
            ids.dedup();
            for id in ids {
                let pending = world.gate.proofs_to_sign(&id).to_vec();
                let sigs = pending.iter().map(|p| sign_with(&hs, p)).collect();
                let now = world.now;
                world.gate.attach_presentations(&id, sigs, now).unwrap();
                let proposal = world.gate.proposal(&id).unwrap().clone();
                let texts = world.gate.presentations(&id).unwrap().to_vec();
                let backed: Vec<_> = proposal.items.iter().filter(|i| i.issuer.is_some()).collect();
                prop_assert_eq!(texts.len(), backed.len());
                for (text, item) in texts.iter().zip(backed) {
                    let issuer = item.issuer.clone().unwrap();
                    let jwks = if issuer.as_str() == TAX { Issuer::tax().jwks() } else { Issuer::registry().jwks() };
                    let trusted = [TrustedIssuer { iss: issuer.as_str().to_owned(), jwks }];
                    let verified = sd_jwt::verify_presentation(
                        text, &trusted, proposal.audience.as_str(), proposal.nonce.as_str(), now,
                        DEFAULT_MAX_KB_AGE_MS,
                    ).unwrap();
                    let name = tacit_protocol::predicates::disclosure_for(
                        &item.claim,
                        Some(&wallet_core::Currency::parse("EUR").unwrap()),
                    ).unwrap();
                    let disclosed: Vec<(String, Value)> = verified.disclosed.into_iter().collect();
                    prop_assert_eq!(disclosed, vec![(name, json!(item.satisfied))]);
                }
            }
        }
    }
}

// ----- issue 12: the person drops items before release ------------------------------------------

/// A dropped issuer-backed item gets no proof and uses no credential; a kept one gets its proof;
/// a dropped self-asserted item beside a kept issuer-backed one leaves nothing of itself.
#[test]
fn only_kept_issuer_backed_items_get_proofs() {
    let districts =
        json!({ "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] });
    for (kept, proofs_expected) in [(vec![1usize], 0usize), (vec![0], 1), (vec![0, 1], 1)] {
        let (credentials, _hs) = income_credentials(2_850_000, 3);
        let mut world = with_credentials(credentials);
        let out = ask(
            &mut world,
            HOUSING,
            "n-1",
            json!([income_json(3_000_000), districts.clone()]),
        );
        assert!(out.iter().all(|o| o["ok"] == true), "{out:?}");
        let id = world.draft_id(HOUSING, "n-1");
        let proposal = world.gate.proposal(&id).unwrap().clone();
        assert_eq!(proposal.items[0].issuer, Some(origin(TAX)));
        assert_eq!(proposal.items[1].issuer, None);
        let left_before = world.gate.credentials().left(&origin(TAX), world.now);
        let now = world.now;
        let released = world
            .gate
            .release_kept(
                &id,
                proposal.digest(),
                &kept,
                Acknowledgement::UnconfirmedSite,
                now,
            )
            .unwrap();
        assert_eq!(released.proofs.len(), proofs_expected, "kept {kept:?}");
        assert_eq!(
            world.gate.credentials().left(&origin(TAX), world.now),
            left_before - proofs_expected,
            "a credential is used only for a kept issuer-backed item"
        );
        let claims: Vec<_> = released
            .payload
            .entries
            .iter()
            .map(|e| e.claim.clone())
            .collect();
        let expected: Vec<_> = kept
            .iter()
            .map(|&i| proposal.items[i].claim.clone())
            .collect();
        assert_eq!(claims, expected);
        assert_eq!(
            released.payload.provenance,
            if proofs_expected == 0 {
                wallet_core::Provenance::SelfAsserted
            } else {
                wallet_core::Provenance::IssuerBacked
            }
        );
        released.payload.check_structure().unwrap();
        assert_eq!(
            world.gate.proofs_to_sign(&id).len(),
            proofs_expected,
            "only kept items wait for a signature"
        );
    }
}

/// Token Status List (issue 31): the credentials whose entry the issuer's list sets are dropped
/// (their holder keys named for deletion); the others stay; with none left, the issuer is
/// forgotten. A list for another URI drops nothing.
#[test]
fn credentials_the_issuer_revoked_are_dropped() {
    use tacit_protocol::status_list::{INVALID, StatusList, sign_token, verify_token};
    let tax = Issuer::tax();
    let hs = holders(1, 4);
    let spec = tax.spec(2_850_000);
    let batch: Vec<String> = hs
        .iter()
        .enumerate()
        .map(|(i, h)| tax.issue_with_entry(&spec, &h.jwk, h.seed, Some(10 + i as u64)))
        .collect();
    let mut credentials = Credentials::new();
    tax.deliver(&mut credentials, &batch, &hs, now()).unwrap();
    let issuer = origin(TAX);
    let uri = format!("{TAX}/status/1");
    assert_eq!(credentials.status_uri(&issuer), Some(uri.clone()));
    let list_of = |revoked: &[u64], uri: &str| {
        let mut list = StatusList::new(64);
        for idx in revoked {
            list.set(*idx, INVALID);
        }
        let token = sign_token(
            &tax.key,
            &tax.kid,
            TAX,
            uri,
            &list,
            now(),
            now().plus_millis(60_000),
            60,
        );
        verify_token(&token, &tax.jwks(), uri, now()).unwrap()
    };
    // A list naming another URI, or revoking nothing of ours: nothing goes.
    assert!(
        credentials
            .drop_revoked(&issuer, &list_of(&[10], "http://127.0.0.1:8791/status/2"))
            .is_empty()
    );
    assert!(
        credentials
            .drop_revoked(&issuer, &list_of(&[3, 40], &uri))
            .is_empty()
    );
    assert_eq!(credentials.left(&issuer, now()), 4);
    // Two revoked: those two go.
    let dropped = credentials.drop_revoked(&issuer, &list_of(&[10, 12], &uri));
    assert_eq!(dropped, vec![hs[0].id.clone(), hs[2].id.clone()]);
    assert_eq!(credentials.left(&issuer, now()), 2);
    // All revoked: the issuer is forgotten.
    let dropped = credentials.drop_revoked(&issuer, &list_of(&[10, 11, 12, 13], &uri));
    assert_eq!(dropped.len(), 2);
    assert!(credentials.issuer(&issuer).is_none());
    assert!(credentials.holder_key_ids().is_empty());
}
