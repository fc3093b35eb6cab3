//! Item 4: the disclosure ledger, and adversaries that try to beat its floors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::collections::BTreeSet;

use common::{arb_input, profile, today};
use proptest::prelude::*;
use time::{Date, Duration};
use wallet_core::catalogue::{CONDITIONS, DISTRICTS};
use wallet_core::profile::MAX_INCOME_MINOR;
use wallet_core::{
    Assessment, Claim, ClaimKind, ConditionCode, Currency, DisclosureLedger, DistrictId, Floors,
    Money, Outcome, Profile, age_cutoff,
};

fn eur(amount_minor: u64) -> Money {
    Money {
        amount_minor,
        currency: Currency::parse("EUR").unwrap(),
    }
}

fn below(amount_minor: u64) -> Claim {
    Claim::income_below(eur(amount_minor)).unwrap()
}

fn districts(codes: &[&str]) -> Claim {
    Claim::resides_in(codes.iter().map(|c| DistrictId::parse(c).unwrap())).unwrap()
}

fn none_of(codes: &[&str]) -> Claim {
    Claim::has_none_of(codes.iter().map(|c| ConditionCode::parse(c).unwrap())).unwrap()
}

/// `kind`'s example claim from the catalogue.
fn example(kind: ClaimKind) -> Claim {
    serde_json::from_str(kind.example()).unwrap()
}

#[test]
fn ledger_income_floor_declines_narrow_bands() {
    let p = profile(); // 28,400.00 EUR
    let mut ledger = DisclosureLedger::default();
    assert_eq!(
        ledger.answer(&p, &below(3_000_000), today()).outcome,
        Outcome::Satisfied
    );
    // [0, 30,000): asking 27,000 would leave [27,000, 30,000), 3,000 wide < 5,000.
    assert_eq!(
        ledger.assess(&below(2_700_000), today()),
        Assessment::Decline
    );
    assert_eq!(
        ledger.answer(&p, &below(2_700_000), today()).outcome,
        Outcome::Declined
    );
    // 25,000 leaves 5,000 on both sides: allowed.
    assert_eq!(
        ledger.answer(&p, &below(2_500_000), today()).outcome,
        Outcome::NotSatisfied
    );
    assert_eq!(ledger.income_interval(), (2_500_000, 3_000_000));
    // Nothing more can be asked inside the band.
    for limit in (2_500_001..3_000_000).step_by(1_000) {
        assert_eq!(ledger.assess(&below(limit), today()), Assessment::Decline);
    }
}

#[test]
fn ledger_decision_ignores_the_secret() {
    // `assess` takes no profile at all; the ledger's state is a function of the questions and the
    // outcomes. Replaying outcomes without the profile rebuilds the same ledger.
    // The questions: some of each kind, then every kind's example (so a kind added to the
    // catalogue is asked here too).
    let p = profile();
    let mut questions = vec![
        below(3_000_000),
        below(2_500_000),
        Claim::age_at_least(18).unwrap(),
        districts(&["altstadt", "nordhafen", "westend"]),
        none_of(&["asthma", "pregnancy"]),
    ];
    questions.extend(ClaimKind::ALL.map(example));
    let mut live = DisclosureLedger::default();
    let mut replay = DisclosureLedger::default();
    for q in &questions {
        let answer = live.answer(&p, q, today());
        if !answer.from_memory {
            replay.record(q, today(), answer.outcome);
        }
        assert_eq!(live, replay);
    }
    assert_eq!(
        DisclosureLedger::default().assess(&below(400_000), today()),
        Assessment::Decline,
        "a first question under the floor is declined whatever the income"
    );
}

