//! The disclosure ledger: what has already been revealed about each attribute, across every origin.
//!
//! Before a claim is evaluated the ledger *assesses* it. The assessment reads only the history of
//! questions and answers (never the profile), so a refusal carries no information about the secret:
//!
//! - **Known**: the answer follows from what is already revealed (a repeat, or a question outside
//!   the remaining interval); it is given from memory and reveals nothing new.
//! - **Decline**: one of the two possible answers would narrow what is known below a floor.
//! - **Evaluate**: both answers keep every floor; the profile may be consulted.
//!
//! What is tracked per attribute:
//! - income: a half-open interval `[lo, hi)` of minor units in the profile's currency (learned
//!   from the first answered income question; a question in another currency is `invalid`);
//! - age: an inclusive interval of possible birth dates (age questions are thresholds on the birth
//!   date, so questions asked on different days combine correctly);
//! - district: the set of districts still possible;
//! - conditions: the codes known to be absent, and the sets known to contain at least one held
//!   code. Any "has one of these" answer must leave at least two candidates, so no answer, alone
//!   or combined, singles out which condition the person has.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use time::Date;

use crate::catalogue;
use crate::claim::{Attribute, Claim, Outcome, age_cutoff, evaluate};
use crate::profile::{
    ConditionCode, Currency, DistrictId, MAX_INCOME_MINOR, Profile, earliest_birth_date,
};

/// The narrowest the wallet lets what is known about each attribute become.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Floors {
    /// Narrowest income band, in minor units. Default 500,000 (5,000.00).
    pub income_band_minor: u64,
    /// Narrowest band of possible birth dates, in days. Default 365 (one year of age).
    pub age_band_days: i64,
    /// Fewest districts that must remain possible. Default 3.
    pub district_candidates: usize,
    /// Fewest candidates a "has one of these conditions" answer may leave. Default 2, so no
    /// answer singles out a condition; values below 2 are raised to 2.
    pub condition_candidates: usize,
}

impl Default for Floors {
    fn default() -> Self {
        Self {
            income_band_minor: 500_000,
            age_band_days: 365,
            district_candidates: 3,
            condition_candidates: 2,
        }
    }
}

/// The ledger's verdict on a question, decided from history alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assessment {
    /// The outcome follows from what is already revealed; answering reveals nothing new.
    Known(Outcome),
    /// Answering could narrow what is known below a floor.
    Decline,
    /// Both possible answers keep every floor; evaluate the claim.
    Evaluate,
}

/// The ledger's answer to a question, ready to log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub outcome: Outcome,
    /// True when the answer came from what was already revealed (nothing new disclosed).
    pub from_memory: bool,
}

/// What answering a question would reveal, for the consent screen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preview {
    pub assessment: Assessment,
    /// Bits revealed about the claim's attribute so far.
    pub bits_now: f64,
    /// Bits revealed about it after a "satisfied" answer.
    pub bits_if_satisfied: f64,
    /// Bits revealed about it after a "not satisfied" answer.
    pub bits_if_not_satisfied: f64,
}

/// Bits revealed per attribute: log2 of how much the set of possible values has shrunk.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Bits {
    pub income: f64,
    pub age: f64,
    pub district: f64,
    pub conditions: f64,
}

impl Bits {
    pub fn of(&self, attribute: Attribute) -> f64 {
        match attribute {
            Attribute::Income => self.income,
            Attribute::Age => self.age,
            Attribute::District => self.district,
            Attribute::Conditions => self.conditions,
        }
    }
}

/// See the module docs. Serializable so that the page can keep it in the encrypted store: it
/// summarises answers already given, so it is as private as they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DisclosureLedger {
    floors: Floors,
    /// Currency learned from the first answered income question.
    income_currency: Option<Currency>,
    /// Currencies an income question was asked in and found `invalid`.
    income_not_currency: BTreeSet<Currency>,
    income_lo: u64,
    income_hi: u64,
    /// Earliest possible birth date learned, if any.
    dob_lo: Option<Date>,
    /// Latest possible birth date learned, if any.
    dob_hi: Option<Date>,
    /// The first day an age question was asked: the person was born by then, and an observer
    /// knows it.
    dob_first_asked: Option<Date>,
    districts: BTreeSet<DistrictId>,
    conditions_absent: BTreeSet<ConditionCode>,
    /// Sets known to contain at least one held code, each without the codes known absent.
    conditions_some_of: BTreeSet<BTreeSet<ConditionCode>>,
    /// Which version of each fact the memory describes: a profile edit that changes one fact
    /// bumps that attribute's epoch and starts its memory afresh; merging keeps the newer epoch.
    /// Ledgers stored before epochs existed read as all zero.
    #[serde(default)]
    epochs: Epochs,
}

