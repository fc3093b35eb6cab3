//! End-to-end harness for Tacit: headless Chromium driven through the DevTools `WebMCP` domain,
//! the way a browser agent drives it.
//!
//! What it offers:
//! - [`server`]: a loopback-only static file server (pages addressed as `http://localhost:<port>`:
//!   WebAuthn needs a domain) that sends the wallet's security headers
//!   (`Origin-Agent-Cluster: ?1`, a CSP with `script-src 'self' 'wasm-unsafe-eval'`, `nosniff`,
//!   `no-store`) and the right MIME types for `.wasm` and `.js`. The demo uses it too.
//! - [`cdp`]: a small synchronous DevTools Protocol client (one websocket, flattened sessions,
//!   id-matched responses, an event queue).
//! - [`browser`]: launching Chromium with the WebMCP switch, pages with navigation, evaluation,
//!   real input events and screenshots, and the agent side of WebMCP (`toolsAdded`,
//!   `toolsRemoved`, `invokeTool` / `toolResponded`).
//! - [`signer_proc`], [`issuer_proc`], [`site_proc`]: the signer, credential issuers (a tax
//!   office, a civil registry) and relying-site servers, in process on loopback ports with
//!   databases of their own; the demo uses the issuers too.
//!
//! A wallet end-to-end test reads like this:
//! ```no_run
//! # fn main() -> tacit_e2e::Result<()> {
//! use std::time::Duration;
//! use serde_json::json;
//! let server = tacit_e2e::serve_site("wallet")?; // fails: "run `cargo xtask build-web` first"
//! let browser = tacit_e2e::Browser::launch()?; // fails with the apt-get command if absent
//! let mut page = browser.new_page()?;
//! page.enable_webmcp()?;
//! page.watch_csp()?;
//! page.navigate(&server.url("/"))?;
//! page.require_webmcp()?;
//! page.fill("#new-pass", "correct horse battery")?;
//! page.click("[data-action=create-profile]")?;
//! let tool = page.wait_tool("request_claims", Duration::from_secs(10))?;
//! let answer = page.invoke_tool(&tool.frame_id, &tool.name, json!({ "policy": {} }))?;
//! assert_eq!(answer.status, tacit_e2e::ToolStatus::Completed);
//! page.screenshot("after-request")?;
//! # Ok(()) }
//! ```
//!
//! What it refuses to do: skip. A missing Chromium, a missing WebMCP switch or a missing built
//! site is an error that names the command that fixes it, so a test can never pass by not running.

pub mod agent;
pub mod axe;
pub mod bridge_tab;
pub mod browser;
pub mod cdp;
mod error;
pub mod issuer_proc;
mod page;
pub mod relay_proc;
pub mod server;
pub mod signer_proc;
pub mod site_proc;
pub mod site_tab;
pub mod wallet;
mod webmcp;

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use browser::{Browser, LaunchOptions, Page};
pub use error::{Error, Result};
pub use page::{DESKTOP, PHONE, Viewport};
pub use server::StaticServer;
pub use webmcp::{ToolInfo, ToolResponse, ToolStatus};

/// The workspace root (the directory holding the root `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// The shared cargo target directory: `$CARGO_TARGET_DIR` if set, else `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                workspace_root().join(dir)
            }
        }
        None => workspace_root().join("target"),
    }
}

/// The directory of a site built by `cargo xtask build-web` (`target/site/<name>`), or an error
/// telling the reader to build it. `name` is `wallet` for the wallet page.
pub fn site_dir(name: &str) -> Result<PathBuf> {
    let dir = target_dir().join("site").join(name);
    if dir.join("index.html").is_file() {
        Ok(dir)
    } else {
        Err(Error::SiteMissing(format!(
            "{} has no index.html: run `cargo xtask build-web` first",
            dir.display()
        )))
    }
}

/// Serves a built site (see [`site_dir`]) on a free loopback port.
pub fn serve_site(name: &str) -> Result<StaticServer> {
    let dir = site_dir(name)?;
    Ok(StaticServer::start(dir)?)
}

/// Binds `addr`, retrying for a moment when a just-closed listener still holds the port.
pub(crate) async fn bind(addr: SocketAddr) -> io::Result<tokio::net::TcpListener> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(listener) => return Ok(listener),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// One browser test at a time within a test binary (hold the guard for the whole test): the
/// tests share fixed loopback ports and one Chromium's resources. A test that panicked while
/// holding it does not poison the rest.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where screenshots go: `target/screenshots/`.
pub fn screenshots_dir() -> PathBuf {
    target_dir().join("screenshots")
}
