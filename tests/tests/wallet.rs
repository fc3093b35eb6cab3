//! The wallet page end to end: headless Chromium with WebMCP on, the person through the page's
//! own UI (real clicks and typing over the DevTools protocol), the agent through the DevTools
//! `WebMCP` domain (`toolsAdded`/`toolsRemoved`, `invokeTool`/`toolResponded`).
//!
//! These tests fail, never skip, when Chromium, the WebMCP switch or the built site is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tacit_e2e::wallet::{PASS, PERSISTENT, Session, WAIT, Wallet, choose_file, error_code};
use tacit_e2e::{Browser, ToolStatus};
use tacit_testkit::fixtures::income_tool;

/// One browser test at a time: they share two cores and Argon2id at 64 MiB.
fn housing_policy(nonce: &str) -> Value {
    tacit_e2e::wallet::housing_policy("http://127.0.0.1:8081", nonce)
}

/// The agent asks the housing policy with `nonce` and the person grants both claims for
/// `duration`: the request's id and the two claim tools.
fn granted(wallet: &mut Wallet<'_>, nonce: &str, duration: &str) -> (String, Vec<String>) {
    let id = wallet.request(housing_policy(nonce));
    let tools = wallet.grant(&id, duration, 2);
    (id, tools)
}

#[test]
fn wallet_before_any_grant_only_persistent_tools_exist() {
    let session = Session::start();
    let mut wallet = session.open("");
    for name in PERSISTENT {
        wallet.page.wait_tool(name, WAIT).unwrap();
    }
    wallet.page.screenshot("wallet-01-new").unwrap();
    assert_eq!(wallet.tool_names(), PERSISTENT);
    wallet.create_profile();
    assert_eq!(wallet.tool_names(), PERSISTENT, "unlocking grants nothing");
    // No tool in any toolsAdded event could return a raw value.
    let log = wallet.page.webmcp_log().unwrap().to_vec();
    let mut seen = 0;
    for event in log.iter().filter(|e| e.method == "WebMCP.toolsAdded") {
        for tool in event.params["tools"].as_array().unwrap() {
            seen += 1;
            let name = tool["name"].as_str().unwrap();
            assert!(PERSISTENT.contains(&name), "unexpected tool {name}");
            for raw in ["income", "date_of_birth", "district", "conditions", "get_"] {
                assert!(!name.contains(raw), "{name} looks like a raw getter");
            }
        }
    }
    assert!(seen >= 5);
    let status = wallet.call("wallet_status", json!({}));
    assert_eq!(status["result"]["locked"], false);
    let text = status.to_string();
    for raw in ["2840000", "28,400", "1990-02-28", "nordhafen", "asthma"] {
        assert!(!text.contains(raw), "wallet_status leaks {raw}");
    }
    // The page's absence proof is checked against getTools() itself.
    wallet.wait_text(
        "#absence",
        "income — get_income() — absent from the live registry",
    );
    wallet.page.screenshot("wallet-02-unlocked").unwrap();
    wallet.assert_no_csp_violation();
}

