//! The nonce table: single-use rows in the site's database (SQLite by default, PostgreSQL when
//! `DATABASE_URL` says so), so every instance of a site and every restart sees the same nonces.
//!
//! `nonces(nonce TEXT PRIMARY KEY, issued_at BIGINT, expires_at BIGINT, used_at BIGINT NULL)`,
//! times in Unix milliseconds. A nonce is consumed by one conditional `UPDATE` that changes a
//! row only while it is open ([`crate::nonce`]); the database serialises two racing consumes of
//! one row, so exactly one changes it. One database per site: the table has no origin column.

use tacit_service::db::Tables;
use tacit_store::sqlx::{self, Row};
use tacit_store::{Db, Migration, StoreError};
use wallet_core::{Nonce, Timestamp};

use crate::nonce::{NONCE_LIFETIME_MS, NONCE_RETENTION_MS, NonceRecord, NonceState, make_nonce};

/// The migration set's name in `tacit_migrations`.
pub const MIGRATION_SET: &str = "tacit-site";

/// The site's schema.
pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "nonces",
    sql: "CREATE TABLE nonces (
        nonce TEXT PRIMARY KEY,
        issued_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        used_at BIGINT NULL
    );
    CREATE INDEX nonces_expires_at ON nonces (expires_at);",
}];

const INSERT: &str =
    "INSERT INTO nonces (nonce, issued_at, expires_at, used_at) VALUES ($1, $2, $3, NULL)";
const SELECT: &str = "SELECT issued_at, expires_at, used_at FROM nonces WHERE nonce = $1";
/// Consumes a nonce while it is usable ([`tacit_protocol::single_use`]).
const CONSUME: &str = concat!(
    "UPDATE nonces SET used_at = $1 WHERE nonce = $2 AND ",
    tacit_protocol::usable_at_1!()
);
/// Deletes the rows [`NonceRecord::forgettable`] at `$1` (now), with `$2` = now minus
/// [`NONCE_RETENTION_MS`]: unused rows at their expiry, used rows a week later (both bounds
/// ride the `expires_at` index).
const FORGET: &str =
    "DELETE FROM nonces WHERE expires_at <= $1 AND (used_at IS NULL OR expires_at <= $2)";

/// The nonce table of one site.
#[derive(Debug, Clone)]
pub struct Nonces {
    tables: Tables,
    /// How long a nonce issued here stays open.
    lifetime_ms: i64,
}

