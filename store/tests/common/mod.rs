//! The suite every backend must pass: open, migrate twice, refuse newer schemas, the SQL subset.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code)]

use sqlx::Row;
use tacit_store::{Db, Migration, StoreError, is_unique_violation};

pub const V1: Migration = Migration {
    version: 1,
    name: "nonces",
    sql: "CREATE TABLE nonces (
        nonce TEXT PRIMARY KEY,
        expires_at_ms BIGINT NOT NULL,
        consumed BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX nonces_expiry ON nonces (expires_at_ms);",
};

pub const V2: Migration = Migration {
    version: 2,
    name: "installs",
    sql: "CREATE TABLE installs (
        install_id TEXT PRIMARY KEY,
        public_key BYTEA NOT NULL,
        nonce TEXT REFERENCES nonces (nonce)
    );",
};

pub const V3: Migration = Migration {
    version: 3,
    name: "revocations",
    sql: "ALTER TABLE installs ADD COLUMN revoked_at_ms BIGINT;",
};

pub async fn tables(db: &Db) -> Vec<(i64, String)> {
    sqlx::query(r#"SELECT version, name FROM tacit_migrations WHERE "set" = $1 ORDER BY version"#)
        .bind("test")
        .fetch_all(db.pool())
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get::<i64, _>(0), r.get::<String, _>(1)))
        .collect()
}

/// Migrating twice applies nothing the second time; a later binary adds its new step only.
pub async fn migrate_is_idempotent(db: &Db) {
    assert_eq!(db.migrate("test", &[V1, V2]).await.unwrap(), vec![1, 2]);
    assert_eq!(
        db.migrate("test", &[V1, V2]).await.unwrap(),
        Vec::<i64>::new()
    );
    assert_eq!(
        tables(db).await,
        vec![(1, "nonces".to_owned()), (2, "installs".to_owned())]
    );
    assert_eq!(db.migrate("test", &[V1, V2, V3]).await.unwrap(), vec![3]);
    // Another set in the same database is independent.
    assert_eq!(
        db.migrate(
            "other",
            &[Migration {
                version: 1,
                name: "t",
                sql: "CREATE TABLE other_t (k TEXT PRIMARY KEY)"
            }]
        )
        .await
        .unwrap(),
        vec![1]
    );
    assert_eq!(tables(db).await.len(), 3);
}

/// An older binary (knowing only v1, v2) refuses a database migrated to v3 by a newer one.
pub async fn newer_schema_is_refused(db: &Db) {
    db.migrate("test", &[V1, V2, V3]).await.unwrap();
    let err = db.migrate("test", &[V1, V2]).await.unwrap_err();
    match &err {
        StoreError::SchemaTooNew { set, found, known } => {
            assert_eq!((set.as_str(), *found, *known), ("test", 3, 2));
        }
        other => panic!("expected SchemaTooNew, got {other:?}"),
    }
    assert!(
        err.to_string().contains("newer than this binary knows"),
        "{err}"
    );
    // A binary whose v2 is a different migration is refused too.
    let renamed = Migration {
        name: "something-else",
        ..V2
    };
    assert!(matches!(
        db.migrate("test", &[V1, renamed, V3]).await.unwrap_err(),
        StoreError::SchemaMismatch { version: 2, .. }
    ));
    // Nothing was changed by the refusals.
    assert_eq!(tables(db).await.len(), 3);
}

/// A migration whose SQL fails leaves no trace: neither its tables nor its record.
pub async fn failed_migration_rolls_back(db: &Db) {
    let broken = Migration {
        version: 2,
        name: "broken",
        sql: "CREATE TABLE half_done (k TEXT PRIMARY KEY); THIS IS NOT SQL;",
    };
    let err = db.migrate("test", &[V1, broken]).await.unwrap_err();
    assert!(
        matches!(err, StoreError::Migrate { version: 2, .. }),
        "{err:?}"
    );
    assert_eq!(tables(db).await, vec![(1, "nonces".to_owned())]);
    // half_done does not exist: creating it succeeds.
    sqlx::query("CREATE TABLE half_done (k TEXT PRIMARY KEY)")
        .execute(db.pool())
        .await
        .unwrap();
}

