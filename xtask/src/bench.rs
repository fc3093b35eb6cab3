//! `cargo xtask bench [core|signer|site|issuer|presentation|browser|bridge|relay] [-- args]`: the
//! benchmark report.
//!
//! Without a name, everything, then `target/bench/report.md`:
//! 1. `build-web` (the sites whose sizes and pages are measured);
//! 2. wallet-core's criterion benches (`cargo bench -p wallet-core --bench core`, extra args go
//!    to criterion);
//! 3. `signer-bench` (20 s of HTTP load against the raw Ed25519 signing rate);
//! 4. `site-bench` (10 s of `POST /api/applications` load against the raw `verify_strict`
//!    rate, then nonce consumes on SQLite and on a throwaway PostgreSQL cluster);
//! 5. hash-wasm from the npm registry (`npm pack`, pinned to [`HASH_WASM`]) as the in-page
//!    Argon2 baseline;
//! 6. `browser-bench` (the wallet page in headless Chromium: unlock, round trips, expiry,
//!    revoke, a presentation built in the page, ready; then issue 29's vault and bridge in two
//!    Chromiums: a claim call through the bridge and the relay against one on the wallet page,
//!    the person's grant in the vault → `toolsAdded` in the agent's browser; see
//!    `tests/src/bin/browser-bench/`);
//! 7. `issuer-bench` (batch issuance against raw ES256 signing) and presentation verification
//!    natively and in wasm in Chromium against raw ES256 verification (see
//!    `bench_credentials.rs`);
//! 8. `relay-bench` against the release `tacit-relay` binary (1,000 paired sessions: memory per
//!    idle session, then paced 200-byte frames at rates below the relay's per-side limit),
//!    against a forward-only WebSocket server in the same run (see
//!    `tests/src/bin/relay-bench.rs`);
//!
//! and assembles every figure with the machine, the browser, the date and the command.
//! `core`, `signer`, `site`, `issuer`, `presentation` (native and wasm), `browser` (with item
//! 29), `bridge` (item 29 alone) and `relay` run one part and print it. Nothing here asserts on
//! a time.

use std::fs;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime};

use crate::build_web::{self, SITES};
use crate::{cargo, run, target_dir, workspace_root};

#[path = "bench_credentials.rs"]
mod credentials;

/// The npm package whose Argon2id is the in-page baseline, pinned.
pub const HASH_WASM: &str = "hash-wasm@4.13.0";
/// Seconds of HTTP load for the signer in the full report.
const SIGNER_SECONDS: &str = "20";
/// Seconds of HTTP load for the site in the full report.
const SITE_SECONDS: &str = "10";
/// Releases with a presentation built in the page (and as many self-asserted) in the full report.
const PROOFS: &str = "5";

/// The parts `cargo xtask bench <part>` runs alone.
pub const PARTS: [&str; 8] = [
    "core",
    "signer",
    "site",
    "issuer",
    "presentation",
    "browser",
    "bridge",
    "relay",
];

/// Seconds of load per relay step in the full report.
const RELAY_SECONDS: &str = "5";

/// The criterion benchmarks the report reads, with what they measure.
const CORE: [(&str, &str); 6] = [
    (
        "vault/unlock_default_m64MiB_t3_p4",
        "Unlock at the defaults (Argon2id m = 64 MiB, t = 3, p = 4, + decrypt)",
    ),
    (
        "vault/unlock_minimum_m19MiB_t2_p1",
        "Unlock at the minimum (m = 19 MiB, t = 2, p = 1)",
    ),
    ("claim_evaluate", "Evaluate one claim"),
    (
        "claim_answer_through_ledger",
        "Answer one claim through the disclosure ledger (fresh ledger)",
    ),
    ("log/append_10000", "Append 10,000 log entries"),
    ("log/verify_10000", "Verify a 10,000-entry chain"),
];

pub fn bench(rest: &[String]) -> Result<(), String> {
    let (which, extra) = match rest.first().map(String::as_str) {
        Some(name) if PARTS.contains(&name) => (name, &rest[1..]),
        _ => ("all", rest),
    };
    let extra: Vec<&str> = extra
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--")
        .collect();
    let out = target_dir().join("bench");
    fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    match which {
        "core" => core(&extra).map(drop),
        "signer" => signer(&extra).map(drop),
        "site" => site(&extra).map(drop),
        "issuer" => credentials::issuer(&extra).map(drop),
        "presentation" => {
            let native = credentials::presentation_native(&extra)?;
            let wasm = credentials::presentation_wasm()?;
            println!("\n{}", credentials::presentation_section(&native, &wasm));
            Ok(())
        }
        "browser" => {
            let hash_wasm = fetch_hash_wasm(&out)?;
            browser(&out, &hash_wasm.file, &extra)
        }
        "bridge" => bridge(&out, &extra),
        "relay" => relay(&out, &extra).map(drop),
        _ => all(&out, &extra, rest),
    }
}

