//! `cargo xtask fuzz [--smoke] [--seconds N] [--asan] [target..]`: build the cargo-fuzz targets in
//! `fuzz/` (their own workspace) and run each for a while, printing what libFuzzer did.
//!
//! - Installs `cargo-fuzz` at [`CARGO_FUZZ_VERSION`] into `target/tools/` when it is missing
//!   (about a minute, once); fails if it cannot.
//! - Builds every target in one `cargo fuzz build` into `target/fuzz/`: release, debug assertions
//!   and overflow checks on, and **no sanitizer**. Our crates forbid `unsafe`, so AddressSanitizer
//!   would only watch dependencies, at 4 to 12 times fewer executions per second; the oracles are
//!   panics, overflow checks and each target's assertions. It also needs no nightly: nothing is
//!   passed with `-Z`. `--asan` builds with AddressSanitizer instead (`-Zsanitizer=address`, so
//!   `RUSTC_BOOTSTRAP=1` on the stable toolchain) into `target/fuzz-asan/`.
//! - Runs each target's binary on `fuzz/corpus/<target>/` (kept between runs, not committed) and
//!   the committed seeds `fuzz/seeds/<target>/`, with the target's dictionary from `fuzz/dicts/`.
//!   libFuzzer's output goes to `<target dir>/logs/<target>.log`; a crash fails the task with the
//!   log's tail and the input saved under `fuzz/artifacts/<target>/`.
//!
//! `--smoke` is 10 s per target (what `cargo xtask ci` runs); the default is 600 s per target.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::{run, target_dir, workspace_root};

/// The cargo-fuzz release installed into `target/tools/`.
pub const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// Seconds per target for `--smoke`, and without `--smoke` or `--seconds`.
const SMOKE_SECONDS: u64 = 10;
const DEFAULT_SECONDS: u64 = 600;

/// Every target (a `[[bin]]` in `fuzz/Cargo.toml`) and its dictionary in `fuzz/dicts/`.
pub const TARGETS: &[(&str, &str)] = &[
    ("vault_open", "vault.dict"),
    ("gate_tools", "json.dict"),
    ("log_import", "log.dict"),
    ("receipt_verify", "json.dict"),
    ("keyset_parse", "json.dict"),
    ("signer_body", "json.dict"),
    ("signer_request_auth", "json.dict"),
    ("site_api_body", "json.dict"),
    ("sd_jwt_parse", "json.dict"),
    ("issuer_request", "json.dict"),
    ("presentation_verify", "json.dict"),
    ("issuer_metadata", "json.dict"),
    ("credential_batch", "json.dict"),
    ("status_list", "json.dict"),
    ("oid4vci", "json.dict"),
];

/// What one run did, from libFuzzer's final statistics.
#[derive(Debug, Default)]
struct Outcome {
    target: String,
    seconds: f64,
    execs: u64,
    execs_per_sec: u64,
    corpus: String,
    ok: bool,
}

#[derive(Debug)]
struct Options {
    seconds: u64,
    asan: bool,
    targets: Vec<&'static str>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let usage = "usage: cargo xtask fuzz [--smoke] [--seconds N] [--asan] [target..]";
    let mut seconds = None;
    let mut smoke = false;
    let mut asan = false;
    let mut targets = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--smoke" => smoke = true,
            "--asan" => asan = true,
            "--seconds" => {
                let value = args
                    .next()
                    .ok_or(format!("--seconds needs a value; {usage}"))?;
                let n: u64 = value
                    .parse()
                    .map_err(|_| format!("--seconds {value}: not a whole number; {usage}"))?;
                if n == 0 {
                    return Err("--seconds must be at least 1".to_owned());
                }
                seconds = Some(n);
            }
            name => {
                let known = TARGETS.iter().find(|(t, _)| *t == name).ok_or_else(|| {
                    let names: Vec<&str> = TARGETS.iter().map(|(t, _)| *t).collect();
                    format!(
                        "unknown fuzz target `{name}` (known: {}); {usage}",
                        names.join(", ")
                    )
                })?;
                targets.push(known.0);
            }
        }
    }
    if targets.is_empty() {
        targets = TARGETS.iter().map(|(t, _)| *t).collect();
    }
    let seconds = seconds.unwrap_or(if smoke {
        SMOKE_SECONDS
    } else {
        DEFAULT_SECONDS
    });
    Ok(Options {
        seconds,
        asan,
        targets,
    })
}

