//! Issue 12, "consent only a person can give", end to end in Chromium: the wallet page at
//! `http://localhost:<port>`, the person as real input (DevTools `Input` events), a page script
//! as `Runtime.evaluate`, the agent as the DevTools `WebMCP` domain.
//!
//! - A page script's clicks (`.click()`, synthetic mouse, pointer and key events,
//!   `requestSubmit`) on Grant, Deny, Revoke, Release, End session and open-editor do nothing.
//! - Grant needs a person's act: the passphrase typed again into the `#confirm` dialog (wrong:
//!   nothing, a message; Cancel: nothing), or a user-verifying WebAuthn assertion the wallet
//!   verifies itself (a replaced `navigator.credentials.get` or an authenticator that does not
//!   verify the user grants nothing).
//! - While unlocked with the editor closed, no raw value is in the DOM, any input's value or
//!   the accessibility tree; after open-editor they are (the search is shown to find them);
//!   close, lock and idle remove them again.
//! - Consent cards keep the person's choices when other requests arrive, are in arrival order,
//!   and show a claim the memory would decline disabled and unticked.
//! - A question in another currency: the agent's replies before the person decides are the
//!   same for a profile in EUR and one in USD; the card says it in words.
//!
//! These tests fail, never skip, when Chromium, the WebMCP switch or the built site is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tacit_e2e::wallet::{CONFIRM_OPEN, Confirm, PASS, Session, WAIT, Wallet, housing_policy};

const HOUSING: &str = "http://127.0.0.1:8081";
const PHARMACY: &str = "http://127.0.0.1:8082";

/// Long enough for anything a click could set off (an Argon2 run, a WebAuthn ceremony, a grant
/// and its tool registration) to have happened.
fn settle() {
    std::thread::sleep(Duration::from_millis(2500));
}

/// Everything a page script can do to "click" `selector`: `.click()`, synthetic mouse and
/// pointer clicks, focus plus synthetic Enter and Space, and `requestSubmit` of its form (whose
/// `submit` event the browser marks trusted). Runs with a user gesture (`userGesture: true`).
fn script_click(wallet: &Wallet<'_>, selector: &str) {
    let js = format!(
        "(() => {{ const b = document.querySelector({sel}); if (!b) return 'missing'; \
           b.click(); \
           b.dispatchEvent(new MouseEvent('click', {{bubbles: true, cancelable: true, view: window}})); \
           b.dispatchEvent(new PointerEvent('click', {{bubbles: true, cancelable: true}})); \
           b.focus(); \
           for (const key of ['Enter', ' ']) {{ \
             b.dispatchEvent(new KeyboardEvent('keydown', {{key, bubbles: true, cancelable: true}})); \
             b.dispatchEvent(new KeyboardEvent('keypress', {{key, bubbles: true, cancelable: true}})); \
             b.dispatchEvent(new KeyboardEvent('keyup', {{key, bubbles: true, cancelable: true}})); }} \
           const f = b.form || b.closest('form'); \
           if (f && f.requestSubmit) {{ try {{ f.requestSubmit(b.type === 'submit' ? b : undefined); }} catch (e) {{}} }} \
           return 'clicked'; }})()",
        sel = Value::from(selector)
    );
    assert_eq!(
        wallet.page.eval(&js).unwrap(),
        json!("clicked"),
        "{selector} is not on the page"
    );
}

fn dialog_open(wallet: &Wallet<'_>) -> bool {
    wallet.page.eval(CONFIRM_OPEN).unwrap() == json!(true)
}

/// The person presses Cancel if the confirmation dialog is open; waits until it is closed.
fn cancel_dialog(wallet: &Wallet<'_>) {
    if dialog_open(wallet) {
        wallet.page.click("[data-action=confirm-cancel]").unwrap();
        wallet
            .page
            .wait_for(&format!("!{CONFIRM_OPEN}"), WAIT)
            .unwrap();
    }
}

fn request_status(wallet: &mut Wallet<'_>, id: &str) -> Value {
    wallet.call("check_request", json!({ "request_id": id }))["result"].clone()
}

fn proposal_status(wallet: &mut Wallet<'_>, id: &str) -> Value {
    wallet.call("check_proposal", json!({ "proposal_id": id }))["result"].clone()
}

/// The person clicks Grant on request `id` (real click), without confirming.
fn click_grant(wallet: &Wallet<'_>, id: &str) {
    wallet.front();
    // No box starts ticked: where the person has ticked none yet, they tick every question
    // first (real clicks); a choice they made is left as it is.
    let none = wallet
        .page
        .eval(&format!(
            "![...document.querySelectorAll('#req-{id} input[data-claim-index]')].some((b) => b.checked)"
        ))
        .unwrap();
    if none == json!(true) {
        tacit_e2e::wallet::tick_all(&wallet.page, &format!("#req-{id}")).unwrap();
    }
    wallet
        .page
        .click(&format!("[data-action=grant][data-id={id}]"))
        .unwrap();
}

/// Waits until request `id` is granted; its tools' names.
fn granted_tools(wallet: &mut Wallet<'_>, id: &str) -> Vec<String> {
    let out = wallet.poll("check_request", json!({ "request_id": id }), |o| {
        o["result"]["status"] == "granted"
    });
    tacit_e2e::wallet::granted_tools(&out)
}

/// The request is still held, and no claim tool beyond `tools_before` exists.
fn assert_nothing_granted(wallet: &mut Wallet<'_>, id: &str, tools_before: &[String], what: &str) {
    let status = request_status(wallet, id);
    assert_eq!(status["status"], "held", "{what}: {status}");
    assert_eq!(
        wallet.claim_tools(),
        tools_before,
        "{what}: a tool appeared"
    );
}

// ---------------------------------------------------------------------------------------------
// Clicks a script makes

