//! `cargo xtask ci`: install what is missing, then every check, each step timed.
//!
//! Installs (so a fresh machine needs only Rust and this repository): the
//! `wasm32-unknown-unknown` target through rustup; Chromium and chromedriver through apt when
//! running as root (otherwise it stops with the `sudo` command to run); PostgreSQL (`initdb`,
//! `pg_ctl`) the same way, for the tests that start a throw-away cluster; Node and npm the same
//! way, for the SD-JWT interop tests (`interop/`); binaryen (`wasm-opt`) the same way, for
//! `build-web`'s optimisation pass; and, for the web crate's
//! wasm-bindgen-test suite, `wasm-bindgen-test-runner` at the locked wasm-bindgen version into
//! `target/tools/` (about 100 s once, then cached). The last step, `fuzz --smoke`, installs
//! cargo-fuzz into `target/tools/` the same way (see `fuzz.rs`); the `deny` step installs
//! cargo-deny there the same way ([`ensure_tool`]).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::build_web::{
    APT_BINARYEN, SITES, Site, WasmOpt, build_web, find_wasm_opt, wasm_bindgen_version,
};
use crate::{cargo, run, target_dir, workspace_root};

pub(crate) const WASM_TARGET: &str = "wasm32-unknown-unknown";
const CHROMIUM: &str = "/usr/lib/chromium/chromium";
pub(crate) const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const APT_CHROMIUM: [&str; 2] = ["chromium", "chromium-driver"];
/// Debian's PostgreSQL server: the store's tests start throw-away clusters with its initdb/pg_ctl.
const APT_POSTGRESQL: &str = "postgresql";
/// Node and npm: the interop tests check our SD-JWT presentations with an independent
/// implementation (`@sd-jwt/sd-jwt-vc`, pinned in `interop/package-lock.json`).
const APT_NODE: [&str; 2] = ["nodejs", "npm"];

/// Step timings, printed as a table at the end (also when a step fails).
#[derive(Debug, Default)]
struct Timings {
    steps: Vec<(String, Duration, bool)>,
    /// With `--keep-going`, failures are collected here and the next steps still run.
    keep_going: bool,
    failures: Vec<String>,
}

impl Timings {
    fn time(&mut self, name: &str, f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
        println!("\n=== {name}");
        let started = Instant::now();
        let result = f();
        let elapsed = started.elapsed();
        println!(
            "=== {name}: {:.1}s{}",
            elapsed.as_secs_f64(),
            if result.is_ok() { "" } else { " (failed)" }
        );
        self.steps.push((name.to_owned(), elapsed, result.is_ok()));
        match result {
            Err(e) if self.keep_going => {
                self.failures.push(e);
                Ok(())
            }
            other => other,
        }
    }

    fn print(&self) {
        println!("\nci timings:");
        let mut total = Duration::ZERO;
        for (name, elapsed, ok) in &self.steps {
            total += *elapsed;
            println!(
                "  {:<14} {:>7.1}s{}",
                name,
                elapsed.as_secs_f64(),
                if *ok { "" } else { "  FAILED" }
            );
        }
        println!("  {:<14} {:>7.1}s", "total", total.as_secs_f64());
    }
}

/// Runs every step; `--keep-going` runs the rest after a failure and reports all at the end.
pub fn ci(args: &[String]) -> Result<(), String> {
    let keep_going = match args {
        [] => false,
        [flag] if flag == "--keep-going" => true,
        _ => {
            return Err(format!(
                "unexpected arguments {args:?}; usage: cargo xtask ci [--keep-going]"
            ));
        }
    };
    let mut timings = Timings {
        keep_going,
        ..Timings::default()
    };
    let mut result = steps(&mut timings);
    timings.print();
    if result.is_ok() && !timings.failures.is_empty() {
        result = Err(timings.failures.join("; "));
    }
    if result.is_ok() {
        println!("\nci: all steps passed");
    }
    result
}

fn steps(t: &mut Timings) -> Result<(), String> {
    let cargo = cargo();
    // Nothing can run without the tools, even with --keep-going.
    let keep_going = std::mem::replace(&mut t.keep_going, false);
    t.time("install", install)?;
    t.keep_going = keep_going;
    t.time("fmt", || {
        run("fmt", &cargo, &["fmt", "--all", "--", "--check"], &[])
    })?;
    t.time("deny", deny)?;
    t.time("clippy", || {
        let args = [
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ];
        run("clippy", &cargo, &args, &[])
    })?;
    t.time("clippy-wasm", || {
        let mut args = vec![
            "clippy",
            "--target",
            WASM_TARGET,
            "--all-targets",
            "--locked",
        ];
        for site in SITES {
            args.extend(["--package", site.package]);
            if let Some(first) = site.first_load {
                args.extend(["--package", first.package]);
            }
            for module in site.on_demand {
                args.extend(["--package", module.package]);
            }
        }
        args.extend(["--package", "tool-gate-js"]);
        args.extend(["--", "-D", "warnings"]);
        run("clippy (wasm)", &cargo, &args, &[])
    })?;
    t.time("build-web", || build_web(&[], true, WasmOpt::Required))?;
    t.time("test", || {
        // Every test binary runs even after one fails: one run shows every failure.
        run(
            "test",
            &cargo,
            &["test", "--workspace", "--locked", "--no-fail-fast"],
            &[],
        )
    })?;
    let with_tests: Vec<Site> = SITES
        .iter()
        .copied()
        .filter(|s| has_wasm_tests(s.dir))
        .collect();
    if with_tests.is_empty() {
        println!("\n(no <site>/tests/*.rs wasm-bindgen tests yet: wasm-test step skipped)");
    } else {
        t.time("wasm-test", || wasm_tests(&with_tests))?;
    }
    t.time("fuzz-smoke", || crate::fuzz::fuzz(&["--smoke".to_owned()]))?;
    Ok(())
}

