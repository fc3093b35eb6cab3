//! The MCP door through an independent client: the official TypeScript MCP SDK
//! (`@modelcontextprotocol/sdk`, pinned in `interop/package.json`) spawns the real `tacit-mcp`
//! over stdio, attached to a real headless Chromium in which the wallet and a test page with
//! every WebMCP annotation run (`interop/mcp_door.mjs` does the client's part).
//!
//! Issue 28, item 14: junk calls (lone surrogates, deep input, non-object `arguments`, bad
//! names and params, a 5 MiB string) each get an answer (invalid params with the reason) rather
//! than a client timeout; `-32601` is left for a method the door does not have; every WebMCP
//! annotation reaches the client; `serverInfo` names `tacit-mcp` and its version.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

#[path = "../../interop/node.rs"]
#[allow(dead_code)]
mod node;

mod common;

use serde_json::{Value, json};
use tacit_e2e::browser::Browser;
use tacit_e2e::wallet::Wallet;

use common::{devtools_port, ns, open_page, serve_pages};

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {tools:?}"))
}

#[test]
fn the_typescript_sdk_gets_an_answer_to_every_junk_call_every_annotation_and_the_door_s_name() {
    let _serial = tacit_e2e::serial();
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let pages = serve_pages();
    let browser = Browser::launch().unwrap();
    let wallet_tab = Wallet::open(&browser, &server, "");
    wallet_tab.create_profile();
    let _hints = open_page(&browser, &pages, "?role=hints");
    let (wallet, site) = (ns(&server.origin()), ns(&pages.origin()));

    let out = node::run(
        "mcp_door.mjs",
        &json!({
            "command": env!("CARGO_BIN_EXE_tacit-mcp"),
            "args": ["--devtools-port", devtools_port(&browser).to_string(),
                     "--origin", server.origin(), "--origin", pages.origin()],
            "timeout_ms": 10_000,
            "targets": [format!("{wallet}.request_claims"), format!("{site}.reads"),
                        "no_such_tool"],
            "ok_call": { "name": format!("{site}.reads"), "arguments": { "x": 1 } },
        }),
    );
    let stderr = out["stderr"].as_str().unwrap_or_default();

    // serverInfo: the door, at this crate's version.
    assert_eq!(out["server"]["name"], "tacit-mcp", "{}", out["server"]);
    assert_eq!(out["server"]["version"], env!("CARGO_PKG_VERSION"));

    // Every junk call answered, one by one and all at once, with invalid params and a reason.
    let junk = out["junk"].as_array().unwrap();
    let burst = out["burst"].as_array().unwrap();
    assert!(junk.len() >= 130, "{} junk calls", junk.len());
    println!(
        "{} junk calls one by one and {} at once",
        junk.len(),
        burst.len()
    );
    for call in junk.iter().chain(burst) {
        let label = call["label"].as_str().unwrap();
        assert_eq!(
            call["answered"], true,
            "no answer to {call}\nthe door said: {stderr}"
        );
        assert_eq!(call["code"], -32602, "{call}");
        let message = call["message"].as_str().unwrap_or_default();
        // The reason, not just the code's name.
        assert!(
            message.len() > "MCP error -32602: Invalid params".len() + 10,
            "{call}"
        );
        let expect = |needle: &str| assert!(message.contains(needle), "{needle}: {call}");
        if label.contains("lone ") || label.contains("reversed pair") {
            expect("lone UTF-16 surrogate");
        } else if label.contains("-deep") || label == "name deep" {
            let depth: usize = label
                .rsplit(": ")
                .next()
                .and_then(|l| l.split('-').next())
                .and_then(|d| d.parse().ok())
                .unwrap_or(200);
            expect(if depth >= 127 {
                "nested deeper than 128"
            } else {
                "nested deeper than 32"
            });
        } else if label.contains("arguments:") {
            expect("`arguments` must be a JSON object");
        } else if label.contains("5 MiB") {
            expect("larger than 4 MiB");
        } else if label.starts_with("name ") {
            expect("name");
        } else if label.starts_with("params ") {
            expect("params must be an object");
        }
    }
    // The door still serves after all of it.
    assert_ne!(out["ok"]["isError"], true, "{}", out["ok"]);
    assert_eq!(
        out["ok"]["structuredContent"]["result"]["echo"],
        json!({ "x": 1 })
    );
    assert_eq!(out["unknown"]["code"], -32601, "{}", out["unknown"]);

    // Every WebMCP annotation: the MCP hints they map onto, and all four as given in _meta.
    let tools = out["tools"].as_array().unwrap();
    let reads = tool(tools, &format!("{site}.reads"));
    assert_eq!(
        reads["annotations"],
        json!({ "readOnlyHint": true, "openWorldHint": true }),
        "{reads}"
    );
    assert_eq!(
        reads["_meta"]["tacit/webmcp-annotations"],
        json!({ "readOnlyHint": true, "untrustedContentHint": true,
                "consequentialHint": false, "debugging": true })
    );
    let acts = tool(tools, &format!("{site}.acts"));
    assert_eq!(
        acts["annotations"],
        json!({ "readOnlyHint": false, "destructiveHint": true }),
        "{acts}"
    );
    assert_eq!(
        acts["_meta"]["tacit/webmcp-annotations"],
        json!({ "readOnlyHint": false, "untrustedContentHint": false,
                "consequentialHint": true, "debugging": false })
    );
    let plain = tool(tools, &format!("{site}.plain"));
    assert!(
        plain.get("annotations").is_none() && plain.get("_meta").is_none(),
        "{plain}"
    );
    // The wallet's tools are there too, under the wallet origin's namespace.
    let request = tool(tools, &format!("{wallet}.request_claims"));
    assert!(
        request["description"]
            .as_str()
            .unwrap()
            .starts_with(&format!("From the page at {}: ", server.origin())),
        "{request}"
    );
}
