//! Issue 14: the `tool-gate-js` package lets any WebMCP page gate its own tools. Drives the
//! example page (`examples/gate-page`, built by `cargo xtask build-gate-js`, which this test
//! runs) in headless Chromium with WebMCP, the way an agent sees it, and compiles the
//! generated `.d.ts` with the pinned TypeScript.
//!
//! These tests fail, never skip, when Chromium, the WebMCP switch, Node or the build is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

#[path = "../../interop/node.rs"]
#[allow(dead_code)]
mod node;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tacit_e2e::{Browser, Page, StaticServer, ToolStatus};

const TOOL: &str = "add_to_cart";
const WAIT: Duration = Duration::from_secs(15);

/// `cargo xtask build-gate-js`, once per test binary (the tests run on parallel threads).
static BUILT: Mutex<Option<Result<(), String>>> = Mutex::new(None);

fn build() -> PathBuf {
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    let result = built.get_or_insert_with(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let out = Command::new(cargo)
            .args(["xtask", "build-gate-js"])
            .current_dir(tacit_e2e::workspace_root())
            .env("CARGO_TARGET_DIR", tacit_e2e::target_dir())
            .output()
            .map_err(|e| format!("could not run cargo xtask build-gate-js: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "cargo xtask build-gate-js failed:\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    tacit_e2e::site_dir("gate-example").unwrap()
}

fn serve() -> StaticServer {
    build();
    tacit_e2e::serve_site("gate-example").unwrap()
}

/// Opens the shop with WebMCP on and waits until the page is ready. An agent that keeps every
/// tool object the page registers (as an in-page agent may) is installed before any grant:
/// `window.__kept[name]` is the last registered object of that name.
fn open<'b>(browser: &'b Browser, server: &StaticServer, query: &str) -> Page<'b> {
    let mut page = browser.new_page().unwrap();
    page.enable_webmcp().unwrap();
    page.watch_csp().unwrap();
    page.navigate(&server.url(&format!("/{query}"))).unwrap();
    page.require_webmcp().unwrap();
    let ready = page.wait_for("document.body.dataset.ready", WAIT).unwrap();
    assert_eq!(ready, "1", "the page did not start");
    page.eval(
        "(() => { window.__kept = {}; const ctx = document.modelContext; \
         const register = ctx.registerTool.bind(ctx); \
         ctx.registerTool = (tool, options) => { window.__kept[tool.name] = tool; \
         return register(tool, options); }; return true; })()",
    )
    .unwrap();
    page
}

/// The kept tool object's `execute`, called the way the browser calls it. It must return a
/// promise that fulfils: a throw or a rejection is a defect.
fn call_kept(page: &Page<'_>, name: &str, input: &str) -> Value {
    let js = format!(
        "(async () => {{ let p; try {{ p = window.__kept[{name:?}].execute({input}, {{}}); }} \
         catch (e) {{ return {{ threw: String(e) }}; }} \
         if (!(p instanceof Promise)) return {{ notPromise: true }}; \
         try {{ return {{ resolved: await p }}; }} catch (e) {{ return {{ rejected: String(e) }}; }} }})()"
    );
    let out = page.eval(&js).unwrap();
    match out.get("resolved") {
        Some(value) => value.clone(),
        None => panic!("execute of the kept {name} did not resolve: {out}"),
    }
}

fn code(out: &Value) -> &str {
    assert_eq!(out["ok"], false, "{out}");
    assert_eq!(out["isError"], true, "{out}");
    assert!(out.get("result").is_none(), "{out}");
    out["error"]["code"].as_str().unwrap_or_default()
}

fn cart(page: &Page<'_>) -> Vec<String> {
    let out = page
        .eval("[...document.querySelectorAll('#cart li:not(.empty)')].map(li => li.textContent)")
        .unwrap();
    serde_json::from_value(out).unwrap()
}

/// The reasons of the removed events the page showed, in order.
fn removed_reasons(page: &Page<'_>) -> Vec<String> {
    let out = page
        .eval("[...document.querySelectorAll('#events li[data-kind=removed]')].map(li => li.dataset.reason)")
        .unwrap();
    serde_json::from_value(out).unwrap()
}

fn listed(page: &mut Page<'_>, name: &str) -> bool {
    page.tools().unwrap().iter().any(|t| t.name == name)
}

/// Calls through the browser (`WebMCP.invokeTool`); a withdrawn tool must not be answered.
fn assert_not_answered(page: &mut Page<'_>, name: &str) {
    match page.call_tool(name, json!({ "item": "milk" })) {
        Err(e) => assert!(e.to_string().contains("Tool not found"), "{e}"),
        Ok(response) => panic!("a withdrawn {name} was answered: {response:?}"),
    }
}

#[test]
fn a_click_grants_the_tool_and_revoke_and_the_last_use_withdraw_it() {
    let server = serve();
    let browser = Browser::launch().unwrap();
    let mut page = open(&browser, &server, "");

    // Nothing is offered on load.
    std::thread::sleep(Duration::from_millis(300));
    assert!(page.tools().unwrap().is_empty(), "{:?}", page.tools());

    // The person's click offers it; the agent sees the page's definition and calls it.
    page.click("[data-action=grant-minute]").unwrap();
    let tool = page.wait_tool(TOOL, WAIT).unwrap();
    assert!(tool.description.contains("corner shop"), "{tool:?}");
    assert_eq!(tool.input_schema["required"], json!(["item"]));
    let answer = page
        .call_tool(TOOL, json!({ "item": "apples", "quantity": 2 }))
        .unwrap();
    assert_eq!(answer.status, ToolStatus::Completed, "{answer:?}");
    assert_eq!(answer.output["ok"], true, "{answer:?}");
    assert_eq!(
        answer.output["result"]["added"],
        json!({ "item": "apples", "quantity": 2 })
    );
    assert_eq!(cart(&page), ["2 × apples"]);
    let added = page
        .eval("document.querySelectorAll('#events li[data-kind=added]').length")
        .unwrap();
    assert_eq!(added, 1, "the page did not show the added event");
    page.screenshot("gate-page-granted").unwrap();
    let grants = page.eval("document.querySelector('#grants li[data-tool]')?.textContent ?? ''");
    let grants = grants.unwrap();
    assert!(
        grants.as_str().unwrap().contains("s left"),
        "no countdown: {grants}"
    );

    // Too deep an input is refused for its depth, and the page's execute does not run.
    let mut deep = json!(1);
    for _ in 0..40 {
        deep = json!([deep]);
    }
    let refused = page
        .call_tool(TOOL, json!({ "item": "apples", "x": deep }))
        .unwrap();
    assert_eq!(refused.status, ToolStatus::Completed, "{refused:?}");
    assert_eq!(code(&refused.output), "invalid_input");
    let message = refused.output["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("nested deeper than 32 levels"),
        "{message}"
    );
    // The same input as JSON text (what polyfills pass) is read the same way.
    let as_text = call_kept(&page, TOOL, "JSON.stringify({ item: 'bread' })");
    assert_eq!(as_text["ok"], true, "{as_text}");
    assert_eq!(cart(&page), ["2 × apples", "1 × bread"]);

    // Revoke by click: gone from the agent's list, the event says why, a stale call is refused.
    page.click("[data-action=revoke]").unwrap();
    page.wait_tool_gone(TOOL, WAIT).unwrap();
    assert_eq!(removed_reasons(&page), ["revoked"]);
    assert_not_answered(&mut page, TOOL);
    let stale = call_kept(&page, TOOL, "{ item: 'milk' }");
    assert_eq!(code(&stale), "grant_revoked", "{stale}");
    assert_eq!(cart(&page), ["2 × apples", "1 × bread"]);
    page.eval("window.__revoked = window.__kept[\"add_to_cart\"]; true")
        .unwrap();

    // One use: the first call is answered, then the tool is gone and a kept handle is refused.
    page.click("[data-action=grant-once]").unwrap();
    page.wait_tool(TOOL, WAIT).unwrap();
    // A handle from the revoked grant does not reach the new one.
    let old = page
        .eval("(async () => await window.__revoked.execute({ item: 'milk' }, {}))()")
        .unwrap();
    assert_eq!(code(&old), "grant_revoked", "{old}");
    let first = page.call_tool(TOOL, json!({ "item": "coffee" })).unwrap();
    assert_eq!(first.output["ok"], true, "{first:?}");
    page.wait_tool_gone(TOOL, WAIT).unwrap();
    assert_not_answered(&mut page, TOOL);
    let second = call_kept(&page, TOOL, "{ item: 'milk' }");
    assert_eq!(code(&second), "grant_spent", "{second}");
    assert_eq!(cart(&page), ["2 × apples", "1 × bread", "1 × coffee"]);
    assert_eq!(removed_reasons(&page), ["revoked", "spent"]);
    assert!(
        page.csp_violations().unwrap().is_empty(),
        "{:?}",
        page.csp_violations()
    );
}

/// The agent keeps the object `getTools()` lists as `name` now (what an outside agent holds), as
/// `window.__listed[slot]`.
fn keep_listed(page: &Page<'_>, name: &str, slot: &str) {
    let js = format!(
        "(async () => {{ const t = (await document.modelContext.getTools()).find(t => \
         t.name === {name:?}); if (!t) return false; window.__listed = window.__listed || {{}}; \
         window.__listed[{slot:?}] = t; return true; }})()"
    );
    assert_eq!(page.eval(&js).unwrap(), true, "{name} not in getTools()");
}

/// `document.modelContext.executeTool` on the kept `getTools()` object: `Ok` with the answer's
/// JSON, or `Err` with the rejection.
fn execute_listed(page: &Page<'_>, slot: &str, input: &str) -> Result<Value, String> {
    let js = format!(
        "(async () => {{ try {{ return {{ resolved: await document.modelContext.executeTool(\
         window.__listed[{slot:?}], {input}) }}; }} \
         catch (e) {{ return {{ rejected: `${{e?.name}}: ${{e?.message}}` }}; }} }})()"
    );
    let out = page.eval(&js).unwrap();
    match out["resolved"].as_str() {
        Some(text) => Ok(serde_json::from_str(text).unwrap()),
        None => Err(out.to_string()),
    }
}

/// What an outside agent holds is the object from `getTools()`: after revoke, expiry and the
/// last use, `executeTool` on it gets the gate's refusal envelope, as the wallet's tools do,
/// never the browser's bare `UnknownError`.
#[test]
fn a_tool_kept_from_get_tools_is_refused_through_execute_tool_after_revoke_expiry_and_last_use() {
    let server = serve();
    let browser = Browser::launch().unwrap();
    let mut page = open(&browser, &server, "");
    let refused = |page: &Page<'_>, slot: &str| -> Value {
        execute_listed(page, slot, "{ item: 'milk' }").unwrap_or_else(|rejected| {
            panic!("executeTool on the {slot} getTools() object was rejected: {rejected}")
        })
    };

    // Live: the object from getTools() reaches the page's execute.
    page.click("[data-action=grant-minute]").unwrap();
    page.wait_tool(TOOL, WAIT).unwrap();
    keep_listed(&page, TOOL, "revoked");
    let live = execute_listed(&page, "revoked", "{ item: 'apples' }").unwrap();
    assert_eq!(live["ok"], true, "{live}");
    assert_eq!(cart(&page), ["1 × apples"]);

    // After revoke.
    page.click("[data-action=revoke]").unwrap();
    page.wait_tool_gone(TOOL, WAIT).unwrap();
    let out = refused(&page, "revoked");
    assert_eq!(code(&out), "grant_revoked", "{out}");

    // After the last use.
    page.click("[data-action=grant-once]").unwrap();
    page.wait_tool(TOOL, WAIT).unwrap();
    keep_listed(&page, TOOL, "spent");
    let first = execute_listed(&page, "spent", "{ item: 'coffee' }").unwrap();
    assert_eq!(first["ok"], true, "{first}");
    page.wait_tool_gone(TOOL, WAIT).unwrap();
    let out = refused(&page, "spent");
    assert_eq!(code(&out), "grant_spent", "{out}");
    assert_eq!(cart(&page), ["1 × apples", "1 × coffee"]);

    // A tool this page's gate never granted: the browser's rejection stands.
    let never = page
        .eval(
            "(async () => { try { await document.modelContext.executeTool(\
             { ...window.__listed.spent, name: 'never_granted' }, {}); return 'resolved'; } \
             catch (e) { return 'rejected'; } })()",
        )
        .unwrap();
    assert_eq!(never, "rejected");

    // The object names the tool: after a new grant of that name the browser sends it there.
    page.click("[data-action=grant-minute]").unwrap();
    page.wait_tool(TOOL, WAIT).unwrap();
    let renewed = execute_listed(&page, "revoked", "{ item: 'bread' }").unwrap();
    assert_eq!(renewed["ok"], true, "{renewed}");
    assert_eq!(cart(&page), ["1 × apples", "1 × coffee", "1 × bread"]);

    // After expiry (a 1.5 s lease, on a page of its own).
    let mut short = open(&browser, &server, "?short=1");
    short.click("[data-action=grant-minute]").unwrap();
    short.wait_tool(TOOL, WAIT).unwrap();
    keep_listed(&short, TOOL, "expired");
    short.wait_tool_gone(TOOL, WAIT).unwrap();
    let out = refused(&short, "expired");
    assert_eq!(code(&out), "grant_expired", "{out}");
    assert!(cart(&short).is_empty(), "{:?}", cart(&short));
}

