//! The crate's errors: one type per operation family, so a caller can match exhaustively on
//! exactly what the operation it called can fail with, and [`Error`], the umbrella for a caller
//! that really mixes operations (`?` converts every family into it).
//!
//! Messages name fields and reasons, never a value from the profile.
//!
//! | operation | error |
//! |---|---|
//! | [`crate::Origin::parse`], the tokens (`Nonce`, `GrantId`, …), [`crate::Hash`] from text | [`TextError`] |
//! | [`crate::Profile::new`], `edited`, the profile fields' `parse`, [`crate::profile::parse_date`] | [`ProfileError`] |
//! | the [`crate::Claim`] constructors, `Claim::parse_canonical`, [`crate::evaluate`] | [`ClaimError`] |
//! | [`crate::verify_entries`], [`crate::ComparisonLog::from_entries`], `verify`, `verify_with_head` | [`ChainBroken`] |
//! | [`crate::ComparisonLog::import`], `import_bytes` | [`LogError`] |
//! | [`crate::SignedReceipt::parse`], [`crate::KeySet::parse`] | [`MalformedReceipt`] |
//! | [`crate::ReceiptPayload::new`], `from_entries`, `check_structure` | [`StructureError`] |
//! | [`crate::ReceiptPayload::check_signable`] | [`SignableError`] |
//! | [`crate::receipt::verify`] | [`VerifyError`] |
//! | [`crate::Passphrase::new`] | [`WeakPassphrase`] |
//! | [`crate::Envelope::parse`] | [`EnvelopeError`] |
//! | [`crate::KdfParams::check_for_create`], [`crate::Vault::create`], `change_passphrase` | [`VaultError`] |
//! | [`crate::Vault::reseal`], `seal_aux` | [`SealError`] |
//! | [`crate::Vault::open`], `unlock`, `open_aux` | [`OpenError`] |
//! | [`crate::store::StoredVault`]'s methods, [`crate::store::MemoryFloors::decode`] | [`StoreError`] |
//! | [`crate::store::next_generation`], `next_profile_generation` | [`StaleWrite`] |

use crate::format::NewerFormat;

/// A profile field, named in validation errors; what the profile form shows of it is in
/// [`crate::form`].
pub use crate::form::Field;

/// A text field for the log or the wire (origin, tool name, grant id, nonce, hash, …) is not
/// acceptable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("log field {field}: {reason}")]
pub struct TextError {
    pub field: &'static str,
    pub reason: &'static str,
}

/// A profile field failed validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct ProfileError {
    pub field: Field,
    pub reason: &'static str,
}

