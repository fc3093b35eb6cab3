//! Comparison-log exports the person imports: `ComparisonLog::import_bytes` on arbitrary bytes.
//!
//! Asserts: never panics; refusals are `LogError::Import` (with a 1-based line inside the input)
//! or `LogError::ChainBroken` (with an index inside the log); an accepted import verifies, and exporting it
//! again gives exactly the input bytes (import accepts only what export writes).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wallet_core::{ChainBroken, ComparisonLog, LogError};

fuzz_target!(|data: &[u8]| {
    match ComparisonLog::import_bytes(data) {
        Ok(log) => {
            assert!(log.verify().is_ok(), "an imported log does not verify");
            assert!(log.verify_with_head(log.head()).is_ok());
            assert_eq!(
                log.export().as_bytes(),
                data,
                "import then export changed the bytes"
            );
        }
        Err(LogError::Import { line, .. }) => {
            let lines = data.split(|&b| b == b'\n').count();
            assert!((1..=lines).contains(&line), "line {line} of {lines}");
        }
        Err(LogError::ChainBroken(ChainBroken { index })) => {
            let entries = data
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                .saturating_sub(1);
            assert!(
                index < entries,
                "chain broken at {index} of {entries} entries"
            );
        }
    }
});
