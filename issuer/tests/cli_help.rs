//! Issue 15: every binary of the issuer crate (`tacit-issuer`, `issuer-bench`) parses its command line with clap: `--help` and
//! `--version` answer without doing anything else, an unknown argument is refused with
//! clap's message and exit code 2. The check is `tacit_testkit::cli::check`, shared by every crate.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use tacit_testkit::cli::check;

#[test]
fn tacit_issuer_help_version_and_unknown_flags() {
    check(
        env!("CARGO_BIN_EXE_tacit-issuer"),
        "tacit-issuer",
        env!("CARGO_PKG_VERSION"),
    );
}

#[test]
fn issuer_bench_help_version_and_unknown_flags() {
    check(
        env!("CARGO_BIN_EXE_issuer-bench"),
        "issuer-bench",
        env!("CARGO_PKG_VERSION"),
    );
}