#[test]
fn consent_a_page_scripts_clicks_do_nothing() {
    let session = Session::start();
    let mut wallet = session.with_profile("");

    // Grant and Deny, clicked by a script: the request stays held, no dialog opens.
    let id = wallet.request(housing_policy(HOUSING, "n-script-1"));
    script_click(&wallet, &format!("[data-action=grant][data-id={id}]"));
    settle();
    assert!(
        !dialog_open(&wallet),
        "a script's click asked for confirmation"
    );
    assert_nothing_granted(&mut wallet, &id, &[], "script Grant");
    script_click(&wallet, &format!("[data-action=deny][data-id={id}]"));
    settle();
    assert_nothing_granted(&mut wallet, &id, &[], "script Deny");

    // open-editor with the right passphrase typed, clicked by a script: stays closed, empty.
    wallet.page.fill("#editor-pass", PASS).unwrap();
    script_click(&wallet, "[data-action=open-editor]");
    settle();
    assert_eq!(
        wallet.editor_state(),
        "closed",
        "a script opened the editor"
    );
    assert_eq!(
        wallet
            .page
            .eval("(document.getElementById('f-income') || {value: ''}).value")
            .unwrap(),
        ""
    );

    // The person grants for real (the control: the same button works for a person).
    let tools = wallet.grant(&id, "600000", 2);
    for tool in &tools {
        assert_eq!(wallet.call(tool, json!({}))["result"]["satisfied"], true);
    }

    // Revoke, clicked by a script: the grant lives, its tool still answers.
    let grant = tools[0].rsplit('.').next().unwrap();
    script_click(&wallet, &format!("[data-action=revoke][data-id={grant}]"));
    settle();
    assert_eq!(wallet.claim_tools().len(), 2, "a script revoked a grant");
    assert_eq!(wallet.call(&tools[0], json!({}))["ok"], true);

    // Release, clicked by a script (after the person ticked the acknowledgement for real):
    // nothing is released.
    let proposal = wallet.draft(HOUSING, "n-script-1");
    let ack = format!("#ack-{proposal}");
    if wallet
        .page
        .eval(&format!("!!document.querySelector({ack:?})"))
        .unwrap()
        == json!(true)
    {
        wallet.page.click(&ack).unwrap();
    }
    tacit_e2e::wallet::tick_all(&wallet.page, &format!("#prop-{proposal}")).unwrap();
    script_click(
        &wallet,
        &format!("[data-action=release][data-id={proposal}]"),
    );
    settle();
    assert!(!dialog_open(&wallet));
    let status = proposal_status(&mut wallet, &proposal);
    assert_eq!(status["status"], "held", "a script released: {status}");
    assert!(status["receipt"].is_null(), "{status}");

    // End session, clicked by a script: still unlocked, no session receipt.
    script_click(&wallet, "[data-action=end-session]");
    settle();
    assert!(wallet.text("#lock-pill").contains("Unlocked"));
    assert_eq!(
        wallet.call("wallet_status", json!({}))["result"]["locked"],
        false
    );
    assert_eq!(wallet.text("#session-receipts").trim(), "");

    // The person's own Release goes through (the proposal was held, not broken).
    wallet.release(&proposal, true);
    let out = wallet.poll("check_proposal", json!({ "proposal_id": proposal }), |o| {
        o["result"]["status"] == "released"
    });
    assert_eq!(out["result"]["status"], "released");
    wallet.assert_no_csp_violation();
}

// ---------------------------------------------------------------------------------------------
// The passphrase dialog

#[test]
fn consent_the_passphrase_dialog_wrong_cancel_right() {
    let session = Session::start();
    let mut wallet = session.with_profile("");
    assert_eq!(wallet.confirm, Confirm::Passphrase);
    let id = wallet.request(housing_policy(HOUSING, "n-dialog"));

    // Grant opens the modal dialog: a sentence, the password field focused and empty.
    click_grant(&wallet, &id);
    wallet.page.wait_for(CONFIRM_OPEN, WAIT).unwrap();
    let shape = wallet
        .page
        .eval(
            "(() => { const d = document.getElementById('confirm'); \
               const p = document.getElementById('confirm-pass'); \
               return [d.tagName, d.matches(':modal'), !!d.querySelector('form[method=dialog]'), \
                       p.type, p.value, document.activeElement === p, \
                       (document.getElementById('confirm-text') || {}).textContent || '']; })()",
        )
        .unwrap();
    assert_eq!(shape[0], "DIALOG", "{shape}");
    assert_eq!(shape[1], true, "not modal: {shape}");
    assert_eq!(shape[2], true, "no form method=dialog: {shape}");
    assert_eq!(shape[3], "password", "{shape}");
    assert_eq!(shape[4], "", "{shape}");
    assert_eq!(shape[5], true, "#confirm-pass is not focused: {shape}");
    assert!(
        shape[6].as_str().unwrap().trim().len() > 10,
        "#confirm-text says nothing: {shape}"
    );

    // A wrong passphrase: the dialog stays, it says so, nothing is granted.
    tacit_e2e::wallet::type_confirmation(&wallet.page, "not the passphrase at all").unwrap();
    wallet
        .page
        .wait_for(
            "((document.getElementById('confirm-msg') || {}).textContent || '').trim().length > 0",
            WAIT,
        )
        .unwrap();
    settle();
    assert!(dialog_open(&wallet), "a wrong passphrase closed the dialog");
    assert_nothing_granted(&mut wallet, &id, &[], "wrong passphrase");

    // Cancel: the dialog closes, nothing is granted.
    wallet.page.click("[data-action=confirm-cancel]").unwrap();
    wallet
        .page
        .wait_for(&format!("!{CONFIRM_OPEN}"), WAIT)
        .unwrap();
    settle();
    assert_nothing_granted(&mut wallet, &id, &[], "cancel");

    // A script that fills the field and submits the form itself gets nothing either: the
    // dialog must be opened by the person's click, and a script cannot open it.
    wallet
        .page
        .eval(
            "(() => { const d = document.getElementById('confirm'); \
               const p = document.getElementById('confirm-pass'); if (p) p.value = 'guess guess guess'; \
               const f = d && d.querySelector('form'); if (f) { try { f.requestSubmit(); } catch (e) {} } \
               return true; })()",
        )
        .unwrap();
    settle();
    assert_nothing_granted(&mut wallet, &id, &[], "script submit");

    // Right, all by keyboard: Enter on the focused Grant button (a trusted activation) opens
    // the dialog, Enter in the field submits it; the grant is made.
    wallet.front();
    tacit_e2e::wallet::tick_all(&wallet.page, &format!("#req-{id}")).unwrap();
    wallet
        .page
        .focus_on(&format!("[data-action=grant][data-id={id}]"))
        .unwrap();
    wallet.page.press("Enter").unwrap();
    wallet.page.wait_for(CONFIRM_OPEN, WAIT).unwrap();
    wallet.page.fill("#confirm-pass", PASS).unwrap();
    wallet.page.press("Enter").unwrap();
    wallet
        .page
        .wait_for(&format!("!{CONFIRM_OPEN}"), WAIT)
        .unwrap();
    let tools = granted_tools(&mut wallet, &id);
    assert_eq!(tools.len(), 2);
    // The passphrase does not linger in the field.
    assert_eq!(
        wallet
            .page
            .eval("document.getElementById('confirm-pass').value")
            .unwrap(),
        ""
    );
    wallet.assert_no_csp_violation();
}