fn all(out: &Path, extra: &[&str], rest: &[String]) -> Result<(), String> {
    let started = Instant::now();
    let load_before = read_trimmed("/proc/loadavg");
    let mut steps = Vec::new();
    let mut timed = |name: String, step: Instant| {
        steps.push((name, step.elapsed().as_secs_f64()));
    };

    let step = Instant::now();
    crate::ci::ensure_wasm_opt()?;
    build_web::build_web(&[], false, build_web::WasmOpt::Required)?;
    timed("`cargo xtask build-web` (every site)".to_owned(), step);

    let step = Instant::now();
    let core_started = SystemTime::now();
    core(extra)?;
    let core_rows = core_figures(core_started);
    let criterion_args = if extra.is_empty() {
        "criterion's defaults".to_owned()
    } else {
        format!("criterion args `{}`", extra.join(" "))
    };
    timed(
        format!("`cargo bench -p wallet-core --bench core` ({criterion_args})"),
        step,
    );

    let step = Instant::now();
    let signer_md = signer(&["--seconds", SIGNER_SECONDS])?;
    timed(
        format!("`signer-bench --seconds {SIGNER_SECONDS}` (release, with its build)"),
        step,
    );

    let step = Instant::now();
    let site_md = site(&["--seconds", SITE_SECONDS])?;
    timed(
        format!(
            "`site-bench --seconds {SITE_SECONDS}` (release, with its build; PostgreSQL cluster \
             included)"
        ),
        step,
    );

    let step = Instant::now();
    let hash_wasm = fetch_hash_wasm(out)?;
    timed(format!("`npm pack {HASH_WASM}` (reused if present)"), step);

    let step = Instant::now();
    browser(out, &hash_wasm.file, &["--proofs", PROOFS])?;
    timed(
        "`browser-bench` with its defaults: 9 unlock rounds, 50 calls per tool, 50 expiries, \
         30 grants/revokes and 30 withdrawals per baseline, 5 proven and 5 self-asserted \
         releases (`--proofs 5`), 7 loads; item 29: 50 calls of each claim tool, 30 grants in \
         the vault and 30 on the wallet page (release, with its build)"
            .to_owned(),
        step,
    );

    let step = Instant::now();
    let issuer_md = credentials::issuer(&["--seconds", credentials::ISSUER_SECONDS])?;
    timed(
        format!(
            "`issuer-bench --seconds {}` (release, with its build)",
            credentials::ISSUER_SECONDS
        ),
        step,
    );

    let step = Instant::now();
    let native = credentials::presentation_native(&[])?;
    timed(
        "`cargo bench -p tacit-protocol --bench presentation` (with its build)".to_owned(),
        step,
    );
    let step = Instant::now();
    let wasm = credentials::presentation_wasm()?;
    timed(
        "`cargo test --release --target wasm32-unknown-unknown -p tacit-protocol --test \
         wasm_presentation -- --nocapture` in headless Chromium (with its build)"
            .to_owned(),
        step,
    );
    let step = Instant::now();
    let relay_md = relay(out, &["--seconds", RELAY_SECONDS])?;
    timed(
        format!(
            "`cargo build --release -p tacit-relay`, then `relay-bench --seconds {RELAY_SECONDS}` \
             (release, with its build)"
        ),
        step,
    );
    let credentials_md = format!(
        "{}{}",
        credentials::issuer_section(&issuer_md),
        credentials::presentation_section(&native, &wasm)
    );
    let load_after = read_trimmed("/proc/loadavg");

    let mut command = String::from("cargo xtask bench");
    for arg in rest {
        command.push(' ');
        command.push_str(arg);
    }
    let machine = Machine {
        command,
        load_before,
        load_after,
        seconds: started.elapsed().as_secs_f64(),
        steps,
    };
    let report = assemble(
        out,
        &machine,
        &hash_wasm,
        &core_rows,
        &Native {
            signer: &signer_md,
            site: &site_md,
            credentials: &credentials_md,
            relay: &relay_md,
        },
    )?;
    let path = out.join("report.md");
    fs::write(&path, &report).map_err(|e| format!("writing {}: {e}", path.display()))?;
    println!("\n{report}");
    println!("wrote {}", path.display());
    Ok(())
}

