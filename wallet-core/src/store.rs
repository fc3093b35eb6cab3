//! The stored record around a vault envelope: the envelope, the disclosure memory sealed with
//! it, and the rule that keeps two tabs from silently overwriting each other.
//!
//! The page keeps one record per profile in browser storage. Each save bumps `generation`; a
//! writer must name the generation it loaded, and a save is refused if storage has moved on
//! since. Storage writes the record in one call, so a failed write leaves the last good copy.
//!
//! # Disclosure memory (record format 2)
//! The memory (a [`DisclosureLedger`]) is sealed **in the same record** as the envelope, under
//! the vault's data key (AES-256-GCM, associated data bound to the vault id and the label
//! `"memory"`), together with the generation it was written at. So it cannot be deleted on its
//! own (the record goes with it), moved to another vault (the seal will not open), or swapped
//! for an older copy: the page keeps, per vault, the highest memory generation it has written or
//! read (a [`MemoryFloors`] map) and [`StoredVault::open_memory`] refuses anything older.
//! A record whose memory is missing, will not open or is older is refused
//! ([`StoreError::MemoryUnreadable`]): the wallet never answers from a fresh memory by accident.
//!
//! The memory's plaintext is a versioned record ([`MEMORY_FORMAT`], see [`crate::format`]):
//! older formats are migrated on reading; a memory from a newer Tacit is
//! [`StoreError::NewerFormat`], and the page must not overwrite it.
//!
//! # The person's record (memory format 3)
//! Beside the ledger, the memory's plaintext holds the person's record
//! ([`crate::history::PersonRecord`]: the open session's comparison log, receipts and
//! applications, and the history of ended sessions), read by [`StoredVault::open_sealed`] and
//! written by [`StoredVault::sealed_record`]. A record whose chains do not verify is refused as
//! [`StoreError::MemoryUnreadable`], like a damaged memory; memory formats 1 and 2 migrate to an
//! empty record.
//!
//! Records of format 1 (`{generation, envelope}`, the memory sealed beside them under the
//! label `"ledger"`) still open: their memory is read from that companion blob, and the page
//! writes a format-2 record at once.

use std::collections::BTreeMap;

use rand_core::CryptoRng;
use serde::{Deserialize, Serialize};

use crate::error::{SealError, StaleWrite, StoreError};
use crate::format::{self, ReadError, Record, Tag};
use crate::history::PersonRecord;
use crate::ledger::{DisclosureLedger, LedgerV1};
use crate::vault::{Envelope, Vault};

/// The seal label of the memory inside a record.
pub const MEMORY_LABEL: &str = "memory";
/// The seal label of the format-1 memory kept beside the record.
pub const LEGACY_LEDGER_LABEL: &str = "ledger";

/// What is kept in browser storage: the envelope, its generation, and the sealed memory.
/// Nothing in it is secret beyond what the envelope's data key protects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredVault {
    pub generation: u64,
    /// The vault envelope, lowercase hex.
    pub envelope: String,
    /// The sealed disclosure memory, lowercase hex (absent in format-1 records and in a fresh
    /// import of a different vault).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

/// The memory record format this build writes and the newest it reads (see
/// [`crate::format`]). Format 1: `{generation, ledger}`. Format 2: the same and `format: 2`.
/// Format 3: format 2 and `record`, the person's log, receipts, applications and history
/// ([`PersonRecord`]); formats 1 and 2 migrate to an empty record.
pub const MEMORY_FORMAT: u32 = 3;

/// The plaintext of a sealed memory, as this build writes it (format 3).
#[derive(Serialize)]
struct SealedMemoryOut<'a> {
    format: Tag<MEMORY_FORMAT>,
    generation: u64,
    ledger: &'a DisclosureLedger,
    record: &'a PersonRecord,
}

/// A sealed memory of any known format, migrated to the current one.
struct SealedMemory {
    generation: u64,
    ledger: DisclosureLedger,
    record: PersonRecord,
}

/// Memory format 1 (before issue 15). Frozen.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoryV1 {
    generation: u64,
    ledger: LedgerV1,
}

/// Memory format 2: format 1 and `format: 2`. Frozen (its ledger is [`LedgerV1`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoryV2 {
    #[allow(dead_code)] // checked by its type when parsed
    format: Tag<2>,
    generation: u64,
    ledger: LedgerV1,
}

/// Memory format 3: format 2 and the person's record. Current (freeze it when format 4 comes).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoryV3 {
    #[allow(dead_code)] // checked by its type when parsed
    format: Tag<3>,
    generation: u64,
    ledger: DisclosureLedger,
    record: PersonRecord,
}

