//! Test data and harnesses shared by the signer's integration tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::SigningKey;
use p256::ecdsa::signature::Signer;
use signer::{AppState, Config, Enrolment, KeyStore, SignerDb, enrol_code};
use tacit_protocol::request_auth::{
    HEADER_INSTALL, HEADER_SIGNATURE, HEADER_TIMESTAMP, InstallId, InstallKey, signing_input,
};
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
            None,
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
    pub fn now(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
    pub fn closure(&self) -> impl Fn() -> Timestamp + Send + Sync + 'static {
        let inner = self.0.clone();
        move || Timestamp::from_millis(inner.load(Ordering::SeqCst))
    }
}

pub fn config() -> Config {
    Config::default()
}

/// A wallet install: a P-256 key as WebCrypto would hold it, fixed per `tag`.
pub struct Install {
    pub key: p256::ecdsa::SigningKey,
}

impl Install {
    pub fn fixed(tag: &str) -> Self {
        let d = Hash::digest(format!("tacit/signer-test-install/{tag}").as_bytes());
        Self {
            key: p256::ecdsa::SigningKey::from_slice(d.as_bytes()).unwrap(),
        }
    }

    pub fn public(&self) -> InstallKey {
        InstallKey::from_verifying_key(*self.key.verifying_key())
    }

    pub fn id(&self) -> InstallId {
        self.public().id()
    }

    /// The JWK as WebCrypto exports it (with `ext` and `key_ops`).
    pub fn webcrypto_jwk(&self) -> serde_json::Value {
        let mut jwk = serde_json::to_value(self.public().to_jwk()).unwrap();
        jwk["ext"] = true.into();
        jwk["key_ops"] = serde_json::json!(["verify"]);
        jwk
    }

    /// The signature header's value for this request.
    pub fn signature(&self, method: &str, path: &str, ts: i64, body: &[u8]) -> String {
        let signature: p256::ecdsa::Signature = self
            .key
            .sign(signing_input(method, path, ts, body).as_bytes());
        URL_SAFE_NO_PAD.encode(signature.to_bytes())
    }

    /// The three authentication headers for this request.
    pub fn headers(
        &self,
        method: &str,
        path: &str,
        ts: i64,
        body: &[u8],
    ) -> Vec<(&'static str, String)> {
        vec![
            (HEADER_INSTALL, self.id().to_string()),
            (HEADER_TIMESTAMP, ts.to_string()),
            (HEADER_SIGNATURE, self.signature(method, path, ts, body)),
        ]
    }
}

/// The install every test app enrols.
pub fn test_install() -> Install {
    Install::fixed("wallet")
}

/// Enrols `install` in `db` directly (a code made and redeemed at `now`).
pub async fn enrol_directly(db: &SignerDb, install: &Install, label: &str, now: i64) {
    let now = Timestamp::from_millis(now);
    let code = enrol_code(db, label, Duration::from_secs(3600), now)
        .await
        .unwrap();
    assert_eq!(
        db.enrol(&code, &install.public(), now).await.unwrap(),
        Enrolment::Enrolled
    );
}

/// A fresh SQLite database in a temp dir.
pub async fn sqlite_db() -> (SignerDb, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = tacit_store::sqlite_url(&dir.path().join("signer.db"));
    (SignerDb::open(&url).await.unwrap(), dir)
}

/// State signing with the test key (active since a day before T0) at the clock's time.
pub fn state_on(db: SignerDb, config: &Config, clock: &TestClock) -> AppState {
    let keys = KeyStore::from_signing_key(test_key(), Timestamp::from_millis(T0 - 24 * HOUR));
    AppState::new(keys, db, config, clock.closure())
}

/// The router over a database with [`test_install`] enrolled, and what it takes to sign
/// requests for it. Derefs to the router.
pub struct TestApp {
    pub app: Router,
    pub state: AppState,
    pub clock: TestClock,
    pub install: Install,
    tick: AtomicI64,
    _dir: Option<tempfile::TempDir>,
}

impl Deref for TestApp {
    type Target = Router;
    fn deref(&self) -> &Router {
        &self.app
    }
}

impl TestApp {
    /// On a fresh SQLite file, clock at `now`.
    pub async fn sqlite(config: &Config, now: i64) -> Self {
        let (db, dir) = sqlite_db().await;
        Self::on(db, config, now, Some(dir)).await
    }

