//! Issuer-backed answers through the real site server on a socket: it fetches the trusted
//! issuer's keys from its `/.well-known/jwt-vc-issuer` (a stand-in issuer on loopback), accepts
//! an application whose income is proven by a presentation and says so, refuses a missing or
//! misbound presentation without spending the nonce, and starts even when the issuer is down.

#![cfg(not(target_arch = "wasm32"))] // the server and its tests are native
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::issuer::*;
use common::*;
use serde_json::{Value, json};
use tacit_protocol::sd_jwt::WELL_KNOWN_PATH;
use tacit_site::server::config::TrustedIssuer;
use tacit_site::server::issuer_keys::MIN_REFETCH_INTERVAL;
use tacit_site::server::{Config, RunningSite, spawn, system_now};
use wallet_core::{Nonce, Origin, Outcome};

/// A stand-in issuer serving its metadata on `listener`, counting fetches.
struct IssuerServer {
    issuer: TestIssuer,
    fetches: Arc<AtomicUsize>,
    _task: tokio::task::JoinHandle<()>,
}

impl IssuerServer {
    async fn serve(listener: tokio::net::TcpListener, seed: u8) -> Self {
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let issuer = TestIssuer::new(seed, &origin, "Tax Office Nordstadt");
        let metadata = issuer.metadata_json();
        let fetches = Arc::new(AtomicUsize::new(0));
        let counter = fetches.clone();
        let app = axum::Router::new().route(
            WELL_KNOWN_PATH,
            axum::routing::get(move || {
                counter.fetch_add(1, Ordering::SeqCst);
                let body = metadata.clone();
                async move { ([("content-type", "application/json")], body) }
            }),
        );
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            issuer,
            fetches,
            _task: task,
        }
    }

    async fn start(seed: u8) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serve(listener, seed).await
    }
}

/// The housing configuration on port 0, a temp data dir, the test's signer pinned, trusting
/// the issuer at `issuer` (keys from its well-known metadata).
fn config(root: &Path, issuer: &Origin) -> Config {
    let mut config = pinned_config(root, None);
    config.origin = None;
    config.trusted_issuers = vec![TrustedIssuer {
        issuer: issuer.clone(),
        name: "Tax Office Nordstadt".into(),
        keys_url: Some(format!("{issuer}{WELL_KNOWN_PATH}")),
        pinned_keys: None,
        vouches_for: Some(wallet_core::Attribute::Income),
        vct: Some(common::issuer::INCOME_VCT.into()),
    }];
    config
}

/// `method path` on the running site with an optional JSON body → (status, JSON).
async fn http(site: &RunningSite, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let url = format!("http://{}{path}", site.addr());
    let method = method.to_owned();
    tokio::task::spawn_blocking(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut response = match (method.as_str(), body) {
            ("GET", _) => agent.get(&url).call().unwrap(),
            (_, Some(body)) => agent
                .post(&url)
                .header("content-type", "application/json")
                .send(body.to_string())
                .unwrap(),
            _ => panic!("unsupported"),
        };
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    })
    .await
    .unwrap()
}

/// `POST /api/applications` with `body`: the status and the answer.
async fn apply(site: &RunningSite, body: Value) -> (u16, Value) {
    http(site, "POST", "/api/applications", Some(body)).await
}

/// Asserts `answer` refuses a presentation as `proof_invalid`, its message saying `says`.
fn assert_proof_invalid(answer: &Value, says: &str) {
    assert_eq!(code(answer), "proof_invalid");
    assert!(
        answer["error"]["message"].as_str().unwrap().contains(says),
        "{answer}"
    );
}

async fn fresh_nonce(site: &RunningSite) -> Nonce {
    let (status, body) = http(site, "GET", "/api/requirements", None).await;
    assert_eq!(status, 200, "{body}");
    Nonce::parse(body["result"]["nonce"].as_str().unwrap()).unwrap()
}

