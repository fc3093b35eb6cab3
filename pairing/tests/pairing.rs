//! Pairing a bridge with a vault, and the frames between them, tried as a relay in the middle,
//! a stranger and someone who learned the code would.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use proptest::prelude::*;
use tacit_pairing::{
    CodeError, FrameError, MailboxId, MailboxTag, Offer, Paired, PairingCode, PairingError, Role,
    Session, Start,
};

fn code() -> PairingCode {
    PairingCode::from_random([0x3a, 0x91, 0x07, 0xfe, 0x42])
}

fn mailbox() -> MailboxId {
    MailboxId::from_random([7; 16])
}

/// Runs the whole handshake; each side's result.
fn pair(
    bridge_code: &PairingCode,
    vault_code: &PairingCode,
    seeds: (u8, u8),
) -> (Result<Paired, PairingError>, Result<Paired, PairingError>) {
    let (bridge, to_vault) = Start::new(Role::Bridge, bridge_code, &mailbox(), [seeds.0; 32]);
    let (vault, to_bridge) = Start::new(Role::Vault, vault_code, &mailbox(), [seeds.1; 32]);
    let bridge = bridge.finish(&to_bridge).unwrap();
    let vault = vault.finish(&to_vault).unwrap();
    let (bridge_tag, vault_tag) = (bridge.tag(), vault.tag());
    (bridge.confirm(&vault_tag), vault.confirm(&bridge_tag))
}

/// One pairing for the tests that only need one (SPAKE2 is slow unoptimised).
fn paired() -> (Paired, Paired) {
    static PAIRED: std::sync::LazyLock<(Paired, Paired)> = std::sync::LazyLock::new(|| {
        let (b, v) = pair(&code(), &code(), (1, 2));
        (b.unwrap(), v.unwrap())
    });
    PAIRED.clone()
}

fn sessions(bridge: &Paired, vault: &Paired, nonces: ([u8; 16], [u8; 16])) -> (Session, Session) {
    (
        Session::new(bridge, &nonces.0, &nonces.1),
        Session::new(vault, &nonces.0, &nonces.1),
    )
}

#[test]
fn the_same_code_pairs_both_sides_and_both_show_one_fingerprint() {
    let (bridge, vault) = paired();
    assert_eq!(bridge.role(), Role::Bridge);
    assert_eq!(vault.role(), Role::Vault);
    assert_eq!(bridge.fingerprint(), vault.fingerprint());
    assert_eq!(bridge.route(), vault.route());
    assert_eq!(bridge.fingerprint().len(), 7, "{}", bridge.fingerprint());
    // Another handshake with the same code is another pairing.
    let (other, _) = pair(&code(), &code(), (3, 4));
    assert_ne!(other.unwrap().route(), bridge.route());
}

#[test]
fn a_wrong_code_fails_confirmation_on_both_sides() {
    let typo = PairingCode::from_random([0x3a, 0x91, 0x07, 0xfe, 0x43]);
    let (b, v) = pair(&code(), &typo, (1, 2));
    assert_eq!(b.unwrap_err(), PairingError::WrongCode);
    assert_eq!(v.unwrap_err(), PairingError::WrongCode);
}

#[test]
fn a_message_for_another_mailbox_or_from_the_same_role_does_not_pair() {
    // Two bridges (a relay reflecting the bridge's own message back): SPAKE2 refuses the side.
    let (bridge, to_vault) = Start::new(Role::Bridge, &code(), &mailbox(), [1; 32]);
    assert_eq!(
        bridge.finish(&to_vault).unwrap_err(),
        PairingError::BadMessage
    );
    // The vault's message made for another mailbox: keys differ, confirmation fails.
    let other = MailboxId::from_random([8; 16]);
    let (bridge, _) = Start::new(Role::Bridge, &code(), &mailbox(), [1; 32]);
    let (vault, _) = Start::new(Role::Vault, &code(), &other, [2; 32]);
    let (_, to_vault) = Start::new(Role::Bridge, &code(), &other, [5; 32]);
    let (_, to_bridge) = Start::new(Role::Vault, &code(), &other, [6; 32]);
    let bridge = bridge.finish(&to_bridge).unwrap();
    let vault = vault.finish(&to_vault).unwrap();
    let tag = vault.tag();
    assert_eq!(bridge.confirm(&tag).unwrap_err(), PairingError::WrongCode);
    // Damaged or empty messages and tags.
    let (bridge, _) = Start::new(Role::Bridge, &code(), &mailbox(), [1; 32]);
    assert_eq!(bridge.finish(&[]).unwrap_err(), PairingError::BadMessage);
    let (bridge, _) = Start::new(Role::Bridge, &code(), &mailbox(), [1; 32]);
    let (_, mut to_bridge) = Start::new(Role::Vault, &code(), &mailbox(), [2; 32]);
    to_bridge[0] = b'A';
    assert_eq!(
        bridge.finish(&to_bridge).unwrap_err(),
        PairingError::BadMessage
    );
    let (bridge, _) = Start::new(Role::Bridge, &code(), &mailbox(), [1; 32]);
    let (_, to_bridge) = Start::new(Role::Vault, &code(), &mailbox(), [2; 32]);
    let bridge = bridge.finish(&to_bridge).unwrap();
    assert_eq!(
        bridge.confirm(&[0; 31]).unwrap_err(),
        PairingError::WrongCode
    );
}

