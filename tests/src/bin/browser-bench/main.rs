//! `browser-bench`: the wallet page measured in headless Chromium, each figure next to a
//! baseline measured in the same run (issue 7, items 1–4 and 7; issue 10, item 11).
//!
//! ```text
//! cargo run --release -p tacit-e2e --bin browser-bench -- \
//!     --hash-wasm target/bench/npm/package/dist/argon2.umd.min.js [--out target/bench/browser]
//!     [--unlocks 9] [--calls 50] [--expiries 50] [--revokes 30] [--loads 7] [--proofs 0]
//!     [--bridge-calls 50] [--bridge-grants 30] [--only-bridge]
//! ```
//! `--bridge-calls N` and `--bridge-grants N` size item 29 (issue 29: a claim call through the
//! bridge and the relay against one on the wallet page, and the person's grant in the vault →
//! `toolsAdded` in the agent's browser; see the `bridge` module); `--only-bridge` runs just that
//! (no hash-wasm needed) and writes `29-bridge.md`, `chromium.txt` and `samples-bridge.json`.
//! `--proofs N` (0, the default, skips it) runs item 11: N releases with a presentation built
//! in the page and N self-asserted ones (needs the wallet's credentials and holder keys).
//! `--revokes` also sets how many plain JS tools each baseline of items 3 and 4 withdraws.
//! `cargo xtask bench` fetches `hash-wasm` with `npm pack` and runs this with the right paths.
//!
//! The built wallet (`target/site/wallet`, from `cargo xtask build-web`) is copied to
//! `<out>/site/` with hash-wasm's `argon2.umd.min.js` beside it under `bench/`, so that both
//! Argon2 implementations run in the same page under the wallet's own CSP
//! (`script-src 'self' 'wasm-unsafe-eval'`). Writes one markdown fragment per section
//! (`1-unlock.md`, `2-roundtrip.md`, `3-expiry.md`, `4-revoke.md`, `7-ready.md`,
//! `11-proofs.md`, `13-targets.md`: issue 13's ratios, `29-bridge.md`),
//! `chromium.txt` and every raw sample in `samples.json`. Nothing here asserts a time.

mod baseline;
mod boot;
mod bridge;
mod calls;
mod proofs;
mod registry;
mod stats;
mod targets;
mod unlock;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;
use serde_json::{Value, json};
use tacit_e2e::wallet::Wallet;
use tacit_e2e::{Browser, Page, StaticServer};

pub type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// What to run, from the command line.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "browser-bench",
    version,
    about = "Measures the wallet page in headless Chromium: unlock, tool round trips, expiry, \
             revoke, page loads and presentations built in the page"
)]
struct Args {
    /// Write the markdown fragments here [default: <target>/bench/browser].
    #[arg(long)]
    out: Option<PathBuf>,
    /// hash-wasm's argon2.umd.min.js, the unlock comparison (`cargo xtask bench` fetches it).
    #[arg(long, required_unless_present_any = ["no_hash_wasm", "only_bridge"])]
    hash_wasm: Option<PathBuf>,
    /// Skip the hash-wasm comparison.
    #[arg(long, conflicts_with = "hash_wasm")]
    no_hash_wasm: bool,
    /// Unlock rounds.
    #[arg(long, default_value_t = 9, value_parser = count)]
    unlocks: usize,
    /// Calls per tool.
    #[arg(long, default_value_t = 50, value_parser = count)]
    calls: usize,
    /// Grant expiries.
    #[arg(long, default_value_t = 50, value_parser = count)]
    expiries: usize,
    /// Revokes.
    #[arg(long, default_value_t = 30, value_parser = count)]
    revokes: usize,
    /// Page loads.
    #[arg(long, default_value_t = 7, value_parser = count)]
    loads: usize,
    /// Presentations built in the page (0 skips them).
    #[arg(long, default_value_t = 0)]
    proofs: usize,
    /// Calls of each claim tool in item 29 (through the bridge, on the wallet page).
    #[arg(long, default_value_t = 50, value_parser = count)]
    bridge_calls: usize,
    /// Grants (each revoked) in the vault, and as many on the wallet page, in item 29.
    #[arg(long, default_value_t = 30, value_parser = count)]
    bridge_grants: usize,
    /// Run only item 29 (the vault and the bridge).
    #[arg(long)]
    only_bridge: bool,
}

