//! Issue 15, upgradable formats: the profile record sealed in a vault and the disclosure memory
//! sealed in a stored record carry a format version. Frozen vectors written by earlier builds
//! open forever and migrate; a record from a newer build is refused, never read as garbage.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::path::PathBuf;

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use serde::{Deserialize, Serialize};
use time::{Date, macros::date};
use wallet_core::format::{Record, version_of};
use wallet_core::profile::PROFILE_FORMAT;
use wallet_core::store::{MEMORY_FORMAT, MEMORY_LABEL, MemoryOrigin, StoredVault};
use wallet_core::{
    Attribute, Claim, ConditionCode, Currency, DisclosureLedger, DistrictId, KdfParams,
    LanguageTag, Money, NewerFormat, Passphrase, Profile, ProfileInput, StoreError, Vault,
};

const PASSPHRASE: &str = "correct horse battery staple";
const TODAY: Date = date!(2026 - 12 - 01);

fn vectors() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
}

fn pass() -> Passphrase {
    Passphrase::new(PASSPHRASE.to_owned()).unwrap()
}

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

fn district(code: &str) -> DistrictId {
    DistrictId::parse(code).unwrap()
}

fn condition(code: &str) -> ConditionCode {
    ConditionCode::parse(code).unwrap()
}

/// The profile in the frozen record vector: several conditions, another currency than vault-v1.
fn record_input() -> ProfileInput {
    ProfileInput::new(
        4_150_000,
        "SEK",
        "1968-10-31",
        "westend",
        ["diabetes", "epilepsy"],
    )
}

