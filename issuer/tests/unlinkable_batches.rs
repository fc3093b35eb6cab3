//! Issue 28, items 2 and 3: presentations of real batches from this issuer, made by the wallet
//! core (`capability_gate`: the batch accepted by `Credentials::accept_batch`, the claim
//! answered through a granted tool, the release and its key-binding JWT), compared **field by
//! field**: the issuer JWT's header and payload, the disclosure, the KB-JWT's header and payload.
//!
//! (a) Two presentations of one batch at two sites, and (b) two people's presentations of
//! batches issued the same day (at 10:00 and at 17:00), differ only in salts, digests (`_sd`,
//! `sd_hash`), holder keys (`cnf`) and signatures — besides the `aud` and `nonce` each site chose
//! itself. For the age issuer (b) pairs someone turning 18 in ten days with someone of 36: the
//! `exp` used to be the first one's birthday. And the database keeps the day of issuance only.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use capability_gate::credentials::{
    BatchGrant, Credentials, IssuerInfo, Jwks, jwks_from_metadata, pop_input, request_body,
};
use capability_gate::{Acknowledgement, Gate, Lifetime, MemoryHost, Registry};
use common::*;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Value, json};
use tacit_issuer::{Attribute, Person};
use tacit_protocol::request_auth::{InstallKey, Jwk};
use tacit_protocol::sd_jwt::{DEFAULT_MAX_KB_AGE_MS, TrustedIssuer, verify_presentation};
use tacit_store::sqlx::{self, Row};
use wallet_core::{DisclosureLedger, Origin, SessionId, Timestamp};

const HOUSING: &str = "https://housing.example";
const PHARMACY: &str = "https://pharmacy.example";
/// 2026-12-01T00:00:00Z, the day of `NOW`.
const TODAY: i64 = NOW - 10 * 60 * MINUTE;

fn origin() -> Origin {
    Origin::parse(ORIGIN).unwrap()
}

/// What the wallet fetched from the issuer and kept: its description, keys and credentials,
/// and the holder keys (by thumbprint).
struct Wallet {
    credentials: Credentials,
    holders: Vec<(String, SigningKey)>,
}

async fn read(issuer: &TestIssuer, path: &str) -> Vec<u8> {
    let (status, _, bytes) = send_raw(&issuer.app, get(path)).await;
    assert_eq!(status, StatusCode::OK);
    bytes
}

/// The wallet core fetches a batch of `count` credentials for `person` (a fresh code), with
/// holder keys seeded by `seed`, as the page does: `request_body`, then `accept_batch`.
async fn enrol(issuer: &TestIssuer, person: &Person, seed: u8, count: u8) -> Wallet {
    let info = IssuerInfo::parse(&origin(), &read(issuer, "/v1/issuer").await).unwrap();
    let jwks: Jwks =
        jwks_from_metadata(&origin(), &read(issuer, "/.well-known/jwt-vc-issuer").await).unwrap();
    let code = issuer.code_for(person).await;
    let nonce = issuer.nonce().await;
    let keys: Vec<SigningKey> = (0..count)
        .map(|i| {
            let mut bytes = [seed; 32];
            bytes[31] = i + 1;
            SigningKey::from_slice(&bytes).unwrap()
        })
        .collect();
    let sent: Vec<(Jwk, [u8; 64])> = keys
        .iter()
        .map(|k| {
            let sig: Signature = k.sign(pop_input(&origin(), &nonce).as_bytes());
            (
                InstallKey::from_verifying_key(*k.verifying_key()).to_jwk(),
                sig.to_bytes().into(),
            )
        })
        .collect();
    let body = request_body(BatchGrant::Code(code.canonical()), &nonce, &sent);
    let request = Request::post("/v1/credentials")
        .header("content-type", "application/json")
        .body(Body::from(body))
        .unwrap();
    let (status, _, answer) = send_raw(&issuer.app, request).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&answer)
    );
    let mut credentials = Credentials::new();
    let holder_jwks: Vec<Jwk> = sent.iter().map(|(j, _)| j.clone()).collect();
    let added = credentials
        .accept_batch(&info, &jwks, &answer, &holder_jwks, issuer.now())
        .unwrap();
    assert_eq!(added, usize::from(count));
    let holders = keys
        .into_iter()
        .map(|k| {
            let id = InstallKey::from_verifying_key(*k.verifying_key())
                .id()
                .as_str()
                .to_owned();
            (id, k)
        })
        .collect();
    Wallet {
        credentials,
        holders,
    }
}