#[test]
fn a_relay_in_the_middle_who_guesses_the_code_wrong_learns_nothing_and_pairs_with_nobody() {
    // The relay runs its own handshake with each side under a guessed code.
    let guess = PairingCode::from_random([0, 0, 0, 0, 1]);
    let (bridge, to_vault) = Start::new(Role::Bridge, &code(), &mailbox(), [1; 32]);
    let (vault, to_bridge) = Start::new(Role::Vault, &code(), &mailbox(), [2; 32]);
    let (fake_vault, fake_to_bridge) = Start::new(Role::Vault, &guess, &mailbox(), [9; 32]);
    let (fake_bridge, fake_to_vault) = Start::new(Role::Bridge, &guess, &mailbox(), [8; 32]);
    let bridge = bridge.finish(&fake_to_bridge).unwrap();
    let vault = vault.finish(&fake_to_vault).unwrap();
    let fake_vault = fake_vault.finish(&to_vault).unwrap();
    let fake_bridge = fake_bridge.finish(&to_bridge).unwrap();
    // Each real side refuses the relay's tag; the relay refuses theirs (it cannot test a guess).
    assert_eq!(
        bridge.confirm(&fake_vault.tag()).unwrap_err(),
        PairingError::WrongCode
    );
    assert_eq!(
        vault.confirm(&fake_bridge.tag()).unwrap_err(),
        PairingError::WrongCode
    );
}

#[test]
fn frames_flow_in_order_both_ways_and_carry_no_plaintext() {
    let (b, v) = paired();
    let (mut bridge, mut vault) = sessions(&b, &v, ([1; 16], [2; 16]));
    assert_eq!(bridge.id(), vault.id());
    for i in 0..5u8 {
        let said = format!("call {i}: income_below 30000 EUR");
        let frame = bridge.seal(said.as_bytes()).unwrap();
        assert!(
            !frame.windows(6).any(|w| w == b"income"),
            "the relay sees plaintext"
        );
        assert_eq!(vault.open(&frame).unwrap().as_slice(), said.as_bytes());
        let answer = vault.seal(b"satisfied").unwrap();
        assert_eq!(bridge.open(&answer).unwrap().as_slice(), b"satisfied");
    }
    // A frame is not accepted back by its own sender (directions have their own keys).
    let frame = bridge.seal(b"x").unwrap();
    assert_eq!(bridge.open(&frame).unwrap_err(), FrameError::Forged);
    assert_eq!(vault.open(&frame).unwrap().as_slice(), b"x");
}

