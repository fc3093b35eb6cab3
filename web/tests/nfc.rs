//! The page normalises passphrases with the browser's `String.prototype.normalize("NFC")`
//! instead of shipping Unicode's tables (`wallet_core::Typed`). These tests check, in real
//! Chromium, that the browser's NFC is the one `unicode-normalization` computes, and that a
//! vault made from a browser-normalised passphrase opens with the core's own normalisation.

#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use js_sys::JsString;
use wallet_core::{
    KdfParams, Normalized, Passphrase, Profile, ProfileInput, Timestamp, Typed, Vault,
};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn browser(text: &str) -> Normalized {
    let nfc: String = JsString::from(text).normalize("NFC").into();
    Normalized::new(text.to_owned(), nfc)
}

/// Texts whose NFC differs from them, or that NFC must leave alone.
const SAMPLES: &[&str] = &[
    // Latin with combining marks, in both orders of two marks (canonical reordering).
    "Cre\u{300}me bru\u{302}le\u{301}e a\u{300} Zu\u{308}rich",
    "a\u{323}\u{302} a\u{302}\u{323} q\u{307}\u{323}",
    // Already composed.
    "Cr\u{e8}me br\u{fb}l\u{e9}e \u{e0} Z\u{fc}rich",
    // Hangul conjoining jamo compose algorithmically; a precomposed syllable stays.
    "\u{1100}\u{1161}\u{11a8} \u{d55c}\u{ad6d}\u{c5b4}",
    // Compatibility characters NFC keeps (ligature, full width, superscript, Kelvin is canonical).
    "\u{fb01}sh \u{ff21}\u{ff22} x\u{b2} \u{212a}elvin \u{2126}hm \u{212b}",
    // Composition exclusions and singletons.
    "\u{958}\u{2adc}\u{f900}\u{1d15e}",
    // Greek, Vietnamese, Devanagari, Arabic, emoji with modifiers.
    "\u{3b1}\u{301}\u{3b9}\u{308}\u{301} Vie\u{323}\u{302}t \u{915}\u{93c} \u{644}\u{627}\u{653} \u{1f44d}\u{1f3fd}",
    // Plain ASCII and the empty string.
    "correct horse battery staple",
    "",
];

#[wasm_bindgen_test]
fn browser_nfc_is_the_cores_nfc() {
    for text in SAMPLES {
        assert_eq!(
            *browser(text).nfc(),
            *text.nfc(),
            "NFC of {:?}",
            text.escape_unicode().to_string()
        );
    }
    // Every code point of the Latin, Greek, Cyrillic and combining blocks, each after a base.
    let mut every = String::new();
    for c in (0x300u32..0x52f)
        .chain(0x1e00..0x1fff)
        .filter_map(char::from_u32)
    {
        every.push('a');
        every.push(c);
        every.push(c);
    }
    assert_eq!(*browser(&every).nfc(), *every.as_str().nfc());
}

#[wasm_bindgen_test]
fn a_vault_made_from_the_browsers_nfc_opens_with_the_cores() {
    let typed = "Cre\u{300}me bru\u{302}le\u{301}e a\u{300} Zu\u{308}rich";
    let input = ProfileInput::new(2_840_000, "EUR", "1990-01-01", "nordhafen", ["asthma"]);
    let today = Timestamp::from_millis(1_796_169_600_000).date_utc(); // 2026-12-02
    let profile = Profile::new(&input, today).unwrap();
    let made = Vault::create(
        &profile,
        &Passphrase::typed(&browser(typed)).unwrap(),
        KdfParams::MINIMUM,
        &mut rand_core::UnwrapErr(getrandom::SysRng),
    )
    .unwrap();
    let bytes = made.to_bytes();
    let composed = "Cr\u{e8}me br\u{fb}l\u{e9}e \u{e0} Z\u{fc}rich";
    for text in [typed, composed] {
        let (_, opened) = Vault::open(&bytes, &Passphrase::new(text.to_owned()).unwrap()).unwrap();
        assert_eq!(opened, profile);
    }
    // The length counts the browser's NFC: seven characters in fourteen code points are refused.
    assert!(Passphrase::typed(&browser(&"e\u{301}".repeat(7))).is_err());
    assert!(Passphrase::typed(&browser(&"e\u{301}".repeat(8))).is_ok());
}
