//! The vault: the profile encrypted under the person's passphrase, as one versioned binary
//! envelope that the caller stores wherever it likes (the crate does no I/O).
//!
//! # Construction
//! - A random 256-bit **data key** seals the profile (its `serde_json` bytes) with AES-256-GCM.
//! - A **key-encryption key** is derived from the passphrase with Argon2id (version 0x13,
//!   32-byte output) over a random 16-byte salt. It wraps the data key with AES-256-GCM and is
//!   wiped as soon as the wrap or unwrap is done.
//! - Changing the passphrase re-wraps the data key only: the sealed profile and its nonce stay
//!   byte-identical, so no Argon2 run or re-encryption of the profile is needed.
//!
//! # Byte layout, format version 1 (integers big-endian)
//! ```text
//! offset  len  field
//!      0    8  magic "TACITVLT"
//!      8    2  format version = 1
//!     10    1  KDF id = 1 (Argon2id, version 0x13)
//!     11    4  Argon2 memory cost m, in KiB
//!     15    4  Argon2 passes t
//!     19    4  Argon2 lanes p
//!     23   16  salt
//!     39   16  vault id (random, fixed for the vault's life)
//!     55   12  wrap nonce
//!     67   48  wrapped data key (32 bytes ciphertext + 16 bytes tag)
//!    115   12  seal nonce
//!    127    4  sealed_len
//!    131    n  sealed profile (sealed_len bytes: ciphertext + 16 bytes tag)
//! ```
//! Nothing may follow the sealed profile. The **header** is bytes 0..55 (magic through vault id).
//!
//! Associated data:
//! - the wrap binds the whole header: `bytes[0..55]`;
//! - the seal binds `magic | version | vault id | b"profile"` — deliberately *not* the salt or
//!   KDF parameters, which change with the passphrase while the seal does not. The vault id
//!   ties the sealed profile to this vault; the data key is only ever recovered through a wrap
//!   that authenticates every header byte.
//!
//! # Refusals
//! - Creating (or changing the passphrase) below [`KdfParams::MINIMUM`] (m = 19 MiB, t = 2,
//!   p = 1) gives [`VaultError::WeakKdfParams`]; above [`KdfParams::MAXIMUM`] gives
//!   [`VaultError::KdfParamsTooCostly`], since no vault could open it.
//! - Opening a header that asks for more than m = 1 GiB, t = 10 or p = 16 is refused before
//!   Argon2 runs, so a hostile file cannot hang the page or exhaust its memory.
//! - [`Vault::unlock`] reports every failure — bad magic, truncation, unknown version, hostile
//!   parameters, wrong passphrase, any tampered byte, undecodable profile — as the one
//!   [`OpenError::CannotOpen`]. [`Envelope::parse`] (no secret involved) says what is malformed.
//!   The one exception comes after the passphrase authenticated the vault: a profile record
//!   from a newer Tacit ([`crate::format`]) is [`OpenError::NewerFormat`], never read in part.
//!
//! # The sealed profile
//! The plaintext is the profile record: JSON with a `format` member (see
//! [`crate::profile::PROFILE_FORMAT`]); records without one are format 1 and are migrated on
//! opening. Resealing writes the current format.
//!
//! # Randomness
//! [`Vault::create`] draws, in this order: salt, vault id, data key, wrap nonce, seal nonce.
//! [`Vault::change_passphrase`] draws salt, wrap nonce; [`Vault::reseal`] draws a seal nonce.
//!
//! Not protected against: replacing a stored vault with an older envelope of the same vault
//! (rollback); that needs state outside the envelope.

use aes_gcm::aead::{Aead, AeadInOut, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce, Tag};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use rand_core::CryptoRng;
use zeroize::Zeroizing;

use crate::error::{EnvelopeError, OpenError, SealError, VaultError, WeakPassphrase};
use crate::format::ReadError;
use crate::profile::Profile;

/// The first eight bytes of every vault.
pub const MAGIC: [u8; 8] = *b"TACITVLT";
/// The envelope format this version writes and reads.
pub const FORMAT_VERSION: u16 = 1;
/// KDF id 1: Argon2id, version 0x13, 32-byte output.
pub const KDF_ARGON2ID_V13: u8 = 1;
/// Fewest characters (Unicode scalar values) a passphrase may have.
pub const MIN_PASSPHRASE_CHARS: usize = 8;

