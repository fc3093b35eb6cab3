//! Issue 12: the disclosure memory is a join-semilattice. Merging copies (tabs, restored
//! backups, stale records) gives what both know and never lets a probe sequence narrow what is
//! known below the floors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::collections::BTreeSet;

use common::{arb_input, profile, today};
use proptest::prelude::*;
use wallet_core::catalogue::{CONDITIONS, DISTRICTS};
use wallet_core::profile::MAX_INCOME_MINOR;
use wallet_core::{
    Attribute, Claim, ClaimKind, ConditionCode, Currency, DisclosureLedger, DistrictId, Floors,
    Money, Outcome, Profile,
};

fn below(amount_minor: u64) -> Claim {
    Claim::income_below(Money {
        amount_minor,
        currency: Currency::parse("EUR").unwrap(),
    })
    .unwrap()
}

fn none_of(codes: &[&str]) -> Claim {
    Claim::has_none_of(codes.iter().map(|c| ConditionCode::parse(c).unwrap())).unwrap()
}

fn pregnant() -> Profile {
    let mut input = common::input();
    input.conditions = vec!["pregnancy".into()];
    Profile::new(&input, today()).unwrap()
}

/// One probe of the mixed adversary: income limit, district mask, condition mask, age, or the
/// example claim of any kind in the catalogue (so a kind added later is probed here too).
#[derive(Debug, Clone)]
enum Probe {
    Income(u64),
    Districts(u16),
    Conditions(u16),
    Age(u8),
    Example(ClaimKind),
}

fn arb_probe() -> impl Strategy<Value = Probe> {
    prop_oneof![
        (1u64..MAX_INCOME_MINOR / 1000).prop_map(Probe::Income),
        any::<u16>().prop_map(Probe::Districts),
        any::<u16>().prop_map(Probe::Conditions),
        (1u8..100).prop_map(Probe::Age),
        proptest::sample::select(ClaimKind::ALL.to_vec()).prop_map(Probe::Example),
    ]
}

fn all_districts() -> Vec<DistrictId> {
    DISTRICTS
        .iter()
        .map(|d| DistrictId::parse(d.code).unwrap())
        .collect()
}

fn all_conditions() -> Vec<ConditionCode> {
    CONDITIONS
        .iter()
        .map(|c| ConditionCode::parse(c.code).unwrap())
        .collect()
}

fn claim_of(probe: &Probe) -> Option<Claim> {
    match probe {
        Probe::Income(l) => Some(below(*l)),
        Probe::Age(y) => Some(Claim::age_at_least(*y).unwrap()),
        Probe::Example(kind) => Some(serde_json::from_str(kind.example()).unwrap()),
        Probe::Districts(bits) => {
            let set: Vec<_> = all_districts()
                .into_iter()
                .enumerate()
                .filter(|(i, _)| bits & (1 << i) != 0)
                .map(|(_, d)| d)
                .collect();
            (!set.is_empty()).then(|| Claim::resides_in(set).unwrap())
        }
        Probe::Conditions(bits) => {
            let mask = bits & ((1 << CONDITIONS.len()) - 1);
            let set: Vec<_> = all_conditions()
                .into_iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, c)| c)
                .collect();
            (!set.is_empty()).then(|| Claim::has_none_of(set).unwrap())
        }
    }
}

/// A ledger reached by answering `probes` for `p`, with an optional reset of one attribute
/// half-way (a profile edit).
fn ledger_after(
    p: &Profile,
    floors: Floors,
    probes: &[Probe],
    reset: Option<u8>,
) -> DisclosureLedger {
    let mut ledger = DisclosureLedger::new(floors);
    for (i, probe) in probes.iter().enumerate() {
        if i == probes.len() / 2
            && let Some(r) = reset
        {
            ledger.reset(Attribute::ALL[usize::from(r) % Attribute::ALL.len()]);
        }
        if let Some(claim) = claim_of(probe) {
            ledger.answer(p, &claim, today());
        }
    }
    ledger
}

/// What the adversary has learned from every answer any copy gave.
struct Adversary {
    income: (u64, u64),
    districts: BTreeSet<DistrictId>,
    conditions: Vec<u16>,
}

impl Adversary {
    fn new() -> Self {
        Self {
            income: (0, MAX_INCOME_MINOR),
            districts: all_districts().into_iter().collect(),
            conditions: (0..(1u16 << CONDITIONS.len())).collect(),
        }
    }