#[test]
fn expiry_withdraws_the_tool_without_a_call_and_a_call_racing_it_is_refused() {
    let server = serve();
    let browser = Browser::launch().unwrap();
    let mut page = open(&browser, &server, "?short=1");

    // Gone on its own (a 1.5 s lease), with the reason shown.
    let granted = Instant::now();
    page.click("[data-action=grant-minute]").unwrap();
    page.wait_tool(TOOL, WAIT).unwrap();
    page.wait_tool_gone(TOOL, WAIT).unwrap();
    let lived = granted.elapsed();
    assert!(
        lived >= Duration::from_millis(1_000),
        "gone after {lived:?}"
    );
    assert_eq!(removed_reasons(&page), ["expired"]);
    let stale = call_kept(&page, TOOL, "{ item: 'milk' }");
    assert_eq!(code(&stale), "grant_expired", "{stale}");
    assert_not_answered(&mut page, TOOL);

    // A call that arrives after the expiry but before the timer ran (the page's thread was
    // busy past the deadline, so the timer could not fire) is refused at use, never answered.
    page.click("[data-action=grant-minute]").unwrap();
    page.wait_tool(TOOL, WAIT).unwrap();
    let raced = page
        .eval(
            "(async () => { const tool = window.__kept['add_to_cart']; \
             const until = Date.now() + 1700; while (Date.now() < until) {} \
             const p = tool.execute({ item: 'milk' }, {}); return await p; })()",
        )
        .unwrap();
    assert_eq!(code(&raced), "grant_expired", "{raced}");
    page.wait_tool_gone(TOOL, WAIT).unwrap();
    assert!(cart(&page).is_empty(), "{:?}", cart(&page));
    assert_eq!(removed_reasons(&page), ["expired", "expired"]);
}