impl Nonces {
    /// Opens `url` and brings its schema up to date.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Ok(Self::with(
            Tables::open(url, MIGRATION_SET, MIGRATIONS).await?,
        ))
    }

    /// Uses an open database, bringing its schema up to date.
    pub async fn on(db: Db) -> Result<Self, StoreError> {
        Ok(Self::with(
            Tables::from_db(db, MIGRATION_SET, MIGRATIONS).await?,
        ))
    }

    fn with(tables: Tables) -> Self {
        Self {
            tables,
            lifetime_ms: NONCE_LIFETIME_MS,
        }
    }

    /// The same table, issuing nonces that stay open for `lifetime_ms` (the configuration's
    /// `nonce_lifetime_ms`; [`NONCE_LIFETIME_MS`] unless set).
    pub fn with_lifetime(self, lifetime_ms: i64) -> Self {
        Self {
            lifetime_ms,
            ..self
        }
    }

    /// The database underneath.
    pub fn db(&self) -> &Db {
        self.tables.store()
    }

    /// Issues a fresh nonce at `now` from the operating system's randomness and stores its row.
    pub async fn issue(&self, now: Timestamp) -> Result<(Nonce, NonceRecord), IssueError> {
        for _ in 0..3 {
            let mut random = [0u8; 16];
            getrandom::fill(&mut random).map_err(|_| IssueError::Random)?;
            let nonce = make_nonce(random);
            match self.insert(&nonce, now).await {
                Ok(record) => return Ok((nonce, record)),
                // 128 random bits collided: draw again.
                Err(e) if e.is_unique_violation() => continue,
                Err(e) => return Err(IssueError::Store(e)),
            }
        }
        Err(IssueError::Random)
    }

    /// Stores `nonce` as issued at `now`. A nonce already stored is a unique violation.
    pub async fn insert(&self, nonce: &Nonce, now: Timestamp) -> Result<NonceRecord, StoreError> {
        let record = NonceRecord::issue_for(now, self.lifetime_ms);
        sqlx::query(INSERT)
            .bind(nonce.as_str())
            .bind(record.issued_at.millis())
            .bind(record.expires_at.millis())
            .execute(self.db().pool())
            .await?;
        Ok(record)
    }

    /// The row of `nonce`, if there is one.
    pub async fn record(&self, nonce: &Nonce) -> Result<Option<NonceRecord>, StoreError> {
        let row = sqlx::query(SELECT)
            .bind(nonce.as_str())
            .fetch_optional(self.db().pool())
            .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(NonceRecord {
            issued_at: Timestamp::from_millis(row.try_get::<i64, _>(0)?),
            expires_at: Timestamp::from_millis(row.try_get::<i64, _>(1)?),
            used_at: row
                .try_get::<Option<i64>, _>(2)?
                .map(Timestamp::from_millis),
        }))
    }

    /// Where `nonce` stands at `now`.
    pub async fn state(&self, nonce: &Nonce, now: Timestamp) -> Result<NonceState, StoreError> {
        Ok(NonceState::of(self.record(nonce).await?.as_ref(), now))
    }

    /// Consumes `nonce` at `now` if it is open, atomically: `Ok(true)` if this call changed the
    /// row, `Ok(false)` if it was not open (used, lapsed or unknown) or another consume won.
    ///
    /// The `UPDATE` runs in the database's group commit ([`tacit_store::group`]): with the
    /// other consumes queued, in one transaction, so one `fsync` covers them all; `Ok(true)`
    /// comes only after that commit returned, so a nonce reported consumed stays consumed after
    /// a crash or a power cut (SQLite keeps `synchronous = FULL`).
    pub async fn consume(&self, nonce: &Nonce, now: Timestamp) -> Result<bool, StoreError> {
        self.db()
            .write(Consume {
                nonce: nonce.as_str().to_owned(),
                now: now.millis(),
            })
            .await
    }

    /// Deletes the rows forgettable at `now` ([`NonceRecord::forgettable`]: unused rows at
    /// their expiry, used rows [`NONCE_RETENTION_MS`] past it); returns how many. The server
    /// calls it every [`super::FORGET_INTERVAL`].
    pub async fn forget_old(&self, now: Timestamp) -> Result<u64, StoreError> {
        let cutoff = now.plus_millis(-NONCE_RETENTION_MS);
        let done = sqlx::query(FORGET)
            .bind(now.millis())
            .bind(cutoff.millis())
            .execute(self.db().pool())
            .await?;
        Ok(done.rows_affected())
    }
}

/// One consume, as a group-commit job. Safe to run again after a failed run: the row is then
/// used, the `UPDATE` changes nothing, and the caller refuses.
struct Consume {
    nonce: String,
    now: i64,
}

impl tacit_store::WriteJob for Consume {
    type Output = bool;

    fn run<'c>(
        &'c mut self,
        conn: &'c mut sqlx::AnyConnection,
    ) -> tacit_store::JobFuture<'c, bool> {
        Box::pin(async move {
            let done = sqlx::query(CONSUME)
                .bind(self.now)
                .bind(self.nonce.as_str())
                .execute(&mut *conn)
                .await?;
            Ok(done.rows_affected() == 1)
        })
    }
}

