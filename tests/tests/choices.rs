//! Issue 28, items 8 and 9, end to end in Chromium: what the person chose on a card is kept by
//! the page in Rust and changed only by their own input; and a card for an unconfirmed asker
//! speaks in the wallet's words, quoting the agent's.
//!
//! - A page script's `.click()`, `checked = true` or synthetic `change` on "I understand this
//!   site is not confirmed", then the person's real Release: nothing is released.
//! - A script that moves request B's `data-id` (and every other attribute) onto A's Allow
//!   button: the person's real click on A's Allow grants A, never B.
//! - A script that picks a duration or ticks a claim before the person's click: the person's
//!   choices are granted, and a card that showed other choices at the click is drawn back.
//! - A request from an unconfirmed origin whose name says "(verified)": the heading starts with
//!   "Unconfirmed: an agent says this is for", and the agent's text is only in marked quotes.
//!
//! The person acts through DevTools `Input` events (the harness's `click`, `select`); a script
//! through `Runtime.evaluate`. These tests fail, never skip, when Chromium, the WebMCP switch or
//! the built site is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::Duration;

use serde_json::{Value, json};
use tacit_e2e::wallet::{CONFIRM_OPEN, PASS, Session, WAIT, Wallet, housing_policy};

const HOUSING: &str = "http://127.0.0.1:8081";
const PHARMACY: &str = "http://127.0.0.1:8082";

fn settle() {
    std::thread::sleep(Duration::from_millis(1500));
}

fn dialog_open(wallet: &Wallet<'_>) -> bool {
    wallet.page.eval(CONFIRM_OPEN).unwrap() == json!(true)
}

fn proposal_status(wallet: &mut Wallet<'_>, id: &str) -> Value {
    wallet.call("check_proposal", json!({ "proposal_id": id }))["result"].clone()
}

fn request_status(wallet: &mut Wallet<'_>, id: &str) -> Value {
    wallet.call("check_request", json!({ "request_id": id }))["result"].clone()
}

/// Whether the acknowledgement box of `proposal` shows ticked.
fn ack_shown(wallet: &Wallet<'_>, proposal: &str) -> Value {
    wallet
        .page
        .eval(&format!(
            "document.getElementById('ack-{proposal}').checked"
        ))
        .unwrap()
}

#[test]
fn choices_a_scripts_tick_of_the_acknowledgement_releases_nothing() {
    let session = Session::start();
    let mut wallet = session.with_profile("");
    let id = wallet.request(housing_policy(HOUSING, "n-ack"));
    for tool in wallet.grant(&id, "600000", 2) {
        assert_eq!(wallet.call(&tool, json!({}))["result"]["satisfied"], true);
    }
    let proposal = wallet.draft(HOUSING, "n-ack");
    let ack = format!("document.getElementById('ack-{proposal}')");
    assert_eq!(
        wallet.page.eval(&format!("!!{ack}")).unwrap(),
        true,
        "the hand-made policy's site should be unconfirmed"
    );
    let attacks = [
        // `.click()`: an untrusted click and change; the page draws the box back at once.
        format!("{ack}.click(); {ack}.checked"),
        // `checked = true` alone: no event at all; the box shows ticked until the click.
        format!("{ack}.checked = true; {ack}.checked"),
        // A click on its label, by a script.
        format!("{ack}.closest('label').click(); {ack}.checked"),
        // `checked = true` with synthetic input and change events.
        format!(
            "{ack}.checked = true; \
             {ack}.dispatchEvent(new Event('input', {{bubbles: true}})); \
             {ack}.dispatchEvent(new Event('change', {{bubbles: true}})); {ack}.checked"
        ),
    ];
    for (n, attack) in attacks.iter().enumerate() {
        wallet.page.eval(attack).unwrap();
        // The person clicks Release for real (they did not tick the box) and confirms.
        wallet.release(&proposal, false);
        settle();
        let status = proposal_status(&mut wallet, &proposal);
        assert_eq!(
            status["status"], "held",
            "attack {n} released for the unconfirmed origin: {status}"
        );
        assert!(status["receipt"].is_null(), "{status}");
        wallet.wait_text(&format!("#prop-note-{proposal}"), "not confirmed");
        // The card shows what the page keeps: the box unticked.
        assert_eq!(ack_shown(&wallet, &proposal), false, "attack {n}");
    }

    // The person ticks it for real, with a click on its label's words: released.
    wallet.front();
    wallet
        .page
        .click(&format!("#prop-{proposal} label.ack span"))
        .unwrap();
    assert_eq!(ack_shown(&wallet, &proposal), true);
    wallet.release(&proposal, true);
    let out = wallet.poll("check_proposal", json!({ "proposal_id": proposal }), |o| {
        o["result"]["status"] == "released"
    });
    assert_eq!(out["result"]["status"], "released", "{out}");
    wallet.assert_no_csp_violation();
}

