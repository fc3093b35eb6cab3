//! Issue 30, item 8: the relying sites' pages (housing and pharmacy) as a person reads them, in
//! every state — before anything is asked, while the wallet is asked, accepted, refused — at the
//! desktop size (1280×900) and on a phone (390×844), in real Chromium.
//!
//! In each state and at each size:
//! - the page fits: `document.documentElement.scrollWidth <= innerWidth`;
//! - no rendered element holding a sentence (four words or more of its own text) is narrower
//!   than 120 px (no one-word-per-line columns);
//! - what the person reads (`innerText`, in which a closed `<details>` is not rendered) has no
//!   tool name, nonce, key id, reason code, API path or "WebMCP"; those are inside the
//!   "For developers" disclosure, which is closed, and readable once it is opened;
//! - no sentence promises to contact the person (write, email, call, post) unless it says it
//!   cannot: the sites ask for no name and no address;
//! - the accepted and refused status names the site and says what happens next;
//! - axe-core (pinned in `interop/`) reports no violation.
//!
//! Screenshots: `target/screenshots/site-<site>-<state>-{desktop,phone}.png`, and the opened
//! disclosure as `site-<site>-<state>-developer-desktop.png`.
//!
//! The accepted receipt is signed by the test with the signer's own published key (as in
//! `flows.rs`, whose tests reach the same states through the wallet page); the site's server
//! checks it in full. The refused one is signed the same way and answers the first question
//! "not satisfied", so the site refuses it on the merits (`claim_not_satisfied`).
//!
//! These tests fail, never skip, when Chromium, the WebMCP switch, a built site (run
//! `cargo xtask build-web`), Node or axe-core is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use signer::{KeyStore, system_now};
use tacit_e2e::signer_proc::TestSigner;
use tacit_e2e::site_proc::TestSite;
use tacit_e2e::site_tab::{HOUSING_TOOLS, PHARMACY_TOOLS, SiteTab};
use tacit_e2e::wallet::{error_code, wait_text};
use tacit_e2e::{Browser, DESKTOP, PHONE, Page, Viewport};
use wallet_core::receipt::sign;
use wallet_core::{
    Claim, ComparisonLog, GrantId, Nonce, Origin, Outcome, ReceiptPayload, SessionId, ToolName,
};

const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;

/// The narrowest a box holding a sentence may be.
const MIN_TEXT_WIDTH: f64 = 120.0;

fn key() -> SigningKey {
    SigningKey::from_bytes(&[7; 32])
}

/// A receipt payload for `audience` and `nonce` with one answer per claim, `outcomes[i]` for
/// claim `i`.
fn payload(audience: &str, nonce: &str, claims: &Value, outcomes: &[Outcome]) -> ReceiptPayload {
    let origin = Origin::parse(audience).unwrap();
    let issued = system_now().plus_millis(-MINUTE);
    let mut log = ComparisonLog::new();
    for (i, (claim, outcome)) in claims.as_array().unwrap().iter().zip(outcomes).enumerate() {
        let claim: Claim = serde_json::from_value(claim.clone()).unwrap();
        log.append(
            issued.plus_millis(-1_000),
            origin.clone(),
            ToolName::parse(&format!("claim.{}.t{i}", claim.kind())).unwrap(),
            claim,
            *outcome,
            GrantId::parse(&format!("t{i}")).unwrap(),
            None,
        );
    }
    ReceiptPayload::new(
        SessionId::parse("s-pages").unwrap(),
        origin,
        Nonce::parse(nonce).unwrap(),
        issued,
        issued.plus_millis(10 * MINUTE),
        &log,
    )
    .unwrap()
}

fn signed(payload: ReceiptPayload) -> Value {
    serde_json::to_value(sign(payload, &key(), system_now())).unwrap()
}

/// What the person reads that is for developers: one line per finding.
fn developer_text_shown(page: &Page<'_>) -> Vec<String> {
    page.eval(
        "(() => { const t = document.body.innerText; const found = []; \
           for (const [what, re] of [ \
               ['a tool name', /\\b(housing_requirements|housing_submit_application|pharmacy_requirements|pharmacy_checkout|request_claims)\\b/], \
               ['a nonce or key id', /\\b[0-9a-f]{16,}\\b/i], \
               ['a developer word', /\\b(nonce|signer key|key id|reason code|WebMCP|api\\/|_nonce|claim_not_satisfied)\\b/i]]) { \
             const m = t.match(re); if (m) found.push(what + ': ' + JSON.stringify(m[0])); } \
           return found; })()",
    )
    .unwrap()
    .as_array()
    .unwrap()
    .iter()
    .map(|v| v.as_str().unwrap().to_owned())
    .collect()
}

