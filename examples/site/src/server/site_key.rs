//! The site's own signing key (Ed25519), which signs its requirements and is published at
//! `/.well-known/tacit-site.json`.
//!
//! File format (`tacit-site-key/v1`), mode 0600:
//! `{"format":"tacit-site-key/v1","secret_key":"<64 lowercase hex digits>"}`.
//! Made on first start (or by `tacit-site keygen`); a file that group or others may read is
//! refused. The secret never appears in a `Debug`, a log or an error.

use std::path::Path;

use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use tacit_protocol::site_auth::derive_site_kid;
use tacit_service::keyfile::{self, KeyFileError, Problem, SecretHex};
use zeroize::Zeroizing;

use super::ServerError;

/// The `format` tag of a site key file.
pub const SITE_KEY_FORMAT: &str = "tacit-site-key/v1";

const MAX_KEY_FILE_BYTES: u64 = 4096;

/// The tool named in key file messages.
const PROGRAM: &str = "tacit-site";

/// The site's key and its published id.
pub struct SiteKey {
    key: SigningKey,
    kid: String,
}

impl std::fmt::Debug for SiteKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SiteKey").field("kid", &self.kid).finish()
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyFile {
    format: String,
    secret_key: SecretHex,
}

/// The site's own messages for a key file refused by `tacit_service::keyfile`.
fn site_key_error(error: KeyFileError) -> ServerError {
    let path = error.path;
    match error.problem {
        Problem::Missing => ServerError::SiteKeyMissing { path },
        Problem::Exists => ServerError::SiteKeyExists { path },
        Problem::Permissions { mode } => ServerError::SiteKeyPermissions { path, mode },
        Problem::Format(_) => ServerError::SiteKeyFormat { path },
        Problem::Io { action, source } => ServerError::Io {
            action,
            path,
            source,
        },
    }
}

impl SiteKey {
    /// A key from its 32 secret bytes.
    pub fn from_bytes(secret: &[u8; 32]) -> Self {
        let key = SigningKey::from_bytes(secret);
        let kid = derive_site_kid(&key.verifying_key());
        Self { key, kid }
    }

    /// A fresh key from the operating system's randomness.
    pub fn make() -> Result<Self, ServerError> {
        let mut secret = Zeroizing::new([0u8; 32]);
        getrandom::fill(secret.as_mut_slice()).map_err(|_| ServerError::Random)?;
        Ok(Self::from_bytes(&secret))
    }

    pub fn signing_key(&self) -> &SigningKey {
        &self.key
    }

    pub fn verifying_key(&self) -> VerifyingKey {
        self.key.verifying_key()
    }

    /// The key's id (its RFC 7638 thumbprint).
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// Reads the key at `path`, or makes one and writes it there (mode 0600) if there is none.
    pub fn load_or_create(path: &Path) -> Result<Self, ServerError> {
        match Self::load(path) {
            Err(ServerError::SiteKeyMissing { .. }) => {
                let key = Self::make()?;
                match key.write_new(path) {
                    Ok(()) => {
                        tracing::info!(kid = %key.kid, "made a new site key");
                        Ok(key)
                    }
                    // Another instance made it first: use theirs.
                    Err(ServerError::SiteKeyExists { .. }) => Self::load(path),
                    Err(e) => Err(e),
                }
            }
            other => other,
        }
    }

    /// Reads the key at `path`, refusing a missing, group/other-readable or malformed file.
    pub fn load(path: &Path) -> Result<Self, ServerError> {
        let parsed: KeyFile =
            keyfile::read_json(PROGRAM, path, MAX_KEY_FILE_BYTES).map_err(site_key_error)?;
        match parsed.secret_key.seed() {
            Some(seed) if parsed.format == SITE_KEY_FORMAT => Ok(Self::from_bytes(&seed)),
            _ => Err(ServerError::SiteKeyFormat {
                path: path.display().to_string(),
            }),
        }
    }

    /// Writes this key to a new file at `path` (mode 0600), creating its directory; refuses to
    /// overwrite.
    pub fn write_new(&self, path: &Path) -> Result<(), ServerError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| ServerError::io("create", parent, e))?;
        }
        let file_body = KeyFile {
            format: SITE_KEY_FORMAT.to_owned(),
            secret_key: SecretHex::from_seed(&self.key.to_bytes()),
        };
        let body =
            keyfile::to_json(&file_body, 1024).ok_or_else(|| ServerError::SiteKeyFormat {
                path: path.display().to_string(),
            })?;
        keyfile::create_private(PROGRAM, path, &body).map_err(site_key_error)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn made_once_then_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/site.key");
        let made = SiteKey::load_or_create(&path).unwrap();
        let again = SiteKey::load_or_create(&path).unwrap();
        assert_eq!(made.verifying_key(), again.verifying_key());
        assert_eq!(made.kid(), again.kid());
        assert!(!format!("{made:?}").contains(&hex::encode(made.key.to_bytes())));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        assert!(matches!(
            made.write_new(&path),
            Err(ServerError::SiteKeyExists { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_readable_or_malformed_file_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("site.key");
        SiteKey::make().unwrap().write_new(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(
            SiteKey::load(&path),
            Err(ServerError::SiteKeyPermissions { mode: 0o644, .. })
        ));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&path, r#"{"format":"tacit-site-key/v1","secret_key":"00"}"#).unwrap();
        let err = SiteKey::load(&path).unwrap_err();
        assert!(matches!(err, ServerError::SiteKeyFormat { .. }));
        assert!(!err.to_string().contains("\"00\""));
    }
}
