//! The wallet's lifecycle as a pure state machine (issue 12).
//!
//! A [`Wallet`] is [`Locked`] or [`Unlocked`]; every transition consumes it and returns the next
//! state together with the [`Effect`]s the page must carry out, in order (store this record,
//! raise that floor, fill or clear the editor, show this message, bring the tools in step). The
//! inputs are plain values: what storage holds now ([`Snapshot`]), the passphrase, the profile
//! input, `now`, an RNG. Nothing here touches a browser, a clock or storage.
//!
//! The gate ([`Gate`]) and the open vault stay values the page holds (`&mut Gate`,
//! `&mut Option<Vault>`); the wallet keeps them in step with its state: unlocked means the gate
//! holds the profile and the vault is open, and anything else is brought back to locked by
//! [`Wallet::reconcile`].
//!
//! # Rules this module owns
//! - **One lock path** ([`Wallet::lock`]): the gate forgets the profile, the credentials and
//!   every live grant, the vault is dropped, the editor is emptied, the tools are withdrawn. Every
//!   route goes through it: the lock button, the end of a session, a memory that cannot be read,
//!   an import, a deletion, a write that failed.
//! - **Memory is read-merge-write, and one transition answers**: [`Wallet::answer`] merges the
//!   stored memory in ([`Wallet::merge_stored`]), answers, and seals the memory into the stored
//!   record at the next generation with the floor raised ([`Wallet::seal_memory`]); the page runs
//!   it under one cross-tab lock, carries out its effects, and a claim's outcome reaches the
//!   agent only through [`Wallet::release`], once it is sealed.
//! - **Fail closed**: a record of this vault whose memory is missing, damaged or older than the
//!   floor, unreadable floors, a record deleted or replaced under an unlocked wallet: the wallet
//!   locks; it never answers from a fresh memory.
//! - **The editor is closed by default**: raw facts are filled in only after the passphrase is
//!   checked again ([`Wallet::open_editor`]), and cleared on close, idle, lock and every failure.
//!   A profile is saved only while the editor is open.
//! - **Delete needs the person** ([`Wallet::delete`], [`DeleteConsent`]): the passphrase that
//!   opens the stored record, a device's verified assertion while unlocked, or — for a person who
//!   forgot the passphrase, while locked — the typed [`FORGOTTEN_PHRASE`]. Nothing else deletes.
//! - **A guessable passphrase is refused** at create and change
//!   ([`crate::strength::refuse_weak`]), with the reason in words.
//! - **Import**: a backup of the same vault keeps and merges the memory; a different vault
//!   replaces the profile only after the person confirmed, and then starts with a fresh memory
//!   and without the replaced profile's credentials.

use rand_core::CryptoRng;
use wallet_core::history::{KeptApplication, KeptReceipt, PersonRecord, Sent};
use wallet_core::store::{
    Backup, MemoryFloors, MemoryOrigin, StoredVault, next_profile_generation,
};
use wallet_core::{
    Attribute, ComparisonLog, DisclosureLedger, Envelope, KdfParams, Passphrase, Profile,
    ProfileError, ProfileInput, StaleWrite, StoreError, Timestamp, Typed, Vault, VaultError,
    WeakPassphrase,
};

use crate::envelope::{Code, Refusal, envelope};
use crate::gate::Gate;
use serde_json::Value;

/// The `localStorage` key of the wallet's record (the app reads it; the boot module only asks
/// whether it is there, to draw the create or the unlock form first).
pub const RECORD_KEY: &str = "tacit.vault.v1";

/// Why the page could not read what browser storage holds (the record or the memory floors).
/// `Display` is the sentence the page shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("this browser offers no local storage")]
    NoStorage,
    #[error("local storage could not be read")]
    Unreadable,
    /// Something is stored but does not decode.
    #[error(transparent)]
    Damaged(#[from] StoreError),
}

/// Why a backup cannot be imported over what is stored ([`Wallet::import_kind`]). Nothing is
/// changed in either case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("This file is not a Tacit backup. Nothing was changed.")]
    NotABackup,
    /// What is stored cannot be read, so it cannot be told whether the backup replaces it.
    #[error("{0}. Nothing was changed.")]
    Stored(ReadError),
}

/// Why a transition failed, before the person is told. `Display` names the cause; the transition
/// frames it in its sentence where it builds the [`Effect::Message`] (wallet-core's errors say
/// theirs unchanged).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum WalletError {
    /// [`Wallet::create`] over a stored profile.
    #[error("A profile is already stored in this browser. Delete it first, or import a backup.")]
    AlreadyStored,
    /// [`Wallet::create`] with a repeat that differs.
    #[error("The two passphrases differ.")]
    PassphrasesDiffer,
    /// The stored record could not be read (said as storage said it).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The memory floors could not be read: no memory is opened (fail closed).
    #[error("the memory floors could not be read ({0})")]
    Floors(ReadError),
    /// Under an unlocked wallet, the stored record could not be read.
    #[error("the stored profile could not be read ({0})")]
    RecordUnreadable(ReadError),
    /// Under an unlocked wallet, another vault's record replaced this one.
    #[error("another profile replaced this one in another tab")]
    Replaced,
    /// Under an unlocked wallet, the stored record was deleted.
    #[error("the stored profile was deleted")]
    Deleted,
    /// Unlock or a passphrase change with no record stored.
    #[error("No profile is stored in this browser.")]
    NothingStored,
    /// Unlock or a passphrase change when the stored record cannot be read.
    #[error("The stored profile could not be read ({0}).")]
    StoredUnreadable(ReadError),
    #[error(transparent)]
    Weak(#[from] WeakPassphrase),
    #[error(transparent)]
    TooWeak(#[from] crate::strength::TooWeak),
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    Stale(#[from] StaleWrite),
    #[error(transparent)]
    Vault(#[from] VaultError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A log in the person's record does not verify (fail closed).
    #[error("the log does not verify ({0})")]
    Chain(String),
}

/// What browser storage holds right now, as the page read it (under the cross-tab lock when the
/// transition writes).
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The stored record; an error if one is stored but cannot be read.
    pub record: Result<Option<StoredVault>, ReadError>,
    /// The memory floors; an error if they are stored but cannot be read (never assumed empty).
    pub floors: Result<MemoryFloors, ReadError>,
    /// The format-1 sealed ledger kept beside a format-1 record, if any.
    pub legacy: Option<Vec<u8>>,
}

impl Snapshot {
    /// Empty storage.
    pub fn empty() -> Self {
        Self {
            record: Ok(None),
            floors: Ok(MemoryFloors::default()),
            legacy: None,
        }
    }
}

/// What the page must carry out, in order. If a write fails, the page stops and calls
/// [`Wallet::write_failed`].
#[derive(Debug, Clone)]
pub enum Effect {
    /// Write this record in one `setItem` (and tell other tabs).
    Store(StoredVault),
    /// Delete the stored record and any format-1 ledger.
    DeleteRecord,
    /// Raise the rollback floor of the vault `key` (hex id) to `generation`.
    RaiseFloor { key: String, generation: u64 },
    /// Forget the floor of the vault `key` (its profile was deleted from this browser).
    ForgetFloor { key: String },
    /// Forget the format-1 sealed ledger (migrated, or another vault's).
    ForgetLegacyLedger,
    /// Unseal this vault's stored credentials and hand them to the gate.
    LoadCredentials,
    /// Delete the stored credentials and their holder keys.
    DeleteCredentials,
    /// Delete this browser's signer install key and enrolment (the profile was deleted).
    DeleteSignerKey,
    /// Fill the editor's fields with these facts and mark it open.
    FillEditor(ProfileInput),
    /// Empty the editor's fields and mark it closed.
    ClearEditor,
    /// Empty the passphrase field(s) of the action (it succeeded, or the passphrase was wrong).
    ClearPassphrase,
    /// Show this to the person.
    Message { text: String, ok: bool },
    /// Bring the registered tools in step with the gate.
    SyncTools,
}

/// A transition's result: the next state and what the page must do.
pub type Step = (Wallet, Vec<Effect>);

/// The editor of the unlocked profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Editor {
    Closed,
    Open,
}

/// No profile open. `loaded` is the record this tab last loaded or wrote, if any.
#[derive(Debug, Clone, Default)]
pub struct Locked {
    loaded: Option<StoredVault>,
}

/// A profile open: the gate holds it and the page holds the open vault.
#[derive(Debug, Clone)]
pub struct Unlocked {
    /// The record this tab loaded or last wrote its envelope in (a profile save is refused if
    /// storage holds another envelope: another tab's edit).
    loaded: StoredVault,
    /// The memory as last sealed to storage (re-sealed only on change). Boxed: the memory is
    /// most of the state's size, and grows with the catalogue.
    saved: Option<Box<DisclosureLedger>>,
    /// The person's record this tab holds (receipts, applications, history; the open
    /// session's log is the gate's), merged with storage's on every read.
    kept: Box<PersonRecord>,
    /// The person's record as last sealed to storage.
    kept_saved: Option<Box<PersonRecord>>,
    editor: Editor,
}

/// The wallet's lifecycle.
#[derive(Debug, Clone)]
pub enum Wallet {
    Locked(Locked),
    Unlocked(Unlocked),
}

/// How an imported backup relates to what is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportKind {
    /// Nothing is stored: the backup becomes the profile.
    Nothing,
    /// A copy of the stored vault: its memory is kept and merged.
    SameVault,
    /// Another vault: it replaces the stored one, with a fresh memory, only if the person
    /// confirms.
    DifferentVault,
}

