//! Per-operation errors: for every family, a caller's exhaustive `match` (no `_` arm, so a new
//! variant fails to compile here first), every variant produced by a real failure of the
//! operations that document it, the messages people and agents see, and `?` into the umbrella
//! [`Error`].

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::collections::BTreeSet;

use common::{input, profile, today};
use ed25519_dalek::SigningKey;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use tacit_testkit::fixtures::{MINUTE, key_set, payload};
use wallet_core::claim::Unaskable;
use wallet_core::format::Record;
use wallet_core::profile::parse_date;
use wallet_core::receipt::{RECEIPT_VERSION, sign, verify};
use wallet_core::store::{MemoryFloors, StoredVault, next_generation, next_profile_generation};
use wallet_core::{
    ChainBroken, Claim, ClaimError, ComparisonLog, Currency, DisclosureLedger, Envelope,
    EnvelopeError, Error, Field, GrantId, Hash, KdfParams, KeySet, LogError, MalformedReceipt,
    Money, NewerFormat, Nonce, OpenError, Origin, Outcome, Passphrase, Profile, ProfileError,
    ReceiptPayload, SealError, SignableError, SignedReceipt, StaleWrite, StoreError,
    StructureError, TextError, Timestamp, ToolName, Vault, VaultError, VerifyError, WeakPassphrase,
    evaluate, verify_entries,
};

const PASS: &str = "correct horse battery staple";

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

fn pass() -> Passphrase {
    Passphrase::new(PASS.to_owned()).unwrap()
}

fn site() -> Origin {
    Origin::parse("https://housing.example").unwrap()
}

fn nonce() -> Nonce {
    Nonce::parse("n-1").unwrap()
}

fn at(ms: i64) -> Timestamp {
    Timestamp::from_millis(1_795_953_600_000 + ms)
}

fn a_log(n: usize) -> ComparisonLog {
    let mut log = ComparisonLog::new();
    for i in 0..n {
        log.append(
            at(i as i64),
            site(),
            ToolName::parse("claim.age").unwrap(),
            Claim::age_at_least(18).unwrap(),
            Outcome::Satisfied,
            GrantId::parse(&format!("g{i}")).unwrap(),
            None,
        );
    }
    log
}

// The callers: one exhaustive match per family. Adding a variant breaks these first.

fn claim_case(e: ClaimError) -> &'static str {
    match e {
        ClaimError::Invalid(_) => "invalid",
        ClaimError::NotAskable(_) => "not askable",
    }
}

fn log_case(e: LogError) -> &'static str {
    match e {
        LogError::Import { line: _, reason: _ } => "import",
        LogError::ChainBroken(ChainBroken { index: _ }) => "chain",
    }
}

fn structure_case(e: StructureError) -> &'static str {
    match e {
        StructureError::Malformed(MalformedReceipt(_)) => "malformed",
        StructureError::ChainBroken(ChainBroken { index: _ }) => "chain",
    }
}

fn signable_case(e: SignableError) -> &'static str {
    match e {
        SignableError::Malformed(MalformedReceipt(_)) => "malformed",
        SignableError::ChainBroken(ChainBroken { index: _ }) => "chain",
        SignableError::Expired => "expired",
        SignableError::IssuedAtOutOfRange => "issued_at",
    }
}

fn verify_case(e: VerifyError) -> &'static str {
    match e {
        VerifyError::UnknownKey => "unknown key",
        VerifyError::BadSignature => "bad signature",
        VerifyError::Malformed(MalformedReceipt(_)) => "malformed",
        VerifyError::ChainBroken(ChainBroken { index: _ }) => "chain",
        VerifyError::AudienceMismatch => "audience",
        VerifyError::NonceMismatch => "nonce",
        VerifyError::NotYetValid => "not yet valid",
        VerifyError::Expired => "expired",
        VerifyError::Revoked => "revoked",
    }
}

fn vault_case(e: VaultError) -> &'static str {
    match e {
        VaultError::WeakKdfParams(_) => "weak",
        VaultError::KdfParamsTooCostly(_) => "costly",
        VaultError::Seal(SealError(_)) => "seal",
    }
}

