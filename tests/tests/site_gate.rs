//! Issue 14, "a reusable gate" on a relying site: the housing page gates its own submit tool
//! with tool-gate. The tool is absent on load, present once the page handed out a requirements
//! nonce, gone after an accepted submission and after the nonce's expiry; a tool object an agent
//! kept past that gets tool-gate's refusal envelope (`isError: true`, `grant_revoked` /
//! `grant_expired`), never an answer. The server stays the judge: a live tool does not make a
//! receipt for a nonce the site never issued pass.
//!
//! Real Chromium through WebMCP (the DevTools domain for the agent's calls, the page's own
//! `executeTool` for the kept object), the real site server with a short `nonce_lifetime_ms`, a
//! real signer whose key the test holds (so it can sign the receipt the wallet would have).
//! Fails, never skips, when Chromium, the WebMCP switch or the built site is missing (run
//! `cargo xtask build-web housing` first).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::Duration;

use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use signer::{KeyStore, system_now};
use tacit_e2e::signer_proc::TestSigner;
use tacit_e2e::site_proc::TestSite;
use tacit_e2e::wallet::{call, keep_tool, tool_names};
use tacit_e2e::{Browser, Page};
use wallet_core::receipt::sign;
use wallet_core::{
    Claim, ComparisonLog, GrantId, Nonce, Origin, Outcome, ReceiptPayload, SessionId, ToolName,
};

const WAIT: Duration = Duration::from_secs(20);
const REQUIREMENTS: &str = "housing_requirements";
const SUBMIT: &str = "housing_submit_application";
/// The site's nonces stay open this long.
const NONCE_MS: i64 = 6_000;
const DAY: i64 = 24 * 60 * 60 * 1000;

fn key() -> SigningKey {
    SigningKey::from_bytes(&[7; 32])
}

/// The receipt the wallet would release for `requirements`: every claim satisfied, for its
/// origin and nonce, signed by the signer's own key.
fn receipt_for(origin: &str, nonce: &str, claims: &Value) -> Value {
    let origin = Origin::parse(origin).unwrap();
    let now = system_now();
    let mut log = ComparisonLog::new();
    for (i, claim) in claims.as_array().unwrap().iter().enumerate() {
        let claim: Claim = serde_json::from_value(claim.clone()).unwrap();
        log.append(
            now.plus_millis(-1_000),
            origin.clone(),
            ToolName::parse(&format!("claim.{}.t{i}", claim.kind())).unwrap(),
            claim,
            Outcome::Satisfied,
            GrantId::parse(&format!("t{i}")).unwrap(),
            None,
        );
    }
    let payload = ReceiptPayload::new(
        SessionId::parse("s-gate").unwrap(),
        origin,
        Nonce::parse(nonce).unwrap(),
        now.plus_millis(-1_000),
        now.plus_millis(10 * 60_000),
        &log,
    )
    .unwrap();
    serde_json::to_value(sign(payload, &key(), now)).unwrap()
}

/// The in-page agent calls the kept object with `input`; it must resolve to an envelope.
fn call_kept(page: &Page<'_>, slot: &str, input: &Value) -> Value {
    let js = format!(
        "(async () => {{ try {{ return {{ resolved: await document.modelContext.executeTool(\
         window.__kept[{slot:?}], {input}) }}; }} catch (e) {{ return {{ threw: String(e) }}; }} \
         }})()"
    );
    let out = page.eval(&js).unwrap();
    let Some(text) = out["resolved"].as_str() else {
        panic!("executeTool on the kept {slot} handle threw: {out}");
    };
    serde_json::from_str(text).unwrap()
}

fn refused_with(out: &Value, code: &str) {
    assert_eq!(out["ok"], false, "{out}");
    assert_eq!(out["isError"], true, "{out}");
    assert_eq!(out["error"]["code"], code, "{out}");
    assert!(out.get("result").is_none(), "{out}");
}

