//! The crate's one error type. Messages say what failed, never a URL, a password or a value.

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL is not one this crate accepts.
    #[error(
        "unsupported database URL: expected sqlite://PATH or postgres://USER@HOST:PORT/DATABASE"
    )]
    UnsupportedUrl,
    /// The database could not be opened or reached.
    #[error("could not connect to the {backend} database")]
    Connect {
        /// Which kind of database it was.
        backend: crate::Backend,
        /// The driver's error (not part of the message: it may name hosts or files).
        #[source]
        source: sqlx::Error,
    },
    /// A migration set or its bookkeeping could not be applied.
    #[error("migration {version} of set {set:?} failed")]
    Migrate {
        /// The migration set.
        set: String,
        /// The version that failed (0: the bookkeeping table itself).
        version: i64,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// The migrations handed to [`crate::Db::migrate`] are malformed (a programming error).
    #[error("invalid migration set {set:?}: {reason}")]
    InvalidMigrations {
        /// The migration set.
        set: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The database holds migrations this binary does not know: it was written by a newer one.
    #[error(
        "the database's schema for {set:?} is at version {found}, newer than this binary knows ({known}); run a newer release"
    )]
    SchemaTooNew {
        /// The migration set.
        set: String,
        /// The highest version applied in the database.
        found: i64,
        /// The highest version this binary knows.
        known: i64,
    },
    /// An applied migration's name differs from the one this binary has under that version.
    #[error(
        "the database's migration {version} of set {set:?} is not the one this binary knows; the schemas have diverged"
    )]
    SchemaMismatch {
        /// The migration set.
        set: String,
        /// The version whose name differs.
        version: i64,
    },
    /// A query failed.
    #[error("database query failed")]
    Query(#[from] sqlx::Error),
    /// The database's writer stopped before it answered (the runtime is shutting down).
    #[error("the database writer stopped before answering")]
    WriterGone,
    /// PostgreSQL's server tools are not installed (for `testing::PgCluster`).
    #[error(
        "PostgreSQL is not installed (no initdb and pg_ctl in PATH or /usr/lib/postgresql/*/bin); install it with: apt-get install -y postgresql"
    )]
    PostgresMissing,
    /// The throw-away test cluster could not be set up.
    #[error("test PostgreSQL cluster: {0}")]
    Cluster(String),
}

impl StoreError {
    /// Whether the underlying driver error is a unique-constraint violation (a duplicate key).
    pub fn is_unique_violation(&self) -> bool {
        match self {
            Self::Connect { source, .. } | Self::Migrate { source, .. } | Self::Query(source) => {
                is_unique_violation(source)
            }
            _ => false,
        }
    }
}

/// Whether `error` is a unique-constraint violation on either backend (SQLite's
/// `SQLITE_CONSTRAINT_UNIQUE`/`PRIMARYKEY`, PostgreSQL's `23505`).
pub fn is_unique_violation(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .is_some_and(|e| e.is_unique_violation())
}
