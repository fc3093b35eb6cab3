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
//! that group or others may read (both through `tacit_service::keyfile`). The secret is held in zeroizing buffers and never printed: the
//! `Debug` of every type here shows key ids only.
//!
//! # Rotation
//!
//! `rotate` retires the active key at the moment it runs (its `not_after` is then plus the
//! two-minute issue skew) and starts the new one then. A running server keeps the keys it loaded
//! until it gets `SIGHUP` (or restarts), which re-reads this file: send it promptly after
//! rotating, since a receipt the server signs with the old key more than two minutes after the
//! rotation would carry an `issued_at` past the old key's `not_after` and fail verification.

use std::path::Path;

use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};
use tacit_service::keyfile::{self, KeyFileJson, KeyFileStore, SecretHex};
use wallet_core::{KeyId, KeyStatus, PublicKeyEntry, Timestamp};

use crate::{Error, KeyStore};

/// The `format` tag of a key file.
pub const KEY_FILE_FORMAT: &str = "tacit-signer-key/v1";

impl KeyFileStore for KeyStore {
    const PROGRAM: &'static str = "tacit-signer";
    type Error = Error;
    type Id = KeyId;
    type Contents = KeyFile;

    fn make(now: Timestamp) -> Result<Self, Error> {
        KeyStore::make(now)
    }

    fn rotate(&mut self, now: Timestamp) -> Result<(), Error> {
        KeyStore::rotate(self, now)
    }

    fn active_id(&self) -> KeyId {
        self.active_key_id()
    }

    fn to_contents(&self) -> KeyFile {
        let active = ActiveKey {
            secret_key: SecretHex::from_seed(&self.active.to_bytes()),
            not_before: self.active_not_before,
        };
        KeyFile::new(KEY_FILE_FORMAT, active, self.retired.clone())
    }

    fn from_contents(file: KeyFile) -> Result<Self, &'static str> {
        let (active, retired) = file.parts(KEY_FILE_FORMAT)?;
        let seed = active.secret_key.key_seed()?;
        let retired_ok = retired.iter().all(|entry| {
            entry.status == KeyStatus::Retired
                && entry.not_after.is_some()
                && entry.verifying_key().is_some()
        });
        if !retired_ok {
            return Err("a retired entry is malformed");
        }
        Ok(Self {
            active: SigningKey::from_bytes(&seed),
            active_not_before: active.not_before,
            retired,
        })
    }
}

impl KeyStore {
    /// Reads a key file, refusing one that is missing, readable by group or others, or malformed.
    pub fn load(path: &Path) -> Result<Self, Error> {
        keyfile::load(path)
    }
}

/// `tacit-signer keygen`: a new key file with a fresh key. Returns the new key's id.
pub fn keygen(path: &Path, now: Timestamp, force: bool) -> Result<KeyId, Error> {
    keyfile::keygen::<KeyStore>(path, now, force)
}

/// The file's JSON shape.
pub type KeyFile = KeyFileJson<ActiveKey, PublicKeyEntry>;

/// The file's active key.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActiveKey {
    secret_key: SecretHex,
    not_before: Timestamp,
}
