//! `signer-bench`: the service's signing throughput next to raw Ed25519 signing.
//!
//! Starts the server in-process on loopback (rate limit off, a throwaway key), drives
//! `POST /v1/receipts` over keep-alive connections with [`crate::http1::Conn`] for a while, and
//! measures `ed25519-dalek` signing the same canonical bytes on one thread in the same run.
//! Figures only: nothing here asserts on time.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use clap::Parser;
use ed25519_dalek::Signer;
use wallet_core::{
    Claim, ComparisonLog, GrantId, Nonce, Origin, Outcome, ReceiptPayload, SessionId, Timestamp,
    ToolName,
};

use crate::{AppState, Config, Error, KeyStore, SystemClock, make_signing_key, system_now};

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
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Report {
    pub args: BenchArgs,
    pub body_bytes: usize,
    pub requests: u64,
    pub failures: u64,
    pub elapsed: Duration,
    pub p50: Duration,
    pub p99: Duration,
    pub raw_signs: u64,
    pub raw_elapsed: Duration,
    pub release_build: bool,
}

impl Report {
    pub fn requests_per_sec(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    pub fn raw_signs_per_sec(&self) -> f64 {
        self.raw_signs as f64 / self.raw_elapsed.as_secs_f64().max(1e-9)
    }

    /// The figures as a markdown table.
    pub fn markdown(&self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let mut out = String::new();
        out.push_str(&format!(
            "signer-bench: {} connections, {} s load, {}-entry payload ({} B), {} build, {} CPU(s)\n\n",
            self.args.connections,
            self.args.seconds,
            self.args.entries,
            self.body_bytes,
            if self.release_build { "release" } else { "DEBUG (figures meaningless)" },
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        ));
        out.push_str("| measure | value |\n|---|---|\n");
        out.push_str(&format!(
            "| POST /v1/receipts | {:.0} req/s ({} ok, {} failed) |\n",
            self.requests_per_sec(),
            self.requests,
            self.failures
        ));
        out.push_str(&format!("| latency p50 | {:.3} ms |\n", ms(self.p50)));
        out.push_str(&format!("| latency p99 | {:.3} ms |\n", ms(self.p99)));
        out.push_str(&format!(
            "| raw ed25519-dalek sign, 1 core | {:.0} signs/s |\n",
            self.raw_signs_per_sec()
        ));
        out.push_str(&format!(
            "| service / raw signing | {:.2} |\n",
            self.requests_per_sec() / self.raw_signs_per_sec().max(1e-9)
        ));
        out
    }
}

/// A payload like the wallet sends: `entries` comparisons for one site, issued now.
pub fn sample_payload(entries: usize, now: Timestamp) -> Result<ReceiptPayload, Error> {
    let bad = |_| Error::Config("sample payload".to_owned());
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

/// Runs the benchmark on the current tokio runtime.
pub async fn run(args: BenchArgs) -> Result<Report, Error> {
    let now = system_now();
    let payload = sample_payload(args.entries, now)?;
    let body = serde_json::to_vec(&payload).map_err(|_| Error::Config("encode".to_owned()))?;

    // Raw signing first, on one thread, with nothing else running.
    let key = make_signing_key()?;
    let bytes = payload.signing_bytes();
    let sign_for = Duration::from_secs(args.sign_seconds.clamp(1, args.seconds.max(1)));
    let (raw_signs, raw_elapsed) = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let mut n = 0u64;
        while started.elapsed() < sign_for {
            for _ in 0..64 {
                std::hint::black_box(key.sign(std::hint::black_box(&bytes)));
            }
            n += 64;
        }
        (n, started.elapsed())
    })
    .await
    .map_err(|_| Error::Config("the signing thread failed".to_owned()))?;

    let config = Config {
        rate_limit_per_minute: 0,
        ..Config::default()
    };
    let state = AppState::new(KeyStore::make(now)?, &config, SystemClock);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| Error::Config(format!("bind: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::Config(format!("bind: {e}")))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crate::serve(listener, state, async move {
        let _ = stopped.await;
    }));

    let request = build_request(addr, &body);
    let deadline = Instant::now() + Duration::from_secs(args.seconds.max(1));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..args.connections.max(1) {
        tasks.push(tokio::spawn(drive(addr, request.clone(), deadline)));
    }
    let mut latencies = Vec::new();
    let mut failures = 0;
    for task in tasks {
        let (lat, failed) = task
            .await
            .map_err(|_| Error::Config("a load task failed".to_owned()))?;
        latencies.extend(lat);
        failures += failed;
    }
    let elapsed = started.elapsed();
    let _ = stop.send(());
    let _ = server.await;

    latencies.sort_unstable();
    let pick = |q: f64| {
        let i = ((latencies.len() as f64 - 1.0) * q).round() as usize;
        latencies.get(i).copied().unwrap_or_default()
    };
    Ok(Report {
        body_bytes: body.len(),
        requests: latencies.len() as u64,
        failures,
        elapsed,
        p50: pick(0.50),
        p99: pick(0.99),
        raw_signs,
        raw_elapsed,
        release_build: !cfg!(debug_assertions),
        args,
    })
}

fn build_request(addr: SocketAddr, body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST /v1/receipts HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

/// One connection's loop: latencies of successful requests, and the failure count.
async fn drive(addr: SocketAddr, request: Vec<u8>, deadline: Instant) -> (Vec<Duration>, u64) {
    let mut latencies = Vec::new();
    let mut failures = 0;
    let mut conn = None;
    while Instant::now() < deadline {
        if conn.is_none() {
            conn = crate::http1::Conn::connect(addr).await.ok();
            if conn.is_none() {
                failures += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        }
        let Some(c) = conn.as_mut() else { continue };
        let sent = Instant::now();
        match c.round_trip(&request).await {
            Ok(200) => latencies.push(sent.elapsed()),
            Ok(_) => failures += 1,
            Err(_) => {
                failures += 1;
                conn = None;
            }
        }
    }
    (latencies, failures)
}