#[test]
fn choices_a_moved_data_id_grants_the_card_the_person_clicked_never_the_other() {
    let session = Session::start();
    let mut wallet = session.with_profile("");
    // A asks about income and district; B, hidden under it, about age only.
    let a = wallet.request(housing_policy(HOUSING, "n-move-a"));
    let b = wallet.request(json!({
        "origin": PHARMACY, "nonce": "n-move-b",
        "claims": [ { "kind": "age_at_least", "years": 18 } ]
    }));
    // A script copies every attribute of B's Allow button onto A's and takes B's away from it;
    // it also points A's claim boxes at B's indexes.
    let moved = wallet
        .page
        .eval(&format!(
            "(() => {{ const a = document.querySelector('#req-{a} [data-action=grant]'); \
               const b = document.querySelector('#req-{b} [data-action=grant]'); \
               for (const at of [...b.attributes]) a.setAttribute(at.name, at.value); \
               b.removeAttribute('data-id'); b.removeAttribute('data-action'); \
               document.getElementById('req-{b}').style.display = 'none'; \
               return a.dataset.id; }})()"
        ))
        .unwrap();
    assert_eq!(moved, json!(b));
    // The person ticks A's questions and clicks the Allow button on A's card (real input) and
    // confirms.
    wallet.front();
    tacit_e2e::wallet::tick_all(&wallet.page, &format!("#req-{a}")).unwrap();
    wallet
        .page
        .click(&format!("#req-{a} button.primary"))
        .unwrap();
    wallet.confirm_act();
    let out = wallet.poll("check_request", json!({ "request_id": a }), |o| {
        o["result"]["status"] == "granted"
    });
    let tools = tacit_e2e::wallet::granted_tools(&out);
    assert_eq!(tools.len(), 2, "{out}");
    assert!(
        tools
            .iter()
            .all(|t| t.contains("income_below") || t.contains("resides_in")),
        "{tools:?}"
    );
    // B is still waiting, and no age tool exists.
    settle();
    let status = request_status(&mut wallet, &b);
    assert_eq!(status["status"], "held", "B was granted: {status}");
    assert!(
        !wallet
            .claim_tools()
            .iter()
            .any(|t| t.contains("age_at_least")),
        "{:?}",
        wallet.claim_tools()
    );

    // A button a script merely labels `data-action=grant data-id=<B>` grants nothing either.
    wallet
        .page
        .eval(&format!(
            "(() => {{ const x = document.createElement('button'); x.id = 'fake-allow'; \
               x.textContent = 'Allow'; x.setAttribute('data-action', 'grant'); \
               x.setAttribute('data-id', '{b}'); document.body.prepend(x); \
               return true; }})()"
        ))
        .unwrap();
    wallet.page.click("#fake-allow").unwrap();
    settle();
    assert!(
        !dialog_open(&wallet),
        "a made-up Allow asked for confirmation"
    );
    assert_eq!(request_status(&mut wallet, &b)["status"], "held");
}

