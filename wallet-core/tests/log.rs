//! The comparison log: chaining, tamper detection, the byte-stable export and its frozen vector.

// clippy.toml allows unwrap in `#[test]` fns only; the helpers here are test code too.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use wallet_core::log::{ENTRY_DOMAIN, EXPORT_HEADER, chain_head};
use wallet_core::profile::MAX_INCOME_MINOR;
use wallet_core::{
    ChainBroken, Claim, ComparisonLog, ConditionCode, Currency, DistrictId, GrantId, Hash,
    LogEntry, LogError, Money, Origin, Outcome, Timestamp, ToolName, catalogue, verify_entries,
};

mod common;

const T0: i64 = 1_777_627_800_000; // 2026-05-01T09:30:00Z

const VECTOR_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/log-v1.txt");
/// The frozen vector's head. If this changes, the entry format changed: that is a new version.
const VECTOR_HEAD: &str = "53e77efc96c40909ceaa8dc68da502dec90b127fb2499d1f4ba84479687911cc";

fn origin(s: &str) -> Origin {
    Origin::parse(s).unwrap()
}

fn tool(s: &str) -> ToolName {
    ToolName::parse(s).unwrap()
}

fn grant(s: &str) -> GrantId {
    GrantId::parse(s).unwrap()
}

fn income_below(minor: u64, currency: &str) -> Claim {
    Claim::income_below(Money {
        amount_minor: minor,
        currency: Currency::parse(currency).unwrap(),
    })
    .unwrap()
}

fn resides_in(codes: &[&str]) -> Claim {
    Claim::resides_in(codes.iter().map(|c| DistrictId::parse(c).unwrap())).unwrap()
}

fn has_none_of(codes: &[&str]) -> Claim {
    Claim::has_none_of(codes.iter().map(|c| ConditionCode::parse(c).unwrap())).unwrap()
}

/// `log.append` with its ids given as text: at `at_ms`, for `origin`, through `tool_name`, under
/// `grant_id`.
fn append_at<'a>(
    log: &'a mut ComparisonLog,
    at_ms: i64,
    origin_text: &str,
    tool_name: &str,
    claim: Claim,
    outcome: Outcome,
    grant_id: &str,
) -> &'a LogEntry {
    log.append(
        Timestamp::from_millis(at_ms),
        origin(origin_text),
        tool(tool_name),
        claim,
        outcome,
        grant(grant_id),
        None,
    )
}

/// Four entries from two sites, every claim kind and every outcome.
fn sample_log() -> ComparisonLog {
    let housing = "https://housing.example";
    let pharmacy = "http://127.0.0.1:8082";
    let mut log = ComparisonLog::new();
    for (at, origin, tool, claim, outcome, grant) in [
        (
            T0,
            housing,
            "tacit.claim.income_below",
            income_below(3_000_000, "EUR"),
            Outcome::Satisfied,
            "g-housing-1",
        ),
        (
            T0 + 1_500,
            housing,
            "tacit.claim.resides_in",
            resides_in(&["westend", "altstadt", "nordhafen"]),
            Outcome::NotSatisfied,
            "g-housing-1",
        ),
        (
            T0 + 60_000,
            pharmacy,
            "tacit.claim.age_at_least",
            Claim::age_at_least(18).unwrap(),
            Outcome::Declined,
            "g-pharmacy_2",
        ),
        (
            T0 + 61_000,
            pharmacy,
            "tacit.claim.has_none_of",
            has_none_of(&["pregnancy", "liver-disease"]),
            Outcome::Invalid,
            "g-pharmacy_2",
        ),
    ] {
        append_at(&mut log, at, origin, tool, claim, outcome, grant);
    }
    log
}

#[test]
fn append_chains_entries_and_verifies() {
    let log = sample_log();
    assert_eq!(log.len(), 4);
    let mut prev = Hash::ZERO;
    for (i, entry) in log.entries().iter().enumerate() {
        assert_eq!(entry.seq, i as u64);
        assert_eq!(entry.prev_hash, prev);
        assert_eq!(entry.hash, entry.compute_hash());
        prev = entry.hash;
    }
    assert_eq!(log.head(), prev);
    log.verify().unwrap();
    log.verify_with_head(prev).unwrap();
}

