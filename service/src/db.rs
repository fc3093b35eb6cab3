//! A service's tables on a `tacit-store` database: opened, brought up to date with the service's
//! migration set, and a count of the rows that expire, so the service purges expired ones now and
//! then rather than on every insert.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub use tacit_store::Db;
use tacit_store::{Migration, StoreError};

/// Expired rows are purged once every this many new ones ([`Tables::purge_due`]).
pub const PURGE_EVERY: u64 = 256;

/// An open, migrated database and the count of rows added that will expire. Cheap to clone: the
/// clones share the pool and the count.
#[derive(Debug, Clone)]
pub struct Tables {
    db: Db,
    inserts: Arc<AtomicU64>,
}

impl Tables {
    /// Opens `url` (`sqlite://PATH` or `postgres://…`) and brings the migration set `set` up to
    /// date.
    pub async fn open(url: &str, set: &str, migrations: &[Migration]) -> Result<Self, StoreError> {
        Self::from_db(Db::open(url).await?, set, migrations).await
    }

    /// Brings the migration set `set` of an open database up to date.
    pub async fn from_db(db: Db, set: &str, migrations: &[Migration]) -> Result<Self, StoreError> {
        db.migrate(set, migrations).await?;
        Ok(Self {
            db,
            inserts: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The underlying store.
    pub fn store(&self) -> &Db {
        &self.db
    }

    /// Counts one added row that will expire; `true` once every [`PURGE_EVERY`] of them, when the
    /// caller purges the expired ones.
    pub fn purge_due(&self) -> bool {
        self.inserts.fetch_add(1, Ordering::Relaxed) % PURGE_EVERY == PURGE_EVERY - 1
    }
}

/// `tables_methods!(SET, MIGRATIONS, Error);` inside the `impl` of a service's table type (a
/// struct whose field `tables` is a [`Tables`]): its `open`, `from_db` and `store`, with the
/// migration set `SET` and the errors in the service's `Error`.
#[macro_export]
macro_rules! tables_methods {
    ($set:expr, $migrations:expr, $error:ty) => {
        /// Opens `url` (`sqlite://PATH` or `postgres://…`) and brings the schema up to date.
        pub async fn open(url: &str) -> ::core::result::Result<Self, $error> {
            let tables = $crate::db::Tables::open(url, $set, $migrations).await?;
            Ok(Self { tables })
        }

        /// Migrates an open database and wraps it.
        pub async fn from_db(db: $crate::db::Db) -> ::core::result::Result<Self, $error> {
            let tables = $crate::db::Tables::from_db(db, $set, $migrations).await?;
            Ok(Self { tables })
        }

        /// The underlying store.
        pub fn store(&self) -> &$crate::db::Db {
            self.tables.store()
        }
    };
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const MIGRATIONS: &[Migration] = &[Migration {
        version: 1,
        name: "things",
        sql: "CREATE TABLE things (id TEXT PRIMARY KEY);",
    }];

    #[tokio::test]
    async fn opens_migrates_and_says_when_to_purge() {
        let dir = tempfile::tempdir().unwrap();
        let url = tacit_store::sqlite_url(&dir.path().join("t.db"));
        let tables = Tables::open(&url, "test", MIGRATIONS).await.unwrap();
        tacit_store::sqlx::query("INSERT INTO things (id) VALUES ('a')")
            .execute(tables.store().pool())
            .await
            .unwrap();
        let clone = tables.clone();
        let due: Vec<u64> = (0..2 * PURGE_EVERY).filter(|_| clone.purge_due()).collect();
        assert_eq!(due, [PURGE_EVERY - 1, 2 * PURGE_EVERY - 1]);
        assert!(!tables.purge_due(), "the clones share one count");
        tables.store().close().await;
        let again = Tables::open(&url, "test", MIGRATIONS).await.unwrap();
        let rows = tacit_store::sqlx::query("SELECT id FROM things")
            .fetch_all(again.store().pool())
            .await
            .unwrap();
        assert_eq!(
            rows.len(),
            1,
            "a second open keeps the rows and migrates nothing"
        );
    }
}
