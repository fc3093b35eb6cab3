//! Items 3 and 4 (and item 7's grant line): how fast the browser's registry follows the grants.
//!
//! Each registry change is seen by three observers, all on this machine's wall clock:
//! - **registry**: the bench wraps `document.modelContext.registerTool` and
//!   `AbortController.prototype.abort` in the page (instrumentation only: both call through
//!   unchanged) and stamps the moment the call that registers or withdraws a claim tool returns.
//!   Tools registered from then on also get their `execute` wrapped, to stamp each execution's
//!   start and settlement (item 2).
//!   Withdrawal is synchronous: `getTools()` no longer lists the tool after `abort()`.
//! - **`toolchange`**: when page scripts are told. Chromium dispatches it from a later task, so
//!   it also waits for the rest of the wallet's task and, after a click, for more
//!   (see the `baseline` module, which measures the same for plain JS tools).
//! - **agent**: this process stamps `WebMCP.toolsAdded`/`toolsRemoved` when it has the event in
//!   hand (it is blocked reading the socket, so this is an upper bound on arrival), converted to
//!   the page's clock with the offset measured by [`crate::ClockOffset`].
//!
//! A capture-phase `click` listener stamps the person's clicks. A grant's deadline is the
//! page's own `expires_at_ms` (its `Date.now()` at grant + 2,000 ms, read back through
//! `check_request`), so the in-page expiry figures need no clock alignment.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tacit_e2e::Page;
use tacit_e2e::wallet::{WAIT, Wallet};

use crate::stats::{Samples, ms};
use crate::{ClockOffset, Res, epoch_ms, num};

const WATCHER_JS: &str = r#"
(() => {
  if (window.__bench) return true;
  const mc = document.modelContext;
  const B = window.__bench = { registered: {}, aborted: {}, changeAdded: {}, changeRemoved: {},
                               clicks: [], known: new Set() };
  const stamp = () => ({ perf: performance.now(), date: Date.now() });
  const bySignal = new WeakMap();
  B.execs = [];
  const register = mc.registerTool;
  mc.registerTool = function (tool, options) {
    // Each execution is stamped too (item 2): when it starts and when its promise settles.
    const execute = tool.execute;
    const name = tool.name;
    const timed = Object.assign({}, tool, { execute: async function (...args) {
      const t0 = performance.now();
      try { return await execute.apply(this, args); }
      finally { B.execs.push({ name, t0, t1: performance.now() }); }
    } });
    const result = register.call(this, timed, options);
    if (options && options.signal) bySignal.set(options.signal, name);
    B.registered[name] = stamp();
    return result;
  };
  const abort = AbortController.prototype.abort;
  AbortController.prototype.abort = function (...args) {
    const result = abort.apply(this, args);
    const name = bySignal.get(this.signal);
    if (name !== undefined) B.aborted[name] = stamp();
    return result;
  };
  const names = () => mc.getTools().then((ts) => ts.map((t) => t.name));
  B.chain = names().then((ns) => { B.known = new Set(ns); });
  mc.addEventListener('toolchange', () => {
    const at = stamp();
    const snapshot = names();
    B.chain = B.chain.then(() => snapshot).then((ns) => {
      const now = new Set(ns);
      for (const n of now) if (!B.known.has(n)) B.changeAdded[n] = at;
      for (const n of B.known) if (!now.has(n)) B.changeRemoved[n] = at;
      B.known = now;
    });
  });
  // Capture on window runs before the wallet's listener on document; bubbling on window after.
  window.addEventListener('click', (e) => {
    const b = e.target && e.target.closest ? e.target.closest('[data-action]') : null;
    if (b) B.clicks.push({ action: b.getAttribute('data-action'), id: b.getAttribute('data-id'),
                           perf: performance.now(), date: Date.now(), end: null });
  }, true);
  window.addEventListener('click', () => {
    const last = B.clicks[B.clicks.length - 1];
    if (last && last.end === null) last.end = performance.now();
  });
  return true;
})()
"#;

/// Installs the page-side instrumentation (once per document).
pub fn install_watcher(page: &Page<'_>) -> Res<()> {
    page.eval(WATCHER_JS)?;
    Ok(())
}

