//! Issue 12: the disclosure memory is sealed in the same stored record as the vault, with its
//! generation; deleting, moving, damaging or rolling it back is refused (fail closed), and
//! today's (format-1) records still open and migrate.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::path::PathBuf;
use std::sync::LazyLock;

use common::{profile, today};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use wallet_core::store::{
    BACKUP_HEADER, Backup, MemoryFloors, MemoryOrigin, StoredVault, next_profile_generation,
};
use wallet_core::{
    Claim, ConditionCode, DisclosureLedger, KdfParams, Outcome, Passphrase, StaleWrite, StoreError,
    Vault,
};

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

fn pass() -> Passphrase {
    Passphrase::new("correct horse battery staple".into()).unwrap()
}

static VAULT_BYTES: LazyLock<Vec<u8>> = LazyLock::new(|| {
    Vault::create(&profile(), &pass(), KdfParams::MINIMUM, &mut rng(1))
        .unwrap()
        .to_bytes()
});
static OTHER_BYTES: LazyLock<Vec<u8>> = LazyLock::new(|| {
    Vault::create(&profile(), &pass(), KdfParams::MINIMUM, &mut rng(2))
        .unwrap()
        .to_bytes()
});

fn open(bytes: &[u8]) -> Vault {
    Vault::open(bytes, &pass()).unwrap().0
}

fn used_ledger() -> DisclosureLedger {
    let mut p = common::input();
    p.conditions = vec!["pregnancy".into()];
    let p = wallet_core::Profile::new(&p, today()).unwrap();
    let mut ledger = DisclosureLedger::default();
    let wide = Claim::has_none_of(
        ["anticoagulant-therapy", "liver-disease", "pregnancy"]
            .iter()
            .map(|c| ConditionCode::parse(c).unwrap()),
    )
    .unwrap();
    assert_eq!(
        ledger.answer(&p, &wide, today()).outcome,
        Outcome::NotSatisfied
    );
    ledger
}

#[test]
fn store_memory_round_trips_in_the_record() {
    let vault = open(&VAULT_BYTES);
    let record = StoredVault::sealed(4, &vault, &used_ledger(), &mut rng(3)).unwrap();
    let text = record.encode();
    let back = StoredVault::decode(&text).unwrap();
    let (ledger, origin) = back.open_memory(&vault, Some(4), None).unwrap();
    assert_eq!(ledger, used_ledger());
    assert_eq!(origin, MemoryOrigin::Sealed(4));
}

#[test]
fn store_memory_cannot_be_dropped_moved_damaged_or_rolled_back() {
    let vault = open(&VAULT_BYTES);
    let old = StoredVault::sealed(2, &vault, &DisclosureLedger::default(), &mut rng(4)).unwrap();
    let record = StoredVault::sealed(3, &vault, &used_ledger(), &mut rng(5)).unwrap();
    let floor = Some(3);

    // Dropped: the memory field removed from a record this browser has seen memory for.
    let dropped = StoredVault {
        memory: None,
        ..record.clone()
    };
    assert_eq!(
        dropped.open_memory(&vault, floor, None),
        Err(StoreError::MemoryUnreadable)
    );
    // Rolled back: the whole older record restored, or its memory put in the newer record.
    assert_eq!(
        old.open_memory(&vault, floor, None),
        Err(StoreError::MemoryUnreadable)
    );
    let swapped = StoredVault {
        memory: old.memory.clone(),
        ..record.clone()
    };
    assert_eq!(
        swapped.open_memory(&vault, floor, None),
        Err(StoreError::MemoryUnreadable)
    );
    // Moved: another vault's memory does not open with this one.
    let other = open(&OTHER_BYTES);
    let foreign =
        StoredVault::sealed(9, &other, &DisclosureLedger::default(), &mut rng(6)).unwrap();
    let moved = StoredVault {
        memory: foreign.memory.clone(),
        ..record.clone()
    };
    assert_eq!(
        moved.open_memory(&vault, None, None),
        Err(StoreError::MemoryUnreadable)
    );
    // Damaged: any flipped byte.
    let mut bytes = hex::decode(record.memory.as_ref().unwrap()).unwrap();
    for i in [0, 12, bytes.len() - 1] {
        bytes[i] ^= 1;
        let damaged = StoredVault {
            memory: Some(hex::encode(&bytes)),
            ..record.clone()
        };
        assert_eq!(
            damaged.open_memory(&vault, None, None),
            Err(StoreError::MemoryUnreadable)
        );
        bytes[i] ^= 1;
    }
    // A format-1 companion blob cannot stand in for the record's memory either.
    let legacy = vault
        .seal_aux(
            "ledger",
            &serde_json::to_vec(&DisclosureLedger::default()).unwrap(),
            &mut rng(7),
        )
        .unwrap();
    assert_eq!(
        dropped.open_memory(&vault, floor, Some(&legacy)),
        Err(StoreError::MemoryUnreadable)
    );
    // A record of this vault opened with another vault's key.
    assert_eq!(
        record.open_memory(&other, None, None),
        Err(StoreError::MemoryUnreadable)
    );
    // The genuine record opens.
    assert!(record.open_memory(&vault, floor, None).is_ok());
}

