//! How the person confirms a consequential act (Grant, Release, End session, replacing the
//! profile, registering a device): the rule, decided here, the page only carrying it out.
//!
//! - **Which way** ([`confirmation`]): a platform authenticator registered for the vault the
//!   page is on confirms, if its sealed record opens; registering a device is always confirmed
//!   with the passphrase. When a device is registered but cannot be used (the wallet is locked so
//!   its sealed record cannot be opened, or the record does not open or holds no valid key), the
//!   passphrase confirms instead, and that is a named outcome
//!   ([`Confirmation::PassphraseInstead`]) with a sentence the page shows: never a silent
//!   downgrade.
//! - **A proof of the act** ([`Confirmed`]): only two paths make one, an assertion that verifies
//!   against the registered device's key for the challenge the page made ([`Device::confirm`]),
//!   or the passphrase opening the stored vault the page is on ([`by_passphrase`]). The page
//!   carries out an act only with a `Confirmed` in hand.
//! - **What a device is** ([`Device::register`], [`device`]): a credential whose registration
//!   verified (ceremony, challenge, origin, relying party, user verification, an ES256 P-256
//!   key), sealed with the vault ([`Device::seal`]) so that it opens only with that vault's key.
//!
//! Pure: the challenge's randomness, the WebAuthn calls and the storage are the page's.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand_core::CryptoRng;
use serde::{Deserialize, Serialize};
use tacit_protocol::webauthn::{self, Assertion, COSE_ES256, Expected, WebAuthnError};
use wallet_core::store::StoredVault;
use wallet_core::{Passphrase, Typed, Vault};

/// The `Vault::seal_aux` label of a sealed device record.
pub const DEVICE_LABEL: &str = "authenticator.v1";

/// An act the person confirms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    Grant,
    Release,
    EndSession,
    /// Delete the history of ended sessions (the person's record of them).
    DeleteHistory,
    /// Replace the stored profile with a backup of another vault.
    ReplaceProfile,
    /// Register this device's authenticator to confirm from now on.
    RegisterDevice,
}

/// A registered platform authenticator whose record opened: its credential id and its SPKI DER
/// P-256 public key (both checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    credential_id: Vec<u8>,
    public_key: Vec<u8>,
    /// The signature counter of its last confirmation (0: registered, or it keeps none).
    sign_count: u32,
}

/// What the browser holds for the vault the page is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceState {
    /// No device is registered for this vault (none at all, or one for another vault).
    NotRegistered,
    /// A device is registered and its record opened.
    Ready(Device),
    /// A device is registered for this vault but the wallet is locked: its record is sealed
    /// with the vault and cannot be read.
    Locked,
    /// A device record is stored but does not open with this vault or holds no valid key
    /// (damaged, or changed by a script).
    Unreadable,
}

/// Why the passphrase confirms although a device is registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instead {
    Locked,
    Unreadable,
}

/// How the person is asked to confirm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// The registered device (a user-verifying assertion).
    Device(Device),
    /// The passphrase, typed again; no device is registered (or a device is being registered).
    Passphrase,
    /// The passphrase, although a device is registered: see [`Instead`]. The page shows
    /// [`Confirmation::notice`].
    PassphraseInstead(Instead),
}

impl Confirmation {
    /// The sentence the page shows with the passphrase dialog when the passphrase confirms
    /// instead of a registered device; `None` otherwise.
    pub fn notice(&self) -> Option<&'static str> {
        match self {
            Confirmation::PassphraseInstead(Instead::Locked) => Some(
                "This device is registered to confirm, but the wallet is locked, so it cannot \
                 be used: confirm with your passphrase.",
            ),
            Confirmation::PassphraseInstead(Instead::Unreadable) => Some(
                "This device is registered to confirm, but its record could not be read (it is \
                 damaged or was changed): confirm with your passphrase, then register the \
                 device again in Settings.",
            ),
            Confirmation::Device(_) | Confirmation::Passphrase => None,
        }
    }
}

/// How `act` is confirmed, given what the browser holds for this vault.
pub fn confirmation(act: Act, device: &DeviceState) -> Confirmation {
    match (act, device) {
        // A device is registered under the passphrase, never under another device.
        (Act::RegisterDevice, _) | (_, DeviceState::NotRegistered) => Confirmation::Passphrase,
        (_, DeviceState::Ready(device)) => Confirmation::Device(device.clone()),
        (_, DeviceState::Locked) => Confirmation::PassphraseInstead(Instead::Locked),
        (_, DeviceState::Unreadable) => Confirmation::PassphraseInstead(Instead::Unreadable),
    }
}