pub fn fuzz(args: &[String]) -> Result<(), String> {
    let options = parse_args(args)?;
    let cargo_fuzz = ensure_cargo_fuzz()?;
    let root = workspace_root();
    let build_dir = target_dir().join(if options.asan { "fuzz-asan" } else { "fuzz" });
    let build_dir_str = build_dir.to_string_lossy().into_owned();
    let sanitizer = if options.asan { "address" } else { "none" };
    let envs: &[(&str, &str)] = if options.asan {
        &[("RUSTC_BOOTSTRAP", "1")]
    } else {
        &[]
    };
    let mut build = vec![
        "build",
        "--fuzz-dir",
        "fuzz",
        "--target-dir",
        &build_dir_str,
        "--sanitizer",
        sanitizer,
    ];
    // One target: build only it. Several: build them all in one cargo run.
    if let [only] = options.targets.as_slice() {
        build.push(only);
    }
    run(
        "cargo fuzz build",
        &cargo_fuzz.to_string_lossy(),
        &build,
        envs,
    )?;

    let host = host_triple()?;
    let bin_dir = build_dir.join(&host).join("release");
    let log_dir = build_dir.join("logs");
    fs::create_dir_all(&log_dir).map_err(|e| format!("creating {}: {e}", log_dir.display()))?;
    let mut outcomes = Vec::new();
    for &target in &options.targets {
        let outcome = run_target(&root, &bin_dir, &log_dir, target, options.seconds)?;
        let ok = outcome.ok;
        outcomes.push(outcome);
        if !ok {
            print_summary(&outcomes);
            return Err(format!(
                "fuzz target `{target}` failed: see above, and {}",
                log_dir.join(format!("{target}.log")).display()
            ));
        }
    }
    print_summary(&outcomes);
    Ok(())
}

/// Runs one target for `seconds`, its output to `<log_dir>/<target>.log`.
fn run_target(
    root: &Path,
    bin_dir: &Path,
    log_dir: &Path,
    target: &str,
    seconds: u64,
) -> Result<Outcome, String> {
    let dict = TARGETS
        .iter()
        .find(|(t, _)| *t == target)
        .map_or("json.dict", |(_, d)| *d);
    let corpus = format!("fuzz/corpus/{target}");
    let seeds = format!("fuzz/seeds/{target}");
    let artifacts = format!("fuzz/artifacts/{target}/");
    for dir in [&corpus, &artifacts] {
        fs::create_dir_all(root.join(dir)).map_err(|e| format!("creating {dir}: {e}"))?;
    }
    if !root.join(&seeds).is_dir() {
        return Err(format!(
            "{seeds}/ is missing: every target needs committed seeds"
        ));
    }
    let args = [
        corpus.clone(),
        seeds,
        format!("-dict=fuzz/dicts/{dict}"),
        format!("-max_total_time={seconds}"),
        "-timeout=10".to_owned(),
        "-rss_limit_mb=2048".to_owned(),
        "-print_final_stats=1".to_owned(),
        format!("-artifact_prefix={artifacts}"),
    ];
    let binary = bin_dir.join(target);
    let log_path = log_dir.join(format!("{target}.log"));
    println!(
        "--> {} {}\n    fuzzing {target} for {seconds} s; libFuzzer's output: {}",
        binary.display(),
        args.join(" "),
        log_path.display()
    );
    let log =
        fs::File::create(&log_path).map_err(|e| format!("creating {}: {e}", log_path.display()))?;
    let log_err = log
        .try_clone()
        .map_err(|e| format!("opening {}: {e}", log_path.display()))?;
    let started = Instant::now();
    let status = Command::new(&binary)
        .args(&args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .status()
        .map_err(|e| format!("could not start {}: {e}", binary.display()))?;
    let text = fs::read_to_string(&log_path).unwrap_or_default();
    let mut outcome = parse_stats(&text);
    outcome.target = target.to_owned();
    outcome.seconds = started.elapsed().as_secs_f64();
    outcome.ok = status.success();
    println!(
        "<-- {target}: {} runs, {} exec/s, corpus {} ({:.1}s){}",
        outcome.execs,
        outcome.execs_per_sec,
        outcome.corpus,
        outcome.seconds,
        if outcome.ok { "" } else { ", FAILED" }
    );
    if !outcome.ok {
        eprintln!("--- from {}:", log_path.display());
        for line in failure_lines(&text) {
            eprintln!("{line}");
        }
        eprintln!(
            "--- {status}. The input is saved under {artifacts}; reproduce with\n    {} <artifact>\n\
             then add it as a regression test in the owning crate and to {}/",
            binary.display(),
            format_args!("fuzz/seeds/{target}")
        );
    }
    Ok(outcome)
}

/// What to show of a failed run: the panic message (without its backtrace, which stays in the
/// log), then libFuzzer's report from its `ERROR` line on (the artifact's path, the stats); or
/// the log's last 40 lines if neither is there.
fn failure_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<&str> = lines
        .iter()
        .skip_while(|l| !l.contains("panicked at"))
        .take_while(|l| !l.starts_with("stack backtrace") && !l.starts_with("note: "))
        .take(12)
        .copied()
        .collect();
    match lines.iter().rposition(|l| l.contains("ERROR: libFuzzer")) {
        Some(i) => out.extend(lines[i..].iter().take(30)),
        None => out.extend(&lines[lines.len().saturating_sub(40)..]),
    }
    out
}

