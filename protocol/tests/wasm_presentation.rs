//! Presentation verification in wasm, in headless Chromium: `verify_presentation` of a
//! one-disclosure presentation against one raw ES256 verification, interleaved, timed with
//! `performance.now()` (the workload is `benches/workload/mod.rs`, shared with the native bench).
//!
//! Run by `cargo xtask bench` (or `bench wasm`) through wasm-bindgen-test-runner in release with
//! `--nocapture`; it prints one `tacit-bench presentation-verify wasm32-chromium …` line. The
//! test asserts only that every verification succeeded (and a tampered one failed), never a time.
//! Native builds compile it to nothing.

#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../benches/workload/mod.rs"]
mod workload;

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// Rounds and round length: about 2 × 11 × 150 ms of measuring.
const ROUNDS: usize = 11;
const ROUND_MS: f64 = 150.0;

#[wasm_bindgen_test]
fn presentation_verification_in_chromium() {
    let workload = workload::Workload::new().unwrap();
    let mut clock = performance_now;
    let figures = workload::measure(&workload, &mut clock, ROUNDS, ROUND_MS).unwrap();
    assert_eq!(figures.presentation_ms.len(), ROUNDS);
    assert!(figures.operations >= 2 * ROUNDS as u64);
    console_log!(
        "{}",
        workload::line("wasm32-chromium", &workload, &figures, ROUND_MS)
    );
}