impl ImportKind {
    /// The question the page asks before replacing anything (none when nothing is stored).
    pub fn question(self) -> Option<&'static str> {
        match self {
            Self::Nothing => None,
            Self::SameVault => Some(
                "Replace the stored copy of this profile with the imported backup? What the wallet remembers having revealed is kept.",
            ),
            Self::DifferentVault => Some(
                "This backup is a DIFFERENT profile. Replace the profile stored in this browser with it? The imported profile brings the record and the memory of what was revealed that its backup holds; a backup downloaded before the record was kept in it starts with both empty.",
            ),
        }
    }
}

/// How the person confirmed deleting the profile ([`Wallet::delete`]). Nothing else deletes it.
///
/// - [`DeleteConsent::Passphrase`]: the passphrase typed in the delete dialog. It must open the
///   stored record (Argon2id, as unlocking does), locked or unlocked; unlocked, the stored
///   record must be the profile this tab has open.
/// - [`DeleteConsent::Confirmed`]: a proof from `consent` (a registered device's verified
///   assertion, or `consent::by_passphrase`), only while unlocked on the stored profile (a
///   device's record is sealed with the open vault, so it is used only then).
/// - [`DeleteConsent::Forgotten`]: **the person forgot the passphrase.** The profile cannot be
///   opened by anyone, so keeping it helps no one; it may still be deleted, while the wallet is
///   locked, after the person typed [`FORGOTTEN_PHRASE`] (any case, spaces at the ends ignored).
///   The page says that the profile cannot be recovered. While unlocked, the passphrase or the
///   device confirms instead.
pub enum DeleteConsent<'a> {
    Passphrase(&'a dyn Typed),
    Confirmed(crate::consent::Confirmed),
    Forgotten(&'a str),
}

impl std::fmt::Debug for DeleteConsent<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A passphrase is never printed.
        match self {
            Self::Passphrase(_) => f.write_str("Passphrase(..)"),
            Self::Confirmed(c) => write!(f, "Confirmed({:?})", c.by()),
            Self::Forgotten(_) => f.write_str("Forgotten(..)"),
        }
    }
}

/// What the person types to delete a profile whose passphrase they forgot.
pub const FORGOTTEN_PHRASE: &str = "delete my profile";

/// Whether `typed` is [`FORGOTTEN_PHRASE`] (any case, spaces at the ends ignored).
pub fn is_forgotten_phrase(typed: &str) -> bool {
    typed.trim().eq_ignore_ascii_case(FORGOTTEN_PHRASE)
}

/// Why a deletion was refused. `Display` is the sentence the page shows (followed by "Nothing
/// was deleted.").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NotDeleted {
    #[error("Type your passphrase to delete the profile.")]
    Empty,
    /// The passphrase did not open the stored record ([`WRONG`], [`NEWER`], [`DAMAGED`] are
    /// said in these words instead).
    #[error("{}", passphrase_words(.0))]
    Passphrase(&'static str),
    #[error("No profile is stored in this browser.")]
    NothingStored,
    #[error("The stored profile could not be read ({0}).")]
    Unreadable(ReadError),
    #[error("The stored profile changed in another tab. Reload this page.")]
    ChangedElsewhere,
    #[error(
        "This device confirms only while the wallet is unlocked. Type your passphrase instead."
    )]
    DeviceWhileLocked,
    #[error(
        "While the wallet is unlocked, confirm with your passphrase. If you forgot it, lock the wallet first."
    )]
    ForgottenWhileUnlocked,
    #[error("To delete without the passphrase, type \"delete my profile\".")]
    Phrase,
}

impl NotDeleted {
    fn clears_passphrase(&self) -> bool {
        matches!(self, Self::Passphrase(_))
    }
}

fn passphrase_words(why: &str) -> &'static str {
    match why {
        w if w == WRONG => "That passphrase is not right.",
        w if w == NEWER => {
            "This profile was saved by a newer version of Tacit, which cannot check the passphrase here."
        }
        _ => {
            "The stored profile is damaged, so the passphrase cannot be checked. If you want it gone, delete it as if you forgot the passphrase."
        }
    }
}

/// Said when a passphrase does not open the vault. The vault cannot tell a wrong passphrase
/// from a changed ciphertext (one uninformative error), and a wrong passphrase is by far the
/// likelier: the person is not alarmed with "damaged". A record that cannot even be decoded
/// is [`DAMAGED`].
pub const WRONG: &str = "That passphrase is not right. Nothing was changed; try again.";

/// Said when the passphrase opened the vault but its profile was written by a newer Tacit (it
/// is never read in part, nor overwritten).
pub const NEWER: &str = "This profile was saved by a newer version of Tacit, which this page cannot \
     read. Open it with that version. Nothing was changed.";

/// Said when the stored profile itself cannot be decoded, whatever the passphrase.
pub const DAMAGED: &str =
    "The stored profile is damaged and cannot be opened. Nothing was changed.";

/// How long the open editor may sit without input before it closes and empties its fields.
pub const EDITOR_IDLE_MS: u32 = 120_000;

/// The shortest idle limit a page setting may ask for (a shorter one would close the editor
/// before a person could type).
pub const EDITOR_IDLE_MIN_MS: u32 = 1_000;

