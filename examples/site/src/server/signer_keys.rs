//! The signer keys a verdict counts: pinned in a file, or fetched from the configured URL (at
//! start, every [`REFRESH_INTERVAL`], and once when a receipt names a key the cached set lacks —
//! at most once per [`MIN_REFETCH_INTERVAL`], so forged key ids cannot make the site hammer the
//! signer). A failed fetch keeps the last good set. Nothing a request carries chooses the URL.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tacit_protocol::trust;
use tacit_service::key_cache::KeyCache;

use wallet_core::KeySet;

use super::ServerError;

/// How often a fetched key set is refreshed in the background ([`trust::REFRESH_INTERVAL`]).
pub const REFRESH_INTERVAL: Duration = trust::REFRESH_INTERVAL;

/// The least time between two fetches triggered by unknown key ids
/// ([`trust::MIN_REFETCH_INTERVAL`], [`trust::may_refetch`]).
pub const MIN_REFETCH_INTERVAL: Duration = trust::MIN_REFETCH_INTERVAL;

/// How long one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug)]
enum Source {
    Pinned,
    Url(String),
}

/// See the module docs.
#[derive(Debug)]
pub struct SignerKeys {
    source: Source,
    cache: KeyCache<KeySet>,
}

impl SignerKeys {
    /// Keys fixed for the process's life.
    pub fn pinned(keys: KeySet) -> Self {
        Self {
            source: Source::Pinned,
            cache: KeyCache::new(Some(keys)),
        }
    }

    /// Keys read once from a `KeySet` JSON file.
    pub fn from_file(path: &Path) -> Result<Self, ServerError> {
        let bytes = std::fs::read(path).map_err(|e| ServerError::io("read", path, e))?;
        let keys = KeySet::parse(&bytes).map_err(|_| ServerError::Config {
            path: path.display().to_string(),
            reason: "not a signer key set (the JSON of the signer's GET /v1/keys)".into(),
        })?;
        Ok(Self::pinned(keys))
    }

    /// Keys fetched from `url`; empty until the first [`SignerKeys::refresh`].
    pub fn from_url(url: impl Into<String>) -> Self {
        Self {
            source: Source::Url(url.into()),
            cache: KeyCache::new(None),
        }
    }

    /// The URL keys are fetched from, if they are.
    pub fn url(&self) -> Option<&str> {
        match &self.source {
            Source::Url(url) => Some(url),
            Source::Pinned => None,
        }
    }

    /// The current set, if there is one.
    pub fn current(&self) -> Option<Arc<KeySet>> {
        self.cache.current()
    }

    /// The current set, fetching it first if none was fetched yet.
    pub async fn get(&self) -> Result<Arc<KeySet>, FetchError> {
        match self.current() {
            Some(keys) => Ok(keys),
            None => self.refresh().await,
        }
    }

    /// Fetches the set now (pinned keys: returns them).
    pub async fn refresh(&self) -> Result<Arc<KeySet>, FetchError> {
        let Source::Url(url) = &self.source else {
            return self.current().ok_or(FetchError("no pinned keys"));
        };
        let (keys, changed) = self.cache.refresh(fetch(url)).await?;
        if changed {
            tracing::info!(keys = keys.keys.len(), "fetched the signer's keys");
        }
        Ok(keys)
    }

    /// After a receipt named a key the set lacks: fetches afresh unless a fetch happened in the
    /// last [`MIN_REFETCH_INTERVAL`]. Returns the set to retry with, if it is a new one.
    pub async fn refresh_for_unknown_key(&self) -> Option<Arc<KeySet>> {
        let Source::Url(url) = &self.source else {
            return None;
        };
        let fresh = self.cache.refetch(|| fetch(url)).await?;
        tracing::info!(keys = fresh.keys.len(), "fetched the signer's keys");
        Some(fresh)
    }
}

/// Why the signer's keys could not be fetched (a fixed phrase: no URL, no body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FetchError(pub &'static str);

async fn fetch_once(url: &str) -> Result<KeySet, FetchError> {
    use tacit_service::fetch::{FetchFailure, get_json_async};
    let bytes = get_json_async(url.to_owned(), FETCH_TIMEOUT, KeySet::MAX_BYTES)
        .await
        .map_err(|e| match e {
            FetchFailure::Status(_) => FetchError("the signer answered with an error status"),
            FetchFailure::Timeout => FetchError("the signer did not answer in time"),
            FetchFailure::Unreachable => FetchError("the signer could not be reached"),
            FetchFailure::Unreadable => FetchError("the signer's answer could not be read"),
        })?;
    KeySet::parse(&bytes).map_err(|_| FetchError("the signer's answer is not a key set"))
}

/// [`fetch_once`], with a failure logged (the cache keeps the last good set).
async fn fetch(url: &str) -> Result<KeySet, FetchError> {
    let fetched = fetch_once(url).await;
    if let Err(e) = &fetched {
        tracing::warn!(reason = e.0, "could not fetch the signer's keys");
    }
    fetched
}
