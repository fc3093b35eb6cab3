//! Issue 11's attacks, end to end against the real servers and the wallet page in Chromium, each
//! refused:
//! - any local process asking the signer to sign (no wallet, no enrolment): 401, and a receipt
//!   it signs itself is refused by the site's server;
//! - `?signer=` on the wallet: a listener at that URL receives nothing, before or after
//!   enrolment; the wallet signs only through the signer it is enrolled with;
//! - a revoked install gets nothing signed, and the receipts it got just before are refused by
//!   a site that fetches the signer's keys, within `MAX_KEY_AGE` (another install's still
//!   count);
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
use tacit_site::server::signer_keys;
use wallet_core::{
    Claim, ComparisonLog, GrantId, Nonce, Origin, Outcome, ReceiptPayload, SessionId, ToolName,
};

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

/// An install key as the wallet page holds it, speaking to the signer over HTTP as the page
/// does (no browser: the signer cannot tell).
struct HttpInstall {
    key: p256::ecdsa::SigningKey,
}

impl HttpInstall {
    fn new(seed: u8) -> Self {
        Self {
            key: p256::ecdsa::SigningKey::from_slice(&[seed; 32]).unwrap(),
        }
    }

    fn id(&self) -> String {
        InstallKey::from_verifying_key(*self.key.verifying_key())
            .id()
            .to_string()
    }

    /// A POST of `body` to the signer's `path`, signed by this install: status and JSON.
    fn post(&self, signer: &TestSigner, path: &str, body: &[u8]) -> (u16, Value) {
        let ts = system_now().millis();
        let signature: p256::ecdsa::Signature = self
            .key
            .sign(signing_input("POST", path, ts, body).as_bytes());
        let sig = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            signature.to_bytes(),
        );
        let (id, ts) = (self.id(), ts.to_string());
        let headers = [
            ("tacit-install", id.as_str()),
            ("tacit-timestamp", ts.as_str()),
            ("tacit-signature", sig.as_str()),
        ];
        post(&format!("{}{path}", signer.url()), &headers, body)
    }

    /// Enrols with a fresh one-time code, as the wallet page does.
    fn enrol(&self, signer: &TestSigner) {
        let jwk = InstallKey::from_verifying_key(*self.key.verifying_key()).to_jwk();
        let body = serde_json::to_vec(
            &json!({ "code": signer.enrolment_code().unwrap(), "public_key": jwk }),
        )
        .unwrap();
        let (status, out) = self.post(signer, "/v1/installs", &body);
        assert_eq!(status, 201, "{out}");
    }

    /// A receipt answering every claim `site` asks, for a fresh nonce of the site's.
    fn receipt_for(&self, signer: &TestSigner, site: &TestSite, session: &str) -> Value {
        let requirements = &site_requirements(site);
        let audience = Origin::parse(&site.origin()).unwrap();
        let now = system_now();
        let mut log = ComparisonLog::new();
        for claim in requirements["claims"].as_array().unwrap() {
            let claim: Claim = serde_json::from_value(claim.clone()).unwrap();
            log.append(
                now.plus_millis(-1_000),
                audience.clone(),
                ToolName::parse(&format!("tacit.claim.{}", claim.kind())).unwrap(),
                claim,
                Outcome::Satisfied,
                GrantId::parse("g-revocation").unwrap(),
                None,
            );
        }
        let payload = ReceiptPayload::new(
            SessionId::parse(session).unwrap(),
            audience,
            Nonce::parse(requirements["nonce"].as_str().unwrap()).unwrap(),
            now,
            now.plus_millis(10 * 60_000),
            &log,
        )
        .unwrap();
        let (status, receipt) = self.post(
            signer,
            "/v1/receipts",
            &serde_json::to_vec(&payload).unwrap(),
        );
        assert_eq!(status, 200, "{receipt}");
        receipt
    }
}

/// Submits `receipt` to `site`: the answer's JSON.
fn submit(site: &TestSite, receipt: &Value) -> Value {
    let body = serde_json::to_vec(&json!({ "receipt": receipt })).unwrap();
    post(&site.url("/api/applications"), &[], &body).1
}

