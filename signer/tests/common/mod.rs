//! Test data and harnesses shared by the signer's integration tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::thread::JoinHandle;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use ed25519_dalek::SigningKey;
use signer::{AppState, Config, KeyStore};
use tower::ServiceExt;
use wallet_core::{
    Claim, ComparisonLog, Currency, GrantId, Hash, Money, Nonce, Origin, Outcome, ReceiptPayload,
    SessionId, Timestamp, ToolName,
};

pub const T0: i64 = 1_777_627_800_000; // 2026-05-01T09:30:00Z
pub const MINUTE: i64 = 60_000;
pub const HOUR: i64 = 60 * MINUTE;
pub const WALLET: &str = "http://127.0.0.1:8080";

/// A deterministic test key. Never used outside tests.
pub fn test_key() -> SigningKey {
    SigningKey::from_bytes(Hash::digest(b"tacit/signer-test-key/v1").as_bytes())
}

pub fn other_key() -> SigningKey {
    SigningKey::from_bytes(Hash::digest(b"tacit/signer-test-key/other").as_bytes())
}

/// The test key's secret as the key file spells it: must never show up in output.
pub fn test_secret_hex() -> String {
    hex::encode(test_key().to_bytes())
}

pub fn site() -> Origin {
    Origin::parse("https://housing.example").unwrap()
}

pub fn nonce() -> Nonce {
    Nonce::parse("n-4f1c2a9e7b3d").unwrap()
}

pub fn income_below(minor: u64) -> Claim {
    Claim::income_below(Money {
        amount_minor: minor,
        currency: Currency::parse("EUR").unwrap(),
    })
    .unwrap()
}

/// The housing session's log: two answers, asked at `at`.
pub fn session_log(at: i64) -> ComparisonLog {
    let mut log = ComparisonLog::new();
    for (claim, outcome) in [
        (income_below(3_000_000), Outcome::Satisfied),
        (Claim::age_at_least(18).unwrap(), Outcome::Satisfied),
    ] {
        log.append(
            Timestamp::from_millis(at),
            site(),
            ToolName::parse(&format!("tacit.claim.{}", claim.kind())).unwrap(),
            claim,
            outcome,
            GrantId::parse("g-housing-1").unwrap(),
        );
    }
    log
}

/// A payload issued at `issued_at`, valid for ten minutes.
pub fn payload_at(issued_at: i64) -> ReceiptPayload {
    ReceiptPayload::new(
        SessionId::parse("s-20260501-1").unwrap(),
        site(),
        nonce(),
        Timestamp::from_millis(issued_at),
        Timestamp::from_millis(issued_at + 10 * MINUTE),
        &session_log(issued_at - MINUTE),
    )
    .unwrap()
}

pub fn payload_json(issued_at: i64) -> serde_json::Value {
    serde_json::to_value(payload_at(issued_at)).unwrap()
}

/// A clock tests can move.
#[derive(Clone)]
pub struct TestClock(Arc<AtomicI64>);

impl TestClock {
    pub fn at(ms: i64) -> Self {
        Self(Arc::new(AtomicI64::new(ms)))
    }
    pub fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }
    pub fn closure(&self) -> impl Fn() -> Timestamp + Send + Sync + 'static {
        let inner = self.0.clone();
        move || Timestamp::from_millis(inner.load(Ordering::SeqCst))
    }
}

pub fn config() -> Config {
    Config::default()
}

/// State signing with the test key (active since a day before T0) at the clock's time.
pub fn state_with(config: &Config, clock: &TestClock) -> AppState {
    let keys = KeyStore::from_signing_key(test_key(), Timestamp::from_millis(T0 - 24 * HOUR));
    AppState::new(keys, config, clock.closure())
}

pub fn app_at(now: i64) -> Router {
    signer::app(state_with(&config(), &TestClock::at(now)))
}

/// A POST of `value` to /v1/receipts as the wallet sends it.
pub fn post_json(value: &serde_json::Value) -> Request<Body> {
    Request::post("/v1/receipts")
        .header("content-type", "application/json")
        .header("origin", WALLET)
        .body(Body::from(serde_json::to_vec(value).unwrap()))
        .unwrap()
}

/// Sends one request through the router; the body is parsed as JSON when there is one.
pub async fn send(
    app: &Router,
    request: Request<Body>,
) -> (StatusCode, HeaderMap, serde_json::Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let json = if bytes.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            panic!("not JSON: {}", String::from_utf8_lossy(&bytes));
        })
    };
    (status, headers, json)
}

/// Asserts the response is the JSON error `code` and returns its message.
pub fn assert_error(
    (status, headers, json): &(StatusCode, HeaderMap, serde_json::Value),
    want_status: StatusCode,
    code: &str,
) -> String {
    assert_eq!(*status, want_status, "{json}");
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(json["error"], code, "{json}");
    let object = json.as_object().unwrap();
    assert_eq!(object.len(), 2, "only error and message: {json}");
    json["message"].as_str().unwrap().to_owned()
}

/// A server on a real loopback socket, in its own runtime on its own thread.
pub struct TestServer {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    pub fn start(state: AppState) -> Self {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                signer::serve(listener, state, async move {
                    let _ = stopped.await;
                })
                .await
            })
        });
        let addr = addr_rx.recv().unwrap();
        Self {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Starts the graceful shutdown without waiting for it.
    pub fn begin_shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Shuts down gracefully and waits until the server has finished.
    pub fn stop(mut self) -> std::io::Result<()> {
        self.begin_shutdown();
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.begin_shutdown();
    }
}

/// A response read off a real socket.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// One blocking HTTP/1.1 exchange (`Connection: close`).
pub fn http(addr: SocketAddr, method: &str, path: &str, body: Option<&[u8]>) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(body) = body {
        request.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    if let Some(body) = body {
        stream.write_all(body).unwrap();
    }
    read_reply(&mut stream)
}

pub fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse_reply(&raw)
}

pub fn parse_reply(raw: &[u8]) -> Reply {
    let head = signer::http1::parse_head(raw).unwrap().unwrap();
    let text = std::str::from_utf8(&raw[..head.len]).unwrap();
    let headers = text
        .split("\r\n")
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let rest = &raw[head.len..];
    let body = match head.content_length {
        Some(n) => rest[..n].to_vec(),
        None => rest.to_vec(),
    };
    Reply {
        status: head.status,
        headers,
        body,
    }
}
