//! Issue 29 end to end, same-device layout in two browsers: the person's vault (the wallet page
//! marked a vault, on its own origin, in one Chromium) and the agent's bridge (another origin, in
//! another Chromium, driven through the DevTools `WebMCP` domain), paired through a real
//! `tacit-relay` by the code the bridge shows, which the person types.
//!
//! What must hold: the vault registers no tool; the bridge registers the persistent tools and,
//! once the person grants, the claim tool, and its calls are answered by the vault; the relay
//! carries nothing but ciphertext; the agent's browser holds none of the person's facts (its
//! storage, its DOM and the heap of the bridge page); unpairing withdraws the claim tool at once
//! and leaves `vault_unreachable`.
//!
//! These tests fail, never skip, when Chromium, the WebMCP switch or a built site is missing
//! (run `cargo xtask build-web` first).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tacit_e2e::relay_proc::TestRelay;
use tacit_e2e::wallet::{Wallet, call, granted_tools, housing_policy, text_of, tool_names};
use tacit_e2e::{Browser, Page};

const WAIT: Duration = Duration::from_secs(20);

fn open_bridge<'b>(browser: &'b Browser, url: &str) -> Page<'b> {
    let mut page = browser.new_page().unwrap();
    page.enable_webmcp().unwrap();
    page.navigate(url).unwrap();
    page.require_webmcp().unwrap();
    page
}

fn wait(page: &Page<'_>, js: &str) {
    if let Err(e) = page.wait_for(js, WAIT) {
        panic!(
            "never held: {js}: {e}\n{}",
            page.eval("document.body.innerText").unwrap()
        );
    }
}

