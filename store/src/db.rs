//! Opening a database from a URL: SQLite (a file) or PostgreSQL.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};
use sqlx::{Any, AnyPool, ConnectOptions, Connection, Transaction};

use crate::StoreError;
use crate::group::{WriteJob, Writer};

/// How long a SQLite connection waits for another writer before giving up.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long opening waits for a database (and a query for a free pooled connection).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Which database a [`Db`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// An embedded SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Sqlite => "SQLite",
            Self::Postgres => "PostgreSQL",
        })
    }
}

/// A pool of connections to one database. Cheap to clone (clones share the pool).
#[derive(Clone, Debug)]
pub struct Db {
    pool: AnyPool,
    backend: Backend,
    writer: Writer,
}

/// The `sqlite://` URL for a database file; relative paths are made absolute first.
///
/// Characters outside `A-Za-z0-9-._~/` are percent-encoded, so any UTF-8 path round-trips
/// through [`Db::open`].
pub fn sqlite_url(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let text = absolute.to_string_lossy();
    let mut url = String::with_capacity(text.len() + 9);
    url.push_str("sqlite://");
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            url.push(char::from(byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

/// Whether `error` is SQLite's "database is busy/locked" (any extended code of 5 or 6).
fn is_sqlite_busy(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .and_then(|e| e.code())
        .and_then(|code| code.parse::<i32>().ok())
        .is_some_and(|code| matches!(code & 0xff, 5 | 6))
}

/// The file path in a `sqlite://PATH` URL (percent-decoded), or `None` if it is not one.
fn sqlite_path(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite://")?;
    if rest.is_empty() || rest.contains(['?', '#']) || rest.starts_with(':') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(decoded).ok().map(PathBuf::from)
}

impl Db {
    /// Opens `sqlite://PATH` (created if missing, with its directory; WAL; busy timeout; foreign
    /// keys on) or `postgres://…` / `postgresql://…`. Anything else is
    /// [`StoreError::UnsupportedUrl`].
    pub async fn open(url: &str) -> Result<Db, StoreError> {
        install_default_drivers();
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = AnyPoolOptions::new()
                .acquire_timeout(CONNECT_TIMEOUT)
                .connect(url)
                .await
                .map_err(|source| StoreError::Connect {
                    backend: Backend::Postgres,
                    source,
                })?;
            return Ok(Db::with(pool, Backend::Postgres));
        }
        let path = sqlite_path(url).ok_or(StoreError::UnsupportedUrl)?;
        Self::open_sqlite(&path).await
    }

    /// `DATABASE_URL` when it is set (and not empty), else the SQLite file `default_path`.
    pub async fn from_env_or_sqlite(default_path: &Path) -> Result<Db, StoreError> {
        match std::env::var("DATABASE_URL") {
            Ok(url) if !url.trim().is_empty() => Self::open(url.trim()).await,
            _ => Self::open(&sqlite_url(default_path)).await,
        }
    }

    async fn open_sqlite(path: &Path) -> Result<Db, StoreError> {
        let connect_error = |source| StoreError::Connect {
            backend: Backend::Sqlite,
            source,
        };
        let path = std::path::absolute(path).map_err(|e| connect_error(sqlx::Error::Io(e)))?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| connect_error(sqlx::Error::Io(e)))?;
        }
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true)
            .foreign_keys(true)
            .busy_timeout(SQLITE_BUSY_TIMEOUT);
        // WAL is a property of the file: set it once, on one connection, before the pool opens.
        // Switching needs an exclusive lock that the busy timeout does not wait for, so when
        // other processes open the same new file at the same moment, retry for a while.
        let started = std::time::Instant::now();
        loop {
            match options
                .clone()
                .journal_mode(SqliteJournalMode::Wal)
                .connect()
                .await
            {
                Ok(first) => {
                    first.close().await.map_err(connect_error)?;
                    break;
                }
                Err(e) if is_sqlite_busy(&e) && started.elapsed() < SQLITE_BUSY_TIMEOUT => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => return Err(connect_error(e)),
            }
        }
        // The Any driver takes a URL; it carries the file and mode, and the SQLite driver's
        // defaults (foreign keys on, five-second busy timeout) apply. The pragmas below make the
        // busy timeout ours and keep the guarantees explicit on every pooled connection.
        // `synchronous` stays FULL: a consumed nonce must not come back after a power cut.
        let url = options.to_url_lossy();
        let pool = AnyPoolOptions::new()
            .acquire_timeout(CONNECT_TIMEOUT)
            .after_connect(|conn, _meta| {
                Box::pin(async move {
                    sqlx::raw_sql("PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;")
                        .execute(conn)
                        .await
                        .map(|_| ())
                })
            })
            .connect(url.as_str())
            .await
            .map_err(connect_error)?;
        Ok(Db::with(pool, Backend::Sqlite))
    }

    /// Wraps an open pool and starts its writer tasks ([`crate::group`]).
    fn with(pool: AnyPool, backend: Backend) -> Db {
        let writer = Writer::start(pool.clone(), backend);
        Db {
            pool,
            backend,
            writer,
        }
    }

    /// Runs `job` in the next group commit ([`crate::group`]): with the other jobs queued, in
    /// one write transaction; answered once that transaction committed (or, when the batch
    /// failed, once the job ran alone). For the small conditional writes on a request's path
    /// (consume a nonce, record a replay token): one `fsync` per batch instead of per request,
    /// with the same durability.
    pub async fn write<J: WriteJob>(&self, job: J) -> Result<J::Output, StoreError> {
        self.writer.write(job).await
    }

    /// The connection pool, for `sqlx::query(…).execute(db.pool())` and friends.
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Begins a transaction that is going to write: on SQLite `BEGIN IMMEDIATE`, so the write lock
    /// is taken up front (waiting up to the busy timeout) instead of failing at the first write
    /// when another connection got there first; on PostgreSQL a plain `BEGIN`.
    pub async fn begin_write(&self) -> Result<Transaction<'static, Any>, StoreError> {
        let tx = match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin().await?,
        };
        Ok(tx)
    }

    /// Closes every connection; waits for those in use to be returned.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_round_trip_odd_paths() {
        for p in ["/tmp/a.db", "/tmp/with space/α%?#.db", "/tmp/x:y/z.db"] {
            let url = sqlite_url(Path::new(p));
            assert!(url.starts_with("sqlite:///"), "{url}");
            assert_eq!(sqlite_path(&url), Some(PathBuf::from(p)), "{url}");
        }
    }

    #[test]
    fn relative_paths_become_absolute() {
        let url = sqlite_url(Path::new("data/site.db"));
        assert!(url.starts_with("sqlite:///"), "{url}");
        assert!(url.ends_with("/data/site.db"), "{url}");
    }

    #[test]
    fn only_sqlite_file_urls_parse_as_paths() {
        for bad in [
            "sqlite::memory:",
            "sqlite://",
            "sqlite:///tmp/a.db?mode=ro",
            "sqlite:/tmp/a.db",
            "sqlite:///tmp/%zz.db",
            "mysql://x",
            "/tmp/a.db",
        ] {
            assert_eq!(sqlite_path(bad), None, "{bad}");
        }
    }
}
