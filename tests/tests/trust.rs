//! Issue 11's attacks, end to end against the real servers and the wallet page in Chromium, each
//! refused:
//! - any local process asking the signer to sign (no wallet, no enrolment): 401, and a receipt
//!   it signs itself is refused by the site's server;
//! - `?signer=` on the wallet: a listener at that URL receives nothing, before or after
//!   enrolment; the wallet signs only through the signer it is enrolled with;
//! - a revoked install gets nothing signed;
//! - an agent relaying a site's requirements as another origin: the wallet says "not confirmed"
//!   and releases only after the person confirms the warning.
//!
//! (`?signer=` on a site, replay across reloads, tabs, storage edits and a site restart are in
//! `flows.rs`; two site instances on one PostgreSQL in `examples/site/tests/postgres.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ed25519_dalek::SigningKey;
use p256::ecdsa::signature::Signer;
use serde_json::{Value, json};
use signer::{KeyStore, system_now};
use tacit_e2e::Browser;
use tacit_e2e::signer_proc::TestSigner;
use tacit_e2e::site_proc::TestSite;
use tacit_e2e::wallet::{WAIT, Wallet, error_code};
use tacit_protocol::request_auth::{InstallKey, signing_input};
use wallet_core::{ComparisonLog, Nonce, Origin, ReceiptPayload, SessionId};

