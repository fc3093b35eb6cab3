//! The built wallet site loads under the served CSP: its module and wasm boot, nothing is
//! blocked, nothing throws. Needs `cargo xtask build-web` (fails with that instruction if not).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::Duration;

use serde_json::json;
use tacit_e2e::{Browser, StaticServer, site_dir};

#[test]
fn wallet_site_boots_under_the_csp() {
    let dir = site_dir("wallet").unwrap_or_else(|e| panic!("{e}"));
    let size: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("size.json")).unwrap()).unwrap();
    assert!(size["wasm"]["gzip_bytes"].as_u64().unwrap() > 0, "{size}");

    let server = StaticServer::start(&dir).unwrap();
    let browser = Browser::launch().unwrap_or_else(|e| panic!("{e}"));
    let mut page = browser.new_page().unwrap();
    page.watch_csp().unwrap();
    page.navigate(&server.url("/")).unwrap();
    page.require_webmcp().unwrap();
    // The first-load module was fetched and instantiated by boot.js; a pointer move over the
    // page (a person's first act) then loads and starts the app's module.
    page.wait_for(
        "performance.getEntriesByType('resource').some((e) => e.name.endsWith('/pkg/tacit_wallet_boot_bg.wasm'))",
        Duration::from_secs(10),
    )
    .unwrap();
    tacit_e2e::wallet::wait_app(&page);
    assert!(page.requested("/pkg/tacit_web_bg.wasm").unwrap());
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(page.csp_violations().unwrap(), Vec::<String>::new());
    let console = page.console().unwrap();
    let uncaught: Vec<&String> = console
        .iter()
        .filter(|l| l.starts_with("uncaught") || l.starts_with("error"))
        .collect();
    assert!(uncaught.is_empty(), "console: {console:#?}");
    assert_eq!(
        page.eval("typeof document.modelContext").unwrap(),
        json!("object")
    );
    page.screenshot("wallet-boot").unwrap();
}
