//! A cache of another party's keys (the site's copy of the signer's key set, of each trusted
//! issuer's JWK set): the last good value, when it was last fetched, and one fetch at a time.
//! A failed fetch keeps the last good value. When a request names a key the cache lacks, a
//! fresh fetch is made at most once per [`tacit_protocol::trust::MIN_REFETCH_INTERVAL`]
//! ([`tacit_protocol::trust::may_refetch`]), so forged key ids cannot make a service hammer
//! the other party.

use std::future::Future;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Instant;

use tacit_protocol::trust;

/// See the module docs.
#[derive(Debug)]
pub struct KeyCache<T> {
    cached: RwLock<Cached<T>>,
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Debug)]
struct Cached<T> {
    value: Option<Arc<T>>,
    fetched_at: Option<Instant>,
}

impl<T: PartialEq> KeyCache<T> {
    /// A cache holding `value` (pinned keys, or `None` until the first fetch).
    pub fn new(value: Option<T>) -> Self {
        Self {
            cached: RwLock::new(Cached {
                value: value.map(Arc::new),
                fetched_at: None,
            }),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The value held now.
    pub fn current(&self) -> Option<Arc<T>> {
        self.cached
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .value
            .clone()
    }

    /// Fetches now (after any fetch in progress): the new value and whether it differs from
    /// the one held; on failure the held value stays.
    pub async fn refresh<E>(
        &self,
        fetch: impl Future<Output = Result<T, E>>,
    ) -> Result<(Arc<T>, bool), E> {
        let _one_at_a_time = self.fetching.lock().await;
        self.fetch_locked(fetch).await
    }

    /// Fetches now unless the last fetch (failed or not) is recent by `fresh_enough` (given the
    /// time since it, or `None` when there was none); a fetch in progress is waited for. The
    /// value held afterwards, which is the last good one when the fetch failed.
    pub async fn refresh_unless<E, F: Future<Output = Result<T, E>>>(
        &self,
        fresh_enough: impl Fn(Option<std::time::Duration>) -> bool,
        fetch: impl FnOnce() -> F,
    ) -> Option<Arc<T>> {
        if fresh_enough(self.since_fetch()) {
            return self.current();
        }
        let _one_at_a_time = self.fetching.lock().await;
        // Someone may have fetched while we waited.
        if !fresh_enough(self.since_fetch()) {
            let _ = self.fetch_locked(fetch()).await;
        }
        self.current()
    }

    fn since_fetch(&self) -> Option<std::time::Duration> {
        self.cached
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .fetched_at
            .map(|at| at.elapsed())
    }

    /// After a request named a key the held value lacks (or there is none): fetches afresh
    /// unless a fetch happened within the minimum interval (a fetch in progress is waited for
    /// and its result used). The value to retry with, if it is a new one.
    pub async fn refetch<E, F: Future<Output = Result<T, E>>>(
        &self,
        fetch: impl FnOnce() -> F,
    ) -> Option<Arc<T>> {
        let before = self.current();
        let _one_at_a_time = self.fetching.lock().await;
        let last = self
            .cached
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .fetched_at;
        let fresh = if trust::may_refetch(last.map(|at| at.elapsed())) {
            self.fetch_locked(fetch()).await.ok()?.0
        } else {
            // Someone fetched while we waited, or just before: use theirs.
            self.current()?
        };
        let changed = before.as_ref().is_none_or(|b| **b != *fresh);
        changed.then_some(fresh)
    }

    async fn fetch_locked<E>(
        &self,
        fetch: impl Future<Output = Result<T, E>>,
    ) -> Result<(Arc<T>, bool), E> {
        let fetched = fetch.await;
        let mut cached = self.cached.write().unwrap_or_else(PoisonError::into_inner);
        cached.fetched_at = Some(Instant::now());
        let value = Arc::new(fetched?);
        let changed = cached.value.as_deref() != Some(&*value);
        cached.value = Some(Arc::clone(&value));
        Ok((value, changed))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_failed_fetch_keeps_the_last_good_value() {
        let cache = KeyCache::new(None);
        assert_eq!(cache.current(), None);
        let (value, changed) = cache.refresh(async { Ok::<_, ()>(1) }).await.unwrap();
        assert_eq!((*value, changed), (1, true));
        assert_eq!(
            cache.refresh(async { Err::<u32, _>("down") }).await,
            Err("down")
        );
        assert_eq!(cache.current().as_deref(), Some(&1));
        let (_, changed) = cache.refresh(async { Ok::<_, ()>(1) }).await.unwrap();
        assert!(!changed);
    }

    #[tokio::test]
    async fn refetches_are_rate_limited_and_report_only_news() {
        let cache = KeyCache::new(Some(1));
        let calls = AtomicU32::new(0);
        let fetch = |v: u32| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, ()>(v) }
        };
        // Never fetched (pinned start): a refetch happens, and 2 is news.
        assert_eq!(cache.refetch(|| fetch(2)).await.as_deref(), Some(&2));
        // Just fetched: no second fetch however many forged ids arrive, and nothing is new.
        for _ in 0..50 {
            assert_eq!(cache.refetch(|| fetch(3)).await, None);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(cache.current().as_deref(), Some(&2));
    }

    #[tokio::test]
    async fn refresh_unless_fetches_only_when_the_value_is_not_fresh_enough() {
        let cache = KeyCache::new(None);
        let calls = AtomicU32::new(0);
        let fetch = |v: Result<u32, ()>| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { v }
        };
        let fetched_once = |since: Option<std::time::Duration>| since.is_some();
        // Never fetched: fetch.
        assert_eq!(
            cache
                .refresh_unless(fetched_once, || fetch(Ok(1)))
                .await
                .as_deref(),
            Some(&1)
        );
        // Fresh enough: no fetch.
        for _ in 0..10 {
            assert_eq!(
                cache
                    .refresh_unless(fetched_once, || fetch(Ok(2)))
                    .await
                    .as_deref(),
                Some(&1)
            );
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        // Never fresh enough: a fetch each time; a failure keeps the last good value.
        let never = |_: Option<std::time::Duration>| false;
        assert_eq!(
            cache
                .refresh_unless(never, || fetch(Ok(3)))
                .await
                .as_deref(),
            Some(&3)
        );
        assert_eq!(
            cache
                .refresh_unless(never, || fetch(Err(())))
                .await
                .as_deref(),
            Some(&3)
        );
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_failed_refetch_is_no_news_and_still_counts_as_a_fetch() {
        let cache = KeyCache::<u32>::new(None);
        assert_eq!(cache.refetch(|| async { Err::<u32, _>(()) }).await, None);
        // The failure was recent: the next refetch does not hit the other party.
        assert_eq!(cache.refetch(|| async { Ok::<_, ()>(5) }).await, None);
        assert_eq!(cache.current(), None);
    }
}
