//! The site server (native only): it carries the pure rules over HTTP and decides nothing
//! itself. See [`routes`] for the API, [`config`] for the configuration file.
//!
//! Entry points:
//! - [`app`]: the router, for `tower::ServiceExt::oneshot` tests;
//! - [`serve`]: runs a [`SiteState`] on a bound listener until a shutdown future resolves;
//! - [`spawn`]: builds everything from a [`Config`] and runs it on the current tokio runtime,
//!   returning a [`RunningSite`] (address, origin, shutdown) — for the e2e tests and the demo;
//! - [`run`]: what `tacit-site serve` does (signals, logs).

pub mod config;
mod error;
pub mod issuer_keys;
pub mod limit;
pub mod nonces;
pub mod openapi;
pub mod routes;
pub mod signer_keys;
pub mod site_key;

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use tacit_protocol::site_auth::SiteKeys;
use tacit_service::middleware::{Limits, serve_state};
use tacit_service::{Budgets, RateLimiter};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use wallet_core::{Origin, Timestamp};

pub use config::{Config, SignerSource};
pub use error::ServerError;
pub use issuer_keys::IssuerKeys;
pub use limit::DEFAULT_RATE_LIMIT_PER_MINUTE;
pub use nonces::Nonces;
pub use routes::app;
pub use signer_keys::SignerKeys;
pub use site_key::SiteKey;

use crate::policy::Policy;

/// How long a request may take, body included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client may take to send a request's head (and a keep-alive connection may idle).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// How long shutdown waits for open requests.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How often forgettable nonce rows are deleted ([`crate::nonce::NonceRecord::forgettable`]:
/// unused ones at their expiry, used ones a week later), so an unused row outlives its expiry
/// by at most this.
pub const FORGET_INTERVAL: Duration = Duration::from_secs(60);

/// Where the server reads the time. Tests substitute a [`ManualClock`].
pub trait Clock: Send + Sync + fmt::Debug + 'static {
    fn now(&self) -> Timestamp;
}

/// The system clock (shared with the signer and the issuer).
pub use tacit_service::serve::{SystemClock, system_now};

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        system_now()
    }
}

/// A clock that says what it is told.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(at: Timestamp) -> Self {
        Self(AtomicI64::new(at.millis()))
    }

    pub fn set(&self, at: Timestamp) {
        self.0.store(at.millis(), Ordering::SeqCst);
    }

    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_millis(self.0.load(Ordering::SeqCst))
    }
}

impl<C: Clock> Clock for Arc<C> {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
}

/// What a [`SiteState`] is made of.
#[derive(Debug)]
pub struct SiteParts {
    pub policy: Policy,
    pub origin: Origin,
    pub site_key: SiteKey,
    pub nonces: Nonces,
    pub signer: SignerKeys,
    /// The trusted credential issuers' keys ([`IssuerKeys::none`]: no issuer-backed answer
    /// counts).
    pub issuers: IssuerKeys,
    pub static_dir: PathBuf,
    pub clock: Box<dyn Clock>,
}

/// The server's shared state. Cheap to clone.
#[derive(Debug, Clone)]
pub struct SiteState(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    policy: Policy,
    origin: Origin,
    site_key: SiteKey,
    site_keys_json: String,
    nonces: Nonces,
    signer: SignerKeys,
    issuers: IssuerKeys,
    static_dir: PathBuf,
    clock: Box<dyn Clock>,
    limits: Limits,
}

impl SiteState {
    /// Checks the policy and assembles the state, with the API's rate limit off (as in-process
    /// tests want it; [`SiteState::from_config`] applies the configured one).
    pub fn new(parts: SiteParts) -> Result<Self, ServerError> {
        Self::with_rate_limit(parts, 0)
    }

    /// [`SiteState::new`] with the API limited to `per_minute` requests per client, and the
    /// per-/48 and overall budgets scaled from it ([`Budgets::scaled`]; 0: off); see [`limit`].
    pub fn with_rate_limit(parts: SiteParts, per_minute: u32) -> Result<Self, ServerError> {
        Self::with_budgets(parts, Budgets::scaled(per_minute))
    }