#[test]
fn a_bad_grant_throws_and_registers_nothing_and_a_throwing_execute_is_a_refusal() {
    let server = serve();
    let browser = Browser::launch().unwrap();
    let mut page = open(&browser, &server, "");

    // Another script on the page uses the package directly.
    let out = page
        .eval(
            r#"(async () => {
              const { ToolGate } = await import("./pkg/tool_gate_js.js");
              const gate = new ToolGate();
              window.__gate = gate;
              const tool = { name: "probe", description: "d", execute() { return 1; } };
              const out = {};
              const cases = {
                zeroUses: { expiresIn: 60000, uses: 0 },
                zeroTime: { expiresIn: 0 },
                dayPlusOne: { expiresIn: 86400001 },
                fractionalUses: { expiresIn: 60000, uses: 1.5 },
                stringTime: { expiresIn: "60000" },
                noOptions: undefined,
              };
              for (const [k, o] of Object.entries(cases)) {
                try { gate.grant(tool, o); out[k] = "granted"; } catch (e) { out[k] = `${e.name}: ${e.message}`; }
              }
              for (const [k, t] of Object.entries({
                noName: { name: "", description: "d", execute() {} },
                noExecute: { name: "probe", description: "d" },
              })) {
                try { gate.grant(t, { expiresIn: 60000 }); out[k] = "granted"; } catch (e) { out[k] = e.name; }
              }
              try { new ToolGate({}); out.badContext = "constructed"; } catch (e) { out.badContext = e.name; }
              const throwing = { name: "bad_getter", description: "d", execute() {}, get inputSchema() { throw new Error("no schema"); } };
              try { gate.grant(throwing, { expiresIn: 60000 }); out.badGetter = "granted"; } catch (e) { out.badGetter = e.message; }
              try { gate.on("changed", () => {}); out.badEvent = "added"; } catch (e) { out.badEvent = e.name; }
              out.live = gate.tools().length;
              return out;
            })()"#,
        )
        .unwrap();
    for case in ["zeroUses", "zeroTime", "dayPlusOne", "fractionalUses"] {
        let text = out[case].as_str().unwrap();
        assert!(text.starts_with("RangeError: "), "{case}: {out}");
    }
    assert!(
        out["dayPlusOne"]
            .as_str()
            .unwrap()
            .contains("86400000 (one day)"),
        "{out}"
    );
    for case in ["stringTime", "noOptions"] {
        assert!(
            out[case].as_str().unwrap().starts_with("TypeError: "),
            "{case}: {out}"
        );
    }
    for case in ["noName", "noExecute", "badContext", "badEvent"] {
        assert_eq!(out[case], "TypeError", "{case}: {out}");
    }
    assert_eq!(out["badGetter"], "no schema", "{out}");
    assert_eq!(out["live"], 0, "{out}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!listed(&mut page, "probe"), "{:?}", page.tools());
    assert!(!listed(&mut page, "bad_getter"), "{:?}", page.tools());

    // The name the gate checks is the name the browser lists, whatever a getter answers later.
    let sly = page
        .eval(
            r#"(() => { let reads = 0;
              const sly = { get name() { return reads++ === 0 ? "sly" : "other"; },
                            description: "d", execute() { return "answered"; } };
              return window.__gate.grant(sly, { expiresIn: 60000, uses: 1 }).name; })()"#,
        )
        .unwrap();
    assert_eq!(sly, "sly");
    page.wait_tool("sly", WAIT).unwrap();
    assert!(!listed(&mut page, "other"), "{:?}", page.tools());
    assert_eq!(
        page.call_tool("sly", json!({})).unwrap().output,
        json!("answered")
    );
    page.wait_tool_gone("sly", WAIT).unwrap();

    // A page execute that throws, or rejects, is a `tool_failed` refusal, not an UnknownError;
    // whatever else it returns is passed through.
    page.eval(
        r#"(() => {
          const opts = { expiresIn: 60000 };
          window.__gate.grant({ name: "boom", description: "throws", execute() { throw new Error("kaput"); } }, opts);
          window.__gate.grant({ name: "boom_later", description: "rejects", async execute() { throw new TypeError("later"); } }, opts);
          window.__gate.grant({ name: "echo", description: "echoes", execute(input) { return { got: input }; } }, opts);
          return true;
        })()"#,
    )
    .unwrap();
    for (name, message) in [("boom", "kaput"), ("boom_later", "later")] {
        page.wait_tool(name, WAIT).unwrap();
        let response = page.call_tool(name, json!({})).unwrap();
        assert_eq!(response.status, ToolStatus::Completed, "{response:?}");
        assert_eq!(code(&response.output), "tool_failed", "{response:?}");
        let text = response.output["error"]["message"].as_str().unwrap();
        assert!(text.contains(message), "{text}");
        // A failure does not end the grant.
        assert!(listed(&mut page, name));
    }
    page.wait_tool("echo", WAIT).unwrap();
    let echoed = page.call_tool("echo", json!({ "a": [1, 2] })).unwrap();
    assert_eq!(echoed.output, json!({ "got": { "a": [1, 2] } }));
    // A one-use grant renewed while its use is being answered: the end of that use does not
    // withdraw the renewed tool.
    page.eval(
        r#"(() => { window.__gate.grant({ name: "slow", description: "waits", execute() {
          return new Promise((resolve) => { window.__release = () => resolve("slow done"); }); } },
          { expiresIn: 60000, uses: 1 }); return true; })()"#,
    )
    .unwrap();
    let slow = page.wait_tool("slow", WAIT).unwrap();
    let invocation = page
        .begin_invoke(&slow.frame_id, "slow", json!({}))
        .unwrap();
    page.wait_for("typeof window.__release === 'function'", WAIT)
        .unwrap();
    page.eval(
        r#"(() => { window.__gate.grant({ name: "slow", description: "answers",
          execute() { return "renewed"; } }, { expiresIn: 60000, uses: 2 });
          window.__release(); return true; })()"#,
    )
    .unwrap();
    let first = page.await_response(&invocation, WAIT).unwrap();
    assert_eq!(first.output, json!("slow done"), "{first:?}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(listed(&mut page, "slow"), "{:?}", page.tools());
    let again = page.call_tool("slow", json!({})).unwrap();
    assert_eq!(again.output, json!("renewed"), "{again:?}");

    // Events: added, removed with the reason; `off` stops a listener; a throwing listener
    // neither stops the others nor the grant.
    let seen = page
        .eval(
            r#"(() => { const seen = [];
              const gate = window.__gate;
              const listener = (e) => seen.push(`${e.type}:${e.name}:${e.reason ?? e.usesLeft}`);
              const broken = () => { throw new Error("a listener's own bug"); };
              gate.on("added", broken); gate.on("added", listener); gate.on("removed", listener);
              const tool = (name) => ({ name, description: "d", execute() { return 1; } });
              gate.grant(tool("evt"), { expiresIn: 60000, uses: 3 });
              gate.off("added", listener);
              gate.grant(tool("evt2"), { expiresIn: 60000 });
              gate.revoke("evt"); gate.revoke("evt2");
              gate.off("added", broken); gate.off("removed", listener);
              return seen; })()"#,
        )
        .unwrap();
    assert_eq!(
        seen,
        json!(["added:evt:3", "removed:evt:revoked", "removed:evt2:revoked"])
    );

    // revokeAll withdraws every tool of that gate (not the page's own gate's).
    assert_eq!(page.eval("window.__gate.revokeAll()").unwrap(), 4);
    for name in ["boom", "boom_later", "echo", "slow"] {
        page.wait_tool_gone(name, WAIT).unwrap();
    }
}