/// Registration or withdrawal.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Change {
    Added,
    Removed,
}

/// What the page recorded about `tool` (waiting up to 5 s for both the call and its
/// `toolchange`), with the last click on `action` with `id`.
pub(crate) fn page_record(
    page: &Page<'_>,
    tool: &str,
    change: Change,
    action: &str,
    id: &str,
) -> Res<Value> {
    let (call, event) = match change {
        Change::Added => ("registered", "changeAdded"),
        Change::Removed => ("aborted", "changeRemoved"),
    };
    let js = format!(
        "(async () => {{ const B = window.__bench; const ready = () => B.{call}[{tool:?}] && B.{event}[{tool:?}]; \
           for (let i = 0; i < 1000 && !ready(); i++) {{ \
             await B.chain; await new Promise((r) => setTimeout(r, 5)); }} \
           await B.chain; \
           return {{ call: B.{call}[{tool:?}] || null, event: B.{event}[{tool:?}] || null, \
             click: B.clicks.filter(c => c.action === {action:?} && c.id === {id:?}).pop() || null, \
             origin: performance.timeOrigin, visibility: document.visibilityState }}; }})()"
    );
    let record = page.eval(&js)?;
    if record["call"].is_null() || record["event"].is_null() {
        return Err(format!("the page did not record {tool} ({change:?}): {record}").into());
    }
    Ok(record)
}

/// One registry change as its three observers saw it, each as ms after a start.
#[derive(Debug, Default)]
pub struct Trio {
    /// `registerTool`/`abort()` returned (the registry changed).
    pub registry: Samples,
    /// `toolchange` dispatched in the page.
    pub event: Samples,
    /// `toolsAdded`/`toolsRemoved` in the agent process.
    pub agent: Samples,
    /// The wallet's click handler returned (clicks only): gate and registry done (the redraw
    /// follows in a later task).
    pub handler: Samples,
    /// From the registry change itself to the agent's event …
    pub call_to_agent: Samples,
    /// … and to `toolchange` (both `performance.now()`).
    pub call_to_event: Samples,
}

impl Trio {
    /// Adds `other`'s samples to these.
    pub fn extend(&mut self, other: &Trio) {
        self.registry.extend(&other.registry);
        self.event.extend(&other.event);
        self.agent.extend(&other.agent);
        self.handler.extend(&other.handler);
        self.call_to_agent.extend(&other.call_to_agent);
        self.call_to_event.extend(&other.call_to_event);
    }

    /// Adds one change: `record` from [`page_record`], `agent_at` the bench-clock epoch ms it
    /// reached the agent (if it did), `start` on the page's clock — `Date.now()` ms if
    /// `by_date`, else `performance.now()` ms.
    pub(crate) fn push(
        &mut self,
        record: &Value,
        agent_at: Option<f64>,
        start: f64,
        by_date: bool,
        clock: &ClockOffset,
    ) -> Res<()> {
        let key = if by_date { "date" } else { "perf" };
        self.registry.push(num(&record["call"], key)? - start);
        self.event.push(num(&record["event"], key)? - start);
        if let Some(end) = record["click"]["end"].as_f64().filter(|_| !by_date) {
            self.handler.push(end - start);
        }
        let call = num(&record["call"], "perf")?;
        self.call_to_event
            .push(num(&record["event"], "perf")? - call);
        if let Some(at) = agent_at {
            let origin = num(record, "origin")?;
            let start_epoch = if by_date { start } else { origin + start };
            self.agent.push(clock.to_page(at) - start_epoch);
            self.call_to_agent.push(clock.to_page(at) - (origin + call));
        }
        Ok(())
    }

    /// `intro` (ending in the table's head) followed by the rows of a table whose event row is
    /// "`toolchange` dispatched in the page".
    fn table(&self, intro: String, call: &str, agent: &str) -> String {
        let mut out = intro;
        out.push_str(&self.rows(call, "`toolchange` dispatched in the page", agent));
        out
    }

