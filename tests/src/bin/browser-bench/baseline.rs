//! The baseline for items 3 and 4: a plain JavaScript tool on the same page, registered and then
//! withdrawn by `abort()` from a page timer (so that this process is already waiting for the
//! event), measured in small runs between the batches of item 3's expiries so that both see the
//! same load on this shared machine. From `abort()` to `toolchange` and to `WebMCP.toolsRemoved` in the agent, it is what
//! Chromium itself takes; the wallet's withdrawals (by expiry, from a timer, and by revoke, from
//! a click) are compared with it from the same starting point, the `abort()` the wallet calls.
//!
//! Three controls vary what the baseline leaves out: the task that aborts also rewrites a 250-row
//! list (about what the wallet's redraw does), and/or the abort comes from a real mouse click on
//! a button the bench adds (as a revoke does) rather than from a timer.

use std::time::Duration;

use serde_json::{Value, json};
use tacit_e2e::Page;
use tacit_e2e::wallet::WAIT;

use crate::registry::{Change, Expiry, GrantRevoke, Trio, page_record};
use crate::stats::{Samples, ms, ratio};
use crate::{ClockOffset, Res, epoch_ms};

/// How the plain tool is withdrawn.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// By a real mouse click on a button (else a page timer).
    pub click: bool,
    /// The same task then rewrites a 250-row list.
    pub rewrite: bool,
}

impl Variant {
    pub const ALL: [Variant; 4] = [
        Variant {
            click: false,
            rewrite: false,
        },
        Variant {
            click: false,
            rewrite: true,
        },
        Variant {
            click: true,
            rewrite: false,
        },
        Variant {
            click: true,
            rewrite: true,
        },
    ];

    fn label(self) -> &'static str {
        match (self.click, self.rewrite) {
            (false, false) => {
                "plain JS tool, `abort()` from a page timer (**baseline**; measured between the \
                 batches of item 3's expiries)"
            }
            (false, true) => "control: page timer, `abort()` then a 250-row rewrite in that task",
            (true, false) => "control: real click on a button, `abort()`",
            (true, true) => "control: real click, `abort()` then a 250-row rewrite in that task",
        }
    }

    fn key(self) -> &'static str {
        match (self.click, self.rewrite) {
            (false, false) => "timer",
            (false, true) => "timer_rewrite",
            (true, false) => "click",
            (true, true) => "click_rewrite",
        }
    }
}

const SETUP_JS: &str = "(() => { if (window.__rewrite) return true; \
     const box = document.createElement('ol'); box.id = 'bench-rewrite'; \
     const button = document.createElement('button'); button.id = 'bench-withdraw'; \
     button.textContent = 'Withdraw (benchmark)'; \
     document.body.append(button, box); \
     window.__rewrite = () => { box.textContent = ''; for (let i = 0; i < 250; i++) { \
       const li = document.createElement('li'); li.textContent = 'row ' + i + ' at ' + \
       performance.now(); box.appendChild(li); } }; \
     button.addEventListener('click', () => { window.__plain.abort(); \
       if (window.__plainRewrite) window.__rewrite(); }); \
     return true; })()";

/// Withdraws `n` plain JS tools one at a time, each 20 ms after registering it, as `variant`
/// says; their names are numbered from `first`.
pub fn plain_tools(
    page: &mut Page<'_>,
    first: usize,
    n: usize,
    variant: Variant,
    clock: &ClockOffset,
) -> Res<Trio> {
    page.eval(SETUP_JS)?;
    page.eval(&format!(
        "window.__plainRewrite = {}; true",
        variant.rewrite
    ))?;
    let mut trio = Trio::default();
    for i in first..first + n {
        let name = format!("bench_plain_{}_{i}", variant.key());
        page.eval(&format!(
            "(() => {{ window.__plain = new AbortController(); \
             return document.modelContext.registerTool({{ name: {name:?}, \
               description: 'A plain tool, withdrawn at once; a baseline for the benchmark.', \
               execute: async () => ({{ ok: true }}) }}, {{ signal: window.__plain.signal }}) \
             .then(() => true); }})()"
        ))?;
        page.wait_tool(&name, WAIT)?;
        std::thread::sleep(Duration::from_millis(20));
        if variant.click {
            page.click("#bench-withdraw")?;
        } else {
            page.eval(
                "setTimeout(() => { window.__plain.abort(); \
                 if (window.__plainRewrite) window.__rewrite(); }, 5); true",
            )?;
        }
        page.wait_event(
            "WebMCP.toolsRemoved",
            |p| {
                p["tools"]
                    .as_array()
                    .is_some_and(|ts| ts.iter().any(|t| t["name"].as_str() == Some(&name)))
            },
            WAIT,
        )?;
        let at = epoch_ms();
        let record = page_record(page, &name, Change::Removed, "none", "none")?;
        let call = record["call"]["perf"].as_f64().ok_or("no abort stamp")?;
        trio.push(&record, Some(at), call, false, clock)?;
    }
    Ok(trio)
}

/// Removes the button and list [`plain_tools`] added.
pub fn clean_up(page: &Page<'_>) -> Res<()> {
    page.eval(
        "document.getElementById('bench-withdraw').remove(); \
         document.getElementById('bench-rewrite').remove(); delete window.__rewrite; true",
    )?;
    Ok(())
}

/// The comparison table: from `abort()` on, the wallet's withdrawals against the plain tool's.
pub fn markdown(plain: &[(Variant, Trio)], expiry: &Expiry, revoke: &GrantRevoke) -> String {
    let mut out = format!(
        "### After the registry change: the wallet against a plain JS tool\n\n\
         From the moment `abort()` returns (the tool is gone from the registry) to the two \
         notifications; medians with p90 in brackets, {} withdrawals each, on the same page.\n\n\
         | Withdrawn by | `abort()` → `toolsRemoved` in the agent | / baseline | `abort()` → `toolchange` in the page | / baseline |\n\
         |---|---|---|---|---|\n",
        revoke.revoke.call_to_agent.len()
    );
    let cell = |s: &Samples| format!("{} ({})", ms(s.median()), ms(s.pct(0.90)));
    let Some((_, base)) = plain.first() else {
        return out;
    };
    let mut row = |label: &str, t: &Trio| {
        out.push_str(&format!(
            "| {label} | {} | {} | {} | {} |\n",
            cell(&t.call_to_agent),
            ratio(t.call_to_agent.median(), base.call_to_agent.median()),
            cell(&t.call_to_event),
            ratio(t.call_to_event.median(), base.call_to_event.median()),
        ));
    };
    for (variant, trio) in plain {
        row(variant.label(), trio);
    }
    row("the wallet, expiry (its deadline timer)", &expiry.trio);
    row(
        "the wallet, revoke (a real click on Revoke)",
        &revoke.revoke,
    );
    out.push_str(
        "\nThe wallet withdraws a tool and ends its task; it redraws what changed in a later \
         task. Chromium sends both notifications from later tasks; the controls show how much \
         a plain tool's figure grows when its task also changes the DOM, or comes from a \
         click. The withdrawal itself does not wait: `getTools()` no longer lists a tool once \
         `abort()` has returned.\n\n",
    );
    out
}

/// For `samples.json`.
pub fn json(plain: &[(Variant, Trio)]) -> Value {
    let mut map = serde_json::Map::new();
    for (variant, trio) in plain {
        map.insert(
            variant.key().to_owned(),
            json!({
                "abort_to_agent_ms": trio.call_to_agent.json(),
                "abort_to_toolchange_ms": trio.call_to_event.json(),
            }),
        );
    }
    Value::Object(map)
}
