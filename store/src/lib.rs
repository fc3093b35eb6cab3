//! The database under Tacit's services: the signer (enrolled installs, enrolment codes, seen
//! requests) and the relying sites (single-use nonces).
//!
//! What it promises:
//! - One handle, [`Db`], over either **SQLite** (embedded, a file; the default) or **PostgreSQL**
//!   (`DATABASE_URL=postgres://…`, so several instances of one service share one store), through
//!   `sqlx`'s `Any` driver. SQLite files are created (with their directory), run in WAL mode with a
//!   busy timeout of at least five seconds and foreign keys on.
//! - Versioned migrations per named set ([`Db::migrate`]), each applied in its own transaction,
//!   safe when two instances start at once on one PostgreSQL, and refusing a database whose schema
//!   is newer than the running binary knows.
//! - Error messages that carry no secrets: never a URL (it may hold a password), never a value.
//! - Group commit ([`Db::write`], [`group`]): small conditional writes from many callers share one
//!   transaction and one `fsync`, each caller answered after the commit; durability is that of an
//!   autocommitted statement (SQLite stays `synchronous = FULL`).
//! - With the `testing` feature, `testing::PgCluster`: a real, throw-away PostgreSQL cluster
//!   (initdb + pg_ctl in a temp dir on a free loopback port) for tests. Never a mock.
//!
//! What it refuses: any URL other than `sqlite://PATH` or `postgres://…`/`postgresql://…`; an
//! in-memory SQLite database (each pooled connection would see a different one).
//!
//! # The SQL subset that works on both backends
//! Migrations and queries are plain SQL strings run unchanged on both backends, so keep to:
//! - types `BIGINT` (bind/read `i64`), `TEXT` (`String`/`&str`) and `BYTEA` (`Vec<u8>`/`&[u8]`;
//!   SQLite accepts the name and stores a blob); booleans as `BIGINT` 0/1;
//! - `$1`, `$2`, … placeholders (SQLite understands `$N` natively; tested here). Bind exactly as
//!   many values as there are placeholders: SQLite would read a missing one as NULL where
//!   PostgreSQL refuses the statement;
//! - `PRIMARY KEY`, `UNIQUE`, `NOT NULL`, `REFERENCES`, `CREATE INDEX`, `INSERT … ON CONFLICT DO
//!   NOTHING`, `… RETURNING` (both tested here);
//! - no `SERIAL`/`AUTOINCREMENT`, no `now()` (time is an argument: milliseconds as `BIGINT`);
//! - read back only `BIGINT`, `TEXT` and `BYTEA` values (`COUNT(*)` is `BIGINT` on both): the
//!   `Any` driver cannot decode PostgreSQL's `INTEGER` as `i64` nor types such as `name`, so
//!   declare `BIGINT` and cast anything else (`current_database()::TEXT`).
//!
//! Queries take `&'static str` SQL (sqlx's `SqlSafeStr`); build statements from constants, never
//! from values. For a read-then-write that must be atomic, use [`Db::begin_write`].

mod db;
mod error;
pub mod group;
mod migrate;
#[cfg(feature = "testing")]
pub mod testing;

pub use db::{Backend, Db, sqlite_url};
pub use error::{StoreError, is_unique_violation};
pub use group::{JobFuture, WriteJob};
pub use migrate::Migration;

/// Re-exported so callers use exactly the `sqlx` this crate was built with.
pub use sqlx;