impl SealedMemory {
    /// Reads a memory record of any format this build knows and migrates it.
    fn read(bytes: &[u8]) -> Result<Self, ReadError> {
        let record = Record::Memory;
        let memory = match format::version_of(bytes, record, MEMORY_FORMAT)? {
            1 => format::parse::<MemoryV1>(bytes, record).map(|m| Self {
                generation: m.generation,
                ledger: m.ledger.into(),
                record: PersonRecord::default(),
            })?,
            2 => format::parse::<MemoryV2>(bytes, record).map(|m| Self {
                generation: m.generation,
                ledger: m.ledger.into(),
                record: PersonRecord::default(),
            })?,
            3 => format::parse::<MemoryV3>(bytes, record).map(|m| Self {
                generation: m.generation,
                ledger: m.ledger,
                record: m.record,
            })?,
            _ => return Err(ReadError::Malformed(record)),
        };
        // A person's record whose chains do not verify is refused like a damaged memory.
        memory
            .record
            .verify()
            .map_err(|_| ReadError::Malformed(record))?;
        Ok(memory)
    }
}

/// How a record's memory was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryOrigin {
    /// Sealed in the record at this generation.
    Sealed(u64),
    /// From a format-1 companion blob: write a format-2 record now.
    Migrated,
    /// No memory anywhere and none expected (a new or freshly imported vault): starts empty.
    Fresh,
}

impl StoredVault {
    /// A record for `envelope` at `generation`, without memory.
    pub fn new(generation: u64, envelope: &[u8]) -> Self {
        Self {
            generation,
            envelope: hex::encode(envelope),
            memory: None,
        }
    }

    /// A format-2 record: `vault`'s envelope with `ledger` sealed in at `generation`.
    pub fn sealed(
        generation: u64,
        vault: &Vault,
        ledger: &DisclosureLedger,
        rng: &mut impl CryptoRng,
    ) -> Result<Self, StoreError> {
        Self::sealed_with_envelope(generation, &vault.to_bytes(), vault, ledger, rng)
    }

    /// [`StoredVault::sealed_record`] with an empty person's record.
    pub fn sealed_with_envelope(
        generation: u64,
        envelope: &[u8],
        vault: &Vault,
        ledger: &DisclosureLedger,
        rng: &mut impl CryptoRng,
    ) -> Result<Self, StoreError> {
        Self::sealed_record(
            generation,
            envelope,
            vault,
            ledger,
            &PersonRecord::default(),
            rng,
        )
    }

    /// A record of `envelope` (which must be `vault`'s, possibly as another tab saved it) with
    /// `ledger` and the person's `record` sealed in at `generation` (memory format 3).
    pub fn sealed_record(
        generation: u64,
        envelope: &[u8],
        vault: &Vault,
        ledger: &DisclosureLedger,
        record: &PersonRecord,
        rng: &mut impl CryptoRng,
    ) -> Result<Self, StoreError> {
        if Envelope::parse(envelope)?.vault_id() != vault.envelope().vault_id() {
            return Err(StoreError::Format("the envelope belongs to another vault"));
        }
        let plaintext = serde_json::to_vec(&SealedMemoryOut {
            format: Tag,
            generation,
            ledger,
            record,
        })
        .map_err(|_| SealError("the disclosure memory could not be serialised"))?;
        let sealed = vault.seal_aux(MEMORY_LABEL, &plaintext, rng)?;
        Ok(Self {
            generation,
            envelope: hex::encode(envelope),
            memory: Some(hex::encode(sealed)),
        })
    }

    /// An imported `backup` replacing `current`. If the backup is of the same vault, the
    /// current record's memory is carried over unchanged (it opens with the same data key, and
    /// is at least as new as the backup's), so an import never forgets. Otherwise the memory —
    /// the disclosure memory and the person's record — is the backup's, if it carries one
    /// ([`Backup`]), else it starts empty; the page asks the person first
    /// ([`StoredVault::same_vault`] tells which). The generation is above both `current`'s and
    /// the backup's, so the memory's own generation is never above its record's.
    pub fn imported(backup: &Backup, current: Option<&StoredVault>) -> Result<Self, StoreError> {
        let envelope = backup.envelope();
        let id = *Envelope::parse(envelope)?.vault_id();
        let after_current = current.map_or(1, |c| c.generation.saturating_add(1));
        let (generation, memory) = match current {
            Some(c) if c.vault_id()? == id => (after_current, c.memory.clone()),
            _ => match &backup.record {
                Some(saved) => (after_current.max(saved.generation), saved.memory.clone()),
                None => (after_current, None),
            },
        };
        Ok(Self {
            generation,
            envelope: hex::encode(envelope),
            memory,
        })
    }

    /// Whether `envelope` is a copy of the vault this record holds.
    pub fn same_vault(&self, envelope: &[u8]) -> Result<bool, StoreError> {
        Ok(*Envelope::parse(envelope)?.vault_id() == self.vault_id()?)
    }