/// POSTs `body` with `headers`; the status and the body as JSON.
fn post(url: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, Value) {
    let mut request = common::http()
        .post(url)
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.send(body).unwrap();
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// A receipt payload anyone can write: every claim of `policy` "satisfied".
fn made_up_payload(audience: &str, nonce: &str) -> ReceiptPayload {
    let now = system_now();
    ReceiptPayload::new(
        SessionId::parse("s-forged").unwrap(),
        Origin::parse(audience).unwrap(),
        Nonce::parse(nonce).unwrap(),
        now.plus_millis(-1_000),
        now.plus_millis(10 * 60_000),
        &ComparisonLog::new(),
    )
    .unwrap()
}

/// A TCP listener that counts connections (it never answers): where an attacker would wait for
/// released payloads.
struct Listener {
    url: String,
    connections: Arc<AtomicUsize>,
}

impl Listener {
    fn start() -> Self {
        let socket = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", socket.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let counter = connections.clone();
        std::thread::spawn(move || {
            for stream in socket.incoming() {
                counter.fetch_add(1, Ordering::SeqCst);
                if let Ok(mut stream) = stream {
                    let mut buf = [0u8; 4096];
                    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
                    let _ = stream.read(&mut buf);
                }
            }
        });
        Self { url, connections }
    }

    fn count(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

#[test]
fn a_local_process_cannot_get_a_receipt_signed_or_accepted() {
    let _serial = tacit_e2e::serial();
    let wallet = tacit_e2e::serve_site("wallet").unwrap();
    let signer =
        TestSigner::start(KeyStore::make(system_now()).unwrap(), &[&wallet.origin()]).unwrap();
    let pharmacy = TestSite::start("pharmacy", &format!("{}/v1/keys", signer.url())).unwrap();
    let (status, requirements) = {
        let mut response = common::http()
            .get(&pharmacy.url("/api/requirements"))
            .call()
            .unwrap();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str::<Value>(&text).unwrap())
    };
    assert_eq!(status, 200, "{requirements}");
    let nonce = requirements["result"]["nonce"]
        .as_str()
        .or(requirements["nonce"].as_str())
        .unwrap()
        .to_owned();
    let payload = made_up_payload(&pharmacy.origin(), &nonce);
    let body = serde_json::to_vec(&payload).unwrap();
    let receipts = format!("{}/v1/receipts", signer.url());

    // No Origin header, no request signature: what `curl` sends.
    let (status, out) = post(&receipts, &[], &body);
    assert_eq!(status, 401, "{out}");
    assert_eq!(out["error"], "unauthenticated", "{out}");
    // Claiming to be the wallet page changes nothing.
    let (status, out) = post(&receipts, &[("origin", &wallet.origin())], &body);
    assert_eq!(status, 401, "{out}");
    // A well-formed signature by a key that was never enrolled.
    let key = p256::ecdsa::SigningKey::from_slice(&[7u8; 32]).unwrap();
    let id = InstallKey::from_verifying_key(*key.verifying_key()).id();
    let ts = system_now().millis();
    let signature: p256::ecdsa::Signature =
        key.sign(signing_input("POST", "/v1/receipts", ts, &body).as_bytes());
    let sig = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        signature.to_bytes(),
    );
    let ts = ts.to_string();
    let headers = [
        ("tacit-install", id.as_str()),
        ("tacit-timestamp", ts.as_str()),
        ("tacit-signature", sig.as_str()),
    ];
    let (status, out) = post(&receipts, &headers, &body);
    assert_eq!(status, 401, "{out}");
    assert_eq!(out["error"], "unknown_install", "{out}");
    assert!(signer.installs().unwrap().is_empty());

    // The process signs the receipt itself: the site's server trusts only its signer's keys.
    let forged =
        wallet_core::receipt::sign(payload, &SigningKey::from_bytes(&[9; 32]), system_now());
    let submission = serde_json::to_vec(&json!({ "receipt": forged })).unwrap();
    let (_, out) = post(&pharmacy.url("/api/applications"), &[], &submission);
    assert_eq!(error_code(&out), "unknown_key", "{out}");
    // And an all-zero signature under the signer's real key id.
    let mut zeroed = serde_json::to_value(&forged).unwrap();
    let real_id = KeyStore::make(system_now())
        .unwrap()
        .active_key_id()
        .to_string();
    zeroed["key_id"] = json!(real_id);
    zeroed["signature"] = json!("0".repeat(128));
    let submission = serde_json::to_vec(&json!({ "receipt": zeroed })).unwrap();
    let (_, out) = post(&pharmacy.url("/api/applications"), &[], &submission);
    assert_eq!(out["ok"], false, "{out}");
}

/// The hand-made policy the wallet tests use, for `audience`.
fn policy(audience: &str, nonce: &str) -> Value {
    tacit_e2e::wallet::housing_policy(audience, nonce)
}

/// Grants a hand-made housing request, answers both claims and drafts: the proposal id.
fn answered_draft(wallet: &mut Wallet<'_>, audience: &str, nonce: &str) -> String {
    let id = wallet.request(policy(audience, nonce));
    for tool in wallet.grant(&id, "600000", 2) {
        assert_eq!(wallet.call(&tool, json!({}))["result"]["satisfied"], true);
    }
    wallet.draft(audience, nonce)
}

#[test]
fn the_wallet_sends_nothing_to_a_url_parameter_and_signs_only_through_its_enrolment() {
    let _serial = tacit_e2e::serial();
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let signer =
        TestSigner::start(KeyStore::make(system_now()).unwrap(), &[&server.origin()]).unwrap();
    let listener = Listener::start();
    let browser = Browser::launch().unwrap();
    let audience = "http://127.0.0.1:8081";

    // Not enrolled, opened with ?signer= pointing at the listener: release sends nothing.
    let mut wallet = Wallet::open(&browser, &server, &format!("?signer={}", listener.url));
    wallet.create_profile();
    let proposal = answered_draft(&mut wallet, audience, "n-listener-1");
    wallet.release(&proposal, true);
    wallet.wait_text("#proposals", "Enrol this browser with a signer first");
    let out = wallet.call("check_proposal", json!({ "proposal_id": proposal }));
    assert_eq!(out["result"]["signed"], false, "{out}");

    // Enrolled with the real signer (typed by the person), reloaded with ?signer= again: the
    // receipt is signed by the enrolled signer and the listener still hears nothing.
    wallet.enrol(&signer.url(), &signer.enrolment_code().unwrap());
    let installs = signer.installs().unwrap();
    assert_eq!(installs.len(), 1, "{installs:?}");
    wallet
        .page
        .navigate(&server.url(&format!("/?signer={}", listener.url)))
        .unwrap();
    tacit_e2e::wallet::wait_app(&wallet.page);
    wallet.unlock(tacit_e2e::wallet::PASS);
    wallet.wait_text("#lock-pill", "Unlocked");
    wallet.wait_text("#signer-status", &signer.url());
    let proposal = answered_draft(&mut wallet, audience, "n-listener-2");
    wallet.release(&proposal, true);
    let receipt = wallet.wait_signed(&proposal);
    assert_eq!(receipt["payload"]["nonce"], "n-listener-2");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        listener.count(),
        0,
        "the listener at ?signer= was contacted"
    );

    // The install key cannot be read out of the page: WebCrypto refuses to export it.
    let exported = wallet
        .page
        .eval(
            "new Promise((resolve) => { const open = indexedDB.open('tacit-wallet'); \
             open.onsuccess = () => { const tx = open.result.transaction('install'); \
             const get = tx.objectStore('install').get('current'); \
             get.onsuccess = () => crypto.subtle.exportKey('pkcs8', get.result.keyPair.privateKey) \
               .then(() => resolve('exported'), (e) => resolve(e.name)); \
             get.onerror = () => resolve('no record'); }; open.onerror = () => resolve('no db'); })",
        )
        .unwrap();
    assert_eq!(exported, json!("InvalidAccessError"));

    // The operator revokes this install: the next release is refused by the signer, and the
    // page says so instead of "signed".
    assert!(signer.revoke_install(&installs[0].0).unwrap());
    let proposal = answered_draft(&mut wallet, audience, "n-listener-3");
    wallet.release(&proposal, true);
    wallet.wait_text("#proposals", "refused");
    let out = wallet.call("check_proposal", json!({ "proposal_id": proposal }));
    assert_eq!(out["result"]["signed"], false, "{out}");
    assert_eq!(listener.count(), 0);
    wallet.page.screenshot("wallet-revoked-install").unwrap();
}