#[test]
fn append_returns_the_new_entry() {
    let mut log = sample_log();
    let head = log.head();
    let entry = append_at(
        &mut log,
        T0,
        "https://housing.example",
        "t",
        Claim::age_at_least(21).unwrap(),
        Outcome::Satisfied,
        "g",
    )
    .clone();
    assert_eq!(entry.seq, 4);
    assert_eq!(entry.prev_hash, head);
    assert_eq!(log.head(), entry.hash);
}

#[test]
fn empty_log_has_zero_head_and_verifies() {
    let log = ComparisonLog::new();
    assert!(log.is_empty());
    assert_eq!(log.head(), Hash::ZERO);
    log.verify().unwrap();
    log.verify_with_head(Hash::ZERO).unwrap();
    assert_eq!(log.export(), format!("{EXPORT_HEADER}\n"));
    assert_eq!(ComparisonLog::import(&log.export()).unwrap(), log);
}

#[test]
fn time_may_go_backwards() {
    let mut log = ComparisonLog::new();
    for at in [T0, T0 - 3_600_000, -1] {
        append_at(
            &mut log,
            at,
            "https://a.example",
            "t",
            Claim::age_at_least(18).unwrap(),
            Outcome::Satisfied,
            "g",
        );
    }
    log.verify().unwrap();
    assert_eq!(ComparisonLog::import(&log.export()).unwrap(), log);
}

#[test]
fn canonical_bytes_are_domain_separated_and_length_prefixed() {
    let log = sample_log();
    let entry = &log.entries()[0];
    let bytes = entry.canonical_bytes();
    assert!(bytes.starts_with(ENTRY_DOMAIN));
    // seq: length 8, then 0 as u64 big-endian.
    let rest = &bytes[ENTRY_DOMAIN.len()..];
    assert_eq!(&rest[..12], &[0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0]);
    // prev_hash last: length 32, then the bytes.
    let tail = &bytes[bytes.len() - 36..];
    assert_eq!(&tail[..4], &[0, 0, 0, 32]);
    assert_eq!(&tail[4..], Hash::ZERO.as_bytes());
    assert_eq!(entry.hash, Hash::digest(&bytes));
}

