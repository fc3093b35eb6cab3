//! `site-bench`: the site server's verdict throughput against the raw rate of the signature check
//! it performs, and the nonce table's consume rate on SQLite and on PostgreSQL.
//!
//! 1. Starts the housing site in-process ([`tacit_site::server::spawn`], rate limit off) on loopback,
//!    on a throwaway SQLite database, pinning a throwaway signer key; issues `--receipts` nonces
//!    into its table (the real [`Nonces::issue`], from 64 tasks) and signs one valid receipt per
//!    nonce; measures, on one thread with nothing else running, ed25519-dalek's `verify_strict`
//!    of a receipt's signing bytes (the signature check the verdict performs) and wallet-core's
//!    whole `receipt::verify`; then fires the receipts, each once, as `POST /api/applications`
//!    over `--connections` keep-alive connections until the time or the receipts run out. A
//!    request counts when it is answered 200 with `"ok":true` (accepted).
//! 2. Issues `--nonces` nonces into a fresh table and consumes them all with the real
//!    [`Nonces::consume`] from `--consumers` tasks, on SQLite and on a throwaway PostgreSQL
//!    cluster ([`tacit_store::testing::PgCluster`]; without PostgreSQL the run fails with the
//!    install command). Every consume must succeed exactly once.
//! 3. Starts two instances of the site on one database of that cluster (one origin), issues
//!    `--receipts` nonces through the first, and fires the receipts over connections that
//!    alternate between the two instances.
//!
//! The shipped policy's `require_proof` is cleared: the receipts are self-asserted, so every
//! well-formed one is accepted and no presentation is verified. Each load's goal rows compare it
//! with its parts measured alone (the whole receipt check on one thread, then one consume at the
//! rate step 2 measured on that backend) and with the p99 the goal allows.
//!
//! Figures only: nothing here asserts on time. Compiled into the `site-bench` binary only
//! (`src/bin/site-bench.rs` includes this file), so the library carries none of it.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use ed25519_dalek::{Signature, SigningKey};
use serde_json::json;
use tacit_service::bench::{
    Load, build_words, load, load_across, per_sec, post_request, ratio, repeat_for,
};
use tacit_store::StoreError;
use tacit_store::testing::PgCluster;
use wallet_core::receipt::sign;
use wallet_core::{
    ComparisonLog, GrantId, KeySet, KeyStatus, Nonce, Origin, Outcome, PublicKeyEntry,
    ReceiptPayload, SessionId, Timestamp, ToolName,
};

use tacit_site::server::config::SignerConfig;
use tacit_site::server::{Config, Nonces, ServerError, spawn, system_now};

/// Why a bench run could not finish.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{0}")]
    Setup(String),
    #[error(transparent)]
    Server(#[from] ServerError),
    #[error("database: {0}")]
    Store(#[from] StoreError),
}

/// Measure tacit-site's POST /api/applications throughput and the nonce table's consume rate.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "site-bench",
    version,
    about = "Measures POST /api/applications against raw receipt verification, and nonce \
             consumes on SQLite and PostgreSQL"
)]
pub struct BenchArgs {
    /// Seconds of HTTP load.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub seconds: u64,
    /// Keep-alive connections.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub connections: u64,
    /// Seconds of raw verification, for each of the two baselines.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=60))]
    pub verify_seconds: u64,
    /// Distinct valid receipts (and nonces) prepared before the load; each is sent once, and the
    /// load ends early when they are spent.
    #[arg(long, default_value_t = 25_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub receipts: u64,
    /// Nonces issued then consumed on each backend.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub nonces: u64,
    /// Concurrent tasks issuing and consuming nonces.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub consumers: u64,
}

/// The consume rate on one backend.
#[derive(Debug, Clone)]
pub struct ConsumeFigures {
    pub backend: &'static str,
    pub consumed: u64,
    pub elapsed: Duration,
}

