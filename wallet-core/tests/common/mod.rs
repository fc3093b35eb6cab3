//! The shared fixtures live in `tacit-testkit`; this module names them for `mod common;`, and
//! holds the frozen-vector comparison every vector test uses.
#![allow(unused_imports, dead_code)]
#![allow(clippy::unwrap_used, clippy::panic)] // test code

pub use tacit_testkit::fixtures::*;

/// Set to `1`, it makes every frozen-vector comparison first rewrite its vector from what this
/// build writes. Only for a format change made on purpose: it breaks every copy stored before.
pub const WRITE_VECTORS: &str = "TACIT_WRITE_VECTORS";

/// Asserts that the vector at `path` is byte for byte `written`, what this build writes from the
/// vector's inputs; with `TACIT_WRITE_VECTORS=1`, writes `written` to `path` first.
pub fn assert_vector(path: &std::path::Path, written: &[u8]) {
    if std::env::var_os(WRITE_VECTORS).is_some_and(|v| v == "1") {
        std::fs::write(path, written).unwrap();
    }
    let frozen = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        frozen == written,
        "{} is not what this build writes; if that is meant, {WRITE_VECTORS}=1 cargo test -p \
         wallet-core rewrites it",
        path.display()
    );
}

/// The bytes of a vault before `sealed_len` (header, wrapped key, seal nonce): what a vault frozen
/// by an older build shares with the one this build makes from the same seed and inputs, when
/// only the sealed profile's format has changed since. Such a vector is never rewritten.
pub const BEFORE_SEALED: usize = 127;
