//! `signer-bench`: the service's signing throughput, with request authentication, next to raw
//! P-256 verification and raw Ed25519 signing.
//!
//! Starts the server in-process on loopback (rate limit off, a throwaway key, a throwaway SQLite
//! database in a temp dir with one enrolled install), pre-signs a pool of requests with the
//! install's P-256 key (each distinct, as the signer takes each signed request once), drives
//! `POST /v1/receipts` over keep-alive connections with [`crate::http1::Conn`] until the time or
//! the pool runs out, and measures, on one thread in the same run, `p256` verifying a request
//! signature and `ed25519-dalek` signing the same canonical bytes: the two signature operations
//! the service does per request. Then, per backend (SQLite, then a throwaway PostgreSQL cluster),
//! the replay-token write alone (with its receipt record, through the group commit, from as many
//! tasks as there are connections) and the load; the goal rows compare each load with its parts
//! and with the p99 allowed. Figures only: nothing here asserts on time.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use clap::Parser;
use ed25519_dalek::Signer;
use p256::ecdsa::signature::Verifier as _;
use tacit_protocol::request_auth::{
    HEADER_INSTALL, HEADER_SIGNATURE, HEADER_TIMESTAMP, InstallKey, signing_input,
};
use tacit_service::bench::{Load, build_words, load, per_sec, post_request, ratio, repeat_for};
use tacit_service::error::Operational;
use tacit_store::testing::PgCluster;
use wallet_core::{
    Claim, ComparisonLog, GrantId, Nonce, Origin, Outcome, ReceiptPayload, SessionId, Timestamp,
    ToolName,
};

use crate::{
    AppState, Config, Enrolment, Error, KeyStore, SignerDb, SystemClock, enrol_code,
    make_signing_key, system_now,
};

/// Most requests a pool may hold: one per millisecond of timestamp, all within the skew window.
const MAX_POOL: u64 = 100_000;

/// Measure tacit-signer's POST /v1/receipts throughput against raw Ed25519 signing.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "signer-bench",
    version,
    about = "Measures POST /v1/receipts throughput against raw Ed25519 signing"
)]
pub struct BenchArgs {
    /// Seconds of HTTP load (at most 100: the payload must stay within the signer's 2-minute
    /// issued-at window).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub seconds: u64,
    /// Keep-alive connections.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub connections: u64,
    /// Seconds of raw signing (at most `--seconds`).
    #[arg(long, default_value_t = 3)]
    pub sign_seconds: u64,
    /// Comparison-log entries in the signed payload.
    #[arg(long, default_value_t = 3)]
    pub entries: usize,
    /// Requests pre-signed before the load (each is sent once; the run ends early when they
    /// are spent).
    #[arg(long, default_value_t = 60_000, value_parser = clap::value_parser!(u64).range(1..=MAX_POOL))]
    pub max_requests: u64,
}

/// The p99 the goal allows at 64 connections.
pub const GOAL_P99: Duration = Duration::from_millis(10);

/// The share of its parts' rate the service must reach.
pub const GOAL_RATIO: f64 = 0.7;

/// One backend's load and its replay-token writes measured alone.
#[derive(Debug, Clone)]
pub struct BackendRun {
    /// "SQLite" or "PostgreSQL".
    pub backend: &'static str,
    pub load: Load,
    /// Replay-token writes (each with its receipt record, as a request makes it) from
    /// `connections` tasks through [`SignerDb::take_request`], alone, before the load.
    pub writes: u64,
    pub write_elapsed: Duration,
}

impl BackendRun {
    pub fn writes_per_sec(&self) -> f64 {
        per_sec(self.writes, self.write_elapsed)
    }
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Report {
    pub args: BenchArgs,
    pub body_bytes: usize,
    /// The SQLite load (what the single-backend figures below speak of).
    pub load: Load,
    /// Every backend's run, SQLite first.
    pub runs: Vec<BackendRun>,
    pub raw_signs: u64,
    pub raw_elapsed: Duration,
    pub raw_verifies: u64,
    pub raw_verify_elapsed: Duration,
    pub release_build: bool,
}

impl Report {
    pub fn requests_per_sec(&self) -> f64 {
        self.load.per_sec()
    }

