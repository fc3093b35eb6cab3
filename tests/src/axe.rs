//! axe-core, the accessibility checker the UI tests run in a page: its source (installed by
//! `npm ci` in `interop/`, pinned in `interop/package.json`) and one line per violation.

#![allow(clippy::unwrap_used, clippy::panic)] // a test helper: failures are test failures

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use crate::Page;

fn interop_dir() -> PathBuf {
    crate::workspace_root().join("interop")
}

/// axe-core's source, installed by `npm ci` in `interop/` if it is not there yet. Fails (never
/// skips) with the install command when Node is missing.
pub fn source() -> String {
    let file = interop_dir().join("node_modules/axe-core/axe.min.js");
    if !file.is_file() {
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--prefer-offline"])
            .current_dir(interop_dir())
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "running npm ci failed ({e}); install Node with: apt-get install -y nodejs npm"
                )
            });
        assert!(
            out.status.success() && file.is_file(),
            "`npm ci` in interop/ did not install axe-core (run it by hand: cd interop && npm ci):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::read_to_string(&file).unwrap()
}

/// Runs axe-core (`source`, from [`source`]) on the whole page; one line per violation (rule,
/// impact, the elements, help).
pub fn violations(page: &Page<'_>, source: &str) -> Vec<String> {
    if page.eval("typeof window.axe === 'object'").unwrap() != json!(true) {
        page.eval(source).unwrap();
    }
    let out = page
        .eval(
            "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => \
               v.id + ' (' + v.impact + '): ' + v.nodes.map((n) => n.target.join(' ') + \
               (n.failureSummary ? ' [' + n.failureSummary.replace(/\\s+/g, ' ') + ']' : '')).join('; ') + \
               ' — ' + v.help))",
        )
        .unwrap();
    out.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .collect()
}
