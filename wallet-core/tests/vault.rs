//! The vault envelope: round trips, one error for every failure, the re-wrap-only passphrase
//! change, redacted Debug, and a frozen v1 vector that must open forever.

// clippy.toml allows these inside `#[test]` functions only; the helpers below are test code too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;
use std::sync::LazyLock;

use proptest::prelude::*;
use proptest::sample::{select, subsequence};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use time::{Date, macros::date};
use wallet_core::catalogue::{CONDITIONS, CURRENCIES, DISTRICTS};
use wallet_core::profile::{MAX_INCOME_MINOR, format_date, parse_date};
use wallet_core::vault::{FORMAT_VERSION, MAGIC};
use wallet_core::{
    Envelope, EnvelopeError, KdfParams, OpenError, Passphrase, Profile, ProfileInput, Vault,
    VaultError, WeakPassphrase,
};

const PASSPHRASE: &str = "correct horse battery staple";
const TODAY: Date = date!(2026 - 11 - 29);

// Byte offsets from the module docs' layout table.
const M_AT: usize = 11;
const T_AT: usize = 15;
const P_AT: usize = 19;
const SALT_AT: usize = 23;
const ID_AT: usize = 39;
const WRAP_NONCE_AT: usize = 55;
const WRAPPED_AT: usize = 67;
const SEAL_NONCE_AT: usize = 115;
const SEALED_LEN_AT: usize = 127;
const SEALED_AT: usize = 131;

fn sample_input() -> ProfileInput {
    ProfileInput::new(2_840_000, "EUR", "1990-02-28", "nordhafen", ["asthma"])
}

fn sample_profile() -> Profile {
    Profile::new(&sample_input(), TODAY).unwrap()
}

fn other_profile() -> Profile {
    let input = ProfileInput::new(
        1_234_500,
        "SEK",
        "1971-07-04",
        "talheim",
        ["diabetes", "epilepsy"],
    );
    Profile::new(&input, TODAY).unwrap()
}

fn passphrase(text: &str) -> Passphrase {
    Passphrase::new(text.to_owned()).unwrap()
}

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

fn create(seed: u64) -> Vault {
    Vault::create(
        &sample_profile(),
        &passphrase(PASSPHRASE),
        KdfParams::MINIMUM,
        &mut rng(seed),
    )
    .unwrap()
}

/// One vault at MINIMUM, made once and shared by the tests that only read its bytes.
static SAMPLE: LazyLock<Vec<u8>> = LazyLock::new(|| create(7).to_bytes());

fn put_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_be_bytes());
}

#[test]
fn vault_round_trip() {
    let vault = create(1);
    let bytes = vault.to_bytes();
    let (reopened, profile) = Vault::open(&bytes, &passphrase(PASSPHRASE)).unwrap();
    assert_eq!(profile, sample_profile());
    assert_eq!(reopened.params(), KdfParams::MINIMUM);
    assert_eq!(reopened.to_bytes(), bytes);
}

#[test]
fn vault_round_trip_at_default_params() {
    let vault = Vault::create(
        &sample_profile(),
        &passphrase(PASSPHRASE),
        KdfParams::DEFAULT,
        &mut rng(2),
    )
    .unwrap();
    assert_eq!(
        KdfParams::DEFAULT,
        KdfParams {
            m_kib: 65_536,
            t: 3,
            p: 4
        }
    );
    let (reopened, profile) = Vault::open(&vault.to_bytes(), &passphrase(PASSPHRASE)).unwrap();
    assert_eq!(profile, sample_profile());
    assert_eq!(reopened.params(), KdfParams::DEFAULT);
}