/// Criterion; its output is printed as it comes. Extra args go to criterion.
fn core(extra: &[&str]) -> Result<String, String> {
    let mut args = vec!["bench", "--package", "wallet-core", "--bench", "core"];
    if !extra.is_empty() {
        args.push("--");
        args.extend(extra.iter().copied());
    }
    run_capture("bench core", &cargo(), &args)
}

/// The release `signer-bench`; returns its markdown.
fn signer(extra: &[&str]) -> Result<String, String> {
    let mut args = vec![
        "run",
        "--release",
        "--package",
        "signer",
        "--bin",
        "signer-bench",
        "--",
    ];
    args.extend(extra.iter().copied());
    run_capture("bench signer", &cargo(), &args)
}

/// The release `site-bench`; returns its markdown.
fn site(extra: &[&str]) -> Result<String, String> {
    let mut args = vec![
        "run",
        "--release",
        "--package",
        "tacit-site",
        "--bin",
        "site-bench",
        "--",
    ];
    args.extend(extra.iter().copied());
    run_capture("bench site", &cargo(), &args)
}

/// The release `browser-bench`, writing its fragments to `<out>/browser/`.
fn browser(out: &Path, hash_wasm: &Path, extra: &[&str]) -> Result<(), String> {
    let dir = out.join("browser");
    let dir_arg = dir.display().to_string();
    let hash_arg = hash_wasm.display().to_string();
    let mut args = vec![
        "run",
        "--release",
        "--package",
        "tacit-e2e",
        "--bin",
        "browser-bench",
        "--",
        "--out",
        &dir_arg,
        "--hash-wasm",
        &hash_arg,
    ];
    args.extend(extra.iter().copied());
    run("bench browser", &cargo(), &args, &[])
}

/// Item 29 alone: `browser-bench --only-bridge`, writing `<out>/browser/29-bridge.md`.
fn bridge(out: &Path, extra: &[&str]) -> Result<(), String> {
    let dir_arg = out.join("browser").display().to_string();
    let mut args = vec![
        "run",
        "--release",
        "--package",
        "tacit-e2e",
        "--bin",
        "browser-bench",
        "--",
        "--out",
        &dir_arg,
        "--only-bridge",
    ];
    args.extend(extra.iter().copied());
    run("bench bridge", &cargo(), &args, &[])
}

/// The release `tacit-relay` binary, then the release `relay-bench` against it (writing
/// `<out>/relay.md`); returns its markdown.
fn relay(out: &Path, extra: &[&str]) -> Result<String, String> {
    run(
        "build tacit-relay",
        &cargo(),
        &[
            "build",
            "--release",
            "--package",
            "tacit-relay",
            "--bin",
            "tacit-relay",
        ],
        &[],
    )?;
    let binary = target_dir().join("release").join("tacit-relay");
    let relay_arg = binary.display().to_string();
    let out_arg = out.join("relay.md").display().to_string();
    let mut args = vec![
        "run",
        "--release",
        "--package",
        "tacit-e2e",
        "--bin",
        "relay-bench",
        "--",
        "--relay",
        &relay_arg,
        "--out",
        &out_arg,
    ];
    args.extend(extra.iter().copied());
    run_capture("bench relay", &cargo(), &args)
}

/// Runs a command in the workspace root, streaming its stdout while keeping it.
fn run_capture(name: &str, program: &str, args: &[&str]) -> Result<String, String> {
    run_capture_env(name, program, args, &[])
}

/// [`run_capture`] with extra environment.
fn run_capture_env(
    name: &str,
    program: &str,
    args: &[&str],
    envs: &[(&str, &str)],
) -> Result<String, String> {
    let shown: String = envs.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    println!("--> {shown}{program} {}", args.join(" "));
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(workspace_root())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{name}: could not start `{program}`: {e}"))?;
    let mut captured = String::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("{name}: reading its output: {e}"))?;
            println!("{line}");
            captured.push_str(&line);
            captured.push('\n');
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("{name}: waiting for it: {e}"))?;
    println!("<-- {name}: {:.1}s", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(captured)
    } else {
        Err(format!("step `{name}` failed ({status})"))
    }
}

/// hash-wasm as the npm registry serves it.
struct HashWasm {
    file: PathBuf,
    integrity: String,
}

