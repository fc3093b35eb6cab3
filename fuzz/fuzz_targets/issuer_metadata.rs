//! What a wallet or a site pins for an issuer: `IssuerMetadata::parse` (the body of
//! `GET <issuer>/.well-known/jwt-vc-issuer`) and `Jwks::parse` (a pinned key file), on any bytes.
//!
//! Asserts, for an accepted key set (alone or inside metadata):
//! - the input was at most `MAX_JWKS_BYTES`, holds at most `MAX_JWKS_KEYS` keys, each with a
//!   distinct printable `kid` of at most `MAX_KID_LEN` bytes that `key(kid)` finds;
//! - it says exactly what the parser kept: the input, read as plain JSON, equals the re-encoded
//!   document once the optional `alg`/`use` are filled in (so no unknown member, no second
//!   spelling of a coordinate, no repeated member read one way by the parser and another by a
//!   plain JSON reader); re-encoding is stable and re-parses to the same set. Objects only: a
//!   struct written as an array of its fields (`[[["EC","P-256",x,y,kid]]]`, which serde's
//!   derived structs would read) and `null` for an absent `alg`/`use` are refused (this target
//!   found both);
//! - for metadata, `issuer` is 1 to 2048 bytes and the embedded `jwks` parses on its own to the
//!   same set;
//! - the set does what a verifier relies on: for every key that is one of the harness's own
//!   (whose private keys it holds), a credential signed by it under that key's `kid` verifies,
//!   the same credential signed by another harness key is refused (`bad_issuer_signature`), and
//!   a `kid` the set does not list is refused (`unknown_key`).
//!
//! Seeds (`fuzz/seeds/issuer_metadata/`) use the harness keys; regenerate them with
//! `TACIT_FUZZ_WRITE_SEEDS=fuzz/seeds/issuer_metadata <binary> -runs=1 <any seed>`.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use p256::ecdsa::SigningKey;
use serde_json::{Map, Value, json};
use tacit_protocol::request_auth::InstallKey;
use tacit_protocol::sd_jwt::{
    Credential, IssuedClaims, IssuerKey, IssuerMetadata, Jwks, MAX_JWKS_BYTES, MAX_JWKS_KEYS,
    MAX_KID_LEN, SdJwtError, issue,
};
use wallet_core::Timestamp;

const ISS: &str = "http://127.0.0.1:8791";
/// 2026-12-01T10:00:00Z.
const NOW_MS: i64 = 1_796_119_200_000;

struct Harness {
    keys: Vec<SigningKey>,
    holder: SigningKey,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let key = |b: u8| {
            let mut scalar = [0x3c; 32];
            scalar[31] = b;
            SigningKey::from_slice(&scalar).expect("a fixed scalar")
        };
        let h = Harness {
            keys: (1..=3).map(key).collect(),
            holder: key(9),
        };
        if let Some(dir) = std::env::var_os("TACIT_FUZZ_WRITE_SEEDS") {
            write_seeds(&h, std::path::Path::new(&dir));
        }
        h
    })
}

fn set(h: &Harness, kids: &[(&str, usize)]) -> Jwks {
    Jwks::new(
        kids.iter()
            .map(|(kid, i)| IssuerKey {
                kid: (*kid).to_owned(),
                key: *h.keys[*i].verifying_key(),
            })
            .collect(),
    )
    .expect("a valid set")
}

fn write_seeds(h: &Harness, dir: &std::path::Path) {
    std::fs::create_dir_all(dir).expect("seed dir");
    let write = |name: &str, text: String| {
        std::fs::write(dir.join(name), text).expect("write seed");
    };
    let one = set(h, &[("k1", 0)]);
    let rotated = set(h, &[("k2", 1), ("k1", 0)]);
    let meta = |jwks: &Jwks| {
        IssuerMetadata {
            issuer: ISS.into(),
            jwks: jwks.clone(),
        }
        .to_json()
    };
    write("metadata-one.json", meta(&one));
    write("metadata-rotated.json", meta(&rotated));
    write("jwks-rotated.json", rotated.to_json());
    // `alg` and `use` are optional on input.
    let mut bare: Value = serde_json::from_str(&one.to_json()).expect("json");
    for k in bare["keys"].as_array_mut().expect("keys") {
        let k = k.as_object_mut().expect("key");
        k.remove("alg");
        k.remove("use");
    }
    write(
        "metadata-bare.json",
        json!({ "issuer": ISS, "jwks": bare }).to_string(),
    );
    // Thumbprint kids, as tacit-issuer publishes them.
    let thumb: Vec<(String, usize)> = (0..3)
        .map(|i| {
            let jwk = InstallKey::from_verifying_key(*h.keys[i].verifying_key());
            (jwk.id().as_str().to_owned(), i)
        })
        .collect();
    let thumb: Vec<(&str, usize)> = thumb.iter().map(|(k, i)| (k.as_str(), *i)).collect();
    write("metadata-thumbprints.json", meta(&set(h, &thumb)));
}

