//! The presentation-verification workload shared by the native bench (`benches/presentation.rs`,
//! timed with `std::time::Instant`) and the wasm one (`tests/wasm_presentation.rs`, timed with
//! `performance.now()` in Chromium): the same credential, presentation and baseline on both.
//!
//! The credential is shaped like the issuer's income credentials (one `_sd` digest per ladder
//! step, 39 in all, plus the currency in clear); the presentation discloses one step and carries
//! a KB-JWT. The baseline is one raw ES256 verification (`p256`) of the KB-JWT's signing input
//! under the holder key: `verify_presentation` performs two such verifications (issuer JWT and
//! KB-JWT) plus parsing, hashing and the claim checks.
//!
//! Nothing here reads a clock: the caller passes one in. Nothing asserts on a time.

#![allow(dead_code)]

use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tacit_protocol::request_auth::InstallKey;
use tacit_protocol::sd_jwt::{
    Credential, IssuedClaims, IssuerKey, Jwks, TrustedIssuer, issue, kb_jwt_signing_input, present,
    presentation_without_kb, verify_presentation,
};
use wallet_core::Timestamp;

pub const ISS: &str = "http://127.0.0.1:8791";
pub const AUD: &str = "http://127.0.0.1:8081";
pub const NONCE: &str = "0123456789abcdef0123456789abcdef";
const KID: &str = "bench-k1";
/// 2026-05-01T09:30:00Z.
const IAT_MS: i64 = 1_777_627_800_000;
const DAY_MS: i64 = 86_400_000;
/// The ladder the issuer discloses: 10 000 ..= 200 000 step 5 000 (39 steps).
const LADDER: (u32, u32, u32) = (10_000, 200_000, 5_000);
/// The step the presentation discloses.
pub const DISCLOSED: &str = "income_below_30000";
/// How old the KB-JWT may be (the site's rule: 5 minutes).
const MAX_KB_AGE_MS: i64 = 5 * 60 * 1000;

fn key(label: &str) -> Result<SigningKey, String> {
    SigningKey::from_slice(&Sha256::digest(label.as_bytes()))
        .map_err(|e| format!("bench key {label}: {e}"))
}

/// One credential, its one-disclosure presentation and the raw baseline.
#[derive(Debug)]
pub struct Workload {
    pub presentation: String,
    pub disclosures_in_credential: usize,
    trusted: Vec<TrustedIssuer>,
    now: Timestamp,
    raw_input: Vec<u8>,
    raw_signature: Signature,
    holder: VerifyingKey,
}

impl Workload {
    pub fn new() -> Result<Self, String> {
        let issuer = key("tacit/bench/issuer")?;
        let holder = key("tacit/bench/holder")?;
        let mut plain = Map::new();
        plain.insert("currency".into(), Value::String("EUR".into()));
        let claims = IssuedClaims {
            iss: ISS.into(),
            vct: "https://tacit.example/vct/income".into(),
            iat: Timestamp::from_millis(IAT_MS),
            exp: Timestamp::from_millis(IAT_MS + 30 * DAY_MS),
            cnf_jwk: InstallKey::from_verifying_key(*holder.verifying_key()).to_jwk(),
            plain,
        };
        let income = 28_500u32;
        let disclosable: Vec<(String, Value)> = (LADDER.0..=LADDER.1)
            .step_by(LADDER.2 as usize)
            .map(|step| (format!("income_below_{step}"), Value::Bool(income < step)))
            .collect();
        let salts: Vec<[u8; 16]> = (0..disclosable.len())
            .map(|i| {
                let mut salt = [0u8; 16];
                salt[..8].copy_from_slice(&(i as u64 + 1).to_be_bytes());
                salt[8..].copy_from_slice(b"benchslt");
                salt
            })
            .collect();
        let text = issue(&issuer, KID, &claims, &disclosable, &salts)
            .map_err(|e| format!("issue: {e:?}"))?;
        let credential = Credential::parse(&text).map_err(|e| format!("parse: {e:?}"))?;
        let now = Timestamp::from_millis(IAT_MS + 60_000);
        let presentation = present(&credential, &[DISCLOSED], &holder, AUD, NONCE, now)
            .map_err(|e| format!("present: {e:?}"))?;
        let without = presentation_without_kb(&credential, &[DISCLOSED])
            .map_err(|e| format!("presentation_without_kb: {e:?}"))?;
        let raw_input = kb_jwt_signing_input(AUD, NONCE, now, &without).into_bytes();
        let raw_signature: Signature = holder.sign(&raw_input);
        let jwks = Jwks::new(vec![IssuerKey {
            kid: KID.into(),
            key: *issuer.verifying_key(),
        }])
        .map_err(|e| format!("jwks: {e:?}"))?;
        let workload = Self {
            presentation,
            disclosures_in_credential: disclosable.len(),
            trusted: vec![TrustedIssuer {
                iss: ISS.into(),
                jwks,
            }],
            now,
            raw_input,
            raw_signature,
            holder: *holder.verifying_key(),
        };
        if !workload.verify_presentation() || !workload.raw_verify() {
            return Err("the bench presentation or its baseline does not verify".into());
        }
        if workload.verify_tampered() {
            return Err("a presentation with a flipped KB signature verified".into());
        }
        Ok(workload)
    }

