//! How the person confirms (`capability_gate::consent`): the choice between the registered
//! device and the passphrase, with no silent fallback; the device record sealed with its vault
//! (a record moved to, rewritten for, or damaged under another vault does not pass as this
//! vault's device); and the proof of confirmation only from a passphrase that opens the stored
//! vault the page is on, or an assertion for the device's own credential.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use capability_gate::consent::{
    Act, By, Confirmation, Device, DeviceState, Instead, Made, NotConfirmed, RegisterError,
    by_passphrase, confirmation, device,
};
use p256::ecdsa::SigningKey;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sha2::{Digest, Sha256};
use tacit_protocol::webauthn::{Assertion, WebAuthnError, spki_of};
use wallet_core::store::StoredVault;
use wallet_core::{KdfParams, Passphrase, Profile, ProfileInput, Timestamp, Vault};

const PASS: &str = "correct horse battery";
const ACTS: [Act; 6] = [
    Act::Grant,
    Act::Release,
    Act::EndSession,
    Act::DeleteHistory,
    Act::ReplaceProfile,
    Act::RegisterDevice,
];

fn vault(seed: u64) -> Vault {
    let input = ProfileInput::new::<String>(2_840_000, "EUR", "1990-02-28", "nordhafen", []);
    let today = Timestamp::from_millis(1_764_417_600_000).date_utc();
    let profile = Profile::new(&input, today).unwrap();
    let pass = Passphrase::new(PASS.into()).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    Vault::create(&profile, &pass, KdfParams::MINIMUM, &mut rng).unwrap()
}

fn a_device(label: &str) -> Device {
    let key = SigningKey::from_slice(&Sha256::digest(label.as_bytes())).unwrap();
    Device::new(label.as_bytes().to_vec(), spki_of(key.verifying_key())).unwrap()
}

fn sealed(device: &Device, vault: &Vault) -> String {
    device
        .seal(vault, &mut ChaCha20Rng::seed_from_u64(7))
        .unwrap()
}

#[test]
fn the_device_confirms_when_ready_and_the_passphrase_instead_is_named_with_words() {
    let ready = DeviceState::Ready(a_device("d"));
    for act in ACTS {
        let expected = |state: &DeviceState| match (act, state) {
            (Act::RegisterDevice, _) | (_, DeviceState::NotRegistered) => Confirmation::Passphrase,
            (_, DeviceState::Ready(d)) => Confirmation::Device(d.clone()),
            (_, DeviceState::Locked) => Confirmation::PassphraseInstead(Instead::Locked),
            (_, DeviceState::Unreadable) => Confirmation::PassphraseInstead(Instead::Unreadable),
        };
        for state in [
            DeviceState::NotRegistered,
            ready.clone(),
            DeviceState::Locked,
            DeviceState::Unreadable,
        ] {
            let got = confirmation(act, &state);
            assert_eq!(got, expected(&state), "{act:?} with {state:?}");
            // A fallback is never silent: the passphrase instead of a registered device always
            // comes with a sentence, and only then.
            match &got {
                Confirmation::PassphraseInstead(_) => {
                    let words = got.notice().unwrap();
                    assert!(words.contains("registered") && words.contains("passphrase"));
                }
                _ => assert_eq!(got.notice(), None),
            }
        }
    }
    // Registering a device is confirmed with the passphrase even while one is ready: a device
    // does not vouch for its replacement.
    assert_eq!(
        confirmation(Act::RegisterDevice, &ready),
        Confirmation::Passphrase
    );
    assert_eq!(
        confirmation(Act::Release, &ready),
        Confirmation::Device(a_device("d"))
    );
    assert_ne!(
        Confirmation::PassphraseInstead(Instead::Locked).notice(),
        Confirmation::PassphraseInstead(Instead::Unreadable).notice()
    );
}