impl ConsumeFigures {
    pub fn per_sec(&self) -> f64 {
        per_sec(self.consumed, self.elapsed)
    }
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Report {
    pub args: BenchArgs,
    pub body_bytes: usize,
    pub load: Load,
    pub issued: u64,
    pub issue_elapsed: Duration,
    pub raw_verifies: u64,
    pub raw_verify_elapsed: Duration,
    pub full_verifies: u64,
    pub full_verify_elapsed: Duration,
    pub sqlite: ConsumeFigures,
    pub postgres: ConsumeFigures,
    /// The load on two instances sharing one PostgreSQL database, connections alternating.
    pub pg_load: Load,
    pub release_build: bool,
}

/// The p99 the goal allows at 64 connections.
pub const GOAL_P99: Duration = Duration::from_millis(10);

/// The share of its parts' rate the service must reach.
pub const GOAL_RATIO: f64 = 0.7;

impl Report {
    pub fn requests_per_sec(&self) -> f64 {
        self.load.per_sec()
    }

    pub fn raw_verifies_per_sec(&self) -> f64 {
        per_sec(self.raw_verifies, self.raw_verify_elapsed)
    }

    pub fn full_verifies_per_sec(&self) -> f64 {
        per_sec(self.full_verifies, self.full_verify_elapsed)
    }

    /// Verdicts per second the parts allow, each measured alone: the whole receipt check on
    /// one core, then one nonce consume at the rate `consume` measured (no presentations: the
    /// bench's receipts are self-asserted).
    pub fn parts_per_sec(&self, consume: &ConsumeFigures) -> f64 {
        1.0 / (ratio(1.0, self.full_verifies_per_sec()) + ratio(1.0, consume.per_sec()))
    }

    /// The goal rows for one backend's load.
    fn goal_rows(&self, what: &str, load: &Load, consume: &ConsumeFigures) -> String {
        let parts = self.parts_per_sec(consume);
        let share = ratio(load.per_sec(), parts);
        let met = |ok: bool| if ok { "met" } else { "**not met**" };
        format!(
            "| {what}: parts (receipt verify + nonce consume; no presentations) | {parts:.0} \
             verdicts/s |\n\
             | goal {what}: service ≥ {GOAL_RATIO}× its parts | {share:.2}× — {} |\n\
             | goal {what}: p99 ≤ {} ms at {} connections | {:.2} ms — {} |\n",
            met(share >= GOAL_RATIO),
            GOAL_P99.as_millis(),
            self.args.connections,
            load.p99.as_secs_f64() * 1000.0,
            met(load.p99 <= GOAL_P99),
        )
    }

