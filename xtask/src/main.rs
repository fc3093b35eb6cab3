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

fn print_help() {
    let sites: Vec<&str> = build_web::SITES.iter().map(|s| s.name).collect();
    println!(
        "cargo xtask <task>\n\n\
         build-web [site..]  build the wasm sites into target/site/<site>/ ({})\n\
         build-gate-js [--locked]\n\
                             build the tool-gate-js package (wasm-bindgen --target web, with\n\
                             its .d.ts) and its example page into target/site/gate-example/\n\
         ci [--keep-going]   install what is missing, then fmt, clippy, build-web, tests, wasm tests,\n\
                             fuzz smoke (30 s per target)\n\
         demo [--agent [--auto-approve]] [--pharmacy]\n\
                             run the signer, wallet and example sites on loopback; --agent adds\n\
                             a scripted agent (it waits for you unless --auto-approve)\n\
         bench [core|signer|site|issuer|presentation|browser]\n\
                             measure everything into target/bench/report.md, or one part\n\
         fuzz [--smoke] [--seconds N] [--asan] [target..]\n\
                             run the cargo-fuzz targets in fuzz/ (600 s each; --smoke: 30 s)",
        sites.join(", ")
    );
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