#[test]
fn the_submit_tool_exists_only_while_a_nonce_the_page_obtained_is_open() {
    let signer = TestSigner::start(
        KeyStore::from_signing_key(key(), system_now().plus_millis(-DAY)),
        &[],
    )
    .unwrap();
    let keys_url = format!("{}/v1/keys", signer.url());
    let site = TestSite::start_with_nonce_lifetime("housing", &keys_url, NONCE_MS).unwrap();
    let browser = Browser::launch().unwrap_or_else(|e| panic!("{e}"));
    let mut page = browser.new_page().unwrap();
    page.enable_webmcp().unwrap();
    page.watch_csp().unwrap();
    page.navigate(&site.url("/")).unwrap();
    page.require_webmcp().unwrap();
    page.wait_for("!document.getElementById('app').hidden", WAIT)
        .unwrap();
    page.wait_tool(REQUIREMENTS, WAIT).unwrap();

    // On load: the requirements tool only, and the pill counts one.
    assert_eq!(tool_names(&mut page), [REQUIREMENTS]);
    page.wait_for(
        "document.getElementById('webmcp-pill').textContent.includes('1 tool')",
        WAIT,
    )
    .unwrap();

    // After the requirements call: the submit tool.
    let requirements = call(&mut page, REQUIREMENTS, json!({}));
    assert_eq!(requirements["ok"], true, "{requirements}");
    let policy = requirements["result"].clone();
    page.wait_tool(SUBMIT, WAIT).unwrap();
    assert_eq!(tool_names(&mut page), [REQUIREMENTS, SUBMIT]);
    keep_tool(&page, SUBMIT, "accepted");

    // The server stays the judge: a live tool does not make a receipt for a nonce the site
    // never issued pass, and that refusal leaves the tool (the page's nonce is still open).
    let stranger = receipt_for(
        policy["origin"].as_str().unwrap(),
        "00000000000000000000000000000000",
        &policy["claims"],
    );
    let out = call(&mut page, SUBMIT, json!({ "receipt": stranger }));
    refused_with(&out, "unknown_nonce");
    assert_eq!(tool_names(&mut page), [REQUIREMENTS, SUBMIT]);

    // Input nested too deep is refused by the page for its depth, in the words every door uses
    // (33 levels: one past the limit; 200: past serde_json's own).
    for levels in [33, 200] {
        let mut deep = json!(1);
        for _ in 0..levels {
            deep = json!([deep]);
        }
        for tool in [REQUIREMENTS, SUBMIT] {
            let out = call(&mut page, tool, json!({ "receipt": deep }));
            refused_with(&out, "invalid_input");
            let message = out["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("nested deeper than 32 levels"),
                "{tool} at {levels}: {message}"
            );
        }
    }
    assert_eq!(tool_names(&mut page), [REQUIREMENTS, SUBMIT]);

    // An accepted submission spends the nonce: the tool leaves, and the kept object is refused
    // by the page's gate with tool-gate's code, without reaching the server.
    let receipt = receipt_for(
        policy["origin"].as_str().unwrap(),
        policy["nonce"].as_str().unwrap(),
        &policy["claims"],
    );
    let out = call(&mut page, SUBMIT, json!({ "receipt": receipt }));
    assert_eq!(out["result"]["accepted"], true, "{out}");
    page.wait_tool_gone(SUBMIT, WAIT).unwrap();
    assert_eq!(tool_names(&mut page), [REQUIREMENTS]);
    let stale = call_kept(&page, "accepted", &json!({ "receipt": receipt }));
    refused_with(&stale, "grant_revoked");

    // A new nonce brings it back; left alone, it leaves when that nonce lapses.
    let again = call(&mut page, REQUIREMENTS, json!({}));
    assert_eq!(again["ok"], true, "{again}");
    assert_ne!(again["result"]["nonce"], policy["nonce"]);
    let issued = std::time::Instant::now();
    page.wait_tool(SUBMIT, WAIT).unwrap();
    keep_tool(&page, SUBMIT, "lapsed");
    page.wait_tool_gone(SUBMIT, Duration::from_secs(20))
        .unwrap();
    let open_for = issued.elapsed();
    assert!(
        open_for >= Duration::from_millis(NONCE_MS as u64 - 1_500),
        "the tool left after {open_for:?}, before its nonce lapsed"
    );
    let stale = call_kept(&page, "lapsed", &json!({ "receipt": receipt }));
    refused_with(&stale, "grant_expired");
    assert_eq!(tool_names(&mut page), [REQUIREMENTS]);
    // Through the DevTools domain the tool is simply gone.
    assert!(page.call_tool(SUBMIT, json!({})).is_err());

    // The page said what happened, and nothing threw or was blocked.
    page.wait_for(
        "document.getElementById('webmcp-pill').textContent.includes('1 tool')",
        WAIT,
    )
    .unwrap();
    assert_eq!(page.csp_violations().unwrap(), Vec::<String>::new());
    let console = page.console().unwrap();
    let bad: Vec<&String> = console
        .iter()
        .filter(|l| l.starts_with("uncaught") || l.starts_with("error"))
        .collect();
    assert!(bad.is_empty(), "console: {console:#?}");
}
