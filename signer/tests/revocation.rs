//! Revoking an install revokes the receipts it already holds: every receipt signed is recorded
//! (its revocation digest and install, until it expires), `GET /v1/keys` lists the unexpired
//! receipts of revoked installs as `revoked_receipts` (and nothing when none is revoked, so the
//! document is the one older signers wrote), expired records are purged. On SQLite and on
//! PostgreSQL, through the router.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::*;
use signer::REVOCATIONS_CACHE;
use tacit_service::db::PURGE_EVERY;
use wallet_core::{
    Hash, PublishedKeys, ReceiptPayload, SignedReceipt, Timestamp, VerifyError, revocation_digest,
};

const NOW: i64 = T0 + MINUTE;

/// `POST /v1/receipts` of `payload`, signed by `install`: the signed receipt.
async fn sign(app: &TestApp, install: &Install, payload: &ReceiptPayload) -> SignedReceipt {
    let body = serde_json::to_vec(payload).unwrap();
    let request = app.signed_by(install, "/v1/receipts", Some("application/json"), body);
    let (status, _, json) = send(app, request).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    serde_json::from_value(json).unwrap()
}

/// `GET /v1/keys` through `router`: the raw JSON and the document read as a site reads it.
async fn published(router: &axum::Router) -> (serde_json::Value, PublishedKeys) {
    let (status, _, json) = send(
        router,
        Request::get("/v1/keys").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{json}");
    let keys = PublishedKeys::parse(&serde_json::to_vec(&json).unwrap()).unwrap();
    (json, keys)
}

fn digests(receipts: &[&SignedReceipt]) -> Vec<Hash> {
    let mut out: Vec<Hash> = receipts
        .iter()
        .map(|r| revocation_digest(&r.payload))
        .collect();
    out.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    out
}

/// The rate limit off: one test signs a few hundred receipts.
fn unlimited() -> signer::Config {
    let mut config = config();
    config.limit_flags.rate_limit_per_minute = 0;
    config
}

async fn app_on(url: &str) -> TestApp {
    TestApp::on(
        signer::SignerDb::open(url).await.unwrap(),
        &unlimited(),
        NOW,
        None,
    )
    .await
}

/// A second instance on the same database, sharing `first`'s clock (its own key-set cache).
async fn second_instance(url: &str, first: &TestApp) -> axum::Router {
    let db = signer::SignerDb::open(url).await.unwrap();
    signer::app(state_on(db, &unlimited(), &first.clock))
}

/// Two installs get receipts; one is revoked: exactly its unexpired receipts are published, on
/// every instance (one that read the list within the last second may show the old one until
/// then), and a site's rule refuses them while the other install's still verifies.
async fn revoking_an_install_publishes_its_receipts(url: String) {
    let app = app_on(&url).await;
    let other = Install::fixed("other wallet");
    enrol_directly(app.db(), &other, "other wallet", NOW).await;
    let first = sign(&app, &app.install, &payload_at(NOW)).await;
    let second = sign(&app, &app.install, &payload_at(NOW - 1_000)).await;
    let theirs = sign(&app, &other, &payload_at(NOW - 2_000)).await;
    assert_eq!(app.db().receipt_count().await.unwrap(), 3);

    // Nothing revoked: the document is the keys alone, as signers wrote it before.
    let (json, keys) = published(&app).await;
    assert_eq!(
        json.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["keys"]
    );
    assert!(keys.revoked_receipts.is_empty());

    let now = Timestamp::from_millis(NOW);
    assert!(
        app.db()
            .revoke_install(app.install.id().as_str(), now)
            .await
            .unwrap()
    );
    assert_eq!(
        app.db().revoked_receipts(now).await.unwrap().digests(),
        digests(&[&first, &second])
    );
    // Another instance (nothing cached) publishes them at once; this one within a second.
    let (_, elsewhere) = published(&second_instance(&url, &app).await).await;
    tokio::time::sleep(REVOCATIONS_CACHE).await;
    let (json, keys) = published(&app).await;
    assert_eq!(keys, elsewhere);
    assert_eq!(keys.revoked_receipts.digests(), digests(&[&first, &second]));
    assert_eq!(json["revoked_receipts"].as_array().unwrap().len(), 2);
    // The digests say nothing of the install.
    let text = json.to_string();
    assert!(!text.contains(app.install.id().as_str()), "{text}");

    // The rule a site applies.
    let at = Timestamp::from_millis(NOW + MINUTE);
    for revoked in [&first, &second] {
        assert_eq!(
            keys.verify(revoked, &site(), &nonce(), at),
            Err(VerifyError::Revoked)
        );
    }
    keys.verify(&theirs, &site(), &nonce(), at).unwrap();
    // The wallet's reader (a plain KeySet) still reads the document's keys.
    let key_set = wallet_core::KeySet::parse(text.as_bytes()).unwrap();
    assert_eq!(key_set, keys.key_set);
}

/// A receipt recorded after its install was revoked (signed in the moment between the check
/// and the revocation) is published too: the list is read when it is published.
async fn a_receipt_recorded_after_the_revocation_is_published(url: String) {
    let app = app_on(&url).await;
    let now = Timestamp::from_millis(NOW);
    let id = app.install.id();
    assert!(app.db().revoke_install(id.as_str(), now).await.unwrap());
    let late = Hash::digest(b"a receipt signed as the install was revoked");
    app.db()
        .record_receipt(&id, &late, Timestamp::from_millis(NOW + 10 * MINUTE))
        .await
        .unwrap();
    // Recorded twice (one payload signed again): listed once.
    app.db()
        .record_receipt(&id, &late, Timestamp::from_millis(NOW + 10 * MINUTE))
        .await
        .unwrap();
    assert_eq!(
        app.db().revoked_receipts(now).await.unwrap().digests(),
        [late]
    );
}

/// Records live until their receipt expires: an expired receipt is no longer listed (its window
/// refuses it anyway), and the records are purged, directly or every few signed requests.
async fn expired_receipts_are_neither_listed_nor_kept(url: String) {
    let app = app_on(&url).await;
    let receipt = sign(&app, &app.install, &payload_at(NOW)).await;
    let expires = receipt.payload.expires_at.millis();
    let db = app.db();
    assert!(
        db.revoke_install(app.install.id().as_str(), Timestamp::from_millis(NOW))
            .await
            .unwrap()
    );
    let listed = |at: i64| async move {
        db.revoked_receipts(Timestamp::from_millis(at))
            .await
            .unwrap()
            .len()
    };
    assert_eq!(listed(expires - 1).await, 1);
    assert_eq!(listed(expires).await, 0);
    assert_eq!(
        db.purge_receipts(Timestamp::from_millis(expires - 1))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        db.purge_receipts(Timestamp::from_millis(expires))
            .await
            .unwrap(),
        1
    );
    assert_eq!(db.receipt_count().await.unwrap(), 0);

    // The automatic purge: once the records' receipts expire, signed requests purge them.
    let wallet = Install::fixed("busy wallet");
    enrol_directly(db, &wallet, "busy wallet", NOW).await;
    sign(&app, &wallet, &payload_at(NOW)).await;
    assert_eq!(db.receipt_count().await.unwrap(), 1);
    let later = NOW + 11 * MINUTE;
    app.clock.set(later);
    // Within PURGE_EVERY new requests one purges; each payload is its own, so each is recorded.
    for k in 0..PURGE_EVERY {
        sign(&app, &wallet, &payload_at(later - 1 - k as i64)).await;
    }
    // The expired record is gone; the fresh ones stay.
    assert_eq!(db.receipt_count().await.unwrap(), PURGE_EVERY as i64);
    assert_eq!(
        db.purge_receipts(Timestamp::from_millis(later))
            .await
            .unwrap(),
        0
    );
}

tacit_testkit::on_both_backends!(
    worker_threads = 2,
    sqlite_file = "signer.db";
    revoking_an_install_publishes_its_receipts,
    a_receipt_recorded_after_the_revocation_is_published,
    expired_receipts_are_neither_listed_nor_kept,
);

/// When the database cannot say what is revoked, `GET /v1/keys` is an error, never the keys
/// without their revocations (a site keeps its last good set).
#[tokio::test]
async fn keys_are_not_published_without_their_revocations() {
    let app = app_at(NOW).await;
    app.db().store().close().await;
    let (status, _, json) = send(&app, Request::get("/v1/keys").body(Body::empty()).unwrap()).await;
    assert!(status.is_server_error(), "{status} {json}");
    assert!(json.get("keys").is_none(), "{json}");
}
