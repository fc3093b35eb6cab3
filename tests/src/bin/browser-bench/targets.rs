//! Issue 13's speed targets, each a ratio of two medians measured in this run: the wallet's
//! withdrawals against a plain JavaScript tool's withdrawn the same way (a revoke is a real
//! click, an expiry a page timer), a claim call against the JavaScript no-op (through DevTools
//! and in the page), and the unlock task against native `Vault::open`.
//!
//! A withdrawal from a real click reaches the agent later than one from a page timer for any
//! tool (Chromium's input handling; the click control of `baseline` is 2.5–3× the timer's on
//! this machine), so the revoke is judged against the plain tool aborted from a real click; its
//! ratio to the timer-aborted tool is reported beside it, without a bound.

use serde_json::{Value, json};

use crate::baseline::Variant;
use crate::calls::Calls;
use crate::registry::{Expiry, GrantRevoke, Trio};
use crate::stats::{Samples, ms};
use crate::unlock::Unlock;

/// One target: what, the two medians, the ratio and the bound.
struct Target {
    what: &'static str,
    wallet: f64,
    base: f64,
    /// `None`: reported for comparison, not a target.
    bound: Option<f64>,
}

impl Target {
    fn new(
        what: &'static str,
        wallet: &Samples,
        base: &Samples,
        bound: impl Into<Option<f64>>,
    ) -> Self {
        Self {
            what,
            wallet: wallet.median(),
            base: base.median(),
            bound: bound.into(),
        }
    }

    fn ratio(&self) -> f64 {
        self.wallet / self.base
    }

    fn met(&self) -> Option<bool> {
        let (r, bound) = (self.ratio(), self.bound?);
        r.is_finite().then_some(r <= bound)
    }
}

/// The five targets of issue 13, and the revoke against the timer-aborted tool for comparison.
pub struct Targets(Vec<Target>);

impl Targets {
    pub fn new(
        unlock: &Unlock,
        calls: &Calls,
        expiry: &Expiry,
        revoke: &GrantRevoke,
        plain: &[(Variant, Trio)],
    ) -> Self {
        let empty = Trio::default();
        let plain_tool = |click: bool| {
            plain
                .iter()
                .find(|(v, _)| v.click == click && !v.rewrite)
                .map_or(&empty, |(_, t)| t)
        };
        let (base, clicked) = (plain_tool(false), plain_tool(true));
        let (claim, noop) = (&calls.tools[0], &calls.tools[1]);
        Self(vec![
            Target::new(
                "revoke (a real click): `abort()` → `WebMCP.toolsRemoved` in the agent, against a \
                 plain JS tool's aborted from a real click",
                &revoke.revoke.call_to_agent,
                &clicked.call_to_agent,
                2.0,
            ),
            Target::new(
                "*for comparison:* the same revoke against a plain JS tool's aborted from a page \
                 timer (Chromium's click handling included)",
                &revoke.revoke.call_to_agent,
                &base.call_to_agent,
                None,
            ),
            Target::new(
                "expiry (a page timer): `abort()` → `WebMCP.toolsRemoved` in the agent, against a \
                 plain JS tool's aborted from a page timer",
                &expiry.trio.call_to_agent,
                &base.call_to_agent,
                2.0,
            ),
            Target::new(
                "claim call through `WebMCP.invokeTool`, against the JS no-op",
                &claim.devtools,
                &noop.devtools,
                1.2,
            ),
            Target::new(
                "claim call through in-page `executeTool`, against the JS no-op",
                &claim.in_page,
                &noop.in_page,
                3.0,
            ),
            Target::new(
                "unlock task (wasm), against native `Vault::open`",
                &unlock.work,
                &unlock.native,
                1.5,
            ),
        ])
    }

    pub fn markdown(&self) -> String {
        let mut out = String::from(
            "## Issue 13 targets (ratios of medians, same run)\n\n\
             | Target | Wallet | Baseline | Ratio | Bound | Met |\n|---|---|---|---|---|---|\n",
        );
        for t in &self.0 {
            out.push_str(&format!(
                "| {} | {} | {} | {:.2}× | {} | {} |\n",
                t.what,
                ms(t.wallet),
                ms(t.base),
                t.ratio(),
                t.bound
                    .map_or_else(|| "–".to_owned(), |b| format!("≤ {b:.1}×")),
                match t.met() {
                    Some(true) => "yes",
                    Some(false) => "**no**",
                    None => "–",
                }
            ));
        }
        out.push('\n');
        out
    }

    pub fn json(&self) -> Value {
        Value::Array(
            self.0
                .iter()
                .map(|t| {
                    json!({ "what": t.what, "wallet_ms": t.wallet, "baseline_ms": t.base,
                            "ratio": t.ratio(), "bound": t.bound, "met": t.met() })
                })
                .collect(),
        )
    }
}
