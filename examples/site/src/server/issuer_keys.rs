//! The keys of the credential issuers the configuration trusts (`trusted_issuers`): each pinned
//! in a file (its issuer metadata, or a bare JWKS), or fetched from its `keys_url` — the
//! issuer's `/.well-known/jwt-vc-issuer` metadata, whose `issuer` must be the configured one —
//! at start, every [`REFRESH_INTERVAL`], and (at most once per [`MIN_REFETCH_INTERVAL`] per
//! issuer) when a presentation names a key the cached set lacks or the keys were never fetched.
//! A failed fetch keeps the last good set; an issuer never reached has no keys, and its
//! presentations are refused `proof_invalid` until it is reached. Nothing a request carries
//! chooses a URL or adds an issuer.
//!
//! Each issuer's Token Status List is read from `<issuer>/status/1` (the only list this site
//! reads for it) when a presentation names an entry and the list held is missing or older than
//! its `ttl` or [`MAX_STATUS_AGE`] (10 s), at most once per [`MIN_REFETCH_INTERVAL`]; it is
//! verified with the issuer's keys. A list that cannot be read leaves the presentation refused
//! `status_unavailable` (nothing spent).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use std::sync::Mutex;
use std::time::Instant;

use tacit_protocol::sd_jwt::{IssuerMetadata, Jwks, MAX_JWKS_BYTES};
use tacit_protocol::status_list::{
    MAX_TOKEN_LEN, MEDIA_TYPE, STATUS_PATH, StatusListToken, verify_token,
};
use tacit_protocol::trust;
use tacit_service::key_cache::KeyCache;
use wallet_core::Origin;

use super::ServerError;
use super::config::TrustedIssuer;
use crate::proof::{Issuer, Trust};

/// How often fetched issuer keys are refreshed in the background ([`trust::REFRESH_INTERVAL`]).
pub const REFRESH_INTERVAL: Duration = trust::REFRESH_INTERVAL;

/// The least time between two fetches of one issuer's keys triggered by submissions
/// ([`trust::MIN_REFETCH_INTERVAL`], [`trust::may_refetch`]).
pub const MIN_REFETCH_INTERVAL: Duration = trust::MIN_REFETCH_INTERVAL;

/// How long one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest a status list is used after it was read, whatever its `ttl` says (a reader may
/// read more often than `ttl` asks): a revocation reaches this site's verdicts within about
/// this, as a revoked install's receipts do ([`MIN_REFETCH_INTERVAL`], the same bound).
pub const MAX_STATUS_AGE: Duration = MIN_REFETCH_INTERVAL;

/// An issuer's status list as last read: the token, when, and when a read was last tried.
#[derive(Debug, Default)]
struct HeldStatus {
    token: Option<(StatusListToken, Instant)>,
    tried: Option<Instant>,
}

#[derive(Debug)]
struct One {
    issuer: Origin,
    name: String,
    vouches_for: wallet_core::Attribute,
    vct: String,
    url: Option<String>,
    cache: KeyCache<Jwks>,
    status: Mutex<HeldStatus>,
}

/// See the module docs.
#[derive(Debug, Default)]
pub struct IssuerKeys {
    issuers: Vec<Arc<One>>,
}

/// Reads an issuer's keys from `bytes` (the rule is [`IssuerMetadata::keys_of`]).
fn parse_keys(bytes: &[u8], issuer: &Origin, bare_ok: bool) -> Result<Jwks, &'static str> {
    IssuerMetadata::keys_of(bytes, issuer.as_str(), bare_ok).map_err(|e| e.reason())
}

impl IssuerKeys {
    /// No trusted issuers: every issuer-backed answer is refused `untrusted_issuer`.
    pub fn none() -> Self {
        Self::default()
    }

    /// Issuers with keys fixed for the process's life, each as the pure checks read it.
    pub fn pinned(issuers: Vec<Issuer>) -> Self {
        Self {
            issuers: issuers
                .into_iter()
                .map(|i| {
                    Arc::new(One {
                        issuer: i.issuer,
                        name: i.name,
                        vouches_for: i.vouches_for,
                        vct: i.vct,
                        url: None,
                        cache: KeyCache::new(i.jwks),
                        status: Mutex::new(HeldStatus {
                            token: i.status.map(|t| (t, Instant::now())),
                            tried: None,
                        }),
                    })
                })
                .collect(),
        }
    }