/// The documented subset: `$N` placeholders (out of order, repeated), BIGINT, TEXT, BYTEA,
/// ON CONFLICT DO NOTHING, RETURNING, unique violations recognised, foreign keys enforced.
pub async fn sql_subset_works(db: &Db) {
    db.migrate("test", &[V1, V2]).await.unwrap();
    let row = sqlx::query("SELECT $2 AS b, $1 AS a, $2 || $2 AS bb")
        .bind("first")
        .bind("second")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(row.get::<String, _>("b"), "second");
    assert_eq!(row.get::<String, _>("a"), "first");
    assert_eq!(row.get::<String, _>("bb"), "secondsecond");

    let insert = "INSERT INTO nonces (nonce, expires_at_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING";
    let big = i64::MAX - 7;
    let r = sqlx::query(insert)
        .bind("n1")
        .bind(big)
        .execute(db.pool())
        .await
        .unwrap();
    assert_eq!(r.rows_affected(), 1);
    let r = sqlx::query(insert)
        .bind("n1")
        .bind(5_i64)
        .execute(db.pool())
        .await
        .unwrap();
    assert_eq!(r.rows_affected(), 0, "ON CONFLICT DO NOTHING");
    let got: i64 = sqlx::query("SELECT expires_at_ms FROM nonces WHERE nonce = $1")
        .bind("n1")
        .fetch_one(db.pool())
        .await
        .unwrap()
        .get(0);
    assert_eq!(got, big);

    // Single-use consume: the first UPDATE … RETURNING gets the row, the second gets nothing.
    let consume = "UPDATE nonces SET consumed = 1 WHERE nonce = $1 AND consumed = 0 AND expires_at_ms > $2 RETURNING nonce";
    let first = sqlx::query(consume)
        .bind("n1")
        .bind(1000_i64)
        .fetch_optional(db.pool())
        .await
        .unwrap();
    assert_eq!(first.map(|r| r.get::<String, _>(0)), Some("n1".to_owned()));
    let again = sqlx::query(consume)
        .bind("n1")
        .bind(1000_i64)
        .fetch_optional(db.pool())
        .await
        .unwrap();
    assert!(again.is_none());

    let err = sqlx::query("INSERT INTO nonces (nonce, expires_at_ms) VALUES ($1, $2)")
        .bind("n1")
        .bind(1_i64)
        .execute(db.pool())
        .await
        .unwrap_err();
    assert!(is_unique_violation(&err), "{err:?}");
    assert!(StoreError::from(err).is_unique_violation());

    let key: Vec<u8> = (0..=255).collect();
    sqlx::query("INSERT INTO installs (install_id, public_key, nonce) VALUES ($1, $2, $3)")
        .bind("i1")
        .bind(&key[..])
        .bind("n1")
        .execute(db.pool())
        .await
        .unwrap();
    let back: Vec<u8> = sqlx::query("SELECT public_key FROM installs WHERE install_id = $1")
        .bind("i1")
        .fetch_one(db.pool())
        .await
        .unwrap()
        .get(0);
    assert_eq!(back, key);

    let fk =
        sqlx::query("INSERT INTO installs (install_id, public_key, nonce) VALUES ($1, $2, $3)")
            .bind("i2")
            .bind(&key[..])
            .bind("no-such-nonce")
            .execute(db.pool())
            .await;
    assert!(fk.is_err(), "foreign keys must be enforced");

    // begin_write: a read-then-write that commits atomically.
    let mut tx = db.begin_write().await.unwrap();
    let n: i64 = sqlx::query("SELECT COUNT(*) FROM nonces")
        .fetch_one(&mut *tx)
        .await
        .unwrap()
        .get(0);
    sqlx::query("INSERT INTO nonces (nonce, expires_at_ms) VALUES ($1, $2)")
        .bind(format!("n{}", n + 1))
        .bind(1_i64)
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let n2: i64 = sqlx::query("SELECT COUNT(*) FROM nonces")
        .fetch_one(db.pool())
        .await
        .unwrap()
        .get(0);
    assert_eq!(n2, n + 1);
}

/// Consumes `nonce` (the V1 table's `consumed` flag) in the group commit.
struct Consume(String);

impl tacit_store::WriteJob for Consume {
    type Output = bool;

    fn run<'c>(
        &'c mut self,
        conn: &'c mut sqlx::AnyConnection,
    ) -> tacit_store::JobFuture<'c, bool> {
        Box::pin(async move {
            let done =
                sqlx::query("UPDATE nonces SET consumed = 1 WHERE nonce = $1 AND consumed = 0")
                    .bind(self.0.as_str())
                    .execute(&mut *conn)
                    .await?;
            Ok(done.rows_affected() == 1)
        })
    }
}

/// Inserts a nonce that is already there: a job that always fails.
struct Duplicate(String);

impl tacit_store::WriteJob for Duplicate {
    type Output = ();

    fn run<'c>(&'c mut self, conn: &'c mut sqlx::AnyConnection) -> tacit_store::JobFuture<'c, ()> {
        Box::pin(async move {
            sqlx::query("INSERT INTO nonces (nonce, expires_at_ms) VALUES ($1, 0)")
                .bind(self.0.as_str())
                .execute(&mut *conn)
                .await?;
            Ok(())
        })
    }
}

/// Group commit: 100 nonces each consumed by 4 concurrent jobs (so several consumes of one row
/// share a batch) with failing jobs mixed in. Each nonce is consumed exactly once, every failing
/// job's caller gets its error and no other caller does, and what was reported consumed is in
/// the table as read through another connection.
pub async fn group_commit_consumes_each_row_once(db: &Db) {
    db.migrate("group", &[V1]).await.unwrap();
    for i in 0..100 {
        sqlx::query("INSERT INTO nonces (nonce, expires_at_ms) VALUES ($1, 0)")
            .bind(format!("n{i}"))
            .execute(db.pool())
            .await
            .unwrap();
    }
    let mut consumes = Vec::new();
    let mut failing = Vec::new();
    for round in 0..4 {
        for i in 0..100 {
            let one = db.clone();
            consumes.push((
                i,
                tokio::spawn(async move { one.write(Consume(format!("n{i}"))).await }),
            ));
            if i % 25 == round {
                let db = db.clone();
                failing.push(tokio::spawn(async move {
                    db.write(Duplicate(format!("n{i}"))).await
                }));
            }
        }
    }
    let mut won = [0u32; 100];
    for (i, handle) in consumes {
        if handle.await.unwrap().unwrap() {
            won[i] += 1;
        }
    }
    assert!(won.iter().all(|&n| n == 1), "{won:?}");
    for handle in failing {
        let error = handle.await.unwrap().unwrap_err();
        assert!(error.is_unique_violation(), "{error:?}");
    }
    let consumed: i64 = sqlx::query("SELECT COUNT(*) FROM nonces WHERE consumed = 1")
        .fetch_one(db.pool())
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(consumed, 100);
    assert!(
        !db.write(Consume("n7".to_owned())).await.unwrap(),
        "a spent row stays spent"
    );
    assert!(!db.write(Consume("unknown".to_owned())).await.unwrap());
}
