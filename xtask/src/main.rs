//! Project tasks: `cargo xtask build-web | build-gate-js | ci | demo | bench | fuzz`.
//!
//! `ci` is what `.ci/run` calls: it installs what is missing and can be installed, then runs every
//! check. `build-web` builds the wasm sites into `target/site/<name>/`.

mod bench;
mod build_web;
mod ci;
mod demo;
mod fuzz;
mod gate_js;

use std::env;
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    if let Some(code) = rebuild_if_built_elsewhere(&args) {
        return code;
    }
    // `cargo xtask <task> --help` answers from here, before the task builds or installs anything.
    if let Some(help) = task_help(&args) {
        println!("{help}");
        return ExitCode::SUCCESS;
    }
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci::ci(&args[1..]),
        Some("build-web") => build_web::build_web(&args[1..], false, build_web::WasmOpt::IfPresent),
        Some("build-gate-js") => gate_js::build_gate_js(&args[1..]),
        Some("demo") => demo::demo(&args[1..]),
        Some("bench") => bench(&args[1..]),
        Some("fuzz") => fuzz::fuzz(&args[1..]),
        Some("help") | Some("--help") | Some("-h") | None => {
            print_help();
            Ok(())
        }
        Some(other) => Err(format!("unknown task `{other}`; run `cargo xtask help`")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Each task's usage and what it does, as `cargo xtask help` lists them.
const TASKS: [(&str, &str); 6] = [
    (
        "build-web",
        "build-web [site..]  build the wasm sites into target/site/<site>/ (SITES)",
    ),
    (
        "build-gate-js",
        "build-gate-js [--locked]\n\
         \x20                   build the tool-gate-js package (wasm-bindgen --target web, with\n\
         \x20                   its .d.ts) and its example page into target/site/gate-example/",
    ),
    (
        "ci",
        "ci [--keep-going]   install what is missing, then fmt, clippy, cargo-deny (licences, bans,\n\
         \x20                   sources), build-web, tests, wasm tests, fuzz smoke (10 s per target)",
    ),
    (
        "demo",
        "demo [--agent [--auto-approve]] [--pharmacy]\n\
         \x20                   run the signer, wallet and example sites on loopback; --agent adds\n\
         \x20                   a scripted agent (it waits for you unless --auto-approve)",
    ),
    (
        "bench",
        "bench [core|signer|site|issuer|presentation|browser|bridge|relay]\n\
         \x20                   measure everything into target/bench/report.md, or one part\n\
         \x20                   (browser includes bridge: issue 29's vault and bridge)",
    ),
    (
        "fuzz",
        "fuzz [--smoke] [--seconds N] [--asan] [target..]\n\
         \x20                   run the cargo-fuzz targets in fuzz/ (600 s each; --smoke: 10 s)",
    ),
];

/// `cargo xtask <task> … --help` (or `-h`, anywhere after the task): the task's usage.
fn task_help(args: &[String]) -> Option<String> {
    let (task, rest) = args.split_first()?;
    if !rest.iter().any(|a| a == "--help" || a == "-h") {
        return None;
    }
    task_usage(task).map(|usage| format!("cargo xtask {usage}"))
}

/// `task`'s lines of the help, with the site names filled in; `None` for an unknown task.
fn task_usage(task: &str) -> Option<String> {
    let sites: Vec<&str> = build_web::SITES.iter().map(|s| s.name).collect();
    TASKS
        .iter()
        .find(|(name, _)| *name == task)
        .map(|(_, usage)| usage.replace("SITES", &sites.join(", ")))
}

fn print_help() {
    println!("cargo xtask <task>\n");
    for (name, _) in TASKS {
        if let Some(usage) = task_usage(name) {
            println!("{usage}");
        }
    }
    println!("\n`cargo xtask <task> --help` shows one task's line without running it.");
}

/// Set on the one re-run [`rebuild_if_built_elsewhere`] makes.
const REBUILT: &str = "TACIT_XTASK_REBUILT";

/// `cargo run` names the package it runs (`CARGO_MANIFEST_DIR`). Two checkouts that share one
/// target directory share this binary, and cargo judges freshness by the mtimes of the source
/// files the last build read, which may be the other checkout's: it can run an xtask built from
/// another tree, which would then build and test that tree. When the checkout cargo ran this for
/// is not the one it was built from, touch this checkout's `main.rs` (so cargo rebuilds it from
/// here) and run the task again, once. `None`: this binary is this checkout's.
fn rebuild_if_built_elsewhere(args: &[String]) -> Option<ExitCode> {
    let built_from = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let run_for = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR")?);
    if same_dir(built_from, &run_for) {
        return None;
    }
    if env::var_os(REBUILT).is_some() {
        eprintln!(
            "xtask: built from {} but run for {} even after a rebuild; run `touch {}` and retry",
            built_from.display(),
            run_for.display(),
            run_for.join("src/main.rs").display()
        );
        return Some(ExitCode::FAILURE);
    }
    eprintln!(
        "xtask: this binary was built from {} (a target directory shared with another \
         checkout); rebuilding it from {}",
        built_from.display(),
        run_for.display()
    );
    let main_rs = run_for.join("src/main.rs");
    let touched = std::fs::File::options()
        .append(true)
        .open(&main_rs)
        .and_then(|f| f.set_modified(std::time::SystemTime::now()));
    if let Err(e) = touched {
        eprintln!("xtask: could not touch {}: {e}", main_rs.display());
        return Some(ExitCode::FAILURE);
    }
    let status = Command::new(cargo())
        .args(["run", "--quiet", "--manifest-path"])
        .arg(run_for.join("Cargo.toml"))
        .arg("--")
        .args(args)
        .env(REBUILT, "1")
        .status();
    Some(match status {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(s) => ExitCode::from(u8::try_from(s.code().unwrap_or(1)).unwrap_or(1)),
        Err(e) => {
            eprintln!("xtask: could not run cargo again: {e}");
            ExitCode::FAILURE
        }
    })
}

/// Whether `a` and `b` name the same directory (after resolving links, where they exist).
fn same_dir(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The workspace root (this crate's parent directory).
pub(crate) fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// `$CARGO_TARGET_DIR` (relative to the workspace root if relative) or `<workspace>/target`.
pub(crate) fn target_dir() -> PathBuf {
    match env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace_root().join(dir),
        None => workspace_root().join("target"),
    }
}

pub(crate) fn cargo() -> String {
    env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// Runs a program in the workspace root with extra environment, printing the command and its
/// duration; fails with `name`.
pub(crate) fn run(
    name: &str,
    program: &str,
    args: &[&str],
    envs: &[(&str, &str)],
) -> Result<(), String> {
    let shown: String = envs.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    println!("--> {shown}{program} {}", args.join(" "));
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(workspace_root())
        .status()
        .map_err(|e| format!("{name}: could not start `{program}`: {e}"))?;
    println!("<-- {name}: {:.1}s", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!("step `{name}` failed ({status})"))
    }
}

/// `cargo xtask bench [core|signer|site|issuer|presentation|browser] [-- extra args]`: see the
/// `bench` module.
fn bench(rest: &[String]) -> Result<(), String> {
    bench::bench(rest)
}

#[cfg(test)]
mod help_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
    use super::*;

    #[test]
    fn every_task_has_its_usage_and_help_lists_them_all() {
        for task in ["build-web", "build-gate-js", "ci", "demo", "bench", "fuzz"] {
            let usage = task_usage(task).unwrap();
            assert!(usage.starts_with(task), "{usage}");
        }
        assert!(task_usage("nope").is_none());
        assert!(task_usage("build-web").unwrap().contains("wallet"));
        assert!(!task_usage("build-web").unwrap().contains("SITES"));
    }

    /// `cargo xtask demo --help` and `ci --help` are answered by `main` before any task runs.
    #[test]
    fn task_help_is_found_wherever_the_flag_stands() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for (task, needle) in [("demo", "--auto-approve"), ("ci", "--keep-going")] {
            for given in [
                args(&[task, "--help"]),
                args(&[task, "-h"]),
                args(&[task, "--agent", "--help"]),
            ] {
                let help = task_help(&given).unwrap();
                assert!(help.starts_with(&format!("cargo xtask {task}")), "{help}");
                assert!(help.contains(needle), "{help}");
            }
        }
        // No flag: the task runs. An unknown task: main's error, not a help.
        assert!(task_help(&args(&["demo"])).is_none());
        assert!(task_help(&args(&["demo", "--agent"])).is_none());
        assert!(task_help(&args(&["nope", "--help"])).is_none());
        assert!(task_help(&args(&[])).is_none());
    }
}
