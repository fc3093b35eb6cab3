//! A loopback-only static file server with the headers the wallet page relies on.
//!
//! Every response (files, directory indexes and 404s alike) carries:
//! - `Origin-Agent-Cluster: ?1` — Chromium is origin-keyed by default, and `?0` makes
//!   `registerTool` throw `SecurityError`; other engines may need the explicit `?1`.
//! - `Content-Security-Policy` ([`content_security_policy`]) with `script-src 'self'
//!   'wasm-unsafe-eval'` exactly: no inline script, no `eval`, only our own modules and wasm
//!   compilation; `connect-src` to the page's own origin and the services this process runs
//!   (the signer, the issuers, the sites: [`allow_connect`]) and nothing else, so a script in
//!   the page cannot post what it read to another port; `frame-ancestors 'none'`, so no page
//!   can frame the wallet under a decoy.
//! - `X-Frame-Options: DENY` (the same for older engines) and `Permissions-Policy: tools=(self)`
//!   (WebMCP tools for the page itself only).
//! - `X-Content-Type-Options: nosniff` and `Cache-Control: no-store`.
//!
//! `.wasm` is served as `application/wasm` (needed by `WebAssembly.instantiateStreaming`) and
//! `.js`/`.mjs` as `text/javascript` (needed for module scripts under `nosniff`).
//!
//! [`app`] is the router (test it with `tower::ServiceExt::oneshot`), [`serve_dir`] runs it on a
//! tokio runtime, and [`StaticServer`] runs it on its own thread for synchronous tests.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::header::{self, HeaderName, HeaderValue};
use axum::middleware::{self, Next};
use axum::response::Response;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tower_http::services::ServeDir;

/// The Content-Security-Policy every response carries, with `{connect}` where the allowed
/// connection targets go ([`content_security_policy`]).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; \
     script-src 'self' 'wasm-unsafe-eval'; \
     style-src 'self'; \
     img-src 'self' data:; \
     connect-src 'self'{connect}; \
     object-src 'none'; \
     base-uri 'none'; \
     form-action 'self'; \
     frame-ancestors 'none'";

/// The origins the page may connect to besides its own: the services this process runs.
static CONNECT: std::sync::RwLock<std::collections::BTreeSet<String>> =
    std::sync::RwLock::new(std::collections::BTreeSet::new());

/// Lets pages served from now on connect to `origin` (`scheme://host:port`; a service this
/// process started). The test signer, issuers and sites call it when they start; a page loaded
/// before keeps the policy it was served with.
pub fn allow_connect(origin: &str) {
    let origin = origin.trim_end_matches('/');
    let plain = origin
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b":/.-[]".contains(&b));
    if plain && let Ok(mut list) = CONNECT.write() {
        list.insert(origin.to_owned());
    }
}

/// The policy as served now: [`CONTENT_SECURITY_POLICY`] with the origins [`allow_connect`] let
/// in (none: `connect-src 'self'`).
pub fn content_security_policy() -> String {
    let connect: String = CONNECT
        .read()
        .map(|list| list.iter().map(|o| format!(" {o}")).collect())
        .unwrap_or_default();
    CONTENT_SECURITY_POLICY.replace("{connect}", &connect)
}

/// The page's WebMCP permission: its own tools, never a frame's.
pub const PERMISSIONS_POLICY: &str = "tools=(self)";

/// The router: `dir` served as static files, with the security headers on every response.
pub fn app(dir: impl Into<PathBuf>) -> Router {
    Router::new()
        .fallback_service(ServeDir::new(dir.into()))
        .layer(middleware::from_fn(security_headers))
}

