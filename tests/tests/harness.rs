//! Harness self-test in a real headless Chromium, no wallet involved: a tiny page served by the
//! static server registers an `echo` tool; the agent side sees it, calls it, watches it vanish
//! when the page aborts its registration, and fails to call it afterwards.
//!
//! These tests fail (never skip) when Chromium is missing: the error names the install command.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::Duration;

use serde_json::{Value, json};
use tacit_e2e::{Browser, LaunchOptions, StaticServer, ToolStatus};
use tempfile::TempDir;

const WAIT: Duration = Duration::from_secs(10);

const INDEX: &str = r#"<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>harness</title>
<script type="module" src="boot.js"></script>
</head>
<body>
<p id="status">loading</p>
<button id="revoke" type="button">Revoke</button>
<input id="note" type="text">
<select id="pick"><option value="a">A</option><option value="b">B</option></select>
</body>
</html>
"#;

// CSP forbids inline script, so the page's behaviour lives here.
const BOOT: &str = r#"
const status = document.getElementById('status');
const controller = new AbortController();
window.harness = { calls: 0 };
async function register() {
  if (!document.modelContext) { status.textContent = 'no-webmcp'; return; }
  await document.modelContext.registerTool({
    name: 'echo',
    description: 'Returns its input unchanged, with ok: true.',
    inputSchema: { type: 'object' },
    execute: async (input) => { window.harness.calls += 1; return { ok: true, echoed: input }; },
  }, { signal: controller.signal });
  await document.modelContext.registerTool({
    name: 'boom',
    description: 'Always throws, to pin how a thrown error reaches the agent.',
    inputSchema: { type: 'object' },
    execute: async () => { throw new Error('secret detail that must not leak'); },
  });
  status.textContent = 'registered';
}
document.getElementById('revoke').addEventListener('click', () => {
  controller.abort();
  status.textContent = 'revoked';
});
register().catch((e) => { status.textContent = 'error: ' + e; });
"#;

fn site() -> (TempDir, StaticServer) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), INDEX).unwrap();
    std::fs::write(dir.path().join("boot.js"), BOOT).unwrap();
    let server = StaticServer::start(dir.path()).unwrap();
    (dir, server)
}

fn launch(options: LaunchOptions) -> Browser {
    Browser::launch_with(options).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn echo_tool_round_trip_then_withdrawn() {
    let (_dir, server) = site();
    let browser = launch(LaunchOptions::default());
    eprintln!("browser: {}", browser.version());
    let mut page = browser.new_page().unwrap();
    page.enable_webmcp().unwrap();
    page.navigate(&server.url("/")).unwrap();
    page.require_webmcp().unwrap();
    page.wait_for(
        "document.getElementById('status').textContent === 'registered'",
        WAIT,
    )
    .unwrap();

    let echo = page.wait_tool("echo", WAIT).unwrap();
    assert_eq!(
        echo.description,
        "Returns its input unchanged, with ok: true."
    );
    assert_eq!(echo.input_schema, json!({ "type": "object" }));
    assert_eq!(echo.frame_id, page.frame_id());
    eprintln!("toolsAdded tool: {}", echo.raw);

    let input = json!({ "text": "hello", "n": 3, "nested": { "list": [1, 2] } });
    let answer = page
        .invoke_tool(&echo.frame_id, "echo", input.clone())
        .unwrap();
    eprintln!("toolResponded: {}", answer.raw);
    assert_eq!(answer.status, ToolStatus::Completed);
    assert_eq!(answer.output, json!({ "ok": true, "echoed": input }));
    assert_eq!(answer.exception, None);
    assert_eq!(page.eval("window.harness.calls").unwrap(), json!(1));

    let boom = page.call_tool("boom", json!({})).unwrap();
    eprintln!("toolResponded (throwing tool): {}", boom.raw);
    assert_eq!(boom.status, ToolStatus::Error);
    // Measured: unlike `executeTool` (bare UnknownError), the DevTools path hands the agent the
    // thrown error as a RemoteObject whose description holds the message and the stack.
    // So a wallet tool must never throw anything it would not return.
    let exception = boom.exception_text().unwrap_or_default();
    assert!(
        exception.starts_with("Error: secret detail that must not leak"),
        "{}",
        boom.raw
    );

    let shot = page.screenshot("harness-registered").unwrap();
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 100,
        "screenshot {shot:?} is empty"
    );

    page.click("#revoke").unwrap();
    page.wait_tool_gone("echo", WAIT).unwrap();
    assert_eq!(
        page.eval("document.getElementById('status').textContent")
            .unwrap(),
        json!("revoked")
    );
    let names: Vec<String> = page.tools().unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["boom"]);
    let log = page.webmcp_log().unwrap();
    for event in log {
        eprintln!("log: {} {}", event.method, event.params);
    }
    let removed = log
        .iter()
        .find(|e| e.method == "WebMCP.toolsRemoved")
        .expect("a toolsRemoved event");
    eprintln!("toolsRemoved: {}", removed.params);

    let after = page.invoke_tool(&echo.frame_id, "echo", json!({ "text": "again" }));
    eprintln!("invoking a withdrawn tool: {after:?}");
    match after {
        Ok(response) => assert_ne!(
            response.status,
            ToolStatus::Completed,
            "withdrawn tool answered: {response:?}"
        ),
        Err(e) => eprintln!("refused: {e}"),
    }
    assert_eq!(
        page.eval("window.harness.calls").unwrap(),
        json!(1),
        "the withdrawn tool ran"
    );
}

