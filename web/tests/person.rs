//! The person's side of the page in real Chromium, without the end-to-end harness: the wallet's
//! own markup (`static/index.html`) is put into the test page and the app started on it; an agent
//! asks through `document.modelContext` (native WebMCP: `getTools()` and `executeTool()`; the
//! page offers no `window.tacit` then); a page script then tries to act for the person.
//!
//! What a trusted click or key press does (the confirmation dialog, the WebAuthn path) needs real
//! input, which only the DevTools protocol gives: `tests/tests/consent.rs` tests that. Here:
//! script clicks, script-dispatched events, script key presses and script form submissions do
//! nothing; consent cards keep what the person chose when other requests arrive and stay in
//! arrival order.

#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::Duration;

use js_sys::{Function, Promise};
use serde_json::{Value, json};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const ORIGIN: &str = "http://127.0.0.1:8081";

fn js(source: &str) -> JsValue {
    Function::new_no_args(source).call0(&JsValue::NULL).unwrap()
}

fn js_bool(source: &str) -> bool {
    js(source)
        .as_bool()
        .unwrap_or_else(|| panic!("not a boolean: {source}"))
}

async fn sleep(ms: u64) {
    gloo_timers::future::sleep(Duration::from_millis(ms)).await;
}

/// The wallet's markup in this page, and the app started on it (once per page).
async fn page() {
    if js_bool("return !!document.getElementById('requests')") {
        return;
    }
    let html = include_str!("../static/index.html");
    // From the header (End session lives there) to the confirmation dialog.
    let start = html.find("<header").unwrap();
    let end = html.find("</dialog>").unwrap() + "</dialog>".len();
    let body = web_sys::window()
        .unwrap()
        .document()
        .unwrap()
        .body()
        .unwrap();
    let holder = web_sys::window()
        .unwrap()
        .document()
        .unwrap()
        .create_element("div")
        .unwrap();
    holder.set_inner_html(&html[start..end]);
    body.append_child(&holder).unwrap();
    // The page's loader starts the app; here the test does (with nothing to adopt). Its host
    // claims `window.tacit` either way: the door itself, or `undefined` with WebMCP.
    tacit_web::start_wallet(js_sys::Array::new());
    sleep(50).await;
    assert!(js_bool("return 'tacit' in window"), "the app did not start");
    assert!(
        js_bool("return window.tacit === undefined"),
        "window.tacit is offered although the browser has WebMCP"
    );
}

/// Calls a tool as an in-page agent does: the tool object from `getTools()`, then
/// `executeTool(tool, input)`, which resolves to the envelope's JSON text.
async fn call(tool: &str, input: Value) -> Value {
    let source = format!(
        "return (async () => {{ const ctx = document.modelContext; \
         const t = (await ctx.getTools()).find((t) => t.name === {tool:?}); \
         if (!t) return JSON.stringify({{ ok: false, error: {{ code: 'unknown_tool' }} }}); \
         return await ctx.executeTool(t, {input}); }})()"
    );
    let promise: Promise = js(&source).dyn_into().unwrap();
    let out = JsFuture::from(promise).await.unwrap();
    serde_json::from_str(&out.as_string().unwrap()).unwrap()
}

/// How many requests this page's tests made: they spread over four origins, since one origin
/// may have only `capability_gate::gate::MAX_PENDING_PER_ORIGIN` waiting.
static ASKED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

async fn request(nonce: &str) -> String {
    let n = ASKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let origin = format!("http://127.0.0.1:{}", 8081 + n % 4);
    let out = call(
        "request_claims",
        json!({
            "origin": origin, "nonce": nonce,
            "claims": [
                { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "USD" } },
                { "kind": "age_at_least", "years": 18 }
            ]
        }),
    )
    .await;
    assert_eq!(out["ok"], true, "{out}");
    let id = out["result"]["request_id"].as_str().unwrap().to_owned();
    sleep(20).await;
    assert!(
        js_bool(&format!("return !!document.getElementById('req-{id}')")),
        "no card for {id}"
    );
    id
}

async fn status(id: &str) -> Value {
    call("check_request", json!({ "request_id": id })).await
}

fn dialog_open() -> bool {
    js_bool("return document.getElementById('confirm').open")
}

