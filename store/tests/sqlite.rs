//! The store on SQLite: a real file in a temp dir.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use sqlx::Row;
use tacit_store::{Backend, Db, StoreError, sqlite_url};

async fn fresh() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&sqlite_url(&dir.path().join("nested/dir/test.db")))
        .await
        .unwrap();
    assert_eq!(db.backend(), Backend::Sqlite);
    (dir, db)
}

#[tokio::test]
async fn migrate_is_idempotent() {
    let (_dir, db) = fresh().await;
    common::migrate_is_idempotent(&db).await;
}

#[tokio::test]
async fn newer_schema_is_refused() {
    let (_dir, db) = fresh().await;
    common::newer_schema_is_refused(&db).await;
}

#[tokio::test]
async fn failed_migration_rolls_back() {
    let (_dir, db) = fresh().await;
    common::failed_migration_rolls_back(&db).await;
}

#[tokio::test]
async fn sql_subset_works() {
    let (_dir, db) = fresh().await;
    common::sql_subset_works(&db).await;
}

#[tokio::test]
async fn file_is_created_with_wal_busy_timeout_and_foreign_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a b/c%d?.db");
    let db = Db::open(&sqlite_url(&path)).await.unwrap();
    assert!(path.exists(), "the file is created at the exact (odd) path");
    let mut conns = Vec::new();
    // Check several pooled connections, not just the first.
    for _ in 0..3 {
        conns.push(db.pool().acquire().await.unwrap());
    }
    for conn in &mut conns {
        let mode: String = sqlx::query("PRAGMA journal_mode")
            .fetch_one(&mut **conn)
            .await
            .unwrap()
            .get(0);
        assert_eq!(mode.to_lowercase(), "wal");
        let timeout: i64 = sqlx::query("PRAGMA busy_timeout")
            .fetch_one(&mut **conn)
            .await
            .unwrap()
            .get(0);
        assert!(timeout >= 5000, "busy_timeout {timeout}");
        let fk: i64 = sqlx::query("PRAGMA foreign_keys")
            .fetch_one(&mut **conn)
            .await
            .unwrap()
            .get(0);
        assert_eq!(fk, 1);
        let sync: i64 = sqlx::query("PRAGMA synchronous")
            .fetch_one(&mut **conn)
            .await
            .unwrap()
            .get(0);
        assert_eq!(sync, 2, "synchronous must stay FULL");
    }
    drop(conns);
    db.close().await;
}

#[tokio::test]
async fn data_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir.path().join("keep.db"));
    let db = Db::open(&url).await.unwrap();
    db.migrate("test", &[common::V1]).await.unwrap();
    sqlx::query("INSERT INTO nonces (nonce, expires_at_ms) VALUES ($1, $2)")
        .bind("kept")
        .bind(9_i64)
        .execute(db.pool())
        .await
        .unwrap();
    db.close().await;
    let db = Db::open(&url).await.unwrap();
    assert!(db.migrate("test", &[common::V1]).await.unwrap().is_empty());
    let n: i64 = sqlx::query("SELECT COUNT(*) FROM nonces WHERE nonce = $1")
        .bind("kept")
        .fetch_one(db.pool())
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
}

/// Four instances (four pools, as four processes would have) start at once on one file, several
/// times over: every version is applied exactly once and none fails with "database is locked".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_migrate_one_file_at_once() {
    for round in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let url = sqlite_url(&dir.path().join("shared.db"));
        // Opened at once too: the first connection of each sets WAL on a file being created.
        let opens: Vec<_> = (0..4)
            .map(|_| {
                let url = url.clone();
                tokio::spawn(async move { Db::open(&url).await })
            })
            .collect();
        let mut dbs = Vec::new();
        for open in opens {
            dbs.push(open.await.unwrap().unwrap());
        }
        let set = [common::V1, common::V2, common::V3];
        let tasks: Vec<_> = dbs
            .iter()
            .cloned()
            .map(|db| tokio::spawn(async move { db.migrate("test", &set).await }))
            .collect();
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.unwrap().unwrap());
        }
        all.sort();
        assert_eq!(
            all,
            vec![1, 2, 3],
            "round {round}: each version applied exactly once"
        );
        assert_eq!(common::tables(&dbs[0]).await.len(), 3);
    }
}

#[tokio::test]
async fn other_urls_are_refused_without_echoing_them() {
    for url in [
        "mysql://root:hunter2@localhost/db",
        "sqlite::memory:",
        "sqlite:///tmp/x.db?mode=ro",
        "file:///tmp/x.db",
        "",
        "hunter2",
    ] {
        let err = Db::open(url).await.unwrap_err();
        assert!(matches!(err, StoreError::UnsupportedUrl), "{url}: {err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains("sqlite://PATH") && msg.contains("postgres://"),
            "{msg}"
        );
        assert!(!msg.contains("hunter2"), "{msg}");
    }
}

#[tokio::test]
async fn connect_errors_do_not_leak_the_password() {
    // Nothing listens on port 1: the connection fails; the message must not carry the URL.
    let err = Db::open("postgres://tacit:hunter2@127.0.0.1:1/db")
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Connect {
                backend: Backend::Postgres,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!err.to_string().contains("hunter2"), "{err}");
}

#[tokio::test]
async fn from_env_or_sqlite_defaults_to_the_file() {
    // DATABASE_URL is not set in this test binary's environment unless the runner sets it;
    // only assert the default when it is absent.
    if std::env::var_os("DATABASE_URL").is_some() {
        panic!("unset DATABASE_URL to run the store's tests");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("default.db");
    let db = Db::from_env_or_sqlite(&path).await.unwrap();
    assert_eq!(db.backend(), Backend::Sqlite);
    assert!(path.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_commit_consumes_each_row_once() {
    let (_dir, db) = fresh().await;
    common::group_commit_consumes_each_row_once(&db).await;
}

/// The durability promise: every pooled connection, the group-commit writer's included, runs
/// with `synchronous = FULL` (2) in WAL mode.
#[tokio::test]
async fn connections_keep_synchronous_full() {
    let (_dir, db) = fresh().await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(db.pool().acquire().await.unwrap());
    }
    for conn in &mut held {
        let sync: i64 = sqlx::query("PRAGMA synchronous")
            .fetch_one(&mut **conn)
            .await
            .unwrap()
            .try_get(0)
            .unwrap();
        assert_eq!(sync, 2, "synchronous must be FULL");
        let mode: String = sqlx::query("PRAGMA journal_mode")
            .fetch_one(&mut **conn)
            .await
            .unwrap()
            .try_get(0)
            .unwrap();
        assert_eq!(mode, "wal");
    }
}
