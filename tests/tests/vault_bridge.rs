//! Issue 29 end to end in two browsers: the person's vault (the wallet page marked a vault, on
//! its own origin, in one Chromium) and the agent's browser (the bridge on another origin and a
//! relying site, in another Chromium, driven through the DevTools `WebMCP` domain and under the
//! test's full DevTools control), paired through a real `tacit-relay` by the code the bridge
//! shows, which the person types.
//!
//! What must hold: the vault registers no tool; the bridge registers the persistent tools and,
//! once the person grants, the claim tools, and its calls are answered by the vault; the relay
//! carries nothing but ciphertext; the agent's browser holds none of the person's facts (every
//! page's heap, storage and DOM, the bridge's wasm memory); nothing the agent does in its own
//! browser (a virtual authenticator, a rewritten page, replayed, reordered, altered or forged
//! frames, a planted signer address, a restored storage) grants, answers, signs or brings back a
//! pairing; the site accepts what the person released in the vault; revoke, lock and unpair
//! withdraw the claim tools at once; a relay that goes down and returns brings them back; a
//! closed vault is `vault_unreachable`.
//!
//! These tests fail, never skip, when Chromium, the WebMCP switch or a built site is missing
//! (run `cargo xtask build-web` first).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::{Duration, Instant};

#[path = "../../interop/node.rs"]
#[allow(dead_code)]
mod node;

use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use signer::{KeyStore, system_now};
use tacit_e2e::agent::{self, Person};
use tacit_e2e::bridge_tab;
use tacit_e2e::relay_proc::TestRelay;
use tacit_e2e::signer_proc::TestSigner;
use tacit_e2e::site_proc::TestSite;
use tacit_e2e::site_tab::{HOUSING_TOOLS, SiteTab};
use tacit_e2e::wallet::{Wallet, call, granted_tools, housing_policy, text_of, tool_names};
use tacit_e2e::{Browser, Page};

const WAIT: Duration = Duration::from_secs(20);

fn wait(page: &Page<'_>, js: &str) {
    if let Err(e) = page.wait_for(js, WAIT) {
        panic!(
            "never held: {js}: {e}\n{}",
            page.eval("document.body.innerText").unwrap()
        );
    }
}

