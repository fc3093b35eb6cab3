//! `tacit-verify` run as a relying site runs it: exit codes and the reasons it prints.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use signer::verify_cli::exit;
use signer::{Config, KeyStore, system_now};
use wallet_core::receipt::sign;
use wallet_core::{KeySet, KeyStatus, Outcome, PublicKeyEntry, SignedReceipt, Timestamp};

const BIN: &str = env!("CARGO_BIN_EXE_tacit-verify");
const ISSUED: i64 = T0;
/// Inside the receipt's window.
const CHECK_AT: &str = "1777628100000"; // T0 + 5 min
/// The audience and nonce the good receipt was made for.
const FOR_HOUSING: [&str; 4] = [
    "--audience",
    "https://housing.example",
    "--nonce",
    "n-4f1c2a9e7b3d",
];

struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn receipt(&self, receipt: &SignedReceipt) -> PathBuf {
        self.write("receipt.json", &serde_json::to_vec_pretty(receipt).unwrap())
    }

    fn keys(&self, key: &ed25519_dalek::SigningKey) -> PathBuf {
        let set = KeySet {
            keys: vec![PublicKeyEntry::new(
                &key.verifying_key(),
                Timestamp::from_millis(T0 - 24 * HOUR),
                None,
                KeyStatus::Active,
            )],
        };
        self.write("keys.json", &serde_json::to_vec(&set).unwrap())
    }

    /// A directory with the good receipt and `test_key`'s key set in it: the files and the
    /// receipt's and the keys' paths.
    fn good() -> (Self, PathBuf, PathBuf) {
        let files = Self::new();
        let receipt = files.receipt(&good_receipt());
        let keys = files.keys(&test_key());
        (files, receipt, keys)
    }

    /// `receipt` checked against `key`'s key set at [`CHECK_AT`], both written here.
    fn verify(&self, receipt: &SignedReceipt, key: &ed25519_dalek::SigningKey) -> Output {
        verify_now(&self.receipt(receipt), path(&self.keys(key)))
    }
}

fn good_receipt() -> SignedReceipt {
    sign(
        payload_at(ISSUED),
        &test_key(),
        Timestamp::from_millis(ISSUED),
    )
}

fn verify_cmd(receipt: &Path, keys: &str, extra: &[&str]) -> Output {
    Command::new(BIN)
        .arg(receipt)
        .args(["--keys", keys])
        .args(extra)
        .output()
        .unwrap()
}