const SALT_LEN: usize = 16;
const ID_LEN: usize = 16;
const NONCE_LEN: usize = 12;
const KEY_LEN: usize = 32;
const TAG_LEN: usize = 16;
const WRAPPED_LEN: usize = KEY_LEN + TAG_LEN;
/// Magic through vault id: the wrap's associated data.
const HEADER_LEN: usize = MAGIC.len() + 2 + 1 + 3 * 4 + SALT_LEN + ID_LEN;
/// Everything before the sealed profile.
const FIXED_LEN: usize = HEADER_LEN + NONCE_LEN + WRAPPED_LEN + NONCE_LEN + 4;
const SEAL_LABEL: &[u8] = b"profile";

/// Argon2id cost parameters, as stored in the envelope header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KdfParams {
    /// Memory cost in KiB.
    pub m_kib: u32,
    /// Number of passes.
    pub t: u32,
    /// Degree of parallelism (lanes).
    pub p: u32,
}

impl KdfParams {
    /// RFC 9106's second recommended option: m = 64 MiB, t = 3, p = 4.
    pub const DEFAULT: Self = Self {
        m_kib: 64 * 1024,
        t: 3,
        p: 4,
    };
    /// The floor for creating a vault: m = 19 MiB, t = 2, p = 1 (OWASP's Argon2id minimum).
    pub const MINIMUM: Self = Self {
        m_kib: 19 * 1024,
        t: 2,
        p: 1,
    };
    /// The ceiling for opening a vault: m = 1 GiB, t = 10, p = 16.
    pub const MAXIMUM: Self = Self {
        m_kib: 1024 * 1024,
        t: 10,
        p: 16,
    };

    /// Checks the bounds enforced when creating a vault or changing its passphrase.
    /// Fails with [`VaultError::WeakKdfParams`] or [`VaultError::KdfParamsTooCostly`].
    pub fn check_for_create(self) -> Result<(), VaultError> {
        if self.m_kib < Self::MINIMUM.m_kib {
            return Err(VaultError::WeakKdfParams("memory cost below 19 MiB"));
        }
        if self.t < Self::MINIMUM.t {
            return Err(VaultError::WeakKdfParams("fewer than 2 passes"));
        }
        if self.p < Self::MINIMUM.p {
            return Err(VaultError::WeakKdfParams("parallelism must be at least 1"));
        }
        self.check_for_open()
            .map_err(VaultError::KdfParamsTooCostly)
    }

    /// Checks a header's parameters before any Argon2 work: the ceiling, and Argon2's own floor.
    fn check_for_open(self) -> Result<(), &'static str> {
        if self.m_kib > Self::MAXIMUM.m_kib {
            return Err("memory cost above 1 GiB");
        }
        if self.t > Self::MAXIMUM.t {
            return Err("more than 10 passes");
        }
        if self.p > Self::MAXIMUM.p {
            return Err("parallelism above 16");
        }
        if self.p == 0 {
            return Err("parallelism of 0");
        }
        if self.t == 0 {
            return Err("zero passes");
        }
        if self.m_kib < 8 * self.p {
            return Err("memory cost below 8 KiB per lane");
        }
        Ok(())
    }
}

impl Default for KdfParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Text the person typed as a passphrase, with its Unicode NFC form.
///
/// The core does not carry Unicode's normalisation tables itself unless its `nfc` feature is on
/// (then `str` and `String` are `Typed`, normalised by `unicode-normalization`). The wallet page
/// leaves the feature off and gives [`Normalized`], whose NFC form is the browser's
/// `String.prototype.normalize("NFC")`: the same Unicode algorithm, without ~100 KiB of tables
/// in the page's wasm. A browser test checks the two agree (`web/tests/nfc.rs`).
pub trait Typed {
    /// The text as typed.
    fn as_typed(&self) -> &str;
    /// Its NFC form.
    fn nfc(&self) -> Zeroizing<String>;
}

#[cfg(feature = "nfc")]
impl Typed for str {
    fn as_typed(&self) -> &str {
        self
    }