/// Each way of editing one field of entry 1 of the sample log.
/// A named way of tampering with a value.
type Edit<T> = (&'static str, fn(&mut T));

fn field_edits() -> Vec<Edit<LogEntry>> {
    vec![
        ("seq", |e| e.seq += 1),
        ("at", |e| e.at = e.at.plus_millis(1)),
        ("origin", |e| e.origin = origin("https://evil.example")),
        ("tool", |e| e.tool = tool("tacit.claim.other")),
        ("claim", |e| e.claim = resides_in(&["altstadt"])),
        ("outcome", |e| e.outcome = Outcome::Satisfied),
        ("grant_id", |e| e.grant_id = grant("g-other")),
        ("prev_hash", |e| e.prev_hash = Hash::ZERO),
        ("hash", |e| e.hash = Hash::digest(b"forged")),
    ]
}

#[test]
fn verify_detects_an_edit_to_each_field() {
    let log = sample_log();
    for (name, edit) in field_edits() {
        let mut entries = log.entries().to_vec();
        edit(&mut entries[1]);
        assert_ne!(entries[1], log.entries()[1], "{name}: edit was a no-op");
        assert_eq!(
            verify_entries(&entries),
            Err(ChainBroken { index: 1 }),
            "{name}"
        );
        assert_eq!(
            ComparisonLog::from_entries(entries),
            Err(ChainBroken { index: 1 }),
            "{name}"
        );
    }
}

#[test]
fn verify_detects_an_edit_that_recomputes_the_hash() {
    let log = sample_log();
    for (name, edit) in field_edits() {
        if name == "hash" {
            continue;
        }
        let mut entries = log.entries().to_vec();
        edit(&mut entries[1]);
        entries[1].hash = entries[1].compute_hash();
        let index = if matches!(name, "seq" | "prev_hash") {
            1
        } else {
            2
        };
        assert_eq!(
            verify_entries(&entries),
            Err(ChainBroken { index }),
            "{name}"
        );
    }
    // Rehashing the last entry leaves a valid chain: only the known head reveals it.
    let mut entries = log.entries().to_vec();
    entries[3].outcome = Outcome::Satisfied;
    entries[3].hash = entries[3].compute_hash();
    let forged = ComparisonLog::from_entries(entries).unwrap();
    assert_eq!(
        forged.verify_with_head(log.head()),
        Err(ChainBroken { index: 4 })
    );
}

#[test]
fn verify_detects_removal_of_first_and_middle_entries() {
    let log = sample_log();
    for (removed, index) in [(0, 0), (1, 1), (2, 2)] {
        let mut entries = log.entries().to_vec();
        entries.remove(removed);
        assert_eq!(
            verify_entries(&entries),
            Err(ChainBroken { index }),
            "removed {removed}"
        );
    }
}

#[test]
fn verify_against_head() {
    let log = sample_log();
    let head = log.head();
    log.verify_with_head(head).unwrap();

    // Dropping the last entry leaves a valid shorter chain...
    let mut entries = log.entries().to_vec();
    entries.pop();
    let truncated = ComparisonLog::from_entries(entries).unwrap();
    truncated.verify().unwrap();
    // ...which a known head exposes.
    assert_eq!(
        truncated.verify_with_head(head),
        Err(ChainBroken { index: 3 })
    );

    // So does an entry appended after the head was recorded.
    let mut extended = log.clone();
    append_at(
        &mut extended,
        T0,
        "https://a.example",
        "t",
        Claim::age_at_least(18).unwrap(),
        Outcome::Satisfied,
        "g",
    );
    assert_eq!(
        extended.verify_with_head(head),
        Err(ChainBroken { index: 5 })
    );
    assert_eq!(
        ComparisonLog::new().verify_with_head(head),
        Err(ChainBroken { index: 0 })
    );
}

#[test]
fn verify_detects_insertion() {
    let log = sample_log();
    // A well-formed entry from another log, inserted in the middle and at the start.
    let mut other = ComparisonLog::new();
    append_at(
        &mut other,
        T0,
        "https://housing.example",
        "tacit.claim.income_below",
        income_below(1_000_000, "EUR"),
        Outcome::Satisfied,
        "g-housing-1",
    );
    let foreign = other.entries()[0].clone();
    for (at, index) in [(0, 1), (2, 2), (4, 4)] {
        let mut entries = log.entries().to_vec();
        entries.insert(at, foreign.clone());
        assert_eq!(
            verify_entries(&entries),
            Err(ChainBroken { index }),
            "inserted at {at}"
        );
    }
    // A duplicate of an existing entry.
    let mut entries = log.entries().to_vec();
    entries.insert(2, entries[1].clone());
    assert_eq!(verify_entries(&entries), Err(ChainBroken { index: 2 }));
}

#[test]
fn verify_detects_reordering() {
    let log = sample_log();
    for (i, j) in [(0, 1), (1, 2), (0, 3), (2, 3)] {
        let mut entries = log.entries().to_vec();
        entries.swap(i, j);
        assert_eq!(
            verify_entries(&entries),
            Err(ChainBroken { index: i }),
            "swapped {i} and {j}"
        );
    }
}

#[test]
fn export_has_header_one_tab_separated_line_per_entry_and_final_newline() {
    let log = sample_log();
    let text = log.export();
    assert!(text.ends_with('\n'));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0], "tacit-comparison-log v1");
    let first: Vec<&str> = lines[1].split('\t').collect();
    assert_eq!(
        first[..7],
        [
            "0",
            "1777627800000",
            "https://housing.example",
            "tacit.claim.income_below",
            "income_below 3000000 EUR",
            "satisfied",
            "g-housing-1",
        ]
    );
    assert_eq!(first[7], "0".repeat(64));
    assert_eq!(first[8], log.entries()[0].hash.to_hex());
    assert_eq!(
        lines[2].split('\t').nth(4),
        Some("resides_in altstadt,nordhafen,westend")
    );
    assert_eq!(ComparisonLog::import(&text).unwrap(), log);
}

