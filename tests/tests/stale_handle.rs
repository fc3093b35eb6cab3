//! Issue 12: a claim tool object an in-page agent kept from `getTools()` past its grant always
//! gets a refusal envelope through `document.modelContext.executeTool` — `grant_revoked` after
//! revoke, lock and a new grant of the same kind, `grant_expired` after expiry — never a throw.
//!
//! These tests fail, never skip, when Chromium, the WebMCP switch or the built site is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::Duration;

use serde_json::Value;
use tacit_e2e::Browser;
use tacit_e2e::wallet::{PASS, WAIT, Wallet, error_code, housing_policy, keep_tool};

const HOUSING: &str = "http://127.0.0.1:8081";

/// The in-page agent calls the kept object; the promise must resolve to an envelope.
fn call_kept(wallet: &Wallet<'_>, slot: &str) -> Value {
    let js = format!(
        "(async () => {{ try {{ return {{ resolved: await document.modelContext.executeTool(\
         window.__kept[{slot:?}], {{}}) }}; }} catch (e) {{ return {{ threw: String(e) }}; }} }})()"
    );
    let out = wallet.page.eval(&js).unwrap();
    let Some(text) = out["resolved"].as_str() else {
        panic!("executeTool on a kept {slot} handle threw: {out}");
    };
    serde_json::from_str(text).unwrap()
}

#[test]
fn stale_handles_in_page_get_refusal_envelopes() {
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let browser = Browser::launch().unwrap();
    let mut wallet = Wallet::open(&browser, &server, "?short_grants=1");
    wallet.create_profile();

    // Live: the kept object answers.
    let id = wallet.request(housing_policy(HOUSING, "k1"));
    let tools = wallet.grant(&id, "3600000", 2);
    keep_tool(&wallet.page, &tools[0], "revoked");
    keep_tool(&wallet.page, &tools[1], "locked");
    let live = call_kept(&wallet, "revoked");
    assert_eq!(live["ok"], true, "{live}");

    // After revoke.
    wallet.revoke(&tools[0]);
    let out = call_kept(&wallet, "revoked");
    assert_eq!(error_code(&out), "grant_revoked", "{out}");
    assert!(out.get("result").is_none());

    // After a new grant of the same kind: the old object is still refused.
    let id = wallet.request(housing_policy(HOUSING, "k2"));
    let fresh = wallet.grant(&id, "3600000", 2);
    assert!(!fresh.contains(&tools[0]));
    let out = call_kept(&wallet, "revoked");
    assert_eq!(error_code(&out), "grant_revoked", "{out}");

    // After expiry.
    let id = wallet.request(housing_policy(HOUSING, "k3"));
    let short = wallet.grant(&id, "2000", 2);
    keep_tool(&wallet.page, &short[0], "expired");
    wallet
        .page
        .wait_tool_gone(&short[0], Duration::from_secs(15))
        .unwrap();
    let out = call_kept(&wallet, "expired");
    assert_eq!(error_code(&out), "grant_expired", "{out}");

    // After lock (and unlocking again does not revive it).
    wallet.page.click("[data-action=lock]").unwrap();
    wallet.page.wait_tool_gone(&tools[1], WAIT).unwrap();
    let out = call_kept(&wallet, "locked");
    assert!(
        ["grant_revoked", "wallet_locked"].contains(&error_code(&out)),
        "{out}"
    );
    wallet.unlock(PASS);
    wallet.wait_text("#lock-pill", "Unlocked");
    let out = call_kept(&wallet, "locked");
    assert_eq!(error_code(&out), "grant_revoked", "{out}");
}
