//! The key file: mode 0600, refusal of readable or missing files, rotation, no secret in `Debug`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::*;
use signer::{Error, KeyStore, keygen};
use tacit_service::error::Operational;
use tacit_service::keyfile::rotate_file;
use tacit_service::keyfile::{KeyFileError, Problem};
use wallet_core::receipt::verify;
use wallet_core::{KeyStatus, Timestamp};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn secret_in(path: &Path) -> String {
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    file["active"]["secret_key"].as_str().unwrap().to_owned()
}

#[test]
fn keygen_writes_a_private_file_that_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signer.key");
    let id = keygen(&path, Timestamp::from_millis(T0), false).unwrap();
    assert_eq!(mode(&path), 0o600);
    let store = KeyStore::load(&path).unwrap();
    assert_eq!(store.active_key_id(), id);
    let set = store.key_set();
    assert_eq!(set.keys.len(), 1);
    assert_eq!(set.keys[0].not_before, Timestamp::from_millis(T0));
    assert_eq!(set.keys[0].status, KeyStatus::Active);
    assert_eq!(secret_in(&path).len(), 64);
}

#[test]
fn keygen_refuses_to_overwrite_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signer.key");
    let first = keygen(&path, Timestamp::from_millis(T0), false).unwrap();
    let err = keygen(&path, Timestamp::from_millis(T0), false).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Operational(Operational::KeyFile(KeyFileError {
                problem: Problem::Exists,
                ..
            }))
        ),
        "{err}"
    );
    assert!(err.to_string().contains("tacit-signer rotate"));
    assert_eq!(KeyStore::load(&path).unwrap().active_key_id(), first);
    let second = keygen(&path, Timestamp::from_millis(T0), true).unwrap();
    assert_ne!(first, second);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(KeyStore::load(&path).unwrap().active_key_id(), second);
}

#[test]
fn load_refuses_a_file_group_or_others_can_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signer.key");
    keygen(&path, Timestamp::from_millis(T0), false).unwrap();
    for bad in [0o640, 0o604, 0o644, 0o660, 0o606, 0o610, 0o601] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(bad)).unwrap();
        let err = KeyStore::load(&path).unwrap_err();
        match &err {
            Error::Operational(Operational::KeyFile(KeyFileError {
                problem: Problem::Permissions { mode },
                ..
            })) => assert_eq!(*mode, bad),
            other => panic!("{bad:o}: {other}"),
        }
        let message = err.to_string();
        assert!(message.contains("readable by group or others"), "{message}");
        assert!(message.contains("chmod 600"), "{message}");
    }
    for good in [0o600, 0o400] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(good)).unwrap();
        assert!(KeyStore::load(&path).is_ok(), "{good:o}");
    }
}

#[test]
fn load_refuses_a_missing_file_naming_keygen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.key");
    let err = KeyStore::load(&path).unwrap_err();
    assert!(matches!(
        err,
        Error::Operational(Operational::KeyFile(KeyFileError {
            problem: Problem::Missing,
            ..
        }))
    ));
    let message = err.to_string();
    assert!(
        message.contains("tacit-signer keygen --key-file"),
        "{message}"
    );
    assert!(message.contains("absent.key"), "{message}");
}

#[test]
fn load_refuses_malformed_files_without_printing_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signer.key");
    keygen(&path, Timestamp::from_millis(T0), false).unwrap();
    let good: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let secret = secret_in(&path);
    let mut cases = Vec::new();
    let mut upper = good.clone();
    upper["active"]["secret_key"] = secret.to_uppercase().into();
    cases.push(upper);
    let mut short = good.clone();
    short["active"]["secret_key"] = secret[..62].to_owned().into();
    cases.push(short);
    let mut extra = good.clone();
    extra["comment"] = "hello".into();
    cases.push(extra);
    let mut tag = good.clone();
    tag["format"] = "tacit-signer-key/v9".into();
    cases.push(tag);
    let mut retired = good.clone();
    retired["retired"] = serde_json::json!([{
        "key_id": "0000000000000000", "public_key": "00".repeat(32),
        "not_before": 0, "not_after": 1, "status": "retired"
    }]);
    cases.push(retired);
    for case in cases {
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, serde_json::to_vec(&case).unwrap()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let err = KeyStore::load(&path).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Operational(Operational::KeyFile(KeyFileError {
                    problem: Problem::Format(_),
                    ..
                }))
            ),
            "{err}"
        );
        assert!(
            !err.to_string().to_lowercase().contains(&secret[..16]),
            "{err}"
        );
    }
}

