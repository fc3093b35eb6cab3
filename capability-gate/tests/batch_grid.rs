//! Issue 28, items 2 and 3, in the wallet: a batch must be on the issuers' daily grid (`iat` at
//! midnight UTC of the day it arrives, `exp` 30 days later) and signed with the issuer's current
//! key (the first it publishes), or it is refused whole; an age predicate that the typed date of
//! birth says a birthday may have turned since its credential's `iat` is no longer used, and a
//! new batch is due at once.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use capability_gate::credentials::{
    CREDENTIAL_VALIDITY_MS, CredentialError, Credentials, IssuerInfo, TakeError,
};
use p256::ecdsa::SigningKey;
use serde_json::{Map, Value, json};
use tacit_protocol::request_auth::{InstallKey, Jwk};
use tacit_protocol::sd_jwt::{self, IssuedClaims, IssuerKey, Jwks};
use tacit_testkit::fixtures::{T0, today};
use wallet_core::{Attribute, Claim, Origin, Profile, ProfileInput, Timestamp};

const REGISTRY: &str = "http://127.0.0.1:8792";
const AGE_VCT: &str = "https://tacit.example/vct/age";
const DAY: i64 = 24 * 60 * 60 * 1000;
/// Midnight UTC of T0's day (2026-11-29).
const ISSUED: i64 = T0 - T0 % DAY;

fn at(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms)
}

fn registry() -> Origin {
    Origin::parse(REGISTRY).unwrap()
}

fn info() -> IssuerInfo {
    IssuerInfo {
        origin: registry(),
        name: "Civil Registry Nordstadt".into(),
        attribute: Attribute::Age,
        vct: AGE_VCT.into(),
    }
}

fn key(n: u8) -> SigningKey {
    SigningKey::from_slice(&[n; 32]).unwrap()
}

/// The registry's published keys: `(kid, key)`, current first.
fn jwks(keys: &[(&str, u8)]) -> Jwks {
    Jwks::new(
        keys.iter()
            .map(|(kid, n)| IssuerKey {
                kid: (*kid).to_owned(),
                key: *key(*n).verifying_key(),
            })
            .collect(),
    )
    .unwrap()
}

fn holder_jwk(n: u8) -> Jwk {
    InstallKey::from_verifying_key(*key(n).verifying_key()).to_jwk()
}

/// A batch for holder keys `first..first + count`, every credential saying `age` years, signed
/// with key `(kid, n)`, with `iat` and `exp` as given.
#[allow(clippy::too_many_arguments)]
fn batch(signer: (&str, u8), age: u8, iat: i64, exp: i64, first: u8, count: u8) -> Vec<String> {
    let ages: Vec<(String, Value)> = [16u8, 18, 21, 65]
        .iter()
        .map(|&y| (format!("age_equal_or_over_{y}"), json!(age >= y)))
        .collect();
    (first..first + count)
        .map(|h| {
            let salts: Vec<[u8; 16]> = (0..ages.len())
                .map(|j| {
                    let mut salt = [h; 16];
                    salt[0] = u8::try_from(j).unwrap();
                    salt
                })
                .collect();
            sd_jwt::issue(
                &key(signer.1),
                signer.0,
                &IssuedClaims {
                    iss: REGISTRY.into(),
                    vct: AGE_VCT.into(),
                    iat: at(iat),
                    exp: at(exp),
                    cnf_jwk: holder_jwk(h),
                    plain: Map::new(),
                },
                &ages,
                &salts,
            )
            .unwrap()
        })
        .collect()
}

fn answer(credentials: &[String]) -> Vec<u8> {
    json!({ "credentials": credentials, "refresh_token": "r".repeat(43), "issuer": REGISTRY, "vct": AGE_VCT })
        .to_string()
        .into_bytes()
}

fn deliver(
    credentials: &mut Credentials,
    keys: &Jwks,
    batch: &[String],
    first: u8,
    now: i64,
) -> Result<usize, CredentialError> {
    let sent: Vec<Jwk> = (first..first + u8::try_from(batch.len()).unwrap())
        .map(holder_jwk)
        .collect();
    credentials.accept_batch(&info(), keys, &answer(batch), &sent, at(now))
}

fn one_key() -> Jwks {
    jwks(&[("registry-2", 7)])
}