    fn nfc(&self) -> Zeroizing<String> {
        use unicode_normalization::UnicodeNormalization;
        let mut nfc = Zeroizing::new(String::with_capacity(self.len()));
        nfc.extend(UnicodeNormalization::nfc(self));
        nfc
    }
}

#[cfg(feature = "nfc")]
impl Typed for String {
    fn as_typed(&self) -> &str {
        self
    }

    fn nfc(&self) -> Zeroizing<String> {
        self.as_str().nfc()
    }
}

/// A typed passphrase with the NFC form the platform computed for it. Both are wiped on drop;
/// its `Debug` prints `Normalized(..)`.
pub struct Normalized {
    typed: Zeroizing<String>,
    nfc: Zeroizing<String>,
}

impl Normalized {
    /// `typed` as the person typed it and `nfc`, its NFC form as the platform normalised it.
    /// ASCII text is its own NFC, so for it the platform's answer is not used: a page script
    /// that replaced `String.prototype.normalize` cannot change what an ASCII passphrase
    /// derives.
    pub fn new(typed: String, nfc: String) -> Self {
        let typed = Zeroizing::new(typed);
        let nfc = Zeroizing::new(nfc);
        let nfc = if typed.is_ascii() { typed.clone() } else { nfc };
        Self { typed, nfc }
    }
}

impl Typed for Normalized {
    fn as_typed(&self) -> &str {
        &self.typed
    }

    fn nfc(&self) -> Zeroizing<String> {
        self.nfc.clone()
    }
}

impl core::fmt::Debug for Normalized {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Normalized(..)")
    }
}

/// The person's passphrase, Unicode-normalised (NFC) before it reaches the KDF, so that the
/// same typed text opens the vault whichever keyboard, OS or input method composed it. Wiped on
/// drop; its `Debug` prints `Passphrase(..)`.
pub struct Passphrase {
    nfc: Zeroizing<String>,
    /// The text as given, when it was not already NFC: vaults made before normalisation used
    /// it, so opening falls back to it (creating and re-wrapping never do).
    as_given: Option<Zeroizing<String>>,
}

impl Passphrase {
    /// Accepts a passphrase of at least [`MIN_PASSPHRASE_CHARS`] characters (counted after
    /// NFC normalisation), normalised by `unicode-normalization`.
    #[cfg(feature = "nfc")]
    pub fn new(text: String) -> Result<Self, WeakPassphrase> {
        let text = Zeroizing::new(text);
        Self::typed(text.as_str())
    }

    /// Accepts a typed passphrase of at least [`MIN_PASSPHRASE_CHARS`] characters (counted
    /// in its NFC form).
    pub fn typed(text: &(impl Typed + ?Sized)) -> Result<Self, WeakPassphrase> {
        let nfc = text.nfc();
        if nfc.chars().count() < MIN_PASSPHRASE_CHARS {
            return Err(WeakPassphrase("shorter than 8 characters"));
        }
        let as_given =
            (*nfc != text.as_typed()).then(|| Zeroizing::new(text.as_typed().to_owned()));
        Ok(Self { nfc, as_given })
    }

    fn as_bytes(&self) -> &[u8] {
        self.nfc.as_bytes()
    }

    /// The passphrase as given, if it differs from its NFC form (for opening older vaults).
    fn as_given(&self) -> Option<Self> {
        self.as_given.as_ref().map(|text| Self {
            nfc: text.clone(),
            as_given: None,
        })
    }
}

impl core::fmt::Debug for Passphrase {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Passphrase(..)")
    }
}

/// The public layout of a vault: everything in it is either public or ciphertext.
#[derive(Clone, PartialEq, Eq)]
pub struct Envelope {
    params: KdfParams,
    salt: [u8; SALT_LEN],
    vault_id: [u8; ID_LEN],
    wrap_nonce: [u8; NONCE_LEN],
    wrapped_key: [u8; WRAPPED_LEN],
    seal_nonce: [u8; NONCE_LEN],
    /// Ciphertext and tag. Invariant: at least `TAG_LEN` and at most `u32::MAX` bytes.
    sealed: Vec<u8>,
}