/// The wallet's gate, unlocked with the sample profile and holding `wallet`'s credentials, and
/// the agent's host.
fn gate_for(wallet: &Wallet) -> (Gate, Registry<MemoryHost>) {
    let mut gate = Gate::new(
        SessionId::parse("s-unlinkable").unwrap(),
        DisclosureLedger::default(),
    );
    gate.unlock(tacit_testkit::fixtures::profile());
    gate.set_credentials(wallet.credentials.clone());
    let mut registry = Registry::new(MemoryHost::default());
    assert!(registry.sync(&gate).is_empty());
    (gate, registry)
}

fn call(
    gate: &mut Gate,
    registry: &mut Registry<MemoryHost>,
    name: &str,
    input: Value,
    now: Timestamp,
) -> Value {
    let host = registry.host().clone();
    let out = host.execute(gate, name, &input, now).unwrap();
    assert!(registry.sync(gate).is_empty());
    out
}

/// Site `audience` asks `claim` with `nonce`; the person grants, the agent calls the tool and
/// drafts, the person releases, the holder key signs: the presentation that leaves.
fn present(
    gate: &mut Gate,
    registry: &mut Registry<MemoryHost>,
    wallet: &Wallet,
    (audience, nonce): (&str, &str),
    claim: &Value,
    now: Timestamp,
) -> String {
    let policy = json!({ "origin": audience, "nonce": nonce, "claims": [claim] });
    let out = call(gate, registry, "request_claims", policy, now);
    let request =
        capability_gate::RequestId::parse(out["result"]["request_id"].as_str().unwrap()).unwrap();
    gate.grant(&request, &[0], Lifetime::ONE_HOUR, now).unwrap();
    assert!(registry.sync(gate).is_empty());
    let tool = gate
        .grants()
        .filter(|g| g.request_id == request)
        .find_map(|g| capability_gate::gate::tool_name_of(g).map(|n| n.as_str().to_owned()))
        .unwrap();
    let answer = call(gate, registry, &tool, json!({}), now);
    assert_eq!(answer["result"]["satisfied"], true, "{answer}");
    let draft = call(
        gate,
        registry,
        "draft_application",
        json!({ "audience": audience, "nonce": nonce }),
        now,
    );
    let id = capability_gate::ProposalId::parse(draft["result"]["proposal_id"].as_str().unwrap())
        .unwrap();
    let digest = gate.proposal(&id).unwrap().digest().to_owned();
    let released = gate
        .release_with_proofs(&id, &digest, Acknowledgement::UnconfirmedSite, now)
        .unwrap();
    assert_eq!(released.proofs.len(), 1, "issuer-backed");
    let signatures: Vec<[u8; 64]> = released
        .proofs
        .iter()
        .map(|proof| {
            let (_, key) = wallet
                .holders
                .iter()
                .find(|(id, _)| *id == proof.holder_key_id)
                .unwrap();
            let sig: Signature = key.sign(proof.signing_input.as_bytes());
            sig.to_bytes().into()
        })
        .collect();
    gate.attach_presentations(&id, signatures, now).unwrap();
    gate.presentations(&id).unwrap()[0].clone()
}