    pub fn raw_signs_per_sec(&self) -> f64 {
        per_sec(self.raw_signs, self.raw_elapsed)
    }

    pub fn raw_verifies_per_sec(&self) -> f64 {
        per_sec(self.raw_verifies, self.raw_verify_elapsed)
    }

    /// Requests per second one core could serve doing nothing but one P-256 verify and one
    /// Ed25519 sign each.
    pub fn raw_pair_per_sec(&self) -> f64 {
        let per_request =
            ratio(1.0, self.raw_verifies_per_sec()) + ratio(1.0, self.raw_signs_per_sec());
        1.0 / per_request
    }

    /// Requests per second the parts allow, each measured alone: one P-256 verify and one
    /// Ed25519 sign on one core, and one replay-token write at the rate `run`'s database took
    /// them from as many tasks as there are connections.
    pub fn parts_per_sec(&self, run: &BackendRun) -> f64 {
        let per_request = ratio(1.0, self.raw_verifies_per_sec())
            + ratio(1.0, self.raw_signs_per_sec())
            + ratio(1.0, run.writes_per_sec());
        1.0 / per_request
    }

    /// The goal rows of one backend: the ratio to its parts and the p99, each with whether it
    /// is met.
    pub fn goal_rows(&self, run: &BackendRun) -> String {
        let parts = self.parts_per_sec(run);
        let share = ratio(run.load.per_sec(), parts);
        let met = |ok: bool| if ok { "met" } else { "**not met**" };
        let p99_ms = run.load.p99.as_secs_f64() * 1000.0;
        format!(
            "| {b}: replay-token write (with receipt record) alone, {c} tasks | {w:.0} writes/s |\n\
             | {b}: parts (verify + token write + sign) | {parts:.0} req/s |\n\
             | goal {b}: service ≥ {GOAL_RATIO}× its parts | {share:.2}× — {m1} |\n\
             | goal {b}: p99 ≤ {g} ms at {c} connections | {p99_ms:.2} ms — {m2} |\n",
            b = run.backend,
            c = self.args.connections,
            w = run.writes_per_sec(),
            m1 = met(share >= GOAL_RATIO),
            g = GOAL_P99.as_millis(),
            m2 = met(run.load.p99 <= GOAL_P99),
        )
    }

    /// The figures as a markdown table.
    pub fn markdown(&self) -> String {
        let (build, cpus) = build_words(self.release_build);
        let mut out = format!(
            "signer-bench: {} connections, {} s load, {}-entry payload ({} B), {build} build, \
             {cpus} CPU(s)\n\n",
            self.args.connections, self.args.seconds, self.args.entries, self.body_bytes,
        );
        out.push_str("| measure | value |\n|---|---|\n");
        out.push_str(&self.load.rows(
            "POST /v1/receipts, signed by an enrolled install",
            "ok",
            "pre-signed pool spent early",
        ));
        for run in self.runs.iter().skip(1) {
            out.push_str(&run.load.rows(
                &format!("POST /v1/receipts, {}", run.backend),
                "ok",
                "pre-signed pool spent early",
            ));
        }
        out.push_str(&format!(
            "| raw ed25519-dalek sign, 1 core | {:.0} signs/s |\n",
            self.raw_signs_per_sec()
        ));
        out.push_str(&format!(
            "| raw p256 ECDSA verify, 1 core | {:.0} verifies/s |\n",
            self.raw_verifies_per_sec()
        ));
        out.push_str(&format!(
            "| service / raw signing | {:.2} |\n",
            ratio(self.requests_per_sec(), self.raw_signs_per_sec())
        ));
        out.push_str(&format!(
            "| service / raw (verify + sign), 1 core | {:.2} |\n",
            ratio(self.requests_per_sec(), self.raw_pair_per_sec())
        ));
        for run in &self.runs {
            out.push_str(&self.goal_rows(run));
        }
        out
    }
}

/// A payload like the wallet sends: `entries` comparisons for one site, issued now.
pub fn sample_payload(entries: usize, now: Timestamp) -> Result<ReceiptPayload, Error> {
    fn bad<E>(_: E) -> Error {
        Operational::Config("sample payload".to_owned()).into()
    }
    let site = Origin::parse("https://housing.example").map_err(bad)?;
    let mut log = ComparisonLog::new();
    for i in 0..entries {
        let years = u8::try_from(18 + i % 50).unwrap_or(18);
        log.append(
            now,
            site.clone(),
            ToolName::parse("tacit.claim.age_at_least").map_err(bad)?,
            Claim::age_at_least(years).map_err(bad)?,
            Outcome::Satisfied,
            GrantId::parse("g-bench").map_err(bad)?,
            None,
        );
    }
    ReceiptPayload::new(
        SessionId::parse("s-bench").map_err(bad)?,
        site,
        Nonce::parse("n-bench").map_err(bad)?,
        now,
        now.plus_millis(10 * 60 * 1000),
        &log,
    )
    .map_err(bad)
}

/// A fresh P-256 install key from the operating system's generator.
fn make_install_key() -> Result<p256::ecdsa::SigningKey, Error> {
    loop {
        let mut d = zeroize::Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut *d).map_err(|_| Operational::Random)?;
        if let Ok(key) = p256::ecdsa::SigningKey::from_slice(&*d) {
            return Ok(key);
        }
    }
}

