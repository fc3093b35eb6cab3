//! The server on a real loopback socket: signing, restarts with the same key file, rotation,
//! request timeout and graceful shutdown.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use common::*;
use signer::{AppState, Config, KeyStore, SystemClock, keygen, rotate_file, system_now};
use wallet_core::receipt::verify;
use wallet_core::{KeySet, SignedReceipt, Timestamp};

/// A server signing with the key file at `path`, on the real clock.
fn start_from_file(path: &Path) -> TestServer {
    let keys = KeyStore::load(path).unwrap();
    TestServer::start(AppState::new(keys, &Config::default(), SystemClock))
}

/// Signs a payload issued now through the server.
fn sign_now(server: &TestServer) -> SignedReceipt {
    let body = serde_json::to_vec(&payload_at(system_now().millis())).unwrap();
    let reply = http(server.addr, "POST", "/v1/receipts", Some(&body));
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    serde_json::from_slice(&reply.body).unwrap()
}

fn published_keys(server: &TestServer) -> KeySet {
    let reply = http(server.addr, "GET", "/v1/keys", None);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.headers["cache-control"], "public, max-age=300");
    KeySet::parse(&reply.body).unwrap()
}

fn verifies(receipt: &SignedReceipt, keys: &KeySet) -> Result<(), wallet_core::Error> {
    let now = Timestamp::from_millis(receipt.payload.issued_at.millis() + 1);
    verify(receipt, keys, &site(), &nonce(), now).map(|_| ())
}

#[test]
fn signs_and_publishes_keys_on_a_real_socket() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signer.key");
    keygen(&path, system_now(), false).unwrap();
    let server = start_from_file(&path);
    let health = http(server.addr, "GET", "/healthz", None);
    assert_eq!(health.status, 200);
    let receipt = sign_now(&server);
    assert_eq!(verifies(&receipt, &published_keys(&server)), Ok(()));
    // The verifier's own small client reads the same key set.
    let url = format!("http://{}/v1/keys", server.addr);
    assert_eq!(
        signer::http1::fetch_key_set(&url).unwrap(),
        published_keys(&server)
    );
    // A refusal over the wire is the same JSON.
    let reply = http(
        server.addr,
        "POST",
        "/v1/receipts",
        Some(b"{\"income\": 1}"),
    );
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"], "invalid_payload");
    server.stop().unwrap();
}

#[test]
fn restart_with_the_same_key_file_keeps_old_receipts_valid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signer.key");
    keygen(&path, system_now(), false).unwrap();

    let first = start_from_file(&path);
    let receipt = sign_now(&first);
    first.stop().unwrap();

    let second = start_from_file(&path);
    let keys = published_keys(&second);
    assert_eq!(verifies(&receipt, &keys), Ok(()));
    assert_eq!(sign_now(&second).key_id, receipt.key_id);
    second.stop().unwrap();
}

#[test]
fn rotation_between_restarts_keeps_old_receipts_valid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signer.key");
    keygen(&path, system_now(), false).unwrap();

    let before = start_from_file(&path);
    let old_receipt = sign_now(&before);
    before.stop().unwrap();

    // Rotate strictly after the old receipt was issued.
    std::thread::sleep(Duration::from_millis(5));
    let (old, new) = rotate_file(&path, system_now()).unwrap();
    assert_eq!(old, old_receipt.key_id);

    let after = start_from_file(&path);
    let new_receipt = sign_now(&after);
    assert_eq!(new_receipt.key_id, new);
    let keys = published_keys(&after);
    assert_eq!(keys.keys.len(), 2);
    assert_eq!(verifies(&old_receipt, &keys), Ok(()));
    assert_eq!(verifies(&new_receipt, &keys), Ok(()));
    after.stop().unwrap();
}

#[test]
fn a_request_that_stalls_is_abandoned_with_a_json_timeout() {
    let config = Config {
        request_timeout_secs: 1,
        ..Config::default()
    };
    let server = TestServer::start(state_with(&config, &TestClock::at(T0)));
    let mut stream = TcpStream::connect(server.addr).unwrap();
    // Announces ten bytes of body and never sends them.
    write!(
        stream,
        "POST /v1/receipts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: 10\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let reply = read_reply(&mut stream);
    assert_eq!(reply.status, 503);
    assert_eq!(reply.json()["error"], "timeout");
    server.stop().unwrap();
}

#[test]
fn graceful_shutdown_finishes_the_request_in_flight() {
    let (entered_tx, entered_rx) = std::sync::mpsc::channel::<()>();
    let entered_tx = std::sync::Mutex::new(Some(entered_tx));
    // The clock is read inside the request; the first read signals and then stalls, so the
    // request is certainly in flight when shutdown begins.
    let slow_clock = move || {
        if let Some(tx) = entered_tx.lock().unwrap().take() {
            tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(500));
        }
        Timestamp::from_millis(T0)
    };
    let keys = KeyStore::from_signing_key(test_key(), Timestamp::from_millis(T0 - HOUR));
    let config = Config {
        rate_limit_per_minute: 0,
        ..Config::default()
    };
    let mut server = TestServer::start(AppState::new(keys, &config, slow_clock));
    let addr = server.addr;
    let client = std::thread::spawn(move || {
        let body = serde_json::to_vec(&payload_at(T0)).unwrap();
        http(addr, "POST", "/v1/receipts", Some(&body))
    });
    entered_rx.recv_timeout(Duration::from_secs(30)).unwrap();
    server.begin_shutdown();
    let reply = client.join().unwrap();
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let receipt: SignedReceipt = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(receipt.payload, payload_at(T0));
    server.stop().unwrap();
    // The listener is closed.
    assert!(TcpStream::connect(addr).is_err());
}
