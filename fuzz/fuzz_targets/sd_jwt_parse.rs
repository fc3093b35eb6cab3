//! SD-JWT VC parsers on outside text: `Credential::parse` (what the wallet receives from an
//! issuer), `verify_presentation` (what a site receives), `Disclosure::decode`, `Jwks::parse` and
//! `IssuerMetadata::parse` (what a verifier pins).
//!
//! Asserts: never panics; a parsed credential re-presents (all disclosures kept, no KB) to a text
//! that parses to the same credential; a verified presentation discloses only names that were
//! carried by the text and comes from the one trusted issuer; an accepted key set or metadata
//! document re-encodes and re-parses to itself. Seeds (`fuzz/seeds/sd_jwt_parse/`) are a
//! credential and a presentation that verify with the fixed issuer key, aud, nonce and time here
//! (the frozen vector of `protocol/tests/sd_jwt.rs`), a JWKS and issuer metadata.
#![no_main]

use libfuzzer_sys::fuzz_target;
use p256::ecdsa::SigningKey;
use tacit_protocol::sd_jwt::{
    Credential, DEFAULT_MAX_KB_AGE_MS, Disclosure, IssuerKey, IssuerMetadata, Jwks, TrustedIssuer,
    presentation_without_kb, verify_presentation,
};
use wallet_core::Timestamp;

const ISS: &str = "http://127.0.0.1:8091";
const AUD: &str = "http://127.0.0.1:8081";
const NONCE: &str = "0123456789abcdef0123456789abcdef";
/// SHA-256("tacit/sd-jwt-test/issuer"), the issuer key of `protocol/tests/sd_jwt.rs`.
const ISSUER_SCALAR: [u8; 32] = [
    178, 120, 178, 244, 108, 80, 127, 73, 75, 230, 137, 105, 172, 31, 22, 90, 112, 109, 162, 157,
    146, 108, 127, 192, 31, 129, 112, 69, 130, 11, 78, 85,
];
const NOW_MS: i64 = 1_777_627_800_000 + 86_400_000;

fn trusted() -> Vec<TrustedIssuer> {
    let key = SigningKey::from_slice(&ISSUER_SCALAR).expect("a fixed scalar");
    let jwks = Jwks::new(vec![IssuerKey {
        kid: "k1".into(),
        key: *key.verifying_key(),
    }])
    .expect("one key");
    vec![TrustedIssuer {
        iss: ISS.into(),
        jwks,
    }]
}

fuzz_target!(|data: &[u8]| {
    if let Ok(jwks) = Jwks::parse(data) {
        assert_eq!(Jwks::parse(jwks.to_json().as_bytes()).as_ref(), Ok(&jwks));
    }
    if let Ok(meta) = IssuerMetadata::parse(data) {
        assert_eq!(
            IssuerMetadata::parse(meta.to_json().as_bytes()).as_ref(),
            Ok(&meta)
        );
    }
    let Ok(text) = core::str::from_utf8(data) else {
        return;
    };
    if let Ok(d) = Disclosure::decode(text) {
        assert_eq!(Disclosure::digest_of(text).len(), 43);
        let again = Disclosure::decode(&d.encode()).expect("re-encoded disclosure decodes");
        assert_eq!(again.name, d.name);
    }
    if let Ok(credential) = Credential::parse(text) {
        let names: Vec<&str> = credential
            .disclosures()
            .iter()
            .map(|d| d.name.as_str())
            .collect();
        let all = presentation_without_kb(&credential, &names).expect("its own names");
        assert_eq!(
            Credential::parse(&all).as_ref(),
            Ok(&credential),
            "re-presented credential differs"
        );
        let none = presentation_without_kb(&credential, &[]).expect("no names");
        let bare = Credential::parse(&none).expect("a credential without disclosures parses");
        assert!(bare.disclosures().is_empty());
        let _ = credential.verify_issuer(&trusted()[0].jwks, Timestamp::from_millis(NOW_MS));
    }
    for now in [NOW_MS, i64::MIN, i64::MAX] {
        if let Ok(v) = verify_presentation(
            text,
            &trusted(),
            AUD,
            NONCE,
            Timestamp::from_millis(now),
            DEFAULT_MAX_KB_AGE_MS,
        ) {
            assert_eq!(v.iss, ISS);
            let carried: Vec<Disclosure> = text
                .split('~')
                .skip(1)
                .filter_map(|s| Disclosure::decode(s).ok())
                .collect();
            assert!(v.disclosed.len() <= carried.len());
            for (name, value) in &v.disclosed {
                assert!(
                    carried.iter().any(|d| &d.name == name && &d.value == value),
                    "disclosed a claim the text did not carry"
                );
            }
        }
    }
});