/// The editor's idle limit for a value the page was given (`?editor_idle_ms=`, for tests). A
/// URL must not change what the wallet keeps on the page: the value may only **shorten** the
/// limit, down to [`EDITOR_IDLE_MIN_MS`]; a longer, unreadable or missing one is
/// [`EDITOR_IDLE_MS`].
pub fn editor_idle_ms(requested: Option<&str>) -> u32 {
    requested
        .and_then(|v| v.trim().parse::<u32>().ok())
        .map_or(EDITOR_IDLE_MS, |ms| {
            ms.clamp(EDITOR_IDLE_MIN_MS, EDITOR_IDLE_MS)
        })
}

/// The one place a message for the person is made: a sentence, or an error whose `Display` is
/// the sentence.
fn msg(text: impl std::fmt::Display, ok: bool) -> Effect {
    Effect::Message {
        text: text.to_string(),
        ok,
    }
}

/// The memory of `record` opened with `vault`, with the person's record sealed beside it, fail
/// closed: unreadable floors, a missing, damaged or rolled-back memory, a record whose chains do
/// not verify are errors.
fn open_sealed(
    record: &StoredVault,
    vault: &Vault,
    snap: &Snapshot,
) -> Result<(DisclosureLedger, PersonRecord, MemoryOrigin), WalletError> {
    let floors = snap
        .floors
        .as_ref()
        .map_err(|e| WalletError::Floors(e.clone()))?;
    let floor = floors.get(&record.vault_key()?);
    Ok(record.open_sealed(vault, floor, snap.legacy.as_deref())?)
}

/// A new record of `envelope` with `ledger` sealed in at `generation`, and the effects that
/// write it.
fn write_record(
    generation: u64,
    envelope: &[u8],
    vault: &Vault,
    ledger: &DisclosureLedger,
    kept: &PersonRecord,
    rng: &mut impl CryptoRng,
) -> Result<(StoredVault, Vec<Effect>), StoreError> {
    let record = StoredVault::sealed_record(generation, envelope, vault, ledger, kept, rng)?;
    let key = record.vault_key()?;
    let effects = vec![
        Effect::Store(record.clone()),
        Effect::RaiseFloor { key, generation },
        Effect::ForgetLegacyLedger,
    ];
    Ok((record, effects))
}

/// The person's record this tab holds: `kept` with the gate's comparison log as the open
/// session's log, and every application the person decided in the gate (with its receipt),
/// except those already moved into the history by an ended session.
fn tab_record(kept: &PersonRecord, gate: &Gate) -> PersonRecord {
    use crate::state::ProposalState;
    let mut record = kept.clone();
    record.log = gate.log.entries().to_vec();
    for p in gate.proposals() {
        let (sent, receipt) = match &p.state {
            ProposalState::Held => continue,
            ProposalState::Refused { .. } => (Sent::Refused, None),
            ProposalState::Released { payload, signed } => (
                Sent::Released,
                Some(KeptReceipt {
                    payload: (**payload).clone(),
                    signed: signed.as_deref().cloned(),
                }),
            ),
        };
        let application = KeptApplication {
            audience: p.audience.clone(),
            created_at: p.created_at,
            sent,
            entries: p.entries.clone(),
        };
        let moved = record.history.iter().any(|s| {
            s.applications.iter().any(|a| {
                a.audience == application.audience
                    && a.created_at == application.created_at
                    && a.entries == application.entries
            })
        });
        if moved {
            continue;
        }
        record.add_application(application);
        if let Some(receipt) = receipt {
            record.add_receipt(receipt);
        }
    }
    record
}

/// Puts `record`'s open log into the gate (it verified when the record was read or merged).
fn restore_log(gate: &mut Gate, record: &PersonRecord) {
    gate.log = ComparisonLog::from_entries(record.log.clone()).unwrap_or_default();
}

fn same_vault(record: &StoredVault, vault: &Vault) -> bool {
    record.vault_id().ok().as_ref() == Some(vault.envelope().vault_id())
}

impl Default for Wallet {
    fn default() -> Self {
        Self::Locked(Locked::default())
    }
}

impl Wallet {
    /// A locked wallet over what storage held at page load.
    pub fn new(loaded: Option<StoredVault>) -> Self {
        Self::Locked(Locked { loaded })
    }

    pub fn is_unlocked(&self) -> bool {
        matches!(self, Self::Unlocked(_))
    }

    /// Whether the editor is open (raw facts in its fields).
    pub fn editor(&self) -> Editor {
        match self {
            Self::Unlocked(u) => u.editor,
            Self::Locked(_) => Editor::Closed,
        }
    }

    /// Whether the page shows the person's facts section: only while a first profile is made
    /// (nothing stored, the fields empty) or while the editor is open (after the passphrase was
    /// checked again). Locked with a stored profile, or unlocked with the editor closed, not even
    /// the empty, disabled fields show.
    pub fn facts_shown(&self) -> bool {
        match self {
            Self::Locked(l) => l.loaded.is_none(),
            Self::Unlocked(u) => u.editor == Editor::Open,
        }
    }

    /// The record this tab last loaded or wrote.
    pub fn loaded(&self) -> Option<&StoredVault> {
        match self {
            Self::Locked(l) => l.loaded.as_ref(),
            Self::Unlocked(u) => Some(&u.loaded),
        }
    }

    /// Whether the gate's memory differs from what was last sealed (a seal is due).
    pub fn memory_dirty(&self, gate: &Gate) -> bool {
        match self {
            Self::Unlocked(u) => {
                u.saved.as_deref() != Some(gate.ledger())
                    || u.kept_saved.as_deref() != Some(&tab_record(&u.kept, gate))
            }
            Self::Locked(_) => false,
        }
    }

    fn loaded_owned(self) -> Option<StoredVault> {
        match self {
            Self::Locked(l) => l.loaded,
            Self::Unlocked(u) => Some(u.loaded),
        }
    }

    /// **The one lock path.** The gate forgets the profile, credentials and live grants; the
    /// vault is dropped; the editor is emptied; the tools are withdrawn; `why` is shown.
    pub fn lock(self, gate: &mut Gate, vault: &mut Option<Vault>, why: &str, ok: bool) -> Step {
        gate.lock();
        *vault = None;
        let loaded = self.loaded_owned();
        (
            Self::Locked(Locked { loaded }),
            vec![Effect::ClearEditor, Effect::SyncTools, msg(why, ok)],
        )
    }

    /// A write the page was asked to make failed: nothing after it was carried out. Locks.
    pub fn write_failed(self, gate: &mut Gate, vault: &mut Option<Vault>, error: &str) -> Step {
        self.lock(
            gate,
            vault,
            &format!(
                "{error}. Nothing more was written; the wallet was locked (unlock to continue with what is stored)."
            ),
            false,
        )
    }

    /// Brings the wallet in step with the gate and the vault after code outside this module
    /// touched them: unlocked with a locked gate or no vault is locked through the one path.
    pub fn reconcile(self, gate: &mut Gate, vault: &mut Option<Vault>) -> Step {
        match self {
            Self::Unlocked(_) if !gate.is_unlocked() || vault.is_none() => {
                // Whoever locked said why; the path adds no message of its own.
                let (locked, mut effects) = self.lock(gate, vault, "Locked.", true);
                effects.retain(|e| !matches!(e, Effect::Message { .. }));
                (locked, effects)
            }
            Self::Locked(_) if gate.is_unlocked() || vault.is_some() => {
                gate.lock();
                *vault = None;
                (self, vec![Effect::ClearEditor, Effect::SyncTools])
            }
            other => (other, Vec::new()),
        }
    }

