//! `cargo bench -p wallet-core --bench core` (or `cargo xtask bench`): unlock at the default
//! Argon2id parameters, claim evaluation through the ledger, and log append + verify of 10,000
//! entries. Figures only; nothing here asserts a time.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // bench code

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use time::{Date, Month};
use wallet_core::{
    Claim, ComparisonLog, Currency, DisclosureLedger, GrantId, KdfParams, Money, Origin, Outcome,
    Passphrase, Profile, ProfileInput, Timestamp, ToolName, Vault, evaluate,
};

fn today() -> Date {
    Date::from_calendar_date(2026, Month::November, 29).unwrap()
}

fn profile() -> Profile {
    let input = ProfileInput::new(2_840_000, "EUR", "1990-02-28", "nordhafen", ["asthma"]);
    Profile::new(&input, today()).unwrap()
}

fn unlock(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let pass = Passphrase::new("correct horse battery staple".into()).unwrap();
    let mut group = c.benchmark_group("vault");
    group.sample_size(10);
    for (name, params) in [
        ("unlock_default_m64MiB_t3_p4", KdfParams::DEFAULT),
        ("unlock_minimum_m19MiB_t2_p1", KdfParams::MINIMUM),
    ] {
        let bytes = Vault::create(&profile(), &pass, params, &mut rng)
            .unwrap()
            .to_bytes();
        group.bench_function(name, |b| {
            b.iter(|| Vault::open(black_box(&bytes), &pass).unwrap())
        });
    }
    group.finish();
}

fn claims(c: &mut Criterion) {
    let p = profile();
    let claim = Claim::income_below(Money {
        amount_minor: 3_000_000,
        currency: Currency::parse("EUR").unwrap(),
    })
    .unwrap();
    c.bench_function("claim_evaluate", |b| {
        b.iter(|| evaluate(black_box(&p), &claim, today()).unwrap())
    });
    c.bench_function("claim_answer_through_ledger", |b| {
        b.iter(|| {
            let mut ledger = DisclosureLedger::default();
            ledger.answer(black_box(&p), &claim, today())
        })
    });
}

fn log(c: &mut Criterion) {
    let origin = Origin::parse("http://127.0.0.1:8081").unwrap();
    let tool = ToolName::parse("claim.age_at_least.g1").unwrap();
    let grant = GrantId::parse("g1").unwrap();
    let claim = Claim::age_at_least(18).unwrap();
    let fill = || {
        let mut log = ComparisonLog::new();
        for i in 0..10_000 {
            log.append(
                Timestamp::from_millis(i),
                origin.clone(),
                tool.clone(),
                claim.clone(),
                Outcome::Satisfied,
                grant.clone(),
                None,
            );
        }
        log
    };
    let mut group = c.benchmark_group("log");
    group.sample_size(10);
    group.bench_function("append_10000", |b| b.iter(fill));
    let full = fill();
    group.bench_function("verify_10000", |b| {
        b.iter(|| black_box(&full).verify().unwrap())
    });
    group.finish();
}

criterion_group!(benches, unlock, claims, log);
criterion_main!(benches);