    /// The configured issuers: pinned files read now, URLs not fetched yet (see
    /// [`IssuerKeys::refresh_all`]).
    pub fn from_config(trusted: &[TrustedIssuer]) -> Result<Self, ServerError> {
        let mut issuers = Vec::with_capacity(trusted.len());
        for t in trusted {
            let jwks = match &t.pinned_keys {
                Some(path) => Some(read_pinned(path, &t.issuer)?),
                None => None,
            };
            // `Config::check` refused entries without either; a configuration built in code
            // that skipped it is refused here.
            let (Some(vouches_for), Some(vct)) = (t.vouches_for, t.vct.clone()) else {
                return Err(ServerError::Config {
                    path: "trusted_issuers".into(),
                    reason: format!("trusted issuer {} needs vouches_for and vct", t.issuer),
                });
            };
            issuers.push(Arc::new(One {
                issuer: t.issuer.clone(),
                name: t.name.clone(),
                vouches_for,
                vct,
                url: t.keys_url.clone(),
                cache: KeyCache::new(jwks),
                status: Mutex::default(),
            }));
        }
        Ok(Self { issuers })
    }

    /// How many issuers are trusted.
    pub fn len(&self) -> usize {
        self.issuers.len()
    }

    /// Whether no issuer is trusted.
    pub fn is_empty(&self) -> bool {
        self.issuers.is_empty()
    }

    /// What the pure checks read: every trusted issuer with the keys held now.
    pub fn trust(&self) -> Trust {
        Trust {
            issuers: self
                .issuers
                .iter()
                .map(|one| Issuer {
                    issuer: one.issuer.clone(),
                    name: one.name.clone(),
                    vouches_for: one.vouches_for,
                    vct: one.vct.clone(),
                    jwks: one.cache.current().map(|jwks| (*jwks).clone()),
                    status: one.fresh_status(),
                })
                .collect(),
        }
    }

    /// Fetches every issuer with a URL now (concurrently); failures are logged and keep the
    /// last good keys.
    pub async fn refresh_all(&self) {
        let fetches = self
            .issuers
            .iter()
            .filter(|one| one.url.is_some())
            .map(|one| {
                let one = one.clone();
                tokio::spawn(async move { one.refresh().await })
            })
            .collect::<Vec<_>>();
        for fetch in fetches {
            let _ = fetch.await;
        }
    }

    /// After a presentation from `issuer` named an entry of its status list and the list held
    /// was missing or stale: reads it now unless a read was tried in the last
    /// [`MIN_REFETCH_INTERVAL`]. Whether a fresh list is now held.
    pub async fn refresh_status_for(&self, issuer: &Origin, now: wallet_core::Timestamp) -> bool {
        match self.issuers.iter().find(|one| &one.issuer == issuer) {
            Some(one) => one.read_status(now).await,
            None => false,
        }
    }

    /// After a presentation from `issuer` named a key its set lacks (or it had none): fetches
    /// afresh unless one was fetched in the last [`MIN_REFETCH_INTERVAL`]. Whether the keys
    /// changed.
    pub async fn refresh_for(&self, issuer: &Origin) -> bool {
        match self.issuers.iter().find(|one| &one.issuer == issuer) {
            Some(one) if one.url.is_some() => one.refetch().await,
            _ => false,
        }
    }
}

impl One {
    /// Fetches now; a failure keeps the last good keys.
    async fn refresh(&self) {
        let Some(url) = &self.url else {
            return;
        };
        if let Ok((jwks, true)) = self.cache.refresh(self.fetch(url)).await {
            self.fetched(&jwks);
        }
    }

    /// A fetch unless one happened recently; whether the keys changed.
    async fn refetch(&self) -> bool {
        let Some(url) = &self.url else {
            return false;
        };
        match self.cache.refetch(|| self.fetch(url)).await {
            Some(jwks) => {
                self.fetched(&jwks);
                true
            }
            None => false,
        }
    }

    /// The status list held, while younger than its `ttl` and [`MAX_STATUS_AGE`].
    fn fresh_status(&self) -> Option<StatusListToken> {
        let held = self.status.lock().ok()?;
        let (token, read_at) = held.token.as_ref()?;
        let ttl = Duration::from_secs(token.ttl).min(MAX_STATUS_AGE);
        (read_at.elapsed() < ttl).then(|| token.clone())
    }