/// The `"format":n` member of a (profile or memory) record of format `n`, 2 and up.
fn tag(n: u32) -> String {
    format!(r#""format":{n}"#)
}

/// `current`, a profile record as this build writes it, relabelled as the older format `n`:
/// its tag replaced by `n`'s, or removed for format 1. Checks that the result really is a
/// format-`n` record, so a test built on it cannot silently stop testing older formats.
fn profile_as_format(current: &str, n: u32) -> String {
    assert!(n < PROFILE_FORMAT, "{n} is not an older format");
    let now = tag(PROFILE_FORMAT);
    assert!(current.starts_with(&format!("{{{now},")), "{current}");
    let older = if n == 1 {
        current.replacen(&format!("{now},"), "", 1)
    } else {
        current.replacen(&now, &tag(n), 1)
    };
    assert_eq!(
        version_of(older.as_bytes(), Record::Profile, PROFILE_FORMAT),
        Ok(n),
        "{older}"
    );
    older
}

/// A memory that knows something about every attribute, with one attribute reset (epoch 1).
/// Deterministic: the frozen vector's memory must equal it in every future build.
fn rich_ledger(profile: &Profile) -> DisclosureLedger {
    let mut ledger = DisclosureLedger::default();
    let sek = Currency::parse("SEK").unwrap();
    let claims = [
        Claim::income_below(Money {
            amount_minor: 6_000_000,
            currency: sek,
        })
        .unwrap(),
        Claim::age_at_least(18).unwrap(),
        Claim::age_at_least(50).unwrap(),
        Claim::resides_in(
            ["altstadt", "nordhafen", "westend", "ostkreuz", "lindenau"].map(district),
        )
        .unwrap(),
        Claim::has_none_of(["asthma", "pregnancy"].map(condition)).unwrap(),
    ];
    for claim in &claims {
        ledger.answer(profile, claim, TODAY);
    }
    ledger.reset(Attribute::District);
    let again =
        Claim::resides_in(["westend", "suedpark", "bergfeld", "altstadt"].map(district)).unwrap();
    ledger.answer(profile, &again, TODAY);
    ledger
}

/// A stored record (record format 2, memory sealed in it) frozen as today's build writes it.
#[derive(Serialize, Deserialize)]
struct RecordVector {
    comment: String,
    passphrase: String,
    today: String,
    /// The profile sealed in the record's vault.
    profile: ProfileInput,
    /// The highest memory generation the browser had seen when the record was written.
    floor: u64,
    /// `localStorage` text of the record.
    record: String,
}

/// The frozen records as their writers make them today. `store-v2.json` was written by the build
/// of 1 December 2026 (profile record format 1, memory format 1) with seed 20261201,
/// `store-v2-f2.json` by the first versioned build (formats 2) with seed 20261202: a vault
/// from the seed, then `StoredVault::sealed(7, ..)` of [`rich_ledger`]. This build seals newer
/// formats, so the vectors are never rewritten; what it still makes identically is checked: the
/// inputs, the vault up to its sealed profile, and the memory's seal nonce.
#[test]
fn frozen_record_vectors_are_what_their_writers_wrote() {
    for (name, seed) in [
        ("store-v2.json", 20_261_201),
        ("store-v2-f2.json", 20_261_202),
    ] {
        let vector = read_vector(name);
        assert_eq!(vector.passphrase, PASSPHRASE, "{name}");
        assert_eq!(
            vector.today,
            wallet_core::profile::format_date(TODAY),
            "{name}"
        );
        let json = |input: &ProfileInput| serde_json::to_value(input).unwrap();
        assert_eq!(json(&vector.profile), json(&record_input()), "{name}");
        assert_eq!(vector.floor, 7, "{name}");

        let profile = Profile::new(&record_input(), TODAY).unwrap();
        let mut rng = rng(seed);
        let vault = Vault::create(&profile, &pass(), KdfParams::MINIMUM, &mut rng).unwrap();
        let written = StoredVault::sealed(7, &vault, &rich_ledger(&profile), &mut rng).unwrap();
        let frozen = StoredVault::decode(&vector.record).unwrap();
        assert_eq!(frozen.generation, written.generation, "{name}");
        let before = common::BEFORE_SEALED;
        assert_eq!(
            frozen.envelope_bytes().unwrap()[..before],
            written.envelope_bytes().unwrap()[..before],
            "{name}"
        );
        let nonce =
            |r: &StoredVault| hex::decode(r.memory.as_ref().unwrap()).unwrap()[..12].to_vec();
        assert_eq!(nonce(&frozen), nonce(&written), "{name}");
    }
}

fn read_vector(name: &str) -> RecordVector {
    serde_json::from_str(&std::fs::read_to_string(vectors().join(name)).unwrap()).unwrap()
}

fn read_record_vector() -> RecordVector {
    read_vector("store-v2.json")
}

#[test]
fn frozen_record_of_format2_opens() {
    let vector = read_vector("store-v2-f2.json");
    let today = wallet_core::profile::parse_date(&vector.today).unwrap();
    let expected = Profile::new(&vector.profile, today).unwrap();
    let record = StoredVault::decode(&vector.record).unwrap();
    let pass = Passphrase::new(vector.passphrase.clone()).unwrap();
    let (vault, profile) = Vault::unlock(&record.envelope_bytes().unwrap(), &pass).unwrap();
    assert_eq!(profile, expected);
    let (ledger, origin) = record
        .open_memory(&vault, Some(vector.floor), None)
        .unwrap();
    assert_eq!(origin, MemoryOrigin::Sealed(7));
    assert_eq!(ledger, rich_ledger(&expected));
    assert!(memory_plaintext(&vault, &record).starts_with(r#"{"format":2,"#));
    // A different vault from the format-1 vector, so the two vectors cover two vaults.
    assert_ne!(vector.record, read_record_vector().record);
}

#[test]
fn frozen_record_from_before_versions_opens_and_migrates() {
    let vector = read_record_vector();
    let today = wallet_core::profile::parse_date(&vector.today).unwrap();
    let expected = Profile::new(&vector.profile, today).unwrap();
    let record = StoredVault::decode(&vector.record).unwrap();
    let pass = Passphrase::new(vector.passphrase.clone()).unwrap();
    let (vault, profile) = Vault::open(&record.envelope_bytes().unwrap(), &pass).unwrap();
    assert_eq!(profile, expected);
    let (ledger, origin) = record
        .open_memory(&vault, Some(vector.floor), None)
        .unwrap();
    assert_eq!(origin, wallet_core::store::MemoryOrigin::Sealed(7));
    assert_eq!(ledger, rich_ledger(&expected));
    assert_eq!(
        ledger.epochs().district,
        1,
        "the vector's memory has a reset"
    );
    assert!(!memory_plaintext(&vault, &record).contains("format"));
}

/// The plaintext of a record's sealed memory.
fn memory_plaintext(vault: &Vault, record: &StoredVault) -> String {
    let sealed = hex::decode(record.memory.as_ref().unwrap()).unwrap();
    String::from_utf8(vault.open_aux(MEMORY_LABEL, &sealed).unwrap().to_vec()).unwrap()
}

// ----- the memory record: every known format reads, a newer one is refused ------------------

fn record_vault() -> (Vault, Profile) {
    let profile = Profile::new(&record_input(), TODAY).unwrap();
    let vault = Vault::create(&profile, &pass(), KdfParams::MINIMUM, &mut rng(11)).unwrap();
    (vault, profile)
}

/// A record whose memory plaintext is `plaintext`, sealed under `vault`'s key as any build
/// (or a hostile page holding the key) could seal it.
fn record_with_memory(vault: &Vault, plaintext: &str) -> StoredVault {
    let sealed = vault
        .seal_aux(MEMORY_LABEL, plaintext.as_bytes(), &mut rng(12))
        .unwrap();
    StoredVault {
        generation: 9,
        envelope: hex::encode(vault.to_bytes()),
        memory: Some(hex::encode(sealed)),
    }
}

fn ledger_json(ledger: &DisclosureLedger) -> String {
    serde_json::to_string(ledger).unwrap()
}

#[test]
fn memory_of_every_known_format_reads_and_migrates() {
    let (vault, profile) = record_vault();
    let ledger = rich_ledger(&profile);
    let body = format!(r#""generation":9,"ledger":{}"#, ledger_json(&ledger));
    for text in [
        format!("{{{body}}}"),
        format!(r#"{{"format":2,{body}}}"#),
        format!(r#"{{{body},"format":2}}"#),
    ] {
        let record = record_with_memory(&vault, &text);
        assert_eq!(
            record.open_memory(&vault, Some(9), None),
            Ok((ledger.clone(), MemoryOrigin::Sealed(9))),
            "{text}"
        );
    }
    // What this build writes is the current format and reads back as itself.
    let written = StoredVault::sealed(10, &vault, &ledger, &mut rng(13)).unwrap();
    let text = memory_plaintext(&vault, &written);
    assert!(
        text.starts_with(&format!("{{{},", tag(MEMORY_FORMAT))),
        "{text}"
    );
    assert_eq!(
        written.open_memory(&vault, Some(10), None),
        Ok((ledger, MemoryOrigin::Sealed(10)))
    );
}

#[test]
fn memory_from_a_newer_tacit_is_refused_as_such_and_malformed_memory_fails_closed() {
    let (vault, profile) = record_vault();
    let ledger = ledger_json(&rich_ledger(&profile));
    let newer = MEMORY_FORMAT + 1;
    let record = record_with_memory(
        &vault,
        &format!(r#"{{"format":{newer},"generation":9,"ledger":{ledger},"trust":[1]}}"#),
    );
    let refused = record.open_memory(&vault, Some(9), None).unwrap_err();
    assert_eq!(
        refused,
        StoreError::NewerFormat(NewerFormat {
            record: Record::Memory,
            found: newer,
            known: MEMORY_FORMAT,
        })
    );
    assert!(refused.to_string().contains("made by a newer Tacit"));
    assert!(refused.to_string().contains("disclosure memory"));

    // Unknown members inside a known format, anywhere, stay refused: strictness is kept.
    let extra_ledger = ledger.replacen('{', r#"{"income_exact":2840000,"#, 1);
    for text in [
        format!(r#"{{"format":2,"generation":9,"ledger":{ledger},"x":1}}"#),
        format!(r#"{{"generation":9,"ledger":{ledger},"x":1}}"#),
        format!(r#"{{"format":2,"generation":9,"ledger":{extra_ledger}}}"#),
        format!(r#"{{"generation":9,"ledger":{extra_ledger}}}"#),
        format!(r#"{{"format":1,"generation":9,"ledger":{ledger}}}"#),
        format!(r#"{{"format":"2","generation":9,"ledger":{ledger}}}"#),
        r#"{"format":2,"generation":9}"#.to_owned(),
        format!(r#"[2,9,{ledger}]"#),
    ] {
        let record = record_with_memory(&vault, &text);
        assert_eq!(
            record.open_memory(&vault, Some(9), None),
            Err(StoreError::MemoryUnreadable),
            "{text}"
        );
    }
}

#[test]
fn profile_record_of_every_known_format_reads_and_unknown_fields_are_refused() {
    let profile = Profile::new(&record_input(), TODAY).unwrap();
    let current = serde_json::to_string(&profile).unwrap();
    let format = PROFILE_FORMAT;
    assert!(
        current.starts_with(&format!(r#"{{"format":{format},"#)),
        "{current}"
    );
    let v1 = profile_as_format(&current, 1);
    for n in 1..format {
        let older = profile_as_format(&current, n);
        assert_eq!(
            Profile::from_record(older.as_bytes()),
            Ok(profile.clone()),
            "{older}"
        );
        assert!(serde_json::from_str::<Profile>(&older).is_err(), "{older}");
    }
    assert_eq!(
        Profile::from_record(current.as_bytes()),
        Ok(profile.clone())
    );
    assert_eq!(serde_json::from_str::<Profile>(&current).unwrap(), profile);
    // serde reads the current format only; `from_record` reads them all.
    assert!(serde_json::from_str::<Profile>(&v1).is_err());
    for bad in [
        current.replacen('{', r#"{"ssn":"123","#, 1),
        v1.replacen('{', r#"{"ssn":"123","#, 1),
        current.replace("westend", "atlantis"),
    ] {
        assert!(Profile::from_record(bad.as_bytes()).is_err(), "{bad}");
        assert!(serde_json::from_str::<Profile>(&bad).is_err(), "{bad}");
    }
    let newer = current.replacen(
        &format!(r#""format":{format}"#),
        &format!(r#""format":{}"#, format + 1),
        1,
    );
    assert_eq!(
        Profile::from_record(newer.as_bytes()),
        Err(wallet_core::ReadError::Newer(NewerFormat {
            record: Record::Profile,
            found: format + 1,
            known: format,
        }))
    );
}

// ----- format 3: the field added after the vectors were frozen --------------------------------

fn language(tag: &str) -> LanguageTag {
    LanguageTag::parse(tag).unwrap()
}

#[test]
fn frozen_vectors_migrate_to_a_profile_without_a_preferred_language() {
    for name in ["store-v2.json", "store-v2-f2.json"] {
        let vector = read_vector(name);
        let record = StoredVault::decode(&vector.record).unwrap();
        let pass = Passphrase::new(vector.passphrase.clone()).unwrap();
        let (mut vault, profile) = Vault::unlock(&record.envelope_bytes().unwrap(), &pass).unwrap();
        assert_eq!(profile.preferred_language(), None, "{name}");
        // Migrated, then saved by this build with the new field set: opens in the current format.
        let profile = profile.with_preferred_language(Some(language("sv-SE")));
        vault.reseal(&profile, &mut rng(14)).unwrap();
        let (_, reopened) = Vault::unlock(&vault.to_bytes(), &pass).unwrap();
        assert_eq!(reopened, profile, "{name}");
        assert_eq!(reopened.preferred_language().unwrap().as_str(), "sv-SE");
    }
}

#[test]
fn profile_format3_round_trips_and_keeps_formats_apart() {
    let profile = Profile::new(&record_input(), TODAY)
        .unwrap()
        .with_preferred_language(Some(language("de-CH")));
    let json = serde_json::to_string(&profile).unwrap();
    assert!(
        json.starts_with(&format!("{{{},", tag(PROFILE_FORMAT))),
        "{json}"
    );
    assert!(
        json.ends_with(r#","preferred_language":"de-CH"}"#),
        "{json}"
    );
    assert_eq!(Profile::from_record(json.as_bytes()), Ok(profile.clone()));
    assert_eq!(serde_json::from_str::<Profile>(&json).unwrap(), profile);
    let vault = Vault::create(&profile, &pass(), KdfParams::MINIMUM, &mut rng(15)).unwrap();
    let (_, opened) = Vault::unlock(&vault.to_bytes(), &pass()).unwrap();
    assert_eq!(opened, profile);

    // The field exists only from format 3 on: an older format carrying it is refused, as is a
    // malformed value.
    for bad in [
        profile_as_format(&json, 2),
        profile_as_format(&json, 1),
        json.replace("de-CH", "de_CH"),
        json.replace("de-CH", "x"),
        json.replace("de-CH", "deutsch-schweiz-123456789"),
        json.replace(r#""de-CH""#, "7"),
    ] {
        assert!(Profile::from_record(bad.as_bytes()).is_err(), "{bad}");
    }
    // A current record without the optional field reads as no preference.
    let none = Profile::new(&record_input(), TODAY).unwrap();
    let json = serde_json::to_string(&none).unwrap();
    assert!(!json.contains("preferred_language"), "{json}");
    assert_eq!(Profile::from_record(json.as_bytes()), Ok(none));
}

#[test]
fn profile_edits_keep_the_preferred_language() {
    let profile = Profile::new(&record_input(), TODAY)
        .unwrap()
        .with_preferred_language(Some(language("fr")));
    let mut input = profile.to_input();
    input.district = "altstadt".to_owned();
    let edited = profile.edited(&input, TODAY).unwrap();
    assert_eq!(edited.district().as_str(), "altstadt");
    assert_eq!(edited.preferred_language(), Some(&language("fr")));
    assert_ne!(edited, Profile::new(&input, TODAY).unwrap());
}

#[test]
fn language_tags_are_checked_for_shape() {
    for good in ["de", "de-CH", "sr-Latn-RS", "zh-Hant-TW", "es-419", "gsw"] {
        assert_eq!(language(good).as_str(), good);
    }
    for bad in [
        "",
        "d",
        "de-",
        "-de",
        "de--CH",
        "d3",
        "de_CH",
        "de CH",
        "dé",
        "de-CHxxxxxxx",
        "abcdefghi",
        "de-CH-1-2-3-4-5-6-7-8-9-10-11-12-13-14",
    ] {
        assert!(LanguageTag::parse(bad).is_err(), "{bad:?}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Every format reads any valid profile back to the same facts: the migrations lose
    /// nothing, whatever the profile.
    #[test]
    fn every_format_reads_any_profile_to_the_same_facts(input in common::arb_input()) {
        let profile = Profile::new(&input, common::today()).unwrap();
        let current = serde_json::to_string(&profile).unwrap();
        proptest::prop_assert_eq!(Profile::from_record(current.as_bytes()), Ok(profile.clone()));
        // Every older format, each checked to be that format by `profile_as_format`.
        for n in 1..PROFILE_FORMAT {
            let text = profile_as_format(&current, n);
            proptest::prop_assert_eq!(Profile::from_record(text.as_bytes()), Ok(profile.clone()), "{}", text);
        }
        let tagged = profile.clone().with_preferred_language(Some(language("nb-NO")));
        let json = serde_json::to_string(&tagged).unwrap();
        proptest::prop_assert_eq!(Profile::from_record(json.as_bytes()), Ok(tagged));
    }
}