fn decode(part: &str) -> Value {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

/// A presentation taken apart: what must be the same for everyone (`shape`), and what may
/// differ — each site's own `aud`/`nonce`, and the random parts (salts, digests, holder key,
/// signatures, the status list entry).
#[derive(Debug)]
struct Parts {
    shape: Value,
    site: (Value, Value),
    salt: Value,
    digests: Value,
    cnf: Value,
    sd_hash: Value,
    signatures: (String, String),
    /// The credential's own entry in the issuer's status list (the list's URI stays in
    /// `shape`: it is the same for everyone).
    entry: Value,
}

fn parts(presentation: &str) -> Parts {
    let pieces: Vec<&str> = presentation.split('~').collect();
    assert_eq!(pieces.len(), 3, "issuer JWT, one disclosure, KB-JWT");
    let jwt: Vec<&str> = pieces[0].split('.').collect();
    let kb: Vec<&str> = pieces[2].split('.').collect();
    let (header, mut payload) = (decode(jwt[0]), decode(jwt[1]));
    let (kb_header, mut kb_payload) = (decode(kb[0]), decode(kb[1]));
    let mut disclosure = decode(pieces[1]);
    let payload_map = payload.as_object_mut().unwrap();
    let digests = payload_map.remove("_sd").unwrap();
    let cnf = payload_map.remove("cnf").unwrap();
    let entry = payload_map["status"]["status_list"]
        .as_object_mut()
        .expect("every credential names its status list entry")
        .remove("idx")
        .unwrap();
    let kb_map = kb_payload.as_object_mut().unwrap();
    let site = (
        kb_map.remove("aud").unwrap(),
        kb_map.remove("nonce").unwrap(),
    );
    let sd_hash = kb_map.remove("sd_hash").unwrap();
    let salt = disclosure.as_array_mut().unwrap().remove(0);
    Parts {
        shape: json!({
            "issuer_header": header,
            "issuer_payload": payload,
            "digest_count": digests.as_array().unwrap().len(),
            "cnf_kind": [cnf["jwk"]["kty"], cnf["jwk"]["crv"], cnf["jwk"].as_object().unwrap().len()],
            "disclosure": disclosure,
            "kb_header": kb_header,
            "kb_payload": kb_payload,
        }),
        site,
        salt,
        digests,
        cnf,
        sd_hash,
        signatures: (jwt[2].to_owned(), kb[2].to_owned()),
        entry,
    }
}

/// `a` and `b` differ only where they may: the same shape, everything random different.
fn assert_unlinkable(a: &Parts, b: &Parts, what: &str) {
    assert_eq!(a.shape, b.shape, "{what}: a field differs");
    assert_ne!(a.salt, b.salt, "{what}: salts");
    assert_ne!(a.digests, b.digests, "{what}: digests");
    assert_ne!(a.cnf, b.cnf, "{what}: holder keys");
    assert_ne!(a.sd_hash, b.sd_hash, "{what}: sd_hash");
    assert_ne!(a.signatures.0, b.signatures.0, "{what}: issuer signatures");
    assert_ne!(a.signatures.1, b.signatures.1, "{what}: KB signatures");
    assert_ne!(a.entry, b.entry, "{what}: status list entries");
}

fn verified(issuer_jwks: &Jwks, presentation: &str, (aud, nonce): (&str, &str), now: Timestamp) {
    let trusted = [TrustedIssuer {
        iss: ORIGIN.to_owned(),
        jwks: issuer_jwks.clone(),
    }];
    verify_presentation(
        presentation,
        &trusted,
        aud,
        nonce,
        now,
        DEFAULT_MAX_KB_AGE_MS,
    )
    .unwrap();
}

async fn compare_for(attribute: Attribute, other: Person, claim: Value) {
    let issuer = issuer_on(None, attribute).await;
    let jwks = jwks_from_metadata(
        &origin(),
        &read(&issuer, "/.well-known/jwt-vc-issuer").await,
    )
    .unwrap();
    // Ana fetches a batch at 10:00, the other person at 17:00 the same day.
    let ana_wallet = enrol(&issuer, &ana(), 0x21, 2).await;
    issuer.set_time(NOW + 7 * 60 * MINUTE);
    let other_wallet = enrol(&issuer, &other, 0x31, 1).await;
    // Everyone presents at 18:00.
    let now = Timestamp::from_millis(NOW + 8 * 60 * MINUTE);

    // (a) One batch, two sites.
    let (mut gate, mut registry) = gate_for(&ana_wallet);
    let housing = (HOUSING, "n-housing-1");
    let pharmacy = (PHARMACY, "n-pharmacy-1");
    let at_housing = present(&mut gate, &mut registry, &ana_wallet, housing, &claim, now);
    let at_pharmacy = present(&mut gate, &mut registry, &ana_wallet, pharmacy, &claim, now);
    verified(&jwks, &at_housing, housing, now);
    verified(&jwks, &at_pharmacy, pharmacy, now);
    let (a, b) = (parts(&at_housing), parts(&at_pharmacy));
    assert_eq!(a.site, (json!(HOUSING), json!("n-housing-1")));
    assert_eq!(b.site, (json!(PHARMACY), json!("n-pharmacy-1")));
    assert_unlinkable(&a, &b, &format!("{attribute:?}: one batch at two sites"));

    // (b) Two people, batches of the same day, one site.
    let (mut gate, mut registry) = gate_for(&other_wallet);
    let again = (HOUSING, "n-housing-2");
    let theirs = present(&mut gate, &mut registry, &other_wallet, again, &claim, now);
    verified(&jwks, &theirs, again, now);
    let c = parts(&theirs);
    assert_eq!(c.site, (json!(HOUSING), json!("n-housing-2")));
    assert_unlinkable(&a, &c, &format!("{attribute:?}: two people, one day"));

    // What everyone's presentations of that day say: the day's grid and the current key.
    let payload = &a.shape["issuer_payload"];
    assert_eq!(payload["iat"], json!(TODAY / 1000));
    assert_eq!(
        payload["exp"],
        json!((TODAY + tacit_issuer::predicates::CREDENTIAL_VALIDITY_MS) / 1000)
    );
    assert_eq!(
        a.shape["issuer_header"]["kid"],
        json!(jwks.keys()[0].kid.as_str())
    );
}

#[tokio::test]
async fn income_presentations_of_one_batch_or_one_day_differ_only_in_random_parts() {
    let chloe = Person {
        person_id: "p-chloe".to_owned(),
        name: "Chloe Demo".to_owned(),
        income_minor: Some(1_500_000),
        currency: Some("EUR".to_owned()),
        birth_date: Some("1958-06-30".to_owned()),
    };
    let claim = json!({ "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } });
    compare_for(Attribute::Income, chloe, claim).await;
}

#[tokio::test]
async fn age_presentations_do_not_tell_a_birthday() {
    // Turns 18 on 2026-12-11, ten days after NOW: the old `exp` was that midnight. Both are at
    // least 16; nothing else of theirs may show.
    let dan = Person {
        person_id: "p-dan".to_owned(),
        name: "Dan Demo".to_owned(),
        birth_date: Some("2008-12-11".to_owned()),
        ..ana()
    };
    compare_for(
        Attribute::BirthDate,
        dan,
        json!({ "kind": "age_at_least", "years": 16 }),
    )
    .await;
}

/// Every time the database holds about a person's batches is the day (midnight UTC), never the
/// instant: the `issued` log, the refresh tokens, the codes' and nonces' use.
#[tokio::test]
async fn the_database_keeps_the_day_of_an_issuance_only() {
    let issuer = income_issuer().await;
    issuer.set_time(NOW + 1_234);
    let (_, refresh) = issuer.first_batch().await;
    issuer.set_time(NOW + 5 * MINUTE + 567);
    let nonce = issuer.nonce().await;
    let (status, _, body) = issuer
        .post(&json!({ "refresh_token": refresh, "nonce": nonce, "holder_keys": [entry(&holder(4), &nonce)] }))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let pool = issuer.db.store().pool();
    let column = async |sql: &'static str| -> Vec<i64> {
        sqlx::query(sql)
            .fetch_all(pool)
            .await
            .unwrap()
            .iter()
            .map(|row| row.try_get::<i64, _>(0).unwrap())
            .collect()
    };
    assert_eq!(column("SELECT issued_at FROM issued").await, [TODAY, TODAY]);
    let batch_exp = TODAY + tacit_issuer::predicates::CREDENTIAL_VALIDITY_MS;
    assert_eq!(
        column("SELECT expires_at FROM issued").await,
        [batch_exp, batch_exp]
    );
    assert_eq!(
        column("SELECT created_at FROM refresh_tokens").await,
        [TODAY, TODAY]
    );
    assert_eq!(
        column("SELECT expires_at FROM refresh_tokens").await,
        [
            TODAY + tacit_issuer::REFRESH_VALIDITY_MS,
            TODAY + tacit_issuer::REFRESH_VALIDITY_MS
        ]
    );
    assert_eq!(
        column("SELECT used_at FROM refresh_tokens WHERE used_at IS NOT NULL").await,
        [TODAY]
    );
    assert_eq!(
        column("SELECT used_at FROM enrolment_codes WHERE used_at IS NOT NULL").await,
        [TODAY]
    );
    assert_eq!(
        column("SELECT used_at FROM nonces WHERE used_at IS NOT NULL").await,
        [TODAY, TODAY]
    );
}