/// A receipt for `nonce` whose income answer the issuer backs, and the wallet's presentation.
fn application(site: &RunningSite, issuer: &TestIssuer, nonce: &Nonce, aud: &Origin) -> Value {
    let now = system_now();
    let policy = housing_config().policy;
    let answers = vec![
        (
            policy.claims[0].clone(),
            Outcome::Satisfied,
            Some(issuer.origin.clone()),
        ),
        (policy.claims[1].clone(), Outcome::Satisfied, None),
    ];
    let receipt = receipt_with(site.origin(), nonce, &answers, now, &signer_key());
    let holder = holder_key(9);
    let credential = issuer.income_credential(&holder, 2_850_000, "EUR", now.plus_millis(-DAY));
    let text = presentation(
        &credential,
        &["income_below_30000"],
        &holder,
        aud,
        nonce,
        now,
    );
    json!({ "receipt": receipt, "presentations": [text] })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proven_income_is_accepted_and_broken_proofs_are_refused_over_http() {
    let root = tempfile::tempdir().unwrap();
    let issuer = IssuerServer::start(31).await;
    let site = spawn(&config(root.path(), &issuer.issuer.origin))
        .await
        .unwrap();
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1, "fetched at start");
    let origin = site.origin().clone();

    // Accepted, and the envelope says who proved what.
    let nonce = fresh_nonce(&site).await;
    let body = application(&site, &issuer.issuer, &nonce, &origin);
    let (status, answer) = apply(&site, body.clone()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["ok"], true, "{answer}");
    let result = &answer["result"];
    assert_eq!(result["proven"].as_array().unwrap().len(), 1);
    assert_eq!(result["proven"][0]["issuer"], issuer.issuer.origin.as_str());
    assert_eq!(result["proven"][0]["issuer_name"], "Tax Office Nordstadt");
    assert_eq!(
        result["proven"][0]["claim"],
        json!(housing_config().policy.claims[0])
    );
    assert!(
        result["message"]
            .as_str()
            .unwrap()
            .contains("income proven by Tax Office Nordstadt; district: your word"),
        "{answer}"
    );
    // The same body again: the nonce is spent.
    let (_, again) = apply(&site, body).await;
    assert_eq!(code(&again), "replayed_nonce");

    // Missing: the receipt says the tax office vouches, no presentation comes with it.
    let nonce = fresh_nonce(&site).await;
    let mut body = application(&site, &issuer.issuer, &nonce, &origin);
    body.as_object_mut().unwrap().remove("presentations");
    let (status, answer) = apply(&site, body).await;
    assert_eq!(status, 200);
    assert_eq!(code(&answer), "proof_missing");
    assert_eq!(
        answer["error"]["claim"],
        json!(housing_config().policy.claims[0])
    );

    // Bound to another site: refused, naming the SD-JWT error code; the nonce stays open.
    let elsewhere = application(&site, &issuer.issuer, &nonce, &pharmacy_origin());
    let (status, answer) = apply(&site, elsewhere).await;
    assert_eq!(status, 200);
    assert_proof_invalid(&answer, "wrong_audience");
    assert_eq!(
        site.state()
            .nonces()
            .state(&nonce, system_now())
            .await
            .unwrap(),
        tacit_site::NonceState::Open
    );
    let right = application(&site, &issuer.issuer, &nonce, &origin);
    let (_, answer) = apply(&site, right).await;
    assert_eq!(answer["ok"], true, "{answer}");

    // A key id the issuer does not publish (an impostor signing as the tax office): refused.
    // The site would fetch the metadata again in case the issuer rotated, but not within the
    // refetch interval of its last fetch (at start): made-up key ids cost the issuer nothing.
    // (The refetch after the interval: see the next test.)
    let impostor = TestIssuer {
        key: ec_key(77),
        kid: "kid-77".into(),
        origin: issuer.issuer.origin.clone(),
        name: "Tax Office Nordstadt".into(),
    };
    for _ in 0..2 {
        let nonce = fresh_nonce(&site).await;
        let forged = application(&site, &impostor, &nonce, &origin);
        let (_, answer) = apply(&site, forged).await;
        assert_proof_invalid(&answer, "unknown_key");
        assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);
    }

    // The site's own submit tool documents the presentations it takes.
    let (_, page) = http(&site, "GET", "/api/site", None).await;
    let schema = &page["tools"][1]["inputSchema"]["properties"]["presentations"];
    assert_eq!(schema["type"], "array");
    // And names the issuers it trusts: their origins and names, never their keys.
    assert_eq!(
        page["trusted_issuers"],
        json!([{ "issuer": issuer.issuer.origin.as_str(), "name": "Tax Office Nordstadt" }])
    );
    site.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_starts_while_its_issuer_is_down_and_trusts_it_once_reachable() {
    let root = tempfile::tempdir().unwrap();
    // An address with nothing listening yet.
    let reserved = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr: SocketAddr = reserved.local_addr().unwrap();
    drop(reserved);
    let issuer_origin = Origin::parse(&format!("http://{addr}")).unwrap();
    let site = spawn(&config(root.path(), &issuer_origin)).await.unwrap();
    let origin = site.origin().clone();
    let issuer = TestIssuer::new(33, issuer_origin.as_str(), "Tax Office Nordstadt");

    // Self-asserted applications go through meanwhile.
    let nonce = fresh_nonce(&site).await;
    let receipt = receipt(
        site.origin(),
        &nonce,
        &all_satisfied(),
        system_now(),
        &signer_key(),
    );
    let (_, answer) = apply(&site, submission(&receipt)).await;
    assert_eq!(answer["ok"], true, "{answer}");

    // An issuer-backed one cannot be checked yet: refused, with a clear message, nothing spent.
    let nonce = fresh_nonce(&site).await;
    let body = application(&site, &issuer, &nonce, &origin);
    let (status, answer) = apply(&site, body.clone()).await;
    assert_eq!(status, 200);
    assert_proof_invalid(&answer, "could not fetch the keys of Tax Office Nordstadt");

    // The issuer comes up; after the refetch interval the same application is accepted.
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let server = IssuerServer::serve(listener, 33).await;
    tokio::time::sleep(MIN_REFETCH_INTERVAL).await;
    let (_, answer) = apply(&site, body).await;
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(
        answer["result"]["proven"][0]["issuer"],
        issuer_origin.as_str()
    );
    assert_eq!(
        server.fetches.load(Ordering::SeqCst),
        1,
        "one fetch, on demand"
    );
    site.shutdown().await.unwrap();
}