#[test]
fn vault_layout_matches_the_documented_offsets() {
    let vault = create(3);
    let bytes = vault.to_bytes();
    let envelope = vault.envelope();
    assert_eq!(bytes[..8], MAGIC);
    assert_eq!(bytes[8..10], FORMAT_VERSION.to_be_bytes());
    assert_eq!(bytes[10], 1, "KDF id 1 = Argon2id v0x13");
    assert_eq!(bytes[M_AT..M_AT + 4], 19_456u32.to_be_bytes());
    assert_eq!(bytes[T_AT..T_AT + 4], 2u32.to_be_bytes());
    assert_eq!(bytes[P_AT..P_AT + 4], 1u32.to_be_bytes());
    assert_eq!(bytes[SALT_AT..ID_AT], envelope.salt()[..]);
    assert_eq!(bytes[ID_AT..WRAP_NONCE_AT], envelope.vault_id()[..]);
    assert_eq!(
        bytes[SEAL_NONCE_AT..SEALED_LEN_AT],
        envelope.seal_nonce()[..]
    );
    let sealed_len = envelope.sealed_bytes().len();
    assert_eq!(
        bytes[SEALED_LEN_AT..SEALED_AT],
        u32::try_from(sealed_len).unwrap().to_be_bytes()
    );
    assert_eq!(bytes[SEALED_AT..], envelope.sealed_bytes()[..]);
    assert_eq!(bytes.len(), SEALED_AT + sealed_len);
}

#[test]
fn vault_wrong_passphrase_is_cannot_open() {
    for wrong in [
        "correct horse battery stapl",
        "Correct horse battery staple",
        "correct horse battery staple ",
    ] {
        assert_eq!(
            Vault::open(&SAMPLE, &passphrase(wrong)).unwrap_err(),
            OpenError::CannotOpen
        );
    }
}

#[test]
fn vault_any_flipped_bit_is_cannot_open() {
    let bytes: &[u8] = &SAMPLE;
    let sealed_len = bytes.len() - SEALED_AT;
    // Every byte of header, wrap nonce, wrapped key, seal nonce and length; then at least 16
    // positions spread over the sealed profile, including its first and last (tag) bytes.
    let mut positions: Vec<usize> = (0..SEALED_AT).collect();
    let samples = 24;
    positions.extend((0..samples).map(|i| SEALED_AT + i * (sealed_len - 1) / (samples - 1)));
    positions.dedup();
    assert!(positions.len() >= SEALED_AT + 16);

    // Argon2 at MINIMUM costs ~60 ms per open; spread the positions over a few threads.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let pass = passphrase(PASSPHRASE);
    std::thread::scope(|scope| {
        for chunk in positions.chunks(positions.len().div_ceil(threads)) {
            let pass = &pass;
            scope.spawn(move || {
                for &at in chunk {
                    let mut tampered = bytes.to_vec();
                    tampered[at] ^= 1 << (at % 8);
                    assert_eq!(
                        Vault::open(&tampered, pass).unwrap_err(),
                        OpenError::CannotOpen,
                        "flipping bit {} of byte {at} went unnoticed",
                        at % 8
                    );
                }
            });
        }
    });
}

#[test]
fn vault_truncated_at_every_length_is_cannot_open() {
    let pass = passphrase(PASSPHRASE);
    for len in 0..SAMPLE.len() {
        let cut = &SAMPLE[..len];
        assert!(
            matches!(Envelope::parse(cut), Err(EnvelopeError(_))),
            "length {len}"
        );
        assert_eq!(
            Vault::open(cut, &pass).unwrap_err(),
            OpenError::CannotOpen,
            "length {len}"
        );
    }
}

#[test]
fn vault_appended_bytes_are_cannot_open() {
    let pass = passphrase(PASSPHRASE);
    for extra in [&[0u8][..], &[0xff], &[0; 16], &[0x5a; 1000]] {
        let mut longer = SAMPLE.clone();
        longer.extend_from_slice(extra);
        assert_eq!(
            Envelope::parse(&longer).unwrap_err(),
            EnvelopeError("bytes after the sealed profile")
        );
        assert_eq!(
            Vault::open(&longer, &pass).unwrap_err(),
            OpenError::CannotOpen
        );
    }
}

