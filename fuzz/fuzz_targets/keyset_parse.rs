//! A signer's published key set (`GET /v1/keys`), as a relying site or `tacit-verify` fetches
//! it: `KeySet::parse`, then every lookup a verifier makes.
//!
//! Asserts: never panics; an accepted key set re-encodes and re-parses to itself; a key it
//! yields for an id really has that id and is valid at the time asked, at ordinary times and at
//! the extremes of `Timestamp`.
#![no_main]

use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use wallet_core::{KeySet, Timestamp, derive_key_id};

fuzz_target!(|data: &[u8]| {
    let Ok(keys) = KeySet::parse(data) else {
        return;
    };
    let again = serde_json::to_vec(&keys).expect("a parsed key set encodes");
    assert_eq!(
        KeySet::parse(&again).as_ref(),
        Ok(&keys),
        "key set round trip"
    );
    for entry in &keys.keys {
        if let Some(key) = entry.verifying_key() {
            assert_eq!(
                derive_key_id(&key),
                entry.key_id,
                "key id not derived from the key"
            );
        }
        let times = [
            i64::MIN,
            -1,
            0,
            entry.not_before.millis(),
            entry.not_before.millis().saturating_sub(1),
            entry.not_after.map_or(0, |t| t.millis()),
            entry.not_after.map_or(0, |t| t.millis().saturating_sub(1)),
            i64::MAX,
        ];
        for at in times.map(Timestamp::from_millis) {
            let valid = entry.valid_at(at);
            if let Some(key) = keys.key_for(&entry.key_id, at) {
                assert_eq!(derive_key_id(&key), entry.key_id);
                assert!(
                    keys.keys
                        .iter()
                        .any(|e| e.key_id == entry.key_id && e.valid_at(at)),
                    "key_for returned a key no entry vouches for at that time"
                );
            } else if valid {
                assert!(
                    entry.verifying_key().is_none(),
                    "a valid, well-formed key was not found"
                );
            }
        }
    }
});

// Half of the mutations edit one JSON value at a time (see `tacit_fuzz::mutate_json`).
fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    tacit_fuzz::mutate_json(data, size, max_size, seed)
});
