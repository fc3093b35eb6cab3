//! The issuer's ES256 (P-256) keys and their file.
//!
//! # File format (`tacit-issuer-key/v1`)
//!
//! ```json
//! {
//!   "format": "tacit-issuer-key/v1",
//!   "active": { "kid": "…", "secret_key": "<64 lowercase hex digits>", "not_before": 1777627800000 },
//!   "retired": [ { "kid": "…", "jwk": { "kty": "EC", "crv": "P-256", "x": "…", "y": "…" },
//!                  "retired_at": 1777627900000 } ]
//! }
//! ```
//!
//! A key id (`kid`) is the RFC 7638 JWK thumbprint of the public key. The file is written with
//! mode 0600 (a replacement is written beside it and renamed over it) and [`KeyStore::load`]
//! refuses a file that group or others may read. The secret is never printed: `Debug` shows key
//! ids only. `rotate` makes a new active key and keeps the old public key published, so
//! credentials it signed keep verifying until they expire; restart the server to sign with the
//! new key.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

use p256::ecdsa::SigningKey;
use serde::{Deserialize, Serialize};
use tacit_protocol::request_auth::{InstallKey, Jwk};
use wallet_core::Timestamp;
use zeroize::Zeroizing;

use crate::Error;

/// The `format` tag of a key file.
pub const KEY_FILE_FORMAT: &str = "tacit-issuer-key/v1";

/// Largest key file [`KeyStore::load`] reads.
const MAX_KEY_FILE_BYTES: u64 = 1 << 20;

/// The active signing key and the retired public keys still published.
pub struct KeyStore {
    active: SigningKey,
    active_kid: String,
    active_not_before: Timestamp,
    retired: Vec<RetiredKey>,
}

impl core::fmt::Debug for KeyStore {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KeyStore")
            .field("active_kid", &self.active_kid)
            .field(
                "retired",
                &self.retired.iter().map(|k| &k.kid).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// A retired key: still published, no longer used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetiredKey {
    pub kid: String,
    pub jwk: Jwk,
    pub retired_at: Timestamp,
}

/// The key id of a P-256 public key: its RFC 7638 thumbprint.
pub fn key_id(key: &SigningKey) -> String {
    InstallKey::from_verifying_key(*key.verifying_key())
        .id()
        .as_str()
        .to_owned()
}

/// A fresh key from the operating system's generator.
pub fn make_signing_key() -> Result<SigningKey, Error> {
    // Rejection sampling: a random 32-byte string is a valid scalar with overwhelming odds.
    for _ in 0..16 {
        let mut bytes = Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut *bytes).map_err(|_| Error::Random)?;
        if let Ok(key) = SigningKey::from_slice(&*bytes) {
            return Ok(key);
        }
    }
    Err(Error::Random)
}

impl KeyStore {
    /// A store with `key` active from `now` and nothing retired.
    pub fn new(key: SigningKey, now: Timestamp) -> Self {
        Self {
            active_kid: key_id(&key),
            active: key,
            active_not_before: now,
            retired: Vec::new(),
        }
    }

    /// A store with a fresh key.
    pub fn make(now: Timestamp) -> Result<Self, Error> {
        Ok(Self::new(make_signing_key()?, now))
    }

    /// The key credentials are signed with.
    pub fn signing_key(&self) -> &SigningKey {
        &self.active
    }

    /// The active key's id.
    pub fn active_kid(&self) -> &str {
        &self.active_kid
    }

    /// The retired keys, oldest first.
    pub fn retired(&self) -> &[RetiredKey] {
        &self.retired
    }

    /// Retires the active key at `now` (it stays published) and makes a fresh one active.
    pub fn rotate(&mut self, now: Timestamp) -> Result<(), Error> {
        let next = make_signing_key()?;
        let old = std::mem::replace(&mut self.active, next);
        self.retired.push(RetiredKey {
            kid: self.active_kid.clone(),
            jwk: InstallKey::from_verifying_key(*old.verifying_key()).to_jwk(),
            retired_at: now,
        });
        self.active_kid = key_id(&self.active);
        self.active_not_before = now;
        Ok(())
    }

    /// Every published key as `(kid, jwk)`, the active one first.
    pub fn published(&self) -> Vec<(String, Jwk)> {
        let mut keys = vec![(
            self.active_kid.clone(),
            InstallKey::from_verifying_key(*self.active.verifying_key()).to_jwk(),
        )];
        keys.extend(
            self.retired
                .iter()
                .rev()
                .map(|k| (k.kid.clone(), k.jwk.clone())),
        );
        keys
    }