impl Envelope {
    /// Parses the byte layout described in the module docs. Never panics; refuses hostile KDF
    /// parameters (see [`KdfParams::MAXIMUM`]) with an [`EnvelopeError`] naming the problem.
    pub fn parse(bytes: &[u8]) -> Result<Self, EnvelopeError> {
        let mut r = Reader(bytes);
        if r.array::<8>()? != MAGIC {
            return Err(EnvelopeError("not a Tacit vault"));
        }
        if u16::from_be_bytes(r.array()?) != FORMAT_VERSION {
            return Err(EnvelopeError("unsupported format version"));
        }
        if u8::from_be_bytes(r.array()?) != KDF_ARGON2ID_V13 {
            return Err(EnvelopeError("unknown key derivation function"));
        }
        let params = KdfParams {
            m_kib: u32::from_be_bytes(r.array()?),
            t: u32::from_be_bytes(r.array()?),
            p: u32::from_be_bytes(r.array()?),
        };
        params.check_for_open().map_err(EnvelopeError)?;
        let salt = r.array()?;
        let vault_id = r.array()?;
        let wrap_nonce = r.array()?;
        let wrapped_key = r.array()?;
        let seal_nonce = r.array()?;
        let sealed_len = usize::try_from(u32::from_be_bytes(r.array()?))
            .map_err(|_| EnvelopeError("sealed profile too long"))?;
        if sealed_len < TAG_LEN {
            return Err(EnvelopeError("sealed profile shorter than its tag"));
        }
        let sealed = r.take(sealed_len)?.to_vec();
        if !r.0.is_empty() {
            return Err(EnvelopeError("bytes after the sealed profile"));
        }
        Ok(Self {
            params,
            salt,
            vault_id,
            wrap_nonce,
            wrapped_key,
            seal_nonce,
            sealed,
        })
    }

    /// The envelope's bytes; `parse(&e.to_bytes()) == Ok(e)`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FIXED_LEN + self.sealed.len());
        out.extend_from_slice(&self.header());
        out.extend_from_slice(&self.wrap_nonce);
        out.extend_from_slice(&self.wrapped_key);
        out.extend_from_slice(&self.seal_nonce);
        // The invariant on `sealed` makes the fallback unreachable.
        let sealed_len = u32::try_from(self.sealed.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&sealed_len.to_be_bytes());
        out.extend_from_slice(&self.sealed);
        out
    }

    /// The Argon2id parameters in the header.
    pub fn params(&self) -> KdfParams {
        self.params
    }

    /// The random id fixed for the vault's life.
    pub fn vault_id(&self) -> &[u8; ID_LEN] {
        &self.vault_id
    }

    /// The Argon2id salt (changes with the passphrase).
    pub fn salt(&self) -> &[u8; SALT_LEN] {
        &self.salt
    }

    /// The sealed profile: ciphertext followed by the tag.
    pub fn sealed_bytes(&self) -> &[u8] {
        &self.sealed
    }

    /// The nonce the profile was sealed under (changes with every reseal).
    pub fn seal_nonce(&self) -> &[u8; NONCE_LEN] {
        &self.seal_nonce
    }

    /// Magic through vault id: the wrap's associated data.
    fn header(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        let fields: [&[u8]; 8] = [
            &MAGIC,
            &FORMAT_VERSION.to_be_bytes(),
            &KDF_ARGON2ID_V13.to_be_bytes(),
            &self.params.m_kib.to_be_bytes(),
            &self.params.t.to_be_bytes(),
            &self.params.p.to_be_bytes(),
            &self.salt,
            &self.vault_id,
        ];
        for (dst, src) in out.iter_mut().zip(fields.into_iter().flatten()) {
            *dst = *src;
        }
        out
    }

    /// Magic, version, vault id and label: the seal's associated data.
    fn seal_aad(&self) -> Vec<u8> {
        [
            &MAGIC[..],
            &FORMAT_VERSION.to_be_bytes(),
            &self.vault_id,
            SEAL_LABEL,
        ]
        .concat()
    }
}

impl core::fmt::Debug for Envelope {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Envelope")
            .field("vault_id", &hex::encode(self.vault_id))
            .field("params", &self.params)
            .field("sealed_len", &self.sealed.len())
            .finish_non_exhaustive()
    }
}

