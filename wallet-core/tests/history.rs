//! Issue 30, item 3: the person's record (the open session's log, receipts, applications and the
//! history of ended sessions) is sealed with the memory in memory format 3, migrates from the
//! older formats as empty, refuses damage, and merges across tabs append-only.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::path::PathBuf;

use proptest::prelude::*;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use serde::{Deserialize, Serialize};
use time::{Date, macros::date};
use wallet_core::history::{KeptApplication, KeptReceipt, MAX_SESSIONS, PersonRecord, Sent};
use wallet_core::store::{Backup, MEMORY_FORMAT, MEMORY_LABEL, MemoryOrigin, StoredVault};
use wallet_core::{
    Claim, ComparisonLog, DisclosureLedger, GrantId, KdfParams, Nonce, Origin, Outcome, Passphrase,
    Profile, ProfileInput, ReceiptPayload, SessionId, StoreError, Timestamp, ToolName, Vault,
};

const PASSPHRASE: &str = "correct horse battery staple";
const TODAY: Date = date!(2026 - 12 - 04);

fn vectors() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
}

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

fn input() -> ProfileInput {
    ProfileInput::new(2_900_000, "EUR", "1990-02-14", "altstadt", ["asthma"])
}

fn vault(seed: u64) -> (Vault, Profile) {
    let profile = Profile::new(&input(), TODAY).unwrap();
    let pass = Passphrase::new(PASSPHRASE.to_owned()).unwrap();
    let vault = Vault::create(&profile, &pass, KdfParams::MINIMUM, &mut rng(seed)).unwrap();
    (vault, profile)
}

fn origin(text: &str) -> Origin {
    Origin::parse(text).unwrap()
}

/// Appends one comparison asked by `site` at `at` ms.
fn ask(log: &mut ComparisonLog, site: &str, at: i64, age: u8) {
    log.append(
        Timestamp::from_millis(at),
        origin(site),
        ToolName::parse("tacit_check_age").unwrap(),
        Claim::age_at_least(age).unwrap(),
        Outcome::Satisfied,
        GrantId::parse(&format!("g{at}")).unwrap(),
        None,
    );
}

/// A record with a little of everything: an ended session and an open one with a receipt and
/// two applications. Deterministic (the frozen vector holds it).
fn rich_record() -> PersonRecord {
    let site = "https://housing.example";
    let mut record = PersonRecord::default();
    let mut log = ComparisonLog::new();
    ask(&mut log, site, 1_764_806_400_000, 18);
    record.log = log.entries().to_vec();
    record.add_application(KeptApplication {
        audience: origin(site),
        created_at: Timestamp::from_millis(1_764_806_401_000),
        sent: Sent::NotSent,
        entries: log.entries().to_vec(),
    });
    record.end_session(Timestamp::from_millis(1_764_806_500_000));

    let mut log = ComparisonLog::new();
    ask(&mut log, site, 1_764_806_600_000, 21);
    ask(&mut log, "https://tax.example", 1_764_806_601_000, 65);
    record.log = log.entries().to_vec();
    let payload = ReceiptPayload::new(
        SessionId::parse("s1").unwrap(),
        origin(site),
        Nonce::parse("n1").unwrap(),
        Timestamp::from_millis(1_764_806_602_000),
        Timestamp::from_millis(1_764_806_660_000),
        &ComparisonLog::from_entries(wallet_core::rechain(&log.entries()[..1])).unwrap(),
    )
    .unwrap();
    record.add_receipt(KeptReceipt {
        payload,
        signed: None,
    });
    record.add_application(KeptApplication {
        audience: origin(site),
        created_at: Timestamp::from_millis(1_764_806_603_000),
        sent: Sent::Released,
        entries: wallet_core::rechain(&log.entries()[..1]),
    });
    record.add_application(KeptApplication {
        audience: origin("https://tax.example"),
        created_at: Timestamp::from_millis(1_764_806_604_000),
        sent: Sent::Refused,
        entries: wallet_core::rechain(&log.entries()[1..]),
    });
    record
}

fn sealed(generation: u64, vault: &Vault, record: &PersonRecord, seed: u64) -> StoredVault {
    StoredVault::sealed_record(
        generation,
        &vault.to_bytes(),
        vault,
        &DisclosureLedger::default(),
        record,
        &mut rng(seed),
    )
    .unwrap()
}

