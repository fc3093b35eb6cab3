//! The one command-line check every binary of the workspace passes (issue 15): it parses its
//! command line with clap, so `--help` and `--version` answer on stdout with exit code 0 and do
//! nothing else, and an unknown flag is refused with clap's message on stderr and exit code 2.
//!
//! A crate's `tests/cli_help.rs` calls [`check`] once per binary, passing
//! `env!("CARGO_BIN_EXE_<bin>")`, the binary's name and `env!("CARGO_PKG_VERSION")` (the
//! version must be the *binary's* crate version, which only the calling crate knows).

use std::process::{Command, Output};

/// Runs `bin` with `args` (no `RUST_LOG`, so no log lines mix into the output) and waits for it.
///
/// # Panics
/// When the binary cannot be started.
pub fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|e| panic!("{bin} did not start: {e}"))
}

/// `--help` and `--version` exit 0 on stdout (`--version` prints exactly `"{name} {version}"`);
/// an unknown flag exits 2 naming it on stderr and prints nothing on stdout.
///
/// # Panics
/// When any of those does not hold (this is a test assertion).
pub fn check(bin: &str, name: &str, version: &str) {
    let help = run(bin, &["--help"]);
    let stdout = String::from_utf8_lossy(&help.stdout);
    assert_eq!(help.status.code(), Some(0), "{name} --help: {help:?}");
    assert!(stdout.contains("Usage:"), "{name} --help printed {stdout}");
    assert!(
        stdout.contains("--version"),
        "{name} --help printed {stdout}"
    );

    let shown = run(bin, &["--version"]);
    let stdout = String::from_utf8_lossy(&shown.stdout);
    assert_eq!(shown.status.code(), Some(0), "{name} --version: {shown:?}");
    assert_eq!(
        stdout.trim(),
        format!("{name} {version}"),
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    use std::panic::catch_unwind;
    use std::path::PathBuf;

    /// A shell script standing in for a binary, so the check itself can be attacked.
    fn script(dir: &std::path::Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        let mut file = std::fs::File::create(&path).unwrap();
        writeln!(file, "#!/bin/sh\n{body}").unwrap();
        drop(file);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// Behaves as a clap binary named `good` at version 1.2.3 would.
    const CLAP_LIKE: &str = r#"case "$1" in
  --help) echo "Usage: good [OPTIONS]"; echo "  -V, --version  Print version"; exit 0;;
  --version) echo "good 1.2.3"; exit 0;;
  *) echo "error: unexpected argument '$1' found" >&2; exit 2;;
esac"#;

    fn fails(bin: &std::path::Path, name: &str, version: &str) -> bool {
        let bin = bin.to_str().unwrap().to_owned();
        let (name, version) = (name.to_owned(), version.to_owned());
        catch_unwind(move || check(&bin, &name, &version)).is_err()
    }

    #[test]
    fn passes_a_clap_like_binary_and_refuses_every_way_of_breaking_it() {
        let dir = tempdir();
        let good = script(&dir, "good", CLAP_LIKE);
        assert!(!fails(&good, "good", "1.2.3"));
        // The version is the caller's crate version: another one is a failure.
        assert!(fails(&good, "good", "1.2.4"));
        assert!(fails(&good, "other", "1.2.3"));

        let broken = [
            // Does nothing, exits 0: no Usage, no version.
            "exit 0",
            // Help without a --version line.
            &CLAP_LIKE
                .replace("Print version", "Print it")
                .replace("-V, --version", "-V"),
            // Unknown flag accepted.
            &CLAP_LIKE.replace("exit 2", "exit 0"),
            // Unknown flag refused with the wrong code.
            &CLAP_LIKE.replace("exit 2", "exit 1"),
            // Unknown flag refused without naming it.
            &CLAP_LIKE.replace("unexpected argument '$1' found", "bad input"),
            // Unknown flag refused but something printed on stdout too.
            &CLAP_LIKE.replace("*) echo", "*) echo oops; echo"),
            // --help on stderr.
            &CLAP_LIKE.replace(
                "echo \"Usage: good [OPTIONS]\"; echo \"  -V, --version  Print version\"",
                "echo \"Usage: good [OPTIONS] --version\" >&2",
            ),
            // --help exits non-zero.
            &CLAP_LIKE.replace("Print version\"; exit 0", "Print version\"; exit 1"),
        ];
        for (i, body) in broken.iter().enumerate() {
            let bin = script(&dir, &format!("bad{i}"), body);
            assert!(
                fails(&bin, "good", "1.2.3"),
                "broken binary {i} passed: {body}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_binary_fails() {
        assert!(fails(
            std::path::Path::new("/nonexistent/tacit-no-such-binary"),
            "x",
            "0"
        ));
    }

    fn tempdir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "tacit-testkit-cli-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