    fn rows(&self, call: &str, event: &str, agent: &str) -> String {
        let mut out = String::new();
        let handler =
            "the wallet's click handler returns (gate, registry; the redraw is a later task)";
        for (name, s) in [
            (call, &self.registry),
            (handler, &self.handler),
            (agent, &self.agent),
            (event, &self.event),
        ] {
            if s.len() == 0 {
                continue;
            }
            out.push_str(&format!(
                "| {name} | {} | {} | {} | {} | {} |\n",
                ms(s.median()),
                ms(s.pct(0.90)),
                ms(s.pct(0.99)),
                ms(s.max()),
                s.len()
            ));
        }
        out
    }

    fn json(&self) -> Value {
        json!({
            "registry_ms": self.registry.json(),
            "toolchange_ms": self.event.json(),
            "agent_ms": self.agent.json(),
            "click_handler_ms": self.handler.json(),
            "registry_change_to_agent_ms": self.call_to_agent.json(),
            "registry_change_to_toolchange_ms": self.call_to_event.json(),
        })
    }
}

const TABLE_HEAD: &str = "| p50 | p90 | p99 | max | n |\n|---|---|---|---|---|---|\n";

fn single_claim(origin: &str, nonce: &str) -> Value {
    json!({
        "origin": origin,
        "nonce": nonce,
        "claims": [{ "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } }],
    })
}

const ORIGINS: [&str; 2] = ["http://127.0.0.1:8081", "http://127.0.0.1:8082"];

#[derive(Debug, Default)]
pub struct Expiry {
    /// From the deadline (page `Date.now()` ms).
    pub trio: Trio,
    pub agent_missed: usize,
    pub batch: usize,
    pub visibility: String,
    pub clock: Option<ClockOffset>,
}

/// Expiries granted at a time (at most 16 requests may wait).
pub const EXPIRY_BATCH: usize = 10;

/// Item 3: `n` one-claim requests granted for 2 s, ten at a time (at most 16 may wait), each
/// grant 100 ms after the previous so that every deadline is its own timer firing. After each
/// batch `between` runs (the bench's baseline, so that it is measured interleaved with the
/// expiries, under the same load, rather than in a block of its own).
pub fn expiries(
    wallet: &mut Wallet<'_>,
    n: usize,
    clock: &ClockOffset,
    mut between: impl FnMut(&mut Page<'_>) -> Res<()>,
) -> Res<Expiry> {
    let mut result = Expiry {
        batch: EXPIRY_BATCH,
        clock: Some(*clock),
        ..Expiry::default()
    };
    let mut done = 0;
    while done < n {
        let size = EXPIRY_BATCH.min(n - done);
        let mut ids = Vec::new();
        for i in 0..size {
            let out = wallet.call(
                "request_claims",
                single_claim(ORIGINS[i % 2], &format!("exp-{}", done + i)),
            );
            ids.push(
                out["result"]["request_id"]
                    .as_str()
                    .ok_or("request_claims gave no id")?
                    .to_owned(),
            );
        }
        let ids_js = serde_json::to_string(&ids)?;
        wallet.page.wait_for(
            &format!("{ids_js}.every(id => !!document.getElementById('req-' + id))"),
            WAIT,
        )?;
        // tool → (request id, deadline ms)
        let mut pending: BTreeMap<String, (String, i64)> = BTreeMap::new();
        for id in &ids {
            let started = Instant::now();
            // The person's real click on Grant, confirmed by the tab's virtual authenticator
            // (the page acts on trusted clicks only, and grants after the person's act).
            wallet.page.select(&format!("#dur-{id}"), "2000")?;
            tacit_e2e::wallet::tick_all(&wallet.page, &format!("#req-{id}"))?;
            wallet
                .page
                .click(&format!("[data-action=grant][data-id={id}]"))?;
            wallet.confirm_act();
            let out = wallet.poll("check_request", json!({ "request_id": id }), |o| {
                o["result"]["status"] == "granted"
            });
            let tool = &out["result"]["tools"][0];
            let (Some(name), Some(deadline)) =
                (tool["tool"].as_str(), tool["expires_at_ms"].as_i64())
            else {
                return Err(format!("check_request after the grant: {out}").into());
            };
            pending.insert(name.to_owned(), (id.clone(), deadline));
            std::thread::sleep(Duration::from_millis(100).saturating_sub(started.elapsed()));
        }
        // The agent waits for each withdrawal as it happens.
        let mut agent_seen: BTreeMap<String, f64> = BTreeMap::new();
        let wait_until = Instant::now() + Duration::from_secs(15);
        while agent_seen.len() < pending.len() && Instant::now() < wait_until {
            let left = wait_until.saturating_duration_since(Instant::now());
            let Ok(event) = wallet
                .page
                .wait_event("WebMCP.toolsRemoved", |_| true, left)
            else {
                break;
            };
            let at = epoch_ms();
            for tool in event.params["tools"].as_array().into_iter().flatten() {
                if let Some(name) = tool["name"].as_str()
                    && pending.contains_key(name)
                {
                    agent_seen.insert(name.to_owned(), at);
                }
            }
        }
        for (name, (id, deadline)) in &pending {
            let record = page_record(&wallet.page, name, Change::Removed, "grant", id)?;
            let agent = agent_seen.get(name).copied();
            if agent.is_none() {
                result.agent_missed += 1;
            }
            result
                .trio
                .push(&record, agent, *deadline as f64, true, clock)?;
            result.visibility = record["visibility"].as_str().unwrap_or("?").to_owned();
        }
        done += size;
        between(&mut wallet.page)?;
    }
    println!(
        "expiry: registry p50 {} p99 {}; agent p50 {} p99 {}",
        ms(result.trio.registry.median()),
        ms(result.trio.registry.pct(0.99)),
        ms(result.trio.agent.median()),
        ms(result.trio.agent.pct(0.99)),
    );
    Ok(result)
}

impl Expiry {
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "## 3. Expiry latency: deadline → tool withdrawn\n\n\
             {} grants of 2 s (`?short_grants=1`), one claim each, granted {} at a time 100 ms \
             apart so that each deadline is its own timer firing. The deadline is the grant's \
             `expires_at_ms` as `check_request` reports it (the page's `Date.now()` at the grant \
             + 2,000 ms). Percentiles are nearest-rank: with 50 samples p99 is the maximum. \
             The page's `document.visibilityState` was `{}`.\n\n\
             | Deadline → {TABLE_HEAD}",
            self.trio.registry.len(),
            self.batch,
            self.visibility
        );
        out.push_str(&self.trio.rows(
            "the wallet's `abort()` returns: tool gone from the registry (page `Date.now()`, 1 ms resolution)",
            "`toolchange` dispatched in the page (page `Date.now()`)",
            "`WebMCP.toolsRemoved` in the agent process",
        ));
        out.push_str(
            "\nThe registry and `toolchange` rows use the same clock as the deadline (the page's \
             `Date.now()`). The agent's row is stamped by the bench process when it holds the \
             `toolsRemoved` event and converted to the page's clock",
        );
        if let Some(c) = self.clock {
            out.push_str(&format!(
                " (page − bench offset {:.2} ms ± {:.2} ms, from the `performance.timeOrigin + \
                 performance.now()` evaluation with the shortest round trip of 20)",
                c.offset_ms, c.uncertainty_ms
            ));
        }
        out.push('.');
        if self.agent_missed > 0 {
            out.push_str(&format!(
                " {} withdrawal(s) were not seen by the agent within 15 s of the batch's grants.",
                self.agent_missed
            ));
        }
        out.push_str("\n\n");
        out
    }

    pub fn json(&self) -> Value {
        json!({
            "from_deadline": self.trio.json(),
            "agent_missed": self.agent_missed,
            "visibility": self.visibility,
        })
    }
}

#[derive(Debug, Default)]
pub struct GrantRevoke {
    /// From the Grant click (page `performance.now()`).
    pub grant: Trio,
    /// From the Revoke click.
    pub revoke: Trio,
}

/// Item 4 (and 7's grant lines): `n` one-claim requests, each granted for an hour and revoked,
/// both with real mouse clicks (`Input.dispatchMouseEvent`) on the page's buttons.
pub fn grants_and_revokes(
    wallet: &mut Wallet<'_>,
    n: usize,
    clock: &ClockOffset,
) -> Res<GrantRevoke> {
    let mut result = GrantRevoke::default();
    for i in 0..n {
        let id = wallet.request(single_claim(ORIGINS[i % 2], &format!("rev-{i}")));
        wallet.set(&format!("dur-{id}"), "3600000");
        tacit_e2e::wallet::tick_all(&wallet.page, &format!("#req-{id}"))?;
        wallet.page.tools()?; // drain queued WebMCP events: the next claim tool added is ours
        wallet
            .page
            .click(&format!("[data-action=grant][data-id={id}]"))?;
        let added =
            wallet
                .page
                .wait_event("WebMCP.toolsAdded", |p| claim_tool_in(p).is_some(), WAIT)?;
        let added_at = epoch_ms();
        let tool = claim_tool_in(&added.params)
            .ok_or("toolsAdded without a claim tool")?
            .to_owned();
        let record = page_record(&wallet.page, &tool, Change::Added, "grant", &id)?;
        let click = num(&record["click"], "perf").map_err(|_| format!("grant click: {record}"))?;
        result
            .grant
            .push(&record, Some(added_at), click, false, clock)?;

        let grant = tool.rsplit('.').next().unwrap_or_default().to_owned();
        wallet
            .page
            .click(&format!("[data-action=revoke][data-id={grant}]"))?;
        wallet.page.wait_event(
            "WebMCP.toolsRemoved",
            |p| {
                p["tools"]
                    .as_array()
                    .is_some_and(|ts| ts.iter().any(|t| t["name"].as_str() == Some(tool.as_str())))
            },
            WAIT,
        )?;
        let removed_at = epoch_ms();
        let record = page_record(&wallet.page, &tool, Change::Removed, "revoke", &grant)?;
        let click = num(&record["click"], "perf").map_err(|_| format!("revoke click: {record}"))?;
        result
            .revoke
            .push(&record, Some(removed_at), click, false, clock)?;
    }
    println!(
        "revoke: registry p50 {} agent p50 {}",
        ms(result.revoke.registry.median()),
        ms(result.revoke.agent.median())
    );
    Ok(result)
}

/// The first `claim.*` tool named in a `toolsAdded`/`toolsRemoved` event.
pub(crate) fn claim_tool_in(params: &Value) -> Option<&str> {
    params["tools"]
        .as_array()?
        .iter()
        .filter_map(|t| t["name"].as_str())
        .find(|n| n.starts_with("claim."))
}

impl GrantRevoke {
    pub fn markdown_revoke(&self) -> String {
        let intro = format!(
            "## 4. Revoke latency: click → tool withdrawn\n\n\
             {} grants (one claim, one hour), each revoked by a real mouse click \
             (`Input.dispatchMouseEvent`) on its Revoke button. The click is stamped in the page \
             by a capture-phase `click` listener, the end of the wallet's handler by a bubbling \
             one on `window` (`performance.now()`). Rows are in the order the moments come.\n\n\
             | Revoke click → {TABLE_HEAD}",
            self.revoke.registry.len()
        );
        let mut out = self.revoke.table(
            intro,
            "the wallet's `abort()` returns: tool gone from the registry",
            "`WebMCP.toolsRemoved` in the agent process (converted as in item 3)",
        );
        out.push('\n');
        out
    }

    /// Item 7's grant table.
    pub fn markdown_grant(&self) -> String {
        let intro = format!(
            "\n{} grants, each by a real mouse click on the Grant button (as in item 4), \
             confirmed by the tab's virtual authenticator (a WebAuthn assertion the wallet \
             verifies; included in the times). Here the click handler only snapshots the card \
             and starts that confirmation; the grant, its registration and the redraw run when \
             the assertion has been verified:\n\n\
             | Grant click → {TABLE_HEAD}",
            self.grant.registry.len()
        );
        let mut out = self.grant.table(
            intro,
            "the wallet's `registerTool` call returns: claim tool in the registry",
            "`WebMCP.toolsAdded` in the agent process",
        );
        out.push_str(
            "\nClaim tools do not survive a lock (locking withdraws them and unlocking restores \
             none), so “unlock to claim tools registered” is two steps the person takes: the \
             unlock (click → unlocked, above and item 1), then a grant (click → tool in the \
             registry, this table).\n\n",
        );
        out
    }

    pub fn json(&self) -> Value {
        json!({
            "from_grant_click": self.grant.json(),
            "from_revoke_click": self.revoke.json(),
        })
    }
}