// ---------------------------------------------------------------------------------------------
// WebAuthn

/// Installed before the page's own scripts: wraps `navigator.credentials.get`; while
/// `window.__fake.on`, answers with an assertion of the right shape (the right type, challenge,
/// origin, rpIdHash, UP and UV flags, the allowed credential id) signed by a fresh P-256 key of
/// its own, not the registered one.
const FAKE_GET: &str = r#"
(() => {
  const creds = navigator.credentials;
  const realGet = creds.get.bind(creds);
  window.__fake = { on: false, calls: 0, real: 0 };
  const enc = new TextEncoder();
  const bytes = (v) => v instanceof ArrayBuffer ? new Uint8Array(v)
    : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  const b64url = (u8) => btoa(String.fromCharCode(...u8))
    .replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const derInt = (b) => { let i = 0; while (i < b.length - 1 && b[i] === 0) i++; b = b.slice(i);
    if (b[0] & 0x80) b = Uint8Array.of(0, ...b); return Uint8Array.of(2, b.length, ...b); };
  const der = (raw) => { const r = derInt(raw.slice(0, 32)), s = derInt(raw.slice(32));
    return Uint8Array.of(0x30, r.length + s.length, ...r, ...s); };
  creds.get = async function (options) {
    if (!window.__fake.on) { window.__fake.real++; return realGet(options); }
    window.__fake.calls++;
    const pk = options.publicKey;
    const challenge = bytes(pk.challenge).slice();
    const clientData = enc.encode(JSON.stringify({ type: 'webauthn.get',
      challenge: b64url(challenge), origin: location.origin, crossOrigin: false }));
    const rpIdHash = new Uint8Array(await crypto.subtle.digest('SHA-256',
      enc.encode(pk.rpId || location.hostname)));
    const authData = new Uint8Array(37); authData.set(rpIdHash, 0); authData[32] = 0x05;
    authData[36] = 9;
    const key = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false,
      ['sign']);
    const clientHash = new Uint8Array(await crypto.subtle.digest('SHA-256', clientData));
    const signed = new Uint8Array(37 + 32); signed.set(authData); signed.set(clientHash, 37);
    const raw = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' },
      key.privateKey, signed));
    const sig = der(raw);
    const allowed = pk.allowCredentials && pk.allowCredentials[0];
    const rawId = allowed ? bytes(allowed.id).slice() : crypto.getRandomValues(new Uint8Array(16));
    const response = { clientDataJSON: clientData.buffer, authenticatorData: authData.buffer,
      signature: sig.buffer, userHandle: null };
    return { id: b64url(rawId), rawId: rawId.buffer, type: 'public-key',
      authenticatorAttachment: 'platform', response,
      getClientExtensionResults: () => ({}) };
  };
})();
"#;

/// A wallet whose page answers WebAuthn with [`FAKE_GET`], with a profile and the authenticator
/// registered as the way the person confirms.
fn wallet_with_authenticator<'b>(
    browser: &'b tacit_e2e::Browser,
    server: &tacit_e2e::StaticServer,
) -> Wallet<'b> {
    let mut wallet = Wallet::open_with(browser, server, "", &[FAKE_GET]);
    wallet.create_profile();
    wallet.use_authenticator();
    wallet
}

