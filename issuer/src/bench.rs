//! `issuer-bench`: batch issuance per second against the raw ES256 signing rate measured in the
//! same run. Figures only: nothing here asserts on time.
//!
//! Three measurements, one after the other on a multi-thread runtime:
//! 1. raw `p256` ES256 signatures per second (one thread), over bytes the size of a credential's
//!    signing input;
//! 2. batches per second built in-process ([`crate::credential::issue_batch`]: salts, claims,
//!    one signature per credential), one thread;
//! 3. batches per second through the router (`POST /v1/credentials` via `oneshot`, each request
//!    with its own nonce, fresh code and proofs prepared beforehand) on a throwaway SQLite file,
//!    including the holder-key proof checks and the database transaction;
//! 4. the holder-key proof checks of one prepared request alone (`check_request`, one ES256
//!    verify per key), one thread: the part of a request that `issue_batch` does not do.
//!
//! The goal row compares 3 with 2; a second row compares 3 with its parts (4 then 2).

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use clap::Parser;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use tacit_protocol::issuer_pop::pop_signing_input;
use tacit_protocol::request_auth::{InstallKey, Jwk};
use tacit_service::error::Operational;
use tower::ServiceExt;

use crate::credential::{Issuance, issue_batch};
use crate::{AppState, Attribute, Config, Error, IssuerDb, KeyStore, Person, system_now};

/// Measure tacit-issuer's batch issuance against raw ES256 signing.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "issuer-bench",
    version,
    about = "Measures batch issuance against raw ES256 signing"
)]
pub struct BenchArgs {
    /// Seconds per measurement.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=60))]
    pub seconds: u64,
    /// Credentials per batch.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=20))]
    pub batch: u64,
    /// Batches prepared for the HTTP measurement (each needs its own nonce and code).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub requests: u64,
}

/// The figures of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub batch: u64,
    pub raw_signs_per_sec: f64,
    pub batches_per_sec_in_process: f64,
    pub batches_per_sec_http: f64,
    pub http_batches: u64,
    /// The holder-key proof checks of one request (`check_request`: one ES256 verify per key),
    /// per second, one thread: the part of a request that `issue_batch` does not do.
    pub checks_per_sec: f64,
}

/// The share of in-process `issue_batch` a batch through the router must reach.
pub const GOAL_RATIO: f64 = 0.7;

impl Report {
    /// The report as a markdown section.
    pub fn markdown(&self) -> String {
        let per_credential = |batches: f64| batches * self.batch as f64;
        format!(
            "## tacit-issuer\n\n\
             | measurement | per second | credentials/s | vs raw ES256 signing |\n\
             |---|---:|---:|---:|\n\
             | raw ES256 sign (p256, one thread) | {:.0} | | 1.00 |\n\
             | batch of {} built in-process (income, 39 disclosures each) | {:.1} | {:.0} | {:.2} |\n\
             | `POST /v1/credentials`, batch of {} (router, SQLite; {} batches) | {:.1} | {:.0} | {:.2} |\n",
            self.raw_signs_per_sec,
            self.batch,
            self.batches_per_sec_in_process,
            per_credential(self.batches_per_sec_in_process),
            per_credential(self.batches_per_sec_in_process) / self.raw_signs_per_sec,
            self.batch,
            self.http_batches,
            self.batches_per_sec_http,
            per_credential(self.batches_per_sec_http),
            per_credential(self.batches_per_sec_http) / self.raw_signs_per_sec,
        ) + &self.goal_rows()
    }

    /// The goal row (router / in-process `issue_batch`) and the router against its parts
    /// (proof checks + `issue_batch`, each measured alone on one thread).
    pub fn goal_rows(&self) -> String {
        let share = self.batches_per_sec_http / self.batches_per_sec_in_process.max(1e-9);
        let parts = 1.0
            / (1.0 / self.checks_per_sec.max(1e-9)
                + 1.0 / self.batches_per_sec_in_process.max(1e-9));
        format!(
            "\n| measure | value |\n|---|---|\n\
             | holder-key proof checks of one request ({} ES256 verifies), one thread | {:.1} /s |\n\
             | parts: proof checks + `issue_batch`, one thread | {:.1} batches/s |\n\
             | router / its parts | {:.2}× |\n\
             | goal: router ≥ {GOAL_RATIO}× in-process `issue_batch` | {:.2}× — {} |\n",
            self.batch,
            self.checks_per_sec,
            parts,
            self.batches_per_sec_http / parts.max(1e-9),
            share,
            if share >= GOAL_RATIO {
                "met"
            } else {
                "**not met**"
            },
        )
    }
}

fn holder(i: u64) -> Result<SigningKey, Error> {
    let mut bytes = [0x11u8; 32];
    bytes[24..].copy_from_slice(&i.wrapping_add(1).to_be_bytes());
    SigningKey::from_slice(&bytes).map_err(|_| Operational::Random.into())
}

fn jwk(key: &SigningKey) -> Jwk {
    InstallKey::from_verifying_key(*key.verifying_key()).to_jwk()
}