#[test]
fn a_device_record_opens_only_with_its_vault() {
    let (a, b) = (vault(1), vault(2));
    let (id_a, id_b) = (*a.envelope().vault_id(), *b.envelope().vault_id());
    let d = a_device("device of a");
    let record = sealed(&d, &a);

    assert_eq!(
        device(Some(&record), Some(&a), Some(id_a)),
        DeviceState::Ready(d.clone())
    );
    // Locked: the stored profile's vault says whose it is; it cannot be opened.
    assert_eq!(device(Some(&record), None, Some(id_a)), DeviceState::Locked);
    // Nothing stored, no vault on the page, another vault's record: not registered here.
    assert_eq!(
        device(None, Some(&a), Some(id_a)),
        DeviceState::NotRegistered
    );
    assert_eq!(
        device(Some(&record), None, None),
        DeviceState::NotRegistered
    );
    assert_eq!(
        device(Some(&record), Some(&b), Some(id_b)),
        DeviceState::NotRegistered
    );
    assert_eq!(
        device(Some(&record), None, Some(id_b)),
        DeviceState::NotRegistered
    );
    // The unlocked vault decides, not a stored id that says otherwise.
    assert_eq!(
        device(Some(&record), Some(&b), Some(id_a)),
        DeviceState::NotRegistered
    );

    // B's record relabelled as A's does not open with A's key.
    let moved = sealed(&d, &b).replace(&hex::encode(id_b), &hex::encode(id_a));
    assert_ne!(moved, sealed(&d, &b));
    assert_eq!(
        device(Some(&moved), Some(&a), Some(id_a)),
        DeviceState::Unreadable
    );
    // Damaged: one sealed byte changed; not JSON; a record missing its seal.
    let value: serde_json::Value = serde_json::from_str(&record).unwrap();
    let hex_sealed = value["sealed"].as_str().unwrap();
    let flipped_last = if hex_sealed.ends_with('0') { "1" } else { "0" };
    let damaged = serde_json::json!({
        "vault_id": value["vault_id"],
        "sealed": format!("{}{flipped_last}", &hex_sealed[..hex_sealed.len() - 1]),
    })
    .to_string();
    for bad in [damaged.as_str(), "not json", r#"{"vault_id":"00"}"#] {
        assert_eq!(
            device(Some(bad), Some(&a), Some(id_a)),
            DeviceState::Unreadable,
            "{bad}"
        );
    }
    // Upper-case hex names the same vault.
    let upper = record.replace(&hex::encode(id_a), &hex::encode_upper(id_a));
    assert_eq!(
        device(Some(&upper), Some(&a), Some(id_a)),
        DeviceState::Ready(d)
    );
}

#[test]
fn a_device_needs_a_credential_id_and_a_p256_key() {
    let spki = a_device("k").public_key().to_vec();
    assert_eq!(
        Device::new(Vec::new(), spki.clone()),
        Err(RegisterError::NoCredentialId)
    );
    assert_eq!(
        Device::new(b"id".to_vec(), spki[..spki.len() - 1].to_vec()),
        Err(RegisterError::WebAuthn(WebAuthnError::BadKey))
    );
    assert!(Device::new(b"id".to_vec(), spki).is_ok());
}