#[test]
fn typing_and_heap() {
    let (_dir, server) = site();
    let browser = launch(LaunchOptions::default());
    let mut page = browser.new_page().unwrap();
    page.navigate(&server.url("/index.html")).unwrap();
    page.type_into("#note", "abc").unwrap();
    page.type_into("#note", "def").unwrap();
    assert_eq!(
        page.eval("document.getElementById('note').value").unwrap(),
        json!("abcdef")
    );
    page.fill("#note", "xyz").unwrap();
    assert_eq!(
        page.eval("document.getElementById('note').value").unwrap(),
        json!("xyz")
    );
    page.eval("document.getElementById('pick').addEventListener('change', (e) => { window.picked = e.target.value; })").unwrap();
    page.select("#pick", "b").unwrap();
    assert_eq!(page.eval("window.picked").unwrap(), json!("b"));
    let err = page.select("#pick", "zzz").unwrap_err().to_string();
    assert!(
        err.contains("no option `zzz`") && err.contains("a, b"),
        "{err}"
    );
    page.collect_garbage().unwrap();
    let heap = page.js_heap_used().unwrap();
    assert!(heap > 0 && heap < 200 * 1024 * 1024, "heap {heap}");
    assert!(page.eval("Promise.reject(new Error('nope'))").is_err());
    assert!(page.click("#missing").is_err());
}

#[test]
fn without_the_flag_webmcp_is_detected_as_missing() {
    let (_dir, server) = site();
    let browser = launch(LaunchOptions {
        webmcp: false,
        ..LaunchOptions::default()
    });
    let mut page = browser.new_page().unwrap();
    page.navigate(&server.url("/")).unwrap();
    assert_eq!(
        page.eval("typeof document.modelContext").unwrap(),
        json!("undefined")
    );
    page.wait_for(
        "document.getElementById('status').textContent === 'no-webmcp'",
        WAIT,
    )
    .unwrap();
    let err = page.require_webmcp().unwrap_err().to_string();
    assert!(err.contains("--enable-blink-features=WebMCP"), "{err}");
}

#[test]
fn missing_chromium_fails_with_the_install_command() {
    let options = LaunchOptions {
        chromium: "/nonexistent/chromium".into(),
        ..LaunchOptions::default()
    };
    let err = Browser::launch_with(options).unwrap_err().to_string();
    assert!(
        err.contains("apt-get install -y chromium chromium-driver"),
        "{err}"
    );
}

#[test]
fn served_headers_reach_the_browser() {
    let (_dir, server) = site();
    let browser = launch(LaunchOptions::default());
    let mut page = browser.new_page().unwrap();
    page.navigate(&server.url("/")).unwrap();
    // Origin-keyed agent cluster, as the header asks.
    assert_eq!(
        page.eval("window.originAgentCluster").unwrap(),
        Value::Bool(true)
    );
    // The CSP blocks inline script (DevTools' own Runtime.evaluate is exempt, so test a <script>).
    let inline_ran = page
        .eval(
            "new Promise((resolve) => { \
               document.addEventListener('securitypolicyviolation', () => resolve(false)); \
               const s = document.createElement('script'); \
               s.textContent = 'window.inlineRan = true'; \
               document.head.append(s); \
               setTimeout(() => resolve(window.inlineRan === true), 500); })",
        )
        .unwrap();
    assert_eq!(inline_ran, Value::Bool(false));
    let csp = page
        .eval("fetch('/boot.js').then((r) => r.headers.get('content-security-policy'))")
        .unwrap();
    assert!(
        csp.as_str()
            .unwrap()
            .contains("script-src 'self' 'wasm-unsafe-eval';"),
        "{csp}"
    );
}

/// What `cargo xtask demo --agent` does without `--auto-approve`: attach to a browser someone
/// else started, find their open tab, and leave both open when done.
#[test]
fn connect_attaches_to_a_running_browser_and_leaves_it_open() {
    let site = TempDir::new().unwrap();
    std::fs::write(site.path().join("index.html"), INDEX).unwrap();
    std::fs::write(site.path().join("boot.js"), BOOT).unwrap();
    let server = StaticServer::start(site.path()).unwrap();
    let theirs = Browser::launch().unwrap();
    let mut tab = theirs.new_page().unwrap();
    tab.navigate(&server.url("/")).unwrap();
    let port_file = theirs
        .profile_dir()
        .unwrap()
        .join("profile")
        .join("DevToolsActivePort");
    let port: u16 = std::fs::read_to_string(port_file)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    {
        let agent = Browser::connect(port).unwrap();
        assert!(agent.profile_dir().is_none());
        let mut attached = agent.attach(&server.origin()).unwrap();
        attached.enable_webmcp().unwrap();
        let tool = attached.wait_tool("echo", WAIT).unwrap();
        let out = attached
            .invoke_tool(&tool.frame_id, "echo", json!({ "x": 1 }))
            .unwrap();
        assert_eq!(out.status, ToolStatus::Completed);
        assert!(agent.attach("http://127.0.0.1:1/").is_err());
    }
    // Dropping the agent's handles closed neither the tab nor the browser.
    let status = tab
        .eval("document.getElementById('status').textContent")
        .unwrap();
    assert!(status.is_string(), "{status}");
}
