//! The site's own signing key (Ed25519), which signs its requirements and is published at
//! `/.well-known/tacit-site.json`.
//!
//! File format (`tacit-site-key/v1`), mode 0600:
//! `{"format":"tacit-site-key/v1","secret_key":"<64 lowercase hex digits>"}`.
//! Made on first start (or by `tacit-site keygen`); a file that group or others may read is
//! refused. The secret never appears in a `Debug`, a log or an error.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use tacit_protocol::site_auth::derive_site_kid;
use zeroize::Zeroizing;

use super::ServerError;

/// The `format` tag of a site key file.
pub const SITE_KEY_FORMAT: &str = "tacit-site-key/v1";

const MAX_KEY_FILE_BYTES: u64 = 4096;

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
    secret_key: String,
}

impl Drop for KeyFile {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.secret_key);
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
        let shown = path.display().to_string();
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ServerError::SiteKeyMissing { path: shown });
            }
            Err(e) => return Err(ServerError::io("open", path, e)),
        };
        let meta = file
            .metadata()
            .map_err(|e| ServerError::io("inspect", path, e))?;
        if !meta.is_file() || meta.len() > MAX_KEY_FILE_BYTES {
            return Err(ServerError::SiteKeyFormat { path: shown });
        }
        check_private(path, &meta)?;
        let mut bytes = Zeroizing::new(Vec::with_capacity(256));
        file.take(MAX_KEY_FILE_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| ServerError::io("read", path, e))?;
        let parsed: KeyFile =
            serde_json::from_slice(&bytes).map_err(|_| ServerError::SiteKeyFormat {
                path: shown.clone(),
            })?;
        let secret = &parsed.secret_key;
        let mut seed = Zeroizing::new([0u8; 32]);
        let ok = parsed.format == SITE_KEY_FORMAT
            && secret.len() == 64
            && secret
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            && hex::decode_to_slice(secret.as_str(), seed.as_mut_slice()).is_ok();
        if !ok {
            return Err(ServerError::SiteKeyFormat { path: shown });
        }
        Ok(Self::from_bytes(&seed))
    }

    /// Writes this key to a new file at `path` (mode 0600), creating its directory; refuses to
    /// overwrite.
    pub fn write_new(&self, path: &Path) -> Result<(), ServerError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| ServerError::io("create", parent, e))?;
        }
        let mut file = match open_private(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(ServerError::SiteKeyExists {
                    path: path.display().to_string(),
                });
            }
            Err(e) => return Err(ServerError::io("create", path, e)),
        };
        let file_body = KeyFile {
            format: SITE_KEY_FORMAT.to_owned(),
            secret_key: hex::encode(self.key.to_bytes()),
        };
        let body = Zeroizing::new(serde_json::to_vec(&file_body).map_err(|_| {
            ServerError::SiteKeyFormat {
                path: path.display().to_string(),
            }
        })?);
        file.write_all(&body)
            .and_then(|()| file.sync_all())
            .map_err(|e| ServerError::io("write", path, e))
    }
}

#[cfg(unix)]
fn open_private(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn open_private(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

#[cfg(unix)]
fn check_private(path: &Path, meta: &std::fs::Metadata) -> Result<(), ServerError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(ServerError::SiteKeyPermissions {
            path: path.display().to_string(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_path: &Path, _meta: &std::fs::Metadata) -> Result<(), ServerError> {
    Ok(())
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