fn open_case(e: OpenError) -> &'static str {
    match e {
        OpenError::CannotOpen => "cannot open",
        OpenError::NewerFormat(NewerFormat {
            record: _,
            found: _,
            known: _,
        }) => "newer",
    }
}

fn store_case(e: StoreError) -> &'static str {
    match e {
        StoreError::Format(_) => "format",
        StoreError::Envelope(EnvelopeError(_)) => "envelope",
        StoreError::Seal(SealError(_)) => "seal",
        StoreError::MemoryUnreadable => "memory",
        StoreError::NewerFormat(_) => "newer",
    }
}

fn umbrella_case(e: &Error) -> &'static str {
    match e {
        Error::Text(TextError {
            field: _,
            reason: _,
        }) => "text",
        Error::Profile(ProfileError {
            field: _,
            reason: _,
        }) => "profile",
        Error::Claim(e) => claim_case(*e),
        Error::Chain(ChainBroken { index: _ }) => "chain",
        Error::Log(e) => log_case(*e),
        Error::Receipt(MalformedReceipt(_)) => "malformed",
        Error::Structure(e) => structure_case(*e),
        Error::Signable(e) => signable_case(*e),
        Error::Verify(e) => verify_case(*e),
        Error::Passphrase(WeakPassphrase(_)) => "weak passphrase",
        Error::Envelope(EnvelopeError(_)) => "envelope",
        Error::Seal(SealError(_)) => "seal",
        Error::Vault(e) => vault_case(*e),
        Error::Open(e) => open_case(*e),
        Error::Store(e) => store_case(*e),
        Error::StaleWrite(StaleWrite) => "stale",
    }
}

