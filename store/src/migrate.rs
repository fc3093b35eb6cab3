//! Versioned migrations, one named set per service, applied at start.

use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::Row;

use crate::{Backend, Db, StoreError};

/// One schema step. Versions start at 1 and increase; a released migration never changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Migration {
    /// Its place in the set (1, 2, …).
    pub version: i64,
    /// A short name, recorded with it and checked on later starts.
    pub name: &'static str,
    /// The SQL (one or more statements) in the subset both backends run (see the crate docs).
    pub sql: &'static str,
}

/// The key of the PostgreSQL advisory lock that serialises migrations ("tacitmig").
const ADVISORY_LOCK_KEY: i64 = 0x7461_6369_746d_6967;

/// How often a migration is retried after losing a race to another instance.
const RACE_RETRIES: usize = 5;

const CREATE_TABLE: &str = r#"CREATE TABLE IF NOT EXISTS tacit_migrations (
    "set" TEXT NOT NULL,
    version BIGINT NOT NULL,
    name TEXT NOT NULL,
    applied_at BIGINT NOT NULL,
    PRIMARY KEY ("set", version)
)"#;

fn check_set(set: &str, migrations: &[Migration]) -> Result<(), StoreError> {
    let invalid = |reason| StoreError::InvalidMigrations {
        set: set.to_owned(),
        reason,
    };
    if set.is_empty()
        || set.len() > 64
        || !set
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    {
        return Err(invalid(
            "the set name must be 1-64 characters of a-z, 0-9, '_' or '-'",
        ));
    }
    let mut previous = 0;
    for m in migrations {
        if m.version <= previous {
            return Err(invalid("versions must start at 1 and strictly increase"));
        }
        if m.name.trim().is_empty() || m.sql.trim().is_empty() {
            return Err(invalid("every migration needs a name and SQL"));
        }
        previous = m.version;
    }
    Ok(())
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// What one transaction did.
enum Step {
    Applied(i64),
    UpToDate,
}

impl Db {
    /// Brings migration set `set` up to date: applies, in version order and each in its own
    /// transaction, every migration in `migrations` the database has not recorded in
    /// `tacit_migrations`. Returns the versions it applied (empty when already up to date).
    ///
    /// Safe to call from several instances at once: on PostgreSQL each step holds a transaction
    /// advisory lock; on SQLite it holds the write lock (`BEGIN IMMEDIATE`); a step that still
    /// loses a race (a duplicate key) is retried. Refuses ([`StoreError::SchemaTooNew`]) a
    /// database with a version newer than `migrations` knows, and
    /// ([`StoreError::SchemaMismatch`]) one whose recorded name for a version differs.
    pub async fn migrate(
        &self,
        set: &str,
        migrations: &[Migration],
    ) -> Result<Vec<i64>, StoreError> {
        check_set(set, migrations)?;
        let mut applied = Vec::new();
        let mut races = 0;
        loop {
            match self.migrate_step(set, migrations).await {
                Ok(Step::Applied(version)) => applied.push(version),
                Ok(Step::UpToDate) => return Ok(applied),
                Err(e) if e.is_unique_violation() && races < RACE_RETRIES => races += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// One transaction: lock, read what is applied, apply the first missing migration.
    async fn migrate_step(&self, set: &str, migrations: &[Migration]) -> Result<Step, StoreError> {
        let failed = |version: i64| {
            move |source| StoreError::Migrate {
                set: set.to_owned(),
                version,
                source,
            }
        };
        let mut tx = match self.backend() {
            Backend::Sqlite => self.pool().begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool().begin().await,
        }
        .map_err(failed(0))?;
        if self.backend() == Backend::Postgres {
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(ADVISORY_LOCK_KEY)
                .execute(&mut *tx)
                .await
                .map_err(failed(0))?;
        }
        sqlx::query(CREATE_TABLE)
            .execute(&mut *tx)
            .await
            .map_err(failed(0))?;
        let rows = sqlx::query(r#"SELECT version, name FROM tacit_migrations WHERE "set" = $1"#)
            .bind(set)
            .fetch_all(&mut *tx)
            .await
            .map_err(failed(0))?;
        let mut recorded = Vec::with_capacity(rows.len());
        for row in &rows {
            let version: i64 = row.try_get(0).map_err(failed(0))?;
            let name: String = row.try_get(1).map_err(failed(0))?;
            recorded.push((version, name));
        }
        let known = migrations.last().map_or(0, |m| m.version);
        if let Some(found) = recorded
            .iter()
            .map(|(v, _)| *v)
            .max()
            .filter(|&v| v > known)
        {
            return Err(StoreError::SchemaTooNew {
                set: set.to_owned(),
                found,
                known,
            });
        }
        for (version, name) in &recorded {
            let ours = migrations.iter().find(|m| m.version == *version);
            if ours.is_none_or(|m| m.name != name) {
                return Err(StoreError::SchemaMismatch {
                    set: set.to_owned(),
                    version: *version,
                });
            }
        }
        let Some(next) = migrations
            .iter()
            .find(|m| !recorded.iter().any(|(v, _)| *v == m.version))
        else {
            tx.commit().await.map_err(failed(0))?;
            return Ok(Step::UpToDate);
        };
        sqlx::raw_sql(next.sql)
            .execute(&mut *tx)
            .await
            .map_err(failed(next.version))?;
        sqlx::query(
            r#"INSERT INTO tacit_migrations ("set", version, name, applied_at) VALUES ($1, $2, $3, $4)"#,
        )
        .bind(set)
        .bind(next.version)
        .bind(next.name)
        .bind(now_ms())
        .execute(&mut *tx)
        .await
        .map_err(failed(next.version))?;
        tx.commit().await.map_err(failed(next.version))?;
        Ok(Step::Applied(next.version))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn m(version: i64) -> Migration {
        Migration {
            version,
            name: "x",
            sql: "SELECT 1",
        }
    }

    #[test]
    fn malformed_sets_are_refused() {
        assert!(check_set("signer", &[m(1), m(2), m(5)]).is_ok());
        assert!(check_set("signer", &[]).is_ok());
        for (set, ms) in [
            ("", vec![m(1)]),
            ("Signer", vec![m(1)]),
            ("a b", vec![m(1)]),
            ("signer", vec![m(0)]),
            ("signer", vec![m(2), m(1)]),
            ("signer", vec![m(1), m(1)]),
            ("signer", vec![m(-3)]),
        ] {
            assert!(
                matches!(
                    check_set(set, &ms),
                    Err(StoreError::InvalidMigrations { .. })
                ),
                "{set:?} {ms:?}"
            );
        }
        let unnamed = Migration {
            version: 1,
            name: " ",
            sql: "SELECT 1",
        };
        assert!(check_set("s", &[unnamed]).is_err());
    }
}
