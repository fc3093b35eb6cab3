//! `signer-bench`: the service's signing throughput, with request authentication, next to raw
//! P-256 verification and raw Ed25519 signing.
//!
//! Starts the server in-process on loopback (rate limit off, a throwaway key, a throwaway SQLite
//! database in a temp dir with one enrolled install), pre-signs a pool of requests with the
//! install's P-256 key (each distinct, as the signer takes each signed request once), drives
//! `POST /v1/receipts` over keep-alive connections with [`crate::http1::Conn`] until the time or
//! the pool runs out, and measures, on one thread in the same run, `p256` verifying a request
//! signature and `ed25519-dalek` signing the same canonical bytes: the two signature operations
//! the service does per request. Figures only: nothing here asserts on time.

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

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Report {
    pub args: BenchArgs,
    pub body_bytes: usize,
    pub load: Load,
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

/// Runs the benchmark on the current tokio runtime.
pub async fn run(args: BenchArgs) -> Result<Report, Error> {
    let bad =
        |what: &'static str| move |e: std::io::Error| Operational::Config(format!("{what}: {e}"));
    let now = system_now();
    let payload = sample_payload(args.entries, now)?;
    let body =
        serde_json::to_vec(&payload).map_err(|_| Operational::Config("encode".to_owned()))?;

    // A throwaway database with one enrolled install.
    let dir = tempfile::tempdir().map_err(bad("temp dir"))?;
    let db = SignerDb::open(&tacit_store::sqlite_url(&dir.path().join("bench.db"))).await?;
    let install = make_install_key()?;
    let install_key = InstallKey::from_verifying_key(*install.verifying_key());
    let code = enrol_code(&db, "signer-bench", Duration::from_secs(60), now).await?;
    if db.enrol(&code, &install_key, now).await? != Enrolment::Enrolled {
        return Err(Operational::Config("the bench install did not enrol".to_owned()).into());
    }

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
    let id = install_key.id();
    let pool_body = body.clone();
    let pool = tokio::task::spawn_blocking(move || {
        (0..pool_size)
            .map(|i| {
                let at = now.millis() + i64::try_from(i).unwrap_or(0);
                let input = signing_input("POST", "/v1/receipts", at, &pool_body);
                let signature: p256::ecdsa::Signature = install.sign(input.as_bytes());
                let headers = format!(
                    "{HEADER_INSTALL}: {id}\r\n{HEADER_TIMESTAMP}: {at}\r\n\
                     {HEADER_SIGNATURE}: {}\r\n",
                    URL_SAFE_NO_PAD.encode(signature.to_bytes())
                );
                post_request(addr, "/v1/receipts", &headers, &pool_body)
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
    drop(dir);

    Ok(Report {
        body_bytes: body.len(),
        load,
        raw_signs,
        raw_elapsed,
        raw_verifies,
        raw_verify_elapsed,
        release_build: !cfg!(debug_assertions),
        args,
    })
}