/// Runs the benchmark on the current tokio runtime: the parts alone, then the load on SQLite,
/// then on a throwaway PostgreSQL cluster ([`PgCluster`]; without PostgreSQL the run fails
/// with the install command).
pub async fn run(args: BenchArgs) -> Result<Report, Error> {
    let bad =
        |what: &'static str| move |e: std::io::Error| Operational::Config(format!("{what}: {e}"));
    let now = system_now();
    let payload = sample_payload(args.entries, now)?;
    let body =
        serde_json::to_vec(&payload).map_err(|_| Operational::Config("encode".to_owned()))?;
    let install = make_install_key()?;

    // Raw signing and verifying, on one thread each in turn, with nothing else running.
    let key = make_signing_key()?;
    let bytes = payload.signing_bytes();
    let sign_for = Duration::from_secs(args.sign_seconds.clamp(1, args.seconds.max(1)));
    let input = signing_input("POST", "/v1/receipts", now.millis(), &body);
    let request_signature: p256::ecdsa::Signature = install.sign(input.as_bytes());
    let verifying = *install.verifying_key();
    let ((raw_signs, raw_elapsed), (raw_verifies, raw_verify_elapsed)) =
        tokio::task::spawn_blocking(move || {
            let signs = repeat_for(sign_for, || {
                std::hint::black_box(key.sign(std::hint::black_box(&bytes)));
            });
            let verifies = repeat_for(sign_for, || {
                let ok = verifying.verify(
                    std::hint::black_box(input.as_bytes()),
                    std::hint::black_box(&request_signature),
                );
                std::hint::black_box(ok.is_ok());
            });
            (signs, verifies)
        })
        .await
        .map_err(|_| Operational::Config("the measuring thread failed".to_owned()))?;

    let dir = tempfile::tempdir().map_err(bad("temp dir"))?;
    let sqlite_url = tacit_store::sqlite_url(&dir.path().join("bench.db"));
    let mut runs = vec![backend_run("SQLite", &sqlite_url, &args, &install).await?];
    let cluster = tokio::task::spawn_blocking(PgCluster::start)
        .await
        .map_err(|_| Operational::Config("starting PostgreSQL failed".to_owned()))?
        .map_err(|e| Operational::Config(e.to_string()))?;
    let pg_url = cluster
        .create_database("signer_bench")
        .await
        .map_err(|e| Operational::Config(e.to_string()))?;
    runs.push(backend_run("PostgreSQL", &pg_url, &args, &install).await?);
    drop(cluster);
    drop(dir);

    Ok(Report {
        body_bytes: body.len(),
        load: runs[0].load.clone(),
        runs,
        raw_signs,
        raw_elapsed,
        raw_verifies,
        raw_verify_elapsed,
        release_build: !cfg!(debug_assertions),
        args,
    })
}

