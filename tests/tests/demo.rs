//! `cargo xtask demo --agent --auto-approve` as a person would run it (issue 29's "done when"):
//! the real demo binary starts every service on its loopback ports, pairs a headless Chromium
//! as the person's device (the vault, with a scripted stand-in for the person, announced as
//! such) with a second headless Chromium as the agent's (the bridge and the housing site), and
//! the agent's application is accepted. Uses the demo's fixed ports (8080–8095, 8787, 8791–8792):
//! it fails, saying which port, if a demo is already running.
//!
//! Fails, never skips, when Chromium or a built site is missing (run `cargo xtask build-web`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::process::Command;

#[test]
fn the_scripted_demo_pairs_a_second_browser_as_the_persons_device_and_the_site_accepts() {
    let out = Command::new(env!("CARGO_BIN_EXE_tacit-demo"))
        .args(["--agent", "--auto-approve"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the demo failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("two headless Chromiums on this machine"),
        "{stdout}"
    );
    assert!(
        stdout.contains("SCRIPTED STAND-IN FOR A PERSON"),
        "{stdout}"
    );
    let paired = stdout
        .lines()
        .find(|l| l.contains("paired: the vault and the bridge both show"))
        .unwrap_or_else(|| panic!("never paired:\n{stdout}"));
    assert!(
        paired.chars().filter(char::is_ascii_digit).count() == 6,
        "{paired}"
    );
    let answered = stdout
        .lines()
        .find(|l| l.starts_with("[agent] site answered: "))
        .unwrap_or_else(|| panic!("the site never answered:\n{stdout}"));
    let answer: serde_json::Value =
        serde_json::from_str(answered.trim_start_matches("[agent] site answered: ")).unwrap();
    assert_eq!(answer["result"]["accepted"], true, "{answer}");
    // The agent's calls are printed as it made them (on the bridge: the only page of the
    // wallet's tools in its browser).
    assert!(
        stdout.contains("→ request_claims"),
        "the agent asked nothing:\n{stdout}"
    );
    assert!(stdout.contains("stopped."), "{stdout}");
}
