//! Issue 14, "Polyfill shipped": in a Chromium **without** the WebMCP switch the wallet and the
//! sites load the vendored `@mcp-b/webmcp-polyfill` 5.1.0 (and only then), say "WebMCP:
//! polyfilled", offer no `window.tacit`, and their tools are listed, called, and withdrawn on
//! revoke and on expiry through the polyfill's own API (`document.modelContext.getTools()` and
//! `executeTool(tool, jsonText)`), driven by an agent inside the page. With native WebMCP the
//! polyfill is never requested; with neither (the polyfill's URL blocked) `window.tacit` is
//! offered and the pill says so.
//!
//! These tests fail, never skip, when Chromium or the built sites are missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::Duration;

use serde_json::{Value, json};
use signer::{KeyStore, system_now};
use tacit_e2e::browser::InputAs;
use tacit_e2e::signer_proc::TestSigner;
use tacit_e2e::site_proc::TestSite;
use tacit_e2e::wallet::{PERSISTENT, WAIT, Wallet, error_code, housing_policy};
use tacit_e2e::{Browser, LaunchOptions, Page, StaticServer};

const HOUSING: &str = "http://127.0.0.1:8081";
const POLYFILL_URL: &str = "/vendor/webmcp-polyfill.js";
const PILL: &str = "document.getElementById('webmcp-pill')";
/// The page's redraw counter `#app[data-redraws]`.
const REDRAWS: &str = "Number(document.getElementById('app').dataset.redraws || 0)";

/// Opens the wallet at `/{query}` in `browser`, after `setup` (blocking URLs, scripts that run
/// first), and waits until the app shows. No DevTools `WebMCP` domain: it sees no polyfill.
fn open_wallet<'b>(
    browser: &'b Browser,
    server: &StaticServer,
    query: &str,
    setup: impl FnOnce(&Page<'b>),
) -> Page<'b> {
    let mut page = browser.new_page().unwrap();
    setup(&page);
    page.watch_csp().unwrap();
    page.navigate(&server.url(&format!("/{query}"))).unwrap();
    tacit_e2e::wallet::wait_app(&page);
    page
}

fn pill(page: &Page<'_>) -> (String, String) {
    let text = page.eval(&format!("{PILL}.textContent")).unwrap();
    let title = page.eval(&format!("{PILL}.title")).unwrap();
    (
        text.as_str().unwrap().to_owned(),
        title.as_str().unwrap().to_owned(),
    )
}

fn wait_pill(page: &Page<'_>, text: &str) {
    if let Err(e) = page.wait_for(&format!("{PILL}.textContent === {text:?}"), WAIT) {
        panic!(
            "the pill never said {text:?} (it says {:?}): {e}",
            pill(page)
        );
    }
}

/// The agent inside the page calls `name` through the polyfill: input as JSON text.
fn call(page: &Page<'_>, name: &str, input: Value) -> Value {
    page.page_execute(name, &input, InputAs::Text)
        .unwrap_or_else(|e| panic!("{name} threw through executeTool: {e}"))
}

/// `request_claims` through the polyfill; waits for the page to show the request. Its id.
fn request(page: &Page<'_>, nonce: &str) -> String {
    let out = call(page, "request_claims", housing_policy(HOUSING, nonce));
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["result"]["status"], "held", "{out}");
    let id = out["result"]["request_id"].as_str().unwrap().to_owned();
    page.wait_for(&format!("!!document.getElementById('req-{id}')"), WAIT)
        .unwrap();
    id
}

