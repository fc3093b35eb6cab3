//! # tacit-issuer
//!
//! `tacit-issuer`, a stand-in for the offices that hold facts about people — a tax office
//! vouching for annual income, a civil registry vouching for the date of birth — issuing
//! **SD-JWT VCs** (`tacit_protocol::sd_jwt`) that carry issuer-fixed **predicates**, never the
//! raw value. One process is one issuer (name, origin, attribute, key file, database).
//!
//! It promises:
//! - credentials only for a person it has on record, redeemed with a one-time **enrolment code**
//!   (`tacit-issuer seed` prints one per demo person; stored as a hash) or, for later batches, the
//!   **refresh token** handed out with the previous batch (single-use, rotated on every batch,
//!   stored as a hash, 180 days); a code, a refresh token and a nonce each work once, even under
//!   concurrent requests (conditional `UPDATE`s in one write transaction that commits only once
//!   the batch is signed, so nothing is consumed by a refused request); `tacit-issuer revoke
//!   <person>` ends a person's refresh chain (later requests with its tokens or codes are refused
//!   as `revoked`);
//! - unlinkable batches: every credential issued on one UTC day carries the same `iat` (that
//!   day's midnight UTC), `exp` (30 days later) and `kid` (the active key, first in the
//!   published set), whoever the person; its database keeps the day of an issuance, never the
//!   instant;
//! - each credential bound to its own holder key (`cnf.jwk`), whose possession the wallet proves
//!   over this issuer's origin and a fresh single-use server nonce ([`pop`]);
//! - income as the `income_below_<amount>` ladder (10,000 to 200,000 in steps of 5,000) plus a
//!   plain `currency`; age as `age_equal_or_over_16/18/21/65`; valid 30 days from the day of
//!   issuance, for an age credential too (an `exp` at the next birthday would tell every site
//!   the date of birth: the wallet drops a predicate a birthday may have turned and refills)
//!   ([`predicates`]);
//! - to publish every key a credential may carry (`GET /.well-known/jwt-vc-issuer`, the active
//!   key and the rotated-out ones) with CORS `*`; the secret key never in logs, `Debug` output
//!   or a file others can read ([`KeyStore`]);
//! - every refusal as `{ "error": code, "message": sentence }` without echoing the request or
//!   exposing internals ([`Error`]); bounded work: a request head within seconds, 64 KiB bodies,
//!   a per-client rate limit, a request timeout, a graceful shutdown.
//!
//! The HTTP contract is in `issuer/README.md` and in [`routes`].

pub mod bench;
mod config;
pub mod credential;
mod db;
mod error;
mod keys;
pub mod oid4vci;
pub mod openapi;
pub mod pop;
pub mod predicates;
pub mod routes;

use std::sync::Arc;
use std::time::Duration;

use tacit_protocol::sd_jwt::{IssuerKey, IssuerMetadata, Jwks};
use tacit_service::middleware::{Limits, Service};
use wallet_core::Timestamp;

pub use config::{
    Cli, Command, Config, DEFAULT_DATABASE_FILE, DEFAULT_HEADER_READ_TIMEOUT_SECS,
    DEFAULT_KEY_FILE, DEFAULT_LISTEN, DEFAULT_RATE_LIMIT_PER_MINUTE, DEFAULT_REQUEST_TIMEOUT_SECS,
    IssuerCommand, IssuerEnv,
};
pub use credential::Attribute;
pub use db::{
    ACCESS_TOKEN_VALIDITY_MS, DEFAULT_CODE_VALIDITY_MS, DEMO_PEOPLE, Enrolment, Grant, IssuerDb,
    MIGRATION_SET, NONCE_VALIDITY_MS, Person, REFRESH_VALIDITY_MS, Redemption, TokenGrant,
    fresh_codes, issuance_day_ms, random_token, revoke, seed,
};
pub use error::Error;
pub use keys::{KEY_FILE_FORMAT, KeyStore, RetiredKey, key_id, keygen, make_signing_key};
pub use routes::{MAX_BATCH, MAX_BODY_BYTES, app};
use tacit_service::error::Operational;
pub use tacit_service::middleware::serve_app as serve;
pub use tacit_service::serve::{Clock, SystemClock, shutdown_signal, system_now};
pub use tacit_service::{MAX_TRACKED_CLIENTS, RateLimiter, client_key};

/// How long in-flight requests get to finish after SIGINT/SIGTERM before the process exits.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Shared state behind [`app`]. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    keys: KeyStore,
    metadata_json: String,
    db: IssuerDb,
    issuer: String,
    name: String,
    vct: String,
    attribute: Attribute,
    limits: Limits,
    clock: Box<dyn Clock>,
}