    /// The figures as a markdown table.
    pub fn markdown(&self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let (build, cpus) = build_words(self.release_build);
        let mut out = format!(
            "site-bench: {} connections, {} s load, {} receipts prepared ({} B submissions), {} \
             tasks on the nonce table, {build} build, {cpus} CPU(s)\n\n",
            self.args.connections,
            self.args.seconds,
            self.issued,
            self.body_bytes,
            self.args.consumers,
        );
        out.push_str("| measure | value |\n|---|---|\n");
        out.push_str(&self.load.rows(
            "POST /api/applications, a distinct valid receipt each (SQLite)",
            "accepted",
            "prepared receipts spent early",
        ));
        out.push_str(&format!(
            "| raw ed25519 verify_strict of a receipt, 1 core | {:.0} verifies/s |\n",
            self.raw_verifies_per_sec()
        ));
        out.push_str(&format!(
            "| raw wallet_core::receipt::verify (whole check), 1 core | {:.0} verifies/s |\n",
            self.full_verifies_per_sec()
        ));
        out.push_str(&format!(
            "| service / raw verify_strict | {:.3} |\n",
            ratio(self.requests_per_sec(), self.raw_verifies_per_sec())
        ));
        out.push_str(&format!(
            "| latency p99 / one raw verify_strict ({:.4} ms) | {:.0}× |\n",
            ratio(1000.0, self.raw_verifies_per_sec()),
            ms(self.load.p99) * self.raw_verifies_per_sec() / 1000.0
        ));
        out.push_str(&format!(
            "| nonces issued into the site's SQLite table ({} tasks) | {:.0} issues/s |\n",
            self.args.consumers,
            per_sec(self.issued, self.issue_elapsed)
        ));
        for figures in [&self.sqlite, &self.postgres] {
            out.push_str(&format!(
                "| nonce consume, {} ({} tasks) | {:.0} consumes/s ({} consumed) |\n",
                figures.backend,
                self.args.consumers,
                figures.per_sec(),
                figures.consumed
            ));
        }
        out.push_str(&format!(
            "| PostgreSQL / SQLite consume | {:.2} |\n",
            ratio(self.postgres.per_sec(), self.sqlite.per_sec())
        ));
        out.push_str(&self.pg_load.rows(
            "POST /api/applications, two instances on one PostgreSQL",
            "accepted",
            "prepared receipts spent early",
        ));
        out.push_str(&self.goal_rows("SQLite", &self.load, &self.sqlite));
        out.push_str(&self.goal_rows("PostgreSQL, two instances", &self.pg_load, &self.postgres));
        out
    }
}

/// Runs the benchmark on the current tokio runtime.
pub async fn run(args: BenchArgs) -> Result<Report, BenchError> {
    if std::env::var("DATABASE_URL").is_ok_and(|v| !v.trim().is_empty()) {
        return Err(BenchError::Setup(
            "DATABASE_URL is set and would replace the bench's own SQLite database; unset it"
                .to_owned(),
        ));
    }
    let io =
        |what: &'static str| move |e: std::io::Error| BenchError::Setup(format!("{what}: {e}"));
    let root = tempfile::tempdir().map_err(io("temp dir"))?;
    let now = system_now();

    // A throwaway signer key, pinned as site.toml would pin it.
    let mut secret = zeroize::Zeroizing::new([0u8; 32]);
    getrandom::fill(&mut *secret).map_err(|_| BenchError::Setup("randomness".to_owned()))?;
    let signer = SigningKey::from_bytes(&secret);
    let keys = KeySet {
        keys: vec![PublicKeyEntry::new(
            &signer.verifying_key(),
            now.plus_millis(-60_000),
            None,
            KeyStatus::Active,
        )],
    };
    let keys_path = root.path().join("signer-keys.json");
    let keys_json =
        serde_json::to_vec(&keys).map_err(|_| BenchError::Setup("key set JSON".to_owned()))?;
    std::fs::write(&keys_path, keys_json).map_err(io("writing the key set"))?;
    let config = bench_config(root.path(), keys_path)?;
    let claims = config.policy.claims.clone();

    let site = spawn(&config).await?;
    let addr = site.addr();
    let origin = site.origin().clone();
    let nonces = site.state().nonces().clone();

    // N nonces issued into the site's table, from `consumers` tasks.
    let issue_started = Instant::now();
    let issued_nonces = issue_many(&nonces, args.receipts, args.consumers, now).await?;
    let issue_elapsed = issue_started.elapsed();
    let issued = issued_nonces.len() as u64;

    // One valid receipt per nonce, as submissions over HTTP.
    let sign_origin = origin.clone();
    let sign_key = signer.clone();
    let (pool, sample) = tokio::task::spawn_blocking(move || {
        prepare(&sign_origin, &issued_nonces, &claims, &sign_key, now, addr)
    })
    .await
    .map_err(|_| BenchError::Setup("the preparing thread failed".to_owned()))??;
    let body_bytes = sample.body_bytes;

    // The baselines, one thread each in turn, before the load.
    let verify_for = Duration::from_secs(args.verify_seconds);
    let verifying = signer.verifying_key();
    let (raw, full) = tokio::task::spawn_blocking(move || {
        let bytes = sample.receipt.payload.signing_bytes();
        let signature = Signature::from_bytes(&sample.signature);
        let raw = repeat_for(verify_for, || {
            let ok = verifying.verify_strict(
                std::hint::black_box(&bytes),
                std::hint::black_box(&signature),
            );
            std::hint::black_box(ok.is_ok());
        });
        let full = repeat_for(verify_for, || {
            let ok = wallet_core::receipt::verify(
                std::hint::black_box(&sample.receipt),
                &keys,
                &origin,
                &sample.nonce,
                now,
            );
            std::hint::black_box(ok.is_ok());
        });
        (raw, full)
    })
    .await
    .map_err(|_| BenchError::Setup("the measuring thread failed".to_owned()))?;

    // The load: counted only when the body is an accepting envelope.
    let accepted = |body: &[u8]| {
        serde_json::from_slice::<serde_json::Value>(body)
            .is_ok_and(|envelope| envelope["ok"] == true)
    };
    let load = load(
        addr,
        pool,
        args.connections,
        Duration::from_secs(args.seconds),
        accepted,
    )
    .await
    .map_err(|_| BenchError::Setup("a load task failed".to_owned()))?;
    site.shutdown()
        .await
        .map_err(io("shutting the site down"))?;
    nonces.db().close().await;

    // Nonce consumes on each backend.
    let sqlite_url = tacit_store::sqlite_url(&root.path().join("consume.db"));
    let sqlite = consume_bench("SQLite", &sqlite_url, &args, now).await?;
    let cluster = tokio::task::spawn_blocking(PgCluster::start)
        .await
        .map_err(|_| BenchError::Setup("starting PostgreSQL failed".to_owned()))??;
    let pg_url = cluster.create_database("site_bench").await?;
    let postgres = consume_bench("PostgreSQL", &pg_url, &args, now).await?;

    // Two instances of the site on one PostgreSQL database, one origin, the load alternating
    // between them.
    let mut pg_config = config.clone();
    pg_config.database_url = Some(cluster.create_database("site_load").await?);
    let first = spawn(&pg_config).await?;
    pg_config.origin = Some(first.origin().clone());
    let second = spawn(&pg_config).await?;
    let now = system_now();
    let pg_nonces = first.state().nonces().clone();
    let pg_issued = issue_many(&pg_nonces, args.receipts, args.consumers, now).await?;
    let pg_origin = first.origin().clone();
    let pg_claims = config.policy.claims.clone();
    let pg_key = signer.clone();
    let first_addr = first.addr();
    let (pg_pool, _) = tokio::task::spawn_blocking(move || {
        prepare(&pg_origin, &pg_issued, &pg_claims, &pg_key, now, first_addr)
    })
    .await
    .map_err(|_| BenchError::Setup("the preparing thread failed".to_owned()))??;
    let pg_load = load_across(
        &[first.addr(), second.addr()],
        pg_pool,
        args.connections,
        Duration::from_secs(args.seconds),
        accepted,
    )
    .await
    .map_err(|_| BenchError::Setup("a load task failed".to_owned()))?;
    first
        .shutdown()
        .await
        .map_err(io("shutting the site down"))?;
    second
        .shutdown()
        .await
        .map_err(io("shutting the site down"))?;
    pg_nonces.db().close().await;
    drop(cluster);
    drop(root);

    Ok(Report {
        body_bytes,
        load,
        issued,
        issue_elapsed,
        raw_verifies: raw.0,
        raw_verify_elapsed: raw.1,
        full_verifies: full.0,
        full_verify_elapsed: full.1,
        sqlite,
        postgres,
        pg_load,
        release_build: !cfg!(debug_assertions),
        args,
    })
}

/// The housing site's shipped configuration on a free loopback port, a throwaway data
/// directory (so its SQLite database), the pinned key set, and no rate limit.
fn bench_config(root: &Path, pinned_keys: std::path::PathBuf) -> Result<Config, BenchError> {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../housing/site.toml");
    let mut config = Config::load(&shipped)?;
    let static_dir = root.join("static");
    std::fs::create_dir_all(&static_dir)
        .and_then(|()| std::fs::write(static_dir.join("index.html"), "<!doctype html>"))
        .map_err(|e| BenchError::Setup(format!("static dir: {e}")))?;
    config.origin = None;
    config.listen = SocketAddr::from(([127, 0, 0, 1], 0));
    config.static_dir = static_dir;
    config.data_dir = root.join("data");
    config.database_url = None;
    config.rate_limit_per_minute = 0;
    // The bench's receipts are self-asserted: take the person's word for every kind, so each
    // verdict is an acceptance (the shipped policy wants an issuer's proof for income).
    config.policy.require_proof.clear();
    config.signer = SignerConfig {
        keys_url: None,
        pinned_keys: Some(pinned_keys),
    };
    Ok(config)
}

/// Issues `count` nonces at `now` from `tasks` concurrent tasks.
async fn issue_many(
    nonces: &Nonces,
    count: u64,
    tasks: u64,
    now: Timestamp,
) -> Result<Vec<Nonce>, BenchError> {
    let left = Arc::new(AtomicU64::new(count));
    let mut handles = Vec::new();
    for _ in 0..tasks.max(1) {
        let (nonces, left) = (nonces.clone(), left.clone());
        handles.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
            {
                let (nonce, _) = nonces
                    .issue(now)
                    .await
                    .map_err(|e| BenchError::Setup(format!("issuing a nonce: {e}")))?;
                mine.push(nonce);
            }
            Ok::<_, BenchError>(mine)
        }));
    }
    let mut all = Vec::new();
    for handle in handles {
        all.extend(
            handle
                .await
                .map_err(|_| BenchError::Setup("an issuing task failed".to_owned()))??,
        );
    }
    Ok(all)
}