/// `text` with field `field` of line `line` (1-based, 1 = header) replaced.
fn with_field(text: &str, line: usize, field: usize, value: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut fields: Vec<&str> = lines[line - 1].split('\t').collect();
    fields[field] = value;
    lines[line - 1] = fields.join("\t");
    lines.join("\n") + "\n"
}

#[test]
fn import_rejects_bad_exports() {
    let good = sample_log().export();
    let hash1 = sample_log().entries()[1].hash.to_hex();
    let import_err = |line, reason| LogError::Import { line, reason };
    let fields9 = "an entry must have 9 tab-separated fields, or 10 with the issuer";
    // A tenth field is read as the issuer's origin.
    let issuer10 = "invalid issuer";
    let cases: Vec<(&str, String, LogError)> = vec![
        (
            "empty input",
            String::new(),
            import_err(1, "missing final newline"),
        ),
        (
            "wrong header",
            good.replacen("log v1", "log v2", 1),
            import_err(1, "not a tacit-comparison-log v1 export"),
        ),
        (
            "no header",
            good.split_once('\n').unwrap().1.to_owned(),
            import_err(1, "not a tacit-comparison-log v1 export"),
        ),
        (
            "CRLF line endings",
            good.replace('\n', "\r\n"),
            import_err(1, "not a tacit-comparison-log v1 export"),
        ),
        (
            "byte order mark",
            format!("\u{feff}{good}"),
            import_err(1, "not a tacit-comparison-log v1 export"),
        ),
        (
            "extra tab",
            good.replacen("\tsatisfied\t", "\tsatisfied\t\t", 1),
            import_err(2, issuer10),
        ),
        (
            "trailing tab",
            with_field(&good, 3, 8, &format!("{hash1}\t")),
            import_err(3, issuer10),
        ),
        (
            "missing field",
            with_field(&good, 2, 6, "").replacen("\t\t", "\t", 1),
            import_err(2, fields9),
        ),
        (
            "uppercase hex",
            with_field(&good, 3, 7, &hash1.to_uppercase()),
            import_err(3, "invalid previous hash"),
        ),
        (
            "non-hex digit",
            with_field(&good, 3, 8, &format!("g{}", &hash1[1..])),
            import_err(3, "invalid hash"),
        ),
        (
            "short hash",
            with_field(&good, 3, 8, &hash1[..63]),
            import_err(3, "invalid hash"),
        ),
        (
            "leading zero in seq",
            with_field(&good, 3, 0, "01"),
            import_err(3, "seq is not a canonical number"),
        ),
        (
            "plus sign in seq",
            with_field(&good, 3, 0, "+1"),
            import_err(3, "seq is not a canonical number"),
        ),
        (
            "leading zero in time",
            with_field(&good, 2, 1, "01777627800000"),
            import_err(2, "time is not a canonical number"),
        ),
        (
            "negative zero time",
            with_field(&good, 2, 1, "-0"),
            import_err(2, "time is not a canonical number"),
        ),
        (
            "time out of range",
            with_field(&good, 2, 1, "9223372036854775808"),
            import_err(2, "time is not a canonical number"),
        ),
        (
            "bad origin",
            with_field(&good, 2, 2, "https://housing.example/path"),
            import_err(2, "invalid origin"),
        ),
        (
            "space in tool",
            with_field(&good, 2, 3, "tacit claim"),
            import_err(2, "invalid tool name"),
        ),
        (
            "non-canonical claim order",
            with_field(&good, 3, 4, "resides_in westend,altstadt,nordhafen"),
            import_err(3, "invalid claim"),
        ),
        (
            "non-canonical claim spacing",
            with_field(&good, 2, 4, "income_below  3000000 EUR"),
            import_err(2, "invalid claim"),
        ),
        (
            "leading zero in claim",
            with_field(&good, 2, 4, "income_below 03000000 EUR"),
            import_err(2, "invalid claim"),
        ),
        (
            "unknown outcome",
            with_field(&good, 2, 5, "maybe"),
            import_err(2, "invalid outcome"),
        ),
        (
            "bad grant id",
            with_field(&good, 2, 6, "g.1"),
            import_err(2, "invalid grant id"),
        ),
        (
            "broken chain (edited outcome)",
            with_field(&good, 3, 5, "satisfied"),
            LogError::ChainBroken(ChainBroken { index: 1 }),
        ),
        (
            "broken chain (removed entry)",
            {
                let mut lines: Vec<&str> = good.lines().collect();
                lines.remove(2);
                lines.join("\n") + "\n"
            },
            LogError::ChainBroken(ChainBroken { index: 1 }),
        ),
        (
            "trailing garbage line",
            format!("{good}junk\n"),
            import_err(6, fields9),
        ),
        (
            "trailing garbage without newline",
            format!("{good}junk"),
            import_err(6, "missing final newline"),
        ),
        (
            "trailing empty line",
            format!("{good}\n"),
            import_err(6, fields9),
        ),
        (
            "missing final newline",
            good[..good.len() - 1].to_owned(),
            import_err(5, "missing final newline"),
        ),
    ];
    for (name, text, expected) in cases {
        assert_eq!(ComparisonLog::import(&text), Err(expected), "{name}");
        assert_eq!(
            ComparisonLog::import_bytes(text.as_bytes()),
            Err(expected),
            "{name} (bytes)"
        );
    }
}