#[tokio::test]
async fn debug_never_prints_the_secret() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signer.key");
    keygen(&path, Timestamp::from_millis(T0), false).unwrap();
    let secret = secret_in(&path);
    let store = KeyStore::load(&path).unwrap();
    let (db, _db_dir) = sqlite_db().await;
    let state = signer::AppState::new(
        KeyStore::load(&path).unwrap(),
        db,
        &signer::Config::default(),
        TestClock::at(T0).closure(),
    );
    for shown in [
        format!("{store:?}"),
        format!("{store:#?}"),
        format!("{state:?}"),
    ] {
        assert!(!shown.contains(&secret), "{shown}");
        assert!(!shown.contains(&secret[..16]), "{shown}");
        assert!(shown.contains(store.active_key_id().as_str()), "{shown}");
    }
    let fixed = KeyStore::from_signing_key(test_key(), Timestamp::from_millis(T0));
    assert!(!format!("{fixed:?}").contains(&test_secret_hex()));
}

#[test]
fn rotation_keeps_old_receipts_valid_and_the_file_private() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signer.key");
    let first = keygen(&path, Timestamp::from_millis(T0 - HOUR), false).unwrap();
    let before = KeyStore::load(&path)
        .unwrap()
        .sign(payload_at(T0 - MINUTE), Timestamp::from_millis(T0 - MINUTE));

    let (old, new) = rotate_file::<KeyStore>(&path, Timestamp::from_millis(T0)).unwrap();
    assert_eq!(old, first);
    assert_ne!(old, new);
    assert_eq!(mode(&path), 0o600);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left behind");

    let store = KeyStore::load(&path).unwrap();
    assert_eq!(store.active_key_id(), new);
    let set = store.key_set();
    assert_eq!(set.keys.len(), 2);
    assert_eq!(
        (set.keys[0].key_id.clone(), set.keys[0].status),
        (new, KeyStatus::Active)
    );
    assert_eq!(set.keys[0].not_before, Timestamp::from_millis(T0));
    assert_eq!(
        (set.keys[1].key_id.clone(), set.keys[1].status),
        (old, KeyStatus::Retired)
    );
    assert_eq!(set.keys[1].not_before, Timestamp::from_millis(T0 - HOUR));
    // Retired with the two-minute issue skew: a receipt signed just before rotating may carry an
    // issued_at up to two minutes ahead of the signer's clock.
    assert_eq!(
        set.keys[1].not_after,
        Some(Timestamp::from_millis(T0 + 2 * MINUTE))
    );

    let after = store.sign(payload_at(T0 + MINUTE), Timestamp::from_millis(T0 + MINUTE));
    let at = Timestamp::from_millis(T0 + 2 * MINUTE);
    assert!(verify(&before, &set, &site(), &nonce(), at).is_ok());
    assert!(verify(&after, &set, &site(), &nonce(), at).is_ok());

    // A second rotation keeps both older keys.
    rotate_file::<KeyStore>(&path, Timestamp::from_millis(T0 + HOUR)).unwrap();
    let set = KeyStore::load(&path).unwrap().key_set();
    assert_eq!(set.keys.len(), 3);
    assert!(verify(&before, &set, &site(), &nonce(), at).is_ok());
    assert!(verify(&after, &set, &site(), &nonce(), at).is_ok());
}

#[test]
fn rotation_refuses_a_clock_before_the_active_key() {
    let mut store = KeyStore::from_signing_key(test_key(), Timestamp::from_millis(T0));
    assert!(matches!(
        store.rotate_to(other_key(), Timestamp::from_millis(T0 - 1)),
        Err(Error::Operational(Operational::Config(_)))
    ));
    assert_eq!(store.key_set().keys.len(), 1);
}

#[test]
fn rotate_refuses_a_readable_file_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signer.key");
    keygen(&path, Timestamp::from_millis(T0), false).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(matches!(
        rotate_file::<KeyStore>(&path, Timestamp::from_millis(T0 + 1)),
        Err(Error::Operational(Operational::KeyFile(KeyFileError {
            problem: Problem::Permissions { .. },
            ..
        })))
    ));
}