    /// [`SiteState::new`] with the API limited per client, per IPv6 /48 and overall by
    /// `budgets`; see [`limit`].
    pub fn with_budgets(parts: SiteParts, budgets: Budgets) -> Result<Self, ServerError> {
        parts.policy.check().map_err(|e| ServerError::Config {
            path: "[policy]".into(),
            reason: e.to_string(),
        })?;
        let keys = SiteKeys::new(
            parts.origin.clone(),
            parts.policy.site_name.clone(),
            &[parts.site_key.verifying_key()],
        );
        let site_keys_json = serde_json::to_string(&keys).map_err(|_| ServerError::Config {
            path: "site keys".into(),
            reason: "cannot be written as JSON".into(),
        })?;
        Ok(Self(Arc::new(Inner {
            policy: parts.policy,
            origin: parts.origin,
            site_key: parts.site_key,
            site_keys_json,
            nonces: parts.nonces,
            signer: parts.signer,
            issuers: parts.issuers,
            static_dir: parts.static_dir,
            clock: parts.clock,
            limits: Limits::new(0, REQUEST_TIMEOUT.as_secs(), HEADER_READ_TIMEOUT.as_secs())
                .with_limiter(RateLimiter::with_budgets(budgets)),
        })))
    }

    /// Everything from `config`, for the site at `origin`: the site key (made on first start),
    /// the database (migrated), the signer keys and the trusted issuers' keys (pinned, or
    /// fetched now; a failed first fetch is logged and retried when needed).
    pub async fn from_config(
        config: &Config,
        origin: Origin,
        clock: Box<dyn Clock>,
    ) -> Result<Self, ServerError> {
        config.check().map_err(|reason| ServerError::Config {
            path: "configuration".into(),
            reason,
        })?;
        let site_key = SiteKey::load_or_create(&config.site_key_path())?;
        let nonces = Nonces::open(&config.database_url())
            .await?
            .with_lifetime(config.nonce_lifetime_ms);
        let signer = match config
            .signer_source()
            .map_err(|reason| ServerError::Config {
                path: "[signer]".into(),
                reason,
            })? {
            SignerSource::Pinned(path) => SignerKeys::from_file(&path)?,
            SignerSource::Url(url) => {
                let keys = SignerKeys::from_url(url);
                // A signer that is not up yet is not fatal: the first submission fetches again.
                let _ = keys.refresh().await;
                keys
            }
        };
        let issuers = IssuerKeys::from_config(&config.trusted_issuers)?;
        // An issuer that is not up yet is not fatal either: its presentations are refused
        // `proof_invalid` until a later fetch reaches it.
        issuers.refresh_all().await;
        let budgets = config
            .rate_budgets()
            .map_err(|reason| ServerError::Config {
                path: "configuration".into(),
                reason,
            })?;
        Self::with_budgets(
            SiteParts {
                policy: config.policy.clone(),
                origin,
                site_key,
                nonces,
                signer,
                issuers,
                static_dir: config.static_dir.clone(),
                clock,
            },
            budgets,
        )
    }

    pub fn policy(&self) -> &Policy {
        &self.0.policy
    }

    pub fn origin(&self) -> &Origin {
        &self.0.origin
    }

    pub fn site_key(&self) -> &SiteKey {
        &self.0.site_key
    }

    /// The body of `/.well-known/tacit-site.json`.
    pub fn site_keys_json(&self) -> &str {
        &self.0.site_keys_json
    }

    pub fn nonces(&self) -> &Nonces {
        &self.0.nonces
    }

    pub fn signer(&self) -> &SignerKeys {
        &self.0.signer
    }

    /// The trusted issuers' keys.
    pub fn issuers(&self) -> &IssuerKeys {
        &self.0.issuers
    }

    pub fn static_dir(&self) -> &Path {
        &self.0.static_dir
    }

    pub fn now(&self) -> Timestamp {
        self.0.clock.now()
    }

    /// The API's per-client rate limit and the time limits ([`limit`]).
    pub fn limits(&self) -> &Limits {
        &self.0.limits
    }
}