/// Checked reading from the front of a byte slice; running out is an [`EnvelopeError`].
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], EnvelopeError> {
        let (head, rest) = self
            .0
            .split_at_checked(n)
            .ok_or(EnvelopeError("truncated"))?;
        self.0 = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], EnvelopeError> {
        self.take(N)?
            .try_into()
            .map_err(|_| EnvelopeError("truncated"))
    }
}

/// An open vault: the envelope and the unwrapped data key. Wiped on drop; its `Debug` shows
/// the vault id and parameters only.
pub struct Vault {
    envelope: Envelope,
    data_key: Zeroizing<[u8; KEY_LEN]>,
}

impl Vault {
    /// Seals `profile` in a new vault under `passphrase`, with a fresh data key. Runs Argon2id
    /// once at `params`, which must lie within [`KdfParams::MINIMUM`]..=[`KdfParams::MAXIMUM`].
    pub fn create(
        profile: &Profile,
        passphrase: &Passphrase,
        params: KdfParams,
        rng: &mut impl CryptoRng,
    ) -> Result<Self, VaultError> {
        params.check_for_create()?;
        let mut salt = [0u8; SALT_LEN];
        rng.fill_bytes(&mut salt);
        let mut vault_id = [0u8; ID_LEN];
        rng.fill_bytes(&mut vault_id);
        let mut data_key = Zeroizing::new([0u8; KEY_LEN]);
        rng.fill_bytes(data_key.as_mut_slice());
        let mut vault = Self {
            envelope: Envelope {
                params,
                salt,
                vault_id,
                wrap_nonce: [0; NONCE_LEN],
                wrapped_key: [0; WRAPPED_LEN],
                seal_nonce: [0; NONCE_LEN],
                sealed: Vec::new(),
            },
            data_key,
        };
        vault.envelope = vault.wrapped(vault.envelope.clone(), passphrase, rng)?;
        vault.reseal(profile, rng)?;
        Ok(vault)
    }

    /// Opens a vault's bytes: the same as [`Vault::unlock`] ([`OpenError::CannotOpen`], or
    /// [`OpenError::NewerFormat`]).
    pub fn open(bytes: &[u8], passphrase: &Passphrase) -> Result<(Self, Profile), OpenError> {
        Self::unlock(bytes, passphrase)
    }

    /// Opens a vault's bytes and reads its profile record, migrating an older format.
    ///
    /// Every failure is [`OpenError::CannotOpen`], whatever its cause, with one exception
    /// reported only after the passphrase has authenticated the vault: a profile record from a
    /// newer Tacit is [`OpenError::NewerFormat`] (the caller must leave the vault as it is).
    pub fn unlock(bytes: &[u8], passphrase: &Passphrase) -> Result<(Self, Profile), OpenError> {
        let envelope = Envelope::parse(bytes).map_err(|_| OpenError::CannotOpen)?;
        let data_key = match Self::unwrap_key(&envelope, passphrase) {
            Some(key) => key,
            None => passphrase
                .as_given()
                .and_then(|given| Self::unwrap_key(&envelope, &given))
                .ok_or(OpenError::CannotOpen)?,
        };
        let mut plaintext = Zeroizing::new(envelope.sealed.clone());
        cipher(&data_key)
            .decrypt_in_place(
                &Nonce::from(envelope.seal_nonce),
                &envelope.seal_aad(),
                &mut *plaintext,
            )
            .map_err(|_| OpenError::CannotOpen)?;
        let profile = Profile::from_record(&plaintext).map_err(|e| match e {
            ReadError::Newer(newer) => OpenError::NewerFormat(newer),
            ReadError::Malformed(_) => OpenError::CannotOpen,
        })?;
        Ok((Self { envelope, data_key }, profile))
    }

    /// The data key, if `passphrase` unwraps it (which authenticates every header byte).
    fn unwrap_key(
        envelope: &Envelope,
        passphrase: &Passphrase,
    ) -> Option<Zeroizing<[u8; KEY_LEN]>> {
        let data_key = {
            let kek = derive_kek(passphrase, &envelope.salt, envelope.params).ok()?;
            let (ciphertext, tag) = envelope.wrapped_key.split_at_checked(KEY_LEN)?;
            let tag: &[u8; TAG_LEN] = tag.try_into().ok()?;
            // Decrypted in place: the key only ever exists inside `Zeroizing`.
            let mut data_key = Zeroizing::new(<[u8; KEY_LEN]>::try_from(ciphertext).ok()?);
            cipher(&kek)
                .decrypt_inout_detached(
                    &Nonce::from(envelope.wrap_nonce),
                    &envelope.header(),
                    data_key.as_mut_slice().into(),
                    &Tag::from(*tag),
                )
                .ok()?;
            data_key
        };
        Some(data_key)
    }

