//! What the door's end-to-end tests share: the DevTools port of a launched Chromium, and the
//! test pages of `mcp/tests/pages` (served on their own loopback origin).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::PathBuf;
use std::time::Duration;

use tacit_e2e::browser::Browser;
use tacit_e2e::{Page, StaticServer};

/// The DevTools port Chromium picked (its `DevToolsActivePort` file).
pub fn devtools_port(browser: &Browser) -> u16 {
    let file = browser
        .profile_dir()
        .unwrap()
        .join("profile")
        .join("DevToolsActivePort");
    let text = std::fs::read_to_string(&file).unwrap();
    text.lines().next().unwrap().trim().parse().unwrap()
}

/// Serves `mcp/tests/pages` on a free loopback port: another origin than the wallet's.
pub fn serve_pages() -> StaticServer {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("pages");
    StaticServer::start(dir).unwrap()
}

/// Opens the test page with `query` (its role) in a new tab and waits until it registered its
/// tools; fails loudly without WebMCP.
pub fn open_page<'b>(browser: &'b Browser, pages: &StaticServer, query: &str) -> Page<'b> {
    let mut page = browser.new_page().unwrap();
    page.navigate(&pages.url(&format!("/{query}"))).unwrap();
    page.require_webmcp().unwrap();
    page.wait_for("window.__done === true", Duration::from_secs(10))
        .unwrap();
    let errors = page.eval("window.__errors").unwrap();
    assert_eq!(
        errors,
        serde_json::json!([]),
        "the test page's registrations"
    );
    page
}

/// The namespace of an origin's tools in the door.
pub fn ns(origin: &str) -> String {
    tacit_mcp::origin::namespace(origin)
}
