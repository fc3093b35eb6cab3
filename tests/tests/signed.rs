//! The wallet page with a real signer: release → the signer signs → `check_proposal` returns the
//! signed receipt → `tacit-verify` (its library entry point) accepts it, fetching the keys from
//! the running signer. Also: ending a session yields a signed receipt per audience.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use serde_json::json;
use signer::verify_cli::{VerifyArgs, run};
use signer::{KeyStore, system_now};
use tacit_e2e::Browser;
use tacit_e2e::signer_proc::TestSigner;
use tacit_e2e::wallet::{WAIT, Wallet, housing_policy};

#[test]
fn released_receipt_is_signed_and_tacit_verify_accepts_it() {
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let keys = KeyStore::make(system_now()).unwrap();
    let signer = TestSigner::start(keys, &[&server.origin()]).unwrap();
    let browser = Browser::launch().unwrap();
    let mut wallet = Wallet::open(&browser, &server, "");
    wallet.enrol(&signer.url(), &signer.enrolment_code().unwrap());
    wallet.create_profile();

    // The agent asks; the person grants; the agent asks the claims and drafts.
    let audience = "http://127.0.0.1:8081";
    let request = wallet.request(housing_policy(audience, "n-signed"));
    for tool in wallet.grant(&request, "600000", 2) {
        assert_eq!(wallet.call(&tool, json!({}))["result"]["satisfied"], true);
    }
    let draft = wallet.call(
        "draft_application",
        json!({ "audience": audience, "nonce": "n-signed" }),
    );
    let proposal = draft["result"]["proposal_id"].as_str().unwrap().to_owned();
    let release = format!("[data-action=release][data-id={proposal}]");
    wallet
        .page
        .wait_for(&format!("!!document.querySelector('{release}')"), WAIT)
        .unwrap();
    // The hand-made policy carries no site signature: the person confirms the warning.
    wallet.page.click(&format!("#ack-{proposal}")).unwrap();
    tacit_e2e::wallet::tick_all(&wallet.page, &format!("#prop-{proposal}")).unwrap();
    wallet.page.click(&release).unwrap();
    wallet.confirm_act(); // the person's confirmation (the passphrase typed again)
    let out = wallet.poll("check_proposal", json!({ "proposal_id": proposal }), |o| {
        o["result"]["signed"] == true
    });
    let receipt = &out["result"]["receipt"];
    assert_eq!(receipt["payload"]["audience"], audience);
    wallet.wait_text("#proposals", "Signed by your signer");
    wallet.page.screenshot("wallet-10-released-signed").unwrap();

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
        json: false,
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
    assert_ne!(run(&wrong, &mut Vec::new(), &mut Vec::new()), 0);

    // Ending the session locks the wallet and yields a signed receipt for the audience.
    wallet.end_session();
    wallet.wait_text("#session-receipts", "Signed by your signer");
    wallet.wait_text("#lock-pill", "Locked");
    wallet.page.screenshot("wallet-11-session-ended").unwrap();
}