/// The stored record: the vault it belongs to (hex) and the sealed device (hex).
#[derive(Serialize, Deserialize)]
struct StoredDevice {
    vault_id: String,
    sealed: String,
}

/// What is sealed: the credential id and the public key, base64url.
#[derive(Serialize, Deserialize)]
struct SealedDevice {
    credential_id: String,
    public_key: String,
    /// Absent in records sealed before the counter was kept: 0.
    #[serde(default)]
    sign_count: u32,
}

/// The device registered for the vault the page is on: `record` is the stored record (if any),
/// `unlocked` the open vault (if the wallet is unlocked), `stored_vault` the stored profile's
/// vault id (used while locked).
pub fn device(
    record: Option<&str>,
    unlocked: Option<&Vault>,
    stored_vault: Option<[u8; 16]>,
) -> DeviceState {
    let Some(record) = record else {
        return DeviceState::NotRegistered;
    };
    let Some(on) = unlocked.map(|v| *v.envelope().vault_id()).or(stored_vault) else {
        return DeviceState::NotRegistered;
    };
    let Ok(stored) = serde_json::from_str::<StoredDevice>(record) else {
        return DeviceState::Unreadable;
    };
    if !stored.vault_id.eq_ignore_ascii_case(&hex::encode(on)) {
        return DeviceState::NotRegistered;
    }
    let Some(vault) = unlocked else {
        return DeviceState::Locked;
    };
    let opened = || -> Option<Device> {
        let sealed = hex::decode(&stored.sealed).ok()?;
        let plain = vault.open_aux(DEVICE_LABEL, &sealed).ok()?;
        let parsed: SealedDevice = serde_json::from_slice(&plain).ok()?;
        Device::new(
            URL_SAFE_NO_PAD.decode(parsed.credential_id).ok()?,
            URL_SAFE_NO_PAD.decode(parsed.public_key).ok()?,
        )
        .ok()
        .map(|d| d.with_sign_count(parsed.sign_count))
    };
    opened().map_or(DeviceState::Unreadable, DeviceState::Ready)
}

/// What `navigator.credentials.create` handed back, as plain values: `credential.rawId`,
/// `response.getPublicKey()` (SPKI DER), `response.getPublicKeyAlgorithm()` (a COSE algorithm
/// number), `response.clientDataJSON` and `response.authenticatorData`.
#[derive(Debug, Clone, Copy)]
pub struct Made<'a> {
    pub credential_id: &'a [u8],
    pub public_key: &'a [u8],
    pub algorithm: f64,
    pub client_data_json: &'a [u8],
    pub authenticator_data: &'a [u8],
}

/// Why a device was not registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    #[error("{0}")]
    WebAuthn(#[from] WebAuthnError),
    #[error("the device offered no ES256 key")]
    NotEs256,
    #[error("the device gave no credential id")]
    NoCredentialId,
}

impl Device {
    /// A device from a credential id and an SPKI DER key: the id must not be empty and the key
    /// must be an uncompressed P-256 key.
    pub fn new(credential_id: Vec<u8>, public_key: Vec<u8>) -> Result<Self, RegisterError> {
        if credential_id.is_empty() {
            return Err(RegisterError::NoCredentialId);
        }
        webauthn::check_public_key(&public_key)?;
        Ok(Self {
            credential_id,
            public_key,
            sign_count: 0,
        })
    }

    /// This device with `sign_count` as the counter of its last confirmation.
    pub fn with_sign_count(mut self, sign_count: u32) -> Self {
        self.sign_count = sign_count;
        self
    }

    /// The counter of its last confirmation.
    pub fn sign_count(&self) -> u32 {
        self.sign_count
    }

    /// A registration checked: the ceremony answered `challenge` for `origin` and `rp_id` with
    /// a user-verifying ES256 credential.
    pub fn register(
        made: &Made<'_>,
        challenge: &[u8],
        origin: &str,
        rp_id: &str,
    ) -> Result<Self, RegisterError> {
        webauthn::verify_registration(made.client_data_json, challenge, origin)?;
        webauthn::check_authenticator_data(made.authenticator_data, rp_id)?;
        if made.algorithm != f64::from(COSE_ES256) {
            return Err(RegisterError::NotEs256);
        }
        Self::new(made.credential_id.to_vec(), made.public_key.to_vec())
    }