/// The cargo-deny release installed into `target/tools/`.
pub(crate) const CARGO_DENY_VERSION: &str = "0.20.2";

/// `cargo deny check licenses bans sources` against `deny.toml` (licences allowed, crates.io
/// only, bans). Advisories are left out: they need the RustSec database from the network.
fn deny() -> Result<(), String> {
    let started = Instant::now();
    let tool = ensure_tool(
        "cargo-deny",
        "cargo-deny",
        CARGO_DENY_VERSION,
        &["--locked"],
    )?;
    println!(
        "cargo-deny ready in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let args = ["check", "licenses", "bans", "sources"];
    run("cargo deny", &tool.to_string_lossy(), &args, &[])
}

/// How the tools are compiled: cargo-deny's own release profile asks for fat LTO in one codegen
/// unit, minutes on two cores on every fresh machine, for a check that reads a lock file. The
/// tools run for seconds; a quick optimised build is enough.
const TOOL_BUILD_PROFILE: &[(&str, &str)] = &[
    ("CARGO_PROFILE_RELEASE_LTO", "off"),
    ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16"),
    ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "1"),
];

/// `target/tools/bin/<bin>` of crate `krate` at `version`: kept when `<bin> --version` says
/// that version, else installed with `cargo install <install_flags>` (a minute or more, once).
pub(crate) fn ensure_tool(
    krate: &str,
    bin: &str,
    version: &str,
    install_flags: &[&str],
) -> Result<PathBuf, String> {
    let root = target_dir().join("tools");
    let binary = root.join("bin").join(bin);
    let shown = output(&binary.to_string_lossy(), &["--version"]).unwrap_or_default();
    if shown.split_whitespace().nth(1) == Some(version) {
        println!("{} {version}: cached", binary.display());
        return Ok(binary);
    }
    let root_str = root.to_string_lossy().into_owned();
    let pinned = format!("={version}");
    let mut args = vec![
        "install",
        krate,
        "--version",
        &pinned,
        "--force",
        "--root",
        &root_str,
    ];
    args.extend_from_slice(install_flags);
    run(
        &format!("cargo install {krate}"),
        &cargo(),
        &args,
        TOOL_BUILD_PROFILE,
    )?;
    match binary.is_file() {
        true => Ok(binary),
        false => Err(format!(
            "cargo install {krate} left no {}",
            binary.display()
        )),
    }
}

fn has_wasm_tests(dir: &str) -> bool {
    std::fs::read_dir(workspace_root().join(dir).join("tests")).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "rs"))
    })
}

fn install() -> Result<(), String> {
    let installed = output("rustup", &["target", "list", "--installed"])
        .map_err(|e| format!("{e}; is rustup installed? CI needs it to add {WASM_TARGET}"))?;
    if installed.lines().any(|l| l.trim() == WASM_TARGET) {
        println!("{WASM_TARGET}: installed");
    } else {
        run(
            "rustup target add",
            "rustup",
            &["target", "add", WASM_TARGET],
            &[],
        )?;
    }

    let mut packages: Vec<&str> = Vec::new();
    if [CHROMIUM, CHROMEDRIVER]
        .iter()
        .all(|p| Path::new(p).exists())
    {
        println!("chromium, chromedriver: installed");
    } else {
        packages.extend(APT_CHROMIUM);
    }
    if has_initdb() {
        println!("postgresql (initdb, pg_ctl): installed");
    } else {
        packages.push(APT_POSTGRESQL);
    }
    if has_node() {
        println!("node, npm: installed");
    } else {
        packages.extend(APT_NODE);
    }
    match find_wasm_opt() {
        Some(tool) => println!("wasm-opt: {}", tool.display()),
        None => packages.push(APT_BINARYEN),
    }
    if packages.is_empty() {
        return Ok(());
    }
    let apt_install = apt_get_install(&packages)?;
    if let Some(still) = [CHROMIUM, CHROMEDRIVER]
        .into_iter()
        .find(|p| !Path::new(p).exists())
    {
        return Err(format!("{still} is still missing after `{apt_install}`"));
    }
    if !has_initdb() {
        return Err(format!("initdb is still missing after `{apt_install}`"));
    }
    if !has_node() {
        return Err(format!(
            "node or npm is still missing after `{apt_install}`"
        ));
    }
    if find_wasm_opt().is_none() {
        return Err(format!("wasm-opt is still missing after `{apt_install}`"));
    }
    Ok(())
}