#[test]
fn history_record_round_trips_in_memory_format_3() {
    let (vault, _) = vault(1);
    let record = rich_record();
    assert!(record.verify().is_ok());
    let stored = sealed(5, &vault, &record, 2);
    let back = StoredVault::decode(&stored.encode()).unwrap();
    let (_, kept, origin) = back.open_sealed(&vault, Some(5), None).unwrap();
    assert_eq!(origin, MemoryOrigin::Sealed(5));
    assert_eq!(kept, record);
    let plain = plaintext(&vault, &back);
    assert!(
        plain.starts_with(&format!(r#"{{"format":{MEMORY_FORMAT},"#)),
        "{plain}"
    );
    assert_eq!(MEMORY_FORMAT, 3);
    // The memory-only reader still opens it.
    assert!(back.open_memory(&vault, Some(5), None).is_ok());
}

#[test]
fn history_older_memory_formats_migrate_to_an_empty_record() {
    for name in ["store-v2.json", "store-v2-f2.json"] {
        let vector: Vector =
            serde_json::from_str(&std::fs::read_to_string(vectors().join(name)).unwrap()).unwrap();
        let stored = StoredVault::decode(&vector.record).unwrap();
        let pass = Passphrase::new(vector.passphrase.clone()).unwrap();
        let (vault, _) = Vault::open(&stored.envelope_bytes().unwrap(), &pass).unwrap();
        let (ledger, kept, origin) = stored
            .open_sealed(&vault, Some(vector.floor), None)
            .unwrap();
        assert_eq!(origin, MemoryOrigin::Sealed(7), "{name}");
        assert!(kept.is_empty(), "{name}");
        assert_ne!(
            ledger,
            DisclosureLedger::default(),
            "{name}: the memory is kept"
        );
    }
}

#[test]
fn history_record_whose_log_is_damaged_fails_closed() {
    let (vault, _) = vault(3);
    // Each way of damaging a chain: an edited entry, a dropped first entry, a reorder.
    let mut edited = rich_record();
    edited.log[1].outcome = Outcome::NotSatisfied;
    let mut dropped = rich_record();
    dropped.log.remove(0);
    let mut reordered = rich_record();
    reordered.log.swap(0, 1);
    let mut ended = rich_record();
    ended.history[0].log[0].at = Timestamp::from_millis(1);
    let mut application = rich_record();
    application.applications[0].entries[0].tool = ToolName::parse("tacit_other").unwrap();
    for (what, bad) in [
        ("edited", edited),
        ("dropped", dropped),
        ("reordered", reordered),
        ("ended session", ended),
        ("application", application),
    ] {
        assert!(bad.verify().is_err(), "{what}");
        let stored = sealed(4, &vault, &bad, 4);
        assert_eq!(
            stored.open_sealed(&vault, None, None).unwrap_err(),
            StoreError::MemoryUnreadable,
            "{what}"
        );
        assert!(PersonRecord::merge(&bad, &rich_record()).is_err(), "{what}");
        assert!(PersonRecord::merge(&rich_record(), &bad).is_err(), "{what}");
    }
    // A record of format 3 from a newer Tacit's field, or one with fields it does not have.
    let good = sealed(4, &vault, &rich_record(), 5);
    let text = plaintext(&vault, &good).replacen(r#""record":{"#, r#""record":{"x":1,"#, 1);
    let forged = reseal(&vault, &good, &text);
    assert_eq!(
        forged.open_sealed(&vault, None, None).unwrap_err(),
        StoreError::MemoryUnreadable
    );
}

#[test]
fn history_new_profile_and_import_of_another_vault_start_empty() {
    let (vault, _) = vault(6);
    let fresh = StoredVault::new(1, &vault.to_bytes());
    let (_, kept, origin) = fresh.open_sealed(&vault, None, None).unwrap();
    assert_eq!(origin, MemoryOrigin::Fresh);
    assert!(kept.is_empty());
    // A backup of the same vault keeps the sealed record; an envelope alone of another vault
    // starts empty, and a backup file of it brings that vault's record.
    let stored = sealed(3, &vault, &rich_record(), 7);
    let same =
        StoredVault::imported(&Backup::parse(&vault.to_bytes()).unwrap(), Some(&stored)).unwrap();
    assert_eq!(
        same.open_sealed(&vault, Some(3), None).unwrap().1,
        rich_record()
    );
    let (other, _) = self::vault(8);
    let replaced =
        StoredVault::imported(&Backup::parse(&other.to_bytes()).unwrap(), Some(&stored)).unwrap();
    assert!(
        replaced
            .open_sealed(&other, None, None)
            .unwrap()
            .1
            .is_empty()
    );
    let file = Backup::file_of(&sealed(4, &other, &rich_record(), 9));
    let restored = StoredVault::imported(&Backup::parse(&file).unwrap(), Some(&stored)).unwrap();
    assert_eq!(
        restored.open_sealed(&other, None, None).unwrap().1,
        rich_record()
    );
}

#[test]
fn history_end_session_moves_the_open_session_and_bounds_the_history() {
    let mut record = rich_record();
    let open_log = record.log.clone();
    assert_eq!(record.end_session(Timestamp::from_millis(9)), 0);
    assert!(record.log.is_empty() && record.receipts.is_empty());
    assert!(record.applications.is_empty());
    assert_eq!(record.history.len(), 2);
    assert_eq!(record.history[1].log, open_log);
    assert_eq!(record.history[1].applications.len(), 2);
    // An empty session leaves no entry in the history.
    assert_eq!(record.end_session(Timestamp::from_millis(10)), 0);
    assert_eq!(record.history.len(), 2);
    let mut dropped = 0;
    for i in 0..MAX_SESSIONS {
        let mut log = ComparisonLog::new();
        ask(&mut log, "https://a.example", 100 + i as i64, 18);
        record.log = log.entries().to_vec();
        dropped += record.end_session(Timestamp::from_millis(1000 + i as i64));
    }
    assert_eq!(record.history.len(), MAX_SESSIONS);
    assert_eq!(dropped, 2, "the two oldest were dropped");
    let export: serde_json::Value = serde_json::from_str(&record.export_history()).unwrap();
    assert_eq!(export["tacit_history"], 1);
    assert_eq!(export["sessions"].as_array().unwrap().len(), MAX_SESSIONS);
    record.clear_history();
    assert!(record.history.is_empty());
    assert_eq!(record.cleared, 1);
}

#[test]
fn history_merge_keeps_both_tabs_answers_and_never_drops_stored_ones() {
    let base = rich_record();
    let mut a = base.clone();
    let mut b = base.clone();
    let mut la = ComparisonLog::from_entries(a.log.clone()).unwrap();
    ask(&mut la, "https://a.example", 5, 30);
    a.log = la.entries().to_vec();
    let mut lb = ComparisonLog::from_entries(b.log.clone()).unwrap();
    ask(&mut lb, "https://b.example", 6, 40);
    ask(&mut lb, "https://b.example", 7, 41);
    b.log = lb.entries().to_vec();
    let merged = PersonRecord::merge(&a, &b).unwrap();
    assert!(merged.verify().is_ok());
    assert_eq!(merged.log.len(), base.log.len() + 3);
    assert_eq!(
        merged.log[..a.log.len()],
        a.log[..],
        "stored entries unchanged"
    );
    // Merging again, either way round, adds nothing.
    let again = PersonRecord::merge(&merged, &b).unwrap();
    assert_eq!(again.log, merged.log);
    assert_eq!(PersonRecord::merge(&merged, &a).unwrap().log, merged.log);
    // A prefix is absorbed.
    assert_eq!(PersonRecord::merge(&base, &a).unwrap().log, a.log);
}

#[test]
fn history_merge_after_end_session_and_delete_does_not_resurrect() {
    let stale = rich_record();
    let mut ended = stale.clone();
    ended.end_session(Timestamp::from_millis(2_000_000_000_000));
    // A tab still holding the ended session's open log does not put it back.
    let merged = PersonRecord::merge(&ended, &stale).unwrap();
    assert!(merged.log.is_empty());
    assert_eq!(merged.history.len(), 2);
    let merged = PersonRecord::merge(&stale, &ended).unwrap();
    assert!(
        merged.log.is_empty(),
        "the record that ended the session wins either way"
    );
    assert_eq!(merged.history, ended.history);
    // A deleted history stays deleted against a tab that still holds it.
    let mut cleared = ended.clone();
    cleared.clear_history();
    for (stored, mine) in [(&cleared, &ended), (&ended, &cleared)] {
        let merged = PersonRecord::merge(stored, mine).unwrap();
        assert!(merged.history.is_empty());
        assert_eq!(merged.cleared, 1);
    }
    // A receipt signed in one tab supersedes the unsigned copy of the other.
    let merged = PersonRecord::merge(&stale, &stale).unwrap();
    assert_eq!(merged, stale);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Tabs that each append, end sessions or delete the history, and write read-merge-write in
    /// any order: every stored entry stays, every chain verifies, and nothing that was ended or
    /// deleted comes back into the open session.
    #[test]
    fn history_tabs_never_lose_a_stored_entry(steps in proptest::collection::vec((0u8..3, 0u8..4), 1..40)) {
        let mut stored = PersonRecord::default();
        let mut tabs = [PersonRecord::default(), PersonRecord::default(), PersonRecord::default()];
        let mut t = 0i64;
        for (tab, action) in steps {
            let tab = usize::from(tab);
            t += 1;
            // Each write is read-merge-write of this tab's copy into storage.
            let mine = &mut tabs[tab];
            match action {
                0 | 1 => {
                    let mut log = ComparisonLog::from_entries(mine.log.clone()).unwrap();
                    ask(&mut log, "https://p.example", t, 18 + action);
                    mine.log = log.entries().to_vec();
                }
                2 => {
                    *mine = PersonRecord::merge(&stored, mine).unwrap();
                    mine.end_session(Timestamp::from_millis(t));
                }
                _ => {
                    *mine = PersonRecord::merge(&stored, mine).unwrap();
                    mine.clear_history();
                }
            }
            let before = stored.clone();
            let next = PersonRecord::merge(&stored, mine).unwrap();
            prop_assert!(next.verify().is_ok());
            prop_assert!(next.session >= before.session);
            prop_assert!(next.cleared >= before.cleared);
            if next.session == before.session {
                prop_assert_eq!(&next.log[..before.log.len()], &before.log[..]);
            }
            if next.cleared == before.cleared {
                for s in &before.history {
                    prop_assert!(next.history.contains(s));
                }
            }
            stored = next;
            *mine = stored.clone();
        }
    }
}

// ----- the frozen vector of memory format 3 ---------------------------------------------------

#[derive(Serialize, Deserialize)]
struct Vector {
    comment: String,
    passphrase: String,
    today: String,
    profile: ProfileInput,
    floor: u64,
    record: String,
}

/// `store-v3.json`: a record with memory format 3 holding [`rich_record`], written by this
/// build from seed 20261204. Freeze it when format 4 comes: it must open in every later build.
#[test]
fn history_frozen_vector_of_memory_format_3() {
    let (vault, profile) = vault(20_261_204);
    let mut r = rng(20_261_205);
    let stored = StoredVault::sealed_record(
        7,
        &vault.to_bytes(),
        &vault,
        &DisclosureLedger::default(),
        &rich_record(),
        &mut r,
    )
    .unwrap();
    let vector = Vector {
        comment: "Stored record with memory format 3 (issue 30): the disclosure memory and the \
                  person's record (open session's log, receipts, applications, one ended \
                  session). Must open in every future version."
            .into(),
        passphrase: PASSPHRASE.into(),
        today: wallet_core::profile::format_date(TODAY),
        profile: input(),
        floor: 7,
        record: stored.encode(),
    };
    let mut text = serde_json::to_string_pretty(&vector).unwrap();
    text.push('\n');
    common::assert_vector(&vectors().join("store-v3.json"), text.as_bytes());

    let frozen: Vector =
        serde_json::from_str(&std::fs::read_to_string(vectors().join("store-v3.json")).unwrap())
            .unwrap();
    let stored = StoredVault::decode(&frozen.record).unwrap();
    let pass = Passphrase::new(frozen.passphrase).unwrap();
    let (open, opened) = Vault::open(&stored.envelope_bytes().unwrap(), &pass).unwrap();
    assert_eq!(opened, profile);
    let (_, kept, origin) = stored.open_sealed(&open, Some(frozen.floor), None).unwrap();
    assert_eq!(origin, MemoryOrigin::Sealed(7));
    assert_eq!(kept, rich_record());
}

fn plaintext(vault: &Vault, record: &StoredVault) -> String {
    let sealed = hex::decode(record.memory.as_ref().unwrap()).unwrap();
    String::from_utf8(vault.open_aux(MEMORY_LABEL, &sealed).unwrap().to_vec()).unwrap()
}

fn reseal(vault: &Vault, record: &StoredVault, text: &str) -> StoredVault {
    let sealed = vault
        .seal_aux(MEMORY_LABEL, text.as_bytes(), &mut rng(99))
        .unwrap();
    StoredVault {
        memory: Some(hex::encode(sealed)),
        ..record.clone()
    }
}

/// The stored size of a record whose open log is at its bound: it must fit in `localStorage`
/// (5 MB of text per origin in Chromium) with room for the rest.
#[test]
fn history_sizes() {
    let (vault, _) = vault(11);
    let mut log = ComparisonLog::new();
    for i in 0..wallet_core::history::MAX_SESSION_ENTRIES {
        ask(
            &mut log,
            "https://housing.example",
            1_764_806_400_000 + i as i64,
            18,
        );
    }
    let record = PersonRecord {
        log: log.entries().to_vec(),
        ..PersonRecord::default()
    };
    assert!(record.check_bounds().is_ok());
    let text = sealed(2, &vault, &record, 12).encode();
    eprintln!(
        "sealed record, {} entries: {} bytes",
        record.log.len(),
        text.len()
    );
    assert!(text.len() < 1_500_000, "{} bytes", text.len());
    let mut over = record.clone();
    ask(&mut log, "https://housing.example", 1, 18);
    over.log = log.entries().to_vec();
    assert_eq!(over.check_bounds(), Err(wallet_core::history::Full::Log));
}