/// Format 1 of the ledger's fields (the disclosure memory of memory formats 1 and 2, and the
/// companion blob of record format 1). Frozen, with its own copies of [`Floors`] and [`Epochs`]:
/// a change to the ledger's fields is a new memory format (see [`crate::format`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LedgerV1 {
    floors: FloorsV1,
    income_currency: Option<Currency>,
    income_not_currency: BTreeSet<Currency>,
    income_lo: u64,
    income_hi: u64,
    dob_lo: Option<Date>,
    dob_hi: Option<Date>,
    dob_first_asked: Option<Date>,
    districts: BTreeSet<DistrictId>,
    conditions_absent: BTreeSet<ConditionCode>,
    conditions_some_of: BTreeSet<BTreeSet<ConditionCode>>,
    /// Ledgers stored before epochs existed read as all zero.
    #[serde(default)]
    epochs: EpochsV1,
}

/// [`Floors`] as format 1 wrote them. Frozen.
#[derive(Deserialize)]
struct FloorsV1 {
    income_band_minor: u64,
    age_band_days: i64,
    district_candidates: usize,
    condition_candidates: usize,
}

/// [`Epochs`] as format 1 wrote them. Frozen.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EpochsV1 {
    income: u64,
    age: u64,
    district: u64,
    conditions: u64,
}

impl From<LedgerV1> for DisclosureLedger {
    /// Format 1 to the current ledger: the same memory.
    fn from(v1: LedgerV1) -> Self {
        let f = v1.floors;
        let e = v1.epochs;
        Self {
            floors: Floors {
                income_band_minor: f.income_band_minor,
                age_band_days: f.age_band_days,
                district_candidates: f.district_candidates,
                condition_candidates: f.condition_candidates,
            },
            income_currency: v1.income_currency,
            income_not_currency: v1.income_not_currency,
            income_lo: v1.income_lo,
            income_hi: v1.income_hi,
            dob_lo: v1.dob_lo,
            dob_hi: v1.dob_hi,
            dob_first_asked: v1.dob_first_asked,
            districts: v1.districts,
            conditions_absent: v1.conditions_absent,
            conditions_some_of: v1.conditions_some_of,
            epochs: Epochs {
                income: e.income,
                age: e.age,
                district: e.district,
                conditions: e.conditions,
            },
        }
    }
}

/// Per-attribute version of the fact the memory describes (see [`DisclosureLedger::reset`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Epochs {
    pub income: u64,
    pub age: u64,
    pub district: u64,
    pub conditions: u64,
}

impl Epochs {
    fn of(&self, attribute: Attribute) -> u64 {
        match attribute {
            Attribute::Income => self.income,
            Attribute::Age => self.age,
            Attribute::District => self.district,
            Attribute::Conditions => self.conditions,
        }
    }

    fn of_mut(&mut self, attribute: Attribute) -> &mut u64 {
        match attribute {
            Attribute::Income => &mut self.income,
            Attribute::Age => &mut self.age,
            Attribute::District => &mut self.district,
            Attribute::Conditions => &mut self.conditions,
        }
    }
}

impl Default for DisclosureLedger {
    fn default() -> Self {
        Self::new(Floors::default())
    }
}

impl DisclosureLedger {
    /// A ledger that knows nothing yet.
    pub fn new(floors: Floors) -> Self {
        Self {
            floors: Floors {
                condition_candidates: floors.condition_candidates.max(2),
                ..floors
            },
            income_currency: None,
            income_not_currency: BTreeSet::new(),
            income_lo: 0,
            income_hi: MAX_INCOME_MINOR,
            dob_lo: None,
            dob_hi: None,
            dob_first_asked: None,
            districts: all_districts(),
            conditions_absent: BTreeSet::new(),
            conditions_some_of: BTreeSet::new(),
            epochs: Epochs::default(),
        }
    }