#[test]
fn consent_webauthn_only_a_verified_assertion_of_the_registered_key_grants() {
    let session = Session::start();
    let mut wallet = wallet_with_authenticator(&session.browser, &session.server);
    assert_eq!(
        wallet
            .page
            .eval("document.getElementById('authenticator-status').dataset.state")
            .unwrap(),
        "on"
    );

    // The real path: a click on Grant, the virtual authenticator answers, no dialog.
    let first = wallet.request(housing_policy(HOUSING, "n-webauthn-1"));
    let real_before = wallet.page.eval("window.__fake.real").unwrap();
    click_grant(&wallet, &first);
    let tools = granted_tools(&mut wallet, &first);
    assert_eq!(tools.len(), 2);
    assert!(!dialog_open(&wallet));
    assert_ne!(
        wallet.page.eval("window.__fake.real").unwrap(),
        real_before,
        "the grant did not ask navigator.credentials.get"
    );
    let live = wallet.claim_tools();

    // A replaced navigator.credentials.get with a well-formed assertion from another key.
    wallet.page.eval("window.__fake.on = true").unwrap();
    let second = wallet.request(housing_policy(PHARMACY, "n-webauthn-2"));
    click_grant(&wallet, &second);
    settle();
    cancel_dialog(&wallet);
    assert!(
        wallet.page.eval("window.__fake.calls").unwrap().as_u64() >= Some(1),
        "the page never called the replaced navigator.credentials.get"
    );
    assert_nothing_granted(&mut wallet, &second, &live, "fake assertion");
    wallet.page.eval("window.__fake.on = false").unwrap();

    // The authenticator does not verify the user: nothing is granted.
    wallet.set_user_verified(false);
    click_grant(&wallet, &second);
    settle();
    cancel_dialog(&wallet);
    assert_nothing_granted(&mut wallet, &second, &live, "user not verified");

    // Verified again: the same card grants.
    wallet.set_user_verified(true);
    click_grant(&wallet, &second);
    let tools = granted_tools(&mut wallet, &second);
    assert_eq!(tools.len(), 2);

    // Release and End session under the fake: nothing released, still unlocked.
    for tool in &tools {
        assert_eq!(wallet.call(tool, json!({}))["ok"], true);
    }
    let proposal = wallet.draft(PHARMACY, "n-webauthn-2");
    wallet.page.eval("window.__fake.on = true").unwrap();
    let calls = wallet.page.eval("window.__fake.calls").unwrap();
    wallet.release(&proposal, true);
    settle();
    cancel_dialog(&wallet);
    assert_ne!(wallet.page.eval("window.__fake.calls").unwrap(), calls);
    let status = proposal_status(&mut wallet, &proposal);
    assert_eq!(
        status["status"], "held",
        "a fake assertion released: {status}"
    );
    wallet.front();
    wallet.page.click("[data-action=end-session]").unwrap();
    settle();
    cancel_dialog(&wallet);
    assert_eq!(
        wallet.call("wallet_status", json!({}))["result"]["locked"],
        false,
        "a fake assertion ended the session"
    );
    // The real authenticator releases it.
    wallet.page.eval("window.__fake.on = false").unwrap();
    wallet.release(&proposal, true);
    wallet.poll("check_proposal", json!({ "proposal_id": proposal }), |o| {
        o["result"]["status"] == "released"
    });

    // Removing the authenticator brings the passphrase dialog back.
    wallet.front();
    wallet
        .page
        .click("[data-action=remove-authenticator]")
        .unwrap();
    wallet
        .page
        .wait_for(
            "document.getElementById('authenticator-status').dataset.state === 'off'",
            WAIT,
        )
        .unwrap();
    wallet.confirm = Confirm::Passphrase;
    let third = wallet.request(housing_policy(HOUSING, "n-webauthn-3"));
    click_grant(&wallet, &third);
    wallet.confirm_act();
    assert_eq!(granted_tools(&mut wallet, &third).len(), 2);
    wallet.assert_no_csp_violation();
}

/// A script damages the registered device's record (or replaces it with junk): the page does not
/// fall back silently, nor ask the authenticator with a key it cannot vouch for. The passphrase
/// dialog opens and says why, and the passphrase grants.
#[test]
fn consent_a_damaged_device_record_asks_for_the_passphrase_and_says_why() {
    let session = Session::start();
    let mut wallet = wallet_with_authenticator(&session.browser, &session.server);
    let damages = [
        // One hex digit of the sealed device flipped; the vault id kept.
        "(() => { const k = 'tacit.authenticator.v1'; const r = JSON.parse(localStorage.getItem(k)); \
           r.sealed = (r.sealed[0] === '0' ? '1' : '0') + r.sealed.slice(1); \
           localStorage.setItem(k, JSON.stringify(r)); return true; })()",
        // Not a record at all.
        "(() => { localStorage.setItem('tacit.authenticator.v1', '{\"sealed\":'); return true; })()",
    ];
    for (n, damage) in damages.iter().enumerate() {
        assert_eq!(wallet.page.eval(damage).unwrap(), json!(true));
        let asked_before = wallet.page.eval("window.__fake.real").unwrap();
        let site = [HOUSING, PHARMACY][n];
        let id = wallet.request(housing_policy(site, &format!("n-damaged-{n}")));
        click_grant(&wallet, &id);
        let said = wallet.confirm_text();
        assert!(
            said.contains("its record could not be read"),
            "damage {n}: the dialog does not say why: {said:?}"
        );
        assert_eq!(
            wallet.page.eval("window.__fake.real").unwrap(),
            asked_before,
            "damage {n}: the authenticator was asked with an unreadable record"
        );
        wallet.confirm = Confirm::Passphrase;
        wallet.confirm_act();
        assert_eq!(granted_tools(&mut wallet, &id).len(), 2, "damage {n}");
    }
    wallet.assert_no_csp_violation();
}

// ---------------------------------------------------------------------------------------------
// Raw values in the DOM and the accessibility tree

/// The income this test's profile holds (not 28,400.00, the field's placeholder example).
const INCOME: &str = "27,650.00";
const INCOME_NEEDLES: [&str; 8] = [
    "27,650",
    "27650",
    "27.650",
    "27 650",
    "27\u{a0}650",
    "27\u{202f}650",
    "27'650",
    "2765000",
];
const DOB_NEEDLES: [&str; 5] = [
    "1990-02-28",
    "1990",
    "28.02.1990",
    "02/28/1990",
    "28/02/1990",
];