#[test]
fn import_bytes_rejects_non_utf8() {
    let mut bytes = sample_log().export().into_bytes();
    let second_line = bytes.iter().position(|&b| b == b'\n').unwrap() + 5;
    bytes[second_line] = 0xff;
    assert_eq!(
        ComparisonLog::import_bytes(&bytes),
        Err(LogError::Import {
            line: 2,
            reason: "not UTF-8"
        })
    );
}

#[test]
fn entry_json_round_trips_and_refuses_unknown_fields() {
    let log = sample_log();
    let entry = &log.entries()[1];
    let json = serde_json::to_value(entry).unwrap();
    assert_eq!(json["outcome"], "not_satisfied");
    assert_eq!(json["claim"]["kind"], "resides_in");
    assert_eq!(json["prev_hash"], log.entries()[0].hash.to_hex());
    let back: LogEntry = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(&back, entry);

    let mut extra = json.clone();
    extra["income"] = serde_json::json!(2_500_000);
    assert!(serde_json::from_value::<LogEntry>(extra).is_err());

    let mut upper = json;
    upper["hash"] = serde_json::json!(entry.hash.to_hex().to_uppercase());
    assert!(serde_json::from_value::<LogEntry>(upper).is_err());
}

#[test]
fn hash_hex_is_strict_lowercase() {
    let h = Hash::digest(b"x");
    assert_eq!(Hash::from_hex(&h.to_hex()), Some(h));
    assert_eq!(Hash::from_hex(&h.to_hex().to_uppercase()), None);
    assert_eq!(Hash::from_hex(""), None);
    assert_eq!(Hash::from_hex(&"0".repeat(66)), None);
    assert_eq!(Hash::from_hex(&"é".repeat(32)), None);
    assert_eq!(chain_head(&[]), Hash::ZERO);
}

// ---- property tests -------------------------------------------------------------------------

