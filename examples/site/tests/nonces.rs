//! The nonce table itself, on SQLite and on a real PostgreSQL: the atomic consume changes a row
//! only while the nonce is open, whatever the caller read before.

#![cfg(not(target_arch = "wasm32"))] // the server and its tests are native
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use tacit_site::NonceState;
use tacit_site::nonce::{NONCE_LIFETIME_MS, NONCE_RETENTION_MS};
use tacit_site::server::Nonces;
use tacit_store::sqlite_url;
use tacit_store::testing::PgCluster;
use wallet_core::Timestamp;

const T0: Timestamp = Timestamp::from_millis(1_800_000_000_000);

async fn the_rules_hold(nonces: &Nonces) {
    let (nonce, record) = nonces.issue(T0).await.unwrap();
    assert_eq!(record.expires_at, T0.plus_millis(NONCE_LIFETIME_MS));
    assert_eq!(nonces.record(&nonce).await.unwrap(), Some(record));
    assert_eq!(nonces.state(&nonce, T0).await.unwrap(), NonceState::Open);
    // The same nonce cannot be issued twice.
    assert!(
        nonces
            .insert(&nonce, T0)
            .await
            .unwrap_err()
            .is_unique_violation()
    );
    // Consumed once; the second consume changes nothing, even without reading first.
    assert!(nonces.consume(&nonce, T0.plus_millis(5)).await.unwrap());
    assert!(!nonces.consume(&nonce, T0.plus_millis(6)).await.unwrap());
    assert_eq!(nonces.state(&nonce, T0).await.unwrap(), NonceState::Used);
    assert_eq!(
        nonces.record(&nonce).await.unwrap().unwrap().used_at,
        Some(T0.plus_millis(5))
    );
    // A lapsed nonce is not consumed.
    let (late, _) = nonces.issue(T0).await.unwrap();
    let expiry = T0.plus_millis(NONCE_LIFETIME_MS);
    assert!(!nonces.consume(&late, expiry).await.unwrap());
    assert_eq!(
        nonces.state(&late, expiry).await.unwrap(),
        NonceState::Lapsed
    );
    assert!(nonces.consume(&late, expiry.plus_millis(-1)).await.unwrap());
    // An unknown nonce is not consumed.
    let stranger = tacit_site::make_nonce([1; 16]);
    assert!(!nonces.consume(&stranger, T0).await.unwrap());
    assert_eq!(
        nonces.state(&stranger, T0).await.unwrap(),
        NonceState::Unknown
    );
    // Rows are forgotten only long after their expiry.
    assert_eq!(
        nonces
            .forget_old(expiry.plus_millis(NONCE_RETENTION_MS))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        nonces
            .forget_old(expiry.plus_millis(NONCE_RETENTION_MS + 1))
            .await
            .unwrap(),
        2
    );
    assert_eq!(nonces.state(&nonce, T0).await.unwrap(), NonceState::Unknown);
}

#[tokio::test]
async fn on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir.path().join("nonces.db"));
    let nonces = Nonces::open(&url).await.unwrap();
    the_rules_hold(&nonces).await;
    // Opening again (a restart) migrates nothing and keeps the rows.
    let (kept, _) = nonces.issue(T0).await.unwrap();
    nonces.db().close().await;
    let again = Nonces::open(&url).await.unwrap();
    assert_eq!(again.state(&kept, T0).await.unwrap(), NonceState::Open);
}

/// A site configured with a short lifetime issues nonces that lapse after it.
#[tokio::test]
async fn a_configured_lifetime_is_the_nonces() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir.path().join("nonces.db"));
    let nonces = Nonces::open(&url).await.unwrap().with_lifetime(4_000);
    let (nonce, record) = nonces.issue(T0).await.unwrap();
    assert_eq!(record.expires_at, T0.plus_millis(4_000));
    assert_eq!(nonces.record(&nonce).await.unwrap(), Some(record));
    let lapsed = T0.plus_millis(4_000);
    assert_eq!(
        nonces.state(&nonce, lapsed).await.unwrap(),
        NonceState::Lapsed
    );
    assert!(!nonces.consume(&nonce, lapsed).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres() {
    let pg = PgCluster::start().unwrap_or_else(|e| panic!("{e}"));
    let url = pg.create_database("nonces").await.unwrap();
    let nonces = Nonces::open(&url).await.unwrap();
    the_rules_hold(&nonces).await;
}