async fn security_headers(request: Request, next: Next) -> Response {
    let content_type = content_type_for(request.uri().path());
    let mut response = next.run(request).await;
    let is_file = response_is_file(response.status());
    let headers = response.headers_mut();
    if let Some(content_type) = content_type
        && is_file
    {
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    let fixed: [(HeaderName, &'static str); 5] = [
        (HeaderName::from_static("origin-agent-cluster"), "?1"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (
            HeaderName::from_static("permissions-policy"),
            PERMISSIONS_POLICY,
        ),
        (header::CACHE_CONTROL, "no-store"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    if let Ok(csp) = HeaderValue::from_str(&content_security_policy()) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    response
}

fn response_is_file(status: axum::http::StatusCode) -> bool {
    status.is_success() || status == axum::http::StatusCode::NOT_MODIFIED
}

/// The MIME types we pin rather than leave to guessing.
fn content_type_for(path: &str) -> Option<&'static str> {
    let extension = Path::new(path).extension()?.to_str()?;
    match extension {
        "wasm" => Some("application/wasm"),
        "js" | "mjs" => Some("text/javascript"),
        "webmanifest" => Some("application/manifest+json"),
        "svg" => Some("image/svg+xml"),
        "ico" => Some("image/x-icon"),
        _ => None,
    }
}

/// Stops a server started by [`serve_dir`]. Dropping it stops the server too.
#[derive(Debug)]
pub struct ShutdownHandle {
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<io::Result<()>>,
}

impl ShutdownHandle {
    /// Stops accepting connections and waits for the open ones to finish.
    pub async fn shutdown(mut self) -> io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match (&mut self.task).await {
            Ok(result) => result,
            Err(join) => Err(io::Error::other(join)),
        }
    }
}

/// Serves `dir` on `addr` (which must be a loopback address; port 0 picks a free port) on the
/// current tokio runtime. Returns the bound address and a handle that stops the server.
pub async fn serve_dir(
    dir: impl Into<PathBuf>,
    addr: SocketAddr,
) -> io::Result<(SocketAddr, ShutdownHandle)> {
    if !addr.ip().is_loopback() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to serve on {addr}: the static server is loopback-only"),
        ));
    }
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let (stop, stopped) = oneshot::channel::<()>();
    let router = app(dir);
    let task = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
    });
    Ok((
        bound,
        ShutdownHandle {
            stop: Some(stop),
            task,
        },
    ))
}

/// A static server on its own thread, for synchronous tests. Stops when dropped.
#[derive(Debug)]
pub struct StaticServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl StaticServer {
    /// Serves `dir` on `127.0.0.1` at a free port.
    pub fn start(dir: impl Into<PathBuf>) -> io::Result<Self> {
        Self::start_on(dir, SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
    }

    /// Serves `dir` on `addr` (loopback only).
    pub fn start_on(dir: impl Into<PathBuf>, addr: SocketAddr) -> io::Result<Self> {
        let dir = dir.into();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (bound_tx, bound_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("static-server {}", dir.display()))
            .spawn(move || {
                runtime.block_on(async move {
                    match serve_dir(dir, addr).await {
                        Ok((bound, handle)) => {
                            let _ = bound_tx.send(Ok(bound));
                            let _ = stopped.await;
                            // Idle keep-alive connections from the browser are dropped with the
                            // runtime below; do not wait for them here.
                            drop(handle);
                        }
                        Err(e) => {
                            let _ = bound_tx.send(Err(e));
                        }
                    }
                });
                runtime.shutdown_timeout(Duration::from_secs(1));
            })?;
        let addr = bound_rx
            .recv()
            .map_err(|_| io::Error::other("static server thread ended before binding"))??;
        Ok(Self {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://localhost:<port>` — the site's origin. The server listens on `127.0.0.1` only,
    /// but the page is addressed by the name `localhost`: WebAuthn needs a domain (an rpId), not
    /// an IP address, and `localhost` is a secure context. Browsers resolve `localhost` to
    /// loopback themselves. See [`StaticServer::ip_origin`] for the address form.
    pub fn origin(&self) -> String {
        format!("http://localhost:{}", self.addr.port())
    }

    /// `http://127.0.0.1:<port>` — the same server by address (another origin to the browser).
    pub fn ip_origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The absolute URL of `path` (with or without a leading `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.origin(), path.trim_start_matches('/'))
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