    /// What both copies know: the join of two ledgers, attribute by attribute. Income and
    /// birth-date bounds take the tighter of each bound, district candidates the intersection,
    /// conditions known absent the union (and the "at least one of" sets the union, each less
    /// what is known absent); floors take the stricter of each. For an attribute whose epochs
    /// differ, the newer epoch's memory wins whole (the older one describes a fact since edited).
    ///
    /// `merge` is commutative, associative and idempotent, and merging a copy with any older
    /// copy of itself changes nothing: no stale, restored or second copy can make the wallet
    /// forget.
    pub fn merge(a: &Self, b: &Self) -> Self {
        let mut out = a.clone();
        out.merge_from(b);
        out
    }

    /// `self = merge(self, other)`.
    pub fn merge_from(&mut self, other: &Self) {
        self.floors = Floors {
            income_band_minor: self
                .floors
                .income_band_minor
                .max(other.floors.income_band_minor),
            age_band_days: self.floors.age_band_days.max(other.floors.age_band_days),
            district_candidates: self
                .floors
                .district_candidates
                .max(other.floors.district_candidates),
            condition_candidates: self
                .floors
                .condition_candidates
                .max(other.floors.condition_candidates),
        };
        for attribute in Attribute::ALL {
            let (mine, theirs) = (self.epochs.of(attribute), other.epochs.of(attribute));
            if theirs > mine {
                self.copy_attribute(other, attribute);
            } else if theirs == mine {
                self.join_attribute(other, attribute);
            }
        }
    }

    fn copy_attribute(&mut self, other: &Self, attribute: Attribute) {
        *self.epochs.of_mut(attribute) = other.epochs.of(attribute);
        match attribute {
            Attribute::Income => {
                self.income_currency = other.income_currency;
                self.income_not_currency = other.income_not_currency.clone();
                self.income_lo = other.income_lo;
                self.income_hi = other.income_hi;
            }
            Attribute::Age => {
                self.dob_lo = other.dob_lo;
                self.dob_hi = other.dob_hi;
                self.dob_first_asked = other.dob_first_asked;
            }
            Attribute::District => self.districts = other.districts.clone(),
            Attribute::Conditions => {
                self.conditions_absent = other.conditions_absent.clone();
                self.conditions_some_of = other.conditions_some_of.clone();
            }
        }
    }

    fn join_attribute(&mut self, other: &Self, attribute: Attribute) {
        match attribute {
            Attribute::Income => {
                // Two copies of one fact learn the same currency; should they ever disagree,
                // the larger code is kept so that the join stays a join.
                self.income_currency = self.income_currency.max(other.income_currency);
                self.income_not_currency
                    .extend(other.income_not_currency.iter().copied());
                self.income_lo = self.income_lo.max(other.income_lo);
                self.income_hi = self.income_hi.min(other.income_hi);
            }
            Attribute::Age => {
                self.dob_lo = self.dob_lo.max(other.dob_lo);
                self.dob_hi = min_known(self.dob_hi, other.dob_hi);
                self.dob_first_asked = min_known(self.dob_first_asked, other.dob_first_asked);
            }
            Attribute::District => self.districts.retain(|d| other.districts.contains(d)),
            Attribute::Conditions => {
                self.conditions_absent
                    .extend(other.conditions_absent.iter().cloned());
                let absent = &self.conditions_absent;
                self.conditions_some_of = self
                    .conditions_some_of
                    .iter()
                    .chain(other.conditions_some_of.iter())
                    .map(|set| set.difference(absent).cloned().collect())
                    .collect();
            }
        }
    }

    /// Forgets what is known about `attribute` after the person changed that fact (what was
    /// revealed about the old value stays revealed, but says nothing about the new one).
    /// Bumps the attribute's epoch so that a merge with an older copy keeps the reset.
    pub fn reset(&mut self, attribute: Attribute) {
        let mut fresh = Self::new(self.floors);
        *fresh.epochs.of_mut(attribute) = self.epochs.of(attribute).saturating_add(1);
        self.copy_attribute(&fresh, attribute);
    }