/// Why a claim could not be made or evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    /// A claim's public parameters are malformed (the constructors and
    /// `Claim::parse_canonical`; never [`crate::evaluate`]).
    #[error("invalid claim: {0}")]
    Invalid(&'static str),

    /// A well-formed claim that cannot be asked of this profile (only [`crate::evaluate`]); the
    /// claim catalogue's [`crate::claim::Unaskable`] says why.
    #[error("invalid claim: {0}")]
    NotAskable(#[from] crate::claim::Unaskable),
}

/// The comparison log's hash chain does not hold at the entry with this index (the number of
/// entries when only the expected head disagrees).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("log chain broken at entry {index}")]
pub struct ChainBroken {
    pub index: usize,
}

/// Why a log export could not be imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    /// The text is not an export this version writes; `line` is 1-based.
    #[error("log import failed at line {line}: {reason}")]
    Import { line: usize, reason: &'static str },

    /// The lines parse but their chain does not hold.
    #[error(transparent)]
    ChainBroken(#[from] ChainBroken),
}

/// A receipt or key set could not be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("receipt malformed: {0}")]
pub struct MalformedReceipt(pub &'static str);

/// What a payload's structure can fail ([`crate::ReceiptPayload::check_structure`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StructureError {
    /// The version, provenance, audience of an entry, or the window is wrong.
    #[error(transparent)]
    Malformed(#[from] MalformedReceipt),

    /// The entries' chain does not hold, or does not end at `log_head`.
    #[error(transparent)]
    ChainBroken(#[from] ChainBroken),
}

/// Why a signer refuses to sign a payload ([`crate::ReceiptPayload::check_signable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignableError {
    /// See [`StructureError::Malformed`].
    #[error(transparent)]
    Malformed(MalformedReceipt),

    /// See [`StructureError::ChainBroken`].
    #[error(transparent)]
    ChainBroken(ChainBroken),

    /// The payload's validity window has ended by the signer's clock.
    #[error("receipt expired")]
    Expired,

    /// The payload says it was issued more than two minutes from the signer's clock.
    #[error("receipt issued_at is more than two minutes from the signer's clock")]
    IssuedAtOutOfRange,
}

impl From<StructureError> for SignableError {
    fn from(error: StructureError) -> Self {
        match error {
            StructureError::Malformed(e) => SignableError::Malformed(e),
            StructureError::ChainBroken(e) => SignableError::ChainBroken(e),
        }
    }
}

/// Why a signed receipt does not verify ([`crate::receipt::verify`]), in the order checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The receipt names a key the verifier does not know, or one not valid when it was issued.
    #[error("receipt signed by an unknown key")]
    UnknownKey,

    /// The receipt's signature does not verify under its key.
    #[error("receipt signature does not verify")]
    BadSignature,

    /// See [`StructureError::Malformed`] (also what parsing a receipt fails with).
    #[error(transparent)]
    Malformed(#[from] MalformedReceipt),

    /// See [`StructureError::ChainBroken`].
    #[error(transparent)]
    ChainBroken(#[from] ChainBroken),

    /// The receipt was made for another site.
    #[error("receipt audience does not match")]
    AudienceMismatch,

    /// The receipt answers another nonce than the one the site issued.
    #[error("receipt nonce does not match")]
    NonceMismatch,

    /// The receipt's validity window has not started.
    #[error("receipt not yet valid")]
    NotYetValid,

    /// The receipt's validity window has passed.
    #[error("receipt expired")]
    Expired,

    /// The signer revoked the receipt: the install it signed it for was revoked before the
    /// receipt expired ([`crate::receipt::PublishedKeys::verify`]).
    #[error("receipt revoked by its signer")]
    Revoked,
}

impl From<StructureError> for VerifyError {
    fn from(error: StructureError) -> Self {
        match error {
            StructureError::Malformed(e) => VerifyError::Malformed(e),
            StructureError::ChainBroken(e) => VerifyError::ChainBroken(e),
        }
    }
}

/// A passphrase was refused when set. The message never includes the passphrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("passphrase too weak: {0}")]
pub struct WeakPassphrase(pub &'static str);

/// The bytes are not a well-formed vault envelope ([`crate::Envelope::parse`]). Opening never
/// says this: it is [`OpenError::CannotOpen`] there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("vault envelope malformed: {0}")]
pub struct EnvelopeError(pub &'static str);

/// Sealing failed (key derivation out of memory, or an encryption error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the vault could not be sealed: {0}")]
pub struct SealError(pub &'static str);

/// Why a vault could not be created or given a new passphrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VaultError {
    /// Parameters below the allowed floor.
    #[error("vault parameters too weak: {0}")]
    WeakKdfParams(&'static str),

    /// Parameters above what any vault will agree to open.
    #[error("vault parameters above what opening allows: {0}")]
    KdfParamsTooCostly(&'static str),

    /// Sealing failed (never from [`crate::KdfParams::check_for_create`]).
    #[error(transparent)]
    Seal(#[from] SealError),
}

/// Why a vault (or what is sealed with it) did not open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// Wrong passphrase, tampering, truncation, a hostile header, an undecodable profile:
    /// deliberately one uninformative variant.
    #[error("the passphrase is wrong or the vault is damaged")]
    CannotOpen,

    /// The passphrase opened the vault, but its profile record was written by a newer Tacit
    /// (never from [`crate::Vault::open_aux`]).
    #[error(transparent)]
    NewerFormat(NewerFormat),
}

/// What the stored record around a vault can fail with ([`crate::store`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// A stored record is not a Tacit profile record.
    #[error("stored profile record malformed: {0}")]
    Format(&'static str),

    /// The record's envelope is not a well-formed vault.
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),

    /// The disclosure memory could not be sealed.
    #[error(transparent)]
    Seal(#[from] SealError),

    /// A used vault's disclosure memory is missing, damaged, or older than the newest copy
    /// this browser wrote (a rollback). The wallet refuses rather than answer from a fresh
    /// memory.
    #[error(
        "the disclosure memory stored with this profile is missing, damaged or older than the last one saved here; the wallet will not answer from a fresh memory"
    )]
    MemoryUnreadable,

    /// The disclosure memory was written by a newer Tacit. Reported only once the vault's key
    /// authenticated it; the record is left unchanged.
    #[error(transparent)]
    NewerFormat(#[from] NewerFormat),
}

/// Saving would overwrite a newer copy of the profile written elsewhere (another tab).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the profile was changed in another tab or window; reload before saving")]
pub struct StaleWrite;

/// Any wallet-core error: the umbrella for a caller that mixes operations. Every family converts
/// into it with `?`; its message is the family's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    Claim(#[from] ClaimError),
    #[error(transparent)]
    Chain(#[from] ChainBroken),
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    Receipt(#[from] MalformedReceipt),
    #[error(transparent)]
    Structure(#[from] StructureError),
    #[error(transparent)]
    Signable(#[from] SignableError),
    #[error(transparent)]
    Verify(#[from] VerifyError),
    #[error(transparent)]
    Passphrase(#[from] WeakPassphrase),
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),
    #[error(transparent)]
    Seal(#[from] SealError),
    #[error(transparent)]
    Vault(#[from] VaultError),
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    StaleWrite(#[from] StaleWrite),
}