#[test]
fn store_import_of_the_same_vault_keeps_memory() {
    let vault = open(&VAULT_BYTES);
    let current = StoredVault::sealed(5, &vault, &used_ledger(), &mut rng(8)).unwrap();
    // The backup is the bare envelope (maybe from before the passphrase changed).
    let imported =
        StoredVault::imported(&Backup::parse(&VAULT_BYTES).unwrap(), Some(&current)).unwrap();
    assert_eq!(imported.generation, 6);
    assert!(current.same_vault(&VAULT_BYTES).unwrap());
    let (ledger, _) = imported.open_memory(&vault, Some(5), None).unwrap();
    assert_eq!(ledger, used_ledger());

    // A different vault starts without memory (the page asks the person first).
    assert!(!current.same_vault(&OTHER_BYTES).unwrap());
    let different =
        StoredVault::imported(&Backup::parse(&OTHER_BYTES).unwrap(), Some(&current)).unwrap();
    assert_eq!(different.memory, None);
    let other = open(&OTHER_BYTES);
    let (ledger, origin) = different.open_memory(&other, None, None).unwrap();
    assert_eq!(
        (ledger, origin),
        (DisclosureLedger::default(), MemoryOrigin::Fresh)
    );
}

#[test]
fn store_a_backup_file_carries_the_record_and_an_envelope_alone_still_imports() {
    let other = open(&OTHER_BYTES);
    let saved = StoredVault::sealed(9, &other, &used_ledger(), &mut rng(11)).unwrap();
    let file = Backup::file_of(&saved);
    assert!(file.starts_with(BACKUP_HEADER));
    let backup = Backup::parse(&file).unwrap();
    assert!(backup.carries_record());
    assert_eq!(backup.envelope(), &OTHER_BYTES[..]);
    // Restored over another vault's record at generation 5: the backup's memory comes along,
    // at a generation no lower than the one it was sealed at (so a floor raised by opening it
    // never refuses the next write).
    let vault = open(&VAULT_BYTES);
    let current =
        StoredVault::sealed(5, &vault, &DisclosureLedger::default(), &mut rng(12)).unwrap();
    let restored = StoredVault::imported(&backup, Some(&current)).unwrap();
    assert_eq!(restored.generation, 9);
    let (ledger, origin) = restored.open_memory(&other, None, None).unwrap();
    assert_eq!((ledger, origin), (used_ledger(), MemoryOrigin::Sealed(9)));
    // Over a newer record of another vault, the generation follows that record instead.
    let newer =
        StoredVault::sealed(20, &vault, &DisclosureLedger::default(), &mut rng(13)).unwrap();
    assert_eq!(
        StoredVault::imported(&backup, Some(&newer))
            .unwrap()
            .generation,
        21
    );
    // Over the same vault, what is stored is at least as new: it is kept.
    let stored =
        StoredVault::sealed(12, &other, &DisclosureLedger::default(), &mut rng(14)).unwrap();
    let same = StoredVault::imported(&backup, Some(&stored)).unwrap();
    assert_eq!(same.memory, stored.memory);
    // An envelope alone carries no record; anything else is not a backup.
    assert!(!Backup::parse(&OTHER_BYTES).unwrap().carries_record());
    for junk in [
        b"not a backup".to_vec(),
        [BACKUP_HEADER, b"{}"].concat(),
        [BACKUP_HEADER, &[0xff, 0xfe][..]].concat(),
        BACKUP_HEADER.to_vec(),
    ] {
        assert!(Backup::parse(&junk).is_err(), "{junk:?}");
    }
}

