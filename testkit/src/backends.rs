//! The one way the services' tests run a scenario on both database backends: on a SQLite file
//! in a fresh temporary directory, and on a real PostgreSQL (`tacit_store::testing::PgCluster`,
//! one fresh database per scenario).
//!
//! A macro, expanded in the calling test crate: its paths (`tokio`, `tempfile`, `tacit_store`
//! with the `testing` feature) are the caller's dependencies, not this crate's.

/// For each `async fn name(url: String)` of the calling module: a test `sqlite::name` that runs
/// it on `sqlite_url(<tempdir>/<file>)`, and one test `postgres_runs_every_scenario` that runs
/// them all in order on a real PostgreSQL, each on a fresh database named after it. Both run on
/// a multi-threaded runtime with `worker_threads` threads.
///
/// ```text
/// tacit_testkit::on_both_backends!(worker_threads = 2, sqlite_file = "signer.db"; enrol_then_sign);
/// ```
#[macro_export]
macro_rules! on_both_backends {
    (worker_threads = $threads:literal, sqlite_file = $file:literal; $($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = $threads)]
                async fn $name() {
                    let dir = tempfile::tempdir().unwrap();
                    let url = tacit_store::sqlite_url(&dir.path().join($file));
                    super::$name(url).await;
                }
            )*
        }

        /// The same scenarios on a real PostgreSQL, one fresh database each.
        #[tokio::test(flavor = "multi_thread", worker_threads = $threads)]
        async fn postgres_runs_every_scenario() {
            let cluster = tokio::task::spawn_blocking(tacit_store::testing::PgCluster::start)
                .await
                .unwrap()
                .unwrap_or_else(|e| panic!("{e}"));
            $(
                let url = cluster.create_database(stringify!($name)).await.unwrap();
                $name(url).await;
            )*
            drop(cluster);
        }
    };
}
