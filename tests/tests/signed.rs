//! The wallet page with a real signer: release → the signer signs → `check_proposal` returns the
//! signed receipt → `tacit-verify` (its library entry point) accepts it, fetching the keys from
//! the running signer. Also: ending a session yields a signed receipt per audience.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use signer::verify_cli::{VerifyArgs, run};
use signer::{AppState, Config, KeyStore, SystemClock, system_now};
use tacit_e2e::{Browser, Page, ToolStatus};
use wallet_core::Origin;

const WAIT: Duration = Duration::from_secs(20);
const PASS: &str = "correct horse battery staple";

/// A signer on a free loopback port, allowed to be called by `wallet_origin`; stops on drop.
struct Signer {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Signer {
    fn start(wallet_origin: &str) -> Self {
        let config = Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            key_file: "unused".into(),
            allowed_origins: vec![Origin::parse(wallet_origin).unwrap()],
            rate_limit_per_minute: 0,
            request_timeout_secs: 10,
            log_level: tracing::Level::WARN,
        };
        let state = AppState::new(KeyStore::make(system_now()).unwrap(), &config, SystemClock);
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind(config.listen).await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                signer::serve(listener, state, async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
            });
        });
        let addr = addr_rx.recv_timeout(WAIT).unwrap();
        Self {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Signer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn call(page: &mut Page<'_>, name: &str, input: Value) -> Value {
    let response = page.call_tool(name, input).unwrap();
    assert_eq!(
        response.status,
        ToolStatus::Completed,
        "{name}: {:?}",
        response.raw
    );
    response.output
}

fn poll(page: &mut Page<'_>, name: &str, input: Value, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let out = call(page, name, input.clone());
        if done(&out) {
            return out;
        }
        assert!(Instant::now() < deadline, "{name} never got there: {out}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn released_receipt_is_signed_and_tacit_verify_accepts_it() {
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let signer = Signer::start(&server.origin());
    let browser = Browser::launch().unwrap();
    let mut page = browser.new_page().unwrap();
    page.enable_webmcp().unwrap();
    page.navigate(&server.url(&format!("/?signer={}", signer.url())))
        .unwrap();
    page.require_webmcp().unwrap();
    page.wait_for("!document.getElementById('app').hidden", WAIT)
        .unwrap();

    // The person creates a profile.
    page.fill("#new-pass", PASS).unwrap();
    page.fill("#new-pass2", PASS).unwrap();
    page.fill("#f-income", "28,400.00").unwrap();
    page.eval("document.getElementById('f-dob').value = '1990-02-28'")
        .unwrap();
    page.eval("document.getElementById('f-district').value = 'nordhafen'")
        .unwrap();
    page.click("[data-action=create-profile]").unwrap();
    page.wait_for(
        "document.getElementById('lock-pill').textContent === 'Unlocked'",
        WAIT,
    )
    .unwrap();

    // The agent asks; the person grants; the agent asks the claims and drafts.
    let audience = "http://127.0.0.1:8081";
    let policy = json!({ "origin": audience, "nonce": "n-signed", "claims": [
        { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } },
        { "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] } ] });
    let request = call(&mut page, "request_claims", policy)["result"]["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    page.wait_for(&format!("!!document.getElementById('req-{request}')"), WAIT)
        .unwrap();
    page.click(&format!("[data-action=grant][data-id={request}]"))
        .unwrap();
    let granted = poll(
        &mut page,
        "check_request",
        json!({ "request_id": request }),
        |o| o["result"]["status"] == "granted",
    );
    for tool in granted["result"]["tools"].as_array().unwrap() {
        let name = tool["tool"].as_str().unwrap();
        page.wait_tool(name, WAIT).unwrap();
        assert_eq!(
            call(&mut page, name, json!({}))["result"]["satisfied"],
            true
        );
    }
    let draft = call(
        &mut page,
        "draft_application",
        json!({ "audience": audience, "nonce": "n-signed" }),
    );
    let proposal = draft["result"]["proposal_id"].as_str().unwrap().to_owned();
    page.wait_for(
        &format!("!!document.querySelector('[data-action=release][data-id={proposal}]')"),
        WAIT,
    )
    .unwrap();
    page.click(&format!("[data-action=release][data-id={proposal}]"))
        .unwrap();

    let out = poll(
        &mut page,
        "check_proposal",
        json!({ "proposal_id": proposal }),
        |o| o["result"]["signed"] == true,
    );
    let receipt = &out["result"]["receipt"];
    assert_eq!(receipt["payload"]["audience"], audience);
    page.wait_for(
        "document.getElementById('proposals').textContent.includes('Signed by key')",
        WAIT,
    )
    .unwrap();
    page.screenshot("wallet-10-released-signed").unwrap();

    // tacit-verify, as a user runs it, with the keys fetched from the running signer.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("receipt.json");
    std::fs::write(&path, serde_json::to_vec_pretty(receipt).unwrap()).unwrap();
    let args = VerifyArgs {
        receipt: path.clone(),
        keys: format!("{}/v1/keys", signer.url()),
        audience: Some(audience.into()),
        nonce: Some("n-signed".into()),
        now: None,
    };
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let code = run(&args, &mut stdout, &mut stderr);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&stderr),
    );
    assert_eq!(code, 0, "tacit-verify refused: {stdout} {stderr}");
    assert!(stdout.contains(audience), "{stdout}");
    // And it refuses the same receipt for another site.
    let wrong = VerifyArgs {
        audience: Some("http://127.0.0.1:8082".into()),
        ..args
    };
    let code = run(&wrong, &mut Vec::new(), &mut Vec::new());
    assert_ne!(code, 0);

    // Ending the session locks the wallet and yields a signed receipt for the audience.
    page.click("[data-action=end-session]").unwrap();
    page.wait_for(
        "document.getElementById('session-receipts').textContent.includes('Signed by key')",
        WAIT,
    )
    .unwrap();
    page.wait_for(
        "document.getElementById('lock-pill').textContent === 'Locked'",
        WAIT,
    )
    .unwrap();
    page.screenshot("wallet-11-session-ended").unwrap();
}