#[test]
fn store_profile_saves_pass_memory_writes_but_not_edits() {
    let vault = open(&VAULT_BYTES);
    let loaded = StoredVault::sealed(2, &vault, &DisclosureLedger::default(), &mut rng(9)).unwrap();
    // Another tab wrote memory only: same envelope, newer generation.
    let memory_write = StoredVault::sealed(3, &vault, &used_ledger(), &mut rng(10)).unwrap();
    assert_eq!(
        next_profile_generation(Some(&memory_write), Some(&loaded)),
        Ok(4)
    );
    // Another tab saved an edit: the envelope changed.
    let mut edited_vault = open(&VAULT_BYTES);
    edited_vault.reseal(&profile(), &mut rng(11)).unwrap();
    let edit = StoredVault::sealed(3, &edited_vault, &used_ledger(), &mut rng(12)).unwrap();
    assert_eq!(
        next_profile_generation(Some(&edit), Some(&loaded)),
        Err(StaleWrite)
    );
    assert_eq!(next_profile_generation(None, None), Ok(1));
    assert_eq!(
        next_profile_generation(Some(&loaded), None),
        Err(StaleWrite)
    );
}

#[test]
fn store_floors_only_rise() {
    let mut floors = MemoryFloors::default();
    assert_eq!(floors.get("v"), None);
    floors.raise("v", 7);
    floors.raise("v", 3);
    assert_eq!(floors.get("v"), Some(7));
    floors.forget("v");
    assert_eq!(floors.get("v"), None);
}

// ----- the frozen format-1 record ----------------------------------------------------------

fn vectors() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
}

#[derive(serde::Serialize, serde::Deserialize)]
struct StoreVector {
    comment: String,
    passphrase: String,
    /// `localStorage["tacit.vault.v1"]` as written before issue 12.
    record: String,
    /// `localStorage["tacit.ledger.v1"]` as written before issue 12 (hex).
    ledger: String,
}

/// The format-1 record as its writer makes it from the frozen `vault-v1.bin` (seeded, so the
/// same bytes every time). `TACIT_WRITE_VECTORS=1` rewrites the vector from it first; never do
/// that for a change of this build's formats: the vector must stay what a format-1 page stored.
#[test]
fn store_frozen_format1_vector_is_what_its_writer_writes() {
    let bytes = std::fs::read(vectors().join("vault-v1.bin")).unwrap();
    let vault = open(&bytes);
    let record = format!(r#"{{"generation":3,"envelope":"{}"}}"#, hex::encode(&bytes));
    let ledger = vault
        .seal_aux(
            "ledger",
            &serde_json::to_vec(&used_ledger()).unwrap(),
            &mut rng(20261129),
        )
        .unwrap();
    let vector = StoreVector {
        comment: "Stored record format 1 (before issue 12), frozen: the record must decode, its companion ledger must migrate into the record, in every future version. Never regenerate.".into(),
        passphrase: "correct horse battery staple".into(),
        record,
        ledger: hex::encode(ledger),
    };
    common::assert_vector(
        &vectors().join("store-v1.json"),
        (serde_json::to_string_pretty(&vector).unwrap() + "\n").as_bytes(),
    );
}

#[test]
fn store_frozen_format1_record_opens_and_migrates() {
    let vector: StoreVector =
        serde_json::from_str(&std::fs::read_to_string(vectors().join("store-v1.json")).unwrap())
            .unwrap();
    let record = StoredVault::decode(&vector.record).unwrap();
    assert_eq!(record.generation, 3);
    assert_eq!(record.memory, None);
    let pass = Passphrase::new(vector.passphrase.clone()).unwrap();
    let (vault, _profile) = Vault::open(&record.envelope_bytes().unwrap(), &pass).unwrap();
    let legacy = hex::decode(&vector.ledger).unwrap();
    let (ledger, origin) = record.open_memory(&vault, None, Some(&legacy)).unwrap();
    assert_eq!(origin, MemoryOrigin::Migrated);
    assert_eq!(ledger, used_ledger());
    // Migrated: written as format 2 at the next generation, which then opens on its own.
    let migrated = StoredVault::sealed(4, &vault, &ledger, &mut rng(1)).unwrap();
    let (again, origin) = migrated.open_memory(&vault, Some(4), None).unwrap();
    assert_eq!((again, origin), (ledger, MemoryOrigin::Sealed(4)));
    // A format-1 record with no companion ledger opens fresh only where no memory was seen.
    assert_eq!(
        record.open_memory(&vault, None, None).unwrap().1,
        MemoryOrigin::Fresh
    );
    assert_eq!(
        record.open_memory(&vault, Some(1), None),
        Err(StoreError::MemoryUnreadable)
    );
}