#[test]
fn ledger_repeats_cost_nothing_new() {
    let p = profile();
    let mut ledger = DisclosureLedger::default();
    let first = ledger.answer(&p, &below(3_000_000), today());
    assert!(!first.from_memory);
    let bits = ledger.bits_released(today());
    let again = ledger.answer(&p, &below(3_000_000), today());
    assert_eq!(
        (again.outcome, again.from_memory),
        (Outcome::Satisfied, true)
    );
    // A looser question is implied too.
    let looser = ledger.answer(&p, &below(5_000_000), today());
    assert_eq!(
        (looser.outcome, looser.from_memory),
        (Outcome::Satisfied, true)
    );
    assert_eq!(ledger.bits_released(today()), bits);
}

#[test]
fn ledger_other_currency_is_invalid() {
    let p = profile();
    let mut ledger = DisclosureLedger::default();
    let usd = Claim::income_below(Money {
        amount_minor: 3_000_000,
        currency: Currency::parse("USD").unwrap(),
    })
    .unwrap();
    assert_eq!(ledger.answer(&p, &usd, today()).outcome, Outcome::Invalid);
    assert_eq!(
        ledger.assess(&usd, today()),
        Assessment::Known(Outcome::Invalid)
    );
    ledger.answer(&p, &below(3_000_000), today());
    assert_eq!(ledger.income_interval(), (0, 3_000_000));
}

#[test]
fn ledger_age_band_at_least_one_year() {
    let p = profile(); // born 1990-02-28
    let mut ledger = DisclosureLedger::default();
    let adult = Claim::age_at_least(18).unwrap();
    assert_eq!(
        ledger.answer(&p, &adult, today()).outcome,
        Outcome::Satisfied
    );
    // Tomorrow the same question is implied.
    let tomorrow = today() + Duration::days(1);
    assert_eq!(
        ledger.assess(&adult, tomorrow),
        Assessment::Known(Outcome::Satisfied)
    );
    let thirty_six = Claim::age_at_least(36).unwrap();
    assert_eq!(
        ledger.answer(&p, &thirty_six, today()).outcome,
        Outcome::Satisfied
    );
    assert_eq!(
        ledger
            .answer(&p, &Claim::age_at_least(37).unwrap(), today())
            .outcome,
        Outcome::NotSatisfied
    );
    // Now the birth date is known to a year; asking on another day would split it.
    let later = today() + Duration::days(100);
    assert_eq!(
        ledger.assess(&Claim::age_at_least(37).unwrap(), later),
        Assessment::Decline
    );
    let (lo, hi) = ledger.dob_bounds(today());
    assert!((hi - lo).whole_days() + 1 >= 365);
}

#[test]
fn ledger_districts_keep_three_candidates() {
    let p = profile(); // nordhafen
    let mut ledger = DisclosureLedger::default();
    let three = districts(&["altstadt", "nordhafen", "westend"]);
    assert_eq!(
        ledger.answer(&p, &three, today()).outcome,
        Outcome::Satisfied
    );
    assert_eq!(ledger.district_candidates().len(), 3);
    assert_eq!(
        ledger.assess(&districts(&["nordhafen"]), today()),
        Assessment::Decline
    );
    assert_eq!(
        ledger.assess(
            &districts(&["altstadt", "nordhafen", "westend", "kronwald"]),
            today()
        ),
        Assessment::Known(Outcome::Satisfied)
    );
    assert_eq!(
        ledger.assess(&districts(&["kronwald"]), today()),
        Assessment::Known(Outcome::NotSatisfied)
    );
    // A two-district question on a fresh ledger is declined: "yes" would leave 2 candidates.
    assert_eq!(
        DisclosureLedger::default().assess(&districts(&["altstadt", "westend"]), today()),
        Assessment::Decline
    );
}