fn all<const N: usize>(names: [&'static str; N]) -> BTreeSet<&'static str> {
    names.into_iter().collect()
}

#[test]
fn text_errors_name_the_field() {
    let refused = [
        (Origin::parse("ftp://x").unwrap_err(), "origin"),
        (Origin::parse("").unwrap_err(), "origin"),
        (Nonce::parse("a b").unwrap_err(), "nonce"),
        (GrantId::parse("g.1").unwrap_err(), "grant_id"),
        (ToolName::parse("").unwrap_err(), "tool"),
        (Hash::try_from("00".to_owned()).unwrap_err(), "hash"),
    ];
    for (TextError { field, reason }, expected) in refused {
        assert_eq!(field, expected, "{reason}");
    }
    assert_eq!(
        Origin::parse("ftp://x").unwrap_err(),
        TextError {
            field: "origin",
            reason: "must start with http:// or https://"
        }
    );
}

#[test]
fn profile_errors_name_the_field() {
    let refused = |edit: fn(&mut wallet_core::ProfileInput)| {
        let mut i = input();
        edit(&mut i);
        Profile::new(&i, today()).unwrap_err()
    };
    assert_eq!(
        refused(|i| i.income_minor = -1),
        ProfileError {
            field: Field::Income,
            reason: "must not be negative"
        }
    );
    assert_eq!(
        refused(|i| i.currency = "XXX".into()).field,
        Field::Currency
    );
    assert_eq!(
        refused(|i| i.district = "atlantis".into()).field,
        Field::District
    );
    assert_eq!(
        refused(|i| i.conditions = vec!["asthma".into(), "asthma".into()]).field,
        Field::Conditions
    );
    assert_eq!(
        parse_date("29.02.1990").unwrap_err().field,
        Field::DateOfBirth
    );
    // `edited` is `new` and fails the same way.
    let mut i = input();
    i.date_of_birth = "2999-01-01".into();
    assert_eq!(
        profile().edited(&i, today()).unwrap_err(),
        ProfileError {
            field: Field::DateOfBirth,
            reason: "must not be in the future"
        }
    );
}

#[test]
fn claim_errors_are_invalid_when_made_and_currency_mismatch_when_evaluated() {
    let made = [
        Claim::age_at_least(0).unwrap_err(),
        Claim::age_at_least(131).unwrap_err(),
        Claim::resides_in([]).unwrap_err(),
        Claim::has_none_of([]).unwrap_err(),
        Claim::income_below(Money {
            amount_minor: 0,
            currency: Currency::parse("EUR").unwrap(),
        })
        .unwrap_err(),
        Claim::parse_canonical("resides_in atlantis").unwrap_err(),
        Claim::parse_canonical("age_at_least 018").unwrap_err(),
    ];
    for e in made {
        assert_eq!(claim_case(e), "invalid", "{e:?}");
    }
    assert_eq!(
        Claim::parse_canonical("resides_in atlantis"),
        Err(ClaimError::Invalid("not a canonical claim"))
    );

    let usd = Claim::income_below(Money {
        amount_minor: 5_000_000,
        currency: Currency::parse("USD").unwrap(),
    })
    .unwrap();
    assert_eq!(
        evaluate(&profile(), &usd, today()).unwrap_err(),
        ClaimError::NotAskable(Unaskable::CurrencyMismatch)
    );
}

#[test]
fn log_errors_are_chain_breaks_or_import_lines() {
    let log = a_log(3);
    let mut entries = log.entries().to_vec();
    entries[1].outcome = Outcome::NotSatisfied;
    assert_eq!(verify_entries(&entries), Err(ChainBroken { index: 1 }));
    assert_eq!(
        ComparisonLog::from_entries(entries).unwrap_err(),
        ChainBroken { index: 1 }
    );
    assert_eq!(
        log.verify_with_head(Hash::ZERO),
        Err(ChainBroken { index: 3 })
    );

    let export = log.export();
    let mut seen = BTreeSet::new();
    for (text, expected) in [
        (String::new(), "import"),
        ("tacit-comparison-log v2\n".to_owned(), "import"),
        (
            export.replacen("\tsatisfied", "\tnot_satisfied", 1),
            "chain",
        ),
    ] {
        let e = ComparisonLog::import(&text).unwrap_err();
        assert_eq!(log_case(e), expected, "{text:?}: {e}");
        seen.insert(log_case(e));
    }
    assert_eq!(seen, all(["import", "chain"]));
    assert_eq!(
        ComparisonLog::import_bytes(b"\xff\n"),
        Err(LogError::Import {
            line: 1,
            reason: "not UTF-8"
        })
    );
}

#[test]
fn receipt_errors_per_operation_cover_every_variant() {
    let key = SigningKey::from_bytes(&[7; 32]);
    let keys = key_set(&[&key], at(0));
    let claim = Claim::age_at_least(18).unwrap();
    let good = payload(&site(), &nonce(), &[(claim, Outcome::Satisfied)], at(0));

    // Parsing.
    assert_eq!(
        SignedReceipt::parse(b"{}"),
        Err(MalformedReceipt("not a valid signed receipt"))
    );
    assert_eq!(
        KeySet::parse(b"[]"),
        Err(MalformedReceipt("not a valid key set"))
    );

    // Structure.
    let mut other_version = good.clone();
    other_version.version = RECEIPT_VERSION + 1;
    let mut cut = good.clone();
    cut.entries.clear();
    let mut seen = BTreeSet::new();
    for (p, expected) in [(&other_version, "malformed"), (&cut, "chain")] {
        seen.insert(structure_case(p.check_structure().unwrap_err()));
        assert_eq!(structure_case(p.check_structure().unwrap_err()), expected);
    }
    assert_eq!(seen, all(["malformed", "chain"]));
    assert_eq!(
        cut.check_structure(),
        Err(StructureError::ChainBroken(ChainBroken { index: 0 }))
    );
    let refused = ReceiptPayload::new(
        good.session_id.clone(),
        site(),
        nonce(),
        at(0),
        at(0),
        &a_log(1),
    );
    assert_eq!(
        refused,
        Err(StructureError::Malformed(MalformedReceipt(
            "expires_at must be after issued_at"
        )))
    );

    // Signing.
    let mut seen = BTreeSet::new();
    for (p, now, expected) in [
        (&other_version, at(0), "malformed"),
        (&cut, at(0), "chain"),
        (&good, at(15 * MINUTE), "expired"),
        (&good, at(3 * MINUTE), "issued_at"),
    ] {
        let e = p.check_signable(now).unwrap_err();
        assert_eq!(signable_case(e), expected, "{e}");
        seen.insert(signable_case(e));
    }
    assert_eq!(seen, all(["malformed", "chain", "expired", "issued_at"]));
    assert_eq!(good.check_signable(at(MINUTE)), Ok(()));

    // Verifying: every variant from one real failure each.
    let signed = sign(good.clone(), &key, at(0));
    let check = |s: &SignedReceipt, keys: &KeySet, aud: &Origin, n: &Nonce, now| {
        verify(s, keys, aud, n, now).map(|_| ()).unwrap_err()
    };
    let mut bad_signature = signed.clone();
    bad_signature.signature = "00".repeat(64);
    let elsewhere = Origin::parse("https://pharmacy.example").unwrap();
    let other_nonce = Nonce::parse("n-2").unwrap();
    let cases = [
        (
            check(&signed, &KeySet::default(), &site(), &nonce(), at(1)),
            "unknown key",
        ),
        (
            check(&bad_signature, &keys, &site(), &nonce(), at(1)),
            "bad signature",
        ),
        (
            check(
                &sign(other_version.clone(), &key, at(0)),
                &keys,
                &site(),
                &nonce(),
                at(1),
            ),
            "malformed",
        ),
        (
            check(
                &sign(cut.clone(), &key, at(0)),
                &keys,
                &site(),
                &nonce(),
                at(1),
            ),
            "chain",
        ),
        (
            check(&signed, &keys, &elsewhere, &nonce(), at(1)),
            "audience",
        ),
        (check(&signed, &keys, &site(), &other_nonce, at(1)), "nonce"),
        (
            check(&signed, &keys, &site(), &nonce(), at(-1)),
            "not yet valid",
        ),
        (
            check(&signed, &keys, &site(), &nonce(), at(15 * MINUTE)),
            "expired",
        ),
    ];
    let mut seen = BTreeSet::new();
    for (e, expected) in cases {
        assert_eq!(verify_case(e), expected, "{e}");
        seen.insert(verify_case(e));
    }
    assert_eq!(
        seen,
        all([
            "unknown key",
            "bad signature",
            "malformed",
            "chain",
            "audience",
            "nonce",
            "not yet valid",
            "expired",
        ])
    );
    assert!(verify(&signed, &keys, &site(), &nonce(), at(1)).is_ok());
}

#[test]
fn vault_errors_per_operation_cover_every_variant() {
    assert_eq!(
        Passphrase::new("short".to_owned()).unwrap_err(),
        WeakPassphrase("shorter than 8 characters")
    );

    // Envelope::parse says what is malformed; opening the same bytes says nothing.
    assert_eq!(
        Envelope::parse(b"TACITVL").unwrap_err(),
        EnvelopeError("truncated")
    );
    assert_eq!(
        Envelope::parse(&[0u8; 200]).unwrap_err(),
        EnvelopeError("not a Tacit vault")
    );
    assert_eq!(
        Vault::open(&[0u8; 200], &pass()).unwrap_err(),
        OpenError::CannotOpen
    );

    let weak = KdfParams {
        t: 1,
        ..KdfParams::MINIMUM
    };
    let costly = KdfParams {
        t: 11,
        ..KdfParams::MINIMUM
    };
    assert_eq!(
        weak.check_for_create(),
        Err(VaultError::WeakKdfParams("fewer than 2 passes"))
    );
    assert_eq!(
        costly.check_for_create(),
        Err(VaultError::KdfParamsTooCostly("more than 10 passes"))
    );
    let made = Vault::create(&profile(), &pass(), weak, &mut rng(1)).unwrap_err();
    assert_eq!(vault_case(made), "weak");
    let made = Vault::create(&profile(), &pass(), costly, &mut rng(1)).unwrap_err();
    assert_eq!(vault_case(made), "costly");
    assert_eq!(
        vault_case(VaultError::from(SealError("x"))),
        "seal",
        "a seal failure is a vault error"
    );

    let mut vault = Vault::create(&profile(), &pass(), KdfParams::MINIMUM, &mut rng(1)).unwrap();
    let bytes = vault.to_bytes();
    let wrong = Passphrase::new("not the passphrase".to_owned()).unwrap();
    assert_eq!(
        Vault::open(&bytes, &wrong).unwrap_err(),
        OpenError::CannotOpen
    );
    assert_eq!(
        Vault::unlock(&bytes, &wrong).unwrap_err(),
        OpenError::CannotOpen
    );
    assert_eq!(
        vault.change_passphrase(&pass(), weak, &mut rng(2)),
        Err(VaultError::WeakKdfParams("fewer than 2 passes"))
    );
    let sealed = vault.seal_aux("memory", b"data", &mut rng(3)).unwrap();
    assert_eq!(
        vault.open_aux("other", &sealed).unwrap_err(),
        OpenError::CannotOpen
    );
    assert_eq!(
        open_case(vault.open_aux("memory", &sealed[..5]).unwrap_err()),
        "cannot open"
    );
    assert!(vault.reseal(&profile(), &mut rng(4)).is_ok());
}

#[test]
fn store_errors_per_operation_cover_every_variant() {
    let vault = Vault::create(&profile(), &pass(), KdfParams::MINIMUM, &mut rng(1)).unwrap();
    let other = Vault::create(&profile(), &pass(), KdfParams::MINIMUM, &mut rng(2)).unwrap();
    let ledger = DisclosureLedger::default();
    let mut seen = BTreeSet::new();
    let mut note = |e: StoreError, expected: &str| {
        assert_eq!(store_case(e), expected, "{e}");
        seen.insert(store_case(e));
    };

    note(StoredVault::decode("nonsense").unwrap_err(), "format");
    assert_eq!(
        StoredVault::decode("nonsense").unwrap_err(),
        StoreError::Format("not a Tacit profile record")
    );
    note(MemoryFloors::decode("[").unwrap_err(), "format");
    note(
        StoredVault::new(1, b"not a vault").vault_id().unwrap_err(),
        "envelope",
    );
    note(
        StoredVault::sealed_with_envelope(1, &other.to_bytes(), &vault, &ledger, &mut rng(3))
            .unwrap_err(),
        "format",
    );
    // A used vault whose memory is gone: fail closed.
    let bare = StoredVault::new(2, &vault.to_bytes());
    note(
        bare.open_memory(&vault, Some(1), None).unwrap_err(),
        "memory",
    );
    // The memory of another vault will not open with this one.
    let foreign = StoredVault::sealed(2, &other, &ledger, &mut rng(4)).unwrap();
    let mut mixed = StoredVault::new(2, &vault.to_bytes());
    mixed.memory = foreign.memory;
    note(mixed.open_memory(&vault, None, None).unwrap_err(), "memory");
    // Seal and NewerFormat come from the vault's and the memory's own errors.
    note(StoreError::from(SealError("x")), "seal");
    note(
        StoreError::from(NewerFormat {
            record: Record::Memory,
            found: 9,
            known: 2,
        }),
        "newer",
    );
    assert_eq!(seen, all(["format", "envelope", "seal", "memory", "newer"]));

    assert_eq!(next_generation(Some(4), Some(3)), Err(StaleWrite));
    assert_eq!(next_profile_generation(Some(&bare), None), Err(StaleWrite));
}

/// A caller that really mixes operations uses `?` into the umbrella, and sees the family's
/// message unchanged.
#[test]
fn every_family_converts_into_the_umbrella_with_its_message() {
    fn mixed(text: &str) -> Result<Claim, Error> {
        let origin = Origin::parse(text)?;
        let log = ComparisonLog::import(origin.as_str())?;
        log.verify()?;
        Ok(Claim::age_at_least(0)?)
    }
    let e = mixed("nowhere").unwrap_err();
    assert_eq!(umbrella_case(&e), "text");
    let e = mixed("https://a.example").unwrap_err();
    assert_eq!(umbrella_case(&e), "import");

    let families: Vec<(Error, &str)> = vec![
        (Origin::parse("").unwrap_err().into(), "text"),
        (parse_date("never").unwrap_err().into(), "profile"),
        (
            ClaimError::from(Unaskable::CurrencyMismatch).into(),
            "not askable",
        ),
        (ChainBroken { index: 2 }.into(), "chain"),
        (
            LogError::Import {
                line: 1,
                reason: "r",
            }
            .into(),
            "import",
        ),
        (MalformedReceipt("r").into(), "malformed"),
        (
            StructureError::from(ChainBroken { index: 0 }).into(),
            "chain",
        ),
        (SignableError::Expired.into(), "expired"),
        (VerifyError::NonceMismatch.into(), "nonce"),
        (WeakPassphrase("r").into(), "weak passphrase"),
        (EnvelopeError("r").into(), "envelope"),
        (SealError("r").into(), "seal"),
        (VaultError::KdfParamsTooCostly("r").into(), "costly"),
        (OpenError::CannotOpen.into(), "cannot open"),
        (StoreError::MemoryUnreadable.into(), "memory"),
        (StaleWrite.into(), "stale"),
    ];
    for (e, expected) in &families {
        assert_eq!(umbrella_case(e), *expected, "{e:?}");
    }
    // The umbrella says exactly what the family says.
    let open: Error = OpenError::CannotOpen.into();
    assert_eq!(open.to_string(), OpenError::CannotOpen.to_string());
}

/// The messages people and agents see, variant by variant: the split kept every one.
#[test]
fn messages_are_the_ones_people_and_agents_see() {
    let newer = NewerFormat {
        record: Record::Profile,
        found: 3,
        known: 2,
    };
    let text = TextError {
        field: "origin",
        reason: "must be 1 to 256 characters",
    };
    let profile = ProfileError {
        field: Field::Income,
        reason: "must not be negative",
    };
    let import = LogError::Import {
        line: 2,
        reason: "invalid outcome",
    };
    let said: [&dyn std::fmt::Display; 32] = [
        &text,
        &profile,
        &ClaimError::Invalid("age threshold must be between 1 and 130 years"),
        &ClaimError::NotAskable(Unaskable::CurrencyMismatch),
        &ChainBroken { index: 4 },
        &import,
        &LogError::from(ChainBroken { index: 1 }),
        &MalformedReceipt("receipt too large"),
        &StructureError::from(MalformedReceipt("x")),
        &SignableError::Expired,
        &SignableError::IssuedAtOutOfRange,
        &SignableError::from(StructureError::from(ChainBroken { index: 0 })),
        &VerifyError::UnknownKey,
        &VerifyError::BadSignature,
        &VerifyError::from(MalformedReceipt("x")),
        &VerifyError::AudienceMismatch,
        &VerifyError::NonceMismatch,
        &VerifyError::NotYetValid,
        &VerifyError::Expired,
        &VerifyError::Revoked,
        &WeakPassphrase("shorter than 8 characters"),
        &EnvelopeError("truncated"),
        &SealError("key derivation failed"),
        &VaultError::WeakKdfParams("fewer than 2 passes"),
        &VaultError::KdfParamsTooCostly("more than 10 passes"),
        &VaultError::from(SealError("x")),
        &OpenError::CannotOpen,
        &OpenError::NewerFormat(newer),
        &StoreError::Format("envelope is not hex"),
        &StoreError::from(EnvelopeError("truncated")),
        &StoreError::MemoryUnreadable,
        &StaleWrite,
    ];
    let expected = "\
log field origin: must be 1 to 256 characters
income: must not be negative
invalid claim: age threshold must be between 1 and 130 years
invalid claim: the limit's currency differs from the profile's; amounts are never converted
log chain broken at entry 4
log import failed at line 2: invalid outcome
log chain broken at entry 1
receipt malformed: receipt too large
receipt malformed: x
receipt expired
receipt issued_at is more than two minutes from the signer's clock
log chain broken at entry 0
receipt signed by an unknown key
receipt signature does not verify
receipt malformed: x
receipt audience does not match
receipt nonce does not match
receipt not yet valid
receipt expired
receipt revoked by its signer
passphrase too weak: shorter than 8 characters
vault envelope malformed: truncated
the vault could not be sealed: key derivation failed
vault parameters too weak: fewer than 2 passes
vault parameters above what opening allows: more than 10 passes
the vault could not be sealed: x
the passphrase is wrong or the vault is damaged
this profile was made by a newer Tacit (format 3; this version reads up to format 2); update \
Tacit to open it. Nothing was changed.
stored profile record malformed: envelope is not hex
vault envelope malformed: truncated
the disclosure memory stored with this profile is missing, damaged or older than the last one \
saved here; the wallet will not answer from a fresh memory
the profile was changed in another tab or window; reload before saving";
    let said: Vec<String> = said.iter().map(ToString::to_string).collect();
    assert_eq!(said.join("\n"), expected);
}