/// Serves `state` on `listener` until `shutdown` resolves, then stops accepting connections and
/// finishes open requests (idle keep-alive connections are closed). Also refreshes fetched
/// signer and issuer keys every few minutes and forgets nonce rows long past expiry.
///
/// The loop is the one the signer and the issuer use ([`tacit_service::serve::serve`]), with
/// [`HEADER_READ_TIMEOUT`]: a client that has not sent a complete request head in time is
/// disconnected. Each request carries its peer address as `ConnectInfo<SocketAddr>` (the rate
/// limit's client key).
pub async fn serve(
    listener: TcpListener,
    state: SiteState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let upkeep = AbortOnDrop(tokio::spawn(upkeep(state.clone())));
    let served = serve_state(listener, state, app, shutdown).await;
    drop(upkeep);
    served
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn upkeep(state: SiteState) {
    let mut refresh = tokio::time::interval(signer_keys::REFRESH_INTERVAL);
    let mut forget = tokio::time::interval(FORGET_INTERVAL);
    refresh.tick().await;
    loop {
        tokio::select! {
            _ = refresh.tick() => {
                if state.signer().url().is_some() {
                    let _ = state.signer().refresh().await;
                }
                state.issuers().refresh_all().await;
            }
            _ = forget.tick() => {
                match state.nonces().forget_old(state.now()).await {
                    Ok(0) => {}
                    Ok(n) => tracing::debug!(rows = n, "forgot lapsed and long-used nonces"),
                    Err(e) => tracing::warn!(error = %e, "could not forget old nonces"),
                }
            }
        }
    }
}

/// A site server started by [`spawn`]. Dropping it stops the server too.
#[derive(Debug)]
pub struct RunningSite {
    addr: SocketAddr,
    origin: Origin,
    state: SiteState,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl RunningSite {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The site's origin (the configured one, or `http://<bound address>`).
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The running state (its nonce table, its keys).
    pub fn state(&self) -> &SiteState {
        &self.state
    }

    /// Stops accepting connections and waits (up to [`SHUTDOWN_GRACE`]) for open ones.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let Some(mut task) = self.task.take() else {
            return Ok(());
        };
        match tokio::time::timeout(SHUTDOWN_GRACE, &mut task).await {
            Ok(Ok(result)) => result,
            Ok(Err(join)) => Err(std::io::Error::other(join)),
            Err(_) => {
                // Requests still open after the grace period: drop them, and the listener with
                // them, so the port is free for a restart.
                tracing::warn!("requests still open after the grace period; closing them");
                task.abort();
                let _ = task.await;
                Ok(())
            }
        }
    }
}

impl Drop for RunningSite {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Binds `config.listen`, builds the state from `config` (origin: the configured one, or
/// `http://<bound address>`) with `clock`, and serves it on the current tokio runtime.
pub async fn spawn_with_clock(
    config: &Config,
    clock: Box<dyn Clock>,
) -> Result<RunningSite, ServerError> {
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|e| ServerError::io("listen on", Path::new(&config.listen.to_string()), e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| ServerError::io("inspect", Path::new(&config.listen.to_string()), e))?;
    let origin = match &config.origin {
        Some(origin) => origin.clone(),
        None => Origin::parse(&format!("http://{addr}")).map_err(|_| ServerError::Config {
            path: "origin".into(),
            reason: "the bound address does not make an origin".into(),
        })?,
    };
    let state = SiteState::from_config(config, origin.clone(), clock).await?;
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, state.clone(), async move {
        let _ = stopped.await;
    }));
    tracing::info!(%addr, %origin, "tacit-site listening");
    Ok(RunningSite {
        addr,
        origin,
        state,
        stop: Some(stop),
        task: Some(task),
    })
}

/// [`spawn_with_clock`] with the system clock.
pub async fn spawn(config: &Config) -> Result<RunningSite, ServerError> {
    spawn_with_clock(config, Box::new(SystemClock)).await
}

/// `tacit-site serve`: runs until Ctrl-C or SIGTERM, then finishes open requests.
pub async fn run(config: &Config) -> Result<(), ServerError> {
    if !config.listen.ip().is_loopback() {
        tracing::warn!("listening beyond loopback; put a TLS-terminating proxy in front");
    }
    let running = spawn(config).await?;
    tracing::info!(
        policy = %running.state().policy().site_name,
        kid = running.state().site_key().kid(),
        database = %running.state().nonces().db().backend(),
        signer_keys = running.state().signer().url().unwrap_or("pinned"),
        "serving"
    );
    tacit_service::serve::shutdown_signal().await;
    tracing::info!("shutting down: finishing open requests");
    running
        .shutdown()
        .await
        .map_err(|e| ServerError::io("serve on", Path::new(&config.listen.to_string()), e))
}
