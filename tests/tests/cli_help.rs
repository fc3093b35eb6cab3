//! Issue 15: every binary of the end-to-end crate (`tacit-demo`, `browser-bench`) parses its command line with clap: `--help` and
//! `--version` answer without doing anything else, an unknown argument is refused with
//! clap's message and exit code 2. The check is `tacit_testkit::cli::check`, shared by every crate.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use tacit_testkit::cli::{check, run};

#[test]
fn tacit_demo_help_version_and_unknown_flags() {
    check(
        env!("CARGO_BIN_EXE_tacit-demo"),
        "tacit-demo",
        env!("CARGO_PKG_VERSION"),
    );
}

#[test]
fn browser_bench_help_version_and_unknown_flags() {
    check(
        env!("CARGO_BIN_EXE_browser-bench"),
        "browser-bench",
        env!("CARGO_PKG_VERSION"),
    );
}

#[test]
fn tacit_demo_keeps_its_flag_rules() {
    let demo = env!("CARGO_BIN_EXE_tacit-demo");
    let help = run(demo, &["--help"]);
    let stdout = String::from_utf8_lossy(&help.stdout);
    for flag in ["--agent", "--auto-approve", "--pharmacy"] {
        assert!(stdout.contains(flag), "--help lacks {flag}: {stdout}");
    }
    // --auto-approve needs --agent (it was refused by hand before clap; now by clap, exit 2).
    let alone = run(demo, &["--auto-approve"]);
    assert_eq!(alone.status.code(), Some(2), "{alone:?}");
    assert!(String::from_utf8_lossy(&alone.stderr).contains("--agent"));
    // A value where none is taken is refused too.
    let valued = run(demo, &["--agent=yes"]);
    assert_eq!(valued.status.code(), Some(2), "{valued:?}");
}

#[test]
fn browser_bench_keeps_its_flag_rules() {
    let bench = env!("CARGO_BIN_EXE_browser-bench");
    let help = run(bench, &["--help"]);
    let stdout = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--out",
        "--hash-wasm",
        "--no-hash-wasm",
        "--unlocks",
        "--calls",
        "--expiries",
        "--revokes",
        "--loads",
        "--proofs",
    ] {
        assert!(stdout.contains(flag), "--help lacks {flag}: {stdout}");
    }
    for (shown, default) in [
        ("unlocks", 9),
        ("calls", 50),
        ("expiries", 50),
        ("revokes", 30),
    ] {
        assert!(
            stdout.contains(&format!("[default: {default}]")),
            "--{shown}'s default {default} missing: {stdout}"
        );
    }
    // The refusals happen before any browser starts: exit 2, each naming its flag.
    for (args, names) in [
        (&[][..], "--hash-wasm"),
        (&["--no-hash-wasm", "--unlocks", "0"][..], "--unlocks"),
        (&["--no-hash-wasm", "--calls", "many"][..], "--calls"),
        (
            &["--hash-wasm", "a.js", "--no-hash-wasm"][..],
            "--no-hash-wasm",
        ),
        (&["--no-hash-wasm", "--proofs=-1"][..], "--proofs"),
        (&["--no-hash-wasm", "--out"][..], "--out"),
    ] {
        let refused = run(bench, args);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {refused:?}");
        assert!(stderr.contains(names), "{args:?} printed {stderr}");
    }
}