#[test]
fn a_revoked_installs_receipts_are_refused_by_a_site_that_fetches_keys() {
    let _serial = tacit_e2e::serial();
    // No wallet page and no browser: the installs speak to the signer as the page would.
    let signer = TestSigner::start(
        KeyStore::make(system_now()).unwrap(),
        &["http://127.0.0.1:9"],
    )
    .unwrap();
    let site = TestSite::start_api_only("housing", &format!("{}/v1/keys", signer.url())).unwrap();
    let (lost, kept) = (HttpInstall::new(21), HttpInstall::new(22));
    lost.enrol(&signer);
    kept.enrol(&signer);

    // Both get receipts; then the operator revokes the first install (a lost laptop).
    let first = lost.receipt_for(&signer, &site, "s-revoked-1");
    let second = lost.receipt_for(&signer, &site, "s-revoked-2");
    let theirs = kept.receipt_for(&signer, &site, "s-kept-1");
    let early = kept.receipt_for(&signer, &site, "s-kept-2");
    // A receipt judged before the revocation counts, as it did.
    let out = submit(&site, &early);
    assert_eq!(out["result"]["accepted"], true, "{out}");
    assert!(signer.revoke_install(&lost.id()).unwrap());
    // Its next request gets nothing signed.
    let (status, _) = lost.post(&signer, "/v1/receipts", b"{}");
    assert_eq!(status, 401);

    // After the site's key age has passed it fetches the keys afresh before judging: the
    // revoked install's receipts are refused, with their own code and words; nothing is spent.
    std::thread::sleep(signer_keys::MAX_KEY_AGE + Duration::from_millis(200));
    for receipt in [&first, &second] {
        let out = submit(&site, receipt);
        assert_eq!(error_code(&out), "receipt_revoked", "{out}");
        let message = out["error"]["message"].as_str().unwrap();
        assert!(message.contains("revoked"), "{message}");
    }
    // The other install's receipt is accepted.
    let out = submit(&site, &theirs);
    assert_eq!(out["result"]["accepted"], true, "{out}");
    // What the site fetched says nothing of either install.
    let mut response = common::http()
        .get(&format!("{}/v1/keys", signer.url()))
        .call()
        .unwrap();
    let published = response.body_mut().read_to_string().unwrap();
    assert!(published.contains("revoked_receipts"), "{published}");
    assert!(!published.contains(&lost.id()) && !published.contains(&kept.id()));
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

/// The wallet page, a signer and the housing site (trusting that signer's keys), with one
/// browser for the person.
struct Enrolled {
    server: tacit_e2e::StaticServer,
    signer: TestSigner,
    housing: TestSite,
    browser: Browser,
}

impl Enrolled {
    fn start() -> Self {
        let server = tacit_e2e::serve_site("wallet").unwrap();
        let signer =
            TestSigner::start(KeyStore::make(system_now()).unwrap(), &[&server.origin()]).unwrap();
        let housing = TestSite::start("housing", &format!("{}/v1/keys", signer.url())).unwrap();
        Self {
            server,
            signer,
            housing,
            browser: Browser::launch().unwrap(),
        }
    }

    /// Where sites fetch the signer's keys.
    fn keys_url(&self) -> String {
        format!("{}/v1/keys", self.signer.url())
    }

    /// The person's wallet tab: enrolled with the signer, a profile created.
    fn wallet(&self) -> Wallet<'_> {
        let wallet = Wallet::open(&self.browser, &self.server, "");
        wallet.enrol(&self.signer.url(), &self.signer.enrolment_code().unwrap());
        wallet.create_profile();
        wallet
    }
}

