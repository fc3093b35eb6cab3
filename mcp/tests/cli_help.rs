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

/// Issue 28, item 15: the door mirrors only origins the person names; with none it refuses to
/// start and says how to name one, and an origin that is not one is refused by name.
#[test]
fn tacit_mcp_refuses_to_start_without_a_named_origin() {
    let bin = env!("CARGO_BIN_EXE_tacit-mcp");
    let none = tacit_testkit::cli::run(bin, &["--devtools-port", "1"]);
    let stderr = String::from_utf8_lossy(&none.stderr);
    assert_eq!(none.status.code(), Some(2), "{none:?}");
    assert!(
        stderr.contains("--origin http://localhost:8080"),
        "{stderr}"
    );
    assert!(stderr.contains("does not start"), "{stderr}");
    assert!(none.stdout.is_empty());

    let path = tacit_testkit::cli::run(bin, &["--origin", "http://localhost:8080/wallet"]);
    assert_eq!(path.status.code(), Some(2), "{path:?}");
    assert!(String::from_utf8_lossy(&path.stderr).contains("use --page"));

    let shared = tacit_testkit::cli::run(
        bin,
        &[
            "--origin",
            "http://localhost:8080",
            "--origin",
            "https://localhost:8080",
        ],
    );
    assert_eq!(shared.status.code(), Some(2), "{shared:?}");
    assert!(String::from_utf8_lossy(&shared.stderr).contains("namespace `localhost_8080`"));
}