/// Runs the three measurements.
pub async fn run(args: BenchArgs) -> Result<Report, Error> {
    let span = Duration::from_secs(args.seconds);
    let key = crate::make_signing_key()?;
    let kid = crate::key_id(&key);
    let person = Person {
        person_id: "p-bench".to_owned(),
        name: "Bench".to_owned(),
        income_minor: Some(2_850_000),
        currency: Some("EUR".to_owned()),
        birth_date: Some("1990-04-12".to_owned()),
    };

    // 1. Raw signing.
    let message = vec![b'a'; 2_000];
    let started = Instant::now();
    let mut signs = 0u64;
    while started.elapsed() < span {
        let _: Signature = key.sign(&message);
        signs += 1;
    }
    let raw_signs_per_sec = signs as f64 / started.elapsed().as_secs_f64();

    // 2. Batches in-process.
    let holders: Vec<Jwk> = (0..args.batch)
        .map(|i| holder(i).map(|k| jwk(&k)))
        .collect::<Result<_, _>>()?;
    let issuance = Issuance {
        iss: "http://127.0.0.1:8791",
        vct: Attribute::Income.default_vct(),
        attribute: Attribute::Income,
    };
    // Each credential names a status list entry, as through the router.
    let statuses: Vec<tacit_protocol::status_list::StatusRef> = (0..holders.len())
        .map(|i| tacit_protocol::status_list::StatusRef {
            idx: 1000 + i as u64,
            uri: format!(
                "{}{}",
                issuance.iss,
                tacit_protocol::status_list::STATUS_PATH
            ),
        })
        .collect();
    let started = Instant::now();
    let mut batches = 0u64;
    while started.elapsed() < span {
        issue_batch(
            &key,
            &kid,
            &issuance,
            &person,
            &holders,
            &statuses,
            system_now(),
            || {
                let mut salt = [0u8; 16];
                getrandom::fill(&mut salt).map_err(|_| Operational::Random)?;
                Ok(salt)
            },
        )?;
        batches += 1;
    }
    let batches_per_sec_in_process = batches as f64 / started.elapsed().as_secs_f64();

    // 3. Through the router on SQLite.
    let dir = std::env::temp_dir().join(format!("tacit-issuer-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let db = IssuerDb::open(&tacit_store::sqlite_url(&dir.join("issuer.db"))).await?;
    let now = system_now();
    db.add_person(&person, now).await?;
    let mut config = Config::default();
    config.limit_flags.rate_limit_per_minute = 0;
    config.limit_flags.request_timeout_secs = 60;
    let origin = config.issuer_origin();
    let state = AppState::new(
        KeyStore::new(key, now),
        db.clone(),
        &config,
        crate::SystemClock,
    )?;
    let app = crate::app(state);
    let signing_holders: Vec<SigningKey> = (0..args.batch).map(holder).collect::<Result<_, _>>()?;
    let mut bodies = Vec::new();
    for _ in 0..args.requests {
        let (nonce, _) = db.make_nonce(now).await?;
        let code = db
            .make_code("p-bench", now, now.plus_millis(3_600_000))
            .await?
            .code;
        let keys: Vec<serde_json::Value> = signing_holders
            .iter()
            .map(|k| {
                let proof: Signature = k.sign(pop_signing_input(&origin, &nonce).as_bytes());
                serde_json::json!({
                    "jwk": jwk(k),
                    "proof": base64::Engine::encode(
                        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                        proof.to_bytes()
                    ),
                })
            })
            .collect();
        bodies.push(serde_json::json!({
            "code": code.canonical(), "nonce": nonce, "holder_keys": keys,
        }));
    }
    // 4. The holder-key proof checks of one prepared request, alone.
    let checks_per_sec = match bodies.first() {
        Some(first) => {
            let keys: Vec<(Jwk, String)> = first["holder_keys"]
                .as_array()
                .map(|keys| {
                    keys.iter()
                        .filter_map(|k| {
                            Some((
                                serde_json::from_value(k["jwk"].clone()).ok()?,
                                k["proof"].as_str()?.to_owned(),
                            ))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let holders: Vec<tacit_protocol::issuance::Holder<'_>> = keys
                .iter()
                .map(|(jwk, proof)| tacit_protocol::issuance::Holder { jwk, proof })
                .collect();
            let code = first["code"].as_str().unwrap_or_default();
            let nonce = first["nonce"].as_str().unwrap_or_default();
            let started = Instant::now();
            let mut checks = 0u64;
            while started.elapsed() < span {
                let checked = tacit_protocol::issuance::check_request(
                    Some(code),
                    None,
                    nonce,
                    &holders,
                    &origin,
                );
                if checked.is_err() {
                    return Err(Operational::Config(
                        "a prepared request failed its checks".to_owned(),
                    )
                    .into());
                }
                checks += 1;
            }
            checks as f64 / started.elapsed().as_secs_f64()
        }
        None => 0.0,
    };

    let started = Instant::now();
    let mut http_batches = 0u64;
    for body in bodies {
        if started.elapsed() >= span {
            break;
        }
        let request = Request::post("/v1/credentials")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .map_err(|_| Operational::Config("could not build a request".to_owned()))?;
        let response = app
            .clone()
            .oneshot(request)
            .await
            .map_err(|_| Operational::Config("the router failed".to_owned()))?;
        if !response.status().is_success() {
            return Err(Operational::Config(format!(
                "the issuer refused a bench request with {}",
                response.status()
            ))
            .into());
        }
        let _ = axum::body::to_bytes(response.into_body(), usize::MAX).await;
        http_batches += 1;
    }
    let batches_per_sec_http = http_batches as f64 / started.elapsed().as_secs_f64();
    db.store().close().await;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Report {
        batch: args.batch,
        raw_signs_per_sec,
        batches_per_sec_in_process,
        batches_per_sec_http,
        http_batches,
        checks_per_sec,
    })
}