    /// The envelope's bytes, to be stored by the caller.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.envelope.to_bytes()
    }

    /// The envelope (public layout and ciphertext).
    pub fn envelope(&self) -> &Envelope {
        &self.envelope
    }

    /// The Argon2id parameters the data key is currently wrapped under.
    pub fn params(&self) -> KdfParams {
        self.envelope.params
    }

    /// Seals `profile` again under the same data key with a fresh nonce. No Argon2 run.
    pub fn reseal(&mut self, profile: &Profile, rng: &mut impl CryptoRng) -> Result<(), SealError> {
        let plaintext = profile_bytes(profile)?;
        let mut seal_nonce = [0u8; NONCE_LEN];
        rng.fill_bytes(&mut seal_nonce);
        let sealed = cipher(&self.data_key)
            .encrypt(
                &Nonce::from(seal_nonce),
                Payload {
                    msg: &plaintext,
                    aad: &self.envelope.seal_aad(),
                },
            )
            .map_err(|_| SealError("the profile could not be encrypted"))?;
        if u32::try_from(sealed.len()).is_err() {
            return Err(SealError("the profile is too large"));
        }
        self.envelope.seal_nonce = seal_nonce;
        self.envelope.sealed = sealed;
        Ok(())
    }

    /// Seals companion data (for example the disclosure ledger) under the vault's data key:
    /// `nonce (12) || ciphertext+tag`, bound by associated data to this vault and to `label`
    /// (`magic | version | vault id | "aux:" | label`), so it opens only with the same vault
    /// and label. No Argon2 run.
    pub fn seal_aux(
        &self,
        label: &str,
        plaintext: &[u8],
        rng: &mut impl CryptoRng,
    ) -> Result<Vec<u8>, SealError> {
        let mut nonce = [0u8; NONCE_LEN];
        rng.fill_bytes(&mut nonce);
        let sealed = cipher(&self.data_key)
            .encrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: plaintext,
                    aad: &self.aux_aad(label),
                },
            )
            .map_err(|_| SealError("companion data could not be encrypted"))?;
        Ok([&nonce[..], &sealed].concat())
    }

    /// Opens what [`Vault::seal_aux`] sealed with the same label. Any failure is
    /// [`OpenError::CannotOpen`].
    pub fn open_aux(&self, label: &str, sealed: &[u8]) -> Result<Zeroizing<Vec<u8>>, OpenError> {
        let (nonce, body) = sealed
            .split_at_checked(NONCE_LEN)
            .ok_or(OpenError::CannotOpen)?;
        let nonce: [u8; NONCE_LEN] = nonce.try_into().map_err(|_| OpenError::CannotOpen)?;
        cipher(&self.data_key)
            .decrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: body,
                    aad: &self.aux_aad(label),
                },
            )
            .map(Zeroizing::new)
            .map_err(|_| OpenError::CannotOpen)
    }

    fn aux_aad(&self, label: &str) -> Vec<u8> {
        [
            &MAGIC[..],
            &FORMAT_VERSION.to_be_bytes(),
            &self.envelope.vault_id,
            b"aux:",
            label.as_bytes(),
        ]
        .concat()
    }

    /// Re-wraps the data key under `new` with a fresh salt and `params`. The sealed profile and
    /// its nonce are untouched. Runs Argon2id once. On error the vault is unchanged.
    pub fn change_passphrase(
        &mut self,
        new: &Passphrase,
        params: KdfParams,
        rng: &mut impl CryptoRng,
    ) -> Result<(), VaultError> {
        params.check_for_create()?;
        let mut envelope = self.envelope.clone();
        envelope.params = params;
        rng.fill_bytes(&mut envelope.salt);
        self.envelope = self.wrapped(envelope, new, rng)?;
        Ok(())
    }

    /// `envelope` with the data key wrapped under a fresh nonce and a key derived from
    /// `passphrase` at the envelope's salt and parameters.
    fn wrapped(
        &self,
        mut envelope: Envelope,
        passphrase: &Passphrase,
        rng: &mut impl CryptoRng,
    ) -> Result<Envelope, SealError> {
        rng.fill_bytes(&mut envelope.wrap_nonce);
        let kek = derive_kek(passphrase, &envelope.salt, envelope.params)
            .map_err(|_| SealError("key derivation failed"))?;
        let mut buffer = self.data_key.clone();
        let tag = cipher(&kek)
            .encrypt_inout_detached(
                &Nonce::from(envelope.wrap_nonce),
                &envelope.header(),
                buffer.as_mut_slice().into(),
            )
            .map_err(|_| SealError("the data key could not be wrapped"))?;
        for (dst, src) in envelope
            .wrapped_key
            .iter_mut()
            .zip(buffer.iter().chain(tag.iter()))
        {
            *dst = *src;
        }
        Ok(envelope)
    }
}