    /// After the person edited their profile from `old` to `new`: resets the memory of each
    /// attribute whose fact changed, and only those, and returns them (the page tells the
    /// person that answers about the old values remain known to whoever received them).
    pub fn reset_changed(&mut self, old: &Profile, new: &Profile) -> Vec<Attribute> {
        let changed: Vec<Attribute> = Attribute::ALL
            .into_iter()
            .filter(|attribute| match attribute {
                Attribute::Income => old.income() != new.income(),
                Attribute::Age => old.date_of_birth() != new.date_of_birth(),
                Attribute::District => old.district() != new.district(),
                Attribute::Conditions => old.conditions() != new.conditions(),
            })
            .collect();
        for attribute in &changed {
            self.reset(*attribute);
        }
        changed
    }

    /// The version of each fact the memory describes.
    pub fn epochs(&self) -> Epochs {
        self.epochs
    }

    /// The floors in force.
    pub fn floors(&self) -> Floors {
        self.floors
    }

    /// Decides from history alone whether `claim`, asked on `today`, may be evaluated.
    pub fn assess(&self, claim: &Claim, today: Date) -> Assessment {
        match claim {
            Claim::IncomeBelow { limit } => {
                if self.income_not_currency.contains(&limit.currency) {
                    return Assessment::Known(Outcome::Invalid);
                }
                if self.income_currency.is_some_and(|c| c != limit.currency) {
                    return Assessment::Known(Outcome::Invalid);
                }
                let l = limit.amount_minor;
                if l <= self.income_lo {
                    Assessment::Known(Outcome::NotSatisfied)
                } else if l >= self.income_hi {
                    Assessment::Known(Outcome::Satisfied)
                } else if l - self.income_lo < self.floors.income_band_minor
                    || self.income_hi - l < self.floors.income_band_minor
                {
                    Assessment::Decline
                } else {
                    Assessment::Evaluate
                }
            }
            Claim::AgeAtLeast { years } => {
                let cutoff = age_cutoff(today, *years);
                // Known only from learned bounds; splits measured against today's possible range.
                if self.dob_hi.is_some_and(|hi| cutoff >= hi) {
                    return Assessment::Known(Outcome::Satisfied);
                }
                if self.dob_lo.is_some_and(|lo| cutoff < lo) {
                    return Assessment::Known(Outcome::NotSatisfied);
                }
                let (lo, hi) = self.dob_bounds(today);
                // satisfied => dob in [lo, cutoff]; not => dob in [cutoff+1, hi].
                let if_yes = days_between(lo, cutoff) + 1;
                let if_no = days_between(cutoff, hi);
                if if_yes < self.floors.age_band_days || if_no < self.floors.age_band_days {
                    Assessment::Decline
                } else {
                    Assessment::Evaluate
                }
            }
            Claim::ResidesIn { districts } => {
                let inside = self.districts.intersection(districts).count();
                let outside = self.districts.len() - inside;
                if outside == 0 {
                    Assessment::Known(Outcome::Satisfied)
                } else if inside == 0 {
                    Assessment::Known(Outcome::NotSatisfied)
                } else if inside < self.floors.district_candidates
                    || outside < self.floors.district_candidates
                {
                    Assessment::Decline
                } else {
                    Assessment::Evaluate
                }
            }
            Claim::HasNoneOf { conditions } => self.assess_conditions(conditions),
        }
    }

    fn assess_conditions(&self, asked: &BTreeSet<ConditionCode>) -> Assessment {
        let open: BTreeSet<ConditionCode> =
            asked.difference(&self.conditions_absent).cloned().collect();
        if open.is_empty() {
            return Assessment::Known(Outcome::Satisfied);
        }
        if self
            .conditions_some_of
            .iter()
            .any(|set| set.is_subset(asked))
        {
            // At least one of that set is held, and all of it is being asked about.
            return Assessment::Known(Outcome::NotSatisfied);
        }
        // "not satisfied" would say: at least one of `open` is held.
        if open.len() < self.floors.condition_candidates {
            return Assessment::Decline;
        }
        // "satisfied" would remove `open` from every known "some of" set.
        let singles_out = self
            .conditions_some_of
            .iter()
            .any(|set| set.difference(&open).count() < self.floors.condition_candidates);
        if singles_out {
            Assessment::Decline
        } else {
            Assessment::Evaluate
        }
    }