#[wasm_bindgen_test]
async fn a_script_cannot_act_for_the_person() {
    page().await;
    let id = request("n-script").await;
    let before = status(&id).await;
    let grant = format!("document.querySelector('#req-{id} [data-action=grant]')");
    // The page draws the card in a task after answering the agent.
    for _ in 0..100 {
        if js_bool(&format!("return !!{grant}")) {
            break;
        }
        sleep(20).await;
    }
    // The script click, a dispatched click event, and a keyboard "activation".
    js(&format!("{grant}.click()"));
    js(&format!(
        "{grant}.dispatchEvent(new MouseEvent('click', {{ bubbles: true, cancelable: true, view: window }}))"
    ));
    js(&format!(
        "{grant}.focus(); {grant}.dispatchEvent(new KeyboardEvent('keydown', {{ key: 'Enter', bubbles: true }}))"
    ));
    js("document.querySelector('[data-action=end-session]').click()");
    js("document.querySelector('[data-action=register-authenticator]').click()");
    sleep(200).await;
    assert!(
        !dialog_open(),
        "a script's click asked for the person's act"
    );
    assert_eq!(
        status(&id).await,
        before,
        "a script's click changed the request"
    );

    // A script cannot open the dialog by its buttons, nor confirm through the form.
    js(
        "document.getElementById('confirm-pass').value = 'correct horse battery'; \
        document.querySelector('[data-action=confirm-ok]').click(); \
        document.getElementById('confirm-form').requestSubmit(); \
        document.getElementById('confirm-pass').dispatchEvent(\
          new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));",
    );
    sleep(200).await;
    assert!(!dialog_open());
    assert_eq!(status(&id).await, before);

    // Even with the dialog open (showModal by a script), its OK button, Enter and a form
    // submission by a script confirm nothing: no act is pending, and none can be made pending
    // without a trusted click.
    js("document.getElementById('confirm').showModal()");
    js(
        "document.getElementById('confirm-pass').value = 'correct horse battery'; \
        document.querySelector('[data-action=confirm-ok]').click(); \
        document.getElementById('confirm-pass').dispatchEvent(\
          new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));",
    );
    sleep(300).await;
    assert!(
        dialog_open(),
        "a script's submit closed the dialog (form submission is not prevented)"
    );
    assert_eq!(
        js("return document.getElementById('confirm-msg').textContent")
            .as_string()
            .unwrap(),
        "",
        "a script's click or key press started a passphrase check"
    );
    js("document.getElementById('confirm').close()");
    assert_eq!(status(&id).await, before);
    // No claim tool exists.
    let tools: Promise =
        js("return document.modelContext.getTools().then((l) => l.map((t) => t.name).join(','))")
            .dyn_into()
            .unwrap();
    let tools = JsFuture::from(tools).await.unwrap().as_string().unwrap();
    assert!(!tools.contains("claim."), "{tools}");
}

#[wasm_bindgen_test]
async fn cards_keep_the_persons_choices_and_arrival_order() {
    page().await;
    let first = request("n-keep-1").await;
    let card = format!("document.getElementById('req-{first}')");
    // A reason typed into the card (set directly: what counts is that a redraw keeps it), and a
    // script's tick and duration, which are not the person's choices (no trusted input here;
    // the person's real clicks are `tests/tests/choices.rs`'s): a redraw draws those back, and
    // nothing starts ticked.
    js(&format!(
        "window.__card = {card}; \
         {card}.querySelector('input[data-claim-index=\"1\"]').checked = true; \
         document.getElementById('dur-{first}').value = 'once'; \
         document.getElementById('deny-{first}').value = 'typing a reason';"
    ));
    let mut ids = vec![first.clone()];
    for i in 0..11 {
        ids.push(request(&format!("n-keep-{}", i + 2)).await);
    }
    sleep(1_100).await; // a countdown tick
    assert!(
        js_bool(&format!("return window.__card === {card}")),
        "the card was rebuilt"
    );
    assert!(js_bool(&format!(
        "return !{card}.querySelector('input[data-claim-index=\"1\"]').checked \
           && !{card}.querySelector('input[data-claim-index=\"0\"]').checked \
           && document.getElementById('dur-{first}').value === '600000' \
           && document.getElementById('deny-{first}').value === 'typing a reason'"
    )));
    // Arrival order, past ten requests (never the string order of ids).
    let shown =
        js("return [...document.querySelectorAll('#requests .request')].map(e => e.id).join(',')")
            .as_string()
            .unwrap();
    let shown: Vec<&str> = shown.split(',').collect();
    let want: Vec<String> = ids.iter().map(|id| format!("req-{id}")).collect();
    let mine: Vec<&str> = shown
        .iter()
        .copied()
        .filter(|s| want.iter().any(|w| w == s))
        .collect();
    assert_eq!(
        mine,
        want.iter().map(String::as_str).collect::<Vec<_>>(),
        "not in arrival order"
    );
    // The income question says its currency, in words that are the same for any profile.
    assert!(js_bool(&format!(
        "return {card}.querySelector('[data-currency]').dataset.currency === 'USD' \
           && /USD/.test({card}.innerText) && /never converted/.test({card}.innerText)"
    )));
}

