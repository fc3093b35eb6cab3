//! Issue 14, "TypeScript typings for `window.tacit`": `web/types/tacit.d.ts` compiles with the
//! pinned TypeScript (`interop/node_modules/.bin/tsc`, 5.9.3) under `--strict` for code that uses
//! it as intended, and refuses code that misuses it (each wrong use fails with the error that
//! names the mistake, not for some other reason). That its codes are exactly
//! `capability_gate::Code`'s is checked by `cargo test -p tacit-web`.
//!
//! Needs Node and npm (fails with the install command if missing); nothing skips.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

#[path = "../../interop/node.rs"]
#[allow(dead_code)]
mod node;

use std::path::{Path, PathBuf};
use std::process::Command;

fn typings() -> PathBuf {
    tacit_e2e::workspace_root().join("web/types/tacit.d.ts")
}

/// The header every usage file starts with: the typings, imported by absolute path.
fn header() -> String {
    let path = typings();
    let module = path.with_extension("").with_extension("");
    format!(
        "import type {{ TacitApi, TacitCode, TacitEnvelope, TacitTool, TacitWebmcpStatus }} \
         from {:?};\nexport type Used = TacitApi | TacitCode | TacitTool | TacitWebmcpStatus;\n\
         export type Answer = TacitEnvelope<{{ satisfied: boolean }}>;\n",
        module.display().to_string()
    )
}

/// Runs `tsc --noEmit --strict` on `files` in `dir`; (success, output).
fn tsc(dir: &Path, files: &[&str]) -> (bool, String) {
    node::ensure_node_modules();
    let tsc = node::interop_dir().join("node_modules/.bin/tsc");
    let out = Command::new(&tsc)
        .args([
            "--noEmit",
            "--strict",
            "--pretty",
            "false",
            "--target",
            "es2022",
            "--module",
            "esnext",
            "--moduleResolution",
            "bundler",
            "--lib",
            "es2022,dom",
        ])
        .args(files)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", tsc.display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

const GOOD: &str = r#"
export async function ask(): Promise<string> {
  const api = window.tacit;
  if (!api) {
    return 'document.modelContext has the tools';
  }
  const tools: TacitTool[] = api.tools();
  const names: string[] = tools.map((t) => t.name + (t.annotations.consequentialHint ? '!' : ''));
  const status: TacitWebmcpStatus = api.status();
  const out: Answer = await api.call<{ satisfied: boolean }>('claim.income_below.g1', { nonce: 'n' });
  if (out.ok) {
    const satisfied: boolean = out.result.satisfied;
    return `${satisfied} ${names.join(',')} ${status}`;
  }
  const flagged: true = out.isError;
  const code: TacitCode = out.error.code;
  switch (code) {
    case 'grant_revoked':
    case 'grant_expired':
    case 'grant_spent':
      return `ask again (${flagged})`;
    case 'busy':
    case 'unknown_tool':
      return 'the page itself refused';
    default:
      return out.error.message;
  }
}
export function generic(envelope: TacitEnvelope): unknown {
  return envelope.ok ? envelope.result : envelope.error.code;
}
"#;

/// Wrong uses, each with the TypeScript error it must fail with.
const BAD: [(&str, &str, &str); 6] = [
    (
        "no_check_for_absence.ts",
        // window.tacit is absent whenever WebMCP or the polyfill is there.
        "export const n = window.tacit.tools().length;\n",
        "TS18048",
    ),
    (
        "result_without_ok.ts",
        "export async function f(api: TacitApi) { const out: Answer = await api.call('x'); \
         return out.result.satisfied; }\n",
        "TS18048",
    ),
    (
        "unknown_code.ts",
        "export function f(e: TacitEnvelope) { return !e.ok && e.error.code === 'grant_gone'; }\n",
        "TS2367",
    ),
    (
        "code_is_not_any_string.ts",
        "export const c: TacitCode = 'declined';\n",
        "TS2322",
    ),
    (
        "refusal_is_error.ts",
        "export function f(e: TacitEnvelope) { if (!e.ok) { const no: false = e.isError; \
         return no; } return true; }\n",
        "TS2322",
    ),
    (
        "input_is_an_object.ts",
        "export function f(api: TacitApi) { return api.call('request_claims', '{}'); }\n",
        "TS2345",
    ),
];

#[test]
fn the_typings_compile_for_a_right_use_and_refuse_each_wrong_one() {
    assert!(typings().is_file(), "{} is missing", typings().display());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("good.ts"), format!("{}{GOOD}", header())).unwrap();
    let (ok, out) = tsc(dir.path(), &["good.ts"]);
    assert!(ok, "the right use does not compile:\n{out}");

    for (file, body, _) in BAD {
        std::fs::write(dir.path().join(file), format!("{}{body}", header())).unwrap();
    }
    // One at a time: each must fail by itself, for its own reason.
    for (file, _, expected) in BAD {
        let (ok, out) = tsc(dir.path(), &[file]);
        assert!(!ok, "{file} compiled, but it misuses the typings:\n{out}");
        let errors: Vec<&str> = out.lines().filter(|l| l.contains("error TS")).collect();
        assert!(
            !errors.is_empty() && errors.iter().all(|l| l.starts_with(file)),
            "{file} failed for another reason:\n{out}"
        );
        assert!(
            errors.iter().any(|l| l.contains(expected)),
            "{file} should fail with {expected}:\n{out}"
        );
    }
}