#[test]
fn choices_a_scripts_choice_before_the_click_is_not_the_persons() {
    let session = Session::start();
    let mut wallet = session.with_profile("");
    let id = wallet.request(housing_policy(HOUSING, "n-before"));
    let card = format!("#req-{id}");
    // The person ticks the income claim only (none starts ticked) and chooses one use (real
    // input).
    wallet.front();
    wallet
        .page
        .click(&format!("{card} input[data-claim-index=\"0\"]"))
        .unwrap();
    wallet.page.select(&format!("#dur-{id}"), "once").unwrap();
    assert!(
        wallet
            .text(&format!("{card} button.primary"))
            .contains("one use")
    );
    // A script picks an hour and re-ticks the claim with synthetic events: drawn back at once.
    let after = wallet
        .page
        .eval(&format!(
            "(() => {{ const b = document.querySelector('{card} input[data-claim-index=\"1\"]'); \
               b.click(); \
               const d = document.getElementById('dur-{id}'); d.value = '3600000'; \
               d.dispatchEvent(new Event('change', {{bubbles: true}})); \
               return [b.checked, d.value, document.querySelector('{card} button.primary').textContent]; }})()"
        ))
        .unwrap();
    assert_eq!(after[0], false, "{after}");
    assert_eq!(after[1], "once", "{after}");
    assert!(after[2].as_str().unwrap().contains("one use"), "{after}");
    // Without any event: the card shows other choices than the person's at their click, so the
    // click asks for nothing and the card is drawn back with a word why.
    wallet
        .page
        .eval(&format!(
            "(() => {{ document.querySelector('{card} input[data-claim-index=\"1\"]').checked = true; \
               document.getElementById('dur-{id}').value = '3600000'; return true; }})()"
        ))
        .unwrap();
    wallet
        .page
        .click(&format!("[data-action=grant][data-id={id}]"))
        .unwrap();
    settle();
    assert!(
        !dialog_open(&wallet),
        "a card a script changed asked to grant"
    );
    wallet.wait_text(&format!("#req-msg-{id}"), "did not make");
    let shown = wallet
        .page
        .eval(&format!(
            "[document.querySelector('{card} input[data-claim-index=\"1\"]').checked, \
              document.getElementById('dur-{id}').value]"
        ))
        .unwrap();
    assert_eq!(shown, json!([false, "once"]));
    // The person clicks again: their choices are granted, the income claim once.
    wallet
        .page
        .click(&format!("[data-action=grant][data-id={id}]"))
        .unwrap();
    wallet.page.wait_for(CONFIRM_OPEN, WAIT).unwrap();
    tacit_e2e::wallet::confirm_with_passphrase(&wallet.page, PASS).unwrap();
    let out = wallet.poll("check_request", json!({ "request_id": id }), |o| {
        o["result"]["status"] == "granted"
    });
    let tools = tacit_e2e::wallet::granted_tools(&out);
    assert_eq!(tools.len(), 1, "{out}");
    assert!(tools[0].contains("income_below"), "{out}");
    wallet.page.wait_tool(&tools[0], WAIT).unwrap();
    assert_eq!(
        wallet.call(&tools[0], json!({}))["result"]["satisfied"],
        true
    );
    // One use, not an hour: the tool is withdrawn after its answer.
    wallet.page.wait_tool_gone(&tools[0], WAIT).unwrap();
}

#[test]
fn choices_an_unconfirmed_card_starts_with_the_wallets_words_and_quotes_the_agent() {
    let session = Session::start();
    let mut wallet = session.with_profile("");
    let mut policy = housing_policy(HOUSING, "n-words");
    policy["site_name"] = json!("www.bundesgesundheitsministerium.de (verified)");
    policy["purpose"] = json!("Official federal check (verified by the ministry)");
    let id = wallet.request(policy);
    let card = format!("document.getElementById('req-{id}')");
    let heading = wallet.text(&format!("#req-title-{id}"));
    assert!(
        heading.starts_with("Unconfirmed: an agent says this is for"),
        "{heading}"
    );
    assert!(!heading.contains("verified"), "{heading}");
    // The card's first words are the wallet's.
    let first = wallet
        .page
        .eval(&format!("{card}.innerText.trim()"))
        .unwrap();
    assert!(
        first
            .as_str()
            .unwrap()
            .starts_with("Unconfirmed: an agent says this is for"),
        "{first}"
    );
    // Every piece of text on the card that carries the agent's words is inside a quotation
    // marked as the agent's; the wallet's own text never carries them.
    let found = wallet
        .page
        .eval(&format!(
            "(() => {{ const out = []; \
               const walk = document.createTreeWalker({card}, NodeFilter.SHOW_TEXT); \
               while (walk.nextNode()) {{ const t = walk.currentNode; \
                 if (/bundesgesundheitsministerium|verified|federal/i.test(t.data)) {{ \
                   const q = t.parentElement.closest('[data-said]'); \
                   out.push([t.data, q ? q.tagName : null, q ? q.dataset.said : null]); }} }} \
               return out; }})()"
        ))
        .unwrap();
    let found = found.as_array().unwrap();
    assert!(
        found.len() >= 2,
        "the agent's texts are not on the card: {found:?}"
    );
    for piece in found {
        assert_eq!(piece[1], "Q", "agent text outside a quotation: {piece}");
        assert_eq!(
            piece[2], "agent",
            "agent text not marked as the agent's: {piece}"
        );
    }
    // The lines that quote it say whose words they are.
    let name_line = wallet.text(&format!("#req-{id} .site-name"));
    assert!(
        name_line.starts_with("The agent says the site calls itself"),
        "{name_line}"
    );
    let purpose = wallet.text(&format!("#req-{id} .purpose"));
    assert!(
        purpose.starts_with("What for, in the agent's words"),
        "{purpose}"
    );
    // The heading quotes the address the agent gave, and nothing says "Verified".
    let quoted = wallet
        .page
        .eval(&format!(
            "{card}.querySelector('h3 [data-said=agent]').textContent"
        ))
        .unwrap();
    assert_eq!(quoted, "127.0.0.1:8081");
    let asker = wallet.text(&format!("#req-{id} .asker"));
    assert!(asker.contains("not confirmed"), "{asker}");
    assert!(!asker.contains("Verified"), "{asker}");
    wallet.page.screenshot("card-unconfirmed-words").unwrap();
}