    /// Records the outcome of an evaluated question. `Declined` records nothing.
    pub fn record(&mut self, claim: &Claim, today: Date, outcome: Outcome) {
        let satisfied = match outcome {
            Outcome::Satisfied => true,
            Outcome::NotSatisfied => false,
            Outcome::Invalid => {
                if let (Claim::IncomeBelow { limit }, None) = (claim, self.income_currency) {
                    self.income_not_currency.insert(limit.currency);
                }
                return;
            }
            Outcome::Declined => return,
        };
        match claim {
            Claim::IncomeBelow { limit } => {
                self.income_currency = Some(limit.currency);
                self.income_not_currency.clear();
                if satisfied {
                    self.income_hi = self.income_hi.min(limit.amount_minor);
                } else {
                    self.income_lo = self.income_lo.max(limit.amount_minor);
                }
            }
            Claim::AgeAtLeast { years } => {
                let cutoff = age_cutoff(today, *years);
                self.dob_first_asked = Some(self.dob_first_asked.map_or(today, |d| d.min(today)));
                if satisfied {
                    self.dob_hi = Some(self.dob_hi.map_or(cutoff, |hi| hi.min(cutoff)));
                } else {
                    let after = cutoff.next_day().unwrap_or(cutoff);
                    self.dob_lo = Some(self.dob_lo.map_or(after, |lo| lo.max(after)));
                }
            }
            Claim::ResidesIn { districts } => {
                if satisfied {
                    self.districts.retain(|d| districts.contains(d));
                } else {
                    self.districts.retain(|d| !districts.contains(d));
                }
            }
            Claim::HasNoneOf { conditions } => {
                if satisfied {
                    self.conditions_absent.extend(conditions.iter().cloned());
                    self.conditions_some_of = self
                        .conditions_some_of
                        .iter()
                        .map(|set| set.difference(conditions).cloned().collect())
                        .collect();
                } else {
                    let open = conditions
                        .difference(&self.conditions_absent)
                        .cloned()
                        .collect();
                    self.conditions_some_of.insert(open);
                }
            }
        }
    }

    /// Assesses, evaluates the profile when allowed, and records: the one way the gate answers
    /// a claim from what the person typed. `answer_from` with the profile's evaluation.
    pub fn answer(&mut self, profile: &Profile, claim: &Claim, today: Date) -> Answer {
        self.answer_from(claim, today, || {
            match evaluate(profile, claim, today) {
                Ok(evaluation) => Outcome::from_bool(evaluation.satisfied),
                // Only an unaskable claim fails evaluation: the question is invalid for this profile.
                Err(_) => Outcome::Invalid,
            }
        })
    }

    /// Assesses `claim` from history alone and, only when both answers keep every floor, asks
    /// `evaluate` for the outcome (the profile's, or an issuer's credential) and records it.
    /// A question whose answer is already known is answered from memory and a question that
    /// could narrow what is known below a floor is declined, in both cases without calling
    /// `evaluate`. Whatever `evaluate` answers is what the ledger remembers.
    pub fn answer_from(
        &mut self,
        claim: &Claim,
        today: Date,
        evaluate: impl FnOnce() -> Outcome,
    ) -> Answer {
        if let Claim::AgeAtLeast { .. } = claim {
            // Being asked on `today` shows the person was born by then, whatever the answer.
            self.dob_first_asked = Some(self.dob_first_asked.map_or(today, |d| d.min(today)));
        }
        match self.assess(claim, today) {
            Assessment::Known(outcome) => Answer {
                outcome,
                from_memory: true,
            },
            Assessment::Decline => Answer {
                outcome: Outcome::Declined,
                from_memory: false,
            },
            Assessment::Evaluate => {
                let outcome = match evaluate() {
                    // Only an outcome can be recorded; a refusal from `evaluate` records nothing.
                    Outcome::Declined => {
                        return Answer {
                            outcome: Outcome::Declined,
                            from_memory: false,
                        };
                    }
                    outcome => outcome,
                };
                self.record(claim, today, outcome);
                Answer {
                    outcome,
                    from_memory: false,
                }
            }
        }
    }