#[test]
fn a_registration_is_checked_before_a_device_is_made() {
    const ORIGIN: &str = "http://localhost:8080";
    let challenge = [9u8; 32];
    let spki = a_device("r").public_key().to_vec();
    let client = format!(
        r#"{{"type":"webauthn.create","challenge":"{}","origin":"{ORIGIN}"}}"#,
        base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, challenge)
    );
    let auth = |flags: u8| [&Sha256::digest(b"localhost")[..], &[flags, 0, 0, 0, 1]].concat();
    let (verified, present_only) = (auth(0x05), auth(0x01));
    let made = Made {
        credential_id: b"cred",
        public_key: &spki,
        algorithm: -7.0,
        client_data_json: client.as_bytes(),
        authenticator_data: &verified,
    };
    let ok = Device::register(&made, &challenge, ORIGIN, "localhost").unwrap();
    assert_eq!(ok.credential_id(), b"cred");
    let refused = |made: Made<'_>, challenge: &[u8], origin: &str, rp: &str| {
        Device::register(&made, challenge, origin, rp).unwrap_err()
    };
    assert_eq!(
        refused(
            Made {
                algorithm: -257.0,
                ..made
            },
            &challenge,
            ORIGIN,
            "localhost"
        ),
        RegisterError::NotEs256
    );
    assert_eq!(
        refused(
            Made {
                credential_id: b"",
                ..made
            },
            &challenge,
            ORIGIN,
            "localhost"
        ),
        RegisterError::NoCredentialId
    );
    assert_eq!(
        refused(
            Made {
                authenticator_data: &present_only,
                ..made
            },
            &challenge,
            ORIGIN,
            "localhost"
        ),
        RegisterError::WebAuthn(WebAuthnError::UserNotVerified)
    );
    assert!(matches!(
        refused(made, &[8u8; 32], ORIGIN, "localhost"),
        RegisterError::WebAuthn(_)
    ));
    assert!(matches!(
        refused(made, &challenge, "http://localhost:8081", "localhost"),
        RegisterError::WebAuthn(_)
    ));
    assert_eq!(
        refused(made, &challenge, ORIGIN, "evil.localhost"),
        RegisterError::WebAuthn(WebAuthnError::WrongRelyingParty)
    );
}

#[test]
fn an_assertion_for_another_credential_does_not_confirm() {
    let d = a_device("cred-1");
    let assertion = |credential_id| Assertion {
        credential_id,
        client_data_json: b"{}",
        authenticator_data: &[0u8; 37],
        signature_der: &[0x30, 0],
    };
    for other in [&b"cred-2"[..], b"", b"cred-"] {
        assert_eq!(
            d.confirm(&assertion(other), &[1; 32], "http://localhost", "localhost")
                .map(|(c, _)| c),
            Err(WebAuthnError::WrongCredential)
        );
    }
    // The right credential with nothing else right is still refused.
    assert!(
        d.confirm(
            &assertion(b"cred-1"),
            &[1; 32],
            "http://localhost",
            "localhost"
        )
        .is_err()
    );
}

#[test]
fn the_passphrase_confirms_only_by_opening_the_stored_vault_the_page_is_on() {
    let (a, b) = (vault(3), vault(4));
    let stored = StoredVault::new(1, &a.to_bytes());
    let (id_a, id_b) = (*a.envelope().vault_id(), *b.envelope().vault_id());

    let ok = by_passphrase(Some(&stored), PASS, Some(&id_a)).unwrap();
    assert_eq!(ok.by(), By::Passphrase);
    assert_eq!(
        by_passphrase(Some(&stored), PASS, None).map(|c| c.by()),
        Ok(By::Passphrase)
    );
    assert_eq!(
        by_passphrase(Some(&stored), "", Some(&id_a)),
        Err(NotConfirmed::Empty)
    );
    assert_eq!(
        by_passphrase(None, PASS, Some(&id_a)),
        Err(NotConfirmed::NoProfile)
    );
    for wrong in [
        "correct horse batter",
        "Correct horse battery",
        " correct horse battery",
    ] {
        assert_eq!(
            by_passphrase(Some(&stored), wrong, Some(&id_a)),
            Err(NotConfirmed::Wrong),
            "{wrong}"
        );
    }
    // Another tab replaced the stored profile with another vault under the same passphrase:
    // it opens, but it is not the vault this page is unlocked on.
    assert_eq!(
        by_passphrase(Some(&stored), PASS, Some(&id_b)),
        Err(NotConfirmed::ChangedElsewhere)
    );
    for refusal in [
        NotConfirmed::Wrong,
        NotConfirmed::NoProfile,
        NotConfirmed::ChangedElsewhere,
    ] {
        assert!(refusal.to_string().ends_with("Nothing was done."));
    }
}