/// The agent calls `name` on the bridge until `done` holds.
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
fn a_bridge_paired_by_its_code_offers_the_vaults_tools_and_holds_nothing() {
    let _serial = tacit_e2e::serial();
    let relay = TestRelay::start().unwrap();
    let vault_site = tacit_e2e::serve_site("vault").unwrap();
    let bridge_site = tacit_e2e::serve_site("bridge").unwrap();
    let person = Browser::launch().unwrap();
    let agent = Browser::launch().unwrap();
    let query = format!("?relay={}", relay.url());

    let mut vault = Wallet::open(&person, &vault_site, &query);
    vault.create_profile();
    let mut bridge = open_bridge(&agent, &bridge_site.url(&format!("/{query}")));

    // Unpaired, the bridge offers the persistent tools and answers nothing itself.
    wait(&bridge, "document.body.dataset.state === 'offering'");
    let names = tool_names(&mut bridge);
    assert!(names.contains(&"request_claims".to_owned()), "{names:?}");
    let out = call(&mut bridge, "wallet_status", json!({}));
    assert_eq!(out["error"]["code"], "vault_unreachable", "{out}");
    // The vault registers no tool at all.
    assert!(
        tool_names(&mut vault.page).is_empty(),
        "the vault registered tools"
    );

    // The person types the code the bridge shows into the vault; both show one number.
    let typed = text_of(&bridge, "#typed");
    assert_eq!(typed.len(), 14, "{typed}");
    vault.front();
    vault.page.fill("#pair-code", &typed).unwrap();
    vault.page.click("#pair-btn").unwrap();
    vault.wait_text("#pair-msg", "Paired");
    wait(&bridge, "document.body.dataset.state === 'connected'");
    let fingerprint = text_of(&bridge, "#fingerprint");
    assert!(
        vault.text("#pair-msg").contains(&fingerprint),
        "{} vs {fingerprint}",
        vault.text("#pair-msg")
    );
    assert!(vault.text("#pairings").contains(&fingerprint));

    // The agent asks through the bridge; the person grants in the vault.
    let policy = housing_policy("http://127.0.0.1:9", "nonce-vault-bridge-1");
    let out = poll(&mut bridge, "request_claims", policy.clone(), |o| {
        o["ok"] == true
    });
    assert_eq!(out["result"]["status"], "held", "{out}");
    let id = out["result"]["request_id"].as_str().unwrap().to_owned();
    vault
        .page
        .wait_for(&format!("!!document.getElementById('req-{id}')"), WAIT)
        .unwrap();
    vault.front();
    vault.page.select(&format!("#dur-{id}"), "600000").unwrap();
    vault
        .page
        .click(&format!("[data-action=grant][data-id={id}]"))
        .unwrap();
    vault.confirm_act();
    let checked = poll(
        &mut bridge,
        "check_request",
        json!({ "request_id": id }),
        |o| o["result"]["status"] == "granted",
    );
    let tools = granted_tools(&checked);
    assert!(!tools.is_empty(), "{checked}");
    for tool in &tools {
        bridge.wait_tool(tool, WAIT).unwrap();
    }
    let answer = call(&mut bridge, &tools[0], json!({}));
    assert_eq!(answer["ok"], true, "{answer}");
    assert!(answer["result"]["satisfied"].is_boolean(), "{answer}");
    // Still none in the vault.
    assert!(tool_names(&mut vault.page).is_empty());

    // The relay carried only ciphertext: no fact, no question, no answer in the clear.
    for frame in relay.seen() {
        for needle in [
            "28400",
            "28,400",
            "nordhafen",
            "income",
            "satisfied",
            "asthma",
        ] {
            assert!(
                !frame
                    .windows(needle.len())
                    .any(|w| w.eq_ignore_ascii_case(needle.as_bytes())),
                "the relay carried {needle:?} in the clear"
            );
        }
    }
    // The agent's browser holds none of the person's facts: its storage, DOM and page heap.
    let stored = bridge
        .eval("JSON.stringify(Object.entries(localStorage))")
        .unwrap();
    let stored = stored.as_str().unwrap();
    assert!(stored.contains("tacit-bridge/pairing"), "{stored}");
    // No IndexedDB (so no install key or holder key to sign with) and no cache in its origin.
    let databases = bridge
        .eval("(async () => (await indexedDB.databases()).map(d => d.name))()")
        .unwrap();
    assert_eq!(databases, json!([]), "the bridge's origin has databases");
    let caches = bridge.eval("(async () => await caches.keys())()").unwrap();
    assert_eq!(caches, json!([]), "the bridge's origin has caches");
    let page_text = bridge
        .eval("document.documentElement.outerHTML")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let heap = bridge
        .eval(
            "(async () => { const m = await (await import('/pkg/tacit_bridge.js')).default(); \
               return new TextDecoder('latin1').decode(new Uint8Array(m.memory.buffer)); })()",
        )
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_owned();
    for needle in ["28400", "28,400", "1990-02-28", "asthma", "Nordhafen"] {
        for (what, haystack) in [("storage", stored), ("page", &page_text), ("heap", &heap)] {
            assert!(
                !haystack.contains(needle),
                "the bridge's {what} holds {needle:?}"
            );
        }
    }

    // The person locks the vault: the claim tool is withdrawn from the agent's browser; the
    // persistent tools stay and are answered by the vault (locked).
    vault.front();
    vault.page.click("[data-action=lock]").unwrap();
    for tool in &tools {
        let deadline = Instant::now() + WAIT;
        while tool_names(&mut bridge).contains(tool) {
            assert!(
                Instant::now() < deadline,
                "{tool} stayed after the vault locked"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let status = call(&mut bridge, "wallet_status", json!({}));
    assert_eq!(status["ok"], true, "{status}");
    vault.unlock_and_wait(tacit_e2e::wallet::PASS);

    // Unpair in the vault: the agent's browser is told at once, and calls are unreachable.
    vault.front();
    vault.page.click("#pairings button").unwrap();
    vault.wait_text("#pair-msg", "Unpaired");
    for tool in &tools {
        let deadline = Instant::now() + WAIT;
        while tool_names(&mut bridge).contains(tool) {
            assert!(Instant::now() < deadline, "{tool} stayed after unpairing");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    wait(&bridge, "document.body.dataset.state === 'unreachable'");
    let out = call(&mut bridge, "wallet_status", json!({}));
    assert_eq!(out["error"]["code"], "vault_unreachable", "{out}");
}