#[test]
fn vault_hostile_header_is_refused_before_argon2() {
    let pass = passphrase(PASSPHRASE);
    let cases: [(usize, u32, &str); 7] = [
        (M_AT, 2 * 1024 * 1024, "memory cost above 1 GiB"),
        (M_AT, u32::MAX, "memory cost above 1 GiB"),
        (T_AT, 11, "more than 10 passes"),
        (T_AT, 0, "zero passes"),
        (P_AT, 0, "parallelism of 0"),
        (P_AT, 17, "parallelism above 16"),
        (M_AT, 7, "memory cost below 8 KiB per lane"),
    ];
    for (at, value, reason) in cases {
        let mut hostile = SAMPLE.clone();
        put_u32(&mut hostile, at, value);
        assert_eq!(
            Envelope::parse(&hostile).unwrap_err(),
            EnvelopeError(reason)
        );
        assert_eq!(
            Vault::open(&hostile, &pass).unwrap_err(),
            OpenError::CannotOpen
        );
    }
    // The ceiling itself is accepted by the parser (opening would run Argon2 at 1 GiB).
    let mut at_ceiling = SAMPLE.clone();
    put_u32(&mut at_ceiling, M_AT, KdfParams::MAXIMUM.m_kib);
    put_u32(&mut at_ceiling, T_AT, KdfParams::MAXIMUM.t);
    put_u32(&mut at_ceiling, P_AT, KdfParams::MAXIMUM.p);
    assert_eq!(
        Envelope::parse(&at_ceiling).unwrap().params(),
        KdfParams::MAXIMUM
    );
}

#[test]
fn vault_malformed_headers_are_cannot_open() {
    let pass = passphrase(PASSPHRASE);
    let cases: [(usize, u8, &str); 4] = [
        (0, b'X', "not a Tacit vault"),
        (9, 2, "unsupported format version"),
        (8, 1, "unsupported format version"),
        (10, 2, "unknown key derivation function"),
    ];
    for (at, value, reason) in cases {
        let mut bad = SAMPLE.clone();
        bad[at] = value;
        assert_eq!(Envelope::parse(&bad).unwrap_err(), EnvelopeError(reason));
        assert_eq!(Vault::open(&bad, &pass).unwrap_err(), OpenError::CannotOpen);
    }
    let mut short_seal = SAMPLE[..SEALED_AT].to_vec();
    put_u32(&mut short_seal, SEALED_LEN_AT, 0);
    assert_eq!(
        Envelope::parse(&short_seal).unwrap_err(),
        EnvelopeError("sealed profile shorter than its tag")
    );
    assert_eq!(
        Vault::open(&short_seal, &pass).unwrap_err(),
        OpenError::CannotOpen
    );
}

#[test]
fn vault_weak_or_costly_params_are_refused_at_create() {
    let min = KdfParams::MINIMUM;
    let max = KdfParams::MAXIMUM;
    let cases = [
        (
            KdfParams {
                m_kib: 19_455,
                ..min
            },
            VaultError::WeakKdfParams("memory cost below 19 MiB"),
        ),
        (
            KdfParams { t: 1, ..min },
            VaultError::WeakKdfParams("fewer than 2 passes"),
        ),
        (
            KdfParams { p: 0, ..min },
            VaultError::WeakKdfParams("parallelism must be at least 1"),
        ),
        (
            KdfParams {
                m_kib: max.m_kib + 1,
                ..min
            },
            VaultError::KdfParamsTooCostly("memory cost above 1 GiB"),
        ),
        (
            KdfParams { t: 11, ..min },
            VaultError::KdfParamsTooCostly("more than 10 passes"),
        ),
        (
            KdfParams { p: 17, ..min },
            VaultError::KdfParamsTooCostly("parallelism above 16"),
        ),
    ];
    let pass = passphrase(PASSPHRASE);
    let mut vault = create(4);
    let before = vault.to_bytes();
    for (params, expected) in cases {
        assert_eq!(
            Vault::create(&sample_profile(), &pass, params, &mut rng(5)).unwrap_err(),
            expected
        );
        assert_eq!(
            vault
                .change_passphrase(&pass, params, &mut rng(5))
                .unwrap_err(),
            expected
        );
        assert_eq!(
            vault.to_bytes(),
            before,
            "a refused change leaves the vault"
        );
    }
    assert_eq!(min.check_for_create(), Ok(()));
    assert_eq!(max.check_for_create(), Ok(()));
}

