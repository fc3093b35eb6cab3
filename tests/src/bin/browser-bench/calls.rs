//! Item 2: a claim tool's round trip through `WebMCP.invokeTool` (send → `toolResponded`, timed
//! by this process), against a trivial JavaScript tool registered on the same page, and the
//! persistent `wallet_status` for reference. Calls are interleaved in a rotating order after
//! five warm-up calls of each, each 20 ms after the previous answer.
//!
//! Each DevTools round trip is split with the page's own stamps (the `execute` wrapper that
//! [`crate::registry::install_watcher`] adds to tools registered after it: the claim tool and
//! the no-op, not `wallet_status`, which the page registered at start): send → `execute` starts,
//! `execute` running, its promise settled → `toolResponded` in this process. The same three calls
//! are then timed inside the page through `document.modelContext.executeTool`.

use serde_json::{Value, json};
use tacit_e2e::ToolStatus;
use tacit_e2e::wallet::{WAIT, Wallet};

use crate::stats::{Samples, ms, ratio};
use crate::{ClockOffset, Res, epoch_ms, num};

/// Figures for one tool.
#[derive(Debug, Default)]
pub struct ToolTimes {
    pub label: String,
    /// `invokeTool` sent → `toolResponded` received (this process's clock).
    pub devtools: Samples,
    /// Sent → the page's `execute` starts.
    pub dispatch: Samples,
    /// `execute` starts → its promise settles (in the page).
    pub execute: Samples,
    /// Settled → `toolResponded` received.
    pub respond: Samples,
    /// `executeTool` inside the page.
    pub in_page: Samples,
    /// … of which the tool's own `execute` (start → settled).
    pub in_page_execute: Samples,
}

#[derive(Debug, Default)]
pub struct Calls {
    /// Claim tool, no-op, `wallet_status`, DOM-rewriting JS tool.
    pub tools: [ToolTimes; 4],
}

/// The pause before each call, so that every call starts on an idle page and none pays for the
/// style, layout and paint that the previous answer's redraw left queued.
const GAP: std::time::Duration = std::time::Duration::from_millis(20);

const NOOP_JS: &str = "document.modelContext.registerTool({ name: 'bench_noop', \
     description: 'Does nothing; a baseline for the benchmark.', \
     inputSchema: { type: 'object', properties: {} }, \
     execute: async () => ({ ok: true }) }).then(() => true)";

/// A second control: a JS tool that rewrites 250 rows of a list on the page, about what the
/// wallet's redraw does, to show what Chromium charges a tool that changes the DOM.
const DOM_JS: &str = "(() => { const box = document.createElement('ol'); box.id = 'bench-dom'; \
     document.body.appendChild(box); \
     return document.modelContext.registerTool({ name: 'bench_dom', \
       description: 'Rewrites a list of 250 rows; a baseline for the benchmark.', \
       inputSchema: { type: 'object', properties: {} }, \
       execute: async () => { box.textContent = ''; \
         for (let i = 0; i < 250; i++) { const li = document.createElement('li'); \
           li.textContent = 'row ' + i + ' at ' + performance.now(); box.appendChild(li); } \
         return { ok: true }; } }).then(() => true); })()";

const IN_PAGE_JS: &str = r#"
(async (n, names, gap) => {
  const mc = document.modelContext;
  const all = await mc.getTools();
  const tools = names.map((name) => all.find((t) => t.name === name));
  if (tools.some((t) => !t)) throw new Error('a tool is missing from getTools()');
  const out = names.map(() => []);
  for (let i = 0; i < n + 5; i++) {
    for (let s = 0; s < names.length; s++) {
      const k = (i + s) % names.length;
      await new Promise((r) => setTimeout(r, gap));
      const t0 = performance.now();
      const text = await mc.executeTool(tools[k], {});
      const took = performance.now() - t0;
      if (JSON.parse(text).ok !== true) throw new Error(names[k] + ' answered ' + text);
      if (i >= 5) out[k].push(took);
    }
  }
  return out;
})
"#;