/// The agent calls `name` on the bridge until `done` holds.
fn poll(page: &mut Page<'_>, name: &str, input: Value, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let out = call(page, name, input.clone());
        if done(&out) {
            return out;
        }
        assert!(Instant::now() < deadline, "{name} never got there: {out}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The person grants request `id` in the vault for 10 minutes (ticks every question, real
/// clicks, confirms); the agent polls `check_request` on the bridge until it says granted.
fn grant_in_vault(vault: &Wallet<'_>, bridge: &mut Page<'_>, id: &str) -> Value {
    vault.allow(id, "600000");
    poll(bridge, "check_request", json!({ "request_id": id }), |o| {
        o["result"]["status"] == "granted"
    })
}

#[test]
fn a_bridge_paired_by_its_scanned_offer_offers_the_vaults_tools_and_holds_nothing() {
    let _serial = tacit_e2e::serial();
    let relay = TestRelay::start().unwrap();
    let vault_site = tacit_e2e::serve_site("vault").unwrap();
    let bridge_site = tacit_e2e::serve_site("bridge").unwrap();
    let person = Browser::launch().unwrap();
    let agent = Browser::launch().unwrap();
    let query = format!("?relay={}", relay.url());

    let mut vault = Wallet::open(&person, &vault_site, &query);
    vault.create_profile();
    let mut bridge = bridge_tab::open(&agent, &bridge_site.url(&format!("/{query}"))).unwrap();

    // Unpaired, the bridge offers the persistent tools and answers nothing itself.
    wait(&bridge, "document.body.dataset.state === 'offering'");
    let names = tool_names(&mut bridge);
    assert!(names.contains(&"request_claims".to_owned()), "{names:?}");
    let out = call(&mut bridge, "wallet_status", json!({}));
    assert_eq!(out["error"]["code"], "vault_unreachable", "{out}");
    // The vault registers no tool at all.
    assert!(
        tool_names(&mut vault.page).is_empty(),
        "the vault registered tools"
    );

    // The person types the code the bridge shows into the vault; both show one number.
    let typed = text_of(&bridge, "#typed");
    assert_eq!(typed.len(), 14, "{typed}");
    // The bridge also shows the whole offer as a QR code: an independent decoder (jsQR) reads
    // it from a screenshot of the page as the offer the page shows in text, relay included.
    // The person's device scans it (here: that decoder stands in for the camera) and pastes it;
    // the other test pairs by the typed code.
    let offer = text_of(&bridge, "#offer");
    assert!(offer.starts_with("tacit-pair:v1/"), "{offer}");
    assert!(offer.contains(&typed), "{offer} vs {typed}");
    let shot = bridge.screenshot("bridge-offer-qr").unwrap();
    let scanned = node::run("qr.mjs", &json!({ "png": shot }));
    assert_eq!(
        scanned["text"],
        offer.as_str(),
        "the QR code says {scanned}"
    );
    vault.front();
    vault.page.fill("#pair-code", &offer).unwrap();
    vault.page.click("#pair-btn").unwrap();
    vault.wait_text("#pair-msg", "Paired");
    wait(&bridge, "document.body.dataset.state === 'connected'");
    let fingerprint = text_of(&bridge, "#fingerprint");
    assert!(
        vault.text("#pair-msg").contains(&fingerprint),
        "{} vs {fingerprint}",
        vault.text("#pair-msg")
    );
    assert!(vault.text("#pairings").contains(&fingerprint));

    // The agent asks through the bridge; the person grants in the vault.
    let policy = housing_policy("http://127.0.0.1:9", "nonce-vault-bridge-1");
    let out = poll(&mut bridge, "request_claims", policy.clone(), |o| {
        o["ok"] == true
    });
    assert_eq!(out["result"]["status"], "held", "{out}");
    let id = out["result"]["request_id"].as_str().unwrap().to_owned();
    vault
        .page
        .wait_for(&format!("!!document.getElementById('req-{id}')"), WAIT)
        .unwrap();
    let checked = grant_in_vault(&vault, &mut bridge, &id);
    let tools = granted_tools(&checked);
    assert!(!tools.is_empty(), "{checked}");
    for tool in &tools {
        bridge.wait_tool(tool, WAIT).unwrap();
    }
    let answer = call(&mut bridge, &tools[0], json!({}));
    assert_eq!(answer["ok"], true, "{answer}");
    assert!(answer["result"]["satisfied"].is_boolean(), "{answer}");
    // Still none in the vault.
    assert!(tool_names(&mut vault.page).is_empty());

    // The relay carried only ciphertext: no fact, no question, no answer in the clear.
    for frame in relay.seen() {
        for needle in [
            "28400",
            "28,400",
            "nordhafen",
            "income",
            "satisfied",
            "asthma",
        ] {
            assert!(
                !frame
                    .windows(needle.len())
                    .any(|w| w.eq_ignore_ascii_case(needle.as_bytes())),
                "the relay carried {needle:?} in the clear"
            );
        }
    }
    // The agent's browser holds none of the person's facts: its storage, DOM and page heap.
    let stored = bridge
        .eval("JSON.stringify(Object.entries(localStorage))")
        .unwrap();
    let stored = stored.as_str().unwrap();
    assert!(stored.contains("tacit-bridge/pairing"), "{stored}");
    // No IndexedDB (so no install key or holder key to sign with) and no cache in its origin.
    let databases = bridge
        .eval("(async () => (await indexedDB.databases()).map(d => d.name))()")
        .unwrap();
    assert_eq!(databases, json!([]), "the bridge's origin has databases");
    let caches = bridge.eval("(async () => await caches.keys())()").unwrap();
    assert_eq!(caches, json!([]), "the bridge's origin has caches");
    let page_text = bridge
        .eval("document.documentElement.outerHTML")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let heap = bridge
        .eval(
            "(async () => { const m = await (await import('/pkg/tacit_bridge.js')).default(); \
               return new TextDecoder('latin1').decode(new Uint8Array(m.memory.buffer)); })()",
        )
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_owned();
    for needle in ["28400", "28,400", "1990-02-28", "asthma", "Nordhafen"] {
        for (what, haystack) in [("storage", stored), ("page", &page_text), ("heap", &heap)] {
            assert!(
                !haystack.contains(needle),
                "the bridge's {what} holds {needle:?}"
            );
        }
    }

    // The person locks the vault: the claim tool is withdrawn from the agent's browser; the
    // persistent tools stay and are answered by the vault (locked).
    vault.front();
    vault.page.click("[data-action=lock]").unwrap();
    for tool in &tools {
        let deadline = Instant::now() + WAIT;
        while tool_names(&mut bridge).contains(tool) {
            assert!(
                Instant::now() < deadline,
                "{tool} stayed after the vault locked"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let status = call(&mut bridge, "wallet_status", json!({}));
    assert_eq!(status["ok"], true, "{status}");
    vault.unlock_and_wait(tacit_e2e::wallet::PASS);

    // A script's click on Unpair in the vault does nothing; the person's does: the bridge is
    // told (sealed) at once, forgets the pairing and offers a new code; calls are unreachable.
    vault.front();
    vault
        .page
        .eval("document.querySelector('#pairings button').click(); true")
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(bridge_tab::state(&bridge).unwrap(), "connected");
    vault.page.click("#pairings button").unwrap();
    vault.wait_text("#pair-msg", "Unpaired");
    for tool in &tools {
        let deadline = Instant::now() + WAIT;
        while tool_names(&mut bridge).contains(tool) {
            assert!(Instant::now() < deadline, "{tool} stayed after unpairing");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    wait(&bridge, "document.body.dataset.state === 'offering'");
    assert_ne!(
        text_of(&bridge, "#typed"),
        typed,
        "the old code is offered again"
    );
    let kept = bridge
        .eval("localStorage.getItem('tacit-bridge/pairing')")
        .unwrap();
    assert_eq!(kept, Value::Null, "the bridge kept the ended pairing");
    let out = call(&mut bridge, "wallet_status", json!({}));
    assert_eq!(out["error"]["code"], "vault_unreachable", "{out}");
    assert!(
        vault.text("#pairings").is_empty(),
        "{}",
        vault.text("#pairings")
    );
}

/// Installed in the bridge's tab before the bridge's own script, as an agent with DevTools
/// control can: every frame the bridge sends on any WebSocket is copied, and each socket is
/// kept, so the agent can replay, reorder, alter and forge frames on the bridge's own link.
const CAPTURE: &str = r#"(() => {
  const sent = [], sockets = [];
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (!sockets.includes(this)) sockets.push(this);
    if (data instanceof ArrayBuffer) sent.push(new Uint8Array(data.slice(0)));
    else if (ArrayBuffer.isView(data))
      sent.push(new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)));
    return send.call(this, data);
  };
  window.__agent = { sent, sockets };
})()"#;

/// The person's facts as `create_profile` types them, and the passphrase: none may ever be in
/// the agent's browser. (`nordhafen` is not among them: the housing site names it in its own
/// question.)
const FACTS: [&str; 6] = [
    "28400",
    "28,400",
    "28.400",
    "1990-02-28",
    "asthma",
    tacit_e2e::wallet::PASS,
];

/// Rows in the vault's log of what sites were told (one per comparison answered).
fn logged(vault: &Wallet<'_>) -> u64 {
    vault
        .page
        .eval("document.querySelectorAll('#log li:not(.empty)').length")
        .unwrap()
        .as_u64()
        .unwrap()
}

fn wait_logged(vault: &Wallet<'_>, rows: u64) {
    let deadline = Instant::now() + WAIT;
    while logged(vault) != rows {
        assert!(
            Instant::now() < deadline,
            "the vault's log has {} rows, not {rows}",
            logged(vault)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until the agent's browser lists `tool` (or, with `present == false`, no longer does).
fn wait_listed(bridge: &mut Page<'_>, tool: &str, present: bool, why: &str) {
    let deadline = Instant::now() + WAIT;
    while tool_names(bridge).contains(&tool.to_owned()) != present {
        assert!(Instant::now() < deadline, "{tool}: {why}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Everything of the agent's own browser a DevTools agent can read: for every page target, the
/// whole JS heap (a heap snapshot), `localStorage`, the DOM, the names of its databases and
/// every cached response; and the bridge's wasm memory. Fails if the browser has a target (a worker, another page) that
/// is not read here.
fn agents_reach(agent: &Browser, bridge: &Page<'_>, others: &[&Page<'_>]) -> Vec<(String, String)> {
    let targets = agent.send("Target.getTargets", json!({})).unwrap();
    let infos = targets["targetInfos"].as_array().unwrap();
    let read: Vec<&str> = std::iter::once(bridge)
        .chain(others.iter().copied())
        .map(|p| p.target_id())
        .collect();
    for info in infos {
        let kind = info["type"].as_str().unwrap_or_default();
        let id = info["targetId"].as_str().unwrap_or_default();
        let url = info["url"].as_str().unwrap_or_default();
        // The browser's own UI (chrome:// pages) holds no page's content.
        let ui = kind == "browser_ui" && url.starts_with("chrome://");
        let blank = kind == "page" && url == "about:blank";
        assert!(
            kind == "browser" || kind == "tab" || ui || blank || read.contains(&id),
            "the agent's browser has a {kind} target this test does not read: {info}"
        );
    }
    let mut reach = Vec::new();
    for page in std::iter::once(bridge).chain(others.iter().copied()) {
        let url = page
            .eval("location.href")
            .unwrap()
            .as_str()
            .unwrap()
            .to_owned();
        reach.push((
            format!("{url} heap"),
            page.heap_strings().unwrap().join("\n"),
        ));
        let stored = page
            .eval("JSON.stringify(Object.entries(localStorage))")
            .unwrap();
        reach.push((
            format!("{url} localStorage"),
            stored.as_str().unwrap().to_owned(),
        ));
        let dom = page.eval("document.documentElement.outerHTML").unwrap();
        reach.push((format!("{url} DOM"), dom.as_str().unwrap().to_owned()));
        let databases = page
            .eval("(async () => (await indexedDB.databases()).map(d => d.name))()")
            .unwrap();
        reach.push((format!("{url} IndexedDB names"), databases.to_string()));
        let cached = page
            .eval(
                "(async () => { const out = []; for (const k of await caches.keys()) { \
                   const c = await caches.open(k); for (const r of await c.keys()) \
                   out.push(k + ' ' + r.url + ' ' + await (await c.match(r)).text()); } \
                   return out.join('\\n'); })()",
            )
            .unwrap();
        reach.push((
            format!("{url} caches"),
            cached.as_str().unwrap_or_default().to_owned(),
        ));
    }
    let memory = bridge
        .eval(
            "(async () => { const m = await (await import('/pkg/tacit_bridge.js')).default(); \
               return new TextDecoder('latin1').decode(new Uint8Array(m.memory.buffer)); })()",
        )
        .unwrap();
    let memory = memory.as_str().unwrap().to_owned();
    assert!(
        memory.len() > 1 << 16,
        "the bridge's wasm memory was not read"
    );
    reach.push(("the bridge's wasm memory".into(), memory));
    reach
}

fn assert_holds_none_of_the_persons_facts(reach: &[(String, String)]) {
    for (what, haystack) in reach {
        for needle in FACTS {
            assert!(
                !haystack.contains(needle),
                "the agent's {what} holds {needle:?}"
            );
        }
    }
}

/// Issue 29 end to end against the strongest agent: the agent's browser (the bridge and the
/// housing site) is under the test's full DevTools control, the person's vault is in another
/// browser. The site accepts what the person released; the agent, reading every page's heap,
/// storage and DOM, adding a virtual authenticator, rewriting its pages and replaying,
/// reordering, altering and forging frames on the bridge's link, gets no fact, no grant and no
/// extra answer. The four attacks that broke the wallet page in the agent's own browser each
/// fail here: there is no profile to read, no install key to sign with, no memory to roll back
/// and no signer address to rewrite. Revoke withdraws the tool at once; a relay that goes down
/// and comes back brings the tools back; a closed vault is `vault_unreachable`; a pairing the
/// person ended does not come back from a restored storage.
#[test]
fn the_strongest_agent_in_its_own_browser_gets_nothing_and_the_site_accepts_what_the_person_released()
 {
    let _serial = tacit_e2e::serial();
    let mut relay = TestRelay::start().unwrap();
    let vault_site = tacit_e2e::serve_site("vault").unwrap();
    let bridge_site = tacit_e2e::serve_site("bridge").unwrap();
    let signing = SigningKey::from_bytes(&[29; 32]);
    let keys = KeyStore::from_signing_key(signing, system_now().plus_millis(-3_600_000));
    let signer = TestSigner::start(keys, &[&vault_site.origin()]).unwrap();
    let housing = TestSite::start("housing", &format!("{}/v1/keys", signer.url())).unwrap();
    let person = Browser::launch().unwrap();
    let agent = Browser::launch().unwrap();
    let query = format!("?relay={}", relay.url());

    // The person's device: the vault, enrolled with the signer, holding the profile.
    let mut vault = Wallet::open(&person, &vault_site, &query);
    vault.enrol(&signer.url(), &signer.enrolment_code().unwrap());
    vault.create_profile();
    // The agent's device: the bridge, with the agent's frame capture in it before its script.
    let mut bridge =
        bridge_tab::open_with(&agent, &bridge_site.url(&format!("/{query}")), &[CAPTURE]).unwrap();
    bridge_tab::pair(&vault, &bridge).unwrap();
    let paired_storage = bridge
        .eval("JSON.stringify(Object.entries(localStorage))")
        .unwrap();
    let mut site = SiteTab::open(&agent, &housing, "", HOUSING_TOOLS);

    // Attack 4 of the issue: the agent plants a signer address of its own wherever the wallet
    // page used to keep one. The vault keeps its own, in another browser: nothing here is read.
    for page in [&bridge, &site.page] {
        page.eval(
            "(async () => { localStorage.setItem('tacit-wallet/signer', 'http://127.0.0.1:9'); \
               await new Promise((ok, no) => { const r = indexedDB.open('tacit-wallet', 1); \
                 r.onupgradeneeded = () => r.result.createObjectStore('install'); \
                 r.onsuccess = () => { const t = r.result.transaction('install', 'readwrite'); \
                   t.objectStore('install').put({ signer: 'http://127.0.0.1:9' }, 'current'); \
                   t.oncomplete = ok; t.onerror = no; }; r.onerror = no; }); return true; })()",
        )
        .unwrap();
    }

    // The whole flow, the agent calling tools only on the bridge, the person acting in the
    // vault: the site accepts the receipt the real signer signed for the person's release.
    let mut say = |line: &str| println!("{line}");
    let answer = agent::run_flow_via(
        &mut bridge,
        Some(&vault.page),
        &mut site.page,
        agent::HOUSING,
        Person::ScriptedStandIn,
        &mut say,
    )
    .unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(answer["result"]["accepted"], true, "{answer}");
    assert!(
        tool_names(&mut vault.page).is_empty(),
        "the vault registered tools"
    );

    // A second request, held. The agent adds a virtual authenticator to its browser, rewrites
    // the bridge's page to say "granted" and clicks everything in it: the request stays held,
    // since only the person's act in the vault grants.
    let policy = site.requirements();
    let held = call(&mut bridge, "request_claims", policy.clone());
    assert_eq!(held["result"]["status"], "held", "{held}");
    let id = held["result"]["request_id"].as_str().unwrap().to_owned();
    bridge.send("WebAuthn.enable", json!({})).unwrap();
    bridge
        .send(
            "WebAuthn.addVirtualAuthenticator",
            json!({ "options": { "protocol": "ctap2", "transport": "internal",
                "hasResidentKey": true, "hasUserVerification": true, "isUserVerified": true,
                "automaticPresenceSimulation": true } }),
        )
        .unwrap();
    bridge
        .eval(
            "(() => { document.body.insertAdjacentHTML('beforeend', \
               '<button id=fake data-action=grant>Grant</button><p>granted</p>'); \
               document.getElementById('fake').click(); return true; })()",
        )
        .unwrap();
    bridge.click("#fake").unwrap();
    vault
        .page
        .wait_for(&format!("!!document.getElementById('req-{id}')"), WAIT)
        .unwrap();
    let still = call(&mut bridge, "check_request", json!({ "request_id": id }));
    assert_eq!(still["result"]["status"], "held", "{still}");

    // The person grants in the vault; the claim tool appears in the agent's browser.
    let checked = grant_in_vault(&vault, &mut bridge, &id);
    let tools = granted_tools(&checked);
    assert!(!tools.is_empty(), "{checked}");
    let tool = tools[0].clone();
    bridge.wait_tool(&tool, WAIT).unwrap();

    // One honest call is one row in the vault's log. The frame that carried it, replayed;
    // an older frame sent after it (a reorder); the same frame with one bit flipped; 80 bytes
    // of a stranger: none is answered or logged, and the next honest call still is.
    let rows = logged(&vault);
    let before: u64 = bridge
        .eval("window.__agent.sent.length")
        .unwrap()
        .as_u64()
        .unwrap();
    let out = call(&mut bridge, &tool, json!({}));
    assert_eq!(out["ok"], true, "{out}");
    wait_logged(&vault, rows + 1);
    let after: u64 = bridge
        .eval("window.__agent.sent.length")
        .unwrap()
        .as_u64()
        .unwrap();
    assert!(after > before, "the agent saw no frame of the call");
    let injected = bridge
        .eval(&format!(
            "(() => {{ const a = window.__agent; const s = a.sockets[a.sockets.length - 1]; \
               const frame = a.sent[{last}]; \
               const older = a.sent.slice(0, {before}).filter(f => f.length > 16).pop(); \
               const flipped = new Uint8Array(frame); flipped[flipped.length - 1] ^= 1; \
               const stranger = new Uint8Array(80); crypto.getRandomValues(stranger); \
               for (const f of [frame, older, flipped, stranger, frame]) s.send(f); \
               return [frame.length, older.length]; }})()",
            last = after - 1
        ))
        .unwrap();
    assert!(injected[0].as_u64().unwrap() > 16, "{injected}");
    let out = call(&mut bridge, &tool, json!({}));
    assert_eq!(out["ok"], true, "the honest call after the attack: {out}");
    wait_logged(&vault, rows + 2);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        logged(&vault),
        rows + 2,
        "a replayed or forged frame was answered"
    );

    // Everything the agent can read in its own browser, after all of that: no fact of the
    // person's, no database (no install key, no holder key), nothing but the pairing.
    // A string the page holds, made at run time (not in any source): the heap read must see it.
    bridge
        .eval("window.__probe = ['agent', 'probe', String(6 * 7)].join('-'); true")
        .unwrap();
    let reach = agents_reach(&agent, &bridge, &[&site.page]);
    for (what, text) in &reach {
        println!("read {what}: {} bytes", text.len());
    }
    assert_holds_none_of_the_persons_facts(&reach);
    // The reads do see what the bridge holds (its tools, the claim tool the person granted),
    // so a fact would have been seen there too.
    for (what, needle) in [
        ("heap", "agent-probe-42"),
        ("wasm memory", "claim.income_below."),
    ] {
        assert!(
            reach
                .iter()
                .any(|(w, text)| w.ends_with(what) && text.contains(needle)),
            "the agent's {what} reads did not see {needle:?}: the scan reads nothing"
        );
    }
    let bridge_url = bridge.eval("location.href").unwrap();
    let bridge_url = bridge_url.as_str().unwrap();
    let stored = &reach
        .iter()
        .find(|(what, _)| what == &format!("{bridge_url} localStorage"))
        .unwrap()
        .1;
    assert!(stored.contains("tacit-bridge/pairing"), "{stored}");
    for (what, text) in &reach {
        if what.ends_with("IndexedDB names") {
            // Only the database the agent planted itself.
            assert_eq!(text, r#"["tacit-wallet"]"#, "{what}");
        }
    }

    // The person revokes in the vault: the tool is withdrawn from the agent's browser at once.
    vault.front();
    let grant = tool.rsplit('.').next().unwrap().to_owned();
    vault
        .page
        .click(&format!("[data-action=revoke][data-id={grant}]"))
        .unwrap();
    wait_listed(
        &mut bridge,
        &tool,
        false,
        "stayed after the person revoked it",
    );
    // Not in the registry any more: there is nothing to call.
    let gone = bridge.call_tool(&tool, json!({}));
    assert!(gone.is_err(), "a revoked tool was called: {gone:?}");

    // A new grant; then the relay goes down and comes back: the tool goes, and returns.
    let policy = site.requirements();
    let held = call(&mut bridge, "request_claims", policy);
    assert_eq!(held["result"]["status"], "held", "{held}");
    let id = held["result"]["request_id"].as_str().unwrap().to_owned();
    vault
        .page
        .wait_for(&format!("!!document.getElementById('req-{id}')"), WAIT)
        .unwrap();
    let checked = grant_in_vault(&vault, &mut bridge, &id);
    let tool = granted_tools(&checked)[0].clone();
    bridge.wait_tool(&tool, WAIT).unwrap();
    relay.restart().unwrap();
    wait_listed(&mut bridge, &tool, false, "stayed while the relay was down");
    wait_listed(&mut bridge, &tool, true, "did not return with the relay");
    let out = call(&mut bridge, &tool, json!({}));
    assert_eq!(out["ok"], true, "after the relay came back: {out}");

    // The person closes the vault: every claim tool goes and calls are unreachable; the
    // person opens it again: the link returns (locked, so no claim tool until a new grant).
    drop(vault);
    wait_listed(&mut bridge, &tool, false, "stayed after the vault closed");
    bridge_tab::wait_state(&bridge, "unreachable", WAIT).unwrap();
    let out = call(&mut bridge, "wallet_status", json!({}));
    assert_eq!(out["error"]["code"], "vault_unreachable", "{out}");
    let vault = Wallet::open(&person, &vault_site, &query);
    bridge_tab::wait_state(&bridge, "connected", WAIT).unwrap();
    let status = poll(&mut bridge, "wallet_status", json!({}), |o| o["ok"] == true);
    assert_eq!(status["ok"], true, "{status}");

    // The person unpairs: the bridge forgets the pairing and offers a new code. The agent
    // restores the storage it saved while paired and reloads: the ended pairing does not come
    // back.
    vault.front();
    vault.page.click("#pairings button").unwrap();
    vault.wait_text("#pair-msg", "Unpaired");
    bridge_tab::wait_state(&bridge, "offering", WAIT).unwrap();
    bridge
        .eval(&format!(
            "(() => {{ localStorage.clear(); for (const [k, v] of {}) localStorage.setItem(k, v); \
               return localStorage.length; }})()",
            paired_storage.as_str().unwrap()
        ))
        .unwrap();
    bridge.reload().unwrap();
    bridge_tab::wait_state(&bridge, "unreachable", WAIT).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(bridge_tab::state(&bridge).unwrap(), "unreachable");
    let out = call(&mut bridge, "wallet_status", json!({}));
    assert_eq!(out["error"]["code"], "vault_unreachable", "{out}");
}
