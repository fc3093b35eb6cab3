//! The signing key file: one active Ed25519 key and the retired public keys still published.
//!
//! # File format (`tacit-signer-key/v1`)
//!
//! ```json
//! {
//!   "format": "tacit-signer-key/v1",
//!   "active": { "secret_key": "<64 lowercase hex digits>", "not_before": 1777627800000 },
//!   "retired": [ { "key_id": "…", "public_key": "…", "not_before": …, "not_after": …,
//!                  "status": "retired" } ]
//! }
//! ```
//!
//! Retired entries are wallet-core [`PublicKeyEntry`] values. The file is written with mode 0600
//! (a replacement is written beside it and renamed over it) and [`KeyStore::load`] refuses a file
//! that group or others may read. The secret is held in zeroizing buffers and never printed: the
//! `Debug` of every type here shows key ids only.
//!
//! # Rotation
//!
//! `rotate` retires the active key at the moment it runs (its `not_after` is then plus the
//! two-minute issue skew) and starts the new one then. A running server keeps the keys it loaded
//! until it gets `SIGHUP` (or restarts), which re-reads this file: send it promptly after
//! rotating, since a receipt the server signs with the old key more than two minutes after the
//! rotation would carry an `issued_at` past the old key's `not_after` and fail verification.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use wallet_core::{KeyId, KeyStatus, PublicKeyEntry, Timestamp};
use zeroize::Zeroizing;

use crate::{Error, KeyStore};

/// The `format` tag of a key file.
pub const KEY_FILE_FORMAT: &str = "tacit-signer-key/v1";

/// Largest key file [`KeyStore::load`] reads.
const MAX_KEY_FILE_BYTES: u64 = 1 << 20;

impl KeyStore {
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
        // Checked on the open handle, so the file cannot be swapped between check and read.
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
        let mut seed = Zeroizing::new([0u8; 32]);
        let hex_ok = file.active.secret_key.0.len() == 64
            && file
                .active
                .secret_key
                .0
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !hex_ok || hex::decode_to_slice(file.active.secret_key.0.as_bytes(), &mut *seed).is_err()
        {
            return Err("the secret key must be 64 lowercase hex digits");
        }
        let retired_ok = file.retired.iter().all(|entry| {
            entry.status == KeyStatus::Retired
                && entry.not_after.is_some()
                && entry.verifying_key().is_some()
        });
        if !retired_ok {
            return Err("a retired entry is malformed");
        }
        Ok(Self {
            active: SigningKey::from_bytes(&seed),
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
        let seed = Zeroizing::new(self.active.to_bytes());
        let mut digits = Zeroizing::new([0u8; 64]);
        hex::encode_to_slice(seed.as_slice(), &mut *digits)
            .map_err(|_| format_error(path, "could not be encoded"))?;
        let mut secret = Zeroizing::new(String::with_capacity(64));
        secret.extend(digits.iter().map(|&b| char::from(b)));
        let contents = KeyFile {
            format: KEY_FILE_FORMAT.to_owned(),
            active: ActiveKey {
                secret_key: SecretHex(secret),
                not_before: self.active_not_before,
            },
            retired: self.retired.clone(),
        };
        // Large enough that serialising never reallocates and leaves a copy behind.
        let mut bytes = Zeroizing::new(Vec::with_capacity(64 * 1024 + 512 * self.retired.len()));
        serde_json::to_writer_pretty(&mut *bytes, &contents)
            .map_err(|_| format_error(path, "could not be encoded"))?;
        bytes.push(b'\n');
        file.write_all(&bytes)
            .and_then(|()| file.sync_all())
            .map_err(|source| io_error("write", path, source))
    }
}

/// `tacit-signer keygen`: a new key file with a fresh key. Returns the new key's id.
pub fn keygen(path: &Path, now: Timestamp, force: bool) -> Result<KeyId, Error> {
    let store = KeyStore::make(now)?;
    if force {
        store.replace_file(path)?;
    } else {
        store.create_file(path)?;
    }
    Ok(store.active_key_id())
}

/// `tacit-signer rotate`: retires the file's active key and adds a fresh one. Returns the old
/// and the new key ids.
pub fn rotate_file(path: &Path, now: Timestamp) -> Result<(KeyId, KeyId), Error> {
    let mut store = KeyStore::load(path)?;
    let old = store.active_key_id();
    store.rotate(now)?;
    store.replace_file(path)?;
    Ok((old, store.active_key_id()))
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
    retired: Vec<PublicKeyEntry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ActiveKey {
    secret_key: SecretHex,
    not_before: Timestamp,
}

/// The secret key's hex, wiped on drop.
struct SecretHex(Zeroizing<String>);

impl Serialize for SecretHex {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SecretHex {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|s| SecretHex(Zeroizing::new(s)))
    }
}