    /// Learns from every answer to `claim`, whichever probe asked it. Only the income,
    /// district and condition floors are tracked here; the age floor (and any floor a later
    /// kind adds) is attacked in `ledger.rs`.
    fn learn(&mut self, claim: &Claim, outcome: Outcome) {
        let yes = match outcome {
            Outcome::Satisfied => true,
            Outcome::NotSatisfied => false,
            _ => return,
        };
        match claim {
            Claim::IncomeBelow { limit } if yes => {
                self.income.1 = self.income.1.min(limit.amount_minor);
            }
            Claim::IncomeBelow { limit } => self.income.0 = self.income.0.max(limit.amount_minor),
            Claim::ResidesIn { districts } => {
                self.districts.retain(|d| districts.contains(d) == yes)
            }
            Claim::HasNoneOf { conditions } => {
                let mask = all_conditions()
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| conditions.contains(*c))
                    .fold(0u16, |m, (i, _)| m | (1 << i));
                self.conditions.retain(|s| (s & mask == 0) == yes);
            }
            _ => {}
        }
    }

    fn check(&self, floors: Floors) -> Result<(), TestCaseError> {
        prop_assert!(
            self.income.1 - self.income.0 >= floors.income_band_minor,
            "income learned to {:?}",
            self.income
        );
        prop_assert!(self.districts.len() >= floors.district_candidates.min(DISTRICTS.len()));
        for i in 0..CONDITIONS.len() {
            prop_assert!(
                self.conditions.iter().any(|s| s & (1 << i) == 0),
                "condition {i} singled out"
            );
        }
        Ok(())
    }
}

/// Random income, district and condition floors; every other floor (age, and any a later kind
/// adds) at its default.
fn arb_floors() -> impl Strategy<Value = Floors> {
    (1u64..5_000_000, 1usize..5, 2usize..4).prop_map(|(i, d, c)| Floors {
        income_band_minor: i,
        district_candidates: d,
        condition_candidates: c,
        ..Floors::default()
    })
}

fn arb_ledger() -> impl Strategy<Value = DisclosureLedger> {
    (
        arb_input(),
        arb_floors(),
        proptest::collection::vec(arb_probe(), 0..24),
        proptest::option::of(0u8..8),
    )
        .prop_map(|(input, floors, probes, reset)| {
            let p = Profile::new(&input, today()).unwrap();
            ledger_after(&p, floors, &probes, reset)
        })
}

#[test]
fn memory_second_copy_cannot_answer_what_the_first_declines() {
    let p = pregnant();
    let wide = none_of(&["anticoagulant-therapy", "liver-disease", "pregnancy"]);
    let narrow = none_of(&["anticoagulant-therapy", "liver-disease"]);
    let mut first = DisclosureLedger::default();
    assert_eq!(
        first.answer(&p, &wide, today()).outcome,
        Outcome::NotSatisfied
    );
    assert_eq!(
        first.answer(&p, &narrow, today()).outcome,
        Outcome::Declined
    );

    // A fresh copy (second tab, deleted memory) would answer, and single out pregnancy.
    let fresh = DisclosureLedger::default();
    assert_eq!(
        fresh.clone().answer(&p, &narrow, today()).outcome,
        Outcome::Satisfied
    );
    // Merged with what the first copy knows, it declines, whichever side merges.
    for mut merged in [
        DisclosureLedger::merge(&fresh, &first),
        DisclosureLedger::merge(&first, &fresh),
    ] {
        assert_eq!(
            merged.answer(&p, &narrow, today()).outcome,
            Outcome::Declined
        );
    }

    // An unrelated edit (income) resets income only: the condition memory stays.
    let mut edited = first.clone();
    edited.reset(Attribute::Income);
    assert_eq!(
        edited.answer(&p, &narrow, today()).outcome,
        Outcome::Declined
    );
    // Resetting conditions does forget them, and the newer epoch wins over the old copy.
    let mut reset = first.clone();
    reset.reset(Attribute::Conditions);
    assert_eq!(DisclosureLedger::merge(&first, &reset), reset);
}

#[test]
fn memory_reset_touches_one_attribute_only() {
    let p = profile();
    let mut ledger = DisclosureLedger::default();
    ledger.answer(&p, &below(3_000_000), today());
    ledger.answer(&p, &none_of(&["asthma", "pregnancy"]), today());
    let before = ledger.clone();
    ledger.reset(Attribute::Income);
    assert_eq!(ledger.income_interval(), (0, MAX_INCOME_MINOR));
    assert_eq!(ledger.epochs().income, 1);
    let mut back = ledger.clone();
    back.reset(Attribute::Income);
    assert_eq!(back.epochs().income, 2);
    // Everything else is as it was.
    let mut restored = ledger.clone();
    restored.merge_from(&before);
    assert_eq!(
        restored, ledger,
        "an older copy cannot bring back the reset attribute"
    );
    assert_eq!(ledger.conditions_some_of(), before.conditions_some_of());
}