/// The person grants request `id` for `duration` (real clicks and the passphrase); the agent
/// polls `check_request` through the polyfill and waits until `getTools()` lists the new tools.
fn grant(wallet: &Wallet<'_>, id: &str, duration: &str) -> Vec<String> {
    wallet.front();
    wallet.page.select(&format!("#dur-{id}"), duration).unwrap();
    tacit_e2e::wallet::tick_all(&wallet.page, &format!("#req-{id}")).unwrap();
    wallet
        .page
        .click(&format!("[data-action=grant][data-id={id}]"))
        .unwrap();
    wallet.confirm_act();
    let deadline = std::time::Instant::now() + WAIT;
    let out = loop {
        let out = call(&wallet.page, "check_request", json!({ "request_id": id }));
        if out["result"]["status"] == "granted" {
            break out;
        }
        assert!(std::time::Instant::now() < deadline, "never granted: {out}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let names = tacit_e2e::wallet::granted_tools(&out);
    assert_eq!(names.len(), 2, "{out}");
    for name in &names {
        wallet.page.wait_page_tool(name, true, WAIT).unwrap();
    }
    names
}

#[test]
fn wallet_under_the_polyfill_lists_calls_and_withdraws_its_tools() {
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let browser = Browser::launch_with(LaunchOptions::without_webmcp()).unwrap();
    let page = open_wallet(&browser, &server, "?short_grants=1", |_| {});

    // The polyfill was loaded from this origin, by the page, and says so.
    assert!(page.requested(POLYFILL_URL).unwrap());
    assert_eq!(
        page.eval("globalThis.__tacitWebmcp").unwrap(),
        json!("polyfilled")
    );
    assert_eq!(
        page.eval("typeof WebMCPPolyfill.initializeWebMCPPolyfill")
            .unwrap(),
        json!("function")
    );
    wait_pill(&page, "WebMCP: polyfilled");
    let (_, title) = pill(&page);
    assert!(
        title.starts_with("WebMCP: polyfilled (@mcp-b/webmcp-polyfill 5.1.0)"),
        "{title}"
    );
    assert!(title.contains("consequentialHint"), "{title}");
    // The page says in words who can see the polyfill's tools, and who cannot.
    let reach = page
        .eval(
            "(() => { const n = document.getElementById('webmcp-reach'); \
               return n ? [n.hidden, n.textContent, n.getBoundingClientRect().height > 0] : null; })()",
        )
        .unwrap();
    assert_eq!(reach[0], false, "{reach}");
    assert_eq!(reach[2], true, "the note is not drawn: {reach}");
    let words = reach[1].as_str().unwrap();
    assert!(words.starts_with("WebMCP: polyfilled"), "{words}");
    assert!(
        words.contains("visible to scripts in this page only")
            && words.contains("not to browser agents over DevTools or to tacit-mcp"),
        "{words}"
    );
    assert!(
        title.contains("not to browser agents over DevTools"),
        "{title}"
    );

    // No window.tacit, and no script can put one there.
    assert_eq!(
        page.eval("typeof window.tacit").unwrap(),
        json!("undefined")
    );
    page.eval("try { window.tacit = { tools: () => [] }; } catch (e) {} 0")
        .unwrap();
    assert_eq!(
        page.eval("typeof window.tacit").unwrap(),
        json!("undefined")
    );

    // The persistent tools are in the polyfill's registry.
    assert_eq!(page.page_tool_names().unwrap(), PERSISTENT);
    // What the polyfill keeps of the annotations: not consequentialHint (draft_application
    // registers it), as the pill's title says.
    let tools = page.page_tools().unwrap();
    let draft = tools
        .iter()
        .find(|t| t["name"] == "draft_application")
        .unwrap();
    assert!(
        draft["annotations"].get("consequentialHint").is_none(),
        "{draft}"
    );
    let status = tools.iter().find(|t| t["name"] == "wallet_status").unwrap();
    assert_eq!(status["annotations"]["readOnlyHint"], true, "{status}");

    let wallet = Wallet::new(page);
    wallet.create_profile();

    // Granted: listed and answered through executeTool with JSON text.
    let id = request(&wallet.page, "p-1");
    let tools = grant(&wallet, &id, "3600000");
    let income = tools.iter().find(|t| t.contains("income_below")).unwrap();
    let out = call(&wallet.page, income, json!({}));
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["result"]["satisfied"], true, "{out}");
    assert!(out.get("isError").is_none(), "{out}");
    // The polyfill's executeTool resolves with the tool's own promise: the answer is out before
    // the page redraws for the call (what ui_live.rs measured through window.tacit.call, which
    // native WebMCP pages no longer offer).
    let js = format!(
        "(async () => {{ const ctx = document.modelContext; \
         const t = (await ctx.getTools()).find((t) => t.name === {income:?}); const out = []; \
         for (let i = 0; i < 5; i++) {{ await new Promise((r) => setTimeout(r, 30)); \
         const before = {REDRAWS}; const text = await ctx.executeTool(t, '{{}}'); \
         const at = {REDRAWS}; await new Promise((r) => setTimeout(r, 60)); \
         out.push({{ before, at, later: {REDRAWS}, ok: JSON.parse(text).ok }}); }} \
         return out; }})()"
    );
    let runs = wallet.page.eval(&js).unwrap();
    for run in runs.as_array().unwrap() {
        assert_eq!(run["ok"], true, "{run}");
        assert_eq!(run["before"], run["at"], "redrawn before the answer: {run}");
        assert!(
            run["later"].as_f64() > run["before"].as_f64(),
            "no redraw followed the call: {run}"
        );
    }
    // The nonce goes in and comes back out through the polyfill's text input.
    let out = call(&wallet.page, income, json!({ "nonce": "echo-me" }));
    assert_eq!(out["ok"], true, "{out}");
    assert!(out.to_string().contains("echo-me"), "{out}");
    // The polyfill's executeTool takes JSON text: an object is its own refusal (it cannot
    // parse it), not an answer.
    let err = wallet
        .page
        .page_execute(income, &json!({}), InputAs::Object)
        .unwrap_err()
        .to_string();
    assert!(err.contains("parse"), "{err}");
    // A bad input through the polyfill reaches the gate and is refused there, as a value.
    let out = call(&wallet.page, income, json!({ "nonce": 7 }));
    assert_eq!(error_code(&out), "invalid_input", "{out}");
    assert_eq!(out["isError"], true, "{out}");

    // Revoked: gone from the polyfill's list; a kept tool object and a call by name are refused.
    wallet.page.keep_page_tool(income, "revoked").unwrap();
    let grant_id = income.rsplit('.').next().unwrap();
    wallet.front();
    wallet
        .page
        .click(&format!("[data-action=revoke][data-id={grant_id}]"))
        .unwrap();
    wallet.page.wait_page_tool(income, false, WAIT).unwrap();
    assert!(!wallet.page.page_tool_names().unwrap().contains(income));
    let out = wallet
        .page
        .execute_kept("revoked", &json!({}), InputAs::Text)
        .unwrap();
    assert_eq!(out["isError"], true, "{out}");
    assert_eq!(error_code(&out), "grant_revoked", "{out}");
    assert!(out.get("result").is_none(), "{out}");
    let out = call(&wallet.page, income, json!({}));
    assert_eq!(error_code(&out), "grant_revoked", "{out}");
    // The other claim of that grant still answers.
    let district = tools.iter().find(|t| t.contains("resides_in")).unwrap();
    assert_eq!(call(&wallet.page, district, json!({}))["ok"], true);

    // Expired: a 2-second grant's tools leave the polyfill's list by themselves.
    let id = request(&wallet.page, "p-2");
    let short = grant(&wallet, &id, "2000");
    wallet.page.keep_page_tool(&short[0], "expired").unwrap();
    for name in &short {
        wallet
            .page
            .wait_page_tool(name, false, Duration::from_secs(15))
            .unwrap();
    }
    let out = wallet
        .page
        .execute_kept("expired", &json!({}), InputAs::Text)
        .unwrap();
    assert_eq!(out["isError"], true, "{out}");
    assert_eq!(error_code(&out), "grant_expired", "{out}");
    // Left: the persistent tools and the first grant's unrevoked claim.
    let mut left: Vec<String> = PERSISTENT.iter().map(|t| (*t).to_owned()).collect();
    left.push(district.clone());
    left.sort();
    assert_eq!(wallet.page.page_tool_names().unwrap(), left);
    wallet.assert_no_csp_violation();
    wallet.front();
    wallet.page.screenshot("polyfill-wallet").unwrap();
}

#[test]
fn a_site_under_the_polyfill_lists_and_answers_its_tools() {
    let wallet = tacit_e2e::serve_site("wallet").unwrap();
    let signer =
        TestSigner::start(KeyStore::make(system_now()).unwrap(), &[&wallet.origin()]).unwrap();
    let housing = TestSite::start("housing", &format!("{}/v1/keys", signer.url())).unwrap();
    let browser = Browser::launch_with(LaunchOptions::without_webmcp()).unwrap();
    let mut page = browser.new_page().unwrap();
    page.watch_csp().unwrap();
    page.navigate(&housing.url("/")).unwrap();
    page.wait_page_tool("housing_requirements", true, WAIT)
        .unwrap();
    assert!(page.requested(POLYFILL_URL).unwrap());
    assert_eq!(
        page.eval("globalThis.__tacitWebmcp").unwrap(),
        json!("polyfilled")
    );
    // The site's pill says where its tools are (tools::webmcp_note).
    let pill = format!(
        "{PILL}.textContent.startsWith('WebMCP: polyfilled (@mcp-b/webmcp-polyfill 5.1.0), ')"
    );
    if let Err(e) = page.wait_for(&pill, WAIT) {
        panic!("the site's pill: {:?}: {e}", self::pill(&page));
    }
    // And in words who can see them: scripts in this page only.
    let (text, _) = self::pill(&page);
    assert!(
        text.contains("visible to scripts in this page only")
            && text.contains("not to browser agents over DevTools or to tacit-mcp"),
        "{text}"
    );
    assert!(
        page.page_tool_names()
            .unwrap()
            .contains(&"housing_requirements".to_owned())
    );
    let out = page
        .page_execute("housing_requirements", &json!({}), InputAs::Text)
        .unwrap();
    assert_eq!(out["ok"], true, "{out}");
    assert!(out["result"]["nonce"].is_string(), "{out}");
    // The licence is served beside the polyfill.
    let licence = page
        .eval("fetch('/vendor/webmcp-polyfill.LICENSE').then((r) => r.text())")
        .unwrap();
    assert!(licence.as_str().unwrap().starts_with("MIT License"));
    assert_eq!(page.csp_violations().unwrap(), Vec::<String>::new());
    page.screenshot("polyfill-site").unwrap();
}

#[test]
fn with_native_webmcp_the_polyfill_is_not_loaded_and_window_tacit_is_absent() {
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let browser = Browser::launch().unwrap();
    let page = open_wallet(&browser, &server, "", |_| {});
    wait_pill(&page, "WebMCP: available");
    // Native tools are visible to browser agents: no polyfill note.
    assert_eq!(
        page.eval("(() => { const n = document.getElementById('webmcp-reach'); return !n || n.hidden; })()")
            .unwrap(),
        json!(true)
    );
    // The loader ran (it was requested) and left the polyfill alone.
    assert!(page.requested("/webmcp.js").unwrap());
    assert!(page.requested("/pkg/tacit_web_bg.wasm").unwrap());
    assert!(!page.requested(POLYFILL_URL).unwrap());
    assert_eq!(
        page.eval("typeof WebMCPPolyfill").unwrap(),
        json!("undefined")
    );
    assert_eq!(
        page.eval("globalThis.__tacitWebmcp").unwrap(),
        json!("native")
    );
    assert_eq!(
        page.eval("typeof window.tacit").unwrap(),
        json!("undefined")
    );
    // The tools are in the browser's own registry.
    assert_eq!(page.page_tool_names().unwrap(), PERSISTENT);

    // A page script that got there first and claims "polyfilled" changes nothing: the browser's
    // own getter decides.
    let page = open_wallet(&browser, &server, "", |page| {
        page.send(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": "Object.defineProperty(globalThis, '__tacitWebmcp', \
                               { value: 'polyfilled' });" }),
        )
        .unwrap();
    });
    wait_pill(&page, "WebMCP: available");
    assert!(!page.requested(POLYFILL_URL).unwrap());
    assert_eq!(
        page.eval("typeof window.tacit").unwrap(),
        json!("undefined")
    );

    // And a site page.
    let signer =
        TestSigner::start(KeyStore::make(system_now()).unwrap(), &[&server.origin()]).unwrap();
    let housing = TestSite::start("housing", &format!("{}/v1/keys", signer.url())).unwrap();
    let mut site = browser.new_page().unwrap();
    site.navigate(&housing.url("/")).unwrap();
    site.wait_page_tool("housing_requirements", true, WAIT)
        .unwrap();
    assert!(site.requested("/webmcp.js").unwrap());
    assert!(!site.requested(POLYFILL_URL).unwrap());
}

#[test]
fn with_neither_window_tacit_is_offered_and_the_pill_says_so() {
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let browser = Browser::launch_with(LaunchOptions::without_webmcp()).unwrap();
    let page = open_wallet(&browser, &server, "", |page| {
        page.block_urls(&["*webmcp-polyfill.js"]).unwrap();
    });
    wait_pill(&page, "WebMCP: absent");
    let (_, title) = pill(&page);
    assert!(title.contains("did not load"), "{title}");
    assert!(title.contains("window.tacit"), "{title}");
    assert_eq!(
        page.eval("typeof document.modelContext").unwrap(),
        json!("undefined")
    );
    assert_eq!(
        page.eval("globalThis.__tacitWebmcp").unwrap(),
        json!("polyfill-failed")
    );
    assert_eq!(page.eval("window.tacit.status()").unwrap(), json!("absent"));
    let names = tacit_e2e::wallet::fallback_tool_names(&page);
    assert_eq!(names, json!(PERSISTENT));
    let out =
        tacit_e2e::wallet::fallback_call(&page, "request_claims", &housing_policy(HOUSING, "n-1"));
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["result"]["status"], "held", "{out}");
}

#[test]
fn a_script_made_model_context_does_not_pass_for_native() {
    // Without the switch, a script that ran before the page's own defines a
    // `document.modelContext` and marks it "native": the loader leaves the polyfill out (there
    // is a context), and the page says "scripted", not "available".
    let fake = "(() => { const tools = []; const ctx = { \
                registerTool(t) { tools.push(t); return Promise.resolve(); }, \
                getTools() { return Promise.resolve(tools.map((t) => ({ name: t.name }))); } }; \
                Object.defineProperty(Document.prototype, 'modelContext', \
                { configurable: true, get() { return ctx; } }); \
                Object.defineProperty(globalThis, '__tacitWebmcp', { value: 'native' }); })();";
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let browser = Browser::launch_with(LaunchOptions::without_webmcp()).unwrap();
    let page = open_wallet(&browser, &server, "", |page| {
        page.send(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": fake }),
        )
        .unwrap();
    });
    wait_pill(&page, "WebMCP: scripted");
    assert!(!page.requested(POLYFILL_URL).unwrap());
    assert_eq!(
        page.eval("typeof window.tacit").unwrap(),
        json!("undefined")
    );
    assert_eq!(page.page_tool_names().unwrap(), PERSISTENT);
}
