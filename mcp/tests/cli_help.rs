//! Issue 15: every binary of the MCP door (`tacit-mcp`) parses its command line with clap: `--help` and
//! `--version` answer without doing anything else, an unknown argument is refused with
//! clap's message and exit code 2.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::process::{Command, Output};

fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|e| panic!("{bin} did not start: {e}"))
}

/// `--help` and `--version` exit 0 on stdout; an unknown flag exits 2 naming it on stderr.
fn check(bin: &str, name: &str) {
    let help = run(bin, &["--help"]);
    let stdout = String::from_utf8_lossy(&help.stdout);
    assert_eq!(help.status.code(), Some(0), "{name} --help: {help:?}");
    assert!(stdout.contains("Usage:"), "{name} --help printed {stdout}");
    assert!(
        stdout.contains("--version"),
        "{name} --help printed {stdout}"
    );

    let version = run(bin, &["--version"]);
    let stdout = String::from_utf8_lossy(&version.stdout);
    assert_eq!(
        version.status.code(),
        Some(0),
        "{name} --version: {version:?}"
    );
    assert_eq!(
        stdout.trim(),
        format!("{name} {}", env!("CARGO_PKG_VERSION")),
        "{name} --version"
    );

    let unknown = run(bin, &["--no-such-flag"]);
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert_eq!(
        unknown.status.code(),
        Some(2),
        "{name} --no-such-flag: {unknown:?}"
    );
    assert!(
        stderr.contains("unexpected argument '--no-such-flag'"),
        "{name} --no-such-flag printed {stderr}"
    );
    assert!(
        unknown.stdout.is_empty(),
        "{name} printed on stdout when refusing"
    );
}

#[test]
fn tacit_mcp_help_version_and_unknown_flags() {
    check(env!("CARGO_BIN_EXE_tacit-mcp"), "tacit-mcp");
}
