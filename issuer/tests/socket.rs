//! The real server loop: a batch over a socket, a half-sent head dropped, a graceful shutdown
//! that frees the port.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tacit_issuer::{AppState, Attribute, Config, KeyStore};
use wallet_core::Timestamp;

/// One HTTP/1.1 request with `Connection: close`; returns the status and the body.
fn http(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let text = String::from_utf8(response).unwrap();
    let status: u16 = text[9..12].parse().unwrap();
    let (_, body) = text.split_once("\r\n\r\n").unwrap();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_over_a_socket_then_a_graceful_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let db = tacit_issuer::IssuerDb::open(&tacit_store::sqlite_url(&dir.path().join("i.db")))
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let origin = format!("http://{addr}");
    let mut config = Config {
        origin: Some(wallet_core::Origin::parse(&origin).unwrap()),
        attribute: Attribute::Income,
        ..Config::default()
    };
    config.limit_flags.header_read_timeout_secs = 1;
    let keys = KeyStore::new(issuer_key(), Timestamp::from_millis(0));
    let state = AppState::new(keys, db.clone(), &config, tacit_issuer::SystemClock).unwrap();
    db.add_person(&ana(), tacit_issuer::system_now())
        .await
        .unwrap();
    let now = tacit_issuer::system_now();
    let code = db
        .make_code("p-ana", now, now.plus_millis(60 * MINUTE))
        .await
        .unwrap()
        .code;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(tacit_issuer::serve(listener, state, async {
        let _ = stopped.await;
    }));

    let result = tokio::task::spawn_blocking(move || {
        let (status, nonce) = http(addr, "GET", "/v1/nonce", None);
        assert_eq!(status, 200);
        let nonce = nonce["nonce"].as_str().unwrap().to_owned();
        let key = holder(1);
        let entry = json!({ "jwk": jwk(&key), "proof": proof(&key, &origin, &nonce) });
        let (status, body) = http(
            addr,
            "POST",
            "/v1/credentials",
            Some(&json!({ "code": code.canonical(), "nonce": nonce, "holder_keys": [entry] })),
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["credentials"].as_array().unwrap().len(), 1);
        assert_eq!(body["issuer"], origin.as_str());
        // A half-sent head is dropped after the read-header timeout.
        let mut slow = TcpStream::connect(addr).unwrap();
        slow.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        slow.write_all(b"GET /v1/nonce HTTP/1.1\r\nhost: x\r\n")
            .unwrap();
        let started = std::time::Instant::now();
        let mut rest = Vec::new();
        let _ = slow.read_to_end(&mut rest);
        assert!(started.elapsed() < Duration::from_secs(8));
        assert!(!String::from_utf8_lossy(&rest).contains("200 OK"));
    })
    .await;
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    result.unwrap();
    // The port is free again.
    let again = tokio::net::TcpListener::bind(addr).await;
    assert!(again.is_ok(), "{again:?}");
}