/// Reads libFuzzer's `-print_final_stats` lines and its last status line.
fn parse_stats(text: &str) -> Outcome {
    let stat = |name: &str| {
        text.lines()
            .filter_map(|l| l.strip_prefix(name))
            .filter_map(|rest| rest.trim_start_matches(':').trim().parse::<u64>().ok())
            .next_back()
            .unwrap_or(0)
    };
    // "#123456 DONE   cov: 1234 ft: 5678 corp: 321/45Kb lim: ..." (or the last pulse).
    let corpus = text
        .lines()
        .filter_map(|l| l.split_once("corp: ").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_whitespace().next())
        .next_back()
        .map_or_else(|| "?".to_owned(), |c| c.replace('/', " inputs, "));
    Outcome {
        execs: stat("stat::number_of_executed_units"),
        execs_per_sec: stat("stat::average_exec_per_sec"),
        corpus,
        ..Outcome::default()
    }
}

fn print_summary(outcomes: &[Outcome]) {
    println!("\nfuzz summary:");
    println!(
        "  {:<20} {:>8} {:>12} {:>9} {:>22}  result",
        "target", "seconds", "executions", "exec/s", "corpus"
    );
    for o in outcomes {
        println!(
            "  {:<20} {:>8.0} {:>12} {:>9} {:>22}  {}",
            o.target,
            o.seconds,
            o.execs,
            o.execs_per_sec,
            o.corpus,
            if o.ok { "no crash" } else { "CRASH" }
        );
    }
}

/// `target/tools/bin/cargo-fuzz` at [`CARGO_FUZZ_VERSION`], installed if missing or another
/// version. `--locked` is left out on purpose: it fails against this registry mirror.
fn ensure_cargo_fuzz() -> Result<PathBuf, String> {
    crate::ci::ensure_tool("cargo-fuzz", "cargo-fuzz", CARGO_FUZZ_VERSION, &[])
        .map_err(|e| format!("{e}: cargo-fuzz is needed to build the fuzz targets"))
}

/// The host triple (`rustc -vV`), which cargo-fuzz builds for and names its output directory by.
fn host_triple() -> Result<String, String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| format!("could not run `rustc -vV`: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|h| h.trim().to_owned())
        .ok_or_else(|| "`rustc -vV` printed no host triple".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn smoke_is_ten_seconds_for_every_target() {
        let o = parse_args(&args(&["--smoke"])).unwrap();
        assert_eq!(o.seconds, 10);
        assert_eq!(o.targets.len(), TARGETS.len());
        assert!(!o.asan);
    }

    #[test]
    fn seconds_and_targets() {
        let o = parse_args(&args(&["--seconds", "600", "log_import", "gate_tools"])).unwrap();
        assert_eq!(o.seconds, 600);
        assert_eq!(o.targets, ["log_import", "gate_tools"]);
        assert!(parse_args(&args(&["nope"])).is_err());
        assert!(parse_args(&args(&["--seconds"])).is_err());
        assert!(parse_args(&args(&["--seconds", "0"])).is_err());
    }

    #[test]
    fn every_target_is_a_bin_with_seeds_and_a_dictionary() {
        let manifest = fs::read_to_string(workspace_root().join("fuzz/Cargo.toml")).unwrap();
        for (target, dict) in TARGETS {
            assert!(
                manifest.contains(&format!("name = \"{target}\"")),
                "{target}"
            );
            let seeds = workspace_root().join("fuzz/seeds").join(target);
            assert!(
                fs::read_dir(&seeds).unwrap().next().is_some(),
                "{target} has no seeds"
            );
            assert!(
                workspace_root().join("fuzz/dicts").join(dict).is_file(),
                "{dict}"
            );
        }
        let bins = manifest.matches("[[bin]]").count();
        assert_eq!(
            bins,
            TARGETS.len(),
            "a [[bin]] in fuzz/Cargo.toml is not in TARGETS"
        );
    }

    #[test]
    fn a_failure_shows_the_panic_and_libfuzzers_report_not_the_backtrace() {
        let log = "INFO: Seed: 1\n\
                   thread '<unnamed>' panicked at wallet-core/src/receipt.rs:180:12:\n\
                   attempt to subtract with overflow\n\
                   stack backtrace:\n   0: frame\n\
                   ==1== ERROR: libFuzzer: deadly signal\n\
                   Test unit written to fuzz/artifacts/x/crash-1\n";
        let shown = failure_lines(log);
        assert_eq!(
            shown,
            [
                "thread '<unnamed>' panicked at wallet-core/src/receipt.rs:180:12:",
                "attempt to subtract with overflow",
                "==1== ERROR: libFuzzer: deadly signal",
                "Test unit written to fuzz/artifacts/x/crash-1",
            ]
        );
    }

    #[test]
    fn reads_final_stats() {
        let log = "#1024\tpulse  cov: 10 ft: 20 corp: 5/100b lim: 4 exec/s: 9\n\
                   #20000\tDONE   cov: 99 ft: 300 corp: 42/3Kb lim: 4096 exec/s: 1818 rss: 60Mb\n\
                   Done 20000 runs in 11 second(s)\n\
                   stat::number_of_executed_units: 20000\n\
                   stat::average_exec_per_sec:     1818\n";
        let o = parse_stats(log);
        assert_eq!(o.execs, 20000);
        assert_eq!(o.execs_per_sec, 1818);
        assert_eq!(o.corpus, "42 inputs, 3Kb");
    }
}