#[test]
fn ledger_conditions_never_single_out() {
    let p = profile(); // asthma
    let mut ledger = DisclosureLedger::default();
    // A single-condition question could single out the condition: declined.
    assert_eq!(
        ledger.assess(&none_of(&["asthma"]), today()),
        Assessment::Decline
    );
    assert_eq!(
        ledger
            .answer(&p, &none_of(&["asthma", "pregnancy"]), today())
            .outcome,
        Outcome::NotSatisfied
    );
    // Clearing pregnancy would single out asthma: declined, and so is any set that clears it.
    assert_eq!(
        ledger.assess(&none_of(&["pregnancy", "epilepsy"]), today()),
        Assessment::Decline
    );
    assert_eq!(
        ledger.assess(&none_of(&["pregnancy"]), today()),
        Assessment::Decline
    );
    // A superset of the positive set is implied.
    assert_eq!(
        ledger.assess(&none_of(&["asthma", "pregnancy", "epilepsy"]), today()),
        Assessment::Known(Outcome::NotSatisfied)
    );
    // Unrelated sets of two or more are fine.
    assert_eq!(
        ledger
            .answer(&p, &none_of(&["epilepsy", "diabetes"]), today())
            .outcome,
        Outcome::Satisfied
    );
}

#[test]
fn ledger_reports_bits_released() {
    let p = profile();
    let mut ledger = DisclosureLedger::default();
    assert_eq!(ledger.bits_released(today()).income, 0.0);
    let preview = ledger.preview(&below(50_000_000), today());
    assert_eq!(preview.assessment, Assessment::Evaluate);
    // 1e11 / 5e7 = 2000 times narrower: log2(2000) ≈ 10.97 bits.
    assert!(preview.bits_if_satisfied > 10.9 && preview.bits_if_satisfied < 11.0);
    assert_eq!(preview.bits_now, 0.0);
    ledger.answer(&p, &below(50_000_000), today());
    let bits = ledger.bits_released(today());
    assert!((bits.income - (MAX_INCOME_MINOR as f64 / 50_000_000.0).log2()).abs() < 1e-9);
    ledger.answer(
        &p,
        &districts(&["altstadt", "nordhafen", "westend"]),
        today(),
    );
    assert!((ledger.bits_released(today()).district - 2.0).abs() < 1e-9);
    ledger.answer(&p, &none_of(&["pregnancy", "epilepsy"]), today());
    assert!((ledger.bits_released(today()).conditions - 2.0_f64.log2() * 2.0).abs() < 1e-9);
}

#[test]
fn ledger_survives_serialization() {
    let mut ledger = DisclosureLedger::default();
    ledger.answer(&profile(), &below(3_000_000), today());
    // Something remembered about every kind in the catalogue.
    for kind in ClaimKind::ALL {
        ledger.answer(&profile(), &example(kind), today());
    }
    let json = serde_json::to_string(&ledger).unwrap();
    assert_eq!(
        serde_json::from_str::<DisclosureLedger>(&json).unwrap(),
        ledger
    );
}

