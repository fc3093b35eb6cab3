//! Pins the `WebMCP` DevTools domain as Chromium 156 speaks it, so a Chromium update that changes
//! a shape the harness relies on fails here, with the old shape in the assertion, rather than
//! somewhere deep in a wallet test. The shapes are written down in `tacit_e2e::webmcp`'s docs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::Duration;

use serde_json::{Value, json};
use tacit_e2e::{Browser, Error, StaticServer, ToolStatus};

const WAIT: Duration = Duration::from_secs(10);

const INDEX: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>protocol</title>
<script type="module" src="boot.js"></script></head>
<body><p id="status">loading</p></body></html>
"#;

const BOOT: &str = r#"
window.slowDone = false;
const mc = document.modelContext;
await mc.registerTool({
  name: 'echo', title: 'Echo', description: 'echo',
  inputSchema: { type: 'object', properties: { a: { type: 'string' } } },
  annotations: { readOnlyHint: true },
  execute: async (input) => ({ echoed: input, kind: typeof input }),
});
await mc.registerTool({
  name: 'slow', description: 'slow', inputSchema: { type: 'object' },
  execute: async () => { await new Promise((r) => setTimeout(r, 800)); window.slowDone = true; return { done: true }; },
});
await mc.registerTool({ name: 'undef', description: 'returns undefined', execute: async () => undefined });
await mc.registerTool({ name: 'text', description: 'returns a string', execute: async () => 'plain text' });
await mc.registerTool({ name: 'map', description: 'returns a Map', execute: async () => new Map([['a', 1]]) });
document.getElementById('status').textContent = 'ready';
"#;

#[test]
fn webmcp_domain_shapes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), INDEX).unwrap();
    std::fs::write(dir.path().join("boot.js"), BOOT).unwrap();
    let server = StaticServer::start(dir.path()).unwrap();
    let browser = Browser::launch().unwrap_or_else(|e| panic!("{e}"));
    let mut page = browser.new_page().unwrap();
    page.navigate(&server.url("/")).unwrap();
    page.wait_for(
        "document.getElementById('status').textContent === 'ready'",
        WAIT,
    )
    .unwrap();

    // Enabling after registration replays every tool in one toolsAdded.
    page.enable_webmcp().unwrap();
    page.wait_tool("map", WAIT).unwrap();
    let added: Vec<Value> = page
        .webmcp_log()
        .unwrap()
        .iter()
        .filter(|e| e.method == "WebMCP.toolsAdded")
        .map(|e| e.params.clone())
        .collect();
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(added[0]["tools"].as_array().unwrap().len(), 5);

    let echo = page.wait_tool("echo", WAIT).unwrap();
    assert_eq!(
        echo.raw["annotations"],
        json!({ "readOnly": true, "untrustedContent": false, "consequential": false, "debugging": false })
    );
    assert_eq!(
        echo.raw.get("title"),
        None,
        "title is now sent: update the docs"
    );
    assert!(echo.raw["stackTrace"]["callFrames"].is_array());
    let undef = page.wait_tool("undef", WAIT).unwrap();
    assert_eq!(undef.raw.get("inputSchema"), None);
    assert_eq!(undef.raw.get("annotations"), None);
    let frame = page.frame_id().to_owned();

    // Input must be an object; output is the parsed JSON.stringify of the result.
    let ok = page
        .invoke_tool(&frame, "echo", json!({ "a": "x" }))
        .unwrap();
    assert_eq!(
        ok.output,
        json!({ "echoed": { "a": "x" }, "kind": "object" })
    );
    for bad in [json!("{\"a\":\"y\"}"), json!([1]), json!(5), Value::Null] {
        match page.invoke_tool(&frame, "echo", bad.clone()) {
            Err(Error::Cdp { message, .. }) => {
                assert!(message.contains("map start expected"), "{message}")
            }
            other => panic!("input {bad} was accepted: {other:?}"),
        }
    }
    let invoked: Vec<Value> = page
        .webmcp_log()
        .unwrap()
        .iter()
        .filter(|e| e.method == "WebMCP.toolInvoked")
        .map(|e| e.params.clone())
        .collect();
    assert_eq!(invoked.len(), 1);
    assert_eq!(
        invoked[0]["input"],
        json!("{\"a\":\"x\"}"),
        "toolInvoked.input is JSON text"
    );
    assert_eq!(invoked[0]["toolName"], json!("echo"));
    assert_eq!(invoked[0]["frameId"], json!(frame));
    assert_eq!(invoked[0]["invocationId"], ok.raw["invocationId"]);

    assert_eq!(
        page.invoke_tool(&frame, "undef", json!({})).unwrap().output,
        json!("undefined")
    );
    assert_eq!(
        page.invoke_tool(&frame, "text", json!({})).unwrap().output,
        json!("plain text")
    );
    assert_eq!(
        page.invoke_tool(&frame, "map", json!({})).unwrap().output,
        json!({})
    );
    match page.invoke_tool("NOSUCHFRAME", "echo", json!({})) {
        Err(Error::Cdp { message, .. }) => assert_eq!(message, "No frame for given id found"),
        other => panic!("{other:?}"),
    }
    match page.invoke_tool(&frame, "nope", json!({})) {
        Err(Error::Cdp { message, .. }) => assert_eq!(message, "Tool not found"),
        other => panic!("{other:?}"),
    }

    // Cancel answers Canceled at once, but the page's execute runs to its end.
    let slow = page.begin_invoke(&frame, "slow", json!({})).unwrap();
    page.cancel_invocation(&slow).unwrap();
    let canceled = page.await_response(&slow, WAIT).unwrap();
    assert_eq!(canceled.status, ToolStatus::Canceled);
    assert_eq!(canceled.raw.get("output"), None);
    assert_eq!(page.eval("window.slowDone").unwrap(), json!(false));
    page.wait_for("window.slowDone", WAIT).unwrap();

    // Reload drops the tools with no toolsRemoved; the page registers them again.
    let before = page.webmcp_log().unwrap().len();
    page.reload().unwrap();
    page.wait_for(
        "document.getElementById('status').textContent === 'ready'",
        WAIT,
    )
    .unwrap();
    page.wait_tool("map", WAIT).unwrap();
    let after: Vec<String> = page.webmcp_log().unwrap()[before..]
        .iter()
        .map(|e| e.method.clone())
        .collect();
    assert!(after.iter().all(|m| m == "WebMCP.toolsAdded"), "{after:?}");
    assert_eq!(after.len(), 5, "{after:?}");
}