/// Rendered boxes narrower than [`MIN_TEXT_WIDTH`] holding four words or more of their own text,
/// and the narrowest width of any such box.
fn narrow_text(page: &Page<'_>) -> (Vec<String>, f64) {
    let out = page
        .eval(&format!(
            "(() => {{ const bad = []; let narrowest = Infinity; \
               for (const el of document.body.querySelectorAll('*')) {{ \
                 const own = [...el.childNodes].filter((n) => n.nodeType === 3) \
                   .map((n) => n.textContent).join(' ').trim(); \
                 if (own.split(/\\s+/).length < 4) continue; \
                 const r = el.getBoundingClientRect(); \
                 if (r.width === 0 && r.height === 0) continue; \
                 narrowest = Math.min(narrowest, r.width); \
                 if (r.width < {MIN_TEXT_WIDTH}) bad.push(el.tagName + '#' + el.id + ' ' + \
                   Math.round(r.width) + ' px: ' + own.slice(0, 40)); }} \
               return [bad, narrowest]; }})()"
        ))
        .unwrap();
    let bad = out[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    (bad, out[1].as_f64().unwrap_or(f64::INFINITY))
}

/// Sentences of what the person reads that promise to contact them without saying they cannot.
fn contact_promises(page: &Page<'_>) -> Vec<String> {
    page.eval(
        "(() => document.body.innerText.split(/(?<=[.!?:])\\s+|\\n+/) \
           .filter((s) => /\\b(write to you|writes to you|contact you|e-?mail you|call you|post you|send you a letter|letter to you)\\b/i.test(s)) \
           .filter((s) => !/\\b(cannot|can't|no way|never|not)\\b/i.test(s)))()",
    )
    .unwrap()
    .as_array()
    .unwrap()
    .iter()
    .map(|v| v.as_str().unwrap().to_owned())
    .collect()
}

fn sizes() -> [(&'static str, Viewport); 2] {
    [("desktop", DESKTOP), ("phone", PHONE)]
}

/// Everything this test holds of one state of one site's page, at both sizes; then the
/// disclosure opened (it must show `developer_needles`) and closed again.
fn check_state(
    tab: &SiteTab<'_>,
    site: &str,
    state: &str,
    developer_needles: &[&str],
    axe: &str,
    figures: &mut Vec<String>,
) {
    let page = &tab.page;
    for (size, viewport) in sizes() {
        let where_ = format!("{site} {state} {size}");
        page.screenshot_at(&format!("site-{site}-{state}-{size}"), viewport)
            .unwrap();
        // A phone browser widens its layout viewport to content that overflows (innerWidth
        // grows with it), so the page is measured against the screen's width.
        let widths = page
            .eval("[document.documentElement.scrollWidth, window.innerWidth]")
            .unwrap();
        let (scroll, inner) = (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap());
        let screen = u64::from(viewport.width);
        assert!(
            scroll <= screen && inner == screen,
            "{where_}: the page is {scroll} px wide (layout viewport {inner} px) on a {screen} px screen"
        );
        let (narrow, narrowest) = narrow_text(page);
        assert!(
            narrow.is_empty(),
            "{where_}: text in narrow boxes: {narrow:#?}"
        );
        figures.push(format!(
            "{where_}: scrollWidth {scroll}, innerWidth {inner}, screen {screen}; narrowest sentence box {narrowest:.0} px"
        ));
        assert_eq!(
            page.eval("document.getElementById('developer').open")
                .unwrap(),
            json!(false),
            "{where_}: the disclosure is open"
        );
        let shown = developer_text_shown(page);
        assert!(shown.is_empty(), "{where_}: the person reads {shown:?}");
        let promises = contact_promises(page);
        assert!(promises.is_empty(), "{where_}: promises {promises:?}");
        let violations = tacit_e2e::axe::violations(page, axe);
        assert!(violations.is_empty(), "{where_}: axe: {violations:#?}");
    }

    // Opened (by a real click on its summary), it holds the developer details.
    page.click("#developer > summary").unwrap();
    page.wait_for(
        "document.getElementById('developer').open",
        tacit_e2e::wallet::WAIT,
    )
    .unwrap();
    let inside = page
        .eval("document.getElementById('developer').innerText")
        .unwrap();
    let inside = inside.as_str().unwrap();
    for needle in developer_needles {
        assert!(
            inside.contains(needle),
            "{site} {state}: the disclosure lacks {needle:?}: {inside}"
        );
    }
    page.screenshot_at(&format!("site-{site}-{state}-developer-desktop"), DESKTOP)
        .unwrap();
    let widths = page
        .eval("[document.documentElement.scrollWidth, window.innerWidth]")
        .unwrap();
    assert!(
        widths[0].as_u64() <= Some(u64::from(DESKTOP.width)),
        "{site} {state}: the open disclosure overflows: {widths}"
    );
    page.set_viewport(PHONE).unwrap();
    let widths = page
        .eval("[document.documentElement.scrollWidth, window.innerWidth]")
        .unwrap();
    assert!(
        widths[0].as_u64() <= Some(u64::from(PHONE.width)) && widths[1] == json!(PHONE.width),
        "{site} {state}: the open disclosure overflows a phone: {widths}"
    );
    page.click("#developer > summary").unwrap();
    page.wait_for(
        "!document.getElementById('developer').open",
        tacit_e2e::wallet::WAIT,
    )
    .unwrap();
}

/// The status names the site, and says what happens next, visibly.
fn status_names_site_and_next(tab: &SiteTab<'_>, name: &str) {
    wait_text(&tab.page, "#status-title", name);
    let next = tab
        .page
        .eval("document.getElementById('status-next').innerText")
        .unwrap();
    assert!(
        next.as_str().unwrap().starts_with("What happens next:"),
        "{next}"
    );
}

/// One relying site: its short name, the name it shows, its two tools and a phrase of its
/// acceptance.
struct Case {
    site: &'static str,
    name: &'static str,
    tools: (&'static str, &'static str),
    accepted_needle: &'static str,
}

fn walk(browser: &Browser, server: &TestSite, case: &Case, axe: &str, figures: &mut Vec<String>) {
    let Case {
        site,
        name,
        tools,
        accepted_needle,
    } = *case;
    let mut tab = SiteTab::open(browser, server, "", tools);

    // Before: nothing asked yet.
    wait_text(&tab.page, "#status-title", "Waiting for your agent");
    check_state(
        &tab,
        site,
        "before",
        &[tools.0, tools.1, "Nothing yet"],
        axe,
        figures,
    );

    // While waiting: the agent asked for the requirements; the wallet is asking the person.
    let policy = tab.requirements();
    let nonce = policy["nonce"].as_str().unwrap().to_owned();
    wait_text(&tab.page, "#status-title", "Your agent asked what we need");
    check_state(&tab, site, "waiting", &[&nonce, tools.0], axe, figures);

    // Accepted: every answer satisfied, signed with the signer's published key.
    let claims = policy["claims"].clone();
    let all = vec![Outcome::Satisfied; claims.as_array().unwrap().len()];
    let receipt = signed(payload(&tab.origin, &nonce, &claims, &all));
    let out = tab.submit(&receipt);
    assert_eq!(out["result"]["accepted"], true, "{out}");
    let key_id = out["result"]["key_id"].as_str().unwrap().to_owned();
    wait_text(&tab.page, "#status", accepted_needle);
    status_names_site_and_next(&tab, &format!("Accepted by {name}"));
    check_state(
        &tab,
        site,
        "accepted",
        &[&nonce, &key_id, tools.1],
        axe,
        figures,
    );

    // Refused: a fresh request whose first answer is "not satisfied".
    let fresh = tab.requirements()["nonce"].as_str().unwrap().to_owned();
    let mut outcomes = all.clone();
    outcomes[0] = Outcome::NotSatisfied;
    let out = tab.submit(&signed(payload(&tab.origin, &fresh, &claims, &outcomes)));
    assert_eq!(error_code(&out), "claim_not_satisfied", "{out}");
    wait_text(&tab.page, "#status", "Not shown:");
    status_names_site_and_next(&tab, &format!("Refused by {name}"));
    check_state(
        &tab,
        site,
        "refused",
        &["Reason code: claim_not_satisfied", tools.1],
        axe,
        figures,
    );

    // The spent receipt again: refused, with its code for developers only.
    let out = tab.submit(&receipt);
    assert_eq!(error_code(&out), "replayed_nonce", "{out}");
    wait_text(&tab.page, "#status", "already used once");
    status_names_site_and_next(&tab, &format!("Refused by {name}"));
    check_state(
        &tab,
        site,
        "refused-replay",
        &["Reason code: replayed_nonce"],
        axe,
        figures,
    );
    tab.assert_clean();
}

#[test]
fn the_sites_pages_fit_a_phone_keep_developer_details_closed_and_promise_nothing_they_contradict() {
    let _serial = tacit_e2e::serial();
    let axe = tacit_e2e::axe::source();
    let signer = TestSigner::start(
        KeyStore::from_signing_key(key(), system_now().plus_millis(-24 * HOUR)),
        &[],
    )
    .unwrap();
    let keys_url = format!("{}/v1/keys", signer.url());
    let housing = TestSite::start("housing", &keys_url).unwrap();
    let pharmacy = TestSite::start("pharmacy", &keys_url).unwrap();
    let browser = Browser::launch().unwrap_or_else(|e| panic!("{e}"));
    let mut figures = Vec::new();
    let housing_case = Case {
        site: "housing",
        name: "City Housing Programme",
        tools: HOUSING_TOOLS,
        accepted_needle: "eligible for subsidised housing",
    };
    let pharmacy_case = Case {
        site: "pharmacy",
        name: "Kronwald Apotheke",
        tools: PHARMACY_TOOLS,
        accepted_needle: "Dolorex",
    };
    walk(&browser, &housing, &housing_case, &axe, &mut figures);
    walk(&browser, &pharmacy, &pharmacy_case, &axe, &mut figures);
    for line in &figures {
        println!("{line}");
    }
}
