//! The signer's keys in memory: one active Ed25519 key and the retired public keys still
//! published. The secret never leaves [`SigningKey`] (wiped on drop) and is never printed: the
//! `Debug` here shows key ids only. The file format is in `keyfile.rs`.

use ed25519_dalek::SigningKey;
use tacit_service::error::Operational;
use wallet_core::receipt::sign;
use wallet_core::{
    KeyId, KeySet, KeyStatus, PublicKeyEntry, ReceiptPayload, SignedReceipt, Timestamp,
    derive_key_id,
};
use zeroize::Zeroizing;

use crate::Error;

/// The signer's keys: the active signing key and the retired public keys.
pub struct KeyStore {
    pub(crate) active: SigningKey,
    pub(crate) active_not_before: Timestamp,
    pub(crate) retired: Vec<PublicKeyEntry>,
}

impl core::fmt::Debug for KeyStore {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KeyStore")
            .field("active_key_id", &self.active_key_id().as_str())
            .field("active_not_before", &self.active_not_before.millis())
            .field("retired", &self.retired.len())
            .finish_non_exhaustive()
    }
}

impl KeyStore {
    /// A store with a fresh key from the operating system's generator, active from `now`.
    pub fn make(now: Timestamp) -> Result<Self, Error> {
        Ok(Self::from_signing_key(make_signing_key()?, now))
    }

    /// A store around a given key (tests and the benchmark use fixed or throwaway keys).
    pub fn from_signing_key(active: SigningKey, not_before: Timestamp) -> Self {
        Self {
            active,
            active_not_before: not_before,
            retired: Vec::new(),
        }
    }

    /// Retires the active key at `now` and makes `next` the active key from `now`. The old key
    /// stays published, valid for receipts issued before `now + ISSUE_SKEW_MS`: the signer
    /// accepts an `issued_at` up to two minutes ahead of its clock, so a receipt it signed just
    /// before rotating may carry such a time.
    pub fn rotate_to(&mut self, next: SigningKey, now: Timestamp) -> Result<(), Error> {
        if now < self.active_not_before {
            return Err(Operational::Config(
                "the clock reads earlier than the active key's start; check the system clock \
                 before rotating"
                    .to_owned(),
            )
            .into());
        }
        let old = core::mem::replace(&mut self.active, next);
        self.retired.push(PublicKeyEntry::new(
            &old.verifying_key(),
            self.active_not_before,
            Some(now.plus_millis(wallet_core::receipt::ISSUE_SKEW_MS)),
            KeyStatus::Retired,
        ));
        self.active_not_before = now;
        Ok(())
    }

    /// [`KeyStore::rotate_to`] a fresh key.
    pub fn rotate(&mut self, now: Timestamp) -> Result<(), Error> {
        self.rotate_to(make_signing_key()?, now)
    }

    pub fn active_key_id(&self) -> KeyId {
        derive_key_id(&self.active.verifying_key())
    }

    /// What `GET /v1/keys` publishes: the active key, then the retired ones.
    pub fn key_set(&self) -> KeySet {
        let mut keys = Vec::with_capacity(1 + self.retired.len());
        keys.push(PublicKeyEntry::new(
            &self.active.verifying_key(),
            self.active_not_before,
            None,
            KeyStatus::Active,
        ));
        keys.extend(self.retired.iter().cloned());
        KeySet { keys }
    }

    /// Signs a payload with the active key (wallet-core's canonical bytes). Checks nothing:
    /// callers run [`crate::check_signable`] first.
    pub fn sign(&self, payload: ReceiptPayload, signed_at: Timestamp) -> SignedReceipt {
        sign(payload, &self.active, signed_at)
    }
}

/// A fresh Ed25519 key from the operating system's generator.
pub fn make_signing_key() -> Result<SigningKey, Error> {
    let mut seed = Zeroizing::new([0u8; 32]);
    getrandom::fill(&mut *seed).map_err(|_| Operational::Random)?;
    Ok(SigningKey::from_bytes(&seed))
}