    /// The record's vault id.
    pub fn vault_id(&self) -> Result<[u8; 16], StoreError> {
        Ok(*Envelope::parse(&self.envelope_bytes()?)?.vault_id())
    }

    /// The record's vault id, hex (the key of [`MemoryFloors`]).
    pub fn vault_key(&self) -> Result<String, StoreError> {
        self.vault_id().map(hex::encode)
    }

    /// Reads the record's memory with the unlocked `vault`. `floor` is the highest memory
    /// generation this browser wrote or read for the vault ([`MemoryFloors::get`]); `legacy` is
    /// the format-1 companion blob, if one is stored. Fails closed: a memory that is missing
    /// where one is expected, that does not open, or that is older than `floor` is
    /// [`StoreError::MemoryUnreadable`].
    pub fn open_memory(
        &self,
        vault: &Vault,
        floor: Option<u64>,
        legacy: Option<&[u8]>,
    ) -> Result<(DisclosureLedger, MemoryOrigin), StoreError> {
        self.open_sealed(vault, floor, legacy)
            .map(|(ledger, _, origin)| (ledger, origin))
    }

    /// [`StoredVault::open_memory`] with the person's record sealed beside the memory (empty for
    /// formats 1 and 2, a fresh or a migrated memory). Fails closed the same way, and also when
    /// a chain in the record does not verify.
    pub fn open_sealed(
        &self,
        vault: &Vault,
        floor: Option<u64>,
        legacy: Option<&[u8]>,
    ) -> Result<(DisclosureLedger, PersonRecord, MemoryOrigin), StoreError> {
        if self.vault_id()? != *vault.envelope().vault_id() {
            return Err(StoreError::MemoryUnreadable);
        }
        match (&self.memory, floor, legacy) {
            (Some(text), _, _) => {
                let sealed = hex::decode(text).map_err(|_| StoreError::MemoryUnreadable)?;
                let plaintext = vault
                    .open_aux(MEMORY_LABEL, &sealed)
                    .map_err(|_| StoreError::MemoryUnreadable)?;
                // A newer memory is refused as such (and must not be overwritten); anything
                // else unreadable is the one fail-closed error.
                let memory = SealedMemory::read(&plaintext).map_err(|e| match e {
                    ReadError::Newer(newer) => StoreError::NewerFormat(newer),
                    ReadError::Malformed(_) => StoreError::MemoryUnreadable,
                })?;
                if floor.is_some_and(|f| memory.generation < f) {
                    return Err(StoreError::MemoryUnreadable);
                }
                Ok((
                    memory.ledger,
                    memory.record,
                    MemoryOrigin::Sealed(memory.generation),
                ))
            }
            // This browser has seen this vault's memory in a record: it cannot vanish.
            (None, Some(_), _) => Err(StoreError::MemoryUnreadable),
            (None, None, Some(blob)) => {
                let plaintext = vault
                    .open_aux(LEGACY_LEDGER_LABEL, blob)
                    .map_err(|_| StoreError::MemoryUnreadable)?;
                let ledger = format::parse::<LedgerV1>(&plaintext, Record::Memory)
                    .map_err(|_| StoreError::MemoryUnreadable)?;
                Ok((
                    ledger.into(),
                    PersonRecord::default(),
                    MemoryOrigin::Migrated,
                ))
            }
            (None, None, None) => Ok((
                DisclosureLedger::default(),
                PersonRecord::default(),
                MemoryOrigin::Fresh,
            )),
        }
    }

    /// The record as stored text.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses stored text and checks that the envelope is well-formed (not that it opens).
    pub fn decode(text: &str) -> Result<Self, StoreError> {
        let record: Self = serde_json::from_str(text)
            .map_err(|_| StoreError::Format("not a Tacit profile record"))?;
        Envelope::parse(&record.envelope_bytes()?)?;
        Ok(record)
    }

    /// The envelope's bytes.
    pub fn envelope_bytes(&self) -> Result<Vec<u8>, StoreError> {
        hex::decode(&self.envelope).map_err(|_| StoreError::Format("envelope is not hex"))
    }
}

/// How a backup file that carries the whole record begins (the backups the page writes from
/// issue 30 on): this line, then the record as stored ([`StoredVault::encode`]), whose memory
/// (sealed with the vault's data key) holds the disclosure memory and the person's record. A
/// file without it is a vault envelope alone, as backups were written before.
pub const BACKUP_HEADER: &[u8] = b"TACIT-BACKUP 2\n";

/// A backup file, read: the vault envelope, and the stored record it was taken from when the
/// file carries one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backup {
    envelope: Vec<u8>,
    record: Option<StoredVault>,
}

