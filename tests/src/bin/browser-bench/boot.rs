//! Item 7: navigation start → wallet ready, in fresh tabs of the same browser (the profile is
//! stored, so the wallet opens locked, as it does for a returning person). `Cache-Control:
//! no-store` on every response: each load fetches and compiles the wasm anew.
//!
//! A script added with `Page.addScriptToEvaluateOnNewDocument` (it runs before the page's own)
//! stamps, relative to `performance.timeOrigin` (navigation start): `#app` shown, and the
//! `toolchange` after which `getTools()` lists the five persistent tools. "Ready" is the later
//! of the two: the person can act and the agent can call. Both are the boot module's work
//! (`web/boot`, the first load); the app's wasm is fetched on first use, so its start is timed
//! from the first act: a pointer move over the page → the app started (`#app[data-stage=app]`).

use serde_json::{Value, json};
use tacit_e2e::wallet::WAIT;
use tacit_e2e::{Browser, StaticServer};

use crate::Res;
use crate::stats::{Samples, ms};

const BOOT_JS: &str = r#"
(() => {
  const B = window.__boot = { app: null, tools5: null };
  const mc = document.modelContext;
  if (mc) mc.addEventListener('toolchange', () => {
    const t = performance.now();
    mc.getTools().then((ts) => { if (B.tools5 === null && ts.length >= 5) B.tools5 = t; });
  });
  // The first act, stamped before the page's loader sees it (this script's listener is first).
  document.addEventListener('pointermove', () => { if (B.act === undefined) B.act = performance.now(); }, { capture: true });
  new MutationObserver(() => {
    const a = document.getElementById('app');
    if (B.app === null && a && !a.hidden) B.app = performance.now();
    if (B.started === undefined && a && a.dataset.stage === 'app') B.started = performance.now();
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['hidden', 'data-stage'] });
})();
"#;

const READ_JS: &str = r#"
(() => {
  const nav = performance.getEntriesByType('navigation')[0] || {};
  const wasm = performance.getEntriesByType('resource').find((e) => e.name.endsWith('/tacit_wallet_boot_bg.wasm')) || {};
  const app = performance.getEntriesByType('resource').some((e) => e.name.endsWith('/tacit_web_bg.wasm'));
  return { app: window.__boot.app, tools5: window.__boot.tools5,
           html: nav.responseEnd ?? null, dcl: nav.domContentLoadedEventEnd ?? null,
           load: nav.loadEventEnd ?? null, wasm: wasm.responseEnd ?? null,
           locked: (document.getElementById('lock-pill') || {}).textContent, app_fetched: app };
})()
"#;

#[derive(Debug, Default)]
pub struct Ready {
    pub html: Samples,
    pub wasm: Samples,
    pub dcl: Samples,
    pub app: Samples,
    pub tools: Samples,
    pub ready: Samples,
    /// The first act (a pointer move) → the app started.
    pub started: Samples,
}

pub fn run(browser: &Browser, server: &StaticServer, query: &str, n: usize) -> Res<Ready> {
    let mut result = Ready::default();
    let url = server.url(&format!("/{query}"));
    for _ in 0..n {
        let mut page = browser.new_page()?;
        page.enable_webmcp()?;
        page.send(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": BOOT_JS }),
        )?;
        page.navigate(&url)?;
        page.wait_for(
            "window.__boot && window.__boot.app !== null && window.__boot.tools5 !== null",
            WAIT,
        )?;
        let t = page.eval(READ_JS)?;
        let get = |k: &str| t.get(k).and_then(Value::as_f64);
        let (Some(app), Some(tools)) = (get("app"), get("tools5")) else {
            return Err(format!("boot marks missing: {t}").into());
        };
        if t["locked"].as_str() != Some("Locked") {
            return Err(format!("expected a locked wallet, found {t}").into());
        }
        if t["app_fetched"] != json!(false) {
            return Err(format!("the app was fetched before first use: {t}").into());
        }
        page.send(
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseMoved", "x": 2, "y": 2 }),
        )?;
        page.wait_for(tacit_e2e::wallet::APP_STARTED, WAIT)?;
        let started = page.eval("window.__boot.started - window.__boot.act")?;
        if let Some(v) = started.as_f64() {
            result.started.push(v);
        }
        for (samples, key) in [
            (&mut result.html, "html"),
            (&mut result.wasm, "wasm"),
            (&mut result.dcl, "dcl"),
        ] {
            if let Some(v) = get(key) {
                samples.push(v);
            }
        }
        result.app.push(app);
        result.tools.push(tools);
        result.ready.push(app.max(tools));
    }
    println!("ready: {}", ms(result.ready.median()));
    Ok(result)
}

impl Ready {
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "## 7. Wallet ready, unlock and grant\n\n\
             {} loads of the wallet in fresh tabs (profile stored, so it opens locked; every \
             response is `no-store`, so each load fetches and compiles the wasm). Times from \
             navigation start (`performance.timeOrigin`), taken in the page.\n\n\
             | Navigation start → | Median | p90 | n |\n|---|---|---|---|\n",
            self.ready.len()
        );
        for (name, s) in [
            ("HTML received (`responseEnd`)", &self.html),
            ("DOMContentLoaded done", &self.dcl),
            (
                "boot module received (`tacit_wallet_boot_bg.wasm` `responseEnd`)",
                &self.wasm,
            ),
            ("`#app` shown", &self.app),
            ("five persistent tools in `getTools()`", &self.tools),
            ("**wallet ready** (the later of the two above)", &self.ready),
        ] {
            out.push_str(&format!(
                "| {name} | {} | {} | {} |\n",
                ms(s.median()),
                ms(s.pct(0.90)),
                s.len()
            ));
        }
        out.push_str(&format!(
            "\nThe app's wasm (`tacit_web_bg.wasm`) is not fetched until first use. From the \
             first act (a pointer move over the page) to the app started (`#app` \
             marked `data-stage=app`, stamped in the page by a `MutationObserver`): median {}, \
             p90 {} (n = {}).\n\n",
            ms(self.started.median()),
            ms(self.started.pct(0.90)),
            self.started.len()
        ));
        out
    }

    pub fn json(&self) -> Value {
        json!({
            "html_ms": self.html.json(),
            "dom_content_loaded_ms": self.dcl.json(),
            "wasm_received_ms": self.wasm.json(),
            "app_shown_ms": self.app.json(),
            "persistent_tools_ms": self.tools.json(),
            "ready_ms": self.ready.json(),
            "first_act_to_app_started_ms": self.started.json(),
        })
    }
}