/// Random floors for the floors the adversaries below attack; any other floor (one added with a
/// later claim kind) keeps its default until a test here attacks it.
#[allow(clippy::needless_update)] // needed as soon as `Floors` gains a field
fn arb_floors() -> impl Strategy<Value = Floors> {
    (1u64..5_000_000, 1i64..2_000, 1usize..5, 2usize..4).prop_map(|(i, a, d, c)| Floors {
        income_band_minor: i,
        age_band_days: a,
        district_candidates: d,
        condition_candidates: c,
        ..Floors::default()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A binary-search adversary, with random detours when declined, never learns an income
    /// interval narrower than the floor; and every answer it gets is true.
    #[test]
    fn ledger_income_adversary_never_beats_the_floor(
        input in arb_input(), floors in arb_floors(), detours in proptest::collection::vec(0.0f64..1.0, 64)
    ) {
        let p = Profile::new(&input, today()).unwrap();
        let income = p.income().amount_minor;
        let mut ledger = DisclosureLedger::new(floors);
        let (mut lo, mut hi) = (0u64, MAX_INCOME_MINOR);
        let mut detour = detours.iter().cycle();
        for round in 0..200 {
            let mid = if round % 2 == 0 { lo + (hi - lo) / 2 } else {
                lo + ((hi - lo) as f64 * detour.next().unwrap()) as u64
            };
            if mid == 0 { continue; }
            match ledger.answer(&p, &below(mid), today()).outcome {
                Outcome::Satisfied => hi = hi.min(mid),
                Outcome::NotSatisfied => lo = lo.max(mid),
                Outcome::Declined => {}
                Outcome::Invalid => prop_assert!(false, "same currency is never invalid"),
            }
            prop_assert!(lo <= income && income < hi, "an answer was false");
            prop_assert!(hi - lo >= floors.income_band_minor, "learned [{lo}, {hi}) under the floor");
        }
    }

    /// An adversary asking age thresholds on many different days, aiming at the birthday.
    #[test]
    fn ledger_age_adversary_never_beats_the_floor(
        input in arb_input(), floors in arb_floors(), probes in proptest::collection::vec((0i64..3650, 0.0f64..1.0), 1..120)
    ) {
        let p = Profile::new(&input, today()).unwrap();
        let dob = p.date_of_birth();
        let mut probes = probes;
        probes.sort_by_key(|(wait, _)| *wait); // time flows forward
        let mut ledger = DisclosureLedger::new(floors);
        // What the adversary knows: the public prior (born at most 130 years before the profile
        // was made, and by the first day it asks) and the answers.
        let mut lo: Date = wallet_core::profile::earliest_birth_date(today());
        let mut hi: Date = today() + Duration::days(probes[0].0);
        for (wait, aim) in probes {
            let day = today() + Duration::days(wait);
            hi = hi.min(day);
            // Aim a cutoff inside the current interval: choose the years that put it there.
            let target = lo + Duration::days(((hi - lo).whole_days() as f64 * aim) as i64);
            let years = (day.year() - target.year()).clamp(1, 130) as u8;
            let claim = Claim::age_at_least(years).unwrap();
            let cutoff = age_cutoff(day, years);
            match ledger.answer(&p, &claim, day).outcome {
                Outcome::Satisfied => hi = hi.min(cutoff),
                Outcome::NotSatisfied => lo = lo.max(cutoff + Duration::days(1)),
                Outcome::Declined => {}
                Outcome::Invalid => prop_assert!(false),
            }
            prop_assert!(lo <= dob && dob <= hi, "an answer was false");
            prop_assert!((hi - lo).whole_days() + 1 >= floors.age_band_days, "learned {lo}..{hi}");
        }
    }

    /// Random district and condition questions never narrow below their floors.
    #[test]
    fn ledger_set_adversary_never_beats_the_floor(
        input in arb_input(), floors in arb_floors(),
        questions in proptest::collection::vec((any::<bool>(), any::<u16>()), 1..60)
    ) {
        let p = Profile::new(&input, today()).unwrap();
        let mut ledger = DisclosureLedger::new(floors);
        let all_districts: Vec<DistrictId> = DISTRICTS.iter().map(|d| DistrictId::parse(d.code).unwrap()).collect();
        let all_conditions: Vec<ConditionCode> = CONDITIONS.iter().map(|c| ConditionCode::parse(c.code).unwrap()).collect();
        let mut candidates: BTreeSet<DistrictId> = all_districts.iter().cloned().collect();
        // Condition sets consistent with answers, as bit masks over the catalogue.
        let mut consistent: Vec<u16> = (0..(1u16 << all_conditions.len())).collect();
        for (about_district, bits) in questions {
            if about_district {
                let set: Vec<_> = all_districts.iter().enumerate().filter(|(i, _)| bits & (1 << i) != 0).map(|(_, d)| d.clone()).collect();
                if set.is_empty() { continue; }
                let claim = Claim::resides_in(set.clone()).unwrap();
                match ledger.answer(&p, &claim, today()).outcome {
                    Outcome::Satisfied => candidates.retain(|d| set.contains(d)),
                    Outcome::NotSatisfied => candidates.retain(|d| !set.contains(d)),
                    _ => {}
                }
                prop_assert!(candidates.contains(p.district()));
                prop_assert!(candidates.len() >= floors.district_candidates.min(DISTRICTS.len()));
            } else {
                let mask = bits & ((1 << all_conditions.len()) - 1);
                if mask == 0 { continue; }
                let set: Vec<_> = all_conditions.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, c)| c.clone()).collect();
                let claim = Claim::has_none_of(set).unwrap();
                match ledger.answer(&p, &claim, today()).outcome {
                    Outcome::Satisfied => consistent.retain(|s| s & mask == 0),
                    Outcome::NotSatisfied => consistent.retain(|s| s & mask != 0),
                    _ => {}
                }
                let held: u16 = all_conditions.iter().enumerate().filter(|(_, c)| p.conditions().contains(*c)).fold(0, |m, (i, _)| m | (1 << i));
                prop_assert!(consistent.contains(&held), "an answer was false");
                // No condition is singled out: for each code, some consistent set lacks it.
                for i in 0..all_conditions.len() {
                    prop_assert!(consistent.iter().any(|s| s & (1 << i) == 0), "condition {i} singled out");
                }
            }
        }
    }
}

