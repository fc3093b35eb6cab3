//! What every request shares: the keys, the rules' settings, the limiter and the clock.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use wallet_core::{Origin, ReceiptPayload, Timestamp};

use crate::{Config, Error, KeyStore, RateLimiter};

/// Where the service reads the time. Tests pass a closure; the server uses [`SystemClock`].
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Timestamp;
}

impl<F: Fn() -> Timestamp + Send + Sync + 'static> Clock for F {
    fn now(&self) -> Timestamp {
        self()
    }
}

/// The operating system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        system_now()
    }
}

/// The wall clock as a [`Timestamp`] (before 1970 reads as negative milliseconds).
pub fn system_now() -> Timestamp {
    let millis = match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_millis()).unwrap_or(i64::MAX),
    };
    Timestamp::from_millis(millis)
}

/// wallet-core's `ReceiptPayload::check_signable` in the signer's words: it is well-formed and
/// chains ([`ReceiptPayload::check_structure`], which also caps the window at 24 hours), it has
/// not expired at `now`, and it was issued within two minutes of `now`.
pub fn check_signable(payload: &ReceiptPayload, now: Timestamp) -> Result<(), Error> {
    payload.check_signable(now).map_err(Error::from_structure)
}

/// Shared state behind `app`. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    keys: KeyStore,
    key_set_json: Bytes,
    allowed_origins: Arc<[Origin]>,
    limiter: RateLimiter,
    timeout: Duration,
    clock: Box<dyn Clock>,
}

impl core::fmt::Debug for AppState {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AppState")
            .field("keys", &self.inner.keys)
            .field("allowed_origins", &self.inner.allowed_origins)
            .field("limiter", &self.inner.limiter.is_enabled())
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// State for a server signing with `keys` under `config`'s rules, reading time from `clock`.
    pub fn new(keys: KeyStore, config: &Config, clock: impl Clock) -> Self {
        // A KeySet is plain data; encoding it cannot fail, but an empty set is no answer.
        let key_set_json = serde_json::to_vec(&keys.key_set()).unwrap_or_default();
        Self {
            inner: Arc::new(Inner {
                keys,
                key_set_json: Bytes::from(key_set_json),
                allowed_origins: config.allowed_origins.clone().into(),
                limiter: RateLimiter::new(config.rate_limit_per_minute),
                timeout: config.request_timeout(),
                clock: Box::new(clock),
            }),
        }
    }

    pub fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    pub fn keys(&self) -> &KeyStore {
        &self.inner.keys
    }

    /// The `GET /v1/keys` body, encoded once.
    pub fn key_set_json(&self) -> Bytes {
        self.inner.key_set_json.clone()
    }

    pub fn limiter(&self) -> &RateLimiter {
        &self.inner.limiter
    }

    pub fn timeout(&self) -> Duration {
        self.inner.timeout
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

pub(crate) fn origin_listed(allowed: &[Origin], origin: &[u8]) -> bool {
    allowed
        .iter()
        .any(|o| o.as_str().as_bytes().eq_ignore_ascii_case(origin))
}