/// A count of at least 1.
fn count(text: &str) -> Result<usize, String> {
    text.parse::<usize>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| format!("takes a count ≥ 1, not `{text}`"))
}

impl Args {
    /// Where the fragments go.
    fn out_dir(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| tacit_e2e::target_dir().join("bench").join("browser"))
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("browser-bench: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The page URL the wallet is opened at: `?short_grants=1` offers the 2-second grant.
const QUERY: &str = "?short_grants=1";

fn run(args: &Args) -> Res<()> {
    let out = args.out_dir();
    if cfg!(debug_assertions) {
        eprintln!(
            "browser-bench: WARNING: a debug build; the native baseline is meaningless. \
             Run with --release."
        );
    }
    fs::create_dir_all(&out)?;
    if args.only_bridge {
        let browser = Browser::launch()?;
        println!("browser-bench: {}, item 29 only", browser.version());
        fs::write(out.join("chromium.txt"), browser.version())?;
        let bridge = bridge::run(&browser, args.bridge_calls, args.bridge_grants)?;
        write(&out, "29-bridge.md", &bridge.markdown())?;
        let samples = json!({ "chromium": browser.version(), "bridge": bridge.json() });
        fs::write(
            out.join("samples-bridge.json"),
            serde_json::to_string_pretty(&samples)?,
        )?;
        println!("browser-bench: wrote {}", out.display());
        return Ok(());
    }
    let site = stage_site(&out, args.hash_wasm.as_deref())?;
    let server = StaticServer::start(&site)?;
    let browser = Browser::launch()?;
    println!(
        "browser-bench: {} at {}",
        browser.version(),
        server.origin()
    );
    fs::write(out.join("chromium.txt"), browser.version())?;
    let mut samples = json!({ "chromium": browser.version() });

    let mut wallet = Wallet::open(&browser, &server, QUERY);
    wallet.create_profile();
    // Grant and Release need the person's act: this tab's virtual authenticator gives it in
    // milliseconds (the passphrase dialog would add an Argon2 run to every timed grant).
    wallet.use_authenticator();
    registry::install_watcher(&wallet.page)?;
    let clock = ClockOffset::measure(&wallet.page)?;
    println!(
        "browser-bench: page clock − bench clock = {:.2} ms ± {:.2} ms",
        clock.offset_ms, clock.uncertainty_ms
    );
    samples["clock"] =
        json!({ "offset_ms": clock.offset_ms, "uncertainty_ms": clock.uncertainty_ms });

    let unlock = unlock::run(&mut wallet, args.unlocks, args.hash_wasm.is_some())?;
    write(&out, "1-unlock.md", &unlock.markdown())?;
    samples["unlock"] = unlock.json();

    let calls = calls::run(&mut wallet, args.calls, &clock)?;
    write(&out, "2-roundtrip.md", &calls.markdown())?;
    samples["roundtrip"] = calls.json();

    // The expiry's baseline (a plain tool aborted from a page timer) is measured between the
    // batches of expiries, `args.revokes` withdrawals in all.
    let batches = args.expiries.div_ceil(registry::EXPIRY_BATCH).max(1);
    let per_batch = args.revokes.div_ceil(batches);
    let mut timer = registry::Trio::default();
    let expiry = registry::expiries(&mut wallet, args.expiries, &clock, |page| {
        let first = timer.call_to_agent.len();
        let n = per_batch.min(args.revokes.saturating_sub(first));
        let trio = baseline::plain_tools(page, first, n, baseline::Variant::ALL[0], &clock)?;
        timer.extend(&trio);
        Ok(())
    })?;
    write(&out, "3-expiry.md", &expiry.markdown())?;
    samples["expiry"] = expiry.json();

    let revoke = registry::grants_and_revokes(&mut wallet, args.revokes, &clock)?;
    let mut plain = vec![(baseline::Variant::ALL[0], timer)];
    for variant in &baseline::Variant::ALL[1..] {
        let trio = baseline::plain_tools(&mut wallet.page, 0, args.revokes, *variant, &clock)?;
        plain.push((*variant, trio));
    }
    baseline::clean_up(&wallet.page)?;
    let mut section4 = revoke.markdown_revoke();
    section4.push_str(&baseline::markdown(&plain, &expiry, &revoke));
    write(&out, "4-revoke.md", &section4)?;
    samples["grant_revoke"] = revoke.json();
    samples["plain_tool_withdrawal"] = baseline::json(&plain);

    let targets = targets::Targets::new(&unlock, &calls, &expiry, &revoke, &plain);
    write(&out, "13-targets.md", &targets.markdown())?;
    samples["issue13_targets"] = targets.json();

    if args.proofs > 0 {
        let proofs = proofs::run(&mut wallet, &server, args.proofs)?;
        write(&out, "11-proofs.md", &proofs.markdown())?;
        samples["presentation_in_page"] = proofs.json();
    }
    wallet.assert_no_csp_violation();
    drop(wallet);

    let ready = boot::run(&browser, &server, QUERY, args.loads)?;
    let mut section7 = ready.markdown();
    section7.push_str(&unlock.markdown_ready());
    section7.push_str(&revoke.markdown_grant());
    write(&out, "7-ready.md", &section7)?;
    samples["ready"] = ready.json();

    let bridge = bridge::run(&browser, args.bridge_calls, args.bridge_grants)?;
    write(&out, "29-bridge.md", &bridge.markdown())?;
    samples["bridge"] = bridge.json();

    fs::write(
        out.join("samples.json"),
        serde_json::to_string_pretty(&samples)?,
    )?;
    println!("browser-bench: wrote {}", out.display());
    Ok(())
}

fn write(dir: &Path, name: &str, text: &str) -> Res<()> {
    print!("{text}");
    fs::write(dir.join(name), text)?;
    Ok(())
}

/// Copies the built wallet to `<out>/site` and puts hash-wasm's Argon2 build under `bench/`.
fn stage_site(out: &Path, hash_wasm: Option<&Path>) -> Res<PathBuf> {
    let built = tacit_e2e::site_dir("wallet")?;
    let site = out.join("site");
    if site.exists() {
        fs::remove_dir_all(&site)?;
    }
    copy_dir(&built, &site)?;
    if let Some(file) = hash_wasm {
        let bench = site.join("bench");
        fs::create_dir_all(&bench)?;
        fs::copy(file, bench.join("argon2.umd.min.js"))
            .map_err(|e| format!("copying {}: {e}", file.display()))?;
    }
    Ok(site)
}

fn copy_dir(from: &Path, to: &Path) -> Res<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Milliseconds since the Unix epoch on this process's clock.
pub fn epoch_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs_f64()
        * 1000.0
}

/// The page's wall clock (`performance.timeOrigin + performance.now()`) against this process's
/// `SystemTime`. Both read the same machine's clock, so the offset should be near zero; it is
/// measured anyway, from the evaluation with the shortest round trip out of 20.
#[derive(Debug, Clone, Copy)]
pub struct ClockOffset {
    /// page − bench, in ms.
    pub offset_ms: f64,
    /// Half the round trip of the evaluation it came from.
    pub uncertainty_ms: f64,
}

impl ClockOffset {
    fn measure(page: &Page<'_>) -> Res<Self> {
        let mut best: Option<Self> = None;
        for _ in 0..20 {
            let before = epoch_ms();
            let page_ms = page
                .eval("performance.timeOrigin + performance.now()")?
                .as_f64()
                .ok_or("performance.now() is not a number")?;
            let after = epoch_ms();
            let sample = Self {
                offset_ms: page_ms - (before + after) / 2.0,
                uncertainty_ms: (after - before) / 2.0,
            };
            if best.is_none_or(|b| sample.uncertainty_ms < b.uncertainty_ms) {
                best = Some(sample);
            }
        }
        best.ok_or_else(|| "no clock sample".into())
    }

    /// A bench-clock epoch time on the page's clock.
    pub fn to_page(self, bench_ms: f64) -> f64 {
        bench_ms + self.offset_ms
    }
}

/// `value[key]` as f64, or an error naming it.
pub fn num(value: &Value, key: &str) -> Res<f64> {
    value
        .get(key)
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("expected a number `{key}` in {value}").into())
}