/// `apt-get update` and `apt-get install -y <packages>` as root; otherwise an error with the
/// `sudo` command to run. Returns the install command line (for later messages).
fn apt_get_install(packages: &[&str]) -> Result<String, String> {
    let apt_install = format!("apt-get install -y {}", packages.join(" "));
    if output("id", &["-u"]).map(|uid| uid.trim() == "0") != Ok(true) {
        return Err(format!(
            "missing {}: install with `sudo {apt_install}` and run again",
            packages.join(", ")
        ));
    }
    run("apt-get update", "apt-get", &["update"], &[])?;
    let args: Vec<&str> = apt_install.split(' ').skip(1).collect();
    run(
        "apt-get install",
        "apt-get",
        &args,
        &[("DEBIAN_FRONTEND", "noninteractive")],
    )?;
    Ok(apt_install)
}

/// Binaryen's `wasm-opt` on `PATH`, installed through apt when missing (as root; otherwise an
/// error with the command). For `demo` and `bench`, which build the sites without `ci`'s
/// install step.
pub(crate) fn ensure_wasm_opt() -> Result<(), String> {
    if let Some(tool) = find_wasm_opt() {
        println!("wasm-opt: {}", tool.display());
        return Ok(());
    }
    let apt_install = apt_get_install(&[APT_BINARYEN])?;
    if find_wasm_opt().is_none() {
        return Err(format!("wasm-opt is still missing after `{apt_install}`"));
    }
    Ok(())
}

/// Whether `node` and `npm` answer.
fn has_node() -> bool {
    ["node", "npm"]
        .iter()
        .all(|tool| output(tool, &["--version"]).is_ok())
}

/// Whether PostgreSQL's server tools are where `tacit_store::testing::PgCluster` looks: `PATH`,
/// else `/usr/lib/postgresql/<major>/bin` (Debian keeps them out of `PATH`).
fn has_initdb() -> bool {
    let has_tools = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| has_tools(&d)));
    on_path
        || std::fs::read_dir("/usr/lib/postgresql")
            .is_ok_and(|versions| versions.flatten().any(|v| has_tools(&v.path().join("bin"))))
}

/// The environment under which `cargo test --target wasm32-unknown-unknown` runs its tests in
/// headless Chromium: `runner` (wasm-bindgen-test-runner) as the target's runner, driving
/// chromedriver with the capabilities in the `webdriver` file, two minutes per test binary.
pub(crate) fn wasm_test_env<'a>(
    runner: &'a str,
    webdriver: &'a str,
) -> [(&'static str, &'a str); 4] {
    [
        ("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER", runner),
        ("CHROMEDRIVER", CHROMEDRIVER),
        ("WASM_BINDGEN_TEST_WEBDRIVER_JSON", webdriver),
        ("WASM_BINDGEN_TEST_TIMEOUT", "120"),
    ]
}

fn wasm_tests(sites: &[Site]) -> Result<(), String> {
    let version = wasm_bindgen_version()?;
    let runner = ensure_test_runner(&version)?;
    let runner = runner.to_string_lossy().into_owned();
    // One cargo run per site: each may bring its own webdriver.json: the runner reads it from the environment.
    for site in sites {
        let webdriver = webdriver_json(site)?.to_string_lossy().into_owned();
        let env = wasm_test_env(&runner, &webdriver);
        let args = [
            "test",
            "--target",
            WASM_TARGET,
            "--locked",
            "--package",
            site.package,
        ];
        run("wasm-bindgen-test", &cargo(), &args, &env)?;
    }
    Ok(())
}

/// The site's own `webdriver.json` if it has one, else one written to `target/tools/` that
/// launches Chromium like the harness does (WebMCP on, no background networking).
pub(crate) fn webdriver_json(site: &Site) -> Result<PathBuf, String> {
    let own = workspace_root().join(site.dir).join("webdriver.json");
    if own.is_file() {
        return Ok(own);
    }
    let path = target_dir().join("tools").join("webdriver.json");
    let webdriver = serde_json::json!({
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": tacit_devtools::chromium::headless_with_webmcp(),
        }
    });
    let json = serde_json::to_string_pretty(&webdriver).map_err(|e| e.to_string())? + "\n";
    std::fs::create_dir_all(target_dir().join("tools"))
        .map_err(|e| format!("creating target/tools: {e}"))?;
    std::fs::write(&path, json).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

/// `target/tools/bin/wasm-bindgen-test-runner` at `version`, installed if missing or stale.
pub(crate) fn ensure_test_runner(version: &str) -> Result<PathBuf, String> {
    // No TLS features: the runner only talks to chromedriver on loopback. `--locked` is left
    // out on purpose: it fails against this registry mirror.
    ensure_tool(
        "wasm-bindgen-cli",
        "wasm-bindgen-test-runner",
        version,
        &["--no-default-features"],
    )
}

fn output(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("could not run `{program}`: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`{program} {}` failed ({})",
            args.join(" "),
            out.status
        ))
    }
}