/// What a DOM-reading agent can see of the person's facts: every needle found in
/// `document.documentElement.outerHTML`, in any input's value, or in the accessibility tree,
/// and the district or condition if any control shows it chosen.
/// Every string an accessibility-tree dump carries under a `value` key (AX values of names,
/// descriptions, values and properties), one per line; ids and roles' internal names are left out.
fn ax_text(tree: &Value) -> String {
    fn walk(value: &Value, key: &str, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    if !k.ends_with("Id") && !k.ends_with("Ids") {
                        walk(v, k, out);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, key, out)),
            Value::String(text) if key == "value" => out.push(text.clone()),
            Value::Number(n) if key == "value" => out.push(n.to_string()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(tree, "", &mut out);
    out.join("\n")
}

fn exposed(wallet: &Wallet<'_>) -> Vec<String> {
    let html = wallet
        .page
        .eval("document.documentElement.outerHTML")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let controls = wallet
        .page
        .eval(
            "[...document.querySelectorAll('input, select, textarea')].map(e => ({ \
               id: e.id, type: e.type, value: e.value, checked: !!e.checked, \
               label: (e.closest('label') || {}).textContent || '', \
               chosen: e.tagName === 'SELECT' ? [...e.selectedOptions].map(o => o.value + '|' + o.label) : [] }))",
        )
        .unwrap();
    wallet.page.send("Accessibility.enable", json!({})).unwrap();
    let tree = wallet
        .page
        .send("Accessibility.getFullAXTree", json!({}))
        .unwrap();
    let values: String = controls
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["value"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n");
    // What the AX tree says (names, values, descriptions, properties), never its node ids: a
    // backendDOMNodeId such as 1990 is no birth year.
    let ax = ax_text(&tree);
    let mut found = Vec::new();
    for (name, text) in [
        ("outerHTML", &html),
        ("input values", &values),
        ("AX tree", &ax),
    ] {
        for needle in INCOME_NEEDLES.iter().chain(DOB_NEEDLES.iter()) {
            if text.contains(needle) {
                found.push(format!("{needle:?} in {name}"));
            }
        }
    }
    for control in controls.as_array().unwrap() {
        let chosen = control["chosen"].to_string().to_lowercase();
        if chosen.contains("nordhafen") {
            found.push(format!("district chosen in {control}"));
        }
        let value = control["value"].as_str().unwrap_or_default().to_lowercase();
        if value == "nordhafen" {
            found.push(format!("district as a value in {control}"));
        }
        let about_asthma = value == "asthma"
            || control["label"]
                .as_str()
                .unwrap_or_default()
                .to_lowercase()
                .contains("asthma");
        if control["checked"] == true && about_asthma {
            found.push(format!("condition ticked in {control}"));
        }
        if control["id"] == "f-currency" && !value.is_empty() {
            found.push(format!("currency in {control}"));
        }
    }
    for node in tree["nodes"].as_array().unwrap() {
        let name = node
            .pointer("/name/value")
            .map(Value::to_string)
            .unwrap_or_default()
            .to_lowercase();
        let value = node
            .pointer("/value/value")
            .map(Value::to_string)
            .unwrap_or_default()
            .to_lowercase();
        let props = node["properties"].as_array().cloned().unwrap_or_default();
        let prop = |p: &str| {
            props
                .iter()
                .find(|x| x["name"] == p)
                .map(|x| x["value"]["value"].clone())
                .unwrap_or(Value::Null)
        };
        if value.contains("nordhafen") {
            found.push(format!("district as an AX value: {node}"));
        }
        if name.contains("nordhafen") && prop("selected") == true {
            found.push(format!("district selected in the AX tree: {node}"));
        }
        if name.contains("asthma") && (prop("checked") == "true" || prop("checked") == true) {
            found.push(format!("condition checked in the AX tree: {node}"));
        }
    }
    found
}

fn assert_hidden(wallet: &Wallet<'_>, when: &str) {
    assert_eq!(wallet.editor_state(), "closed", "{when}");
    let found = exposed(wallet);
    assert!(found.is_empty(), "{when}: raw values exposed: {found:#?}");
}

#[test]
fn consent_raw_values_only_while_the_person_has_the_editor_open() {
    let session = Session::start();
    let mut wallet = session.open("?editor_idle_ms=1500");
    wallet.create_profile_with_income(INCOME); // EUR, 1990-02-28, Nordhafen, asthma
    wallet.reload();
    wallet.unlock(PASS);
    wallet.wait_text("#lock-pill", "Unlocked");
    assert_hidden(&wallet, "unlocked, editor closed");
    // Consent cards, grants, answers, the approval card and the log show no raw value either.
    let id = wallet.request(json!({
        "origin": PHARMACY, "nonce": "n-raw",
        "claims": [
            { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } },
            { "kind": "age_at_least", "years": 18 },
            { "kind": "has_none_of",
              "conditions": ["anticoagulant-therapy", "liver-disease", "pregnancy"] }
        ]
    }));
    assert_hidden(&wallet, "a consent card");
    for tool in wallet.grant(&id, "600000", 3) {
        assert_eq!(wallet.call(&tool, json!({}))["ok"], true);
    }
    wallet.draft(PHARMACY, "n-raw");
    assert_hidden(&wallet, "grants, answers, an approval card");

    // A wrong passphrase does not open it.
    wallet.try_open_editor("not the passphrase at all");
    settle();
    assert_hidden(&wallet, "after a wrong editor passphrase");

    // Opened with the passphrase: every fact is there (so the search above can find them).
    wallet.open_editor();
    let found = exposed(&wallet).join("\n");
    for must in [
        "\"27,650\"",
        "\"1990-02-28\"",
        "district",
        "condition",
        "currency",
    ] {
        assert!(
            found.contains(must),
            "open editor, {must} not found in {found}"
        );
    }
    wallet.close_editor();
    assert_hidden(&wallet, "after close");

    // Lock empties it; unlocking again leaves it closed.
    wallet.open_editor();
    assert!(!exposed(&wallet).is_empty());
    wallet.page.click("[data-action=lock]").unwrap();
    wallet.wait_text("#lock-pill", "Locked");
    let found = exposed(&wallet);
    assert!(found.is_empty(), "locked: {found:#?}");
    wallet.unlock(PASS);
    wallet.wait_text("#lock-pill", "Unlocked");
    assert_hidden(&wallet, "unlocked again");

    // Idle: it closes by itself 1.5 s after the last input.
    wallet.open_editor();
    assert!(!exposed(&wallet).is_empty());
    let opened = Instant::now();
    wallet
        .page
        .wait_for(
            "document.getElementById('editor').dataset.state === 'closed'",
            Duration::from_secs(10),
        )
        .unwrap();
    assert!(
        opened.elapsed() >= Duration::from_millis(1000),
        "closed too early: {:?}",
        opened.elapsed()
    );
    assert_hidden(&wallet, "after idle");
    // Save does nothing while closed.
    let stored = wallet
        .page
        .eval("localStorage.getItem('tacit.vault.v1')")
        .unwrap();
    script_click(&wallet, "[data-action=save-profile]");
    if wallet
        .page
        .eval("!!document.querySelector('[data-action=save-profile]') && document.querySelector('[data-action=save-profile]').getBoundingClientRect().width > 0")
        .unwrap()
        == json!(true)
    {
        wallet.page.click("[data-action=save-profile]").unwrap();
    }
    settle();
    assert_eq!(
        wallet
            .page
            .eval("localStorage.getItem('tacit.vault.v1')")
            .unwrap(),
        stored,
        "a closed editor saved"
    );
    wallet.assert_no_csp_violation();
}

// ---------------------------------------------------------------------------------------------
// Consent cards

#[test]
fn consent_a_card_keeps_the_persons_choices_when_others_arrive() {
    let session = Session::start();
    let mut wallet = session.with_profile("");
    let id = wallet.request(housing_policy(HOUSING, "n-card-1"));
    let card = format!("#req-{id}");
    // The person ticks the first claim only (none starts ticked), chooses one use, types a
    // reason (real input).
    wallet.front();
    wallet
        .page
        .click(&format!("{card} input[data-claim-index=\"0\"]"))
        .unwrap();
    wallet.page.select(&format!("#dur-{id}"), "once").unwrap();
    wallet
        .page
        .type_into(&format!("#deny-{id}"), "not now")
        .unwrap();
    let mark = format!(
        "(() => {{ const c = document.querySelector({card:?}); c.__kept = 1; \
           c.querySelector('input[data-claim-index=\"1\"]').__kept = 1; return true; }})()"
    );
    wallet.page.eval(&mark).unwrap();

    // The agent asks again (another request), twice; the countdown ticks meanwhile.
    let other = wallet.request(housing_policy(PHARMACY, "n-card-2"));
    wallet.request(housing_policy(HOUSING, "n-card-3"));
    settle();
    let state = wallet
        .page
        .eval(&format!(
            "(() => {{ const c = document.querySelector({card:?}); \
               const box = c.querySelector('input[data-claim-index=\"1\"]'); \
               return [c.__kept === 1, box.__kept === 1, \
                       c.querySelector('input[data-claim-index=\"0\"]').checked, box.checked, \
                       document.getElementById('dur-{id}').value, \
                       document.getElementById('deny-{id}').value]; }})()"
        ))
        .unwrap();
    assert_eq!(
        state,
        json!([true, true, true, false, "once", "not now"]),
        "the card was rebuilt or lost the person's choices"
    );
    // The other card is untouched by this one's choices.
    let other_box = wallet
        .page
        .eval(&format!(
            "document.querySelector('#req-{other} input[data-claim-index=\"1\"]').checked"
        ))
        .unwrap();
    assert_eq!(other_box, false, "a box was ticked for the person");

    // Grant: only the ticked claim, for one use.
    click_grant(&wallet, &id);
    wallet.confirm_act();
    let tools = granted_tools(&mut wallet, &id);
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert!(tools[0].contains("income_below"), "{tools:?}");
    let out = wallet.call(&tools[0], json!({}));
    assert_eq!(out["result"]["satisfied"], true, "{out}");
    // One use: the tool is withdrawn; if the agent still reaches it, it is refused.
    wallet.page.wait_tool_gone(&tools[0], WAIT).unwrap();
    if let Ok(again) = wallet.page.call_tool(&tools[0], json!({})) {
        assert_ne!(
            again.output["ok"], true,
            "a one-use grant answered twice: {:?}",
            again.raw
        );
    }
}

#[test]
fn consent_cards_appear_in_arrival_order() {
    let session = Session::start();
    let mut wallet = session.with_profile("");
    let mut ids = Vec::new();
    for i in 0..12 {
        let origin = if i % 2 == 0 { HOUSING } else { PHARMACY };
        ids.push(wallet.request(json!({
            "origin": origin,
            "nonce": format!("n-order-{i}"),
            "claims": [ { "kind": "age_at_least", "years": 18 } ]
        })));
    }
    let shown = wallet
        .page
        .eval("[...document.querySelectorAll('#requests .request')].map(e => e.id)")
        .unwrap();
    let expected: Vec<String> = ids.iter().map(|id| format!("req-{id}")).collect();
    assert_eq!(shown, json!(expected), "cards are not in arrival order");
    // The second before the tenth, whatever their ids spell.
    let position = |id: &str| {
        shown
            .as_array()
            .unwrap()
            .iter()
            .position(|x| x == &json!(format!("req-{id}")))
            .unwrap()
    };
    assert!(position(&ids[1]) < position(&ids[9]));
}

#[test]
fn consent_a_claim_the_memory_would_decline_is_disabled_and_unticked() {
    let session = Session::start();
    let mut wallet = session.with_profile(""); // asthma
    // The agent learns "not none of {anticoagulant, liver, asthma}".
    let wide = wallet.request(json!({
        "origin": PHARMACY, "nonce": "n-decl-1",
        "claims": [ { "kind": "has_none_of",
                      "conditions": ["anticoagulant-therapy", "liver-disease", "asthma"] } ]
    }));
    let tools = wallet.grant(&wide, "600000", 1);
    assert_eq!(
        wallet.call(&tools[0], json!({}))["result"]["satisfied"],
        false
    );
    // The narrower question would single out asthma: shown disabled, unticked, with a reason.
    let id = wallet.request(json!({
        "origin": PHARMACY, "nonce": "n-decl-2",
        "claims": [
            { "kind": "has_none_of", "conditions": ["anticoagulant-therapy", "liver-disease"] },
            { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } }
        ]
    }));
    let boxes = wallet
        .page
        .eval(&format!(
            "[...document.querySelectorAll('#req-{id} input[data-claim-index]')].map(b => \
               [b.dataset.claimIndex, b.disabled, b.checked, b.dataset.declined || '', \
                b.closest('.request').innerText])"
        ))
        .unwrap();
    let boxes = boxes.as_array().unwrap();
    assert_eq!(boxes.len(), 2, "{boxes:?}");
    assert_eq!(
        boxes[0][1], true,
        "the declined claim is not disabled: {boxes:?}"
    );
    assert_eq!(
        boxes[0][2], false,
        "the declined claim is ticked: {boxes:?}"
    );
    let reason = boxes[0][3].as_str().unwrap();
    assert!(!reason.is_empty(), "no data-declined: {boxes:?}");
    // The reason is on the card, in the words of `data-declined`.
    assert!(
        boxes[0][4].as_str().unwrap().contains(reason.trim()),
        "the reason is not visible: {boxes:?}"
    );
    assert_eq!(boxes[1][1], false, "{boxes:?}");
    // Not ticked before the person ticks it (issue 30, item 6).
    assert_eq!(boxes[1][2], false, "{boxes:?}");
    // A real click on the disabled box does not tick it; Grant grants only the other claim.
    wallet
        .page
        .click(&format!("#req-{id} input[data-claim-index=\"0\"]"))
        .unwrap();
    click_grant(&wallet, &id);
    wallet.confirm_act();
    let tools = granted_tools(&mut wallet, &id);
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert!(tools[0].contains("income_below"), "{tools:?}");
}

