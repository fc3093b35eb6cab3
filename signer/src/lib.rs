//! # signer
//!
//! `tacit-signer`, the service that signs Tacit session receipts, and `tacit-verify`, the offline
//! verifier a relying site (or anyone) runs on a receipt.
//!
//! It promises:
//! - to sign only for **enrolled wallet installs**: every `POST /v1/receipts` carries an ES256
//!   signature by an install key enrolled with a one-time code (`tacit-signer enroll`) and not
//!   revoked, over the method, path, a timestamp within two minutes and the body digest
//!   (`tacit_protocol::request_auth`); each signed request is taken once (its replay token is a
//!   unique row). Enrolments and replay tokens live in the database ([`SignerDb`]: SQLite by
//!   default, PostgreSQL via `DATABASE_URL`), so several instances can serve one population;
//! - to sign only what wallet-core accepts: a [`wallet_core::ReceiptPayload`] parsed strictly (an
//!   unknown field anywhere, such as a raw `income`, is refused, not signed) whose log chains,
//!   which has not expired, was issued within two minutes of the signer's clock and is valid for
//!   at most 15 minutes ([`check_signable`]); the signature covers wallet-core's canonical bytes;
//! - to publish every key a receipt may have been signed with (`GET /v1/keys`), the active one
//!   and the retired ones, so rotation never invalidates a receipt; `rotate` then `SIGHUP` puts a
//!   new key in force without a restart ([`AppState::reload_keys`]);
//! - to make revocation reach the receipts already handed out: every receipt signed is recorded
//!   (its [`wallet_core::revocation_digest`] and install, until it expires), and once
//!   `tacit-signer revoke-install` has revoked an install, `GET /v1/keys` lists the digests of
//!   its unexpired receipts as `revoked_receipts` (within [`REVOCATIONS_CACHE`]); a site that
//!   fetches keys refuses them. The receipts themselves still carry no install id;
//! - to keep the secret key out of logs, `Debug` output and files others can read
//!   ([`KeyStore`]); enrolment codes are stored only as hashes;
//! - to answer every refusal as `{ "error": code, "message": sentence }` without echoing the
//!   request or exposing internals ([`Error`]), and to log codes, never request bytes;
//! - bounded work per request: a request head within a few seconds (a half-sent head is
//!   dropped), 64 KiB bodies, a per-client rate limit over a capped table (IPv6 by /64), a
//!   timeout, and a graceful shutdown that finishes in-flight requests.
//!
//! It refuses to decide anything a pure crate can: the receipt format, the signing bytes and
//! verification live in wallet-core, the request signature rules in tacit-protocol. The signer
//! only reads a clock, holds a key, keeps its tables and speaks HTTP. It never sees a profile or
//! a raw value.

pub mod bench;
mod config;
mod db;
mod error;
pub mod http1;
mod keyfile;
mod keys;
pub mod openapi;
mod routes;
mod state;
pub mod verify_cli;

use std::time::Duration;

pub use config::{
    Cli, Command, Config, DEFAULT_DATABASE_FILE, DEFAULT_HEADER_READ_TIMEOUT_SECS,
    DEFAULT_KEY_FILE, DEFAULT_LISTEN, DEFAULT_RATE_LIMIT_PER_MINUTE, DEFAULT_REQUEST_TIMEOUT_SECS,
    DEFAULT_WALLET_ORIGIN, SignerCommand, SignerEnv,
};
pub use db::{Enrolment, InstallRecord, MAX_LABEL_CHARS, MIGRATION_SET, SignerDb, enrol_code};
pub use error::Error;
pub use keyfile::{KEY_FILE_FORMAT, keygen};
pub use keys::{KeyStore, make_signing_key};
pub use routes::{KEYS_CACHE_CONTROL, MAX_BODY_BYTES, app};
pub use state::{AppState, Clock, REVOCATIONS_CACHE, SystemClock, check_signable, system_now};
use tacit_service::error::Operational;
pub use tacit_service::middleware::serve_app as serve;
pub use tacit_service::serve::shutdown_signal;
pub use tacit_service::{MAX_TRACKED_CLIENTS, RateLimiter, client_key};

/// How long in-flight requests get to finish after SIGINT/SIGTERM before the process exits.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// The router [`tacit_service::middleware::serve_app`] (re-exported as [`serve`]) serves.
impl tacit_service::middleware::App for AppState {
    fn app(self) -> axum::Router {
        app(self)
    }
}

/// Completes at every SIGHUP; never, where there are no such signals.
#[cfg(unix)]
async fn hangups(state: AppState, key_file: std::path::PathBuf) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut hangup) = signal(SignalKind::hangup()) else {
        tracing::warn!("cannot listen for SIGHUP; key rotation needs a restart");
        return;
    };
    while hangup.recv().await.is_some() {
        match state.reload_keys(&key_file) {
            Ok(active) => tracing::info!(key_id = %active, "SIGHUP: reloaded the key file"),
            Err(error) => {
                tracing::error!(%error, "SIGHUP: could not reload the key file; keeping the keys in force")
            }
        }
    }
}

#[cfg(not(unix))]
async fn hangups(_state: AppState, _key_file: std::path::PathBuf) {}

/// Opens the configured database ([`Config::database_url`]) and migrates it.
pub async fn open_database(config: &Config) -> Result<SignerDb, Error> {
    SignerDb::open(&config.database_url()).await
}

/// `tacit-signer [serve]`: loads the key file (refusing a missing or group/other-readable one),
/// opens and migrates the database, binds, and serves until SIGINT/SIGTERM, then drains for up
/// to [`SHUTDOWN_GRACE`]. SIGHUP re-reads the key file.
pub async fn run_server(config: &Config) -> Result<(), Error> {
    let keys = KeyStore::load(&config.key_file)?;
    let db = open_database(config).await?;
    if config.allowed_origins.is_empty() {
        return Err(
            Operational::Config("at least one --allowed-origin is needed".to_owned()).into(),
        );
    }
    let listener = tacit_service::serve::bind(
        config.listen,
        "put a TLS-terminating proxy in front, and rate-limit there too, since every client then \
         shares the proxy's address",
    )
    .await?;
    let origins: Vec<&str> = config.allowed_origins.iter().map(|o| o.as_str()).collect();
    let mut config = config.clone();
    if let Ok(bound) = listener.local_addr() {
        config.listen = bound;
    }
    tracing::info!(
        listen = %config.listen,
        database = %db.store().backend(),
        key_id = %keys.active_key_id(),
        allowed_origins = ?origins,
        rate_limit_per_minute = config.limit_flags.rate_limit_per_minute,
        "tacit-signer listening"
    );
    let state = AppState::new(keys, db, &config, SystemClock);
    tokio::spawn(hangups(state.clone(), config.key_file.clone()));
    let timeout = tacit_service::middleware::Service::limits(&state).header_read_timeout();
    let router = app(state);
    tacit_service::serve::serve_until_signal(listener, router, timeout, SHUTDOWN_GRACE).await?;
    Ok(())
}