#[test]
fn an_agent_relaying_a_site_as_another_origin_is_not_confirmed_and_needs_the_person() {
    let _serial = tacit_e2e::serial();
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let signer =
        TestSigner::start(KeyStore::make(system_now()).unwrap(), &[&server.origin()]).unwrap();
    let keys_url = format!("{}/v1/keys", signer.url());
    let housing = TestSite::start("housing", &keys_url).unwrap();
    let pharmacy = TestSite::start("pharmacy", &keys_url).unwrap();
    let browser = Browser::launch().unwrap();
    let mut wallet = Wallet::open(&browser, &server, "");
    wallet.enrol(&signer.url(), &signer.enrolment_code().unwrap());
    wallet.create_profile();
    let requirements = |site: &TestSite| -> Value {
        let mut response = common::http()
            .get(&site.url("/api/requirements"))
            .call()
            .unwrap();
        let out: Value =
            serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
        assert_eq!(out["ok"], true, "{out}");
        out["result"].clone()
    };

    // The housing site's own signed requirements: verified.
    let genuine = requirements(&housing);
    let id = wallet.request(genuine.clone());
    let card = format!("#req-{id} .asker");
    let verified = format!("document.querySelector({card:?}).dataset.asker === 'verified'");
    wallet.page.wait_for(&verified, WAIT).unwrap();
    assert!(
        wallet.text(&card).contains("Verified"),
        "{}",
        wallet.text(&card)
    );
    wallet.page.screenshot("wallet-asker-verified").unwrap();

    // The agent relays the pharmacy's requirements claiming they are the housing site's (and
    // housing's claiming to be the pharmacy's): neither signature checks for that origin.
    let mut relayed = requirements(&pharmacy);
    relayed["origin"] = json!(housing.origin());
    let id = wallet.request(relayed.clone());
    let card = format!("#req-{id} .asker");
    let unconfirmed = format!(
        "document.querySelector({card:?}).dataset.asker === 'unconfirmed' && \
         !document.querySelector({card:?}).textContent.includes('checking')"
    );
    wallet.page.wait_for(&unconfirmed, WAIT).unwrap();
    assert!(
        wallet.text(&card).contains("not confirmed"),
        "{}",
        wallet.text(&card)
    );
    let out = wallet.call("check_request", json!({ "request_id": id }));
    assert_eq!(out["result"]["asker"], "unconfirmed", "{out}");
    wallet.page.screenshot("wallet-asker-unconfirmed").unwrap();

    // A proposal for that nonce cannot be released without the person's confirmation.
    let tools = wallet.grant(&id, "600000", 2);
    for tool in &tools {
        wallet.call(tool, json!({}));
    }
    let nonce = relayed["nonce"].as_str().unwrap();
    let proposal = wallet.draft(&housing.origin(), nonce);
    wallet.release(&proposal, false);
    wallet.wait_text("#proposals", "not confirmed");
    std::thread::sleep(Duration::from_millis(300));
    let out = wallet.call("check_proposal", json!({ "proposal_id": proposal }));
    assert_eq!(out["result"]["status"], "held", "{out}");
    // Ticked by the person: released and signed.
    wallet.release(&proposal, true);
    let receipt = wallet.wait_signed(&proposal);
    assert_eq!(receipt["payload"]["audience"], housing.origin());
}