    /// Creates a profile (none may be stored) and unlocks it with an empty memory.
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        self,
        gate: &mut Gate,
        vault: &mut Option<Vault>,
        snap: &Snapshot,
        passphrase: &(impl Typed + ?Sized),
        repeat: &(impl Typed + ?Sized),
        input: &ProfileInput,
        now: Timestamp,
        params: KdfParams,
        rng: &mut impl CryptoRng,
    ) -> Step {
        let made = (|| -> Result<_, WalletError> {
            if snap.record.as_ref().map_err(Clone::clone)?.is_some() {
                return Err(WalletError::AlreadyStored);
            }
            if passphrase.as_typed() != repeat.as_typed() {
                return Err(WalletError::PassphrasesDiffer);
            }
            crate::strength::refuse_weak(passphrase)?;
            let pass = Passphrase::typed(passphrase)?;
            let profile = Profile::new(input, now.date_utc())?;
            let generation = next_profile_generation(None, None)?;
            let new = Vault::create(&profile, &pass, params, rng)?;
            let memory = DisclosureLedger::default();
            let (record, writes) = write_record(
                generation,
                &new.to_bytes(),
                &new,
                &memory,
                &PersonRecord::default(),
                rng,
            )?;
            Ok((new, profile, memory, record, writes))
        })();
        match made {
            Err(e) => (self, vec![msg(e, false)]),
            Ok((new, profile, memory, record, mut effects)) => {
                gate.lock();
                gate.restore_ledger(memory.clone());
                gate.log = ComparisonLog::new();
                gate.unlock(profile);
                *vault = Some(new);
                effects.extend([
                    Effect::ClearPassphrase,
                    Effect::ClearEditor,
                    Effect::SyncTools,
                    msg(
                        "Profile created, encrypted and saved in this browser. The wallet is unlocked.",
                        true,
                    ),
                ]);
                (
                    Self::Unlocked(Unlocked {
                        loaded: record,
                        saved: Some(Box::new(memory)),
                        kept: Box::default(),
                        kept_saved: Some(Box::default()),
                        editor: Editor::Closed,
                    }),
                    effects,
                )
            }
        }
    }

    /// Unlocks the stored profile with `passphrase`, taking the memory sealed in its record
    /// (fail closed). A wrong passphrase changes nothing.
    pub fn unlock(
        self,
        gate: &mut Gate,
        vault: &mut Option<Vault>,
        snap: &Snapshot,
        passphrase: &(impl Typed + ?Sized),
        rng: &mut impl CryptoRng,
    ) -> Step {
        if self.is_unlocked() {
            return (self, vec![msg("The wallet is already unlocked.", true)]);
        }
        let record = match stored_record(snap) {
            Ok(record) => record,
            Err(why) => return (self, vec![msg(why, false)]),
        };
        let (open, profile) = match open_with(&record, passphrase) {
            Ok(opened) => opened,
            Err(text) => return (self, vec![Effect::ClearPassphrase, msg(text, false)]),
        };
        let (memory, kept, origin) = match open_sealed(&record, &open, snap) {
            Ok(found) => found,
            Err(e) => {
                // The passphrase was right: it stays typed (the error is not about it).
                return (
                    self,
                    vec![msg(
                        format!(
                            "This profile was not unlocked: {e}. Restore the record this browser last saved, or import your backup."
                        ),
                        false,
                    )],
                );
            }
        };
        let mut effects = Vec::new();
        let mut loaded = record.clone();
        let saved = match origin {
            MemoryOrigin::Sealed(generation) => {
                effects.push(Effect::RaiseFloor {
                    key: record.vault_key().unwrap_or_default(),
                    generation,
                });
                Some(Box::new(memory.clone()))
            }
            // Migrated or fresh: written in the current format at once.
            MemoryOrigin::Migrated | MemoryOrigin::Fresh => {
                let generation = record.generation.saturating_add(1);
                match write_record(
                    generation,
                    &record.envelope_bytes().unwrap_or_default(),
                    &open,
                    &memory,
                    &kept,
                    rng,
                ) {
                    Ok((written, writes)) => {
                        effects.extend(writes);
                        loaded = written;
                        Some(Box::new(memory.clone()))
                    }
                    Err(e) => {
                        return (
                            self,
                            vec![msg(format!("This profile was not unlocked: {e}."), false)],
                        );
                    }
                }
            }
        };
        gate.lock();
        gate.restore_ledger(memory);
        restore_log(gate, &kept);
        gate.unlock(profile);
        *vault = Some(open);
        effects.extend([
            Effect::ClearPassphrase,
            Effect::LoadCredentials,
            Effect::ClearEditor,
            Effect::SyncTools,
            msg("Unlocked.", true),
        ]);
        (
            Self::Unlocked(Unlocked {
                loaded,
                saved,
                kept_saved: Some(Box::new(kept.clone())),
                kept: Box::new(kept),
                editor: Editor::Closed,
            }),
            effects,
        )
    }

    /// Opens the editor after checking the passphrase again: the facts are filled in.
    pub fn open_editor(self, vault: &Option<Vault>, passphrase: &(impl Typed + ?Sized)) -> Step {
        let Self::Unlocked(mut u) = self else {
            return (self, vec![msg("Unlock the wallet first.", false)]);
        };
        let opened = vault.as_ref().and_then(|open| {
            let pass = Passphrase::typed(passphrase).ok()?;
            Vault::open(&open.to_bytes(), &pass).ok()
        });
        match opened {
            Some((_, profile)) => {
                u.editor = Editor::Open;
                (
                    Self::Unlocked(u),
                    vec![
                        Effect::ClearPassphrase,
                        Effect::FillEditor(profile.to_input()),
                        msg(
                            "The editor is open. It closes by itself after two minutes without input.",
                            true,
                        ),
                    ],
                )
            }
            None => {
                u.editor = Editor::Closed;
                (
                    Self::Unlocked(u),
                    vec![
                        Effect::ClearPassphrase,
                        Effect::ClearEditor,
                        msg(
                            "That passphrase is not right. The editor stays closed.",
                            false,
                        ),
                    ],
                )
            }
        }
    }

    /// Closes the editor (the person, or idle time): its fields are emptied.
    pub fn close_editor(self, why: &str) -> Step {
        let next = match self {
            Self::Unlocked(mut u) => {
                u.editor = Editor::Closed;
                Self::Unlocked(u)
            }
            locked => locked,
        };
        (next, vec![Effect::ClearEditor, msg(why, true)])
    }

    /// Saves the edited profile (only while the editor is open). Every grant is withdrawn; the
    /// memory is reset only for the facts that changed, and the reset goes into the same write
    /// as the new envelope. Refused if another tab edited the profile since this tab loaded it.
    pub fn save_profile(
        self,
        gate: &mut Gate,
        vault: &mut Option<Vault>,
        snap: &Snapshot,
        input: &ProfileInput,
        now: Timestamp,
        rng: &mut impl CryptoRng,
    ) -> Step {
        let Self::Unlocked(u) = self else {
            return (self, vec![msg("Unlock the wallet first.", false)]);
        };
        if u.editor != Editor::Open {
            return (
                Self::Unlocked(u),
                vec![msg(
                    "Open the editor with your passphrase first; nothing was saved.",
                    false,
                )],
            );
        }
        // Edited from the profile in use, so what the form does not show (a preferred language)
        // is kept.
        let edited = match &gate.profile {
            Some(current) => current.edited(input, now.date_utc()),
            None => Profile::new(input, now.date_utc()),
        };
        let profile = match edited {
            Ok(p) => p,
            Err(e) => return (Self::Unlocked(u), vec![msg(e, false)]),
        };
        let current = match &snap.record {
            Ok(current) => current.clone(),
            Err(e) => {
                return (
                    Self::Unlocked(u),
                    vec![msg(
                        format!("The stored profile could not be read ({e}). Nothing was saved."),
                        false,
                    )],
                );
            }
        };
        let generation = match next_profile_generation(current.as_ref(), Some(&u.loaded)) {
            Ok(g) => g,
            Err(_) => {
                return (
                    Self::Unlocked(u),
                    vec![msg(
                        "Your profile was changed or deleted in another tab or window since this one loaded it. Nothing was saved; lock and unlock to see the stored profile.",
                        false,
                    )],
                );
            }
        };
        let Some(mut open) = vault.take() else {
            return Self::Unlocked(u).lock(gate, vault, "Locked.", true);
        };
        // The stored memory first (fail closed), so the reset and what other tabs knew go
        // into the one write.
        let (stored, stored_kept) = match current.as_ref().map(|c| open_sealed(c, &open, snap)) {
            Some(Ok((stored, kept, _))) => (stored, kept),
            Some(Err(e)) => {
                *vault = Some(open);
                return Self::Unlocked(u).lock(
                    gate,
                    vault,
                    &format!("The wallet locked itself: {e}. Nothing was saved."),
                    false,
                );
            }
            None => (DisclosureLedger::default(), PersonRecord::default()),
        };
        let kept = match PersonRecord::merge(&stored_kept, &tab_record(&u.kept, gate)) {
            Ok(kept) => kept,
            Err(e) => {
                *vault = Some(open);
                return Self::Unlocked(u).lock(
                    gate,
                    vault,
                    &format!("The wallet locked itself: the log does not verify ({e}). Nothing was saved."),
                    false,
                );
            }
        };
        if let Err(e) = open.reseal(&profile, rng) {
            *vault = Some(open);
            return (Self::Unlocked(u), vec![msg(e, false)]);
        }
        gate.merge_ledger(&stored);
        let changed = gate.replace_profile(profile.clone());
        restore_log(gate, &kept);
        let written = write_record(
            generation,
            &open.to_bytes(),
            &open,
            gate.ledger(),
            &kept,
            rng,
        );
        *vault = Some(open);
        let (record, mut effects) = match written {
            Ok(w) => w,
            Err(e) => {
                return Self::Unlocked(u).lock(
                    gate,
                    vault,
                    &format!("{e}. Nothing was stored; the wallet was locked."),
                    false,
                );
            }
        };
        let text = if changed.is_empty() {
            "Saved. Active grants were withdrawn. No fact changed, so the disclosure memory is as it was.".to_owned()
        } else {
            format!(
                "Saved. Active grants were withdrawn. The disclosure memory was reset only for what you changed ({}); answers already given about the old value remain known to whoever received them.",
                names(&changed)
            )
        };
        effects.extend([
            Effect::FillEditor(profile.to_input()),
            Effect::SyncTools,
            msg(text, true),
        ]);
        (
            Self::Unlocked(Unlocked {
                loaded: record,
                saved: Some(Box::new(gate.ledger().clone())),
                kept_saved: Some(Box::new(kept.clone())),
                kept: Box::new(kept),
                editor: Editor::Open,
            }),
            effects,
        )
    }

    /// Changes the passphrase of the stored profile (only the key wrapping changes). The
    /// memory is carried into the new record (fail closed).
    #[allow(clippy::too_many_arguments)]
    pub fn change_passphrase(
        self,
        gate: &mut Gate,
        vault: &mut Option<Vault>,
        snap: &Snapshot,
        old: &(impl Typed + ?Sized),
        new: &(impl Typed + ?Sized),
        repeat: &(impl Typed + ?Sized),
        params: KdfParams,
        rng: &mut impl CryptoRng,
    ) -> Step {
        if new.as_typed() != repeat.as_typed() {
            return (self, vec![msg("The two new passphrases differ.", false)]);
        }
        if let Err(e) = crate::strength::refuse_weak(new) {
            return (
                self,
                vec![msg(format!("{e} The passphrase was not changed."), false)],
            );
        }
        let new_pass = match Passphrase::typed(new) {
            Ok(p) => p,
            Err(e) => return (self, vec![msg(e, false)]),
        };
        let record = match stored_record(snap) {
            Ok(record) => record,
            Err(why) => return (self, vec![msg(why, false)]),
        };
        let (mut reopened, _) = match open_with(&record, old) {
            Ok(opened) => opened,
            Err(text) => return (self, vec![Effect::ClearPassphrase, msg(text, false)]),
        };
        let unlocked_on_it = match (&self, vault.as_ref()) {
            (Self::Unlocked(_), Some(open)) => {
                open.envelope().vault_id() == reopened.envelope().vault_id()
            }
            _ => false,
        };
        if let Self::Unlocked(u) = &self
            && unlocked_on_it
            && u.loaded.envelope != record.envelope
        {
            return (
                self,
                vec![msg(
                    "Your profile was changed in another tab or window since this one loaded it. Lock and unlock, then change the passphrase.",
                    false,
                )],
            );
        }
        let (mut memory, mut kept) = match open_sealed(&record, &reopened, snap) {
            Ok((m, k, _)) => (m, k),
            Err(e) => {
                let why = format!("The passphrase was not changed: {e}.");
                return if unlocked_on_it {
                    self.lock(gate, vault, &why, false)
                } else {
                    (self, vec![msg(why, false)])
                };
            }
        };
        if unlocked_on_it {
            memory.merge_from(gate.ledger());
            if let Self::Unlocked(u) = &self {
                match PersonRecord::merge(&kept, &tab_record(&u.kept, gate)) {
                    Ok(merged) => kept = merged,
                    Err(e) => {
                        let why = format!(
                            "The passphrase was not changed: the log does not verify ({e})."
                        );
                        return self.lock(gate, vault, &why, false);
                    }
                }
            }
        }
        if let Err(e) = reopened.change_passphrase(&new_pass, params, rng) {
            return (self, vec![msg(e, false)]);
        }
        let generation = record.generation.saturating_add(1);
        let (written, mut effects) = match write_record(
            generation,
            &reopened.to_bytes(),
            &reopened,
            &memory,
            &kept,
            rng,
        ) {
            Ok(w) => w,
            Err(e) => return (self, vec![msg(e, false)]),
        };
        effects.extend([
            Effect::ClearPassphrase,
            msg(
                "Passphrase changed. Your facts were not re-encrypted; only the key wrapping changed.",
                true,
            ),
        ]);
        let next = match self {
            Self::Unlocked(u) if unlocked_on_it => {
                gate.restore_ledger(memory.clone());
                restore_log(gate, &kept);
                *vault = Some(reopened);
                Self::Unlocked(Unlocked {
                    loaded: written,
                    saved: Some(Box::new(memory)),
                    kept_saved: Some(Box::new(kept.clone())),
                    kept: Box::new(kept),
                    editor: u.editor,
                })
            }
            Self::Unlocked(u) => Self::Unlocked(u),
            Self::Locked(_) => Self::Locked(Locked {
                loaded: Some(written),
            }),
        };
        (next, effects)
    }

    /// How `backup` relates to what is stored (the page asks [`ImportKind::question`] first).
    pub fn import_kind(snap: &Snapshot, backup: &[u8]) -> Result<ImportKind, ImportError> {
        let backup = Backup::parse(backup).map_err(|_| ImportError::NotABackup)?;
        let id = *Envelope::parse(backup.envelope())
            .map_err(|_| ImportError::NotABackup)?
            .vault_id();
        match snap
            .record
            .as_ref()
            .map_err(|e| ImportError::Stored(e.clone()))?
        {
            None => Ok(ImportKind::Nothing),
            Some(record) => match record.vault_id() {
                Ok(stored) if stored == id => Ok(ImportKind::SameVault),
                _ => Ok(ImportKind::DifferentVault),
            },
        }
    }

    /// Imports `backup` over what is stored, then locks. `confirmed`: the kind of replacement
    /// the person said yes to ([`ImportKind::question`]); required, and must still be what
    /// storage holds, whenever something is stored. A copy of the same
    /// vault keeps the memory (and, unlocked, merges this tab's in); a different vault starts
    /// fresh, and the replaced profile's credentials are deleted.
    pub fn import(
        self,
        gate: &mut Gate,
        vault: &mut Option<Vault>,
        snap: &Snapshot,
        backup: &[u8],
        confirmed: Option<ImportKind>,
        rng: &mut impl CryptoRng,
    ) -> Step {
        let kind = match Self::import_kind(snap, backup) {
            Ok(kind) => kind,
            Err(e) => return (self, vec![msg(e, false)]),
        };
        let Ok(backup) = Backup::parse(backup) else {
            return (self, vec![msg(ImportError::NotABackup, false)]);
        };
        if kind != ImportKind::Nothing && confirmed != Some(kind) {
            return (
                self,
                vec![msg("Import cancelled. Nothing was changed.", false)],
            );
        }
        let current = snap.record.as_ref().ok().cloned().flatten();
        let mut effects = Vec::new();
        let record = match (&self, vault.as_ref(), &current, kind) {
            // Unlocked on this very vault: merge this tab's memory into the stored one and
            // seal both into the imported record.
            (Self::Unlocked(u), Some(open), Some(current), ImportKind::SameVault)
                if same_vault(current, open) =>
            {
                let merged = open_sealed(current, open, snap).and_then(|(m, k, _)| {
                    PersonRecord::merge(&k, &tab_record(&u.kept, gate))
                        .map(|k| (m, k))
                        .map_err(|e| WalletError::Chain(e.to_string()))
                });
                let (mut memory, kept) = match merged {
                    Ok(found) => found,
                    Err(e) => {
                        return self.lock(
                            gate,
                            vault,
                            &format!("The wallet locked itself: {e}. Nothing was imported."),
                            false,
                        );
                    }
                };
                memory.merge_from(gate.ledger());
                let generation = current.generation.saturating_add(1);
                match write_record(generation, backup.envelope(), open, &memory, &kept, rng) {
                    Ok((record, writes)) => {
                        effects.extend(writes);
                        record
                    }
                    Err(e) => return (self, vec![msg(e, false)]),
                }
            }
            _ => match StoredVault::imported(&backup, current.as_ref()) {
                Ok(record) => {
                    effects.push(Effect::Store(record.clone()));
                    record
                }
                Err(e) => return (self, vec![msg(e, false)]),
            },
        };
        if kind == ImportKind::DifferentVault {
            effects.extend([Effect::ForgetLegacyLedger, Effect::DeleteCredentials]);
        }
        let (_, locking) = self.lock(
            gate,
            vault,
            "Backup imported. Unlock it with its passphrase.",
            true,
        );
        if kind == ImportKind::DifferentVault {
            gate.restore_ledger(DisclosureLedger::default());
            gate.log = ComparisonLog::new();
        }
        effects.extend(locking);
        (
            Self::Locked(Locked {
                loaded: Some(record),
            }),
            effects,
        )
    }

    /// Deletes the profile with its memory, credentials and this browser's signer key, and
    /// locks, only with the person's confirmation ([`DeleteConsent`]); anything else changes
    /// nothing and says why. See [`DeleteConsent`] for what each way needs.
    pub fn delete(
        self,
        gate: &mut Gate,
        vault: &mut Option<Vault>,
        snap: &Snapshot,
        consent: DeleteConsent<'_>,
    ) -> Step {
        if let Err(why) = self.delete_allowed(vault, snap, consent) {
            let mut effects = vec![msg(format!("{why} Nothing was deleted."), false)];
            if why.clears_passphrase() {
                effects.insert(0, Effect::ClearPassphrase);
            }
            return (self, effects);
        }
        let mut effects = vec![Effect::DeleteRecord, Effect::ForgetLegacyLedger];
        let key = match &snap.record {
            Ok(Some(record)) => record.vault_key().ok(),
            _ => None,
        }
        .or_else(|| self.loaded().and_then(|r| r.vault_key().ok()));
        if let Some(key) = key {
            effects.push(Effect::ForgetFloor { key });
        }
        effects.extend([
            Effect::ClearPassphrase,
            Effect::DeleteCredentials,
            Effect::DeleteSignerKey,
        ]);
        let (_, locking) = self.lock(
            gate,
            vault,
            "Profile, disclosure memory, credentials and their keys, signer key and enrolment deleted from this browser. To use the signer again, ask for a new enrolment code.",
            true,
        );
        gate.restore_ledger(DisclosureLedger::default());
        gate.log = ComparisonLog::new();
        effects.extend(locking);
        (Self::Locked(Locked { loaded: None }), effects)
    }

    /// Whether `consent` allows deleting what `snap` holds.
    fn delete_allowed(
        &self,
        vault: &Option<Vault>,
        snap: &Snapshot,
        consent: DeleteConsent<'_>,
    ) -> Result<(), NotDeleted> {
        match consent {
            DeleteConsent::Passphrase(typed) => {
                if typed.as_typed().is_empty() {
                    return Err(NotDeleted::Empty);
                }
                let record = match &snap.record {
                    Ok(Some(record)) => record,
                    Ok(None) => return Err(NotDeleted::NothingStored),
                    Err(e) => return Err(NotDeleted::Unreadable(e.clone())),
                };
                open_with(record, typed).map_err(NotDeleted::Passphrase)?;
                match vault.as_ref() {
                    Some(open) if self.is_unlocked() && !same_vault(record, open) => {
                        Err(NotDeleted::ChangedElsewhere)
                    }
                    _ => Ok(()),
                }
            }
            DeleteConsent::Confirmed(confirmed) => {
                // A device's assertion is verified against the record sealed with the open
                // vault: it stands for the profile this tab is unlocked on, and that must be
                // the stored one.
                let _proof = confirmed;
                match (self.is_unlocked(), vault.as_ref(), &snap.record) {
                    (true, Some(open), Ok(Some(record))) if same_vault(record, open) => Ok(()),
                    (true, _, _) => Err(NotDeleted::ChangedElsewhere),
                    (false, _, _) => Err(NotDeleted::DeviceWhileLocked),
                }
            }
            DeleteConsent::Forgotten(phrase) => {
                if self.is_unlocked() {
                    return Err(NotDeleted::ForgottenWhileUnlocked);
                }
                if !is_forgotten_phrase(phrase) {
                    return Err(NotDeleted::Phrase);
                }
                Ok(())
            }
        }
    }
    /// Before answering, or after another tab wrote: merges the stored memory into the gate.
    /// Fails closed: if the record of this vault is gone, replaced by another vault, unreadable,
    /// or its memory cannot be read (removed, damaged, rolled back), the wallet locks.
    pub fn merge_stored(self, gate: &mut Gate, vault: &mut Option<Vault>, snap: &Snapshot) -> Step {
        let Self::Unlocked(mut u) = self else {
            // A locked tab follows what is stored (to offer unlock or create).
            let loaded = match &snap.record {
                Ok(record) => record.clone(),
                Err(_) => self.loaded_owned(),
            };
            return (Self::Locked(Locked { loaded }), Vec::new());
        };
        let Some(open) = vault.as_ref() else {
            return Self::Unlocked(u).lock(gate, vault, "Locked.", true);
        };
        let merged = match &snap.record {
            Ok(Some(record)) if same_vault(record, open) => open_sealed(record, open, snap)
                .and_then(|(theirs, kept, _)| {
                    let mine = tab_record(&u.kept, gate);
                    let merged = PersonRecord::merge(&kept, &mine)
                        .map_err(|e| WalletError::Chain(e.to_string()))?;
                    if kept == merged {
                        u.kept_saved = Some(Box::new(kept));
                    }
                    Ok((theirs, merged, record.envelope != u.loaded.envelope))
                }),
            Ok(Some(_)) => Err(WalletError::Replaced),
            Ok(None) => Err(WalletError::Deleted),
            Err(e) => Err(WalletError::RecordUnreadable(e.clone())),
        };
        match merged {
            Ok((theirs, kept, edited_elsewhere)) => {
                restore_log(gate, &kept);
                u.kept = Box::new(kept);
                gate.merge_ledger(&theirs);
                if gate.ledger() == &theirs {
                    // Storage already knows all this tab knows.
                    u.saved = Some(Box::new(theirs));
                }
                let effects = if edited_elsewhere {
                    vec![msg(
                        "Your profile was changed in another tab or window. Lock and unlock before saving here.",
                        false,
                    )]
                } else {
                    Vec::new()
                };
                (Self::Unlocked(u), effects)
            }
            Err(e) => Self::Unlocked(u).lock(
                gate,
                vault,
                &format!("The wallet locked itself: {e}."),
                false,
            ),
        }
    }

    /// After a change: seals the gate's memory into the stored record, read-merge-write (what
    /// storage knows is merged in first; the stored envelope is kept as stored, so another
    /// tab's profile edit is not overwritten). Nothing to do if nothing changed. Fails closed.
    pub fn seal_memory(
        self,
        gate: &mut Gate,
        vault: &mut Option<Vault>,
        snap: &Snapshot,
        rng: &mut impl CryptoRng,
    ) -> Step {
        if !self.memory_dirty(gate) {
            return (self, Vec::new());
        }
        let (merged, mut effects) = self.merge_stored(gate, vault, snap);
        let Self::Unlocked(u) = merged else {
            return (merged, effects);
        };
        let kept = tab_record(&u.kept, gate);
        if u.saved.as_deref() == Some(gate.ledger()) && u.kept_saved.as_deref() == Some(&kept) {
            return (Self::Unlocked(u), effects);
        }
        let (wallet, writes) = Self::Unlocked(u).write_kept(gate, vault, snap, rng);
        effects.extend(writes);
        (wallet, effects)
    }
}