#[test]
fn a_batch_off_the_daily_grid_is_refused_whole() {
    let exp = ISSUED + CREDENTIAL_VALIDITY_MS;
    let cases = [
        // Issued at the very second of the request (what the issuer used to do).
        (T0 - 5_000, T0 - 5_000 + CREDENTIAL_VALIDITY_MS),
        // Midnight, but valid until a birthday (the old age rule).
        (ISSUED, ISSUED + 3 * DAY),
        // Midnight, a second longer.
        (ISSUED, exp + 1_000),
        // Yesterday's grid, today: another day's batch could single the person out.
        (ISSUED - DAY, ISSUED - DAY + CREDENTIAL_VALIDITY_MS),
    ];
    for (iat, exp) in cases {
        let mut credentials = Credentials::new();
        let err = deliver(
            &mut credentials,
            &one_key(),
            &batch(("registry-2", 7), 40, iat, exp, 1, 3),
            1,
            T0,
        )
        .unwrap_err();
        assert_eq!(err, CredentialError::OffGrid { index: 0 }, "{iat} {exp}");
        assert!(credentials.is_empty());
    }
    // On the grid: kept. Also just after midnight with yesterday's grid (a clock a few
    // seconds apart), and not a minute and a half later.
    let mut credentials = Credentials::new();
    let good = batch(("registry-2", 7), 40, ISSUED, exp, 1, 3);
    assert_eq!(deliver(&mut credentials, &one_key(), &good, 1, T0), Ok(3));
    let mut credentials = Credentials::new();
    let tomorrow = ISSUED + DAY;
    assert_eq!(
        deliver(&mut credentials, &one_key(), &good, 1, tomorrow + 30_000),
        Ok(3)
    );
    let mut credentials = Credentials::new();
    assert_eq!(
        deliver(&mut credentials, &one_key(), &good, 1, tomorrow + 90_000),
        Err(CredentialError::OffGrid { index: 0 })
    );
}

#[test]
fn a_batch_under_a_key_other_than_the_current_one_is_refused() {
    let exp = ISSUED + CREDENTIAL_VALIDITY_MS;
    // The registry rotated: registry-2 is current (first), registry-1 retired (still published
    // so that what it signed keeps verifying).
    let keys = jwks(&[("registry-2", 7), ("registry-1", 6)]);
    let mut credentials = Credentials::new();
    let old = batch(("registry-1", 6), 40, ISSUED, exp, 1, 2);
    assert_eq!(
        deliver(&mut credentials, &keys, &old, 1, T0),
        Err(CredentialError::NotCurrentKey { index: 0 })
    );
    assert!(credentials.is_empty());
    let current = batch(("registry-2", 7), 40, ISSUED, exp, 1, 2);
    assert_eq!(deliver(&mut credentials, &keys, &current, 1, T0), Ok(2));
}

/// The person's typed profile, born on `birth` (`YYYY-MM-DD`).
fn typed(birth: &str) -> Profile {
    Profile::new(
        &ProfileInput::new(2_840_000, "EUR", birth, "nordhafen", ["asthma"]),
        today(),
    )
    .unwrap()
}

fn age(years: u8) -> Claim {
    Claim::age_at_least(years).unwrap()
}