#[test]
fn wallet_request_grant_answer_revoke() {
    let session = Session::start();
    let mut wallet = session.with_profile("?latency=1500");
    let id = wallet.request(housing_policy("n-1"));
    // An unsigned request: the wallet's words first, the agent's address quoted.
    wallet.wait_text(
        &format!("#req-{id}"),
        "Unconfirmed: an agent says this is for 127.0.0.1:8081",
    );
    wallet.wait_text(&format!("#req-{id}"), "below €30,000");
    wallet.page.screenshot("wallet-03-request").unwrap();
    let income = income_tool(&wallet.grant(&id, "600000", 2));
    let info = wallet
        .page
        .tools()
        .unwrap()
        .into_iter()
        .find(|t| t.name == income)
        .unwrap();
    let properties = info.input_schema["properties"].as_object().unwrap();
    assert_eq!(
        properties.keys().collect::<Vec<_>>(),
        ["nonce"],
        "no threshold input"
    );
    // The gate's own claim tools answer booleans: the absence proof still holds.
    wallet.wait_text(
        "#absence",
        "income — get_income() — absent from the live registry",
    );
    assert!(
        !wallet.text("#absence").contains("PRESENT"),
        "{}",
        wallet.text("#absence")
    );
    wallet.page.screenshot("wallet-04-granted").unwrap();

    let out = wallet.call(&income, json!({}));
    assert_eq!(
        out,
        json!({ "ok": true, "result": { "satisfied": true, "claim": {
            "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } } } })
    );
    // Bad input: an envelope, never status Error.
    for input in [
        json!({ "limit": 1 }),
        json!({ "nonce": 5 }),
        json!({ "nonce": "x".repeat(10_000) }),
    ] {
        let out = wallet.call(&income, input);
        assert_eq!(error_code(&out), "invalid_input");
    }
    for (tool, input) in [
        (
            "request_claims",
            json!({ "origin": "http://127.0.0.1:8081", "nonce": "n", "claims": "all" }),
        ),
        ("check_request", json!({ "request_id": 7 })),
        (
            "draft_application",
            json!({ "audience": "x".repeat(10_000), "nonce": "n" }),
        ),
        ("wallet_status", json!({ "verbose": true })),
    ] {
        assert_eq!(
            error_code(&wallet.call(tool, input)),
            "invalid_input",
            "{tool}"
        );
    }

    // A call in flight when the person revokes gets a refusal (the page answers after 1.5 s).
    let invocation = wallet
        .page
        .begin_invoke(&info.frame_id, &income, json!({}))
        .unwrap();
    let grant_id = income.rsplit('.').next().unwrap().to_owned();
    wallet
        .page
        .click(&format!("[data-action=revoke][data-id={grant_id}]"))
        .unwrap();
    wallet.page.wait_tool_gone(&income, WAIT).unwrap();
    let response = wallet.page.await_response(&invocation, WAIT).unwrap();
    assert_eq!(response.status, ToolStatus::Completed);
    assert_eq!(error_code(&response.output), "grant_revoked");
    // The old name is gone from the registry: invoking it fails.
    let err = wallet
        .page
        .invoke_tool(&info.frame_id, &income, json!({}))
        .unwrap_err();
    assert!(err.to_string().contains("Tool not found"), "{err}");
    wallet.page.screenshot("wallet-05-revoked").unwrap();
    wallet.assert_no_csp_violation();
}

#[test]
fn wallet_short_grant_disappears_by_itself() {
    let session = Session::start();
    let mut wallet = session.with_profile("?short_grants=1");
    let (id, tools) = granted(&mut wallet, "n-2", "2000");
    let granted_at = Instant::now();
    assert_eq!(wallet.call(&tools[0], json!({}))["ok"], true);
    for name in &tools {
        // Generous bound; the latency itself is measured by the bench, not asserted here.
        if let Err(e) = wallet.page.wait_tool_gone(name, Duration::from_secs(15)) {
            let status = wallet.call("wallet_status", json!({}));
            panic!(
                "{e}: status {status}, console {:?}, grants {:?}",
                wallet.page.console().unwrap(),
                wallet.text("#grants")
            );
        }
    }
    assert!(
        granted_at.elapsed() >= Duration::from_millis(1_500),
        "gone before its deadline"
    );
    assert!(wallet.claim_tools().is_empty());
    wallet.assert_request_expired(&id);
    wallet.page.screenshot("wallet-06-expired").unwrap();
}

#[test]
fn wallet_lock_reload_and_wrong_passphrase() {
    let session = Session::start();
    let mut wallet = session.with_profile("");
    let (_, tools) = granted(&mut wallet, "n-3", "3600000");
    // Lock withdraws every claim tool.
    wallet.page.click("[data-action=lock]").unwrap();
    for name in &tools {
        wallet.page.wait_tool_gone(name, WAIT).unwrap();
    }
    wallet.wait_text("#lock-pill", "Locked");
    assert_eq!(wallet.tool_names(), PERSISTENT);
    // The editor no longer shows the facts.
    assert_eq!(wallet.hidden("facts"), true);
    // Reload keeps the encrypted profile and registers no claim tool until unlock.
    wallet.reload();
    for name in PERSISTENT {
        wallet.page.wait_tool(name, WAIT).unwrap();
    }
    assert!(wallet.claim_tools().is_empty());
    let stored = wallet.stored_vault().as_str().unwrap().to_owned();
    // The record's sealed parts are hex: search their bytes (a hex spelling of ciphertext can
    // read "1990" by chance; ciphertext bytes spelling it are a 2^-32 chance per position), and
    // every other member as text.
    let record: serde_json::Value = serde_json::from_str(&stored).unwrap();
    let mut plain = Vec::new();
    for (name, member) in record.as_object().unwrap() {
        match member.as_str().map(hex::decode) {
            Some(Ok(bytes)) => plain.extend_from_slice(&bytes),
            _ => plain.extend_from_slice(format!("{name}:{member}").as_bytes()),
        }
        plain.push(0);
    }
    for raw in ["2840000", "28400", "1990", "nordhafen", "asthma"] {
        assert!(
            !plain.windows(raw.len()).any(|w| w == raw.as_bytes()),
            "stored record shows {raw}"
        );
    }
    // A wrong passphrase: a clear message, nothing changed.
    wallet.unlock("not the passphrase at all");
    wallet.wait_text("#profile-msg", "not right");
    wallet
        .page
        .screenshot("wallet-07-wrong-passphrase")
        .unwrap();
    assert_eq!(wallet.stored_vault().as_str().unwrap(), stored);
    assert_eq!(wallet.locked(), true);
    // The right one unlocks it; still no claim tool (grants do not survive a lock).
    wallet.unlock_and_wait(PASS);
    // Unlocked, the editor stays closed and empty until the person opens it with the passphrase.
    assert_eq!(wallet.editor_state(), "closed");
    assert_eq!(wallet.field("f-income"), "");
    wallet.open_editor();
    assert_eq!(wallet.field("f-income"), "28,400.00");
    assert!(wallet.claim_tools().is_empty());
}

#[test]
fn wallet_draft_release_and_refuse() {
    let session = Session::start();
    // Not enrolled with any signer: release keeps the unsigned payload, sends nothing, says so.
    let mut wallet = session.with_profile("");
    let (_, tools) = granted(&mut wallet, "n-4", "600000");
    for tool in &tools {
        assert_eq!(wallet.call(tool, json!({}))["result"]["satisfied"], true);
    }
    // Calls show in the page with their outcome.
    wallet.wait_text("#calls", "satisfied");
    let out = wallet.call(
        "draft_application",
        json!({ "audience": "http://127.0.0.1:8081", "nonce": "n-4" }),
    );
    assert_eq!(out["result"]["status"], "held", "{out}");
    let proposal = out["result"]["proposal_id"].as_str().unwrap().to_owned();
    wallet.wait_text("#proposals", "Send these answers to 127.0.0.1:8081");
    wallet.page.screenshot("wallet-08-proposal").unwrap();
    assert_eq!(
        wallet.call("check_proposal", json!({ "proposal_id": proposal }))["result"]["status"],
        "held"
    );
    wallet.release(&proposal, true);
    wallet.wait_text("#proposals", "Enrol this browser with a signer first");
    let out = wallet.call("check_proposal", json!({ "proposal_id": proposal }));
    assert_eq!(out["result"]["status"], "released");
    assert_eq!(out["result"]["signed"], false);
    let payload = &out["result"]["payload"];
    assert_eq!(payload["audience"], "http://127.0.0.1:8081");
    assert_eq!(payload["nonce"], "n-4");
    assert_eq!(payload["provenance"], "self_asserted");
    assert_eq!(payload["entries"].as_array().unwrap().len(), 2);
    wallet
        .page
        .screenshot("wallet-09-released-unsigned")
        .unwrap();

    // A second proposal, refused with a reason that reaches the agent.
    let out = wallet.call(
        "draft_application",
        json!({ "audience": "http://127.0.0.1:8081", "nonce": "n-4" }),
    );
    let second = out["result"]["proposal_id"].as_str().unwrap().to_owned();
    wallet
        .page
        .wait_for(
            &format!("!!document.getElementById('refuse-{second}')"),
            WAIT,
        )
        .unwrap();
    wallet
        .page
        .fill(&format!("#refuse-{second}"), "Not applying this year")
        .unwrap();
    wallet
        .page
        .click(&format!("[data-action=refuse][data-id={second}]"))
        .unwrap();
    let out = wallet.poll("check_proposal", json!({ "proposal_id": second }), |o| {
        o["result"]["status"] == "refused"
    });
    assert_eq!(out["result"]["reason"], "Not applying this year");
    wallet.page.click("[data-action=verify-log]").unwrap();
    wallet.wait_text("#verify-result", "The log is intact");
}

/// The page normalises passphrases with the browser's `normalize("NFC")` (it ships no Unicode
/// tables): a profile made with a decomposed passphrase opens with the composed one, in the page
/// and in the native core (whose NFC is `unicode-normalization`'s), and not with the accents
/// stripped.
#[test]
fn wallet_passphrase_is_normalised_by_the_browser_as_by_the_core() {
    use wallet_core::store::StoredVault;
    use wallet_core::{Passphrase, Vault};
    const NFD: &str = "Cre\u{300}me bru\u{302}le\u{301}e a\u{300} Zu\u{308}rich";
    const NFC: &str = "Cr\u{e8}me br\u{fb}l\u{e9}e \u{e0} Z\u{fc}rich";
    let session = Session::start();
    let wallet = session.open("");
    wallet.create_profile_as(NFD, "28,400.00", None, "asthma");
    let stored = StoredVault::decode(wallet.stored_vault().as_str().unwrap()).unwrap();
    let envelope = stored.envelope_bytes().unwrap();
    assert!(Vault::open(&envelope, &Passphrase::new(NFC.to_owned()).unwrap()).is_ok());
    assert!(
        Vault::open(
            &envelope,
            &Passphrase::new("Creme brulee a Zurich".to_owned()).unwrap()
        )
        .is_err()
    );
    for (typed, opens) in [("Creme brulee a Zurich", false), (NFC, true), (NFD, true)] {
        wallet.page.click("[data-action=lock]").unwrap();
        wallet.wait_text("#lock-pill", "Locked");
        wallet.unlock(typed);
        if opens {
            wallet.wait_text("#lock-pill", "Unlocked");
        } else {
            wallet.wait_text("#profile-msg", "not right");
            assert_eq!(wallet.text("#lock-pill"), "Locked");
            wallet.unlock_and_wait(NFC);
        }
    }
}

/// A script that got into the page first and replaced `String.prototype.normalize` with one
/// that answers the same text for everything cannot make an ASCII passphrase derive a key it
/// knows: ASCII text is its own NFC, and the core does not ask the platform for it.
#[test]
fn wallet_ascii_passphrase_ignores_a_replaced_normalize() {
    use wallet_core::store::StoredVault;
    use wallet_core::{Passphrase, Vault};
    const REPLACED: &str = "String.prototype.normalize = function () { return 'aaaaaaaa'; };";
    let session = Session::start();
    let wallet = Wallet::open_with(&session.browser, &session.server, "", &[REPLACED]);
    assert_eq!(
        wallet.page.eval("'\\u00e9'.normalize('NFD')").unwrap(),
        "aaaaaaaa",
        "the replacement is in place"
    );
    wallet.create_profile();
    let stored = StoredVault::decode(wallet.stored_vault().as_str().unwrap()).unwrap();
    let envelope = stored.envelope_bytes().unwrap();
    assert!(Vault::open(&envelope, &Passphrase::new(PASS.to_owned()).unwrap()).is_ok());
    assert!(Vault::open(&envelope, &Passphrase::new("aaaaaaaa".to_owned()).unwrap()).is_err());
}

#[test]
fn wallet_imports_a_backup_and_changes_passphrase() {
    let session = Session::start();
    let wallet = session.open("");
    // Not a backup: refused, nothing stored.
    let junk = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(junk.path(), b"not a vault").unwrap();
    choose_file(&wallet.page, "#import-file", junk.path());
    wallet.wait_text("#profile-msg", "not a Tacit backup");
    assert_eq!(wallet.stored_vault(), Value::Null);
    // The frozen v1 vault from wallet-core's test vectors imports and opens with its passphrase.
    let vector = tacit_e2e::workspace_root().join("wallet-core/tests/vectors/vault-v1.bin");
    choose_file(&wallet.page, "#import-file", &vector);
    wallet.wait_text("#profile-msg", "Backup imported");
    wallet.unlock_and_wait(PASS);
    wallet.open_editor();
    assert_eq!(wallet.field("f-district"), "nordhafen");
    // Change the passphrase: the wrong current one is refused, then it works.
    wallet.page.click("#editor-actions summary").unwrap();
    change_passphrase(&wallet, "wrong wrong wrong", "a brand new passphrase");
    wallet.wait_text("#profile-msg", "not right");
    change_passphrase(&wallet, PASS, "a brand new passphrase");
    wallet.wait_text("#profile-msg", "Passphrase changed");
    wallet.page.click("[data-action=lock]").unwrap();
    wallet.unlock(PASS);
    wallet.wait_text("#profile-msg", "not right");
    wallet.unlock_and_wait("a brand new passphrase");
}

#[test]
fn wallet_second_tab_cannot_silently_overwrite() {
    let session = Session::start();
    let first = session.with_profile("");
    let second = session.open("");
    second.unlock_and_wait(PASS);
    // The first tab's person opens its editor while the record is still the old one.
    first.open_editor();
    // The second tab saves a change first.
    second.edit_income("31,000.00");
    second.wait_text("#profile-msg", "Saved");
    let after_second = second.stored_vault();
    // The first tab still holds the older copy: its save is refused, nothing is overwritten.
    first.page.fill("#f-income", "29,000.00").unwrap();
    first.page.click("[data-action=save-profile]").unwrap();
    // (the refusal itself, not only the notice the storage event already showed)
    first.wait_text("#profile-msg", "another tab");
    assert_eq!(first.stored_vault(), after_second);
    first.front(); // a background tab may never paint a screenshot
    first.page.screenshot("wallet-12-stale-tab").unwrap();
}

#[test]
fn wallet_without_webmcp_offers_window_tacit() {
    let _serial = tacit_e2e::serial();
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let options = tacit_e2e::LaunchOptions {
        webmcp: false,
        ..Default::default()
    };
    let browser = Browser::launch_with(options).unwrap();
    let mut page = browser.new_page().unwrap();
    // Without native WebMCP the page loads the vendored polyfill: block it to see neither.
    page.block_urls(&["*webmcp-polyfill.js"]).unwrap();
    page.navigate(&server.url("/")).unwrap();
    tacit_e2e::wallet::wait_app(&page);
    assert_eq!(
        page.eval("typeof document.modelContext").unwrap(),
        "undefined"
    );
    page.wait_for(
        "document.getElementById('webmcp-pill').textContent === 'WebMCP: absent'",
        WAIT,
    )
    .unwrap();
    assert_eq!(page.eval("window.tacit.status()").unwrap(), "absent");
    let names = tacit_e2e::wallet::fallback_tool_names(&page);
    assert_eq!(names, json!(PERSISTENT));
    let out = tacit_e2e::wallet::fallback_call(&page, "request_claims", &housing_policy("n-x"));
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["result"]["status"], "held");
    let out = page.eval("window.tacit.call('get_income', {})").unwrap();
    assert_eq!(out["error"]["code"], "unknown_tool");
    page.screenshot("wallet-13-no-webmcp").unwrap();
}

#[test]
fn wallet_remembers_what_it_revealed_across_a_reload() {
    let session = Session::start();
    let mut wallet = session.with_profile("");
    let (_, tools) = granted(&mut wallet, "r-1", "600000");
    let income = income_tool(&tools);
    assert_eq!(wallet.call(&income, json!({}))["result"]["satisfied"], true);
    // Reload: the page forgets everything in memory; the sealed ledger is all that remains.
    wallet.reload();
    wallet.unlock_and_wait(PASS);
    let probe = json!({ "origin": "http://127.0.0.1:8082", "nonce": "r-2", "claims": [
        { "kind": "income_below", "limit": { "amount_minor": 2_900_000, "currency": "EUR" } } ] });
    let id = wallet.request(probe);
    // The consent screen already says so, before anything is granted.
    let declined = format!(
        "((document.querySelector('#req-{id}') || {{}}).textContent || '').toLowerCase().includes('declin')"
    );
    if let Err(e) = wallet.page.wait_for(&declined, WAIT) {
        panic!(
            "the card never said the claim is declined: {e} ({:?})",
            wallet.text(&format!("#req-{id}"))
        );
    }
    // And offers nothing to grant: the claim is disabled and unticked.
    let card = wallet.first_claim_box(&id);
    assert_eq!(card[0], true, "{card}");
    assert_eq!(card[1], false, "{card}");
    assert_ne!(card[2], "", "{card}");
}

/// The person types the old passphrase and the new one twice in Settings and clicks Change.
fn change_passphrase(wallet: &Wallet<'_>, old: &str, new: &str) {
    wallet.page.fill("#old-pass", old).unwrap();
    wallet.page.fill("#chg-pass", new).unwrap();
    wallet.page.fill("#chg-pass2", new).unwrap();
    wallet
        .page
        .click("[data-action=change-passphrase]")
        .unwrap();
}