/// What "Check that the log is intact" found in storage ([`Wallet::check_stored`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredCheck {
    /// The stored record opened and every chain in it verified: the open session's log has
    /// `entries` entries and `sessions` ended sessions are kept.
    Intact { entries: usize, sessions: usize },
    /// Locked: the record is sealed and cannot be checked.
    Locked,
    /// Nothing is stored.
    Nothing,
    /// The stored record did not open or a chain in it did not verify.
    Altered(String),
}

impl StoredCheck {
    /// The sentence the page shows.
    pub fn words(&self) -> String {
        let (entries, sessions) = match self {
            Self::Intact { entries, sessions } => (*entries, *sessions),
            Self::Locked => {
                return "Unlock the wallet to check the log: it is sealed with your profile."
                    .to_owned();
            }
            Self::Nothing => return "There is no profile, so no log to check.".to_owned(),
            Self::Altered(why) => {
                return format!(
                    "The stored log was altered or cannot be read ({why}). Nothing was \
                     changed; restore your backup if this persists."
                );
            }
        };
        let log = match entries {
            0 => {
                "The log is intact: it is empty, no site was told anything this session.".to_owned()
            }
            1 => "The log is intact: its one entry is unchanged since it was written.".to_owned(),
            n => {
                format!("The log is intact: its {n} entries are unchanged since they were written.")
            }
        };
        match sessions {
            0 => log,
            1 => format!("{log} The ended session kept is unchanged too."),
            n => format!("{log} The {n} ended sessions kept are unchanged too."),
        }
    }
}

