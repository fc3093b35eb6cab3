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

use std::path::Path;

use p256::ecdsa::SigningKey;
use serde::{Deserialize, Serialize};
use tacit_protocol::request_auth::{InstallKey, Jwk};
use tacit_service::error::Operational;
use tacit_service::keyfile::{self, KeyFileJson, KeyFileStore, SecretHex};
use wallet_core::Timestamp;
use zeroize::Zeroizing;

use crate::Error;

/// The `format` tag of a key file.
pub const KEY_FILE_FORMAT: &str = "tacit-issuer-key/v1";

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
        getrandom::fill(&mut *bytes).map_err(|_| Operational::Random)?;
        if let Ok(key) = SigningKey::from_slice(&*bytes) {
            return Ok(key);
        }
    }
    Err(Operational::Random.into())
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
        keyfile::load(path)
    }
}

impl KeyFileStore for KeyStore {
    const PROGRAM: &'static str = "tacit-issuer";
    type Error = Error;
    type Id = String;
    type Contents = KeyFile;

    fn make(now: Timestamp) -> Result<Self, Error> {
        KeyStore::make(now)
    }

    fn rotate(&mut self, now: Timestamp) -> Result<(), Error> {
        KeyStore::rotate(self, now)
    }

    fn active_id(&self) -> String {
        self.active_kid.clone()
    }

    fn to_contents(&self) -> KeyFile {
        let active = ActiveKey {
            kid: self.active_kid.clone(),
            secret_key: SecretHex::from_seed(&self.active.to_bytes().into()),
            not_before: self.active_not_before,
        };
        KeyFile::new(KEY_FILE_FORMAT, active, self.retired.clone())
    }

    fn from_contents(file: KeyFile) -> Result<Self, &'static str> {
        let (entry, retired) = file.parts(KEY_FILE_FORMAT)?;
        let seed = entry.secret_key.key_seed()?;
        let active =
            SigningKey::from_slice(&*seed).map_err(|_| "the secret key is not a P-256 key")?;
        let active_kid = key_id(&active);
        if active_kid != entry.kid {
            return Err("the active kid does not match its key");
        }
        for retired in &retired {
            let key =
                InstallKey::from_jwk(&retired.jwk).map_err(|_| "a retired key is malformed")?;
            if key.id().as_str() != retired.kid {
                return Err("a retired kid does not match its key");
            }
        }
        Ok(Self {
            active,
            active_kid,
            active_not_before: entry.not_before,
            retired,
        })
    }
}

/// `tacit-issuer keygen`: a new key file with a fresh key. Returns the new key's id.
pub fn keygen(path: &Path, now: Timestamp, force: bool) -> Result<String, Error> {
    keyfile::keygen::<KeyStore>(path, now, force)
}

/// The file's JSON shape.
pub type KeyFile = KeyFileJson<ActiveKey, RetiredKey>;

/// The file's active key.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActiveKey {
    kid: String,
    secret_key: SecretHex,
    not_before: Timestamp,
}