impl core::fmt::Debug for Vault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Vault")
            .field("vault_id", &hex::encode(self.envelope.vault_id))
            .field("params", &self.envelope.params)
            .finish_non_exhaustive()
    }
}

/// The key-encryption key: Argon2id v0x13 of the passphrase, 32 bytes, wiped on drop.
///
/// Argon2's working memory (m KiB) is allocated here rather than inside the argon2 crate, which
/// frees it unwiped: it is reserved fallibly (an allocation failure is an error, not an abort)
/// and wiped on drop.
fn derive_kek(
    passphrase: &Passphrase,
    salt: &[u8; SALT_LEN],
    params: KdfParams,
) -> Result<Zeroizing<[u8; KEY_LEN]>, argon2::Error> {
    let params = Params::new(params.m_kib, params.t, params.p, Some(KEY_LEN))?;
    let mut memory: Zeroizing<Vec<Block>> = Zeroizing::new(Vec::new());
    memory
        .try_reserve_exact(params.block_count())
        .map_err(|_| argon2::Error::OutOfMemory)?;
    memory.resize(params.block_count(), Block::new());
    let mut kek = Zeroizing::new([0u8; KEY_LEN]);
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params).hash_password_into_with_memory(
        passphrase.as_bytes(),
        salt,
        kek.as_mut_slice(),
        memory.as_mut_slice(),
    )?;
    Ok(kek)
}

/// AES-256-GCM keyed without copying the key out of its `Zeroizing` home.
fn cipher(key: &Zeroizing<[u8; KEY_LEN]>) -> Aes256Gcm {
    let key: &[u8; KEY_LEN] = key;
    Aes256Gcm::new(<&Key<Aes256Gcm>>::from(key))
}

/// The profile's JSON in a buffer sized exactly beforehand, so that no reallocation leaves an
/// unwiped copy behind.
fn profile_bytes(profile: &Profile) -> Result<Zeroizing<Vec<u8>>, SealError> {
    let fail = |_| SealError("the profile could not be serialised");
    let mut counter = ByteCounter(0);
    serde_json::to_writer(&mut counter, profile).map_err(fail)?;
    let mut bytes = Zeroizing::new(Vec::with_capacity(counter.0));
    serde_json::to_writer(&mut *bytes, profile).map_err(fail)?;
    Ok(bytes)
}