/// `npm pack` of [`HASH_WASM`] into `<out>/npm/` (reused if already there), unpacked with tar.
fn fetch_hash_wasm(out: &Path) -> Result<HashWasm, String> {
    let dir = out.join("npm");
    let file = dir.join("package/dist/argon2.umd.min.js");
    let meta = dir.join("npm-pack.json");
    if !(file.is_file() && meta.is_file()) {
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(|e| format!("clearing {}: {e}", dir.display()))?;
        }
        fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let dest = dir.display().to_string();
        let json = run_capture(
            "npm pack",
            "npm",
            &[
                "pack",
                HASH_WASM,
                "--json",
                "--pack-destination",
                &dest,
            ],
        )
        .map_err(|e| {
            format!("{e}: the in-page baseline needs {HASH_WASM} from the npm registry (is `npm` installed?)")
        })?;
        let tarball = json_string(&json, "/0/filename")
            .ok_or_else(|| format!("npm pack printed no filename: {json}"))?;
        run(
            "untar hash-wasm",
            "tar",
            &[
                "-xzf",
                &dir.join(&tarball).display().to_string(),
                "-C",
                &dest,
            ],
            &[],
        )?;
        fs::write(&meta, &json).map_err(|e| format!("writing {}: {e}", meta.display()))?;
        if !file.is_file() {
            return Err(format!("{HASH_WASM} has no {}", file.display()));
        }
    }
    let json = fs::read_to_string(&meta).map_err(|e| format!("reading {}: {e}", meta.display()))?;
    Ok(HashWasm {
        file,
        integrity: json_string(&json, "/0/integrity").unwrap_or_else(|| "unknown".to_owned()),
    })
}

/// The string at `pointer` (RFC 6901) in a JSON text.
fn json_string(json: &str, pointer: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    value.pointer(pointer)?.as_str().map(str::to_owned)
}

/// The number at `pointer` (RFC 6901) in a JSON text.
fn json_number(json: &str, pointer: &str) -> Option<f64> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    value.pointer(pointer)?.as_f64()
}

/// Criterion's median estimate (ns) of each [`CORE`] bench, if written since `since`.
fn core_figures(since: SystemTime) -> Vec<(&'static str, Option<f64>)> {
    CORE.iter()
        .map(|(id, label)| {
            let path = target_dir()
                .join("criterion")
                .join(id)
                .join("new/estimates.json");
            let fresh = fs::metadata(&path)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= since);
            let median = fresh
                .then(|| fs::read_to_string(&path).ok())
                .flatten()
                .and_then(|json| json_number(&json, "/median/point_estimate"));
            (*label, median)
        })
        .collect()
}

struct Machine {
    command: String,
    load_before: String,
    load_after: String,
    seconds: f64,
    /// What ran, and how long each step took (seconds).
    steps: Vec<(String, f64)>,
}

fn read_trimmed(path: &str) -> String {
    fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// The first line of a command's stdout, or "unknown".
fn output_of(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .current_dir(workspace_root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

fn cpu_model() -> String {
    let info = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    info.lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or_else(|| "unknown".to_owned(), |(_, v)| v.trim().to_owned())
}

fn mem_total() -> String {
    let info = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    info.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().strip_suffix(" kB")?.trim().parse::<f64>().ok())
        .map_or_else(
            || "unknown".to_owned(),
            |kb| format!("{:.1} GiB", kb / 1024.0 / 1024.0),
        )
}

fn fragment(out: &Path, name: &str) -> Result<String, String> {
    let path = out.join("browser").join(name);
    fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))
}

/// The markdown the native benches printed, for [`assemble`].
struct Native<'a> {
    signer: &'a str,
    site: &'a str,
    credentials: &'a str,
    relay: &'a str,
}

