//! Signed receipts a relying site receives from an agent: `SignedReceipt::parse`, then
//! `receipt::verify` against a fixed key set (the frozen vector's), and the structure check the
//! signer also runs.
//!
//! Asserts: never panics; a parsed receipt re-encodes and re-parses to itself; `verify` accepts
//! only what has a good signature under a listed key, a sound chain, the expected audience and
//! nonce and a window containing `now`, and what it accepts reports exactly the payload's fields.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use wallet_core::receipt::{MAX_WINDOW_MS, verify};
use wallet_core::{KeySet, Nonce, Origin, SignedReceipt, Timestamp};

const KEYS: &[u8] = include_bytes!("../../wallet-core/tests/vectors/receipt-v1-keys.json");
/// Inside the frozen receipt's window (issued 1777627860000, valid ten minutes).
const NOW: i64 = 1_777_627_920_000;

struct Fixed {
    keys: KeySet,
    audience: Origin,
    nonce: Nonce,
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| Fixed {
        keys: KeySet::parse(KEYS).expect("the frozen key set parses"),
        audience: Origin::parse("https://housing.example").expect("origin"),
        nonce: Nonce::parse("n-4f1c2a9e7b3d").expect("nonce"),
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(signed) = SignedReceipt::parse(data) else {
        return;
    };
    let again = serde_json::to_vec(&signed).expect("a parsed receipt encodes");
    assert_eq!(
        SignedReceipt::parse(&again).as_ref(),
        Ok(&signed),
        "receipt round trip"
    );

    let payload = &signed.payload;
    let structure = payload.check_structure();
    let _ = payload.signing_bytes();

    let f = fixed();
    let now = Timestamp::from_millis(NOW);
    // Also at the payload's own audience and nonce, which reaches the window checks.
    for (audience, nonce) in [(&f.audience, &f.nonce), (&payload.audience, &payload.nonce)] {
        let Ok(verified) = verify(&signed, &f.keys, audience, nonce, now) else {
            continue;
        };
        assert!(
            structure.is_ok(),
            "verified a receipt whose structure is refused"
        );
        assert!(f.keys.key_for(&signed.key_id, payload.issued_at).is_some());
        assert_eq!(verified.audience(), audience);
        assert_eq!(verified.nonce(), nonce);
        assert!(
            payload.issued_at <= now && now < payload.expires_at,
            "outside its window"
        );
        let window =
            i128::from(payload.expires_at.millis()) - i128::from(payload.issued_at.millis());
        assert!(
            window <= i128::from(MAX_WINDOW_MS),
            "window longer than 24 hours"
        );
        assert_eq!(verified.log_head(), payload.log_head);
        assert_eq!(verified.answers().len(), payload.entries.len());
    }
});

// Half of the mutations edit one JSON value at a time (see `tacit_fuzz::mutate_json`).
fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    tacit_fuzz::mutate_json(data, size, max_size, seed)
});
