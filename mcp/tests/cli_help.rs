//! Issue 15: every binary of the MCP door (`tacit-mcp`) parses its command line with clap: `--help` and
//! `--version` answer without doing anything else, an unknown argument is refused with
//! clap's message and exit code 2. The check is `tacit_testkit::cli::check`, shared by every crate.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use tacit_testkit::cli::check;

#[test]
fn tacit_mcp_help_version_and_unknown_flags() {
    check(
        env!("CARGO_BIN_EXE_tacit-mcp"),
        "tacit-mcp",
        env!("CARGO_PKG_VERSION"),
    );
}