/// One receipt kept for the baselines.
struct Sample {
    receipt: wallet_core::SignedReceipt,
    signature: [u8; 64],
    nonce: Nonce,
    body_bytes: usize,
}

/// One `POST /api/applications` request per nonce, each with its own valid receipt.
fn prepare(
    origin: &Origin,
    nonces: &[Nonce],
    claims: &[wallet_core::Claim],
    key: &SigningKey,
    now: Timestamp,
    addr: SocketAddr,
) -> Result<(Vec<Vec<u8>>, Sample), BenchError> {
    let bad = |what: &str| BenchError::Setup(format!("building receipts: {what}"));
    let mut pool = Vec::with_capacity(nonces.len());
    let mut sample = None;
    for nonce in nonces {
        let mut log = ComparisonLog::new();
        for (i, claim) in claims.iter().enumerate() {
            log.append(
                now.plus_millis(-1000),
                origin.clone(),
                ToolName::parse(&format!("claim.{}.g{i}", claim.kind()))
                    .map_err(|_| bad("tool name"))?,
                claim.clone(),
                Outcome::Satisfied,
                GrantId::parse(&format!("g{i}")).map_err(|_| bad("grant id"))?,
                None,
            );
        }
        let payload = ReceiptPayload::new(
            SessionId::parse("s-bench").map_err(|_| bad("session id"))?,
            origin.clone(),
            nonce.clone(),
            now,
            now.plus_millis(15 * 60 * 1000),
            &log,
        )
        .map_err(|_| bad("payload"))?;
        let receipt = sign(payload, key, now);
        let body = serde_json::to_vec(&json!({ "receipt": &receipt, "nonce": nonce.as_str() }))
            .map_err(|_| bad("JSON"))?;
        pool.push(post_request(addr, "/api/applications", "", &body));
        if sample.is_none() {
            let signature = hex::decode(&receipt.signature)
                .ok()
                .and_then(|b| <[u8; 64]>::try_from(b).ok())
                .ok_or_else(|| bad("signature"))?;
            sample = Some(Sample {
                receipt,
                signature,
                nonce: nonce.clone(),
                body_bytes: body.len(),
            });
        }
    }
    let sample = sample.ok_or_else(|| bad("no nonce was issued"))?;
    Ok((pool, sample))
}