fn assemble(
    out: &Path,
    machine: &Machine,
    hash_wasm: &HashWasm,
    core_rows: &[(&str, Option<f64>)],
    native: &Native<'_>,
) -> Result<String, String> {
    let Native {
        signer: signer_md,
        site: site_md,
        credentials: credentials_md,
        relay: relay_md,
    } = *native;
    let chromium = fragment(out, "chromium.txt")?;
    let commit = output_of("git", &["rev-parse", "--short", "HEAD"]);
    // `output_of` gives the first line, or "unknown" for no output: a clean tree.
    let dirty = output_of("git", &["status", "--porcelain"]) != "unknown";
    let mut r = String::new();
    r.push_str("# Tacit benchmark report\n\n");
    r.push_str(&format!(
        "Written by `{}` on {} (commit {commit}{}), {:.0} s in all. Every figure below was \
         measured in this run; each ratio divides two medians from this run, the baseline named \
         in its table. Medians over repeated runs; percentiles are nearest-rank. No test asserts \
         on any of these times.\n\n",
        machine.command,
        output_of("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        if dirty {
            " plus uncommitted changes"
        } else {
            ""
        },
        machine.seconds,
    ));
    r.push_str("| Machine | |\n|---|---|\n");
    r.push_str(&format!(
        "| CPU | {} × {} (`nproc`) |\n",
        cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    ));
    r.push_str(&format!("| Memory | {} |\n", mem_total()));
    r.push_str(&format!(
        "| Kernel | Linux {} |\n",
        read_trimmed("/proc/sys/kernel/osrelease")
    ));
    r.push_str(&format!(
        "| Load average (1, 5, 15 min; running/total) before → after | {} → {} |\n",
        machine.load_before, machine.load_after
    ));
    r.push_str(&format!("| Rust | {} |\n", output_of("rustc", &["-V"])));
    r.push_str(&format!(
        "| Browser | {} (headless, `--enable-blink-features=WebMCP`) |\n",
        chromium.trim()
    ));
    r.push_str(&format!(
        "| In-page Argon2 baseline | {HASH_WASM} from the npm registry (`npm pack`, {}) |\n\n",
        hash_wasm.integrity
    ));
    r.push_str("What ran, in order:\n\n");
    for (i, (step, seconds)) in machine.steps.iter().enumerate() {
        r.push_str(&format!("{}. {step}: {seconds:.0} s\n", i + 1));
    }
    r.push_str(
        "\nThe machine is shared: other builds, tests or fuzzers may have run on the same cores \
         during the run (the load average shows how busy it was). Compare ratios rather than \
         absolute times across runs.\n\n",
    );
    for name in [
        "1-unlock.md",
        "2-roundtrip.md",
        "3-expiry.md",
        "4-revoke.md",
    ] {
        r.push_str(&fragment(out, name)?);
    }
    r.push_str(&signer_section(signer_md));
    r.push_str(&size_section(&hash_wasm.file)?);
    r.push_str(&fragment(out, "7-ready.md")?);
    r.push_str(&site_section(site_md));
    r.push_str(credentials_md);
    r.push_str(&fragment(out, "11-proofs.md")?);
    r.push_str(&fragment(out, "13-targets.md")?);
    r.push_str(&fragment(out, "29-bridge.md")?);
    r.push_str(&relay_section(relay_md));
    r.push_str(&core_section(core_rows));
    Ok(r)
}

fn signer_section(md: &str) -> String {
    let mut r = String::from("## 5. Signer throughput and latency\n\n");
    r.push_str(&format!(
        "`cargo run --release -p signer --bin signer-bench -- --seconds {SIGNER_SECONDS}`: the \
         service in-process on loopback with a throwaway key, `POST /v1/receipts` over \
         keep-alive connections, on a throwaway SQLite file and then on a throwaway PostgreSQL \
         cluster (`tacit_store::testing::PgCluster`). Its parts, each measured alone in the same \
         run: `p256` verifying a request signature and `ed25519-dalek` signing the canonical \
         bytes (one thread each), and the replay-token write (with its receipt record, through \
         the group commit) from as many tasks as there are connections; each goal row says \
         whether it is met. The load client shares the cores with the server.\n\n"
    ));
    r.push_str(md.trim_end());
    r.push('\n');
    let raw = table_number(md, "| raw ed25519-dalek sign", "signs/s");
    let p50 = table_number(md, "| latency p50", "ms");
    if let (Some(raw), Some(p50)) = (raw, p50) {
        let one_sign_ms = 1000.0 / raw;
        r.push_str(&format!(
            "| latency p50 / one raw signature ({:.4} ms) | {:.0}× |\n",
            one_sign_ms,
            p50 / one_sign_ms
        ));
    }
    r.push('\n');
    r
}

fn site_section(md: &str) -> String {
    let mut r = String::from("## 8. Site server: verdicts and the nonce table\n\n");
    r.push_str(&format!(
        "`cargo run --release -p tacit-site --bin site-bench -- --seconds {SITE_SECONDS}`: the \
         housing site in-process on loopback (`tacit_site::server::spawn`, its SQLite nonce \
         table, a pinned throwaway signer key, rate limit off); one nonce issued into the table \
         and one valid receipt signed per request, each sent once as `POST /api/applications` \
         over 64 keep-alive connections (a request counts when accepted). The baseline is \
         ed25519-dalek's `verify_strict` of a receipt's signing bytes, the signature check the \
         verdict performs, on one thread in the same run. Then the real `Nonces::consume` of \
         pre-issued nonces from 64 tasks, on SQLite and on a throwaway PostgreSQL cluster \
         (`tacit_store::testing::PgCluster`), and the same load on two site instances sharing \
         one PostgreSQL database. The goal rows compare each load with its parts (the whole \
         receipt check on one thread, then a consume at the measured rate; the receipts are \
         self-asserted, so no presentation is verified) and say whether each goal is met. The \
         load client shares the cores with the server and the database.\n\n"
    ));
    r.push_str(md.trim_end());
    r.push_str("\n\n");
    r
}