/// A writer that only counts.
struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    use super::*;
    use crate::format::{NewerFormat, Record};
    use crate::profile::{PROFILE_FORMAT, ProfileInput};

    const PASS: &str = "correct horse battery staple";

    fn profile() -> Profile {
        let input = ProfileInput::new(2_840_000, "EUR", "1990-02-28", "nordhafen", ["asthma"]);
        Profile::new(&input, time::macros::date!(2026 - 12 - 01)).unwrap()
    }

    /// A vault whose sealed plaintext is `plaintext`, as any build (or a hostile one holding
    /// the key) could seal it.
    fn vault_sealing(plaintext: &[u8]) -> Vec<u8> {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let pass = Passphrase::new(PASS.to_owned()).unwrap();
        let mut vault = Vault::create(&profile(), &pass, KdfParams::MINIMUM, &mut rng).unwrap();
        vault.envelope.sealed = cipher(&vault.data_key)
            .encrypt(
                &Nonce::from(vault.envelope.seal_nonce),
                Payload {
                    msg: plaintext,
                    aad: &vault.envelope.seal_aad(),
                },
            )
            .unwrap();
        vault.to_bytes()
    }

    fn current_json() -> String {
        serde_json::to_string(&profile()).unwrap()
    }

    #[test]
    fn vault_profile_record_from_a_newer_tacit_is_refused_as_such() {
        let newer = current_json().replacen(
            &format!("\"format\":{PROFILE_FORMAT}"),
            &format!("\"format\":{},\"hobby\":\"chess\"", PROFILE_FORMAT + 1),
            1,
        );
        assert!(newer.contains("hobby"), "{newer}");
        let bytes = vault_sealing(newer.as_bytes());
        let pass = Passphrase::new(PASS.to_owned()).unwrap();
        let expected = NewerFormat {
            record: Record::Profile,
            found: PROFILE_FORMAT + 1,
            known: PROFILE_FORMAT,
        };
        assert_eq!(
            Vault::unlock(&bytes, &pass).unwrap_err(),
            OpenError::NewerFormat(expected)
        );
        assert_eq!(
            Vault::open(&bytes, &pass).unwrap_err(),
            OpenError::NewerFormat(expected)
        );
        assert!(
            OpenError::NewerFormat(expected)
                .to_string()
                .contains("made by a newer Tacit")
        );
        // Without the passphrase nothing is revealed, not even that the record is newer.
        let wrong = Passphrase::new("not the passphrase".to_owned()).unwrap();
        assert_eq!(
            Vault::unlock(&bytes, &wrong).unwrap_err(),
            OpenError::CannotOpen
        );
    }

    #[test]
    fn vault_opens_every_known_profile_format_and_refuses_malformed_ones() {
        let pass = Passphrase::new(PASS.to_owned()).unwrap();
        let current = current_json();
        let v1 = current.replacen(&format!("\"format\":{PROFILE_FORMAT},"), "", 1);
        assert!(!v1.contains("format"), "{v1}");
        for (text, opens) in [
            (current.clone(), true),
            (v1.clone(), true),
            // An unknown field in a known format, or a field in the wrong format, is refused.
            (current.replacen('{', "{\"ssn\":\"123\",", 1), false),
            (v1.replacen('{', "{\"ssn\":\"123\",", 1), false),
            (v1.replacen('{', "{\"format\":1,", 1), false),
            (v1.replacen('{', "{\"format\":0,", 1), false),
            (current.replacen("\"format\"", "\"Format\"", 1), false),
            ("{}".to_owned(), false),
            ("not json".to_owned(), false),
        ] {
            let result = Vault::unlock(&vault_sealing(text.as_bytes()), &pass);
            match result {
                Ok((_, opened)) => {
                    assert!(opens, "{text} opened");
                    assert_eq!(opened, profile());
                }
                Err(e) => {
                    assert!(!opens, "{text}: {e:?}");
                    assert_eq!(e, OpenError::CannotOpen, "{text}");
                }
            }
        }
    }

    #[test]
    fn vault_reseal_writes_the_current_format() {
        let bytes = vault_sealing(
            current_json()
                .replacen(&format!("\"format\":{PROFILE_FORMAT},"), "", 1)
                .as_bytes(),
        );
        let pass = Passphrase::new(PASS.to_owned()).unwrap();
        let (mut vault, migrated) = Vault::unlock(&bytes, &pass).unwrap();
        vault
            .reseal(&migrated, &mut ChaCha20Rng::seed_from_u64(6))
            .unwrap();
        let plaintext = cipher(&vault.data_key)
            .decrypt(
                &Nonce::from(vault.envelope.seal_nonce),
                Payload {
                    msg: &vault.envelope.sealed,
                    aad: &vault.envelope.seal_aad(),
                },
            )
            .unwrap();
        assert!(
            String::from_utf8(plaintext)
                .unwrap()
                .starts_with(&format!("{{\"format\":{PROFILE_FORMAT},"))
        );
    }
}
