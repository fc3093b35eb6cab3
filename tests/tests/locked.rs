//! Issue 30, item 2: a request that arrives while the wallet is locked. The card says "Unlock to
//! answer" and its Allow button says it unlocks; one passphrase, typed once into the
//! confirmation, unlocks the wallet and grants. A wrong passphrase unlocks and grants nothing.
//! Before, Allow took the right passphrase, closed, and granted nothing, with the only sign a
//! line below the fold.
//!
//! Fails, never skips, when Chromium, the WebMCP switch or the built site is missing (run
//! `cargo xtask build-web`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::Duration;

use serde_json::json;
use tacit_e2e::wallet::{Wallet, granted_tools, housing_policy, type_confirmation};

const WAIT: Duration = Duration::from_secs(20);

#[test]
fn a_request_that_waited_while_locked_says_unlock_to_answer_and_one_passphrase_unlocks_and_grants()
{
    let _serial = tacit_e2e::serial();
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let browser = tacit_e2e::Browser::launch().unwrap();
    let mut wallet = Wallet::open(&browser, &server, "");
    wallet.create_profile();
    wallet.front();
    wallet.page.click("[data-action=lock]").unwrap();
    assert_eq!(wallet.locked(), json!(true));

    // The agent asks while the wallet is locked: the request waits for the person.
    let out = wallet.call(
        "request_claims",
        housing_policy("http://127.0.0.1:9", "nonce-locked-1"),
    );
    assert_eq!(out["result"]["status"], "held", "{out}");
    let id = out["result"]["request_id"].as_str().unwrap().to_owned();
    let card = format!("#req-{id}");
    wallet
        .page
        .wait_for(&format!("!!document.querySelector('{card}')"), WAIT)
        .unwrap();
    let note = wallet.text(&format!("{card} .locked-note"));
    assert!(note.starts_with("Unlock to answer"), "{note}");
    let visible = wallet
        .page
        .eval(&format!(
            "(() => {{ const n = document.querySelector('{card} .locked-note'); \
               return !n.hidden && n.getBoundingClientRect().height > 0; }})()"
        ))
        .unwrap();
    assert_eq!(visible, json!(true), "the locked note is not shown");
    let allow = format!("[data-action=grant][data-id={id}]");
    let words = wallet.text(&allow);
    assert!(words.starts_with("Unlock and allow"), "{words}");

    // The person ticks the questions (none starts ticked, issue 30 item 6).
    tacit_e2e::wallet::tick_all(&wallet.page, &format!("#req-{id}")).unwrap();
    // A wrong passphrase: the dialog stays, nothing unlocks, nothing is granted.
    wallet.page.click(&allow).unwrap();
    type_confirmation(&wallet.page, "not the passphrase at all").unwrap();
    wallet
        .page
        .wait_for(
            "(document.getElementById('confirm-msg') || {}).textContent.length > 0 \
             && !(document.getElementById('confirm-msg').textContent.includes('Checking'))",
            WAIT,
        )
        .unwrap();
    assert_eq!(wallet.locked(), json!(true), "a wrong passphrase unlocked");
    wallet.page.click("[data-action=confirm-cancel]").unwrap();
    let still = wallet.call("check_request", json!({ "request_id": id }));
    assert_eq!(still["result"]["status"], "held", "{still}");

    // The right one, typed once: the wallet unlocks and the request is granted.
    wallet.page.click(&allow).unwrap();
    wallet.confirm_act();
    let granted = wallet.poll("check_request", json!({ "request_id": id }), |o| {
        o["result"]["status"] == "granted"
    });
    assert_eq!(wallet.locked(), json!(false), "the wallet did not unlock");
    let tools = granted_tools(&granted);
    assert!(!tools.is_empty(), "{granted}");
    for tool in &tools {
        wallet.page.wait_tool(tool, WAIT).unwrap();
    }
    let answer = wallet.call(&tools[0], json!({}));
    assert_eq!(answer["ok"], true, "{answer}");
    // Unlocked, no card says it is locked, and Allow says Allow again.
    assert!(
        !wallet.text("#requests").contains("Unlock to answer"),
        "{}",
        wallet.text("#requests")
    );
}

/// Issue 30, item 10: expiry and lock are shown to a sighted person, not only told to a screen
/// reader: a visible notice on screen says what changed and why, until the person dismisses it.
#[test]
fn an_expiry_and_a_lock_the_person_did_not_make_are_shown_in_a_notice_they_can_dismiss() {
    let _serial = tacit_e2e::serial();
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let browser = tacit_e2e::Browser::launch().unwrap();
    let mut wallet = Wallet::open(&browser, &server, "?short_grants=1");
    wallet.create_profile();
    let shown = "(() => { const n = document.getElementById('notice'); \
                 return !!n && !n.hidden && n.getBoundingClientRect().height > 0 \
                   && n.getBoundingClientRect().top < innerHeight; })()";

    // A 2-second grant ends by itself: the notice says so.
    let id = wallet.request(housing_policy("http://127.0.0.1:9", "nonce-notice-1"));
    let tools = wallet.grant(&id, "2000", 2);
    for tool in &tools {
        wallet.page.wait_tool_gone(tool, WAIT).unwrap();
    }
    wallet
        .page
        .wait_for(
            "(document.getElementById('notice-text') || {}).textContent?.includes('ended')",
            WAIT,
        )
        .unwrap();
    assert_eq!(wallet.page.eval(shown).unwrap(), json!(true));
    let said = wallet.text("#notice-text");
    assert!(said.contains("ended"), "{said}");
    // The person dismisses it: it goes (a real click).
    wallet.page.click("#notice-dismiss").unwrap();
    assert_eq!(wallet.page.eval(shown).unwrap(), json!(false));

    // Another tab deletes the stored profile: this tab locks itself, and the notice says why.
    let other = Wallet::open(&browser, &server, "");
    other
        .page
        .eval("localStorage.removeItem('tacit.vault.v1'); true")
        .unwrap();
    wallet.front();
    wallet.page.wait_for(shown, WAIT).unwrap();
    let said = wallet.text("#notice-text");
    assert!(said.contains("locked"), "{said}");
    assert_eq!(wallet.locked(), json!(true));
}
