//! A site reads an issuer's Token Status List and a credential's reference to it
//! (`tacit_protocol::status_list`), on any bytes.
//!
//! - As a token: `verify_token` with the harness's key, for a fixed list URI at a fixed time:
//!   never a panic; an accepted token is for that URI, not expired, its list within
//!   `MAX_LIST_BYTES`. A token the harness signs over a list the input describes verifies and
//!   reads each entry back.
//! - As JSON: `StatusList::from_claim` with a 4 KiB bound (the inflation stops there: a zip bomb
//!   costs nothing); an accepted list re-encodes and reads back to the same entries.
//!   `StatusRef::from_claim`: an accepted reference re-encodes to itself.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use p256::ecdsa::SigningKey;
use serde_json::Value;
use tacit_protocol::sd_jwt::{IssuerKey, Jwks};
use tacit_protocol::status_list::{
    MAX_LIST_BYTES, StatusList, StatusRef, sign_token, verify_token,
};
use wallet_core::Timestamp;

const URI: &str = "https://issuer.example/status/1";
const NOW: i64 = 1_796_119_200_000;
const BOUND: usize = 4096;

fn key() -> &'static SigningKey {
    static KEY: OnceLock<SigningKey> = OnceLock::new();
    KEY.get_or_init(|| SigningKey::from_slice(&[9; 32]).expect("a valid scalar"))
}

fn jwks() -> &'static Jwks {
    static JWKS: OnceLock<Jwks> = OnceLock::new();
    JWKS.get_or_init(|| {
        Jwks::new(vec![IssuerKey {
            kid: "k1".into(),
            key: *key().verifying_key(),
        }])
        .expect("one key")
    })
}

fuzz_target!(|data: &[u8]| {
    let now = Timestamp::from_millis(NOW);
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(token) = verify_token(text, jwks(), URI, now)
    {
        assert_eq!(token.uri, URI);
        assert!(token.exp.millis() > NOW, "an expired token was accepted");
        assert!(token.list.len() <= MAX_LIST_BYTES * 8);
    }
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok(list) = StatusList::from_claim(&value, BOUND) {
        let again = StatusList::from_claim(&list.to_claim(), BOUND).expect("what we write we read");
        assert_eq!(again, list, "a list changed through encoding");
        let token = sign_token(
            key(),
            "k1",
            "https://issuer.example",
            URI,
            &list,
            now,
            now.plus_millis(60_000),
            60,
        );
        let read = verify_token(&token, jwks(), URI, now).expect("a token the harness signed");
        for idx in 0..list.len().min(64) as u64 {
            let entry = StatusRef {
                idx,
                uri: URI.into(),
            };
            assert_eq!(read.status_of(&entry).ok(), list.get(idx));
        }
    }
    if let Ok(reference) = StatusRef::from_claim(&value) {
        assert_eq!(StatusRef::from_claim(&reference.claim()), Ok(reference));
    }
});