fn relay_section(md: &str) -> String {
    let mut r = String::from("## 29. Relay: paired sessions, memory and frames\n\n");
    r.push_str(&format!(
        "`cargo build --release -p tacit-relay`, then `cargo run --release -p tacit-e2e --bin \
         relay-bench -- --seconds {RELAY_SECONDS}`: the real `tacit-relay` binary started as a \
         child process (`--listen 127.0.0.1:PORT`, so its memory is read from \
         `/proc/<pid>/status`), loaded by a native tokio-tungstenite client in the bench \
         process. The baseline, in the same run, is the same load against a forward-only axum \
         WebSocket server (the bench binary started again as a child: the relay's path and \
         per-connection queue, no rate limit, no mailbox, no route rules), so each ratio says \
         what the relay's rules cost. Load generator and server share the machine's cores.\n\n"
    ));
    r.push_str(md.trim_end());
    r.push_str("\n\n");
    r
}

/// The number just before `unit` on the markdown row starting with `row`.
fn table_number(md: &str, row: &str, unit: &str) -> Option<f64> {
    let line = md.lines().find(|l| l.starts_with(row))?;
    let before = &line[..line.find(&format!(" {unit}"))?];
    before
        .rsplit([' ', '|'])
        .next()?
        .replace(',', "")
        .parse()
        .ok()
}

fn size_section(hash_wasm: &Path) -> Result<String, String> {
    let mut r = format!(
        "## 6. wasm size\n\nFrom `target/site/<site>/size.json`, written by `cargo xtask \
         build-web` in this run (`wasm-release` profile: `opt-level = \"z\"` (argon2 and blake2 \
         at 3), fat LTO, one codegen unit, `panic = \"abort\"`; then wasm-bindgen without the \
         name and producers sections, then binaryen's `wasm-opt {} \
         --one-caller-inline-max-function-size=0`; gzip at level 9). The baseline is the \
         wallet's wasm as shipped; hash-wasm's Argon2 build (JS with its wasm embedded as \
         base64) is given for scale.\n\n",
        build_web::WASM_OPT_LEVEL
    );
    let (table, wallet_raw) = size_table(&|site: &str| {
        let path = target_dir().join("site").join(site).join("size.json");
        fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))
    })?;
    r.push_str(&table);
    let kib = |b: f64| format!("{:.1} KiB", b / 1024.0);
    let bytes = fs::read(hash_wasm).map_err(|e| format!("reading {}: {e}", hash_wasm.display()))?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&bytes).map_err(|e| format!("gzip: {e}"))?;
    let gzip = gz.finish().map_err(|e| format!("gzip: {e}"))?.len() as f64;
    let raw = bytes.len() as f64;
    r.push_str(&format!(
        "| *{HASH_WASM} `argon2.umd.min.js` (for scale)* | – | – | {} | {} | {:.2} | {:.2} | – | – |\n\n",
        kib(raw),
        kib(gzip),
        gzip / raw,
        raw / wallet_raw
    ));
    Ok(r)
}