pub fn run(wallet: &mut Wallet<'_>, n: usize, clock: &ClockOffset) -> Res<Calls> {
    wallet.page.eval(NOOP_JS)?;
    wallet.page.eval(DOM_JS)?;
    wallet.page.wait_tool("bench_noop", WAIT)?;
    wallet.page.wait_tool("bench_dom", WAIT)?;
    let id = wallet.request(json!({
        "origin": "http://127.0.0.1:8081",
        "nonce": "bench-roundtrip",
        "claims": [{ "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } }],
    }));
    let claim_tool = wallet
        .grant(&id, "3600000", 1)
        .pop()
        .ok_or("the grant made no tool")?;
    let frame = wallet.page.frame_id().to_owned();
    let names = [
        claim_tool.as_str(),
        "bench_noop",
        "wallet_status",
        "bench_dom",
    ];
    let mut result = Calls::default();
    result.tools[0].label = format!(
        "Claim tool `{claim_tool}` (income below 30,000.00 EUR; answered from the ledger's \
         memory after the first call)"
    );
    result.tools[1].label = "Trivial JS tool `bench_noop` on the same page (baseline)".into();
    result.tools[2].label = "`wallet_status` (persistent tool, for reference)".into();
    result.tools[3].label =
        "JS tool `bench_dom` that rewrites a 250-row list (control: a tool that changes the DOM)"
            .into();

    wallet.page.eval("window.__bench.execs = []; true")?;
    let mut sent_answered: [Vec<(f64, f64)>; 4] = Default::default();
    for i in 0..n + 5 {
        for step in 0..names.len() {
            let which = (i + step) % names.len();
            std::thread::sleep(GAP);
            let sent = epoch_ms();
            let response = wallet.page.invoke_tool(&frame, names[which], json!({}))?;
            let answered = epoch_ms();
            if response.status != ToolStatus::Completed
                || response.output["ok"] != Value::Bool(true)
            {
                return Err(format!("{} answered {:?}", names[which], response.raw).into());
            }
            if which == 0 && response.output["result"]["satisfied"] != Value::Bool(true) {
                return Err(format!("the claim answered {}", response.output).into());
            }
            sent_answered[which].push((sent, answered));
            if i >= 5 {
                result.tools[which].devtools.push(answered - sent);
            }
        }
    }
    // Split each round trip with the page's stamps, k-th call ↔ k-th execution of that tool.
    let stamps = wallet
        .page
        .eval("({ origin: performance.timeOrigin, execs: window.__bench.execs.splice(0) })")?;
    let origin = num(&stamps, "origin")?;
    for (which, calls) in sent_answered.iter().enumerate() {
        let execs: Vec<&Value> = stamps["execs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["name"].as_str() == Some(names[which]))
            .collect();
        if execs.is_empty() {
            continue; // registered before the wrapper: no stamps
        }
        if execs.len() != calls.len() {
            return Err(format!(
                "{}: {} calls but {} executions",
                names[which],
                calls.len(),
                execs.len()
            )
            .into());
        }
        let times = &mut result.tools[which];
        for ((sent, answered), exec) in calls.iter().zip(execs).skip(5) {
            // Page performance.now() → this process's clock.
            let start = origin + num(exec, "t0")? - clock.offset_ms;
            let settled = origin + num(exec, "t1")? - clock.offset_ms;
            times.dispatch.push(start - sent);
            times.execute.push(settled - start);
            times.respond.push(answered - settled);
        }
    }

    let js = format!(
        "{IN_PAGE_JS}({n}, {}, {})",
        serde_json::to_string(&names)?,
        GAP.as_millis()
    );
    let in_page = wallet.page.eval(&js)?;
    let execs = wallet.page.eval("window.__bench.execs.splice(0)")?;
    for (k, tool) in result.tools.iter_mut().enumerate() {
        for v in in_page[k].as_array().into_iter().flatten() {
            tool.in_page.push(v.as_f64().ok_or("a non-number time")?);
        }
        let own = execs
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["name"].as_str() == Some(names[k]))
            .skip(5);
        for e in own {
            tool.in_page_execute.push(num(e, "t1")? - num(e, "t0")?);
        }
    }
    // The control list goes, so later measures redraw only the wallet.
    wallet
        .page
        .eval("document.getElementById('bench-dom').remove(); true")?;
    println!(
        "round trip: claim {} / noop {}",
        ms(result.tools[0].devtools.median()),
        ms(result.tools[1].devtools.median())
    );
    Ok(result)
}

fn mean(s: &Samples) -> f64 {
    if s.0.is_empty() {
        f64::NAN
    } else {
        s.0.iter().sum::<f64>() / s.0.len() as f64
    }
}

impl Calls {
    pub fn markdown(&self) -> String {
        let noop = &self.tools[1];
        let order = [
            &self.tools[1],
            &self.tools[3],
            &self.tools[0],
            &self.tools[2],
        ];
        let mut out = format!(
            "## 2. Claim-tool round trip through `WebMCP.invokeTool`\n\n\
             {} calls of each tool, interleaved (after 5 warm-up calls each), timed by the agent \
             process from sending `WebMCP.invokeTool` to receiving `WebMCP.toolResponded`. Each \
             call starts 20 ms after the previous answer, on an idle page, so that no call pays \
             for the layout and paint another's redraw left queued. Round trips come in steps of \
             about 4 ms (see below), so the mean is given beside the median.\n\n\
             | Tool | Median | Mean | p90 | p99 | Median / no-op | Mean / no-op |\n\
             |---|---|---|---|---|---|---|\n",
            noop.devtools.len()
        );
        for t in order {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                t.label,
                ms(t.devtools.median()),
                ms(mean(&t.devtools)),
                ms(t.devtools.pct(0.90)),
                ms(t.devtools.pct(0.99)),
                ratio(t.devtools.median(), noop.devtools.median()),
                ratio(mean(&t.devtools), mean(&noop.devtools)),
            ));
        }
        out.push_str(
            "\nWhere a round trip goes (medians; the page's `performance.now()` converted to the \
             agent's clock as in item 3; the wrapper that stamps `execute` is installed after the \
             page registered `wallet_status`, so that tool has no split):\n\n\
             | Tool | sent → `execute` starts | `execute` runs (until its promise settles) | settled → `toolResponded` received |\n\
             |---|---|---|---|\n",
        );
        for t in order.iter().filter(|t| t.execute.len() > 0) {
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                t.label.split(" (").next().unwrap_or_default(),
                ms(t.dispatch.median()),
                ms(t.execute.median()),
                ms(t.respond.median()),
            ));
        }
        out.push_str(&format!(
            "\nThe same calls through `document.modelContext.executeTool` inside the page \
             ({} each, interleaved, 20 ms apart, `performance.now()` around the awaited call, \
             0.1 ms resolution):\n\n\
             | Tool | Median | Mean | p90 | p99 | Median / no-op | its `execute` alone (median) |\n\
             |---|---|---|---|---|---|---|\n",
            noop.in_page.len()
        ));
        for t in order {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                t.label.split(" (").next().unwrap_or_default(),
                ms(t.in_page.median()),
                ms(mean(&t.in_page)),
                ms(t.in_page.pct(0.90)),
                ms(t.in_page.pct(0.99)),
                ratio(t.in_page.median(), noop.in_page.median()),
                ms(t.in_page_execute.median()),
            ));
        }
        let (claim, dom) = (&self.tools[0], &self.tools[3]);
        out.push_str(&format!(
            "\nA claim call goes page → wasm (`Gate::begin`/`finish`: grant check, ledger, log \
             append, the memory sealed under the cross-tab lock) and answers; the page redraws \
             what changed (the calls list, the log) in a later task, after the call's promise has \
             resolved. The claim's own `execute` takes {} (median, in the page), its in-page \
             call {}. The DOM-rewriting control, whose `execute` rewrites 250 rows before \
             answering, shows what answering after a redraw costs: its `execute` takes {}, its \
             call {}, against {} for the no-op. Over DevTools a response also waits for a floor \
             of about 7 ms after `execute` settles and arrives in steps of about 4 ms, which \
             hides most of the difference between the tools there.\n\n",
            ms(claim.in_page_execute.median()),
            ms(claim.in_page.median()),
            ms(dom.in_page_execute.median()),
            ms(dom.in_page.median()),
            ms(self.tools[1].in_page.median()),
        ));
        out
    }

    pub fn json(&self) -> Value {
        let one = |t: &ToolTimes| {
            json!({
                "label": t.label,
                "devtools_round_trip_ms": t.devtools.json(),
                "sent_to_execute_ms": t.dispatch.json(),
                "execute_ms": t.execute.json(),
                "settled_to_responded_ms": t.respond.json(),
                "in_page_execute_tool_ms": t.in_page.json(),
                "in_page_execute_ms": t.in_page_execute.json(),
            })
        };
        json!({
            "claim": one(&self.tools[0]),
            "noop": one(&self.tools[1]),
            "wallet_status": one(&self.tools[2]),
            "dom_control": one(&self.tools[3]),
        })
    }
}