fn arb_claim() -> impl Strategy<Value = Claim> {
    let districts: Vec<&'static str> = catalogue::DISTRICTS.iter().map(|d| d.code).collect();
    let conditions: Vec<&'static str> = catalogue::CONDITIONS.iter().map(|c| c.code).collect();
    prop_oneof![
        (
            1..=MAX_INCOME_MINOR,
            prop::sample::select(catalogue::CURRENCIES)
        )
            .prop_map(|(minor, currency)| income_below(minor, currency)),
        (1u8..=130).prop_map(|years| Claim::age_at_least(years).unwrap()),
        prop::sample::subsequence(districts.clone(), 1..=districts.len())
            .prop_shuffle()
            .prop_map(|codes| resides_in(&codes)),
        prop::sample::subsequence(conditions.clone(), 1..=conditions.len())
            .prop_shuffle()
            .prop_map(|codes| has_none_of(&codes)),
    ]
}

fn arb_outcome() -> impl Strategy<Value = Outcome> {
    prop::sample::select(vec![
        Outcome::Satisfied,
        Outcome::NotSatisfied,
        Outcome::Declined,
        Outcome::Invalid,
    ])
}

fn arb_origin() -> impl Strategy<Value = Origin> {
    "https?://[a-z0-9-]{1,16}(\\.[a-z]{2,6}){0,2}(:[0-9]{1,5})?".prop_map(|s| origin(&s))
}

fn arb_log() -> impl Strategy<Value = ComparisonLog> {
    let entry = (
        any::<i64>(),
        arb_origin(),
        "[A-Za-z0-9_.-]{1,40}",
        arb_claim(),
        arb_outcome(),
        "[A-Za-z0-9_-]{1,64}",
    );
    prop::collection::vec(entry, 0..10).prop_map(|inputs| {
        let mut log = ComparisonLog::new();
        for (at, origin, t, claim, outcome, g) in inputs {
            log.append(
                Timestamp::from_millis(at),
                origin,
                tool(&t),
                claim,
                outcome,
                grant(&g),
                None,
            );
        }
        log
    })
}

proptest! {
    #[test]
    fn export_import_identity(log in arb_log()) {
        let text = log.export();
        let imported = ComparisonLog::import(&text).unwrap();
        prop_assert_eq!(&imported, &log);
        prop_assert_eq!(imported.export(), text.clone());
        prop_assert_eq!(ComparisonLog::import_bytes(text.as_bytes()).unwrap(), log);
    }

    #[test]
    fn verify_detects_any_swap(log in arb_log(), i in any::<prop::sample::Index>(), j in any::<prop::sample::Index>()) {
        let mut entries = log.entries().to_vec();
        prop_assume!(entries.len() >= 2);
        let (i, j) = (i.index(entries.len()), j.index(entries.len()));
        prop_assume!(i != j && entries[i] != entries[j]);
        entries.swap(i, j);
        prop_assert_eq!(verify_entries(&entries), Err(ChainBroken { index: i.min(j) }));
    }

    #[test]
    fn import_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..1024)) {
        let _ = ComparisonLog::import_bytes(&bytes);
    }

    /// Any accepted input is canonical: a mutated export either fails or re-exports the same bytes.
    #[test]
    fn import_of_mutated_export_never_panics_and_is_canonical(
        log in arb_log(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        kind in 0u8..3,
    ) {
        let mut bytes = log.export().into_bytes();
        let pos = at.index(bytes.len());
        match kind {
            0 => bytes[pos] = byte,
            1 => bytes.insert(pos, byte),
            _ => { bytes.remove(pos); }
        }
        if let Ok(imported) = ComparisonLog::import_bytes(&bytes) {
            prop_assert_eq!(imported.export().into_bytes(), bytes);
        }
    }
}

// ---- frozen vector --------------------------------------------------------------------------

fn vector_log() -> ComparisonLog {
    let mut log = sample_log();
    append_at(
        &mut log,
        -86_400_000,
        "https://[::1]:8443",
        "tacit.claim.income_below",
        income_below(100_000_000_000, "JPY"),
        Outcome::NotSatisfied,
        "G_2",
    );
    log
}

/// `TACIT_WRITE_VECTORS=1` rewrites the vector from [`vector_log`] first.
#[test]
fn frozen_log_vector_reexports_byte_identical() {
    common::assert_vector(
        std::path::Path::new(VECTOR_PATH),
        vector_log().export().as_bytes(),
    );
    let text = std::fs::read_to_string(VECTOR_PATH).unwrap();
    let log = ComparisonLog::import(&text).unwrap();
    assert_eq!(log.export(), text);
    assert_eq!(log.head().to_hex(), VECTOR_HEAD);
    assert_eq!(log, vector_log());
}