    /// What answering `claim` on `today` would reveal, for the consent screen.
    pub fn preview(&self, claim: &Claim, today: Date) -> Preview {
        let attribute = claim.attribute();
        let after = |outcome| {
            let mut ledger = self.clone();
            ledger.record(claim, today, outcome);
            ledger.bits_released(today).of(attribute)
        };
        Preview {
            assessment: self.assess(claim, today),
            bits_now: self.bits_released(today).of(attribute),
            bits_if_satisfied: after(Outcome::Satisfied),
            bits_if_not_satisfied: after(Outcome::NotSatisfied),
        }
    }

    /// Bits released per attribute so far (age measured against the birth dates possible on `today`).
    pub fn bits_released(&self, today: Date) -> Bits {
        let income_width = self.income_hi.saturating_sub(self.income_lo).max(1);
        let (lo, hi) = self.dob_bounds(today);
        let (full_lo, full_hi) = (earliest_birth_date(today), today);
        let dob_width = (days_between(lo, hi) + 1).max(1);
        let dob_full = days_between(full_lo, full_hi) + 1;
        Bits {
            income: log2_ratio(MAX_INCOME_MINOR as f64, income_width as f64),
            age: log2_ratio(dob_full as f64, dob_width as f64),
            district: log2_ratio(
                catalogue::DISTRICTS.len() as f64,
                self.districts.len().max(1) as f64,
            ),
            conditions: log2_ratio(
                (1u64 << catalogue::CONDITIONS.len()) as f64,
                self.consistent_condition_sets().max(1) as f64,
            ),
        }
    }

    /// The income interval `[lo, hi)` known so far, in minor units.
    pub fn income_interval(&self) -> (u64, u64) {
        (self.income_lo, self.income_hi)
    }

    /// The birth-date interval known so far (inclusive). Where nothing was learned, the bounds
    /// are what any observer knows: born at most 130 years before `today`, and born by `today`
    /// and by the first day an age question was asked.
    pub fn dob_bounds(&self, today: Date) -> (Date, Date) {
        let lo = self.dob_lo.unwrap_or_else(|| earliest_birth_date(today));
        let born_by = self.dob_first_asked.map_or(today, |d| d.min(today));
        let hi = self.dob_hi.map_or(born_by, |hi| hi.min(born_by));
        (lo, hi)
    }

    /// The sets of condition codes known to hold at least one the person has (each without the
    /// codes known absent).
    pub fn conditions_some_of(&self) -> &BTreeSet<BTreeSet<ConditionCode>> {
        &self.conditions_some_of
    }

    /// Districts still possible.
    pub fn district_candidates(&self) -> &BTreeSet<DistrictId> {
        &self.districts
    }

    /// Number of condition sets (subsets of the catalogue) consistent with what is revealed.
    fn consistent_condition_sets(&self) -> u64 {
        let codes: Vec<&str> = catalogue::CONDITIONS.iter().map(|c| c.code).collect();
        let mask_of = |set: &BTreeSet<ConditionCode>| {
            codes.iter().enumerate().fold(0u64, |m, (i, code)| {
                if set.iter().any(|c| c.as_str() == *code) {
                    m | (1 << i)
                } else {
                    m
                }
            })
        };
        let absent = mask_of(&self.conditions_absent);
        let some_of: Vec<u64> = self.conditions_some_of.iter().map(mask_of).collect();
        (0u64..(1 << codes.len()))
            .filter(|s| s & absent == 0 && some_of.iter().all(|m| s & m != 0))
            .count() as u64
    }
}

/// The later-known of two optional bounds where `None` means "nothing learned": the smaller
/// known value.
fn min_known<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn all_districts() -> BTreeSet<DistrictId> {
    catalogue::DISTRICTS
        .iter()
        .filter_map(|d| DistrictId::parse(d.code).ok())
        .collect()
}

fn days_between(from: Date, to: Date) -> i64 {
    (to - from).whole_days()
}

fn log2_ratio(whole: f64, part: f64) -> f64 {
    (whole / part).log2().max(0.0)
}