/// Replay-token writes from `tasks` tasks for `duration`, each with a receipt record, as a
/// signing request makes them; returns the count and the time taken.
async fn token_writes(
    db: &SignerDb,
    install: &tacit_protocol::request_auth::InstallId,
    tasks: u64,
    duration: Duration,
    now: Timestamp,
) -> Result<(u64, Duration), Error> {
    let started = std::time::Instant::now();
    let deadline = started + duration;
    let mut handles = Vec::new();
    for task in 0..tasks.max(1) {
        let (db, install) = (db.clone(), install.clone());
        handles.push(tokio::spawn(async move {
            let mut n = 0u64;
            while std::time::Instant::now() < deadline {
                // Distinct from every real token (those are SHA-256 outputs): a marker byte,
                // the task and a counter.
                let mut token = [0xA5u8; 32];
                token[1..9].copy_from_slice(&task.to_be_bytes());
                token[9..17].copy_from_slice(&n.to_be_bytes());
                let digest = wallet_core::Hash::digest(&token);
                let until = now.plus_millis(600_000);
                if !db
                    .take_request(&token, until, Some((&install, &digest, until)), now)
                    .await?
                {
                    return Err(Error::ReplayedRequest);
                }
                n += 1;
            }
            Ok::<u64, Error>(n)
        }));
    }
    let mut total = 0;
    for handle in handles {
        total += handle
            .await
            .map_err(|_| Operational::Config("a writing task failed".to_owned()))??;
    }
    Ok((total, started.elapsed()))
}

/// One backend: a fresh database at `url` with the install enrolled, its replay-token writes
/// alone, then the HTTP load with a freshly pre-signed pool.
async fn backend_run(
    backend: &'static str,
    url: &str,
    args: &BenchArgs,
    install: &p256::ecdsa::SigningKey,
) -> Result<BackendRun, Error> {
    let bad =
        |what: &'static str| move |e: std::io::Error| Operational::Config(format!("{what}: {e}"));
    let now = system_now();
    let db = SignerDb::open(url).await?;
    let install_key = InstallKey::from_verifying_key(*install.verifying_key());
    let code = enrol_code(&db, "signer-bench", Duration::from_secs(60), now).await?;
    if db.enrol(&code, &install_key, now).await? != Enrolment::Enrolled {
        return Err(Operational::Config("the bench install did not enrol".to_owned()).into());
    }
    let id = install_key.id();
    let write_for = Duration::from_secs(args.sign_seconds.clamp(1, args.seconds.max(1)));
    let (writes, write_elapsed) = token_writes(&db, &id, args.connections, write_for, now).await?;

    let now = system_now();
    let payload = sample_payload(args.entries, now)?;
    let body =
        serde_json::to_vec(&payload).map_err(|_| Operational::Config("encode".to_owned()))?;
    let mut config = Config::default();
    config.limit_flags.rate_limit_per_minute = 0;
    let state = AppState::new(KeyStore::make(now)?, db.clone(), &config, SystemClock);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(bad("bind"))?;
    let addr = listener.local_addr().map_err(bad("bind"))?;

    // Each request is signed once, with its own millisecond: timestamps run from now to at most
    // 100 s ahead, inside the signer's two-minute window for the whole run.
    let pool_size = args.max_requests.min(MAX_POOL);
    let install = install.clone();
    let pool = tokio::task::spawn_blocking(move || {
        (0..pool_size)
            .map(|i| {
                let at = now.millis() + i64::try_from(i).unwrap_or(0);
                let input = signing_input("POST", "/v1/receipts", at, &body);
                let signature: p256::ecdsa::Signature = install.sign(input.as_bytes());
                let headers = format!(
                    "{HEADER_INSTALL}: {id}\r\n{HEADER_TIMESTAMP}: {at}\r\n\
                     {HEADER_SIGNATURE}: {}\r\n",
                    URL_SAFE_NO_PAD.encode(signature.to_bytes())
                );
                post_request(addr, "/v1/receipts", &headers, &body)
            })
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|_| Operational::Config("the pre-signing thread failed".to_owned()))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crate::serve(listener, state, async move {
        let _ = stopped.await;
    }));
    let load = load(
        addr,
        pool,
        args.connections,
        Duration::from_secs(args.seconds.max(1)),
        |_| true,
    )
    .await
    .map_err(|_| Operational::Config("a load task failed".to_owned()))?;
    let _ = stop.send(());
    let _ = server.await;
    db.store().close().await;
    Ok(BackendRun {
        backend,
        load,
        writes,
        write_elapsed,
    })
}