/// Why a nonce could not be issued.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    #[error("the operating system's randomness failed")]
    Random,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use tacit_protocol::single_use::usable;

    use super::*;

    /// Writes one row per `(used_at, expires_at)`, issued at 0, named by its index.
    async fn insert(nonces: &Nonces, rows: &[(Option<i64>, i64)]) {
        for (i, (used_at, expires_at)) in rows.iter().enumerate() {
            sqlx::query(
                "INSERT INTO nonces (nonce, issued_at, expires_at, used_at) VALUES ($1, 0, $2, $3)",
            )
            .bind(format!("{i:032}"))
            .bind(*expires_at)
            .bind(*used_at)
            .execute(nonces.db().pool())
            .await
            .unwrap();
        }
    }

    /// The SQL predicate the consume statement carries selects exactly the rows the pure rule
    /// calls usable, on a real database.
    #[tokio::test]
    async fn the_database_applies_the_single_use_rule() {
        let dir = tempfile::tempdir().unwrap();
        let nonces = Nonces::open(&tacit_store::sqlite_url(&dir.path().join("n.db")))
            .await
            .unwrap();
        let rows: Vec<(Option<i64>, i64)> = [None, Some(0), Some(100), Some(300)]
            .into_iter()
            .flat_map(|used| [0, 99, 100, 101, 200].map(|expires| (used, expires)))
            .collect();
        insert(&nonces, &rows).await;
        for now in [-1, 0, 98, 99, 100, 101, 199, 200, 201] {
            let selected: Vec<String> = sqlx::query(concat!(
                "SELECT nonce FROM nonces WHERE ",
                tacit_protocol::usable_at_1!(),
                " ORDER BY nonce"
            ))
            .bind(now)
            .fetch_all(nonces.db().pool())
            .await
            .unwrap()
            .iter()
            .map(|row| row.try_get::<String, _>(0).unwrap())
            .collect();
            let expected: Vec<String> = rows
                .iter()
                .enumerate()
                .filter(|(_, (used_at, expires_at))| usable(*used_at, *expires_at, now))
                .map(|(i, _)| format!("{i:032}"))
                .collect();
            assert_eq!(selected, expected, "now = {now}");
            assert!(!expected.is_empty() || now >= 200);
        }
    }

    /// The forget statement deletes exactly the rows the pure rule calls forgettable, on a real
    /// database, at and around every boundary.
    #[tokio::test]
    async fn the_database_forgets_what_the_rule_calls_forgettable() {
        let dir = tempfile::tempdir().unwrap();
        let nonces = Nonces::open(&tacit_store::sqlite_url(&dir.path().join("n.db")))
            .await
            .unwrap();
        let r = NONCE_RETENTION_MS;
        let rows: Vec<(Option<i64>, i64)> = [None, Some(0)]
            .into_iter()
            .flat_map(|used| [0, 99, 100, 101, 200].map(|expires| (used, expires)))
            .collect();
        let record = |(used_at, expires_at): (Option<i64>, i64)| NonceRecord {
            issued_at: Timestamp::from_millis(0),
            expires_at: Timestamp::from_millis(expires_at),
            used_at: used_at.map(Timestamp::from_millis),
        };
        for now in [
            -1,
            0,
            99,
            100,
            101,
            200,
            r - 1,
            r,
            r + 99,
            r + 100,
            r + 101,
            r + 200,
        ] {
            sqlx::query("DELETE FROM nonces")
                .execute(nonces.db().pool())
                .await
                .unwrap();
            insert(&nonces, &rows).await;
            let now_at = Timestamp::from_millis(now);
            let expected = rows
                .iter()
                .filter(|row| record(**row).forgettable(now_at))
                .count();
            let forgotten = nonces.forget_old(now_at).await.unwrap();
            assert_eq!(forgotten, u64::try_from(expected).unwrap(), "now = {now}");
            let kept: Vec<String> = sqlx::query("SELECT nonce FROM nonces ORDER BY nonce")
                .fetch_all(nonces.db().pool())
                .await
                .unwrap()
                .iter()
                .map(|row| row.try_get::<String, _>(0).unwrap())
                .collect();
            let expected_kept: Vec<String> = rows
                .iter()
                .enumerate()
                .filter(|(_, row)| !record(**row).forgettable(now_at))
                .map(|(i, _)| format!("{i:032}"))
                .collect();
            assert_eq!(kept, expected_kept, "now = {now}");
        }
    }
}