#[test]
fn vault_change_passphrase_rewraps_the_data_key_only() {
    let old = passphrase(PASSPHRASE);
    let new = passphrase("a different, longer passphrase");
    let mut vault = create(6);
    let before = vault.envelope().clone();
    let new_params = KdfParams {
        m_kib: 20 * 1024,
        ..KdfParams::MINIMUM
    };
    vault
        .change_passphrase(&new, new_params, &mut rng(60))
        .unwrap();
    let after = vault.envelope();

    assert_eq!(after.sealed_bytes(), before.sealed_bytes());
    assert_eq!(after.seal_nonce(), before.seal_nonce());
    assert_eq!(after.vault_id(), before.vault_id());
    assert_ne!(after.salt(), before.salt());
    assert_eq!(after.params(), new_params);
    let (old_bytes, new_bytes) = (before.to_bytes(), vault.to_bytes());
    assert_ne!(
        old_bytes[WRAP_NONCE_AT..WRAPPED_AT],
        new_bytes[WRAP_NONCE_AT..WRAPPED_AT],
        "fresh wrap nonce"
    );
    assert_ne!(
        old_bytes[WRAPPED_AT..SEAL_NONCE_AT],
        new_bytes[WRAPPED_AT..SEAL_NONCE_AT],
        "re-wrapped data key"
    );
    assert_eq!(old_bytes[SEAL_NONCE_AT..], new_bytes[SEAL_NONCE_AT..]);

    assert_eq!(
        Vault::open(&new_bytes, &old).unwrap_err(),
        OpenError::CannotOpen
    );
    let (reopened, profile) = Vault::open(&new_bytes, &new).unwrap();
    assert_eq!(profile, sample_profile());
    assert_eq!(reopened.params(), new_params);
    // The old envelope still opens with the old passphrase: the data key did not change.
    assert_eq!(Vault::open(&old_bytes, &old).unwrap().1, sample_profile());
}

#[test]
fn vault_reseal_round_trip() {
    let pass = passphrase(PASSPHRASE);
    let mut vault = create(8);
    let before = vault.to_bytes();
    vault.reseal(&other_profile(), &mut rng(80)).unwrap();
    let after = vault.to_bytes();
    // Header, wrap nonce and wrapped key are untouched; only the seal changed.
    assert_eq!(before[..SEAL_NONCE_AT], after[..SEAL_NONCE_AT]);
    assert_ne!(
        before[SEAL_NONCE_AT..SEALED_LEN_AT],
        after[SEAL_NONCE_AT..SEALED_LEN_AT]
    );
    let (mut reopened, profile) = Vault::open(&after, &pass).unwrap();
    assert_eq!(profile, other_profile());

    // Resealing the same profile again still gives a fresh nonce and ciphertext.
    reopened.reseal(&other_profile(), &mut rng(81)).unwrap();
    assert_ne!(reopened.to_bytes(), after);
    assert_eq!(
        Vault::open(&reopened.to_bytes(), &pass).unwrap().1,
        other_profile()
    );
}

#[test]
fn vault_debug_prints_nothing_secret() {
    let seed = 9;
    let vault = create(seed);
    // The data key is the third draw: after the 16-byte salt and the 16-byte vault id.
    let mut replay = rng(seed);
    let mut skipped = [0u8; 32];
    replay.fill_bytes(&mut skipped);
    let mut data_key = [0u8; 32];
    replay.fill_bytes(&mut data_key);

    let pass = passphrase(PASSPHRASE);
    let printed = [
        format!("{vault:?}"),
        format!("{vault:#?}"),
        format!("{:?}", vault.envelope()),
        format!("{pass:?}"),
        format!("{:?}", Vault::open(&vault.to_bytes(), &pass)),
    ];
    assert_eq!(printed[3], "Passphrase(..)");
    let secrets = [
        PASSPHRASE.to_owned(),
        "horse".to_owned(),
        hex::encode(data_key),
        format!("{:?}", data_key),
        format!("{:?}", &data_key[..4])
            .trim_end_matches(']')
            .to_owned(),
        "2840000".to_owned(),
        "28400".to_owned(),
        "1990".to_owned(),
        "nordhafen".to_owned(),
        "asthma".to_owned(),
    ];
    for text in &printed {
        for secret in &secrets {
            assert!(!text.contains(secret.as_str()), "{text:?} shows {secret:?}");
        }
    }
}