    pub fn credential_id(&self) -> &[u8] {
        &self.credential_id
    }

    pub fn public_key(&self) -> &[u8] {
        &self.public_key
    }

    /// The record to store, sealed with `vault` (opens only with it, under [`DEVICE_LABEL`]).
    pub fn seal(
        &self,
        vault: &Vault,
        rng: &mut impl CryptoRng,
    ) -> Result<String, wallet_core::SealError> {
        let plain = serde_json::to_vec(&SealedDevice {
            credential_id: URL_SAFE_NO_PAD.encode(&self.credential_id),
            public_key: URL_SAFE_NO_PAD.encode(&self.public_key),
            sign_count: self.sign_count,
        })
        .map_err(|_| wallet_core::SealError("the device record could not be written"))?;
        let sealed = vault.seal_aux(DEVICE_LABEL, &plain, rng)?;
        serde_json::to_string(&StoredDevice {
            vault_id: hex::encode(vault.envelope().vault_id()),
            sealed: hex::encode(sealed),
        })
        .map_err(|_| wallet_core::SealError("the device record could not be written"))
    }

    /// The person confirmed on this device: `assertion` verifies against its key, for its
    /// credential, the `challenge` the page made (`webauthn::act_challenge` of the act's
    /// sentence), `origin` and `rp_id`, and its signature counter advanced past the one kept
    /// (`webauthn::check_sign_count`). Also returns this device with the new counter: the page
    /// seals it again, so the same assertion, or one from a copy of the key that lags, is refused
    /// next time.
    pub fn confirm(
        &self,
        assertion: &Assertion<'_>,
        challenge: &[u8],
        origin: &str,
        rp_id: &str,
    ) -> Result<(Confirmed, Device), WebAuthnError> {
        webauthn::verify_assertion(
            &self.public_key,
            assertion,
            &Expected {
                challenge,
                origin,
                rp_id,
                credential_id: &self.credential_id,
            },
        )?;
        let got = webauthn::check_authenticator_data(assertion.authenticator_data, rp_id)?;
        webauthn::check_sign_count(self.sign_count, got.sign_count)?;
        Ok((
            Confirmed { by: By::Device },
            self.clone().with_sign_count(got.sign_count),
        ))
    }
}

/// How an act was confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Device,
    Passphrase,
}

/// The proof that the person confirmed: made only by [`Device::confirm`] and [`by_passphrase`].
/// Not `Clone`: one confirmation, one act.
#[derive(Debug, PartialEq, Eq)]
#[must_use]
pub struct Confirmed {
    by: By,
}

impl Confirmed {
    pub fn by(&self) -> By {
        self.by
    }
}

/// Why the passphrase did not confirm. Its text says that nothing was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotConfirmed {
    #[error("Type your passphrase to confirm.")]
    Empty,
    #[error("That passphrase is not right. Nothing was done.")]
    Wrong,
    #[error("No profile is stored in this browser. Nothing was done.")]
    NoProfile,
    #[error("The stored profile changed in another tab. Reload this page. Nothing was done.")]
    ChangedElsewhere,
}

/// The person confirmed with the passphrase: `typed` opens the stored vault, and that is the
/// vault the page is unlocked on (`unlocked_on`, if it is unlocked).
pub fn by_passphrase(
    stored: Option<&StoredVault>,
    typed: &(impl Typed + ?Sized),
    unlocked_on: Option<&[u8; 16]>,
) -> Result<Confirmed, NotConfirmed> {
    if typed.as_typed().is_empty() {
        return Err(NotConfirmed::Empty);
    }
    let stored = stored.ok_or(NotConfirmed::NoProfile)?;
    let pass = Passphrase::typed(typed).map_err(|_| NotConfirmed::Wrong)?;
    let bytes = stored.envelope_bytes().map_err(|_| NotConfirmed::Wrong)?;
    let (vault, _profile) = Vault::open(&bytes, &pass).map_err(|_| NotConfirmed::Wrong)?;
    match unlocked_on {
        Some(id) if id != vault.envelope().vault_id() => Err(NotConfirmed::ChangedElsewhere),
        _ => Ok(Confirmed { by: By::Passphrase }),
    }
}
