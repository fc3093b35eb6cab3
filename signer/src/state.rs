//! What every request shares: the keys (swappable without a restart), the database, the rules'
//! settings, the limiter and the clock.

use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use wallet_core::{KeyId, Origin, PublishedKeys, ReceiptPayload, RevokedReceipts, Timestamp};

use tacit_service::middleware::{Limits, Service};

use crate::{Config, Error, KeyStore, SignerDb};

pub use tacit_service::serve::{Clock, SystemClock, system_now};

/// How long one instance reuses the revoked receipts it read from the database for
/// `GET /v1/keys`: one second. The route is open to anyone; this keeps a flood of it to one
/// query a second, and a revocation reaches the published document within this long.
pub const REVOCATIONS_CACHE: Duration = Duration::from_secs(1);

/// wallet-core's `ReceiptPayload::check_signable` in the signer's words: it is well-formed and
/// chains ([`ReceiptPayload::check_structure`], which also caps the window at 15 minutes), it has
/// not expired at `now`, and it was issued within two minutes of `now`.
pub fn check_signable(payload: &ReceiptPayload, now: Timestamp) -> Result<(), Error> {
    payload.check_signable(now).map_err(Error::from_structure)
}

/// Shared state behind `app`. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

/// One generation of keys and its encoded `GET /v1/keys` body.
struct LoadedKeys {
    store: Arc<KeyStore>,
    key_set_json: Bytes,
}

impl LoadedKeys {
    fn new(store: KeyStore) -> Self {
        // A KeySet is plain data; encoding it cannot fail, but an empty set is no answer.
        let key_set_json = serde_json::to_vec(&store.key_set()).unwrap_or_default();
        Self {
            store: Arc::new(store),
            key_set_json: Bytes::from(key_set_json),
        }
    }
}

struct Inner {
    keys: RwLock<Arc<LoadedKeys>>,
    /// The revoked receipts last read, and when (one reader at a time).
    revoked: tokio::sync::Mutex<Option<(Instant, Arc<RevokedReceipts>)>>,
    db: SignerDb,
    signer_origin: String,
    allowed_origins: Arc<[Origin]>,
    limits: Limits,
    clock: Box<dyn Clock>,
}

impl core::fmt::Debug for AppState {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AppState")
            .field("keys", &self.keys())
            .field("db", &self.inner.db.store().backend())
            .field("allowed_origins", &self.inner.allowed_origins)
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// State for a server signing with `keys` for the installs enrolled in `db`, under
    /// `config`'s rules, reading time from `clock`.
    pub fn new(keys: KeyStore, db: SignerDb, config: &Config, clock: impl Clock) -> Self {
        Self {
            inner: Arc::new(Inner {
                keys: RwLock::new(Arc::new(LoadedKeys::new(keys))),
                revoked: tokio::sync::Mutex::new(None),
                db,
                signer_origin: config.signer_origin(),
                allowed_origins: config.allowed_origins.clone().into(),
                limits: config.limits(),
                clock: Box::new(clock),
            }),
        }
    }

    pub fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    fn loaded(&self) -> Arc<LoadedKeys> {
        self.inner
            .keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The keys in force now. A request holds on to the generation it started with.
    pub fn keys(&self) -> Arc<KeyStore> {
        self.loaded().store.clone()
    }

    /// The keys alone, encoded once per generation (the `GET /v1/keys` body while nothing is
    /// revoked).
    pub fn key_set_json(&self) -> Bytes {
        self.loaded().key_set_json.clone()
    }

    /// The `GET /v1/keys` body: the keys in force and the digests of the unexpired receipts of
    /// revoked installs ([`SignerDb::revoked_receipts`], read at most once per
    /// [`REVOCATIONS_CACHE`]). Without revocations it is exactly the keys' document.
    pub async fn published_keys_json(&self) -> Result<Bytes, Error> {
        let revoked = self.revoked_receipts().await?;
        let loaded = self.loaded();
        if revoked.is_empty() {
            return Ok(loaded.key_set_json.clone());
        }
        let published = PublishedKeys {
            key_set: loaded.store.key_set(),
            revoked_receipts: (*revoked).clone(),
        };
        // Plain data: encoding cannot fail.
        Ok(Bytes::from(
            serde_json::to_vec(&published).unwrap_or_default(),
        ))
    }

    /// The revoked receipts, from the database unless read within [`REVOCATIONS_CACHE`].
    async fn revoked_receipts(&self) -> Result<Arc<RevokedReceipts>, Error> {
        let mut cached = self.inner.revoked.lock().await;
        if let Some((read_at, list)) = cached.as_ref()
            && read_at.elapsed() < REVOCATIONS_CACHE
        {
            return Ok(list.clone());
        }
        let list = Arc::new(self.inner.db.revoked_receipts(self.now()).await?);
        *cached = Some((Instant::now(), list.clone()));
        Ok(list)
    }

    /// Puts `keys` in force for every request that starts from now on.
    pub fn replace_keys(&self, keys: KeyStore) {
        let next = Arc::new(LoadedKeys::new(keys));
        *self
            .inner
            .keys
            .write()
            .unwrap_or_else(PoisonError::into_inner) = next;
    }

    /// Re-reads the key file (what SIGHUP does) and puts it in force; on any error the keys in
    /// force stay. Warns when a key published until now is no longer in the file (receipts it
    /// signed stop verifying against `GET /v1/keys`). Returns the active key id.
    pub fn reload_keys(&self, path: &Path) -> Result<KeyId, Error> {
        let next = KeyStore::load(path)?;
        let published = next.key_set();
        for old in self.keys().key_set().keys {
            if !published.keys.iter().any(|k| k.key_id == old.key_id) {
                tracing::warn!(key_id = %old.key_id, "a key published until now is no longer in the key file");
            }
        }
        let active = next.active_key_id();
        self.replace_keys(next);
        Ok(active)
    }

    /// The database of enrolled installs.
    pub fn db(&self) -> &SignerDb {
        &self.inner.db
    }

    /// The origin wallets reach this signer at, as returned at enrolment.
    pub fn signer_origin(&self) -> &str {
        &self.inner.signer_origin
    }

    pub fn allowed_origins(&self) -> Arc<[Origin]> {
        self.inner.allowed_origins.clone()
    }

    /// Whether a browser's `Origin` header names a configured wallet origin. Scheme and host
    /// compare without regard to case; `null` and anything else is refused.
    pub fn is_wallet_origin(&self, origin: &[u8]) -> bool {
        origin_listed(&self.inner.allowed_origins, origin)
    }
}

pub(crate) use tacit_protocol::request_auth::origin_allowed as origin_listed;

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