impl core::fmt::Debug for AppState {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AppState")
            .field("issuer", &self.inner.issuer)
            .field("attribute", &self.inner.attribute)
            .field("keys", &self.inner.keys)
            .field("db", &self.inner.db.store().backend())
            .finish_non_exhaustive()
    }
}

/// The issuer metadata document for `issuer` with every key in `keys`.
pub fn issuer_metadata(issuer: &str, keys: &KeyStore) -> Result<IssuerMetadata, Error> {
    let set = keys
        .published()
        .into_iter()
        .map(|(kid, jwk)| {
            sec1_of(&jwk)
                .and_then(|sec1| p256::ecdsa::VerifyingKey::from_sec1_bytes(&sec1).ok())
                .map(|key| IssuerKey { kid, key })
                .ok_or_else(|| Operational::Config("a published key is malformed".to_owned()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let jwks = Jwks::new(set).map_err(|e| Operational::Config(format!("key set: {}", e.code())))?;
    Ok(IssuerMetadata {
        issuer: issuer.to_owned(),
        jwks,
    })
}

fn sec1_of(jwk: &tacit_protocol::request_auth::Jwk) -> Option<[u8; 65]> {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let x = URL_SAFE_NO_PAD.decode(&jwk.x).ok()?;
    let y = URL_SAFE_NO_PAD.decode(&jwk.y).ok()?;
    if x.len() != 32 || y.len() != 32 {
        return None;
    }
    let mut sec1 = [4u8; 65];
    sec1[1..33].copy_from_slice(&x);
    sec1[33..].copy_from_slice(&y);
    Some(sec1)
}

impl AppState {
    /// State for an issuer signing with `keys` for the people in `db`, under `config`, reading
    /// time from `clock`.
    pub fn new(
        keys: KeyStore,
        db: IssuerDb,
        config: &Config,
        clock: impl Clock,
    ) -> Result<Self, Error> {
        let issuer = config.issuer_origin();
        let metadata_json = issuer_metadata(&issuer, &keys)?.to_json();
        Ok(Self {
            inner: Arc::new(Inner {
                keys,
                metadata_json,
                db,
                issuer,
                name: config.name.clone(),
                vct: config.vct(),
                attribute: config.attribute,
                limits: config.limits(),
                clock: Box::new(clock),
            }),
        })
    }

    pub fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    pub fn keys(&self) -> &KeyStore {
        &self.inner.keys
    }

    /// The `/.well-known/jwt-vc-issuer` body.
    pub fn metadata_json(&self) -> &str {
        &self.inner.metadata_json
    }

    pub fn db(&self) -> &IssuerDb {
        &self.inner.db
    }

    /// The issuer's origin (`iss`).
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }

    pub fn name(&self) -> &str {
        &self.inner.name
    }

    pub fn vct(&self) -> &str {
        &self.inner.vct
    }

    pub fn attribute(&self) -> Attribute {
        self.inner.attribute
    }
}

/// The shared middleware's view: the limits and the clock; the refusals are the default JSON
/// errors.
impl Service for AppState {
    fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    fn now(&self) -> Timestamp {
        AppState::now(self)
    }
}

/// The router [`tacit_service::middleware::serve_app`] (re-exported as [`serve`]) serves.
impl tacit_service::middleware::App for AppState {
    fn app(self) -> axum::Router {
        app(self)
    }
}

/// Opens the configured database ([`Config::database_url`]) and migrates it.
pub async fn open_database(config: &Config) -> Result<IssuerDb, Error> {
    IssuerDb::open(&config.database_url()).await
}

/// `tacit-issuer [serve]`: loads the key file (refusing a missing or group/other-readable one),
/// opens and migrates the database, binds, and serves until SIGINT/SIGTERM, then drains for up
/// to [`SHUTDOWN_GRACE`].
pub async fn run_server(config: &Config) -> Result<(), Error> {
    let keys = KeyStore::load(&config.key_file)?;
    let db = open_database(config).await?;
    let listener =
        tacit_service::serve::bind(config.listen, "put a TLS-terminating proxy in front").await?;
    let mut config = config.clone();
    if config.origin.is_none()
        && let Ok(bound) = listener.local_addr()
    {
        config.listen = bound;
    }
    let state = AppState::new(keys, db, &config, SystemClock)?;
    tracing::info!(
        listen = %config.listen,
        issuer = state.issuer(),
        attribute = state.attribute().as_str(),
        vct = state.vct(),
        database = %state.db().store().backend(),
        kid = state.keys().active_kid(),
        "tacit-issuer listening"
    );
    let timeout = state.limits().header_read_timeout();
    let router = app(state);
    tacit_service::serve::serve_until_signal(listener, router, timeout, SHUTDOWN_GRACE).await?;
    Ok(())
}