/// An assertion the device keyed by `label` makes for `challenge` at the wallet's origin, with
/// `count` as its signature counter (user present and verified), as a platform authenticator.
fn signed_assertion(label: &str, challenge: &[u8], count: u32) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    use base64::Engine;
    use p256::ecdsa::Signature;
    use p256::ecdsa::signature::Signer;
    let key = SigningKey::from_slice(&Sha256::digest(label.as_bytes())).unwrap();
    let client = format!(
        r#"{{"type":"webauthn.get","challenge":"{}","origin":"http://localhost:8080","crossOrigin":false}}"#,
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(challenge)
    )
    .into_bytes();
    let mut auth = Sha256::digest(b"localhost").to_vec();
    auth.push(0x05);
    auth.extend(count.to_be_bytes());
    let sig: Signature = key.sign(&[&auth[..], Sha256::digest(&client).as_slice()].concat());
    let raw = sig.to_bytes();
    let int = |b: &[u8]| {
        let mut v: Vec<u8> = b.iter().copied().skip_while(|&x| x == 0).collect();
        if v.first().is_none_or(|x| x & 0x80 != 0) {
            v.insert(0, 0);
        }
        [vec![0x02, v.len() as u8], v].concat()
    };
    let body = [int(&raw[..32]), int(&raw[32..])].concat();
    let der = [vec![0x30, body.len() as u8], body].concat();
    (client, auth, der)
}

#[test]
fn a_device_confirms_only_when_its_counter_advances_and_for_the_act_it_was_shown() {
    use tacit_protocol::webauthn::act_challenge;
    let grant = "Grant 2 of the 2 questions http://127.0.0.1:8081 asked, for 1 hour.";
    let release = "Release 2 of the 2 answers on the application to http://127.0.0.1:8081.";
    let fresh = [9u8; 32];
    let challenge = act_challenge(&fresh, grant);
    assert_ne!(challenge, act_challenge(&fresh, release));
    assert_ne!(challenge, act_challenge(&[8u8; 32], grant));
    let confirm = |device: &Device, count: u32, shown: &str, for_act: &str| {
        let (client, auth, der) =
            signed_assertion("counting", &act_challenge(&fresh, shown), count);
        device.confirm(
            &Assertion {
                credential_id: b"counting",
                client_data_json: &client,
                authenticator_data: &auth,
                signature_der: &der,
            },
            &act_challenge(&fresh, for_act),
            "http://localhost:8080",
            "localhost",
        )
    };
    let registered = a_device("counting");
    assert_eq!(registered.sign_count(), 0);
    // The first confirmation: counter 5, kept.
    let (confirmed, after) = confirm(&registered, 5, grant, grant).unwrap();
    assert_eq!(confirmed.by(), By::Device);
    assert_eq!(after.sign_count(), 5);
    // The same assertion again, a lagging copy of the key, or one that stopped counting: refused.
    for count in [5, 4, 0] {
        assert_eq!(
            confirm(&after, count, grant, grant).map(|(c, _)| c),
            Err(WebAuthnError::CounterNotAdvanced),
            "{count}"
        );
    }
    assert_eq!(confirm(&after, 6, grant, grant).unwrap().1.sign_count(), 6);
    // An authenticator without a counter says 0 every time: accepted.
    let (_, still) = confirm(&registered, 0, grant, grant).unwrap();
    assert_eq!(still.sign_count(), 0);
    assert!(confirm(&still, 0, grant, grant).is_ok());
    // An assertion the person gave for the grant's sentence confirms no release.
    assert_eq!(
        confirm(&after, 7, grant, release).map(|(c, _)| c),
        Err(WebAuthnError::WrongChallenge)
    );
    // The counter survives sealing with the vault.
    let v = vault(5);
    let record = sealed(&after, &v);
    let DeviceState::Ready(opened) = device(Some(&record), Some(&v), None) else {
        panic!("the record opens");
    };
    assert_eq!(opened.sign_count(), 5);
}