impl Wallet {
    /// "Check that the log is intact": checks what is stored, not this tab's copy. The stored
    /// record is opened with the unlocked vault (the floor against a rollback applies) and every
    /// chain in the person's record is verified (the open session's log, each ended session's).
    pub fn check_stored(&self, vault: &Option<Vault>, snap: &Snapshot) -> StoredCheck {
        let (Self::Unlocked(_), Some(vault)) = (self, vault.as_ref()) else {
            return StoredCheck::Locked;
        };
        let record = match &snap.record {
            Ok(Some(record)) => record,
            Ok(None) => return StoredCheck::Nothing,
            Err(e) => return StoredCheck::Altered(e.to_string()),
        };
        match open_sealed(record, vault, snap) {
            Ok((_, kept, _)) => StoredCheck::Intact {
                entries: kept.log.len(),
                sessions: kept.history.len(),
            },
            Err(e) => StoredCheck::Altered(e.to_string()),
        }
    }

    /// The person's record as this tab holds it (the open session's log, receipts,
    /// applications, the history of ended sessions); `None` while locked (it is sealed).
    pub fn person_record(&self, gate: &Gate) -> Option<PersonRecord> {
        match self {
            Self::Unlocked(u) => Some(tab_record(&u.kept, gate)),
            Self::Locked(_) => None,
        }
    }

