//! The server on a real loopback socket: signing for an enrolled install, restarts with the same
//! key file and database, rotation by restart and by reload (SIGHUP's path), the read-header
//! timeout, the request timeout and graceful shutdown.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use signer::{AppState, Config, KeyStore, keygen, system_now};
use tacit_service::keyfile::rotate_file;
use wallet_core::receipt::verify;
use wallet_core::{KeySet, SignedReceipt, Timestamp};

/// A server signing with the key file at `path`, on the real clock, its database beside it.
fn start_from_file(path: &Path) -> TestServer {
    let keys = KeyStore::load(path).unwrap();
    TestServer::with_keys(path.parent().unwrap(), keys, Config::default())
}

/// Signs a payload issued now through the server, as the enrolled test install.
fn sign_now(server: &TestServer) -> SignedReceipt {
    let body = serde_json::to_vec(&payload_at(system_now().millis())).unwrap();
    let reply = signed_http(server.addr, &test_install(), "/v1/receipts", &body);
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
    assert_eq!(reply.headers["cache-control"], signer::KEYS_CACHE_CONTROL);
    KeySet::parse(&reply.body).unwrap()
}

fn verifies(receipt: &SignedReceipt, keys: &KeySet) -> Result<(), wallet_core::VerifyError> {
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
        signer::http1::fetch_key_set(&url).unwrap().key_set,
        published_keys(&server)
    );
    // A refusal over the wire is the same JSON.
    let reply = signed_http(
        server.addr,
        &test_install(),
        "/v1/receipts",
        b"{\"income\": 1}",
    );
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"], "invalid_payload");
    // And a forged request, as curl would send it, is refused before anything is read.
    let body = serde_json::to_vec(&payload_at(system_now().millis())).unwrap();
    let reply = http(server.addr, "POST", "/v1/receipts", Some(&body));
    assert_eq!(reply.status, 401);
    assert_eq!(reply.json()["error"], "unauthenticated");
    assert!(reply.headers.contains_key("www-authenticate"));
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

    // The enrolment lives in the database: the restarted server still knows the install.
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
    let (old, new) = rotate_file::<KeyStore>(&path, system_now()).unwrap();
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
fn rotation_takes_effect_on_reload_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signer.key");
    keygen(&path, system_now(), false).unwrap();
    let server = start_from_file(&path);
    let old_receipt = sign_now(&server);
    assert_eq!(published_keys(&server).keys.len(), 1);

    std::thread::sleep(Duration::from_millis(5));
    let (old, new) = rotate_file::<KeyStore>(&path, system_now()).unwrap();
    // Until the reload, the running server keeps its keys.
    assert_eq!(published_keys(&server).keys.len(), 1);
    // What SIGHUP calls.
    assert_eq!(server.state.reload_keys(&path).unwrap(), new);

    let keys = published_keys(&server);
    let ids: Vec<&str> = keys.keys.iter().map(|k| k.key_id.as_str()).collect();
    assert_eq!(ids, [new.as_str(), old.as_str()]);
    let new_receipt = sign_now(&server);
    assert_eq!(new_receipt.key_id, new);
    assert_eq!(verifies(&old_receipt, &keys), Ok(()));
    assert_eq!(verifies(&new_receipt, &keys), Ok(()));

    // A broken key file is refused and the keys in force stay.
    std::fs::write(&path, b"{}").unwrap();
    assert!(server.state.reload_keys(&path).is_err());
    assert_eq!(published_keys(&server), keys);
    assert_eq!(sign_now(&server).key_id, new);
    server.stop().unwrap();
}

#[test]
fn a_half_sent_request_head_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.limit_flags.header_read_timeout_secs = 1;
    config.limit_flags.request_timeout_secs = 30;
    let keys = KeyStore::from_signing_key(test_key(), Timestamp::from_millis(T0));
    let server = TestServer::with_keys(dir.path(), keys, config);
    let mut stream = TcpStream::connect(server.addr).unwrap();
    // The request line and one header, then nothing: a slowloris client.
    stream
        .write_all(b"POST /v1/receipts HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    // The server closes the connection (EOF, or a reset) without waiting for the rest.
    let _ = stream.read_to_end(&mut rest);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(10),
        "dropped after {waited:?}"
    );
    // Whatever it wrote (if anything) is not a served request.
    assert!(!String::from_utf8_lossy(&rest).contains("200 OK"));
    // A client that sends its head in time is served.
    assert_eq!(http(server.addr, "GET", "/healthz", None).status, 200);
    server.stop().unwrap();
}

#[test]
fn a_request_that_stalls_is_abandoned_with_a_json_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.limit_flags.request_timeout_secs = 1;
    let keys = KeyStore::from_signing_key(test_key(), Timestamp::from_millis(T0));
    let server = TestServer::with_keys(dir.path(), keys, config);
    let mut stream = TcpStream::connect(server.addr).unwrap();
    // A signed head that announces ten bytes of body and never sends them.
    let body = b"0123456789";
    let mut head = String::from(
        "POST /v1/receipts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: 10\r\nConnection: close\r\n",
    );
    for (name, value) in test_install().headers("POST", "/v1/receipts", system_now().millis(), body)
    {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
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
    let dir = tempfile::tempdir().unwrap();
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
    let mut config = Config::default();
    config.limit_flags.rate_limit_per_minute = 0;
    let mut server = TestServer::start(&dir.path().join("signer.db"), move |db| {
        AppState::new(keys, db, &config, slow_clock)
    });
    let addr = server.addr;
    let client = std::thread::spawn(move || {
        let body = serde_json::to_vec(&payload_at(T0)).unwrap();
        let headers = test_install().headers("POST", "/v1/receipts", T0, &body);
        http_with(addr, "POST", "/v1/receipts", &headers, Some(&body))
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