#[test]
fn replayed_reordered_forged_and_foreign_frames_are_refused_and_the_session_goes_on() {
    let (b, v) = paired();
    let (mut bridge, mut vault) = sessions(&b, &v, ([1; 16], [2; 16]));
    let first = bridge.seal(b"first").unwrap();
    let second = bridge.seal(b"second").unwrap();
    let third = bridge.seal(b"third").unwrap();
    // Reordered: the second before the first.
    assert_eq!(
        vault.open(&second).unwrap_err(),
        FrameError::OutOfOrder {
            expected: 0,
            got: 1
        }
    );
    assert_eq!(vault.open(&first).unwrap().as_slice(), b"first");
    // Replayed.
    assert_eq!(
        vault.open(&first).unwrap_err(),
        FrameError::Replayed {
            expected: 1,
            got: 0
        }
    );
    // A stranger's frame, a frame renumbered, truncated, empty.
    let (stranger_b, _) = pair(&code(), &code(), (5, 6));
    let mut stranger = Session::new(&stranger_b.unwrap(), &[1; 16], &[2; 16]);
    let _ = stranger.seal(b"zero").unwrap();
    let forged = stranger.seal(b"give me the income").unwrap();
    assert_eq!(vault.open(&forged).unwrap_err(), FrameError::Forged);
    let mut renumbered = third.clone();
    renumbered[7] = 1;
    assert_eq!(vault.open(&renumbered).unwrap_err(), FrameError::Forged);
    assert_eq!(vault.open(&second[..10]).unwrap_err(), FrameError::TooShort);
    assert_eq!(vault.open(&[]).unwrap_err(), FrameError::TooShort);
    // None of that moved the session: the genuine next frame opens.
    assert_eq!(vault.open(&second).unwrap().as_slice(), b"second");
    assert_eq!(vault.open(&third).unwrap().as_slice(), b"third");
    // A frame from an earlier connection of the same pairing (other nonces) is refused.
    let (mut old_bridge, _) = sessions(&b, &v, ([3; 16], [4; 16]));
    let old = old_bridge.seal(b"old").unwrap();
    let (_, mut fresh_vault) = sessions(&b, &v, ([5; 16], [6; 16]));
    assert_eq!(fresh_vault.open(&old).unwrap_err(), FrameError::Forged);
    // Too large, either way.
    assert_eq!(
        bridge
            .seal(&vec![0; tacit_pairing::MAX_FRAME + 1])
            .unwrap_err(),
        FrameError::TooLarge
    );
    assert!(bridge.seal(&vec![0; tacit_pairing::MAX_FRAME]).is_ok());
}

#[test]
fn whoever_learns_the_code_after_pairing_cannot_make_a_session_with_either_side() {
    let (b, v) = paired();
    // The code leaks. The thief pairs with itself under it (both roles), and tries to talk to
    // the real vault and the real bridge in a session with nonces of its choosing.
    let (thief_b, thief_v) = pair(&code(), &code(), (11, 12));
    let (thief_b, thief_v) = (thief_b.unwrap(), thief_v.unwrap());
    let nonces = ([1; 16], [2; 16]);
    let (mut real_bridge, mut real_vault) = sessions(&b, &v, nonces);
    let (mut as_bridge, mut as_vault) = sessions(&thief_b, &thief_v, nonces);
    let to_vault = as_bridge.seal(b"request_claims").unwrap();
    assert_eq!(real_vault.open(&to_vault).unwrap_err(), FrameError::Forged);
    let to_bridge = as_vault.seal(b"tools: income_below").unwrap();
    assert_eq!(
        real_bridge.open(&to_bridge).unwrap_err(),
        FrameError::Forged
    );
    assert_ne!(thief_b.route(), b.route());
}

#[test]
fn a_stored_pairing_reads_back_and_damage_is_refused() {
    let (b, v) = paired();
    let again = Paired::from_bytes(&v.to_bytes()).unwrap();
    assert_eq!(again.role(), Role::Vault);
    assert_eq!(again.fingerprint(), b.fingerprint());
    let (mut bridge, _) = sessions(&b, &v, ([1; 16], [2; 16]));
    let (_, mut vault) = sessions(&b, &again, ([1; 16], [2; 16]));
    assert_eq!(
        vault.open(&bridge.seal(b"hi").unwrap()).unwrap().as_slice(),
        b"hi"
    );
    for damaged in [&[][..], &[b'v'; 32][..], &[b'x'; 33][..], &[b'v'; 34][..]] {
        assert_eq!(
            Paired::from_bytes(damaged).unwrap_err(),
            PairingError::Damaged
        );
    }
}

#[test]
fn debug_prints_no_secret_and_no_code() {
    let (b, _) = paired();
    let secret_hex = tacit_pairing_secret_hex(&b);
    let printed = format!("{b:?} {:?}", code());
    assert!(!printed.contains(&secret_hex), "{printed}");
    assert!(!printed.contains(&code().display()[..4]), "{printed}");
    let (session, _) = sessions(&b, &b, ([1; 16], [2; 16]));
    assert!(!format!("{session:?}").contains(&secret_hex));
}

