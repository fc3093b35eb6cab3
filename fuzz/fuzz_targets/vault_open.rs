//! Vault bytes from storage or an imported backup: `Envelope::parse` and `Vault::open`.
//!
//! Argon2id at the parameters a real vault carries costs 15 ms (m = 19 MiB, the floor for
//! creating one) to seconds per run, which would hold libFuzzer under 70 executions per second
//! and teach it nothing: a mutated envelope can only fail the AES-GCM wrap. So this target fuzzes
//! everything up to the KDF at full speed and runs the KDF only when it is cheap:
//! - `Envelope::parse` on every input; a parsed envelope re-encodes to exactly the input bytes
//!   (the layout has one spelling) and re-parses to itself;
//! - `Vault::open` on every input: when the header does not parse it fails before Argon2; when it
//!   parses and asks for a cheap Argon2 (m <= 64 KiB, t <= 2, which `open` accepts down to
//!   Argon2's own floor of 8 KiB per lane) it runs Argon2 and the unwrap in full; either way it
//!   must be the one uninformative `CannotOpen`, never a panic. Headers asking for more are
//!   refused by parse above 1 GiB / 10 passes / 16 lanes (checked here) and otherwise skipped.
//! - The profile JSON `open` decodes after decryption is authenticated, so no mutation reaches it
//!   through `open`; the input is fed to that decoder directly.
//! - `Backup::parse` (a backup file: the record behind `TACIT-BACKUP 2`, or an envelope alone):
//!   never a panic; whatever it accepts has a well-formed envelope, and an input without the
//!   header is accepted exactly when `Envelope::parse` accepts it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wallet_core::store::{BACKUP_HEADER, Backup};
use wallet_core::{Envelope, EnvelopeError, KdfParams, OpenError, Passphrase, Profile, Vault};

/// The passphrase of the frozen vector `wallet-core/tests/vectors/vault-v1.bin` (a seed).
const PASSPHRASE: &str = "correct horse battery staple";

fn cheap(params: KdfParams) -> bool {
    params.m_kib <= 64 && params.t <= 2
}

fuzz_target!(|data: &[u8]| {
    let passphrase = Passphrase::new(PASSPHRASE.to_owned()).expect("long enough");
    match Envelope::parse(data) {
        Ok(envelope) => {
            let params = envelope.params();
            assert!(
                params.m_kib <= KdfParams::MAXIMUM.m_kib,
                "m above the ceiling"
            );
            assert!(params.t <= KdfParams::MAXIMUM.t, "t above the ceiling");
            assert!(
                (1..=KdfParams::MAXIMUM.p).contains(&params.p),
                "p out of range"
            );
            assert!(
                params.t >= 1 && params.m_kib >= 8 * params.p,
                "below Argon2's floor"
            );
            let bytes = envelope.to_bytes();
            assert_eq!(bytes, data, "parse then to_bytes changed the bytes");
            assert_eq!(Envelope::parse(&bytes).as_ref(), Ok(&envelope));
            if cheap(params) {
                let opened = Vault::open(data, &passphrase);
                assert!(
                    matches!(opened, Err(OpenError::CannotOpen)),
                    "a fuzzed envelope opened, or failed with another error"
                );
            }
        }
        Err(EnvelopeError(_)) => {
            assert!(matches!(
                Vault::open(data, &passphrase),
                Err(OpenError::CannotOpen)
            ));
        }
    }

    // A backup file, with the header (after a fuzzed prefix too) and without.
    for file in [data.to_vec(), [BACKUP_HEADER, data].concat()] {
        if let Ok(backup) = Backup::parse(&file) {
            assert!(
                Envelope::parse(backup.envelope()).is_ok(),
                "a backup was accepted with an envelope that does not parse"
            );
        }
    }
    if !data.starts_with(BACKUP_HEADER) {
        assert_eq!(
            Backup::parse(data).is_ok(),
            Envelope::parse(data).is_ok(),
            "a headerless backup is an envelope alone"
        );
    }

    // What `open` decodes once the seal is authenticated.
    if let Ok(profile) = serde_json::from_slice::<Profile>(data) {
        let again = serde_json::to_vec(&profile).expect("a decoded profile encodes");
        let back: Profile = serde_json::from_slice(&again).expect("an encoded profile decodes");
        assert!(back == profile, "profile JSON round trip changed it");
    }
});
