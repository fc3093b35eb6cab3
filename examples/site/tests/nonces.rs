//! The nonce table itself, on SQLite and on a real PostgreSQL: the atomic consume changes a row
//! only while the nonce is open, whatever the caller read before; unused rows go at their
//! expiry, used ones a week later.

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
    // An unused nonce is forgotten at its expiry, not before; forgotten, it is unknown and
    // still cannot be consumed, even by a clock set back.
    let (unused, _) = nonces.issue(T0).await.unwrap();
    assert_eq!(nonces.forget_old(expiry.plus_millis(-1)).await.unwrap(), 0);
    assert_eq!(nonces.forget_old(expiry).await.unwrap(), 1);
    assert_eq!(
        nonces.state(&unused, expiry).await.unwrap(),
        NonceState::Unknown
    );
    assert!(!nonces.consume(&unused, expiry).await.unwrap());
    assert!(!nonces.consume(&unused, T0).await.unwrap());
    // Used rows are kept a week past their expiry, so a replay still reads as one.
    assert_eq!(
        nonces.state(&nonce, expiry).await.unwrap(),
        NonceState::Used
    );
    assert_eq!(
        nonces
            .forget_old(expiry.plus_millis(NONCE_RETENTION_MS - 1))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        nonces
            .state(&nonce, expiry.plus_millis(NONCE_RETENTION_MS - 1))
            .await
            .unwrap(),
        NonceState::Used
    );
    assert_eq!(
        nonces
            .forget_old(expiry.plus_millis(NONCE_RETENTION_MS))
            .await
            .unwrap(),
        2
    );
    assert_eq!(nonces.state(&nonce, T0).await.unwrap(), NonceState::Unknown);
    assert!(!nonces.consume(&nonce, T0).await.unwrap());
}

/// A flood of requirements calls (issue 28, item 11): a thousand nonces issued and never used
/// leave no row behind once they lapse, while the one used among them is kept.
async fn a_flood_leaves_no_rows(nonces: &Nonces) {
    let mut issued = Vec::new();
    for i in 0..1_000 {
        issued.push(nonces.issue(T0.plus_millis(i)).await.unwrap().0);
    }
    assert!(
        nonces
            .consume(&issued[500], T0.plus_millis(2_000))
            .await
            .unwrap()
    );
    assert_eq!(rows(nonces).await, 1_000);
    // Each goes at its own expiry.
    let first_expiry = T0.plus_millis(NONCE_LIFETIME_MS);
    assert_eq!(nonces.forget_old(first_expiry).await.unwrap(), 1);
    assert_eq!(
        nonces
            .forget_old(first_expiry.plus_millis(999))
            .await
            .unwrap(),
        998
    );
    assert_eq!(rows(nonces).await, 1);
    assert_eq!(
        nonces
            .state(&issued[500], first_expiry.plus_millis(999))
            .await
            .unwrap(),
        NonceState::Used
    );
    assert_eq!(
        nonces.state(&issued[0], first_expiry).await.unwrap(),
        NonceState::Unknown
    );
}

async fn rows(nonces: &Nonces) -> i64 {
    use tacit_store::sqlx::{self, Row as _};
    sqlx::query("SELECT COUNT(*) FROM nonces")
        .fetch_one(nonces.db().pool())
        .await
        .unwrap()
        .try_get::<i64, _>(0)
        .unwrap()
}

#[tokio::test]
async fn a_flood_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let nonces = Nonces::open(&sqlite_url(&dir.path().join("nonces.db")))
        .await
        .unwrap();
    a_flood_leaves_no_rows(&nonces).await;
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
    let url = pg.create_database("flood").await.unwrap();
    a_flood_leaves_no_rows(&Nonces::open(&url).await.unwrap()).await;
}