    /// Reads a key file, refusing one that is missing, readable by group or others, or malformed.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let shown = path.display().to_string();
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::KeyFileMissing { path: shown });
            }
            Err(source) => return Err(io_error("open", path, source)),
        };
        let meta = file
            .metadata()
            .map_err(|source| io_error("inspect", path, source))?;
        if !meta.is_file() {
            return Err(format_error(path, "not a regular file"));
        }
        check_private(path, &meta)?;
        if meta.len() > MAX_KEY_FILE_BYTES {
            return Err(format_error(path, "too large"));
        }
        let mut bytes = Zeroizing::new(Vec::with_capacity(4096));
        file.take(MAX_KEY_FILE_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|source| io_error("read", path, source))?;
        let parsed: KeyFile = serde_json::from_slice(&bytes)
            .map_err(|_| format_error(path, "not the JSON that keygen writes"))?;
        Self::from_file(parsed).map_err(|reason| format_error(path, reason))
    }

    fn from_file(file: KeyFile) -> Result<Self, &'static str> {
        if file.format != KEY_FILE_FORMAT {
            return Err("unknown format tag");
        }
        let hex_text = file.active.secret_key.0.as_str();
        let hex_ok = hex_text.len() == 64
            && hex_text
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        let mut seed = Zeroizing::new([0u8; 32]);
        if !hex_ok || hex::decode_to_slice(hex_text.as_bytes(), &mut *seed).is_err() {
            return Err("the secret key must be 64 lowercase hex digits");
        }
        let active =
            SigningKey::from_slice(&*seed).map_err(|_| "the secret key is not a P-256 key")?;
        let active_kid = key_id(&active);
        if active_kid != file.active.kid {
            return Err("the active kid does not match its key");
        }
        for retired in &file.retired {
            let key =
                InstallKey::from_jwk(&retired.jwk).map_err(|_| "a retired key is malformed")?;
            if key.id().as_str() != retired.kid {
                return Err("a retired kid does not match its key");
            }
        }
        Ok(Self {
            active,
            active_kid,
            active_not_before: file.active.not_before,
            retired: file.retired,
        })
    }

    /// Writes the store to a new file with mode 0600; refuses to replace an existing one.
    pub fn create_file(&self, path: &Path) -> Result<(), Error> {
        let mut file = match open_private(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(Error::KeyFileExists {
                    path: path.display().to_string(),
                });
            }
            Err(source) => return Err(io_error("create", path, source)),
        };
        self.write_to(&mut file, path)
    }

    /// Replaces the file at `path`: writes a private file beside it, then renames it over.
    pub fn replace_file(&self, path: &Path) -> Result<(), Error> {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".tmp-{}", std::process::id()));
        let temp = path.with_file_name(name);
        let _ = fs::remove_file(&temp);
        let mut file = open_private(&temp).map_err(|source| io_error("create", &temp, source))?;
        let written = self
            .write_to(&mut file, &temp)
            .and_then(|()| fs::rename(&temp, path).map_err(|e| io_error("replace", path, e)));
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written
    }

    fn write_to(&self, file: &mut File, path: &Path) -> Result<(), Error> {
        let secret = Zeroizing::new(hex::encode(self.active.to_bytes()));
        let contents = KeyFile {
            format: KEY_FILE_FORMAT.to_owned(),
            active: ActiveKey {
                kid: self.active_kid.clone(),
                secret_key: SecretHex(secret),
                not_before: self.active_not_before,
            },
            retired: self.retired.clone(),
        };
        let mut bytes = Zeroizing::new(Vec::with_capacity(64 * 1024 + 512 * self.retired.len()));
        serde_json::to_writer_pretty(&mut *bytes, &contents)
            .map_err(|_| format_error(path, "could not be encoded"))?;
        bytes.push(b'\n');
        file.write_all(&bytes)
            .and_then(|()| file.sync_all())
            .map_err(|source| io_error("write", path, source))
    }
}

/// `tacit-issuer keygen`: a new key file with a fresh key. Returns the new key's id.
pub fn keygen(path: &Path, now: Timestamp, force: bool) -> Result<String, Error> {
    let store = KeyStore::make(now)?;
    if force {
        store.replace_file(path)?;
    } else {
        store.create_file(path)?;
    }
    Ok(store.active_kid().to_owned())
}

/// `tacit-issuer rotate`: retires the file's active key (still published) and adds a fresh one.
/// Returns the old and the new key ids.
pub fn rotate_file(path: &Path, now: Timestamp) -> Result<(String, String), Error> {
    let mut store = KeyStore::load(path)?;
    let old = store.active_kid().to_owned();
    store.rotate(now)?;
    store.replace_file(path)?;
    Ok((old, store.active_kid().to_owned()))
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
fn check_private(path: &Path, meta: &fs::Metadata) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(Error::KeyFilePermissions {
            path: path.display().to_string(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_path: &Path, _meta: &fs::Metadata) -> Result<(), Error> {
    Ok(())
}

fn io_error(action: &'static str, path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        action,
        path: path.display().to_string(),
        source,
    }
}

fn format_error(path: &Path, reason: &'static str) -> Error {
    Error::KeyFileFormat {
        path: path.display().to_string(),
        reason,
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyFile {
    format: String,
    active: ActiveKey,
    retired: Vec<RetiredKey>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ActiveKey {
    kid: String,
    secret_key: SecretHex,
    not_before: Timestamp,
}

/// The secret key's hex, wiped on drop.
struct SecretHex(Zeroizing<String>);

impl Serialize for SecretHex {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SecretHex {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|s| SecretHex(Zeroizing::new(s)))
    }
}