/// The size table of every site from its `size.json` (read by `read`), without the hash-wasm
/// row; each row: before wasm-opt, after it (what ships), and the JS glue. Also returns the
/// wallet's shipped raw size (the baseline of the ratios).
fn size_table(read: &dyn Fn(&str) -> Result<String, String>) -> Result<(String, f64), String> {
    let kib = |b: f64| format!("{:.1} KiB", b / 1024.0);
    let mut r = String::from(
        "| Site | wasm raw before wasm-opt | gzip before | wasm raw shipped | gzip shipped | \
         gzip / raw | raw / wallet's | JS glue raw / gzip | wasm-opt |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    let mut wallet_raw = None;
    for site in SITES {
        let json = read(site.name)?;
        let n = |pointer: &str| json_number(&json, pointer).unwrap_or(f64::NAN);
        let (raw, gzip) = (n("/wasm/raw_bytes"), n("/wasm/gzip_bytes"));
        let (pre_raw, pre_gzip) = (
            n("/wasm_before_opt/raw_bytes"),
            n("/wasm_before_opt/gzip_bytes"),
        );
        let (js_raw, js_gzip) = (n("/js/raw_bytes"), n("/js/gzip_bytes"));
        let base = *wallet_raw.get_or_insert(raw);
        let optimised = serde_json::from_str::<serde_json::Value>(&json)
            .ok()
            .and_then(|v| v.get("wasm_opt").and_then(serde_json::Value::as_bool))
            .unwrap_or(false);
        r.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.2} | {:.2} | {} / {} | {} |\n",
            site.name,
            kib(pre_raw),
            kib(pre_gzip),
            kib(raw),
            kib(gzip),
            gzip / raw,
            raw / base,
            kib(js_raw),
            kib(js_gzip),
            if optimised {
                format!(
                    "`{}`",
                    json_string(&json, "/wasm_opt_level").unwrap_or_default()
                )
            } else {
                "**no** (not optimised)".to_owned()
            }
        ));
        // A page that loads its module on first use: the module it loads at once.
        if let Some(first_gzip) = json_number(&json, "/first_load/wasm/gzip_bytes") {
            let first_raw = n("/first_load/wasm/raw_bytes");
            let (js_raw, js_gzip) = (
                n("/first_load/js/raw_bytes"),
                n("/first_load/js/gzip_bytes"),
            );
            r.push_str(&format!(
                "| {} **first load** (`{}`; the row above loads on first use) | – | – | {} | {} | \
                 {:.2} | {:.2} | {} / {} | as above |\n",
                site.name,
                json_string(&json, "/first_load/wasm/file").unwrap_or_default(),
                kib(first_raw),
                kib(first_gzip),
                first_gzip / first_raw,
                first_raw / base,
                kib(js_raw),
                kib(js_gzip),
            ));
        }
        // Modules the page loads only when a person needs them.
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
        for module in parsed["on_demand"].as_array().into_iter().flatten() {
            let num = |ptr: &str| {
                module
                    .pointer(ptr)
                    .and_then(serde_json::Value::as_f64)
                    .unwrap_or(f64::NAN)
            };
            let (raw, gzip) = (num("/wasm/raw_bytes"), num("/wasm/gzip_bytes"));
            r.push_str(&format!(
                "| {} on demand (`{}`, {}) | – | – | {} | {} | {:.2} | {:.2} | {} / {} | as above |\n",
                site.name,
                module["wasm"]["file"].as_str().unwrap_or_default(),
                module["when"].as_str().unwrap_or_default(),
                kib(raw),
                kib(gzip),
                gzip / raw,
                raw / base,
                kib(num("/js/raw_bytes")),
                kib(num("/js/gzip_bytes")),
            ));
        }
    }
    Ok((r, wallet_raw.unwrap_or(f64::NAN)))
}

