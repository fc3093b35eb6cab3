//! `tacit-signer` run as an operator runs it: keygen, rotate, refusals to start, SIGTERM.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

const BIN: &str = env!("CARGO_BIN_EXE_tacit-signer");

fn signer(args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command.args(args);
    for var in [
        "TACIT_SIGNER_LISTEN",
        "TACIT_SIGNER_KEY_FILE",
        "TACIT_SIGNER_ALLOWED_ORIGINS",
        "TACIT_SIGNER_RATE_LIMIT_PER_MINUTE",
        "TACIT_SIGNER_REQUEST_TIMEOUT_SECS",
        "TACIT_SIGNER_LOG",
    ] {
        command.env_remove(var);
    }
    command
}

/// Waits for a child that should exit by itself; kills it and fails after 30 s.
fn finish(mut child: Child) -> Output {
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("tacit-signer did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn run(args: &[&str]) -> Output {
    finish(
        signer(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn keygen_then_rotate_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("signer.key");
    let key_arg = key.to_str().unwrap();

    let out = run(&["keygen", "--key-file", key_arg]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("mode 0600"));
    assert_eq!(mode(&key), 0o600);
    let secret = std::fs::read_to_string(&key).unwrap();

    let again = run(&["keygen", "--key-file", key_arg]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stderr).contains("already exists"),
        "{}",
        text(&again.stderr)
    );

    let rotated = run(&["--key-file", key_arg, "rotate"]);
    assert!(rotated.status.success(), "{}", text(&rotated.stderr));
    let said = text(&rotated.stdout);
    assert!(
        said.contains("retired (still published)") && said.contains("restart"),
        "{said}"
    );
    assert_eq!(mode(&key), 0o600);
    assert_ne!(std::fs::read_to_string(&key).unwrap(), secret);
    // Nothing printed carries a secret.
    let secret_hex: serde_json::Value = serde_json::from_str(&secret).unwrap();
    let secret_hex = secret_hex["active"]["secret_key"].as_str().unwrap();
    for output in [&out, &again, &rotated] {
        assert!(!text(&output.stdout).contains(secret_hex));
        assert!(!text(&output.stderr).contains(secret_hex));
    }
}

#[test]
fn serve_refuses_to_start_without_a_key_file() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("missing.key");
    let out = run(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--key-file",
        key.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    assert!(said.contains("no key file"), "{said}");
    assert!(said.contains("tacit-signer keygen"), "{said}");
}

#[test]
fn serve_refuses_a_key_file_readable_by_others() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("signer.key");
    let key_arg = key.to_str().unwrap();
    assert!(run(&["keygen", "--key-file", key_arg]).status.success());
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    // Also via the environment variable, without the `serve` word.
    let out = finish(
        signer(&["--listen", "127.0.0.1:0"])
            .env("TACIT_SIGNER_KEY_FILE", key_arg)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    assert!(said.contains("readable by group or others"), "{said}");
    assert!(said.contains("chmod 600"), "{said}");
}

#[test]
fn serve_answers_then_exits_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("signer.key");
    let key_arg = key.to_str().unwrap();
    assert!(run(&["keygen", "--key-file", key_arg]).status.success());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let child = signer(&[
        "serve",
        "--listen",
        &listen,
        "--key-file",
        key_arg,
        "--log-level",
        "trace",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let addr = listen.parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "server never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    let health = http(addr, "GET", "/healthz", None);
    assert_eq!(health.status, 200);
    let body = serde_json::to_vec(&payload_at(signer::system_now().millis())).unwrap();
    assert_eq!(http(addr, "POST", "/v1/receipts", Some(&body)).status, 200);
    let refused = http(
        addr,
        "POST",
        "/v1/receipts",
        Some(b"{\"income\": 4242424242}"),
    );
    assert_eq!(refused.status, 422);

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = finish(child);
    assert!(out.status.success(), "{:?}", out.status);
    let log = text(&out.stderr);
    assert!(log.contains("tacit-signer listening"), "{log}");
    assert!(log.contains("shutting down"), "{log}");
    // Logs carry codes, never request bytes or the key, even at trace level.
    assert!(log.contains("invalid_payload"), "{log}");
    assert!(!log.contains("4242424242"), "{log}");
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(&key).unwrap()).unwrap();
    assert!(!log.contains(file["active"]["secret_key"].as_str().unwrap()));
}