/// Issues `args.nonces` nonces into a fresh table at `url`, then consumes them all from
/// `args.consumers` tasks with [`Nonces::consume`]; times the consumes only.
async fn consume_bench(
    backend: &'static str,
    url: &str,
    args: &BenchArgs,
    now: Timestamp,
) -> Result<ConsumeFigures, BenchError> {
    let nonces = Nonces::open(url).await?;
    let issued = Arc::new(issue_many(&nonces, args.nonces, args.consumers, now).await?);
    let next = Arc::new(AtomicUsize::new(0));
    let at = now.plus_millis(1000);
    let started = Instant::now();
    let mut handles = Vec::new();
    for _ in 0..args.consumers {
        let (nonces, issued, next) = (nonces.clone(), issued.clone(), next.clone());
        handles.push(tokio::spawn(async move {
            let mut consumed = 0u64;
            while let Some(nonce) = issued.get(next.fetch_add(1, Ordering::Relaxed)) {
                if nonces.consume(nonce, at).await? {
                    consumed += 1;
                }
            }
            Ok::<_, StoreError>(consumed)
        }));
    }
    let mut consumed = 0;
    for handle in handles {
        consumed += handle
            .await
            .map_err(|_| BenchError::Setup("a consuming task failed".to_owned()))??;
    }
    let elapsed = started.elapsed();
    nonces.db().close().await;
    if consumed != issued.len() as u64 {
        return Err(BenchError::Setup(format!(
            "{backend}: {consumed} of {} issued nonces were consumed",
            issued.len()
        )));
    }
    Ok(ConsumeFigures {
        backend,
        consumed,
        elapsed,
    })
}
