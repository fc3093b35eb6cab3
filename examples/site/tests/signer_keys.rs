//! Signer keys fetched from the configured URL: fetched at start, fetched again once when a
//! receipt names a key the cached set lacks (a rotation), never more than once per interval for
//! made-up key ids, and a signer that cannot be reached is `signer_unreachable` (503), not a
//! verdict.

#![cfg(not(target_arch = "wasm32"))] // the server and its tests are native
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use axum::routing::get;
use common::*;
use tacit_site::server::{ManualClock, Nonces, SignerKeys, SiteParts, SiteState};
use tacit_store::sqlite_url;
use wallet_core::{KeySet, KeyStatus, PublicKeyEntry};

/// A stand-in signer's `GET /v1/keys`, counting fetches.
struct KeysServer {
    keys: Arc<Mutex<KeySet>>,
    fetches: Arc<AtomicUsize>,
    url: String,
    _task: tokio::task::JoinHandle<()>,
}

impl KeysServer {
    async fn start(keys: KeySet) -> Self {
        let keys = Arc::new(Mutex::new(keys));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (k, n) = (keys.clone(), fetches.clone());
        let app = axum::Router::new().route(
            "/v1/keys",
            get(move || {
                let (k, n) = (k.clone(), n.clone());
                async move {
                    n.fetch_add(1, Ordering::SeqCst);
                    axum::Json(k.lock().unwrap().clone())
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/keys", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            keys,
            fetches,
            url,
            _task: task,
        }
    }

    fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

async fn site(url: &str, root: &std::path::Path) -> (SiteState, axum::Router) {
    let signer = SignerKeys::from_url(url);
    let _ = signer.refresh().await;
    let state = SiteState::new(SiteParts {
        policy: housing_config().policy,
        origin: housing_origin(),
        site_key: site_key(),
        nonces: Nonces::open(&sqlite_url(&root.join("nonces.db")))
            .await
            .unwrap(),
        signer,
        issuers: tacit_site::server::IssuerKeys::none(),
        static_dir: static_dir(root),
        clock: Box::new(Arc::new(ManualClock::new(NOW))),
    })
    .unwrap();
    let router = router(&state);
    (state, router)
}

async fn submit_signed_by(
    router: &axum::Router,
    key: &ed25519_dalek::SigningKey,
) -> (StatusCode, serde_json::Value) {
    let req = requirements(router).await;
    let receipt = receipt(
        &housing_origin(),
        &nonce_of(&req),
        &all_satisfied(),
        NOW,
        key,
    );
    let (status, body, _) = post(router, "/api/applications", &submission(&receipt)).await;
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_key_ids_fetch_nothing_within_the_interval() {
    let old = signer_key();
    let signer = KeysServer::start(key_set(&[&old], NOW)).await;
    let dir = tempfile::tempdir().unwrap();
    let (_state, router) = site(&signer.url, dir.path()).await;
    assert_eq!(signer.fetches(), 1, "fetched at start");

    let (status, body) = submit_signed_by(&router, &old).await;
    assert_eq!(
        (status, body["ok"].clone()),
        (StatusCode::OK, true.into()),
        "{body}"
    );
    assert_eq!(signer.fetches(), 1, "a known key needs no fetch");

    // The signer rotates: the old key is retired (still published), a new one signs.
    let new = ed25519_dalek::SigningKey::from_bytes(&[2; 32]);
    *signer.keys.lock().unwrap() = KeySet {
        keys: vec![
            PublicKeyEntry::new(
                &new.verifying_key(),
                NOW.plus_millis(-HOUR),
                None,
                KeyStatus::Active,
            ),
            PublicKeyEntry::new(
                &old.verifying_key(),
                NOW.plus_millis(-24 * HOUR),
                Some(NOW.plus_millis(-HOUR)),
                KeyStatus::Retired,
            ),
        ],
    };
    // The fetch at start was under ten seconds ago: a made-up key id fetches nothing.
    let (_, body) = submit_signed_by(&router, &attacker_key()).await;
    assert_eq!(code(&body), "unknown_key");
    assert_eq!(signer.fetches(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_key_fetches_the_set_again_once() {
    let old = signer_key();
    let signer = KeysServer::start(key_set(&[&old], NOW)).await;
    let dir = tempfile::tempdir().unwrap();
    let (state, router) = site(&signer.url, dir.path()).await;
    let new = ed25519_dalek::SigningKey::from_bytes(&[2; 32]);
    *signer.keys.lock().unwrap() = key_set(&[&new, &old], NOW);
    // Let the start fetch age past the refetch interval.
    tokio::time::sleep(tacit_site::server::signer_keys::MIN_REFETCH_INTERVAL).await;
    let (_, body) = submit_signed_by(&router, &new).await;
    assert_eq!(body["ok"], true, "{body}");
    assert_eq!(signer.fetches(), 2);
    assert_eq!(state.signer().current().unwrap().key_set.keys.len(), 2);
    // Made-up ids right after: no further fetch.
    for _ in 0..5 {
        let (_, body) = submit_signed_by(&router, &attacker_key()).await;
        assert_eq!(code(&body), "unknown_key");
    }
    assert_eq!(signer.fetches(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_signer_decides_nothing() {
    // A port nobody listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/keys", listener.local_addr().unwrap());
    drop(listener);
    let dir = tempfile::tempdir().unwrap();
    let (state, router) = site(&url, dir.path()).await;
    assert!(state.signer().current().is_none());
    let req = requirements(&router).await;
    let nonce = nonce_of(&req);
    let receipt = receipt(
        &housing_origin(),
        &nonce,
        &all_satisfied(),
        NOW,
        &signer_key(),
    );
    let (status, body, _) = post(&router, "/api/applications", &submission(&receipt)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(code(&body), "signer_unreachable");
    assert_eq!(
        state.nonces().state(&nonce, NOW).await.unwrap(),
        tacit_site::NonceState::Open
    );
}