    /// `verify_presentation` accepts, disclosing exactly the one step (true: 28 500 < 30 000).
    pub fn verify_presentation(&self) -> bool {
        verify_presentation(
            &self.presentation,
            &self.trusted,
            AUD,
            NONCE,
            self.now,
            MAX_KB_AGE_MS,
        )
        .is_ok_and(|v| {
            v.disclosed.len() == 1 && v.disclosed.get(DISCLOSED) == Some(&Value::Bool(true))
        })
    }

    /// The same presentation with one character of the KB-JWT signature changed must fail.
    fn verify_tampered(&self) -> bool {
        let mut chars: Vec<char> = self.presentation.chars().collect();
        let at = chars.len().saturating_sub(10);
        chars[at] = if chars[at] == 'A' { 'B' } else { 'A' };
        let tampered: String = chars.into_iter().collect();
        verify_presentation(
            &tampered,
            &self.trusted,
            AUD,
            NONCE,
            self.now,
            MAX_KB_AGE_MS,
        )
        .is_ok()
    }

    /// One raw ES256 verification of the KB-JWT signing input.
    pub fn raw_verify(&self) -> bool {
        self.holder
            .verify(&self.raw_input, &self.raw_signature)
            .is_ok()
    }
}

/// Per-operation times (ms) of `rounds` interleaved rounds of the presentation and the baseline,
/// each round running its operation until `round_ms` have passed on `clock` (ms). Fails if an
/// operation ever returns false.
#[derive(Debug, Clone)]
pub struct Figures {
    pub presentation_ms: Vec<f64>,
    pub raw_ms: Vec<f64>,
    pub operations: u64,
}

pub fn measure(
    workload: &Workload,
    clock: &mut dyn FnMut() -> f64,
    rounds: usize,
    round_ms: f64,
) -> Result<Figures, String> {
    // Warm up both (caches, lazy tables, the JIT's tiers in wasm).
    for _ in 0..3 {
        if !(workload.verify_presentation() && workload.raw_verify()) {
            return Err("verification failed during warm-up".into());
        }
    }
    let mut figures = Figures {
        presentation_ms: Vec::with_capacity(rounds),
        raw_ms: Vec::with_capacity(rounds),
        operations: 0,
    };
    for round in 0..rounds {
        // Alternate which goes first, so drift in the machine's load falls on both.
        let order: [bool; 2] = if round % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for presentation in order {
            let started = clock();
            let mut count = 0u64;
            let mut elapsed;
            loop {
                let ok = if presentation {
                    workload.verify_presentation()
                } else {
                    workload.raw_verify()
                };
                if !ok {
                    return Err("a verification failed during the measurement".into());
                }
                count += 1;
                elapsed = clock() - started;
                if elapsed >= round_ms {
                    break;
                }
            }
            figures.operations += count;
            let per_op = elapsed / count as f64;
            if presentation {
                figures.presentation_ms.push(per_op);
            } else {
                figures.raw_ms.push(per_op);
            }
        }
    }
    Ok(figures)
}

pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The one line both benches print and `cargo xtask bench` reads:
/// `tacit-bench presentation-verify <where> presentation_ms=… raw_es256_verify_ms=… ratio=…
/// rounds=… round_ms=… operations=… presentation_bytes=… disclosures_in_credential=…`.
pub fn line(place: &str, workload: &Workload, figures: &Figures, round_ms: f64) -> String {
    let presentation = median(&figures.presentation_ms);
    let raw = median(&figures.raw_ms);
    format!(
        "tacit-bench presentation-verify {place} presentation_ms={presentation:.6} \
         raw_es256_verify_ms={raw:.6} ratio={:.3} rounds={} round_ms={round_ms} operations={} \
         presentation_bytes={} disclosures_in_credential={}",
        presentation / raw,
        figures.presentation_ms.len(),
        figures.operations,
        workload.presentation.len(),
        workload.disclosures_in_credential,
    )
}