/// Runs the pinned `tsc` on `file` in `dir`; returns (success, output).
fn tsc(dir: &Path, files: &[&str]) -> (bool, String) {
    let tsc = node::interop_dir().join("node_modules/.bin/tsc");
    let out = Command::new(&tsc)
        .args([
            "--noEmit",
            "--strict",
            "--target",
            "es2022",
            "--module",
            "es2022",
            "--moduleResolution",
            "bundler",
            "--lib",
            "esnext,dom",
        ])
        .args(files)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", tsc.display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn the_typings_compile_and_a_wrong_call_does_not() {
    let site = build();
    node::ensure_node_modules();
    let dts = std::fs::read_to_string(site.join("pkg/tool_gate_js.d.ts")).unwrap();
    assert!(
        dts.contains("grant(tool: GateTool, options: GrantOptions): GrantInfo;"),
        "{dts}"
    );

    let (ok, out) = tsc(&site, &["typecheck.ts"]);
    assert!(ok, "typecheck.ts does not compile:\n{out}");
    let (ok, out) = tsc(&site, &["typecheck-wrong.ts"]);
    assert!(!ok, "typecheck-wrong.ts compiled");
    assert!(
        out.contains("typecheck-wrong.ts(8,") && out.contains("expiresIn"),
        "{out}"
    );

    // Each wrong call on its own fails; the same file with the right call compiles.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    std::fs::copy(
        site.join("pkg/tool_gate_js.d.ts"),
        dir.path().join("pkg/tool_gate_js.d.ts"),
    )
    .unwrap();
    let head = "import { ToolGate } from \"./pkg/tool_gate_js.js\";\n\
                const gate = new ToolGate();\n\
                const tool = { name: \"t\", description: \"d\", execute: () => 1 };\n";
    let right = "gate.grant(tool, { expiresIn: 60000, uses: 1 });\n";
    let wrong = [
        "gate.grant(tool, { expiresIn: \"60s\" });\n",
        "gate.grant({ name: \"t\", execute: () => 1 }, { expiresIn: 60000 });\n",
        "gate.grant(tool, { expiresIn: 60000, uses: \"once\" });\n",
        "gate.on(\"changed\", () => {});\n",
        "gate.on(\"removed\", 5);\n",
        "const n: string = gate.grant(tool, { expiresIn: 60000 }).expiresAt;\n",
        "const r: \"gone\" = (null as unknown as import(\"./pkg/tool_gate_js.js\").RemovedEvent).reason;\n",
        "new ToolGate(5);\n",
        "gate.revoke(1);\n",
    ];
    let write = |name: &str, body: &str| {
        std::fs::write(dir.path().join(name), format!("{head}{body}export {{}};\n")).unwrap();
    };
    write("right.ts", right);
    let (ok, out) = tsc(dir.path(), &["right.ts"]);
    assert!(ok, "the right call does not compile:\n{out}");
    // One tsc run over every wrong file (each is its own module: an error in one does not
    // hide another's); each must have its own error on its one call (line 4).
    let names: Vec<String> = (0..wrong.len()).map(|i| format!("wrong{i}.ts")).collect();
    for (name, body) in names.iter().zip(wrong) {
        write(name, body);
    }
    let files: Vec<&str> = names.iter().map(String::as_str).collect();
    let (ok, out) = tsc(dir.path(), &files);
    assert!(!ok, "the wrong calls compiled");
    for (name, body) in names.iter().zip(wrong) {
        assert!(
            out.contains(&format!("{name}(4,")),
            "{body} compiled: {out}"
        );
    }
}
