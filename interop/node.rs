//! Running the Node scripts of `interop/` from Rust tests: one copy, included by
//! `protocol/tests/sd_jwt_interop.rs`, `tests/tests/credential_interop.rs` and the OpenAPI tests
//! of the signer, the issuer and the site with
//! `#[path = "…/interop/node.rs"] mod node;`; it finds `interop/` above the including crate.
//! A missing `node` or `npm` fails the test with the install command; nothing skips.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};

use serde_json::Value;

/// How to get Node on this Debian machine.
pub const INSTALL: &str = "apt-get install -y nodejs npm";

/// The tests of one binary run on parallel threads: one `npm ci` at a time (two race in
/// `interop/node_modules` and fail with ENOTEMPTY / ENOENT).
static NPM: Mutex<()> = Mutex::new(());

/// `interop/` of the workspace: the nearest ancestor of the including crate that holds one.
pub fn interop_dir() -> PathBuf {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    crate_dir
        .ancestors()
        .map(|dir| dir.join("interop"))
        .find(|dir| dir.join("package.json").is_file())
        .unwrap_or_else(|| panic!("no interop/package.json above {}", crate_dir.display()))
}

fn require_tool(tool: &str) {
    let ok = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "`{tool}` is needed for the interop tests; install it with: {INSTALL}"
    );
}

/// `npm ci` into `interop/node_modules` unless the pinned packages are already there.
pub fn ensure_node_modules() {
    let _one_at_a_time = NPM.lock().unwrap_or_else(PoisonError::into_inner);
    require_tool("node");
    require_tool("npm");
    let dir = interop_dir();
    // Installed means: every dependency package.json names is in node_modules (a checkout
    // whose node_modules predates a new dependency installs again).
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("package.json")).unwrap_or_default())
            .unwrap_or(Value::Null);
    let wanted: Vec<PathBuf> = manifest["dependencies"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, _)| dir.join("node_modules").join(name).join("package.json"))
        .collect();
    assert!(
        !wanted.is_empty(),
        "interop/package.json lists no dependencies"
    );
    let installed = || wanted.iter().all(|p| p.exists());
    if installed() {
        return;
    }
    let out = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--prefer-offline"])
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| panic!("running npm ci failed ({e}); install Node with: {INSTALL}"));
    assert!(
        out.status.success() && installed(),
        "`npm ci` in {} failed (run it by hand: cd interop && npm ci):\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `interop/<script>` with `input` as JSON on stdin; its JSON answer.
pub fn run(script: &str, input: &Value) -> Value {
    ensure_node_modules();
    let mut child = Command::new("node")
        .arg(script)
        .current_dir(interop_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("running node failed ({e}); install it with: {INSTALL}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `interop/verify.mjs` on the cases; its verdicts in order.
pub fn verify(cases: &[Value]) -> Vec<Value> {
    let verdicts = run("verify.mjs", &Value::from(cases.to_vec()));
    let verdicts = verdicts.as_array().cloned().unwrap_or_default();
    assert_eq!(verdicts.len(), cases.len(), "one verdict per case");
    verdicts
}