// ---------------------------------------------------------------------------------------------
// Currency

/// `value` with the request id replaced by `<id>` and millisecond timestamps by 0.
fn normalised(value: &Value, id: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace(id, "<id>")),
        Value::Number(n) if n.as_u64().is_some_and(|n| n > 1_000_000_000_000) => json!(0),
        Value::Array(items) => Value::Array(items.iter().map(|v| normalised(v, id)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), normalised(v, id)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What the agent gets, before the person decides, for an income question in USD.
fn agent_view_of_a_usd_question(wallet: &mut Wallet<'_>) -> (Value, String) {
    let policy = json!({
        "origin": HOUSING, "nonce": "n-usd",
        "claims": [ { "kind": "income_below",
                      "limit": { "amount_minor": 3_000_000, "currency": "USD" } } ]
    });
    let held = wallet.call("request_claims", policy);
    assert_eq!(held["ok"], true, "{held}");
    let id = held["result"]["request_id"].as_str().unwrap().to_owned();
    wallet
        .page
        .wait_for(&format!("!!document.getElementById('req-{id}')"), WAIT)
        .unwrap();
    let checked = wallet.call("check_request", json!({ "request_id": id }));
    let status = wallet.call("wallet_status", json!({}));
    let tools = wallet.tool_names();
    (normalised(&json!([held, checked, status, tools]), &id), id)
}

#[test]
fn consent_another_currency_tells_the_agent_nothing_before_the_person_decides() {
    let session = Session::start();
    let mut wallet = session.with_profile(""); // EUR
    let (eur_view, id) = agent_view_of_a_usd_question(&mut wallet);
    // The card, in the person's own page, says the question is in USD and the income in EUR
    // (issue 30, item 6: the paragraph only where the currencies differ).
    let eur_card = wallet.text(&format!("#req-{id} .currency"));
    assert!(
        eur_card.contains("USD")
            && eur_card.contains("EUR")
            && eur_card.to_lowercase().contains("never converted"),
        "{eur_card}"
    );
    // After the person grants, the claim tool declines with the privacy floor's code and words:
    // nothing the agent reads names, or narrows, the profile's currency.
    let tools = wallet.grant(&id, "600000", 1);
    let out = wallet.call(&tools[0], json!({}));
    assert_ne!(out["result"]["satisfied"], true, "{out}");
    assert_eq!(out["error"]["code"], "declined_privacy_floor", "{out}");
    assert!(
        !out.to_string().to_lowercase().contains("currenc"),
        "the decline tells the agent the currencies differ: {out}"
    );

    // The same question to a profile in USD, on fresh storage.
    wallet
        .page
        .eval("localStorage.clear(); sessionStorage.clear(); true")
        .unwrap();
    wallet.reload();
    wallet.create_profile_of("28,400.00", Some("USD"), "asthma");
    let (usd_view, id) = agent_view_of_a_usd_question(&mut wallet);
    // Asked in the profile's own currency, the card has no currency paragraph.
    let hidden = wallet
        .page
        .eval(&format!(
            "(() => {{ const p = document.querySelector('#req-{id} .currency'); \
               return !!p && p.hidden && p.getClientRects().length === 0; }})()"
        ))
        .unwrap();
    assert_eq!(
        hidden,
        json!(true),
        "a currency paragraph where both are in USD: {:?}",
        wallet.text(&format!("#req-{id}"))
    );
    assert_eq!(
        eur_view, usd_view,
        "the agent's replies differ between a EUR and a USD profile before the person decides"
    );
    let tools = wallet.grant(&id, "600000", 1);
    let out = wallet.call(&tools[0], json!({}));
    assert_eq!(out["result"]["satisfied"], true, "{out}");
}

#[test]
fn consent_the_choices_are_those_at_the_persons_click_not_after() {
    let session = Session::start();
    let mut wallet = session.with_profile("");
    let id = wallet.request(housing_policy(HOUSING, "n-snapshot"));
    // The person ticks the income claim only (none starts ticked), chooses one use, clicks
    // Grant.
    wallet.front();
    wallet
        .page
        .click(&format!("#req-{id} input[data-claim-index=\"0\"]"))
        .unwrap();
    wallet.page.select(&format!("#dur-{id}"), "once").unwrap();
    click_grant(&wallet, &id);
    wallet.page.wait_for(CONFIRM_OPEN, WAIT).unwrap();
    // While the dialog waits for the passphrase, a page script ticks the box back and picks an
    // hour.
    let tampered = wallet
        .page
        .eval(&format!(
            "(() => {{ const b = document.querySelector('#req-{id} input[data-claim-index=\"1\"]'); \
               b.checked = true; b.dispatchEvent(new Event('change', {{bubbles: true}})); \
               const d = document.getElementById('dur-{id}'); d.value = '3600000'; \
               d.dispatchEvent(new Event('change', {{bubbles: true}})); \
               return [b.checked, d.value]; }})()"
        ))
        .unwrap();
    // The page keeps the person's choices: a script's change is drawn back at once.
    assert_eq!(tampered, json!([false, "once"]));
    tacit_e2e::wallet::confirm_with_passphrase(&wallet.page, PASS).unwrap();
    // What the person chose at the click: the income claim only, one use.
    let out = wallet.poll("check_request", json!({ "request_id": id }), |o| {
        o["result"]["status"] == "granted"
    });
    let tools = out["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{out}");
    let tool = tools[0]["tool"].as_str().unwrap().to_owned();
    assert!(tool.contains("income_below"), "{out}");
    wallet.page.wait_tool(&tool, WAIT).unwrap();
    assert_eq!(wallet.call(&tool, json!({}))["result"]["satisfied"], true);
    wallet.page.wait_tool_gone(&tool, WAIT).unwrap();
}

#[test]
fn consent_the_authenticator_is_the_persons_and_goes_with_the_profile() {
    let session = Session::start();
    let mut wallet = session.with_profile("");
    wallet.add_virtual_authenticator();
    // A script cannot register a device: no dialog, still off, nothing stored.
    script_click(&wallet, "[data-action=register-authenticator]");
    settle();
    assert!(!dialog_open(&wallet));
    let state = "document.getElementById('authenticator-status').dataset.state";
    assert_eq!(wallet.page.eval(state).unwrap(), "off");
    let kept = "localStorage.getItem('tacit.authenticator.v1')";
    assert_eq!(wallet.page.eval(kept).unwrap(), Value::Null);
    // The person registers it (the passphrase first); it is stored sealed with the vault.
    wallet.register_authenticator();
    let sealed = wallet.page.eval(kept).unwrap();
    assert!(sealed.is_string(), "nothing stored: {sealed}");

    // Deleting the profile deletes it.
    wallet.front();
    wallet.delete_profile();
    assert_eq!(wallet.page.eval(kept).unwrap(), Value::Null);
    // A new profile starts with the passphrase dialog.
    wallet.create_profile();
    assert_eq!(wallet.page.eval(state).unwrap(), "off");
    let id = wallet.request(housing_policy(HOUSING, "n-device"));
    click_grant(&wallet, &id);
    wallet.page.wait_for(CONFIRM_OPEN, WAIT).unwrap();
    tacit_e2e::wallet::confirm_with_passphrase(&wallet.page, PASS).unwrap();
    assert_eq!(granted_tools(&mut wallet, &id).len(), 2);
}

#[test]
fn consent_release_sends_the_items_kept_at_the_persons_click() {
    let session = Session::start();
    let mut wallet = session.with_profile("");
    let id = wallet.request(housing_policy(HOUSING, "n-keep"));
    for tool in wallet.grant(&id, "600000", 2) {
        assert_eq!(wallet.call(&tool, json!({}))["result"]["satisfied"], true);
    }
    let proposal = wallet.draft(HOUSING, "n-keep");
    let boxes = format!(
        "[...document.querySelector('[data-action=release][data-id={proposal}]').closest('.item')\
           .querySelectorAll('.proposal-item input[data-item-index]')]"
    );
    let items = wallet
        .page
        .eval(&format!(
            "{boxes}.map(b => [b.dataset.itemIndex, b.checked])"
        ))
        .unwrap();
    assert_eq!(items.as_array().map(Vec::len), Some(2), "{items}");
    // No answer starts ticked (issue 30, item 6).
    assert!(
        items.as_array().unwrap().iter().all(|i| i[1] == false),
        "{items}"
    );
    // The person ticks the first item only (real click) and clicks Release; while the dialog
    // waits, a script ticks the second.
    let first = items[0][0].as_str().unwrap().to_owned();
    wallet.front();
    wallet
        .page
        .click(&format!(
            ".proposal-item input[data-item-index=\"{first}\"]"
        ))
        .unwrap();
    let ack = format!("#ack-{proposal}");
    if wallet
        .page
        .eval(&format!(
            "(() => {{ const a = document.querySelector({ack:?}); return !!a && !a.checked; }})()"
        ))
        .unwrap()
        == json!(true)
    {
        wallet.page.click(&ack).unwrap();
    }
    wallet
        .page
        .click(&format!("[data-action=release][data-id={proposal}]"))
        .unwrap();
    wallet.page.wait_for(CONFIRM_OPEN, WAIT).unwrap();
    wallet
        .page
        .eval(&format!(
            "{boxes}.forEach(b => {{ b.checked = true; \
               b.dispatchEvent(new Event('change', {{bubbles: true}})); }})"
        ))
        .unwrap();
    tacit_e2e::wallet::confirm_with_passphrase(&wallet.page, PASS).unwrap();
    let out = wallet.poll("check_proposal", json!({ "proposal_id": proposal }), |o| {
        o["result"]["status"] == "released"
    });
    let entries = out["result"]["payload"]["entries"]
        .as_array()
        .or_else(|| out["result"]["receipt"]["payload"]["entries"].as_array())
        .unwrap_or_else(|| panic!("no released payload: {out}"));
    assert_eq!(entries.len(), 1, "the unticked item left: {out}");
}
