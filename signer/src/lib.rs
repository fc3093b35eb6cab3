//! # signer
//!
//! `tacit-signer`, the service that signs Tacit session receipts, and `tacit-verify`, the offline
//! verifier a relying site (or anyone) runs on a receipt.
//!
//! It promises:
//! - to sign only what wallet-core accepts: a [`wallet_core::ReceiptPayload`] parsed strictly (an
//!   unknown field anywhere, such as a raw `income`, is refused, not signed) whose log chains,
//!   which has not expired, was issued within two minutes of the signer's clock and is valid for
//!   at most 24 hours ([`check_signable`]); the signature covers wallet-core's canonical bytes;
//! - to publish every key a receipt may have been signed with (`GET /v1/keys`), the active one
//!   and the retired ones, so rotation never invalidates a receipt;
//! - to keep the secret key out of logs, `Debug` output and files others can read
//!   ([`KeyStore`]);
//! - to answer every refusal as `{ "error": code, "message": sentence }` without echoing the
//!   request or exposing internals ([`Error`]), and to log codes, never request bytes;
//! - bounded work per request: 64 KiB bodies, a per-client rate limit, a timeout, and a graceful
//!   shutdown that finishes in-flight requests.
//!
//! It refuses to decide anything wallet-core can: the receipt format, the signing bytes and
//! verification all live there. The signer only reads a clock, holds a key and speaks HTTP.
//! It never sees a profile or a raw value.

pub mod bench;
mod config;
mod error;
pub mod http1;
mod keyfile;
mod keys;
mod limit;
mod routes;
mod state;
pub mod verify_cli;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub use config::{
    Cli, Command, Config, DEFAULT_KEY_FILE, DEFAULT_LISTEN, DEFAULT_RATE_LIMIT_PER_MINUTE,
    DEFAULT_REQUEST_TIMEOUT_SECS, DEFAULT_WALLET_ORIGIN,
};
pub use error::Error;
pub use keyfile::{KEY_FILE_FORMAT, keygen, rotate_file};
pub use keys::{KeyStore, make_signing_key};
pub use limit::RateLimiter;
pub use routes::{KEYS_CACHE_CONTROL, MAX_BODY_BYTES, app};
pub use state::{AppState, Clock, SystemClock, check_signable, system_now};

/// How long in-flight requests get to finish after SIGINT/SIGTERM before the process exits.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Serves `state` on `listener` until `shutdown` completes, then stops accepting connections and
/// waits for in-flight requests to finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let service = app(state).into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, service)
        .with_graceful_shutdown(shutdown)
        .await
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}

/// `tacit-signer [serve]`: loads the key file (refusing a missing or group/other-readable one),
/// binds, and serves until SIGINT/SIGTERM, then drains for up to [`SHUTDOWN_GRACE`].
pub async fn run_server(config: &Config) -> Result<(), Error> {
    let keys = KeyStore::load(&config.key_file)?;
    if config.allowed_origins.is_empty() {
        return Err(Error::Config(
            "at least one --allowed-origin is needed".to_owned(),
        ));
    }
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|source| Error::Io {
            action: "listen on",
            path: config.listen.to_string(),
            source,
        })?;
    if !config.listen.ip().is_loopback() {
        tracing::warn!(
            "listening beyond loopback; put a TLS-terminating proxy in front, and rate-limit \
             there too, since every client then shares the proxy's address"
        );
    }
    let origins: Vec<&str> = config.allowed_origins.iter().map(|o| o.as_str()).collect();
    tracing::info!(
        listen = %config.listen,
        key_id = %keys.active_key_id(),
        allowed_origins = ?origins,
        rate_limit_per_minute = config.rate_limit_per_minute,
        "tacit-signer listening"
    );
    let state = AppState::new(keys, config, SystemClock);
    let stopping = Arc::new(tokio::sync::Notify::new());
    let signal = {
        let stopping = stopping.clone();
        async move {
            shutdown_signal().await;
            tracing::info!("shutting down: finishing in-flight requests");
            stopping.notify_one();
        }
    };
    let server = serve(listener, state, signal);
    tokio::select! {
        served = server => served.map_err(|source| Error::Io {
            action: "serve on",
            path: config.listen.to_string(),
            source,
        }),
        () = async { stopping.notified().await; tokio::time::sleep(SHUTDOWN_GRACE).await } => {
            tracing::warn!("requests still open after the grace period; exiting");
            Ok(())
        }
    }
}
