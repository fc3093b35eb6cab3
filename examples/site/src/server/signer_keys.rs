//! The signer keys a verdict counts: pinned in a file, or fetched from the configured URL (at
//! start, every [`REFRESH_INTERVAL`], before judging a receipt when the set is older than
//! [`MAX_KEY_AGE`], and once when a receipt names a key the cached set lacks — at most once per
//! [`MIN_REFETCH_INTERVAL`], so forged key ids cannot make the site hammer the signer). A failed
//! fetch keeps the last good set. Nothing a request carries chooses the URL.
//!
//! The fetched set is the signer's whole `GET /v1/keys` ([`PublishedKeys`]): with the keys, the
//! digests of the unexpired receipts of installs the signer revoked, which the verdict refuses
//! (`revoked`). So a receipt submitted more than [`MAX_KEY_AGE`] (plus one fetch) after
//! `tacit-signer revoke-install` is refused. Pinned keys learn of no revocation.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tacit_protocol::trust;
use tacit_service::key_cache::KeyCache;

use wallet_core::{KeySet, PublishedKeys};

use super::ServerError;

/// How often a fetched key set is refreshed in the background ([`trust::REFRESH_INTERVAL`]).
pub const REFRESH_INTERVAL: Duration = trust::REFRESH_INTERVAL;

/// The oldest a fetched set may be when a receipt is judged ([`trust::MAX_KEY_AGE`]).
pub const MAX_KEY_AGE: Duration = trust::MAX_KEY_AGE;

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
    cache: KeyCache<PublishedKeys>,
}

impl SignerKeys {
    /// Keys fixed for the process's life (no revocations).
    pub fn pinned(keys: KeySet) -> Self {
        Self::pinned_published(keys.into())
    }

    /// A published document fixed for the process's life: the revocations it lists stay, and
    /// no later one is learnt.
    pub fn pinned_published(keys: PublishedKeys) -> Self {
        Self {
            source: Source::Pinned,
            cache: KeyCache::new(Some(keys)),
        }
    }

    /// Keys read once from a file holding the JSON of a signer's `GET /v1/keys`.
    pub fn from_file(path: &Path) -> Result<Self, ServerError> {
        let bytes = std::fs::read(path).map_err(|e| ServerError::io("read", path, e))?;
        let keys = PublishedKeys::parse(&bytes).map_err(|_| ServerError::Config {
            path: path.display().to_string(),
            reason: "not a signer key set (the JSON of the signer's GET /v1/keys)".into(),
        })?;
        Ok(Self::pinned_published(keys))
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
    pub fn current(&self) -> Option<Arc<PublishedKeys>> {
        self.cache.current()
    }

    /// The current set, fetching it first if none was fetched yet.
    pub async fn get(&self) -> Result<Arc<PublishedKeys>, FetchError> {
        match self.current() {
            Some(keys) => Ok(keys),
            None => self.refresh().await,
        }
    }

    /// The set to judge a receipt with: fetched afresh first when the last fetch is
    /// [`MAX_KEY_AGE`] old or more ([`trust::needs_fresh_keys`]; one fetch at a time, the others
    /// wait for it). When that fetch fails the last good set is used; with none, the error.
    pub async fn for_judging(&self) -> Result<Arc<PublishedKeys>, FetchError> {
        let Source::Url(url) = &self.source else {
            return self.get().await;
        };
        let fresh_enough = |since| !trust::needs_fresh_keys(since);
        match self.cache.refresh_unless(fresh_enough, || fetch(url)).await {
            Some(keys) => Ok(keys),
            None => Err(FetchError("the signer's keys could not be fetched")),
        }
    }

    /// Fetches the set now (pinned keys: returns them).
    pub async fn refresh(&self) -> Result<Arc<PublishedKeys>, FetchError> {
        let Source::Url(url) = &self.source else {
            return self.current().ok_or(FetchError("no pinned keys"));
        };
        let (keys, changed) = self.cache.refresh(fetch(url)).await?;
        if changed {
            log_fetched(&keys);
        }
        Ok(keys)
    }

    /// After a receipt named a key the set lacks: fetches afresh unless a fetch happened in the
    /// last [`MIN_REFETCH_INTERVAL`]. Returns the set to retry with, if it is a new one.
    pub async fn refresh_for_unknown_key(&self) -> Option<Arc<PublishedKeys>> {
        let Source::Url(url) = &self.source else {
            return None;
        };
        let fresh = self.cache.refetch(|| fetch(url)).await?;
        log_fetched(&fresh);
        Some(fresh)
    }
}

fn log_fetched(keys: &PublishedKeys) {
    tracing::info!(
        keys = keys.key_set.keys.len(),
        revoked_receipts = keys.revoked_receipts.len(),
        "fetched the signer's keys"
    );
}

/// Why the signer's keys could not be fetched (a fixed phrase: no URL, no body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FetchError(pub &'static str);

async fn fetch_once(url: &str) -> Result<PublishedKeys, FetchError> {
    use tacit_service::fetch::{FetchFailure, get_json_async};
    let bytes = get_json_async(url.to_owned(), FETCH_TIMEOUT, KeySet::MAX_BYTES)
        .await
        .map_err(|e| match e {
            FetchFailure::Status(_) => FetchError("the signer answered with an error status"),
            FetchFailure::Timeout => FetchError("the signer did not answer in time"),
            FetchFailure::Unreachable => FetchError("the signer could not be reached"),
            FetchFailure::Unreadable => FetchError("the signer's answer could not be read"),
        })?;
    PublishedKeys::parse(&bytes).map_err(|_| FetchError("the signer's answer is not a key set"))
}

/// [`fetch_once`], with a failure logged (the cache keeps the last good set).
async fn fetch(url: &str) -> Result<PublishedKeys, FetchError> {
    let fetched = fetch_once(url).await;
    if let Err(e) = &fetched {
        tracing::warn!(reason = e.0, "could not fetch the signer's keys");
    }
    fetched
}