    /// Reads `<issuer>/status/1` and verifies it with the keys held, unless a read was tried
    /// in the last [`MIN_REFETCH_INTERVAL`]; whether a fresh list is held afterwards.
    async fn read_status(&self, now: wallet_core::Timestamp) -> bool {
        {
            let Ok(mut held) = self.status.lock() else {
                return false;
            };
            if held
                .tried
                .is_some_and(|t| t.elapsed() < MIN_REFETCH_INTERVAL)
            {
                drop(held);
                return self.fresh_status().is_some();
            }
            held.tried = Some(Instant::now());
        }
        let Some(jwks) = self.cache.current() else {
            return false;
        };
        let uri = format!(
            "{}{STATUS_PATH}",
            self.issuer.as_str().trim_end_matches('/')
        );
        let fetched = tacit_service::fetch::get_as_async(
            uri.clone(),
            MEDIA_TYPE,
            FETCH_TIMEOUT,
            MAX_TOKEN_LEN,
        )
        .await;
        let read = fetched
            .map_err(|e| e.to_string())
            .and_then(|bytes| String::from_utf8(bytes).map_err(|_| "not text".to_owned()))
            .and_then(|text| {
                verify_token(text.trim(), &jwks, &uri, now).map_err(|e| e.to_string())
            });
        match read {
            Ok(token) => {
                tracing::info!(issuer = %self.issuer, ttl = token.ttl, "read an issuer's status list");
                if let Ok(mut held) = self.status.lock() {
                    held.token = Some((token, Instant::now()));
                }
                true
            }
            Err(reason) => {
                tracing::warn!(issuer = %self.issuer, %reason, "could not read an issuer's status list");
                false
            }
        }
    }

    fn fetched(&self, jwks: &Jwks) {
        tracing::info!(
            issuer = %self.issuer,
            keys = jwks.keys().len(),
            "fetched an issuer's keys"
        );
    }

    /// [`fetch`], with a failure logged.
    async fn fetch(&self, url: &str) -> Result<Jwks, &'static str> {
        let fetched = fetch(url.to_owned(), &self.issuer).await;
        if let Err(reason) = fetched {
            tracing::warn!(issuer = %self.issuer, reason, "could not fetch an issuer's keys");
        }
        fetched
    }
}

fn read_pinned(path: &Path, issuer: &Origin) -> Result<Jwks, ServerError> {
    let bytes = std::fs::read(path).map_err(|e| ServerError::io("read", path, e))?;
    parse_keys(&bytes, issuer, true).map_err(|reason| ServerError::Config {
        path: path.display().to_string(),
        reason: format!(
            "pinned keys of {issuer}: {reason} (the JSON of the issuer's \
             /.well-known/jwt-vc-issuer, or its JWK set)"
        ),
    })
}

async fn fetch(url: String, issuer: &Origin) -> Result<Jwks, &'static str> {
    use tacit_service::fetch::{FetchFailure, get_json_async};
    let bytes = get_json_async(url, FETCH_TIMEOUT, MAX_JWKS_BYTES)
        .await
        .map_err(|e| match e {
            FetchFailure::Status(_) => "the issuer answered with an error status",
            FetchFailure::Timeout => "the issuer did not answer in time",
            FetchFailure::Unreachable => "the issuer could not be reached",
            FetchFailure::Unreadable => "the issuer's answer could not be read",
        })?;
    parse_keys(&bytes, issuer, false)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn jwks() -> Jwks {
        let key = p256::ecdsa::SigningKey::from_slice(&[7; 32]).unwrap();
        Jwks::new(vec![tacit_protocol::sd_jwt::IssuerKey {
            kid: "k1".into(),
            key: *key.verifying_key(),
        }])
        .unwrap()
    }

    #[test]
    fn pinned_files_are_read_at_start_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let tax = Origin::parse("http://127.0.0.1:8791").unwrap();
        let entry = |file: &str| TrustedIssuer {
            issuer: tax.clone(),
            name: "Tax Office Nordstadt".into(),
            keys_url: None,
            pinned_keys: Some(dir.path().join(file)),
            vouches_for: Some(wallet_core::Attribute::Income),
            vct: Some("https://tacit.example/vct/income".into()),
        };
        std::fs::write(dir.path().join("bare.json"), jwks().to_json()).unwrap();
        let other = IssuerMetadata {
            issuer: "http://127.0.0.1:8792".into(),
            jwks: jwks(),
        };
        std::fs::write(dir.path().join("other.json"), other.to_json()).unwrap();

        let keys = IssuerKeys::from_config(&[entry("bare.json")]).unwrap();
        let trust = keys.trust();
        assert_eq!(trust.issuers.len(), 1);
        assert_eq!(trust.issuers[0].name, "Tax Office Nordstadt");
        assert_eq!(trust.issuers[0].jwks, Some(jwks()));
        let refused = IssuerKeys::from_config(&[entry("other.json")]).unwrap_err();
        assert!(
            refused.to_string().contains("names another issuer"),
            "{refused}"
        );
        assert!(IssuerKeys::from_config(&[entry("missing.json")]).is_err());
        assert!(IssuerKeys::none().trust().issuers.is_empty());
    }
}
