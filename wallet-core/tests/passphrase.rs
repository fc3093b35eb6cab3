//! Issue 12: passphrases are Unicode-normalised (NFC) before the KDF, so the same typed text
//! opens the vault however it was composed (precomposed "é" or "e" + combining acute).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::path::PathBuf;

use common::profile;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use wallet_core::{KdfParams, OpenError, Passphrase, Vault};

/// "Crème brûlée à Zürich", composed (NFC).
const NFC: &str = "Cr\u{e8}me br\u{fb}l\u{e9}e \u{e0} Z\u{fc}rich";
/// The same text decomposed (NFD): base letters followed by combining marks.
const NFD: &str = "Cre\u{300}me bru\u{302}le\u{301}e a\u{300} Zu\u{308}rich";

fn vector() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/vault-nfc-v1.bin")
}

/// The test profile's vault under `text` (normalised by the core), at the minimum KDF
/// parameters, from the random seed `seed`.
fn made_with(text: &str, seed: u64) -> Vec<u8> {
    Vault::create(
        &profile(),
        &Passphrase::new(text.into()).unwrap(),
        KdfParams::MINIMUM,
        &mut ChaCha20Rng::seed_from_u64(seed),
    )
    .unwrap()
    .to_bytes()
}

#[test]
fn passphrase_forms_differ_as_bytes() {
    assert_ne!(NFC.as_bytes(), NFD.as_bytes());
}

#[test]
fn passphrase_nfd_and_nfc_open_the_same_vault() {
    let bytes = made_with(NFD, 1);
    for text in [NFC, NFD] {
        let (_, opened) = Vault::open(&bytes, &Passphrase::new(text.into()).unwrap()).unwrap();
        assert_eq!(opened, profile());
    }
    assert_eq!(
        Vault::open(
            &bytes,
            &Passphrase::new("Creme brulee a Zurich".into()).unwrap()
        )
        .unwrap_err(),
        OpenError::CannotOpen,
        "normalisation is NFC, not a stripping of accents"
    );
}

#[test]
fn passphrase_length_counts_normalised_characters() {
    // Eight characters composed, sixteen code points decomposed: both accepted; seven composed
    // (fourteen decomposed) refused either way.
    assert!(Passphrase::new("\u{e9}".repeat(8)).is_ok());
    assert!(Passphrase::new("e\u{301}".repeat(8)).is_ok());
    assert!(Passphrase::new("e\u{301}".repeat(7)).is_err());
}

/// The frozen vault as its writer makes it today, up to its sealed profile: this build seals a
/// newer profile format than the frozen one, so the vector is never rewritten.
#[test]
fn passphrase_frozen_vector_is_what_its_writer_writes() {
    let written = made_with(NFC, 20261201);
    let frozen = std::fs::read(vector()).unwrap();
    let before = common::BEFORE_SEALED;
    assert_eq!(frozen[..before], written[..before]);
}

/// Frozen: a vault made with the NFC passphrase opens with the NFD text in every future version.
#[test]
fn passphrase_frozen_nfc_vector_opens_with_nfd_text() {
    let bytes = std::fs::read(vector()).unwrap();
    let (_, opened) = Vault::open(&bytes, &Passphrase::new(NFD.into()).unwrap()).unwrap();
    assert_eq!(opened, profile());
}

/// The page gives the browser's NFC form ([`Normalized`]); the core's `Passphrase::new` uses
/// its own tables. Given the same NFC, both derive the same key.
#[test]
fn a_platform_normalised_passphrase_opens_what_the_cores_made() {
    use wallet_core::Normalized;
    let bytes = made_with(NFD, 2);
    for typed in [NFC, NFD] {
        let given = Normalized::new(typed.into(), NFC.into());
        let (_, opened) = Vault::open(&bytes, &Passphrase::typed(&given).unwrap()).unwrap();
        assert_eq!(opened, profile());
    }
    // A platform that did not normalise gives NFD back: that is not the vault's key.
    let unnormalised = Normalized::new(NFD.into(), NFD.into());
    assert_eq!(
        Vault::open(&bytes, &Passphrase::typed(&unnormalised).unwrap()).unwrap_err(),
        OpenError::CannotOpen
    );
}

/// ASCII text is its own NFC: what a platform (or a page script that replaced
/// `String.prototype.normalize`) says its NFC is does not change the key.
#[test]
fn an_ascii_passphrase_ignores_the_platforms_answer() {
    use wallet_core::Normalized;
    const ASCII: &str = "correct horse battery staple";
    let bytes = made_with(ASCII, 3);
    let lied = Normalized::new(ASCII.into(), "aaaaaaaa".into());
    let (_, opened) = Vault::open(&bytes, &Passphrase::typed(&lied).unwrap()).unwrap();
    assert_eq!(opened, profile());
    // Nor does a lie make a short ASCII passphrase long enough.
    assert!(
        Passphrase::typed(&Normalized::new("short".into(), "long enough text".into())).is_err()
    );
}
