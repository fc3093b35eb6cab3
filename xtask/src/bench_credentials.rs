//! The issuer-backed claims part of `cargo xtask bench` (issue 10): batch issuance and
//! presentation verification, each against the raw ES256 rate measured in the same run.
//!
//! - `issuer-bench` (release): raw `p256` signs/s, then batches (credentials) per second built
//!   in-process and through `POST /v1/credentials` on SQLite;
//! - `cargo bench -p tacit-protocol --bench presentation`: `verify_presentation` of a
//!   one-disclosure presentation against one raw ES256 verification, native;
//! - `tacit-protocol`'s `tests/wasm_presentation.rs`: the same two measurements compiled to
//!   wasm32 (release) and run in headless Chromium by wasm-bindgen-test-runner, timed with
//!   `performance.now()`.
//!
//! Nothing here asserts on a time; a step fails only if its program does (for instance when a
//! verification it measures is refused).

use crate::build_web::{SITES, wasm_bindgen_version};
use crate::cargo;
use crate::ci::{WASM_TARGET, ensure_test_runner, wasm_test_env, webdriver_json};

/// Seconds per issuer measurement in the full report (three measurements).
pub const ISSUER_SECONDS: &str = "3";
/// The marker both presentation benches print their figures after.
const MARKER: &str = "tacit-bench presentation-verify ";

/// The release `issuer-bench`; returns its markdown.
pub fn issuer(extra: &[&str]) -> Result<String, String> {
    let mut args = vec![
        "run",
        "--release",
        "--package",
        "tacit-issuer",
        "--bin",
        "issuer-bench",
        "--",
    ];
    args.extend(extra.iter().copied());
    super::run_capture("bench issuer", &cargo(), &args)
}

/// `verify_presentation` vs raw ES256 verification, native; returns the figures line.
pub fn presentation_native(extra: &[&str]) -> Result<String, String> {
    let mut args = vec![
        "bench",
        "--package",
        "tacit-protocol",
        "--bench",
        "presentation",
    ];
    if !extra.is_empty() {
        args.push("--");
        args.extend(extra.iter().copied());
    }
    let out = super::run_capture("bench presentation (native)", &cargo(), &args)?;
    figures_line(&out, "native")
}

/// The same in wasm32 in headless Chromium; returns the figures line.
pub fn presentation_wasm() -> Result<String, String> {
    let version = wasm_bindgen_version()?;
    let runner = ensure_test_runner(&version)?.to_string_lossy().into_owned();
    let wallet = SITES
        .first()
        .ok_or_else(|| "build_web::SITES is empty".to_owned())?;
    let webdriver = webdriver_json(wallet)?.to_string_lossy().into_owned();
    let env = wasm_test_env(&runner, &webdriver);
    let args = [
        "test",
        "--release",
        "--target",
        WASM_TARGET,
        "--locked",
        "--package",
        "tacit-protocol",
        "--test",
        "wasm_presentation",
        "--",
        "--nocapture",
    ];
    let out = super::run_capture_env("bench presentation (wasm)", &cargo(), &args, &env)?;
    figures_line(&out, "wasm32-chromium")
}

/// The `tacit-bench presentation-verify <place> …` line of a bench's output.
fn figures_line(out: &str, place: &str) -> Result<String, String> {
    let prefix = format!("{MARKER}{place} ");
    out.lines()
        .find_map(|l| l.find(&prefix).map(|at| l[at..].trim().to_owned()))
        .ok_or_else(|| {
            format!("the {place} presentation bench printed no `{prefix}…` line (with --nocapture)")
        })
}