// ----- answer_from: the ledger decides, whoever evaluates -------------------------------------

#[test]
fn ledger_answer_from_records_what_the_evaluator_says() {
    // The evaluator is not the profile: an issuer's credential says "not below 30,000.00"
    // although the typed profile (28,400.00) would say otherwise. The ledger remembers the
    // evaluator's answer.
    let mut ledger = DisclosureLedger::default();
    let mut calls = 0;
    let answer = ledger.answer_from(&below(3_000_000), today(), || {
        calls += 1;
        Outcome::NotSatisfied
    });
    assert_eq!(calls, 1);
    assert_eq!(answer.outcome, Outcome::NotSatisfied);
    assert!(!answer.from_memory);
    assert_eq!(ledger.income_interval(), (3_000_000, MAX_INCOME_MINOR));
    // The same answer as `answer` with the profile gives, when the evaluator is the profile.
    let p = profile();
    let mut a = DisclosureLedger::default();
    let mut b = DisclosureLedger::default();
    for limit in [3_000_000, 2_000_000, 2_500_000, 9_000_000] {
        let via_profile = a.answer(&p, &below(limit), today());
        let via_closure = b.answer_from(&below(limit), today(), || {
            Outcome::from_bool(
                wallet_core::evaluate(&p, &below(limit), today())
                    .unwrap()
                    .satisfied,
            )
        });
        assert_eq!(via_profile, via_closure, "{limit}");
    }
    assert_eq!(a, b);
}

#[test]
fn ledger_answer_from_never_asks_when_memory_answers_or_a_floor_declines() {
    let mut ledger = DisclosureLedger::default();
    ledger.answer_from(&below(3_000_000), today(), || Outcome::Satisfied);
    // Known: 35,000.00 follows from "below 30,000.00".
    let known = ledger.answer_from(&below(3_500_000), today(), || {
        panic!("asked a known answer")
    });
    assert_eq!(known.outcome, Outcome::Satisfied);
    assert!(known.from_memory);
    // Declined: 27,500.00 would leave a band of 2,500.00.
    let before = ledger.clone();
    let declined = ledger.answer_from(&below(2_750_000), today(), || {
        panic!("asked below the floor")
    });
    assert_eq!(declined.outcome, Outcome::Declined);
    assert_eq!(ledger, before, "a declined question records nothing");
}

#[test]
fn ledger_answer_from_an_evaluator_refusal_records_nothing() {
    let mut ledger = DisclosureLedger::default();
    let before = ledger.clone();
    let answer = ledger.answer_from(&below(3_000_000), today(), || Outcome::Declined);
    assert_eq!(answer.outcome, Outcome::Declined);
    assert_eq!(ledger, before);
    // Invalid is remembered as for the profile (the currency is not the person's).
    let answer = ledger.answer_from(&below(3_000_000), today(), || Outcome::Invalid);
    assert_eq!(answer.outcome, Outcome::Invalid);
    assert_eq!(
        ledger.assess(&below(3_000_000), today()),
        Assessment::Known(Outcome::Invalid)
    );
}
