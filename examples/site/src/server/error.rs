//! Why a site server cannot start (configuration, files, database). HTTP answers have their own
//! type in [`super::routes`].

use std::path::Path;

use tacit_store::StoreError;

/// Everything that stops a site server from starting or a CLI command from finishing.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The configuration file is missing, unreadable or wrong.
    #[error("configuration {path}: {reason}")]
    Config { path: String, reason: String },
    /// A file or socket operation failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// There is no site key file (`load` only; `load_or_create` makes one).
    #[error("no site key at {path}; create one with `tacit-site keygen`")]
    SiteKeyMissing { path: String },
    /// `keygen` would overwrite a key.
    #[error(
        "{path} already holds a site key; remove it first to replace it (wallets then see a new key)"
    )]
    SiteKeyExists { path: String },
    /// The site key file is readable by group or others.
    #[error("{path} has mode {mode:o}; a site key must be private: chmod 600 {path}")]
    SiteKeyPermissions { path: String, mode: u32 },
    /// The site key file is not what `keygen` writes.
    #[error("{path} is not a site key file (tacit-site-key/v1)")]
    SiteKeyFormat { path: String },
    /// The operating system's randomness failed.
    #[error("the operating system's randomness failed")]
    Random,
    /// The database could not be opened or migrated.
    #[error("database: {0}")]
    Store(#[from] StoreError),
}

impl ServerError {
    pub fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.display().to_string(),
            source,
        }
    }
}