/// The number after `key=` on a figures line.
fn field(line: &str, key: &str) -> Option<f64> {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

pub fn issuer_section(md: &str) -> String {
    let mut r = String::from("## 9. Issuer: batch issuance\n\n");
    r.push_str(&format!(
        "`cargo run --release -p tacit-issuer --bin issuer-bench -- --seconds {ISSUER_SECONDS}`: \
         raw ES256 signatures per second (`p256`, one thread, over 2,000 bytes, about a \
         credential's signing input), then batches of holder-bound SD-JWT VCs built in-process \
         (`issue_batch`: salts, 39 disclosures, one issuer signature each), then batches \
         through `POST /v1/credentials` (the real router via `oneshot`, holder-key proofs \
         checked, code and nonce consumed in a SQLite transaction; requests prepared \
         beforehand). Each rate is divided by the raw signing rate of this run: 1.00 would mean \
         a credential costs no more than its one signature.\n\n"
    ));
    // issuer-bench's own heading is replaced by this one.
    let body: String = md
        .lines()
        .filter(|l| !l.starts_with("## "))
        .map(|l| format!("{l}\n"))
        .collect();
    r.push_str(body.trim());
    r.push_str("\n\n");
    r
}

pub fn presentation_section(native: &str, wasm: &str) -> String {
    let mut r = String::from("## 10. Presentation verification: native and wasm\n\n");
    r.push_str(
        "`tacit_protocol::sd_jwt::verify_presentation` of a one-disclosure presentation (an \
         income credential with 39 `_sd` digests, one disclosed, with its KB-JWT; issuer \
         signature, holder signature, `sd_hash`, audience, nonce and age checked), against one \
         raw ES256 verification (`p256`) of the KB-JWT's signing input; the presentation \
         performs two such verifications plus parsing and hashing. Rounds of each alternate \
         (each round repeats its operation for a fixed time; the figure is the median round's \
         time per operation). Native: `cargo bench -p tacit-protocol --bench presentation` \
         (release, `Instant`). wasm: `tacit-protocol/tests/wasm_presentation.rs`, the same \
         code built for wasm32-unknown-unknown (release) and run in headless Chromium by \
         wasm-bindgen-test-runner, timed with `performance.now()`.\n\n",
    );
    let ms = |line: &str, key: &str| field(line, key).unwrap_or(f64::NAN);
    let (np, nr) = (
        ms(native, "presentation_ms"),
        ms(native, "raw_es256_verify_ms"),
    );
    let (wp, wr) = (ms(wasm, "presentation_ms"), ms(wasm, "raw_es256_verify_ms"));
    r.push_str(
        "| measurement | native | wasm32 in Chromium | wasm / native |\n|---|---:|---:|---:|\n",
    );
    r.push_str(&format!(
        "| `verify_presentation`, one disclosure ({} bytes) | {:.1} µs | {:.3} ms | {:.2} |\n",
        field(native, "presentation_bytes").unwrap_or(f64::NAN),
        np * 1000.0,
        wp,
        wp / np
    ));
    r.push_str(&format!(
        "| raw ES256 verify (`p256`) | {:.1} µs | {:.3} ms | {:.2} |\n",
        nr * 1000.0,
        wr,
        wr / nr
    ));
    r.push_str(&format!(
        "| presentation / raw verify (same run, same target) | {:.2} | {:.2} | |\n",
        np / nr,
        wp / wr
    ));
    r.push_str(&format!(
        "| rounds × round length; operations timed | {} × {} ms; {} | {} × {} ms; {} | |\n\n",
        field(native, "rounds").unwrap_or(f64::NAN),
        field(native, "round_ms").unwrap_or(f64::NAN),
        field(native, "operations").unwrap_or(f64::NAN),
        field(wasm, "rounds").unwrap_or(f64::NAN),
        field(wasm, "round_ms").unwrap_or(f64::NAN),
        field(wasm, "operations").unwrap_or(f64::NAN),
    ));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    const NATIVE: &str = "tacit-bench presentation-verify native presentation_ms=2.518109 \
                          raw_es256_verify_ms=1.102420 ratio=2.284 rounds=5 round_ms=100 \
                          operations=689 presentation_bytes=3333 disclosures_in_credential=39";

    #[test]
    fn finds_the_figures_line_in_runner_output() {
        let out = format!(
            "running 1 test\nlog output:\n    {}\n\ntest result: ok. 1 passed\n",
            NATIVE.replace("native", "wasm32-chromium")
        );
        let line = figures_line(&out, "wasm32-chromium").unwrap();
        assert!(line.starts_with("tacit-bench presentation-verify wasm32-chromium "));
        assert_eq!(field(&line, "presentation_ms"), Some(2.518109));
        assert!(figures_line(&out, "native").is_err());
        assert!(figures_line("test result: ok. 1 passed", "wasm32-chromium").is_err());
    }

    #[test]
    fn reads_fields_exactly() {
        assert_eq!(field(NATIVE, "raw_es256_verify_ms"), Some(1.10242));
        assert_eq!(field(NATIVE, "ratio"), Some(2.284));
        // `presentation_ms` must not match `presentation_bytes` or a suffix.
        assert_eq!(field(NATIVE, "presentation_bytes"), Some(3333.0));
        assert_eq!(field(NATIVE, "ms"), None);
    }

    #[test]
    fn the_presentation_section_divides_figures_of_the_same_run() {
        let wasm = NATIVE
            .replace("native", "wasm32-chromium")
            .replace("presentation_ms=2.518109", "presentation_ms=5.0")
            .replace("raw_es256_verify_ms=1.102420", "raw_es256_verify_ms=2.0");
        let section = presentation_section(NATIVE, &wasm);
        assert!(
            section.contains("| 2518.1 µs | 5.000 ms | 1.99 |"),
            "{section}"
        );
        assert!(
            section.contains("| 1102.4 µs | 2.000 ms | 1.81 |"),
            "{section}"
        );
        assert!(section.contains("| 2.28 | 2.50 | |"), "{section}");
    }

    #[test]
    fn the_issuer_section_keeps_the_table_and_drops_the_heading() {
        let md = "## tacit-issuer\n\n| measurement | per second |\n|---|---:|\n\
                  | raw ES256 sign (p256, one thread) | 900 |\n";
        let section = issuer_section(md);
        assert!(section.starts_with("## 9. Issuer"));
        assert!(!section.contains("## tacit-issuer"));
        assert!(section.ends_with("| raw ES256 sign (p256, one thread) | 900 |\n\n"));
    }
}