    /// Ends the session: read-merge-write (what storage knows first), the open session's log,
    /// receipts (with `receipts`, the session's receipts the page makes now) and applications
    /// move into the history, sealed, and the wallet locks through the one lock path with `why`.
    /// Run under the cross-tab lock. Fails closed like [`Wallet::seal_memory`].
    #[allow(clippy::too_many_arguments)]
    pub fn end_session(
        self,
        gate: &mut Gate,
        vault: &mut Option<Vault>,
        snap: &Snapshot,
        receipts: Vec<wallet_core::ReceiptPayload>,
        now: Timestamp,
        why: &str,
        rng: &mut impl CryptoRng,
    ) -> Step {
        let (merged, mut effects) = self.merge_stored(gate, vault, snap);
        let Self::Unlocked(mut u) = merged else {
            let (locked, locking) = merged.lock(gate, vault, why, true);
            effects.extend(locking);
            return (locked, effects);
        };
        let mut kept = tab_record(&u.kept, gate);
        for payload in receipts {
            kept.add_receipt(KeptReceipt {
                payload,
                signed: None,
            });
        }
        for p in gate.proposals() {
            if matches!(p.state, crate::state::ProposalState::Held) {
                kept.add_application(KeptApplication {
                    audience: p.audience.clone(),
                    created_at: p.created_at,
                    sent: Sent::NotSent,
                    entries: p.entries.clone(),
                });
            }
        }
        let dropped = kept.end_session(now);
        gate.log = ComparisonLog::new();
        u.kept = Box::new(kept);
        let (wallet, sealing) = Self::Unlocked(u).write_kept(gate, vault, snap, rng);
        effects.extend(sealing);
        let why = if dropped > 0 {
            format!(
                "{why} The history keeps the newest {} sessions; the oldest was removed.",
                wallet_core::history::MAX_SESSIONS
            )
        } else {
            why.to_owned()
        };
        let (locked, locking) = wallet.lock(gate, vault, &why, true);
        effects.extend(locking);
        (locked, effects)
    }