#[test]
fn an_age_predicate_a_birthday_may_have_turned_is_dropped_and_refilled() {
    // Issued 2026-11-29: 17 years old. The typed date says 18 on 2026-12-02.
    let exp = ISSUED + CREDENTIAL_VALIDITY_MS;
    let keys = one_key();
    let mut credentials = Credentials::new();
    let first = batch(("registry-2", 7), 17, ISSUED, exp, 1, 5);
    deliver(&mut credentials, &keys, &first, 1, T0).unwrap();
    let person = typed("2008-12-02");
    let person = Some(&person);
    let day_before = at(ISSUED + 2 * DAY + 12 * 3_600_000); // 2026-12-01T12:00Z
    let birthday = at(ISSUED + 3 * DAY); // 2026-12-02T00:00Z
    let registry = registry();

    // The day before the birthday the credential answers, "not 18".
    assert_eq!(
        credentials.answer_typed(&age(18), day_before, person),
        Some((false, registry.clone()))
    );
    assert!(!credentials.needs_refill_typed(&registry, day_before, person));
    assert!(credentials.refills_due(day_before, person).is_empty());

    // From the birthday on, "not 18" may be stale: not answered, not presented, refill due.
    assert_eq!(credentials.answer_typed(&age(18), birthday, person), None);
    // Only that predicate: "not 21" has not turned.
    assert_eq!(
        credentials.answer_typed(&age(21), birthday, person),
        Some((false, registry.clone()))
    );
    let mut taken = credentials.clone();
    assert_eq!(
        taken
            .take_for_typed(&registry, &age(18), false, birthday, person)
            .map(|p| p.disclosure),
        Err(TakeError::NoneLeft)
    );
    assert_eq!(taken, credentials, "nothing was marked used");
    assert!(credentials.needs_refill_typed(&registry, birthday, person));
    assert_eq!(credentials.refills_due(birthday, person).len(), 1);
    assert_eq!(credentials.refills_due(birthday, person)[0], registry);
    // A `true` never turns: "at least 16" is still the registry's word.
    assert_eq!(
        credentials.answer_typed(&age(16), birthday, person),
        Some((true, registry.clone()))
    );
    assert!(
        credentials
            .take_for_typed(&registry, &age(16), true, birthday, person)
            .is_ok()
    );
    // Without the typed profile the wallet cannot tell: the credential stands until its exp.
    assert_eq!(
        credentials.answer(&age(18), birthday),
        Some((false, registry.clone()))
    );
    // Someone the typed date says turns 18 later: nothing turned.
    let later = typed("2008-12-20");
    assert_eq!(
        credentials.answer_typed(&age(18), birthday, Some(&later)),
        Some((false, registry.clone()))
    );
    assert!(!credentials.needs_refill_typed(&registry, birthday, Some(&later)));

    // The refill: today's batch says 18; it replaces the old one, and nothing is due.
    let today = ISSUED + 3 * DAY;
    let second = batch(
        ("registry-2", 7),
        18,
        today,
        today + CREDENTIAL_VALIDITY_MS,
        20,
        5,
    );
    let now = at(today + 9 * 3_600_000);
    deliver(&mut credentials, &keys, &second, 20, now.millis()).unwrap();
    assert_eq!(credentials.left(&registry, now), 5);
    assert_eq!(
        credentials.answer_typed(&age(18), now, person),
        Some((true, registry.clone()))
    );
    assert!(!credentials.needs_refill_typed(&registry, now, person));
    assert!(credentials.refills_due(now, person).is_empty());
}

#[test]
fn a_refill_that_says_the_same_does_not_refill_again() {
    // The typed date is off by a week from the registry's record: on the typed birthday the
    // old batch counts as stale, a new one (still "not 18") is fetched, and then no more.
    let exp = ISSUED + CREDENTIAL_VALIDITY_MS;
    let keys = one_key();
    let mut credentials = Credentials::new();
    deliver(
        &mut credentials,
        &keys,
        &batch(("registry-2", 7), 17, ISSUED, exp, 1, 5),
        1,
        T0,
    )
    .unwrap();
    let person = typed("2008-12-02");
    let person = Some(&person);
    let registry = registry();
    let day = ISSUED + 3 * DAY;
    let now = at(day + 3_600_000);
    assert!(credentials.needs_refill_typed(&registry, now, person));
    deliver(
        &mut credentials,
        &keys,
        &batch(
            ("registry-2", 7),
            17,
            day,
            day + CREDENTIAL_VALIDITY_MS,
            20,
            5,
        ),
        20,
        now.millis(),
    )
    .unwrap();
    assert!(!credentials.needs_refill_typed(&registry, now, person));
    // The new batch answers (the registry's word, issued after the typed birthday).
    assert_eq!(
        credentials.answer_typed(&age(18), now, person),
        Some((false, registry.clone()))
    );
    let picked = credentials
        .take_for_typed(&registry, &age(18), false, now, person)
        .unwrap();
    let stored = &credentials.issuers()[0].credentials();
    let used = stored
        .iter()
        .find(|c| c.holder_key_id() == picked.holder_key_id)
        .unwrap();
    assert_eq!(used.iat(), Some(at(day)), "picked from the new batch");
}

#[test]
fn credentials_kept_before_iat_was_stored_still_read() {
    let exp = ISSUED + CREDENTIAL_VALIDITY_MS;
    let mut credentials = Credentials::new();
    deliver(
        &mut credentials,
        &one_key(),
        &batch(("registry-2", 7), 17, ISSUED, exp, 1, 3),
        1,
        T0,
    )
    .unwrap();
    let mut json: Value = serde_json::from_str(&credentials.to_json()).unwrap();
    for c in json["issuers"][0]["credentials"].as_array_mut().unwrap() {
        assert_eq!(c["iat"], json!(ISSUED));
        c.as_object_mut().unwrap().remove("iat");
    }
    let old = Credentials::from_json(&json.to_string()).unwrap();
    let person = typed("2008-12-02");
    assert_eq!(
        old.issuers()[0].credentials()[0].iat(),
        Some(at(ISSUED)),
        "read from the credential"
    );
    assert!(old.needs_refill_typed(&registry(), at(ISSUED + 3 * DAY), Some(&person)));
}