#[wasm_bindgen_test]
async fn the_consent_card_speaks_plain_words() {
    page().await;
    let out = call(
        "request_claims",
        json!({
            "origin": ORIGIN, "nonce": "n-words",
            "purpose": "Checking eligibility for subsidised housing",
            "claims": [
                { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "USD" } },
                { "kind": "age_at_least", "years": 18 },
                { "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] },
                { "kind": "has_none_of", "conditions": ["anticoagulant-therapy", "liver-disease", "pregnancy"] }
            ]
        }),
    )
    .await;
    assert_eq!(out["ok"], true, "{out}");
    let id = out["result"]["request_id"].as_str().unwrap().to_owned();
    sleep(50).await;
    let card = format!("document.getElementById('req-{id}')");
    let text = js(&format!("return {card}.innerText")).as_string().unwrap();
    // The amount as this browser's Intl writes 30,000 US dollars (whatever its locale).
    let amount = js(
        "return new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', \
         minimumFractionDigits: 0, maximumFractionDigits: 0 }).format(30000)",
    )
    .as_string()
    .unwrap();
    for want in [
        "Unconfirmed: an agent says this is for".to_owned(),
        format!("Is your yearly income below {amount}?"),
        "Are you at least 18?".to_owned(),
        "Do you live in Altstadt, Nordhafen or Westend?".to_owned(),
        "Do you have none of: anticoagulant therapy, liver disease, pregnancy?".to_owned(),
        "Checking eligibility for subsidised housing".to_owned(),
        // This page's wallet is locked (no profile was made here): Allow asks to unlock first.
        "Unlock and allow for 10 minutes".to_owned(),
        "Don't allow".to_owned(),
    ] {
        assert!(text.contains(&want), "{want:?} not on the card: {text}");
    }
    for never in [
        "3000000",
        "30000 ",
        "altstadt",
        "liver-disease",
        "bits",
        "the person",
        "request ",
    ] {
        assert!(!text.contains(never), "{never:?} on the card: {text}");
    }
    assert!(!text.contains(&id), "the request id is on the card: {text}");
    // What answering reveals, in words (bits only inside the closed details line).
    assert!(
        text.contains("Tells the site whether you are at least 18"),
        "{text}"
    );
    assert!(js_bool(&format!(
        "return [...{card}.querySelectorAll('details.bits')].every(d => !d.open && /bits/.test(d.textContent))"
    )));
    // The duration has a visible label, and the Allow button follows the choice.
    let label = js(&format!(
        "const l = document.querySelector('label[for=\"dur-{id}\"]'); return l ? l.innerText : ''"
    ))
    .as_string()
    .unwrap();
    assert!(
        !label.trim().is_empty(),
        "the duration has no visible label"
    );
    // The agent's address is quoted in the heading, marked as the agent's.
    assert!(js_bool(&format!(
        "return {card}.querySelector('h3').textContent.startsWith('Unconfirmed: an agent says this is for') \
           && {card}.querySelector('h3 q[data-said=agent]').textContent === '127.0.0.1:8081'"
    )));
    // A script's choice of duration is not the person's: drawn back, and the Allow button keeps
    // the duration kept for the person (it follows their real choice: `tests/tests/choices.rs`).
    js(&format!(
        "const s = document.getElementById('dur-{id}'); s.value = 'once'; \
         s.dispatchEvent(new Event('change'));"
    ));
    let allow = js(&format!(
        "return {card}.querySelector('[data-action=grant]').textContent"
    ))
    .as_string()
    .unwrap();
    assert_eq!(allow, "Unlock and allow for 10 minutes");
    assert!(js_bool(&format!(
        "return document.getElementById('dur-{id}').value === '600000'"
    )));
}