#[test]
fn memory_ledgers_stored_before_epochs_still_read() {
    let p = profile();
    let mut ledger = DisclosureLedger::default();
    ledger.answer(&p, &below(3_000_000), today());
    let mut json: serde_json::Value = serde_json::to_value(&ledger).unwrap();
    json.as_object_mut().unwrap().remove("epochs");
    let old: DisclosureLedger = serde_json::from_value(json).unwrap();
    assert_eq!(old, ledger);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn memory_merge_is_commutative(a in arb_ledger(), b in arb_ledger()) {
        prop_assert_eq!(DisclosureLedger::merge(&a, &b), DisclosureLedger::merge(&b, &a));
    }

    #[test]
    fn memory_merge_is_associative(a in arb_ledger(), b in arb_ledger(), c in arb_ledger()) {
        let left = DisclosureLedger::merge(&DisclosureLedger::merge(&a, &b), &c);
        let right = DisclosureLedger::merge(&a, &DisclosureLedger::merge(&b, &c));
        prop_assert_eq!(left, right);
    }

    #[test]
    fn memory_merge_is_idempotent(a in arb_ledger(), b in arb_ledger()) {
        prop_assert_eq!(DisclosureLedger::merge(&a, &a), a.clone());
        let ab = DisclosureLedger::merge(&a, &b);
        prop_assert_eq!(DisclosureLedger::merge(&ab, &b), ab.clone());
    }

    /// Every older copy of a ledger (a stale tab, a restored record or backup) merged back in,
    /// in any order, changes nothing: memory only grows.
    #[test]
    fn memory_older_copies_change_nothing(
        input in arb_input(), floors in arb_floors(),
        probes in proptest::collection::vec(arb_probe(), 1..40),
        order in proptest::collection::vec(any::<prop::sample::Index>(), 0..40)
    ) {
        let p = Profile::new(&input, today()).unwrap();
        let mut ledger = DisclosureLedger::new(floors);
        let mut snapshots = vec![ledger.clone()];
        for probe in &probes {
            if let Some(claim) = claim_of(probe) {
                ledger.answer(&p, &claim, today());
            }
            snapshots.push(ledger.clone());
        }
        let latest = ledger.clone();
        for i in order {
            ledger.merge_from(&snapshots[i.index(snapshots.len())]);
        }
        prop_assert_eq!(ledger, latest);
    }

    /// Several copies (tabs) answer in any interleaving, each merging the shared record before
    /// it answers and merging its answer back after (read-merge-write), while stale copies are
    /// merged into random copies in any order: the adversary, who hears every answer from every
    /// copy, never learns past a floor, and every answer is true.
    #[test]
    fn memory_tabs_never_beat_the_floors(
        input in arb_input(), floors in arb_floors(),
        steps in proptest::collection::vec(
            (0usize..3, arb_probe(), proptest::option::of(any::<prop::sample::Index>())), 1..80)
    ) {
        let p = Profile::new(&input, today()).unwrap();
        let mut tabs = vec![DisclosureLedger::new(floors); 3];
        let mut record = DisclosureLedger::new(floors);
        let mut history = vec![record.clone()];
        let mut adversary = Adversary::new();
        for (tab, probe, stale) in steps {
            if let Some(i) = stale {
                // Some old copy turns up (a restored backup, a tab from before).
                let old = &history[i.index(history.len())];
                tabs[tab].merge_from(old);
            }
            let Some(claim) = claim_of(&probe) else { continue };
            tabs[tab].merge_from(&record);
            let outcome = tabs[tab].answer(&p, &claim, today()).outcome;
            record.merge_from(&tabs[tab]);
            history.push(record.clone());
            prop_assert_eq!(
                wallet_core::evaluate(&p, &claim, today()).ok().map(|e| Outcome::from_bool(e.satisfied))
                    .filter(|_| matches!(outcome, Outcome::Satisfied | Outcome::NotSatisfied)),
                matches!(outcome, Outcome::Satisfied | Outcome::NotSatisfied).then_some(outcome),
                "an answer was false"
            );
            adversary.learn(&claim, outcome);
            adversary.check(floors)?;
        }
    }
}