impl Backup {
    /// The file the page downloads for `record`: [`BACKUP_HEADER`] and the record's text.
    pub fn file_of(record: &StoredVault) -> Vec<u8> {
        let mut file = BACKUP_HEADER.to_vec();
        file.extend_from_slice(record.encode().as_bytes());
        file
    }

    /// Reads a backup file: one that carries the record, or an envelope alone. Anything else
    /// (or a record whose envelope is not a well-formed vault) is an error.
    pub fn parse(bytes: &[u8]) -> Result<Self, StoreError> {
        match bytes.strip_prefix(BACKUP_HEADER) {
            Some(rest) => {
                let text = core::str::from_utf8(rest)
                    .map_err(|_| StoreError::Format("backup record is not text"))?;
                let record = StoredVault::decode(text)?;
                Ok(Self {
                    envelope: record.envelope_bytes()?,
                    record: Some(record),
                })
            }
            None => {
                Envelope::parse(bytes)?;
                Ok(Self {
                    envelope: bytes.to_vec(),
                    record: None,
                })
            }
        }
    }

    /// The vault envelope.
    pub fn envelope(&self) -> &[u8] {
        &self.envelope
    }

    /// Whether the file carries the record (memory and the person's record), not only the
    /// envelope.
    pub fn carries_record(&self) -> bool {
        self.record.as_ref().is_some_and(|r| r.memory.is_some())
    }
}

/// Per vault (hex id), the highest memory generation this browser has written or read: a
/// record whose memory is older is a rollback. Kept by the page apart from the record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MemoryFloors(BTreeMap<String, u64>);

impl MemoryFloors {
    /// Parses stored text; anything unreadable is an error (the page then refuses to open
    /// memory rather than assume there is no floor).
    pub fn decode(text: &str) -> Result<Self, StoreError> {
        serde_json::from_str(text).map_err(|_| StoreError::Format("memory floors unreadable"))
    }

    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The floor for `vault_key`, if this browser has seen its memory.
    pub fn get(&self, vault_key: &str) -> Option<u64> {
        self.0.get(vault_key).copied()
    }

    /// Raises the floor for `vault_key` to `generation` (never lowers it).
    pub fn raise(&mut self, vault_key: &str, generation: u64) {
        let floor = self.0.entry(vault_key.to_owned()).or_insert(generation);
        *floor = (*floor).max(generation);
    }

    /// Forgets a vault (its profile was deleted from this browser).
    pub fn forget(&mut self, vault_key: &str) {
        self.0.remove(vault_key);
    }
}

/// The generation a save may write, given what storage holds now and what the writer loaded.
/// Refuses when storage holds a record the writer did not load.
pub fn next_generation(in_storage: Option<u64>, loaded: Option<u64>) -> Result<u64, StaleWrite> {
    match (in_storage, loaded) {
        (None, None) => Ok(1),
        (Some(current), Some(mine)) if current == mine => Ok(current + 1),
        _ => Err(StaleWrite),
    }
}

/// The generation a profile save may write: storage may have moved on only by memory writes
/// (its envelope is still the one the writer loaded); a changed envelope is another tab's
/// profile edit, and the save is refused.
pub fn next_profile_generation(
    in_storage: Option<&StoredVault>,
    loaded: Option<&StoredVault>,
) -> Result<u64, StaleWrite> {
    match (in_storage, loaded) {
        (None, None) => Ok(1),
        (Some(current), Some(mine)) if current.envelope == mine.envelope => {
            Ok(current.generation.saturating_add(1))
        }
        _ => Err(StaleWrite),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_generations_refuse_stale_writes() {
        assert_eq!(next_generation(None, None), Ok(1));
        assert_eq!(next_generation(Some(3), Some(3)), Ok(4));
        assert_eq!(next_generation(Some(4), Some(3)), Err(StaleWrite));
        assert_eq!(
            next_generation(Some(1), None),
            Err(StaleWrite),
            "a fresh tab cannot clobber"
        );
        assert_eq!(
            next_generation(None, Some(2)),
            Err(StaleWrite),
            "deleted elsewhere"
        );
    }

    #[test]
    fn store_record_refuses_garbage() {
        assert!(StoredVault::decode("{}").is_err());
        assert!(StoredVault::decode(r#"{"generation":1,"envelope":"zz"}"#).is_err());
        assert!(StoredVault::decode(r#"{"generation":1,"envelope":"00"}"#).is_err());
        assert!(StoredVault::decode(r#"{"generation":1,"envelope":"","x":1}"#).is_err());
        assert!(MemoryFloors::decode("[1]").is_err());
        let mut floors = MemoryFloors::default();
        floors.raise("ab", 3);
        floors.raise("ab", 2);
        assert_eq!(floors.get("ab"), Some(3));
        assert_eq!(MemoryFloors::decode(&floors.encode()), Ok(floors));
    }
}