fn core_section(rows: &[(&str, Option<f64>)]) -> String {
    let mut r = String::from(
        "## Native core (criterion)\n\n`cargo bench -p wallet-core --bench core` in this run \
         (release; criterion's median estimate). The unlock baseline of item 1 is measured \
         separately, interleaved with the browser runs, on the very vault the page stored.\n\n\
         | What | Median |\n|---|---|\n",
    );
    for (label, ns) in rows {
        let value = match ns {
            Some(ns) if *ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
            Some(ns) if *ns >= 1e3 => format!("{:.2} µs", ns / 1e3),
            Some(ns) => format!("{ns:.1} ns"),
            None => "not run".to_owned(),
        };
        r.push_str(&format!("| {label} | {value} |\n"));
    }
    r.push('\n');
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_npm_and_criterion_fields() {
        let npm = r#"[{"id": "hash-wasm@4.13.0", "integrity": "sha512-abc==", "filename": "hash-wasm-4.13.0.tgz"}]"#;
        assert_eq!(
            json_string(npm, "/0/filename").unwrap(),
            "hash-wasm-4.13.0.tgz"
        );
        assert_eq!(json_string(npm, "/0/integrity").unwrap(), "sha512-abc==");
        let est = r#"{"mean":{"point_estimate":5.0},"median":{"confidence_interval":{"lower_bound":1.0},"point_estimate":123456789.5,"standard_error":2.0}}"#;
        assert_eq!(
            json_number(est, "/median/point_estimate"),
            Some(123_456_789.5)
        );
        let size = r#"{ "wasm": { "raw_bytes": 713960, "gzip_bytes": 233692 }, "js": { "raw_bytes": 35466, "gzip_bytes": 6338 } }"#;
        assert_eq!(json_number(size, "/js/raw_bytes"), Some(35466.0));
    }

    #[test]
    fn the_size_table_shows_before_and_after_wasm_opt_and_flags_an_unoptimised_site() {
        let optimised = r#"{ "site": "wallet", "wasm": { "file": "pkg/x_bg.wasm", "raw_bytes": 2048, "gzip_bytes": 1024 },
  "wasm_before_opt": { "raw_bytes": 4096, "gzip_bytes": 1536 },
  "js": { "file": "pkg/x.js", "raw_bytes": 512, "gzip_bytes": 256 }, "wasm_opt": true, "wasm_opt_level": "-Oz",
  "first_load": { "wasm": { "file": "pkg/b_bg.wasm", "raw_bytes": 1024, "gzip_bytes": 256 }, "js": { "raw_bytes": 512, "gzip_bytes": 128 } },
  "on_demand": [ { "when": "when a new passphrase is typed", "wasm": { "file": "pkg/s_bg.wasm", "raw_bytes": 4096, "gzip_bytes": 2048 }, "js": { "raw_bytes": 256, "gzip_bytes": 100 } } ] }"#;
        let plain = r#"{ "wasm": { "raw_bytes": 4096, "gzip_bytes": 1536 }, "wasm_before_opt": { "raw_bytes": 4096, "gzip_bytes": 1536 }, "js": { "raw_bytes": 512, "gzip_bytes": 256 }, "wasm_opt": false, "wasm_opt_level": null }"#;
        let (table, wallet_raw) = size_table(&|site: &str| {
            Ok(if site == "wallet" { optimised } else { plain }.to_owned())
        })
        .unwrap();
        assert_eq!(wallet_raw, 2048.0);
        let wallet = table.lines().find(|l| l.starts_with("| wallet |")).unwrap();
        assert_eq!(
            wallet,
            "| wallet | 4.0 KiB | 1.5 KiB | 2.0 KiB | 1.0 KiB | 0.50 | 1.00 | 0.5 KiB / 0.2 KiB | `-Oz` |"
        );
        let first = table
            .lines()
            .find(|l| l.contains("**first load**"))
            .unwrap();
        assert_eq!(
            first,
            "| wallet **first load** (`pkg/b_bg.wasm`; the row above loads on first use) | – | – | \
             1.0 KiB | 0.2 KiB | 0.25 | 0.50 | 0.5 KiB / 0.1 KiB | as above |"
        );
        assert_eq!(table.matches("**first load**").count(), 1, "{table}");
        let demand = table.lines().find(|l| l.contains("on demand")).unwrap();
        assert_eq!(
            demand,
            "| wallet on demand (`pkg/s_bg.wasm`, when a new passphrase is typed) | – | – | \
             4.0 KiB | 2.0 KiB | 0.50 | 2.00 | 0.2 KiB / 0.1 KiB | as above |"
        );
        let other = table
            .lines()
            .find(|l| l.starts_with("| housing |"))
            .unwrap();
        assert!(
            other.ends_with("| 2.00 | 0.5 KiB / 0.2 KiB | **no** (not optimised) |"),
            "{other}"
        );
        assert!(size_table(&|_: &str| Err("missing".to_owned())).is_err());
    }

    #[test]
    fn reads_signer_table() {
        let md = "| POST /v1/receipts | 25407 req/s (1 ok, 0 failed) |\n| latency p50 | 1.920 ms |\n\
                  | raw ed25519-dalek sign, 1 core | 62923 signs/s |\n";
        assert_eq!(table_number(md, "| latency p50", "ms"), Some(1.92));
        assert_eq!(
            table_number(md, "| raw ed25519-dalek sign", "signs/s"),
            Some(62923.0)
        );
    }

    #[test]
    fn every_part_is_in_the_usage_and_the_relay_section_carries_its_table() {
        let usage = crate::task_usage("bench").unwrap();
        for part in PARTS {
            assert!(usage.contains(part), "{part} missing from {usage}");
        }
        let md = "relay-bench: 1000 sessions\n\n| Measure | `tacit-relay` |\n|---|---|\n\
                  | RSS after start | 3.0 MiB |\n";
        let section = relay_section(md);
        assert!(section.starts_with("## 29. Relay"));
        assert!(section.contains("--seconds 5"));
        assert!(section.ends_with("| RSS after start | 3.0 MiB |\n\n"));
    }

    #[test]
    fn the_site_section_carries_the_bench_table() {
        let md = "site-bench: 64 connections\n\n| measure | value |\n|---|---|\n\
                  | service / raw verify_strict | 0.041 |\n";
        let section = site_section(md);
        assert!(section.starts_with("## 8. Site server"));
        assert!(section.contains("--seconds 10"));
        assert!(section.ends_with("| service / raw verify_strict | 0.041 |\n\n"));
    }
}