/// An issuer-backed entry: the issuer is covered by the hash, survives export and import, and an
/// entry without one hashes exactly as before issuer-backed answers existed.
#[test]
fn issuer_backed_entries_are_hashed_exported_and_imported() {
    let housing = origin("https://housing.example");
    let tax = origin("http://127.0.0.1:8791");
    let mut log = ComparisonLog::new();
    log.append(
        Timestamp::from_millis(T0),
        housing.clone(),
        tool("tacit.claim.income_below"),
        income_below(3_000_000, "EUR"),
        Outcome::Satisfied,
        grant("g-housing-1"),
        Some(tax.clone()),
    );
    append_at(
        &mut log,
        T0 + 1,
        housing.as_str(),
        "tacit.claim.resides_in",
        resides_in(&["westend"]),
        Outcome::Satisfied,
        "g-housing-1",
    );
    let entries = log.entries();
    assert_eq!(entries[0].issuer.as_ref(), Some(&tax));
    assert!(entries[0].is_issuer_backed());
    assert!(!entries[1].is_issuer_backed());

    // The issuer is part of what the hash covers: dropping or changing it breaks the chain.
    let mut forged = entries.to_vec();
    forged[0].issuer = None;
    assert!(wallet_core::verify_entries(&forged).is_err());
    forged[0].issuer = Some(origin("http://127.0.0.1:9999"));
    assert!(wallet_core::verify_entries(&forged).is_err());
    let mut claimed = entries.to_vec();
    claimed[1].issuer = Some(tax.clone());
    assert!(wallet_core::verify_entries(&claimed).is_err());

    // A self-asserted entry's bytes end at prev_hash, as they always did.
    let plain = &entries[1];
    let bytes = plain.canonical_bytes();
    assert!(bytes.ends_with(plain.prev_hash.as_bytes()));

    let text = log.export();
    let line = text.lines().nth(1).unwrap();
    assert!(line.ends_with("\thttp://127.0.0.1:8791"), "{line}");
    assert_eq!(text.lines().nth(2).unwrap().split('\t').count(), 9);
    let back = ComparisonLog::import(&text).unwrap();
    assert_eq!(back, log);
    assert_eq!(back.export(), text);

    // JSON: the field appears only when present.
    let json = serde_json::to_value(&entries[1]).unwrap();
    assert!(json.get("issuer").is_none());
    let json = serde_json::to_value(&entries[0]).unwrap();
    assert_eq!(json["issuer"], "http://127.0.0.1:8791");
}

#[test]
fn rechain_makes_a_chain_of_its_own_from_any_subset() {
    let log = sample_log();
    let all = log.entries();
    // Every subset (kept in order) is its own chain from genesis with the same comparisons.
    for mask in 0u8..16 {
        let picked: Vec<&LogEntry> = all
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, e)| e)
            .collect();
        let chained = wallet_core::rechain(picked.iter().copied());
        verify_entries(&chained).unwrap();
        assert_eq!(chained.len(), picked.len());
        for (i, (new, old)) in chained.iter().zip(&picked).enumerate() {
            assert_eq!(new.seq, i as u64);
            assert_eq!(
                (
                    &new.at,
                    &new.origin,
                    &new.tool,
                    &new.claim,
                    new.outcome,
                    &new.grant_id,
                    &new.issuer
                ),
                (
                    &old.at,
                    &old.origin,
                    &old.tool,
                    &old.claim,
                    old.outcome,
                    &old.grant_id,
                    &old.issuer
                )
            );
        }
        assert_eq!(
            chained.first().map(|e| e.prev_hash),
            picked.first().map(|_| Hash::ZERO)
        );
    }
    // The whole log rechained is the log itself.
    assert_eq!(wallet_core::rechain(all), all.to_vec());
}