    /// Deletes the history of ended sessions (the person confirmed), read-merge-write, sealed.
    /// Run under the cross-tab lock. Needs the wallet unlocked.
    pub fn clear_history(
        self,
        gate: &mut Gate,
        vault: &mut Option<Vault>,
        snap: &Snapshot,
        confirmed: bool,
        rng: &mut impl CryptoRng,
    ) -> Step {
        if !confirmed {
            return (
                self,
                vec![msg(
                    "The history was not deleted. Nothing was changed.",
                    false,
                )],
            );
        }
        let (merged, mut effects) = self.merge_stored(gate, vault, snap);
        let Self::Unlocked(mut u) = merged else {
            effects.push(msg("Unlock the wallet to delete its history.", false));
            return (merged, effects);
        };
        u.kept.clear_history();
        let (wallet, sealing) = Self::Unlocked(u).write_kept(gate, vault, snap, rng);
        effects.extend(sealing);
        if wallet.is_unlocked() {
            effects.push(msg("The history of ended sessions was deleted.", true));
        }
        (wallet, effects)
    }

    /// Seals the gate's memory and this tab's person's record into the stored record at the
    /// next generation (already merged with storage's). Fails closed.
    fn write_kept(
        self,
        gate: &mut Gate,
        vault: &mut Option<Vault>,
        snap: &Snapshot,
        rng: &mut impl CryptoRng,
    ) -> Step {
        let Self::Unlocked(mut u) = self else {
            return (self, Vec::new());
        };
        let (Some(open), Ok(Some(current))) = (vault.as_ref(), &snap.record) else {
            return Self::Unlocked(u).lock(gate, vault, "Locked.", true);
        };
        let kept = tab_record(&u.kept, gate);
        let envelope = current.envelope_bytes().unwrap_or_default();
        let generation = current.generation.saturating_add(1);
        match write_record(generation, &envelope, open, gate.ledger(), &kept, rng) {
            Ok((record, writes)) => {
                if record.envelope == u.loaded.envelope {
                    u.loaded = record;
                }
                u.saved = Some(Box::new(gate.ledger().clone()));
                u.kept_saved = Some(Box::new(kept.clone()));
                u.kept = Box::new(kept);
                (Self::Unlocked(u), writes)
            }
            Err(e) => Self::Unlocked(u).lock(
                gate,
                vault,
                &format!(
                    "The disclosure memory and your record could not be sealed ({e}); the \
                     wallet locked itself."
                ),
                false,
            ),
        }
    }
}

/// A tool's answer that the wallet made but has not let out: [`Wallet::answer`] returns it with
/// the effects that seal its memory, and only [`Wallet::release`] opens it, after the page has
/// carried those effects out. The value is not readable any other way.
#[must_use = "an answer is released with Wallet::release once its effects are carried out"]
pub struct Sealing(Value);

impl std::fmt::Debug for Sealing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // An outcome is not printed before it is released.
        f.write_str("Sealing(..)")
    }
}

impl Wallet {
    /// The one transition that answers a tool call (a claim above all), in the order the
    /// privacy rules need, so no host sequences them: merge what storage knows into the gate's
    /// memory ([`Wallet::merge_stored`]: what another tab revealed counts before this answer),
    /// answer (`gate.finish`), seal the memory that records the answer
    /// ([`Wallet::seal_memory`]). The answer comes back as a [`Sealing`] beside the effects;
    /// the page carries the effects out (a write that fails locks the wallet, through
    /// [`Wallet::write_failed`]) and then calls [`Wallet::release`]. Run under the cross-tab
    /// lock, with `snap` read under it.
    pub fn answer(
        self,
        gate: &mut Gate,
        vault: &mut Option<Vault>,
        snap: &Snapshot,
        pending: crate::gate::Pending,
        now: Timestamp,
        rng: &mut impl CryptoRng,
    ) -> (Self, Vec<Effect>, Sealing) {
        let (wallet, mut effects) = self.merge_stored(gate, vault, snap);
        let out = gate.finish(pending, now);
        let (wallet, sealing) = wallet.seal_memory(gate, vault, snap, rng);
        effects.extend(sealing);
        (wallet, effects, Sealing(out))
    }

    /// Lets an answer of [`Wallet::answer`] out, once its effects were carried out: a claim's
    /// outcome leaves only if the memory that records it is sealed in storage (the wallet is
    /// still unlocked and nothing is left unsealed); otherwise the agent gets a
    /// `wallet_locked` refusal, never an answer the stored memory does not know.
    pub fn release(&self, gate: &Gate, answer: Sealing) -> Value {
        self.answer_if_sealed(gate, answer.0)
    }

    /// [`Wallet::release`] for an answer made outside [`Wallet::answer`].
    fn answer_if_sealed(&self, gate: &Gate, out: Value) -> Value {
        let is_outcome = out["ok"] == true && out["result"].get("satisfied").is_some();
        if !is_outcome || (self.is_unlocked() && !self.memory_dirty(gate)) {
            return out;
        }
        envelope(&Err(Refusal::new(
            Code::WalletLocked,
            "The wallet is locked. Nothing was answered; ask the person to unlock it in the Tacit wallet page.",
        )))
    }
}

fn names(changed: &[Attribute]) -> String {
    changed
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The stored record, or why there is none to open.
fn stored_record(snap: &Snapshot) -> Result<StoredVault, WalletError> {
    match &snap.record {
        Ok(Some(record)) => Ok(record.clone()),
        Ok(None) => Err(WalletError::NothingStored),
        Err(e) => Err(WalletError::StoredUnreadable(e.clone())),
    }
}

/// Opens `record`'s vault with `passphrase`; [`WRONG`] when the passphrase does not open it
/// (the vault's one error), [`DAMAGED`] when the stored envelope cannot be decoded at all.
fn open_with(
    record: &StoredVault,
    passphrase: &(impl Typed + ?Sized),
) -> Result<(Vault, Profile), &'static str> {
    let bytes = record.envelope_bytes().map_err(|_| DAMAGED)?;
    let pass = Passphrase::typed(passphrase).map_err(|_| WRONG)?;
    Vault::unlock(&bytes, &pass).map_err(|e| match e {
        wallet_core::OpenError::NewerFormat(_) => NEWER,
        wallet_core::OpenError::CannotOpen => WRONG,
    })
}

pub fn empty_input() -> ProfileInput {
    ProfileInput::empty()
}
