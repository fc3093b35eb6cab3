//! # wallet-core
//!
//! Tacit's pure core. It promises:
//! - a **profile** (income, date of birth, district, conditions) validated on entry, whose `Debug`
//!   prints nothing and whose memory is wiped on drop;
//! - a **vault**: an Argon2id + AES-256-GCM envelope, versioned, with header fields bound as
//!   associated data and one uninformative error for every way opening can fail (but one: a
//!   profile written by a newer Tacit, said once the passphrase has opened the vault);
//! - **upgradable records** ([`format`](mod@format)): the sealed profile and the disclosure
//!   memory carry a format number; older formats are read by frozen structs and migrated, newer
//!   ones refused;
//! - **claims** with public parameters only, whose evaluation yields a boolean and nothing else;
//! - a **disclosure ledger** that declines any question that would narrow what has been revealed
//!   below a floor, deciding from the question history alone, never from the secret;
//! - a hash-chained **comparison log** that holds comparisons only, with a byte-stable export;
//! - the person's **record** ([`history`]): the open session's log, receipts and applications
//!   and the history of ended sessions, sealed with the memory and merged append-only;
//! - **receipt** payloads with canonical signing bytes and an Ed25519 verifier.
//!
//! It refuses to touch the outside world: no clock (dates and times are arguments), no
//! randomness of its own (a `rand_core::CryptoRng` is passed in), no I/O, no browser types.

pub mod catalogue;
pub mod claim;
pub mod error;
pub mod form;
pub mod format;
pub mod history;
pub mod ledger;
pub mod log;
pub mod profile;
pub mod receipt;
#[cfg(feature = "schema")]
pub mod schema;
pub mod store;
pub mod types;
pub mod vault;

pub use claim::{
    Attribute, Claim, ClaimKind, Evaluation, MoneyWords, Outcome, Wording, age_cutoff, evaluate,
};
pub use error::{
    ChainBroken, ClaimError, EnvelopeError, Error, Field, LogError, MalformedReceipt, OpenError,
    ProfileError, SealError, SignableError, StaleWrite, StoreError, StructureError, TextError,
    VaultError, VerifyError, WeakPassphrase,
};
pub use format::{NewerFormat, ReadError};
pub use ledger::{Answer, Assessment, Bits, DisclosureLedger, Epochs, Floors, Preview};
pub use log::{ComparisonLog, Hash, LogEntry, rechain, verify_entries};
pub use profile::{ConditionCode, Currency, DistrictId, LanguageTag, Money, Profile, ProfileInput};
pub use receipt::{
    KeySet, KeyStatus, Provenance, PublicKeyEntry, PublishedKeys, ReceiptPayload, RevokedReceipts,
    SignedReceipt, VerifiedReceipt, derive_key_id, revocation_digest,
};
pub use types::{GrantId, KeyId, Nonce, Origin, SessionId, Timestamp, ToolName};
pub use vault::{Envelope, KdfParams, Normalized, Passphrase, Typed, Vault};