#[test]
fn passphrase_shorter_than_8_characters_is_refused() {
    for short in ["", "1234567", "ééééééé", "🔑🔑🔑🔑🔑🔑🔑"] {
        let err = Passphrase::new(short.to_owned()).unwrap_err();
        assert_eq!(err, WeakPassphrase("shorter than 8 characters"));
    }
    let err = Passphrase::new("hunter2".to_owned()).unwrap_err();
    assert!(!err.to_string().contains("hunter2"));
    assert!(!format!("{err:?}").contains("hunter2"));
    for ok in ["12345678", "éééééééé", "🔑🔑🔑🔑🔑🔑🔑🔑"] {
        assert!(Passphrase::new(ok.to_owned()).is_ok(), "{ok}");
    }
}

#[test]
fn envelope_parse_round_trips_the_bytes() {
    let envelope = Envelope::parse(&SAMPLE).unwrap();
    assert_eq!(envelope.to_bytes(), *SAMPLE);
    assert_eq!(envelope.params(), KdfParams::MINIMUM);
}

fn profile_input() -> impl Strategy<Value = ProfileInput> {
    let districts: Vec<&str> = DISTRICTS.iter().map(|d| d.code).collect();
    let conditions: Vec<&str> = CONDITIONS.iter().map(|c| c.code).collect();
    let most = conditions.len();
    (
        0..i64::try_from(MAX_INCOME_MINOR).unwrap(),
        select(CURRENCIES),
        0i64..130 * 365,
        select(districts),
        subsequence(conditions, 0..=most),
    )
        .prop_map(|(income_minor, currency, days_old, district, conditions)| {
            let dob = format_date(TODAY - time::Duration::days(days_old));
            ProfileInput::new(income_minor, currency, &dob, district, conditions)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn vault_round_trips_random_profiles(input in profile_input(), seed in any::<u64>()) {
        let profile = Profile::new(&input, TODAY).unwrap();
        let pass = passphrase(PASSPHRASE);
        let vault = Vault::create(&profile, &pass, KdfParams::MINIMUM, &mut rng(seed)).unwrap();
        let (_, opened) = Vault::open(&vault.to_bytes(), &pass).unwrap();
        prop_assert_eq!(opened, profile);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn envelope_parse_never_panics_on_arbitrary_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..600),
    ) {
        if let Ok(envelope) = Envelope::parse(&bytes) {
            prop_assert_eq!(envelope.to_bytes(), bytes);
        }
    }

    #[test]
    fn envelope_parse_never_panics_on_mutated_vaults(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in proptest::option::of(any::<prop::sample::Index>()),
        tail in prop::collection::vec(any::<u8>(), 0..4),
    ) {
        let mut bytes = SAMPLE.clone();
        for (at, value) in edits {
            let at = at.index(bytes.len());
            bytes[at] = value;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        bytes.extend_from_slice(&tail);
        // Whatever it says, it says it without panicking, and what it accepts it reproduces.
        if let Ok(envelope) = Envelope::parse(&bytes) {
            prop_assert_eq!(envelope.to_bytes(), bytes);
        }
    }
}

// ---- Frozen vector -------------------------------------------------------------------------

/// What `vault-v1.json` records: everything needed to open `vault-v1.bin` and check it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct VectorSpec {
    comment: String,
    seed: u64,
    passphrase: String,
    today: String,
    kdf: VectorKdf,
    profile: ProfileInput,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct VectorKdf {
    m_kib: u32,
    t: u32,
    p: u32,
}

const VECTOR_SEED: u64 = 20_261_129;

fn vector_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("vectors")
        .join(name)
}

/// The frozen vault as its writer makes it today: the spec byte for byte (`TACIT_WRITE_VECTORS=1`
/// rewrites it), and the vault up to its sealed profile, which this build seals in a newer
/// profile format than the frozen one (so `vault-v1.bin` is never rewritten).
#[test]
fn frozen_vault_v1_is_what_its_writer_writes() {
    let params = KdfParams::MINIMUM;
    let spec = VectorSpec {
        comment: "Tacit vault format v1, frozen: vault-v1.bin must open with this passphrase \
                  and yield this profile in every future version. Never regenerate."
            .to_owned(),
        seed: VECTOR_SEED,
        passphrase: PASSPHRASE.to_owned(),
        today: format_date(TODAY),
        kdf: VectorKdf {
            m_kib: params.m_kib,
            t: params.t,
            p: params.p,
        },
        profile: sample_input(),
    };
    common::assert_vector(
        &vector_path("vault-v1.json"),
        (serde_json::to_string_pretty(&spec).unwrap() + "\n").as_bytes(),
    );
    let profile = Profile::new(&spec.profile, TODAY).unwrap();
    let written = Vault::create(
        &profile,
        &passphrase(&spec.passphrase),
        params,
        &mut rng(VECTOR_SEED),
    )
    .unwrap()
    .to_bytes();
    let frozen = std::fs::read(vector_path("vault-v1.bin")).unwrap();
    assert_eq!(SEALED_LEN_AT, common::BEFORE_SEALED);
    assert_eq!(frozen[..SEALED_LEN_AT], written[..SEALED_LEN_AT]);
}

#[test]
fn frozen_vault_v1_still_opens() {
    let bytes = std::fs::read(vector_path("vault-v1.bin")).unwrap();
    let spec: VectorSpec =
        serde_json::from_slice(&std::fs::read(vector_path("vault-v1.json")).unwrap()).unwrap();
    let today = parse_date(&spec.today).unwrap();
    let expected = Profile::new(&spec.profile, today).unwrap();

    let envelope = Envelope::parse(&bytes).unwrap();
    assert_eq!(
        envelope.params(),
        KdfParams {
            m_kib: spec.kdf.m_kib,
            t: spec.kdf.t,
            p: spec.kdf.p
        }
    );
    let (vault, profile) = Vault::open(&bytes, &passphrase(&spec.passphrase)).unwrap();
    assert_eq!(profile, expected);
    assert_eq!(
        vault.to_bytes(),
        bytes,
        "re-encoding changed the frozen bytes"
    );
    assert_eq!(
        Vault::open(&bytes, &passphrase("not the frozen passphrase")).unwrap_err(),
        OpenError::CannotOpen
    );
}

#[test]
fn vault_companion_data_is_bound_to_vault_and_label() {
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    let pass = Passphrase::new("correct horse battery".into()).unwrap();
    let profile = sample_profile();
    let a = Vault::create(&profile, &pass, KdfParams::MINIMUM, &mut rng).unwrap();
    let b = Vault::create(&profile, &pass, KdfParams::MINIMUM, &mut rng).unwrap();
    let sealed = a.seal_aux("ledger", b"{\"x\":1}", &mut rng).unwrap();
    assert_eq!(&a.open_aux("ledger", &sealed).unwrap()[..], b"{\"x\":1}");
    assert_eq!(
        a.open_aux("other", &sealed).unwrap_err(),
        OpenError::CannotOpen
    );
    assert_eq!(
        b.open_aux("ledger", &sealed).unwrap_err(),
        OpenError::CannotOpen
    );
    for i in 0..sealed.len() {
        let mut bad = sealed.clone();
        bad[i] ^= 1;
        assert_eq!(
            a.open_aux("ledger", &bad).unwrap_err(),
            OpenError::CannotOpen
        );
    }
    assert_eq!(
        a.open_aux("ledger", &sealed[..5]).unwrap_err(),
        OpenError::CannotOpen
    );
    // Survives a passphrase change: the data key is the same.
    let mut a = a;
    let new = Passphrase::new("another long passphrase".into()).unwrap();
    a.change_passphrase(&new, KdfParams::MINIMUM, &mut rng)
        .unwrap();
    assert_eq!(&a.open_aux("ledger", &sealed).unwrap()[..], b"{\"x\":1}");
}