fn tacit_pairing_secret_hex(p: &Paired) -> String {
    p.to_bytes()[1..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_code_is_read_as_a_person_types_it() {
    let c = code();
    let shown = c.display();
    assert_eq!(shown.len(), 9);
    assert_eq!(&shown[4..5], "-");
    assert_eq!(PairingCode::parse(&shown).unwrap(), c);
    assert_eq!(
        PairingCode::parse(&shown.to_lowercase().replace('-', " ")).unwrap(),
        c
    );
    assert_eq!(
        PairingCode::parse("oooo-iiii").unwrap(),
        PairingCode::parse("0000-1111").unwrap()
    );
    assert_eq!(
        PairingCode::parse("LLLL 0000").unwrap(),
        PairingCode::parse("11110000").unwrap()
    );
    assert_eq!(PairingCode::parse("ABC").unwrap_err(), CodeError::Length);
    assert_eq!(
        PairingCode::parse("ABCD-EFGHJ").unwrap_err(),
        CodeError::Length
    );
    assert_eq!(
        PairingCode::parse("ABCD-EFGU").unwrap_err(),
        CodeError::Symbol('U')
    );
    assert_eq!(
        PairingCode::parse("ABCD-EFG\u{e9}").unwrap_err(),
        CodeError::Symbol('\u{e9}')
    );
}

#[test]
fn an_offer_round_trips_typed_and_as_a_uri_and_a_strange_one_is_refused_in_words() {
    let offer = Offer {
        relay: "http://127.0.0.1:8795".into(),
        mailbox: MailboxTag::from_random([1, 2, 3]),
        code: code(),
    };
    let typed = offer.typed();
    assert_eq!(typed.len(), 14, "{typed}");
    assert_eq!(
        Offer::parse_typed(&typed.to_lowercase(), "http://127.0.0.1:8795").unwrap(),
        offer
    );
    assert_eq!(
        Offer::parse_typed(&typed.replace('-', " "), "http://127.0.0.1:8795/").unwrap(),
        offer
    );
    let uri = offer.to_uri();
    assert_eq!(uri, format!("tacit-pair:v1/{typed}/http://127.0.0.1:8795"));
    assert_eq!(Offer::parse(&uri).unwrap(), offer);
    assert_eq!(Offer::parse(&format!("  {uri}/\n")).unwrap(), offer);
    // The mailbox is the tag's hash, the same for both sides, and another tag's is another.
    assert_eq!(offer.mailbox.id(), Offer::parse(&uri).unwrap().mailbox.id());
    assert_ne!(offer.mailbox.id(), MailboxTag::from_random([1, 2, 4]).id());
    let bad = |text: &str| Offer::parse(text).unwrap_err();
    assert_eq!(bad("https://evil.example/"), CodeError::NotAnOffer);
    assert_eq!(bad(&uri.replace(&typed, &typed[..12])), CodeError::Length);
    assert_eq!(
        bad(&uri.replace("http://127.0.0.1:8795", "ftp://x")),
        CodeError::Relay
    );
    assert_eq!(bad(&uri.replace("8795", "8795/path")), CodeError::Relay);
    assert_eq!(
        bad(&uri.replace("127.0.0.1", "user@127.0.0.1")),
        CodeError::Relay
    );
    assert!(
        CodeError::Length
            .to_string()
            .contains("12 letters and digits")
    );
    assert_eq!(MailboxId::parse("zz").unwrap_err(), CodeError::Mailbox);
}

proptest! {
    /// Any change to a genuine frame is refused, and the genuine frame still opens after.
    #[test]
    fn any_altered_frame_is_refused_and_harmless(
        body in proptest::collection::vec(any::<u8>(), 0..200),
        at in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let (b, v) = paired();
        let (mut bridge, mut vault) = sessions(&b, &v, ([1; 16], [2; 16]));
        let frame = bridge.seal(&body).unwrap();
        let mut altered = frame.clone();
        let i = at.index(altered.len());
        altered[i] ^= flip;
        prop_assert!(vault.open(&altered).is_err());
        let opened = vault.open(&frame).unwrap();
        prop_assert_eq!(opened.as_slice(), body.as_slice());
    }

    /// Every code shown reads back as itself; every 5 random bytes give a distinct code.
    #[test]
    fn codes_round_trip(bytes in any::<[u8; 5]>(), other in any::<[u8; 5]>()) {
        let c = PairingCode::from_random(bytes);
        prop_assert_eq!(PairingCode::parse(&c.display()).unwrap(), c.clone());
        prop_assert_eq!(bytes == other, c == PairingCode::from_random(other));
    }
}
