//! Issue 13's speed targets, each a ratio of two medians measured in this run: the wallet's
//! withdrawals against a plain JavaScript tool's, a claim call against the JavaScript no-op
//! (through DevTools and in the page), and the unlock task against native `Vault::open`.

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
    bound: f64,
}

impl Target {
    fn new(what: &'static str, wallet: &Samples, base: &Samples, bound: f64) -> Self {
        Self {
            what,
            wallet: wallet.median(),
            base: base.median(),
            bound,
        }
    }

    fn ratio(&self) -> f64 {
        self.wallet / self.base
    }

    fn met(&self) -> Option<bool> {
        let r = self.ratio();
        r.is_finite().then_some(r <= self.bound)
    }
}

/// The five targets of issue 13.
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
        let base = plain
            .iter()
            .find(|(v, _)| !v.click && !v.rewrite)
            .map_or(&empty, |(_, t)| t);
        let (claim, noop) = (&calls.tools[0], &calls.tools[1]);
        Self(vec![
            Target::new(
                "revoke: `abort()` → `WebMCP.toolsRemoved` in the agent, against a plain JS tool's",
                &revoke.revoke.call_to_agent,
                &base.call_to_agent,
                2.0,
            ),
            Target::new(
                "expiry: `abort()` → `WebMCP.toolsRemoved` in the agent, against a plain JS tool's",
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
                "| {} | {} | {} | {:.2}× | ≤ {:.1}× | {} |\n",
                t.what,
                ms(t.wallet),
                ms(t.base),
                t.ratio(),
                t.bound,
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
