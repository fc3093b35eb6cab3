//! `tacit-signer` run as an operator runs it: keygen, rotate, refusals to start, SIGTERM.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
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
        "TACIT_SIGNER_HEADER_READ_TIMEOUT_SECS",
        "TACIT_SIGNER_PUBLIC_ORIGIN",
        "DATABASE_URL",
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

/// A temporary directory with a key `keygen` wrote to `signer.key` in it (asserted to succeed).
fn dir_with_key() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("signer.key");
    assert!(
        run(&["keygen", "--key-file", key.to_str().unwrap()])
            .status
            .success()
    );
    (dir, key)
}

/// Asserts the binary exited with code 1 and its stderr says each of `needles`.
fn assert_exits_1_saying(out: &Output, needles: &[&str]) {
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    for needle in needles {
        assert!(said.contains(needle), "{said}");
    }
}

/// `install` enrols with `code` over HTTP at `addr` (a signed `POST /v1/installs`).
fn enrol_over_http(addr: std::net::SocketAddr, install: &Install, code: &str) -> Reply {
    let body = serde_json::to_vec(&serde_json::json!({
        "code": code,
        "public_key": install.webcrypto_jwk(),
    }))
    .unwrap();
    signed_http(addr, install, "/v1/installs", &body)
}

/// Asserts the reply's status, showing its body when it differs.
fn assert_status(reply: &Reply, status: u16) {
    assert_eq!(
        reply.status,
        status,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
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
        said.contains("retired (still published)") && said.contains("SIGHUP"),
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
    assert_exits_1_saying(&out, &["no key file", "tacit-signer keygen"]);
}

#[test]
fn serve_refuses_a_key_file_readable_by_others() {
    let (_dir, key) = dir_with_key();
    let key_arg = key.to_str().unwrap();
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
    assert_exits_1_saying(&out, &["readable by group or others", "chmod 600"]);
}

/// Waits until `addr` accepts connections.
fn wait_listening(addr: std::net::SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "server never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn free_listen() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("127.0.0.1:{port}")
}

/// The operator's whole loop against a running server, on one database: enroll prints a code,
/// the wallet enrols with it over HTTP and signs, `installs` lists it, `revoke-install` stops it,
/// `rotate` + SIGHUP puts a new key in force with the old one still published, SIGTERM stops.
#[test]
fn serve_enroll_sign_revoke_rotate_then_exit_on_sigterm() {
    let (dir, key) = dir_with_key();
    let key_arg = key.to_str().unwrap();
    let listen = free_listen();
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
    wait_listening(addr);
    // The default database is a SQLite file beside the key file.
    assert!(dir.path().join("tacit-signer.db").exists());
    let health = http(addr, "GET", "/healthz", None);
    assert_eq!(health.status, 200);

    // Without enrolment nothing is signed, whoever asks.
    let body = serde_json::to_vec(&payload_at(signer::system_now().millis())).unwrap();
    let wallet = Install::fixed("cli-wallet");
    assert_eq!(http(addr, "POST", "/v1/receipts", Some(&body)).status, 401);
    let refused = signed_http(addr, &wallet, "/v1/receipts", &body);
    assert_eq!(refused.json()["error"], "unknown_install");

    // enroll, while the server runs, on its database.
    let enrolled = run(&[
        "enroll",
        "--key-file",
        key_arg,
        "--label",
        "Ana's laptop",
        "--valid-for",
        "10m",
    ]);
    assert!(enrolled.status.success(), "{}", text(&enrolled.stderr));
    let code = text(&enrolled.stdout).trim().to_owned();
    assert_eq!(code.len(), 19, "{code}");
    assert!(
        text(&enrolled.stderr).contains("valid until"),
        "{}",
        text(&enrolled.stderr)
    );
    let reply = enrol_over_http(addr, &wallet, &code);
    assert_status(&reply, 201);
    assert_eq!(reply.json()["install_id"], wallet.id().as_str());
    assert_eq!(reply.json()["signer_origin"], format!("http://{listen}"));
    // The code works once.
    let again = enrol_over_http(addr, &Install::fixed("cli-other"), &code);
    assert_eq!(again.status, 403);

    let signed = signed_http(addr, &wallet, "/v1/receipts", &body);
    assert_status(&signed, 200);
    let refused = signed_http(addr, &wallet, "/v1/receipts", b"{\"income\": 4242424242}");
    assert_eq!(refused.status, 422);

    // installs lists it with its label; revoke-install stops it.
    let listed = run(&["installs", "--key-file", key_arg]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let table = text(&listed.stdout);
    assert!(
        table.contains(wallet.id().as_str()) && table.contains("Ana's laptop"),
        "{table}"
    );
    let revoked = run(&[
        "revoke-install",
        wallet.id().as_str(),
        "--key-file",
        key_arg,
    ]);
    assert!(revoked.status.success(), "{}", text(&revoked.stderr));
    let after = signed_http(addr, &wallet, "/v1/receipts", &body);
    assert_eq!(after.status, 401);
    assert_eq!(after.json()["error"], "unknown_install");
    let twice = run(&[
        "revoke-install",
        wallet.id().as_str(),
        "--key-file",
        key_arg,
    ]);
    assert_eq!(twice.status.code(), Some(1));
    let listed = text(&run(&["installs", "--key-file", key_arg]).stdout);
    let row = listed
        .lines()
        .find(|l| l.contains(wallet.id().as_str()))
        .unwrap();
    assert!(!row.contains("  -  "), "revoked shows a time: {row}");

    // rotate, then SIGHUP: both keys published, no restart.
    let keys_before = signer::http1::fetch_key_set(&format!("http://{listen}/v1/keys"))
        .unwrap()
        .key_set;
    assert_eq!(keys_before.keys.len(), 1);
    assert!(run(&["--key-file", key_arg, "rotate"]).status.success());
    let hup = Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(hup.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let keys = signer::http1::fetch_key_set(&format!("http://{listen}/v1/keys"))
            .unwrap()
            .key_set;
        if keys.keys.len() == 2 {
            assert_eq!(keys.keys[1].key_id, keys_before.keys[0].key_id);
            break;
        }
        assert!(Instant::now() < deadline, "SIGHUP did not reload the keys");
        std::thread::sleep(Duration::from_millis(50));
    }

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = finish(child);
    assert!(out.status.success(), "{:?}", out.status);
    let log = text(&out.stderr);
    assert!(log.contains("tacit-signer listening"), "{log}");
    assert!(log.contains("reloaded the key file"), "{log}");
    assert!(log.contains("shutting down"), "{log}");
    // Logs carry codes, never request bytes, enrolment codes or the key, even at trace level.
    assert!(log.contains("invalid_payload"), "{log}");
    assert!(log.contains("unknown_install"), "{log}");
    assert!(!log.contains("4242424242"), "{log}");
    assert!(!log.contains(&code), "{log}");
    assert!(!log.contains(&code.replace('-', "")), "{log}");
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(&key).unwrap()).unwrap();
    assert!(!log.contains(file["active"]["secret_key"].as_str().unwrap()));
}

#[test]
fn enroll_refuses_a_bad_validity_and_revoke_an_unknown_install() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("elsewhere.db");
    let db_arg = db.to_str().unwrap();
    let out = run(&["enroll", "--database", db_arg, "--valid-for", "forever"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    // Out of bounds is a usage error, told by the flag's parser (the same bound as the issuer's).
    let out = run(&["enroll", "--database", db_arg, "--valid-for", "31d"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("30 days"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["revoke-install", "nobody", "--database", db_arg]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("installs"),
        "{}",
        text(&out.stderr)
    );
    // DATABASE_URL is read too.
    let out = finish(
        signer(&["installs"])
            .env("DATABASE_URL", tacit_store::sqlite_url(&db))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no wallet installs"),
        "{}",
        text(&out.stderr)
    );
}