/// `verify_cmd` with only `--now` [`CHECK_AT`].
fn verify_now(receipt: &Path, keys: &str) -> Output {
    verify_cmd(receipt, keys, &["--now", CHECK_AT])
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts the run succeeded (exit code 0).
fn assert_verified(out: &Output) {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
}

/// Asserts the run failed with `code` and printed `reason` in its FAILED line.
fn assert_fails(out: &Output, code: u8, reason: &str) {
    assert_eq!(out.status.code(), Some(i32::from(code)), "{}", stderr(out));
    let said = stderr(out);
    assert!(said.contains(&format!("FAILED ({reason})")), "{said}");
    assert!(stdout(out).is_empty(), "nothing on stdout when it fails");
}

#[test]
fn prints_who_attested_what_to_whom_and_when() {
    let (_files, receipt, keys) = Files::good();
    let out = verify_cmd(
        &receipt,
        path(&keys),
        &[&FOR_HOUSING[..], &["--now", CHECK_AT]].concat(),
    );
    assert_verified(&out);
    let said = stdout(&out);
    let key_id = good_receipt().key_id;
    for expected in [
        "receipt verified",
        &format!("signer key {key_id}"),
        "self_asserted",
        "2 answer(s) in session s-20260501-1",
        "income_below 3000000 EUR: satisfied (self-asserted)",
        "age_at_least 18: satisfied (self-asserted)",
        "to whom: https://housing.example (nonce n-4f1c2a9e7b3d)",
        "issued 2026-05-01T09:30:00Z, valid until 2026-05-01T09:40:00Z, signed 2026-05-01T09:30:00Z",
    ] {
        assert!(said.contains(expected), "missing {expected:?} in:\n{said}");
    }
    assert!(!said.contains("note:"), "{said}");
}

#[test]
fn says_so_when_audience_and_nonce_come_from_the_receipt() {
    let files = Files::new();
    let out = files.verify(&good_receipt(), &test_key());
    assert_verified(&out);
    let said = stdout(&out);
    assert!(said.contains("no --audience given"), "{said}");
    assert!(said.contains("no --nonce given"), "{said}");
}

#[test]
fn fails_on_a_bad_signature() {
    let files = Files::new();
    let mut receipt = good_receipt();
    let first = if receipt.signature.starts_with('0') {
        "1"
    } else {
        "0"
    };
    receipt.signature.replace_range(..1, first);
    let out = files.verify(&receipt, &test_key());
    assert_fails(&out, exit::BAD_SIGNATURE, "bad signature");

    // An answer edited after signing is a bad signature too.
    let mut edited = good_receipt();
    edited.payload.entries[0].outcome = Outcome::NotSatisfied;
    let out = files.verify(&edited, &test_key());
    assert_fails(&out, exit::BAD_SIGNATURE, "bad signature");
}

#[test]
fn fails_on_an_unknown_key() {
    let files = Files::new();
    let out = files.verify(&good_receipt(), &other_key());
    assert_fails(&out, exit::UNKNOWN_KEY, "unknown key");
}

#[test]
fn fails_when_expired_or_not_yet_valid() {
    let (_files, receipt, keys) = Files::good();
    let late = (ISSUED + 10 * MINUTE).to_string();
    assert_fails(
        &verify_cmd(&receipt, path(&keys), &["--now", &late]),
        exit::EXPIRED,
        "expired",
    );
    let early = (ISSUED - 1).to_string();
    assert_fails(
        &verify_cmd(&receipt, path(&keys), &["--now", &early]),
        exit::NOT_YET_VALID,
        "not yet valid",
    );
}

#[test]
fn fails_on_audience_or_nonce_mismatch() {
    let (_files, receipt, keys) = Files::good();
    let out = verify_cmd(
        &receipt,
        path(&keys),
        &["--audience", "https://pharmacy.example", "--now", CHECK_AT],
    );
    assert_fails(&out, exit::AUDIENCE_MISMATCH, "audience mismatch");
    let out = verify_cmd(
        &receipt,
        path(&keys),
        &["--nonce", "n-replayed", "--now", CHECK_AT],
    );
    assert_fails(&out, exit::NONCE_MISMATCH, "nonce mismatch");
}

#[test]
fn fails_on_a_broken_chain() {
    // A signer that skipped its checks signed a payload whose log was edited.
    let mut payload = payload_at(ISSUED);
    payload.entries[0].outcome = Outcome::NotSatisfied;
    let receipt = sign(payload, &test_key(), Timestamp::from_millis(ISSUED));
    let files = Files::new();
    let out = files.verify(&receipt, &test_key());
    assert_fails(&out, exit::BROKEN_CHAIN, "broken chain");
    assert!(stderr(&out).contains("entry 0"), "{}", stderr(&out));
}

#[test]
fn fails_on_a_malformed_receipt() {
    let files = Files::new();
    let keys = files.keys(&test_key());
    let mut extra = serde_json::to_value(good_receipt()).unwrap();
    extra["payload"]["income"] = 4_242_424_242_u64.into();
    for bytes in [serde_json::to_vec(&extra).unwrap(), b"not json".to_vec()] {
        let receipt = files.write("receipt.json", &bytes);
        let out = verify_now(&receipt, path(&keys));
        assert_fails(&out, exit::MALFORMED_RECEIPT, "malformed receipt");
        assert!(!stderr(&out).contains("4242424242"));
    }
}

#[test]
fn fails_when_the_keys_cannot_be_loaded() {
    let files = Files::new();
    let receipt = files.receipt(&good_receipt());
    let missing = files.dir.path().join("absent.json");
    let out = verify_now(&receipt, path(&missing));
    assert_fails(&out, exit::KEYS_UNAVAILABLE, "keys unavailable");
    let not_keys = files.write("not-keys.json", b"{\"keys\": 3}");
    let out = verify_now(&receipt, path(&not_keys));
    assert_fails(&out, exit::KEYS_UNAVAILABLE, "keys unavailable");
    // https is fetched (ureq over rustls); nothing listens on port 1.
    let out = verify_now(&receipt, "https://127.0.0.1:1/v1/keys");
    assert_fails(&out, exit::KEYS_UNAVAILABLE, "keys unavailable");
    assert!(stderr(&out).contains("cannot connect"), "{}", stderr(&out));
    let out = verify_now(&receipt, "http://192.0.2.1:8787/v1/keys");
    assert_fails(&out, exit::KEYS_UNAVAILABLE, "keys unavailable");
    assert!(stderr(&out).contains("loopback"), "{}", stderr(&out));
}

#[test]
fn usage_errors_exit_2() {
    let files = Files::new();
    let keys = files.keys(&test_key());
    let missing = files.dir.path().join("absent-receipt.json");
    let out = verify_cmd(&missing, path(&keys), &[]);
    assert_eq!(out.status.code(), Some(i32::from(exit::USAGE)));
    assert!(stderr(&out).contains("could not open"), "{}", stderr(&out));
    let receipt = files.receipt(&good_receipt());
    let out = verify_cmd(&receipt, path(&keys), &["--audience", "housing.example"]);
    assert_eq!(out.status.code(), Some(i32::from(exit::USAGE)));
    assert!(stderr(&out).contains("--audience"), "{}", stderr(&out));
    let no_keys = Command::new(BIN).arg(&receipt).output().unwrap();
    assert_eq!(no_keys.status.code(), Some(2));
}

#[test]
fn verifies_against_keys_fetched_from_a_running_signer() {
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("signer.key");
    signer::keygen(&key_file, system_now(), false).unwrap();
    let keys = KeyStore::load(&key_file).unwrap();
    let server = TestServer::with_keys(dir.path(), keys, Config::default());
    let body = serde_json::to_vec(&payload_at(system_now().millis())).unwrap();
    let reply = signed_http(server.addr, &test_install(), "/v1/receipts", &body);
    assert_eq!(reply.status, 200);
    let receipt = dir.path().join("receipt.json");
    std::fs::write(&receipt, &reply.body).unwrap();
    let url = format!("http://{}/v1/keys", server.addr);
    let out = verify_cmd(&receipt, &url, &FOR_HOUSING);
    assert_verified(&out);
    assert!(stdout(&out).contains("receipt verified"));
    server.stop().unwrap();
}

#[test]
fn json_reports_success_and_each_failure_with_the_same_exit_codes() {
    let files = Files::new();
    let keys = files.keys(&test_key());
    let out = verify_cmd(
        &files.receipt(&good_receipt()),
        path(&keys),
        &[&["--json"], &FOR_HOUSING[..], &["--now", CHECK_AT]].concat(),
    );
    assert_verified(&out);
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["verified"], true);
    assert_eq!(report["key_id"], good_receipt().key_id.to_string());
    assert_eq!(report["provenance"], "self_asserted");
    assert_eq!(report["session_id"], "s-20260501-1");
    assert_eq!(report["audience"], "https://housing.example");
    assert_eq!(report["nonce"], "n-4f1c2a9e7b3d");
    assert_eq!(report["issued_at"]["utc"], "2026-05-01T09:30:00Z");
    assert_eq!(report["expires_at"]["utc"], "2026-05-01T09:40:00Z");
    let answers = report["answers"].as_array().unwrap();
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0]["canonical"], "income_below 3000000 EUR");
    assert_eq!(answers[0]["outcome"], "satisfied");
    assert_eq!(answers[0]["claim"]["kind"], "income_below");
    assert_eq!(answers[0]["issuer"], serde_json::Value::Null);
    assert_eq!(report["notes"], serde_json::json!([]));

    // A failure is one JSON object too, with the reason and the same exit code as the text mode.
    let out = verify_cmd(
        &files.receipt(&good_receipt()),
        path(&keys),
        &[
            "--json",
            "--audience",
            "https://other.example",
            "--now",
            CHECK_AT,
        ],
    );
    assert_eq!(out.status.code(), Some(i32::from(exit::AUDIENCE_MISMATCH)));
    let failed: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(failed["verified"], false);
    assert_eq!(failed["reason"], "audience mismatch");
    let out = verify_cmd(
        &files.receipt(&good_receipt()),
        "http://192.0.2.1:8787/v1/keys",
        &["--json", "--now", CHECK_AT],
    );
    assert_eq!(out.status.code(), Some(i32::from(exit::KEYS_UNAVAILABLE)));
    let failed: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(failed["reason"], "keys unavailable");
    assert!(
        failed["message"].as_str().unwrap().contains("loopback"),
        "{failed}"
    );
}