fn credential(h: &Harness, signer: usize, kid: &str) -> Option<Credential> {
    let claims = IssuedClaims {
        iss: ISS.into(),
        vct: "https://tacit.example/vct/income".into(),
        iat: Timestamp::from_millis(NOW_MS - 60_000),
        exp: Timestamp::from_millis(NOW_MS + 86_400_000),
        cnf_jwk: InstallKey::from_verifying_key(*h.holder.verifying_key()).to_jwk(),
        plain: Map::new(),
    };
    let disclosable = [("income_below_30000".to_owned(), json!(true))];
    let text = issue(&h.keys[signer], kid, &claims, &disclosable, &[[7; 16]]).ok()?;
    Credential::parse(&text).ok()
}

/// `value` with `alg` and `use` filled in on every key where absent, as `to_json` writes them.
fn normalised(mut value: Value) -> Value {
    if let Some(keys) = value.get_mut("keys").and_then(Value::as_array_mut) {
        for k in keys {
            if let Some(k) = k.as_object_mut() {
                for (member, default) in [("alg", "ES256"), ("use", "sig")] {
                    if !k.contains_key(member) {
                        k.insert(member.to_owned(), json!(default));
                    }
                }
            }
        }
    }
    value
}

fn check_set(h: &Harness, jwks: &Jwks, input: &Value) {
    let keys = jwks.keys();
    assert!(keys.len() <= MAX_JWKS_KEYS);
    for (i, k) in keys.iter().enumerate() {
        assert!(!k.kid.is_empty() && k.kid.len() <= MAX_KID_LEN);
        assert!(k.kid.bytes().all(|b| b.is_ascii_graphic()), "{:?}", k.kid);
        assert!(keys[i + 1..].iter().all(|o| o.kid != k.kid), "kid twice");
        assert_eq!(jwks.key(&k.kid), Some(&k.key));
    }
    let json = jwks.to_json();
    assert_eq!(Jwks::parse(json.as_bytes()).as_ref(), Ok(jwks));
    let again = Jwks::parse(json.as_bytes()).map(|j| j.to_json());
    assert_eq!(again.as_deref(), Ok(json.as_str()), "re-encoding is stable");
    let written: Value = serde_json::from_str(&json).expect("our own JSON");
    assert_eq!(
        normalised(input.clone()),
        written,
        "the parser kept something other than what the document says"
    );

    // What a verifier relies on, for the keys whose private halves the harness holds.
    let unlisted = (0..)
        .map(|i| format!("unlisted-{i}"))
        .find(|kid| jwks.key(kid).is_none())
        .expect("some kid is unlisted");
    let now = Timestamp::from_millis(NOW_MS);
    for k in keys {
        let Some(mine) = h.keys.iter().position(|s| s.verifying_key() == &k.key) else {
            continue;
        };
        let good = credential(h, mine, &k.kid).expect("issues under a listed kid");
        assert_eq!(good.verify_issuer(jwks, now), Ok(()), "kid {}", k.kid);
        let other = (mine + 1) % h.keys.len();
        // Another harness key listed under this very kid would be a second key for one kid.
        let forged = credential(h, other, &k.kid).expect("issues");
        assert_eq!(
            forged.verify_issuer(jwks, now),
            Err(SdJwtError::BadIssuerSignature),
            "kid {} accepted another key's signature",
            k.kid
        );
        let stray = credential(h, mine, &unlisted).expect("issues");
        assert_eq!(stray.verify_issuer(jwks, now), Err(SdJwtError::UnknownKey));
    }
}

fuzz_target!(|data: &[u8]| {
    let h = harness();
    if let Ok(jwks) = Jwks::parse(data) {
        assert!(data.len() <= MAX_JWKS_BYTES);
        let input: Value = serde_json::from_slice(data).expect("accepted input is JSON");
        check_set(h, &jwks, &input);
    }
    if let Ok(meta) = IssuerMetadata::parse(data) {
        assert!(data.len() <= MAX_JWKS_BYTES);
        assert!(!meta.issuer.is_empty() && meta.issuer.len() <= 2048);
        let input: Value = serde_json::from_slice(data).expect("accepted input is JSON");
        let object = input.as_object().expect("an object");
        assert_eq!(object.len(), 2, "issuer and jwks only");
        assert_eq!(object["issuer"], json!(meta.issuer));
        check_set(h, &meta.jwks, &object["jwks"]);
        let embedded = serde_json::to_vec(&object["jwks"]).expect("json");
        if embedded.len() <= MAX_JWKS_BYTES {
            assert_eq!(Jwks::parse(&embedded).as_ref(), Ok(&meta.jwks));
        }
        let json = meta.to_json();
        assert_eq!(IssuerMetadata::parse(json.as_bytes()).as_ref(), Ok(&meta));
    }
});

// Half of the mutations edit one JSON value at a time (see `tacit_fuzz::mutate_json`).
fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    tacit_fuzz::mutate_json(data, size, max_size, seed)
});
