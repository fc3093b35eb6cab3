//! The crate's one error type. Messages name fields and reasons, never a value from the profile.

/// A profile field, named in validation errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Income,
    Currency,
    DateOfBirth,
    District,
    Conditions,
    PreferredLanguage,
}

impl Field {
    /// The profile form's fields, in the order the person meets them. A test checks that this
    /// is exactly the [`crate::Attribute::form_fields`] of every attribute, in order.
    pub const FORM: [Field; 5] = [
        Field::Income,
        Field::Currency,
        Field::DateOfBirth,
        Field::District,
        Field::Conditions,
    ];

    /// The id of the form element that edits this field (`f-income`); `None` for what the
    /// form does not show.
    pub const fn input_id(self) -> Option<&'static str> {
        match self {
            Field::Income => Some("f-income"),
            Field::Currency => Some("f-currency"),
            Field::DateOfBirth => Some("f-dob"),
            Field::District => Some("f-district"),
            Field::Conditions => Some("f-conditions"),
            Field::PreferredLanguage => None,
        }
    }

    /// The field's name as the page and the tools spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Field::Income => "income",
            Field::Currency => "currency",
            Field::DateOfBirth => "date_of_birth",
            Field::District => "district",
            Field::Conditions => "conditions",
            Field::PreferredLanguage => "preferred_language",
        }
    }
}

impl core::fmt::Display for Field {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that can go wrong in wallet-core.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A profile field failed validation.
    #[error("{field}: {reason}")]
    InvalidProfile { field: Field, reason: &'static str },

    /// A claim's public parameters are malformed.
    #[error("invalid claim: {0}")]
    InvalidClaim(&'static str),

    /// An income claim is in another currency than the profile's; Tacit never converts.
    #[error(
        "invalid claim: the limit's currency differs from the profile's; amounts are never converted"
    )]
    CurrencyMismatch,

    /// Creating a vault with parameters below the allowed floor.
    #[error("vault parameters too weak: {0}")]
    WeakKdfParams(&'static str),

    /// The envelope's bytes are not a well-formed vault (used by `Envelope::parse`).
    #[error("vault envelope malformed: {0}")]
    Envelope(&'static str),

    /// Opening a vault failed: wrong passphrase, tampering, truncation or a hostile header.
    /// Deliberately one uninformative variant.
    #[error("the passphrase is wrong or the vault is damaged")]
    CannotOpen,

    /// Creating a vault, or changing its passphrase, with parameters above what any vault
    /// will agree to open.
    #[error("vault parameters above what opening allows: {0}")]
    KdfParamsTooCostly(&'static str),

    /// A passphrase was refused when set. The message never includes the passphrase.
    #[error("passphrase too weak: {0}")]
    WeakPassphrase(&'static str),

    /// Sealing the vault failed (key derivation out of memory, or an encryption error).
    #[error("the vault could not be sealed: {0}")]
    Seal(&'static str),

    /// A log export could not be imported.
    #[error("log import failed at line {line}: {reason}")]
    LogImport { line: usize, reason: &'static str },

    /// A text field for the log (origin, tool name, grant id) is not acceptable.
    #[error("log field {field}: {reason}")]
    LogField {
        field: &'static str,
        reason: &'static str,
    },

    /// The comparison log's hash chain does not hold at the entry with this index.
    #[error("log chain broken at entry {index}")]
    ChainBroken { index: usize },

    /// A receipt could not be parsed.
    #[error("receipt malformed: {0}")]
    ReceiptFormat(&'static str),

    /// The receipt's signature does not verify under its key.
    #[error("receipt signature does not verify")]
    BadSignature,

    /// The receipt names a key the verifier does not know, or one not valid when it signed.
    #[error("receipt signed by an unknown key")]
    UnknownKey,

    /// The receipt's validity window has passed.
    #[error("receipt expired")]
    Expired,

    /// A payload brought to the signer says it was issued more than two minutes from the
    /// signer's clock.
    #[error("receipt issued_at is more than two minutes from the signer's clock")]
    IssuedAtOutOfRange,

    /// The receipt's validity window has not started.
    #[error("receipt not yet valid")]
    NotYetValid,

    /// The receipt was made for another site.
    #[error("receipt audience does not match")]
    AudienceMismatch,

    /// Saving would overwrite a newer copy of the profile written elsewhere (another tab).
    #[error("the profile was changed in another tab or window; reload before saving")]
    StaleWrite,

    /// A stored record is not a Tacit profile record.
    #[error("stored profile record malformed: {0}")]
    StoreFormat(&'static str),

    /// The receipt answers another nonce than the one the site issued.
    #[error("receipt nonce does not match")]
    NonceMismatch,

    /// A used vault's disclosure memory is missing, damaged, or older than the newest copy
    /// this browser wrote (a rollback). The wallet refuses rather than answer from a fresh
    /// memory.
    #[error(
        "the disclosure memory stored with this profile is missing, damaged or older than the last one saved here; the wallet will not answer from a fresh memory"
    )]
    MemoryUnreadable,

    /// A record (the sealed profile or the disclosure memory) was written by a newer Tacit.
    /// Reported only once the vault's key authenticated it; the record is left unchanged.
    #[error(transparent)]
    NewerFormat(#[from] crate::format::NewerFormat),
}