#[test]
fn an_agent_relaying_a_site_as_another_origin_is_not_confirmed_and_needs_the_person() {
    let _serial = tacit_e2e::serial();
    let stack = Enrolled::start();
    let housing = &stack.housing;
    let pharmacy = TestSite::start("pharmacy", &stack.keys_url()).unwrap();
    let mut wallet = stack.wallet();
    let requirements = site_requirements;

    // The housing site's own signed requirements: verified.
    let genuine = requirements(housing);
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

/// Issue 30, item 7: where a site's signed name was checked, the person reads it, with the
/// site's address beside it, in the confirmation dialogs, the log lines, the session's receipt
/// and its history; a site nobody verified is named by its address only.
#[test]
fn a_verified_site_is_named_with_its_address_in_dialogs_log_lines_and_receipts() {
    let _serial = tacit_e2e::serial();
    let stack = Enrolled::start();
    let housing = &stack.housing;
    let mut wallet = stack.wallet();

    let genuine = site_requirements(housing);
    let name = genuine["site_name"].as_str().unwrap().to_owned();
    let host = housing.origin().trim_start_matches("http://").to_owned();
    let named = format!("{name} ({host})");
    let id = wallet.request(genuine.clone());
    let verified =
        format!("document.querySelector('#req-{id} .asker').dataset.asker === 'verified'");
    wallet.page.wait_for(&verified, WAIT).unwrap();

    // The grant's dialog.
    wallet.front();
    tacit_e2e::wallet::tick_all(&wallet.page, &format!("#req-{id}")).unwrap();
    wallet
        .page
        .click(&format!("[data-action=grant][data-id={id}]"))
        .unwrap();
    let said = wallet.confirm_text();
    assert!(said.contains(&named), "the grant dialog says {said:?}");
    wallet.confirm_act();
    let out = wallet.poll("check_request", json!({ "request_id": id }), |o| {
        o["result"]["status"] == "granted"
    });
    for tool in tacit_e2e::wallet::granted_tools(&out) {
        wallet.page.wait_tool(&tool, WAIT).unwrap();
        assert_eq!(wallet.call(&tool, json!({}))["ok"], true);
    }
    // The log lines.
    wallet.wait_text("#log", "asked whether");
    let log = wallet.text("#log");
    assert!(
        log.lines()
            .filter(|l| l.contains("asked whether"))
            .all(|l| l.contains(&format!("{named} asked whether"))),
        "{log}"
    );

    // The release's dialog, then the session's receipt and its history.
    let nonce = genuine["nonce"].as_str().unwrap();
    let proposal = wallet.draft(&housing.origin(), nonce);
    tacit_e2e::wallet::tick_if_none(&wallet.page, &format!("#prop-{proposal}")).unwrap();
    wallet
        .page
        .click(&format!("[data-action=release][data-id={proposal}]"))
        .unwrap();
    let said = wallet.confirm_text();
    assert!(said.contains(&named), "the release dialog says {said:?}");
    wallet.confirm_act();
    wallet.wait_signed(&proposal);
    wallet.end_session();
    wallet.wait_text("#session-receipts", "was told this session");
    let receipts = wallet.text("#session-receipts");
    assert!(
        receipts.contains(&format!("What {named} was told this session")),
        "{receipts}"
    );
    wallet.unlock_and_wait(tacit_e2e::wallet::PASS);
    wallet.wait_text("#history", "Session ended");
    let history = wallet.text("#history");
    assert!(
        history.contains(&format!("Application to {named}"))
            && history.contains(&format!("{named} asked whether")),
        "{history}"
    );

    // A request no signature confirms is named by its address alone.
    let mut unsigned = genuine.clone();
    unsigned.as_object_mut().unwrap().remove("attestation");
    unsigned["nonce"] = json!("n-named-unsigned");
    let other = wallet.request(unsigned);
    let card = format!("#req-{other} .asker");
    wallet
        .page
        .wait_for(
            &format!("document.querySelector({card:?}).dataset.asker === 'unconfirmed'"),
            WAIT,
        )
        .unwrap();
    wallet.front();
    tacit_e2e::wallet::tick_all(&wallet.page, &format!("#req-{other}")).unwrap();
    wallet
        .page
        .click(&format!("[data-action=grant][data-id={other}]"))
        .unwrap();
    let said = wallet.confirm_text();
    assert!(
        said.contains(&host) && !said.contains(&name) && !said.contains("http://"),
        "the dialog for an unconfirmed site says {said:?}"
    );
}

/// `GET /api/requirements` of `site`, as an agent fetches it: its `result` (it must be `ok`).
fn site_requirements(site: &TestSite) -> Value {
    let mut response = common::http()
        .get(&site.url("/api/requirements"))
        .call()
        .unwrap();
    let out: Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(out["ok"], true, "{out}");
    out["result"].clone()
}