    /// On `db`, clock at `now`, with [`test_install`] enrolled.
    pub async fn on(
        db: SignerDb,
        config: &Config,
        now: i64,
        dir: Option<tempfile::TempDir>,
    ) -> Self {
        let install = test_install();
        enrol_directly(&db, &install, "test wallet", now).await;
        let clock = TestClock::at(now);
        let state = state_on(db, config, &clock);
        Self {
            app: signer::app(state.clone()),
            state,
            clock,
            install,
            tick: AtomicI64::new(0),
            _dir: dir,
        }
    }

    pub fn db(&self) -> &SignerDb {
        self.state.db()
    }

    /// A timestamp at the clock's time, one millisecond later each call, so that every signed
    /// request is distinct.
    pub fn next_ts(&self) -> i64 {
        self.clock.now() + self.tick.fetch_add(1, Ordering::SeqCst)
    }

    /// A POST of `body` to `path`, signed by `install` at a fresh timestamp, from the wallet's
    /// origin, with `content_type` when given.
    pub fn signed_by(
        &self,
        install: &Install,
        path: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Request<Body> {
        let mut request = Request::post(path).header("origin", WALLET);
        if let Some(value) = content_type {
            request = request.header("content-type", value);
        }
        for (name, value) in install.headers("POST", path, self.next_ts(), &body) {
            request = request.header(name, value);
        }
        request.body(Body::from(body)).unwrap()
    }

    /// A signed POST of raw JSON bytes to /v1/receipts.
    pub fn post_bytes(&self, body: Vec<u8>) -> Request<Body> {
        self.signed_by(
            &self.install,
            "/v1/receipts",
            Some("application/json"),
            body,
        )
    }

    /// A POST of `value` to /v1/receipts as the wallet sends it, signed.
    pub fn post_json(&self, value: &serde_json::Value) -> Request<Body> {
        self.post_bytes(serde_json::to_vec(value).unwrap())
    }
}

pub async fn app_at(now: i64) -> TestApp {
    TestApp::sqlite(&config(), now).await
}

/// A request rebuilt from parts so it can be sent twice (a replay).
pub async fn duplicate(request: Request<Body>) -> (Request<Body>, Request<Body>) {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let again = Request::from_parts(parts.clone(), Body::from(bytes.clone()));
    (Request::from_parts(parts, Body::from(bytes)), again)
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

/// A server on a real loopback socket, in its own runtime on its own thread, on a SQLite file
/// with [`test_install`] enrolled.
pub struct TestServer {
    pub addr: SocketAddr,
    pub db_url: String,
    pub state: AppState,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    /// Opens `db_path` in the server's runtime, enrols [`test_install`] (unless it is), and
    /// serves the state `make` builds.
    pub fn start(db_path: &Path, make: impl FnOnce(SignerDb) -> AppState + Send + 'static) -> Self {
        let db_url = tacit_store::sqlite_url(db_path);
        let url = db_url.clone();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let db = SignerDb::open(&url).await.unwrap();
                let state = make(db.clone());
                // Enrolled once per database (a restarted server finds it enrolled), at the
                // system clock's time so that a test clock is not read before the test's
                // requests.
                let install = test_install();
                if db.install_key(&install.id()).await.unwrap().is_none() {
                    enrol_directly(&db, &install, "test wallet", signer::system_now().millis())
                        .await;
                }
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                ready_tx
                    .send((listener.local_addr().unwrap(), state.clone()))
                    .unwrap();
                signer::serve(listener, state, async move {
                    let _ = stopped.await;
                })
                .await
            })
        });
        let (addr, state) = ready_rx.recv().unwrap();
        Self {
            addr,
            db_url,
            state,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// [`TestServer::start`] with `keys` under `config` on the system clock, the database in
    /// `dir`.
    pub fn with_keys(dir: &Path, keys: KeyStore, config: Config) -> Self {
        Self::start(&dir.join("signer.db"), move |db| {
            AppState::new(keys, db, &config, signer::SystemClock)
        })
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
    http_with(addr, method, path, &[], body)
}

/// A POST signed by `install` at the system clock's time.
pub fn signed_http(addr: SocketAddr, install: &Install, path: &str, body: &[u8]) -> Reply {
    let now = signer::system_now().millis();
    let headers = install.headers("POST", path, now, body);
    http_with(addr, "POST", path, &headers, Some(body))
}

/// One blocking HTTP/1.1 exchange with extra headers.
pub fn http_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, String)],
    body: Option<&[u8]>,
) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
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
