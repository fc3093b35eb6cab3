//! The store on a real PostgreSQL: a throw-away cluster started by the test (initdb + pg_ctl).
//! Without PostgreSQL these tests fail with the install command; they never skip.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use tacit_store::testing::PgCluster;
use tacit_store::{Backend, Db, StoreError};

/// One cluster for this test binary; each test gets its own database in it.
fn cluster() -> &'static PgCluster {
    static CLUSTER: OnceLock<PgCluster> = OnceLock::new();
    CLUSTER.get_or_init(|| match PgCluster::start() {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    })
}

async fn fresh_url(name: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let db_name = format!("{name}_{}", N.fetch_add(1, Ordering::Relaxed));
    let url = cluster().create_database(&db_name).await.unwrap();
    assert!(url.starts_with("postgres://postgres@127.0.0.1:"), "{url}");
    assert!(url.ends_with(&format!("/{db_name}")), "{url}");
    url
}

async fn fresh(name: &str) -> Db {
    let db = Db::open(&fresh_url(name).await).await.unwrap();
    assert_eq!(db.backend(), Backend::Postgres);
    db
}

#[tokio::test]
async fn migrate_is_idempotent() {
    common::migrate_is_idempotent(&fresh("idem").await).await;
}

#[tokio::test]
async fn newer_schema_is_refused() {
    common::newer_schema_is_refused(&fresh("newer").await).await;
}

#[tokio::test]
async fn failed_migration_rolls_back() {
    common::failed_migration_rolls_back(&fresh("rollback").await).await;
}

#[tokio::test]
async fn sql_subset_works() {
    common::sql_subset_works(&fresh("subset").await).await;
}

/// Two instances (two pools, as two processes would have) start at once on one database, several
/// times over: every version is applied exactly once and neither instance fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_migrations_apply_each_version_once() {
    for round in 0..5 {
        let url = fresh_url("race").await;
        let first = Db::open(&url).await.unwrap();
        let second = Db::open(&url).await.unwrap();
        let set = [common::V1, common::V2, common::V3];
        let (a, b) = tokio::join!(
            tokio::spawn({
                let db = first.clone();
                async move { db.migrate("test", &set).await }
            }),
            tokio::spawn({
                let db = second.clone();
                async move { db.migrate("test", &set).await }
            }),
        );
        let mut all = a.unwrap().unwrap();
        all.extend(b.unwrap().unwrap());
        all.sort();
        assert_eq!(all, vec![1, 2, 3], "round {round}");
        assert_eq!(common::tables(&first).await.len(), 3);
        first.close().await;
        second.close().await;
    }
}

#[tokio::test]
async fn create_database_refuses_odd_names() {
    for bad in ["", "Upper", "semi;colon", "1digit", "a-b", &"x".repeat(64)] {
        let err = cluster().create_database(bad).await.unwrap_err();
        assert!(matches!(err, StoreError::Cluster(_)), "{bad}: {err:?}");
    }
}

#[test]
fn cluster_stops_and_disappears_on_drop() {
    let cluster = PgCluster::start().unwrap();
    let port = cluster.port();
    let dir = cluster.dir().to_path_buf();
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    assert!(dir.join("data/PG_VERSION").is_file());
    drop(cluster);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the server still listens after drop"
    );
    assert!(!dir.exists(), "the cluster's directory is removed on drop");
}

/// A cluster that is never dropped (a `static`, a `mem::forget`, a killed test) is still stopped
/// and deleted when its process exits. The test runs itself as a child that leaks one.
#[test]
fn leaked_cluster_is_stopped_when_the_process_exits() {
    const CHILD: &str = "TACIT_STORE_LEAK_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let cluster = PgCluster::start().unwrap();
        println!("LEAKED {} {}", cluster.port(), cluster.dir().display());
        std::mem::forget(cluster);
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "leaked_cluster_is_stopped_when_the_process_exits",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("LEAKED "))
        .unwrap_or_else(|| panic!("child printed no cluster: {stdout}"));
    let (port, dir) = line.split_once(' ').unwrap();
    let port: u16 = port.parse().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        || std::path::Path::new(dir).exists()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the leaked cluster on port {port} ({dir}) is still there"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_commit_consumes_each_row_once() {
    common::group_commit_consumes_each_row_once(&fresh("group").await).await;
}
