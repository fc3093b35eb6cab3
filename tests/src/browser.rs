//! Headless Chromium, launched as WEBMCP.md prescribes, and pages to drive in it.
//!
//! [`Browser::launch`] starts `/usr/lib/chromium/chromium` (override with `TACIT_CHROMIUM`) with
//! a fresh profile directory, `--enable-blink-features=WebMCP` and `--remote-debugging-port=0`,
//! reads the DevTools endpoint from `<profile>/DevToolsActivePort` and connects. Dropping the
//! `Browser` closes Chromium (kills it if it does not exit) and deletes the profile.
//!
//! A [`Page`] is one tab attached through a flattened session. It navigates, evaluates,
//! clicks and types with real input events, waits for conditions, takes screenshots, measures
//! the JS heap (the `page` module), and plays the agent through the `WebMCP` domain (see the
//! `webmcp` module docs).

use std::cell::RefCell;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::cdp::{Cdp, Event};
use crate::error::{Error, Result};
use crate::webmcp::WebMcpState;

/// Where Debian's `chromium` package puts the real binary (the `/usr/bin` one is a wrapper).
pub const CHROMIUM: &str = "/usr/lib/chromium/chromium";
/// The command that installs Chromium and chromedriver on Debian.
pub const INSTALL_COMMAND: &str = "apt-get install -y chromium chromium-driver";
/// How long a navigation may take to fire `load`.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(30);

/// How to launch Chromium.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The binary; defaults to `$TACIT_CHROMIUM` or [`CHROMIUM`].
    pub chromium: PathBuf,
    /// Pass `--enable-blink-features=WebMCP` (default true; false for a browser without native
    /// WebMCP: detection, the pages' polyfill; see [`LaunchOptions::without_webmcp`]).
    pub webmcp: bool,
    /// Extra command-line switches, appended last.
    pub extra_args: Vec<String>,
    /// How long Chromium may take to open its DevTools port.
    pub startup_timeout: Duration,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        let chromium =
            std::env::var_os("TACIT_CHROMIUM").map_or_else(|| CHROMIUM.into(), Into::into);
        Self {
            chromium,
            webmcp: true,
            extra_args: Vec::new(),
            startup_timeout: Duration::from_secs(30),
        }
    }
}

/// How an in-page agent passes a tool's input to `document.modelContext.executeTool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputAs {
    /// A JS object (what native Chromium's `executeTool` takes).
    Object,
    /// JSON text (what `@mcp-b/webmcp-polyfill`'s `executeTool` takes).
    Text,
}

impl LaunchOptions {
    /// The defaults without `--enable-blink-features=WebMCP`: a Chromium with no
    /// `document.modelContext` of its own, as most people's is.
    pub fn without_webmcp() -> Self {
        Self {
            webmcp: false,
            ..Self::default()
        }
    }
}

/// Is this process running as root? (Reads `/proc/self/status`; false if unknown.)
pub fn running_as_root() -> bool {
    fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|uids| uids.split_whitespace().next())
            == Some("0")
    })
}

/// The message for a missing Chromium, naming the install command (with `sudo` if needed).
pub fn missing_browser_message(path: &Path) -> String {
    let command = if running_as_root() {
        INSTALL_COMMAND.to_owned()
    } else {
        format!("sudo {INSTALL_COMMAND}")
    };
    format!(
        "Chromium is not installed ({} does not exist); browser tests cannot run without it. \
         Install it with `{command}` (or run `cargo xtask ci`, which installs it when run as root).",
        path.display()
    )
}

/// A running headless Chromium. Closed and cleaned up on drop.
#[derive(Debug)]
pub struct Browser {
    cdp: RefCell<Cdp>,
    /// The Chromium this harness launched; `None` when attached to someone else's browser.
    child: Option<Child>,
    version: String,
    // Declared last: removed after the child is gone.
    profile: Option<TempDir>,
}

impl Browser {
    /// Launches Chromium with WebMCP enabled.
    pub fn launch() -> Result<Self> {
        Self::launch_with(LaunchOptions::default())
    }

    /// Launches Chromium with `options`.
    pub fn launch_with(options: LaunchOptions) -> Result<Self> {
        if !options.chromium.is_file() {
            return Err(Error::BrowserMissing(missing_browser_message(
                &options.chromium,
            )));
        }
        let profile = tempfile::Builder::new()
            .prefix("tacit-chromium-")
            .tempdir()?;
        let user_data = profile.path().join("profile");
        fs::create_dir_all(&user_data)?;
        let log_path = profile.path().join("chromium.log");
        let log = fs::File::create(&log_path)?;
        let mut args: Vec<String> = tacit_devtools::chromium::HEADLESS_ARGS
            .iter()
            .map(|a| (*a).to_owned())
            .collect();
        args.push(format!("--user-data-dir={}", user_data.display()));
        if options.webmcp {
            args.push(tacit_devtools::chromium::WEBMCP_ARG.to_owned());
        }
        args.push("--remote-debugging-port=0".to_owned());
        args.extend(options.extra_args.iter().cloned());
        let mut child = Command::new(&options.chromium)
            .args(&args)
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|e| Error::Launch(format!("{}: {e}", options.chromium.display())))?;
        let ws_url =
            match wait_for_endpoint(&mut child, &user_data, &log_path, options.startup_timeout) {
                Ok(url) => url,
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(e);
                }
            };
        let mut browser = Self::connect_ws(&ws_url)?;
        browser.child = Some(child);
        browser.profile = Some(profile);
        Ok(browser)
    }

    fn connect_ws(ws_url: &str) -> Result<Self> {
        let mut cdp = Cdp::connect(ws_url)?;
        let version = cdp.send(None, "Browser.getVersion", json!({}))?;
        let version = version
            .get("product")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_owned();
        Ok(Self {
            cdp: RefCell::new(cdp),
            child: None,
            version,
            profile: None,
        })
    }

    /// Attaches to a Chromium someone else started with `--remote-debugging-port=<port>` (the
    /// person's own browser, as a browser agent would). Dropping the `Browser` leaves it open.
    pub fn connect(port: u16) -> Result<Self> {
        let body = http_get_local(port, "/json/version")?;
        let info: Value = serde_json::from_str(&body)
            .map_err(|e| Error::Protocol(format!("/json/version is not JSON: {e}")))?;
        let ws_url = info
            .get("webSocketDebuggerUrl")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::Protocol(format!("no webSocketDebuggerUrl in {info}")))?;
        Self::connect_ws(ws_url)
    }

    /// Attaches to an open tab whose URL starts with `url_prefix`, without taking it over:
    /// dropping the returned page leaves the tab open.
    pub fn attach(&self, url_prefix: &str) -> Result<Page<'_>> {
        let targets = self.send("Target.getTargets", json!({}))?;
        let target_id = targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| {
                t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.starts_with(url_prefix))
            })
            .and_then(|t| t["targetId"].as_str())
            .ok_or_else(|| Error::Protocol(format!("no open tab at {url_prefix}")))?
            .to_owned();
        let mut page = self.attach_target(target_id)?;
        page.owned = false;
        Ok(page)
    }

    /// Chromium's product string, e.g. `HeadlessChrome/156.0.8078.108`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The fresh profile directory of this run (`None` when attached to another browser).
    pub fn profile_dir(&self) -> Option<&Path> {
        self.profile.as_ref().map(TempDir::path)
    }

    /// Sends a browser-level command (no session).
    pub fn send(&self, method: &str, params: Value) -> Result<Value> {
        self.cdp.borrow_mut().send(None, method, params)
    }

    /// Opens a new tab on `about:blank`, attaches to it and enables `Page` and `Runtime`.
    pub fn new_page(&self) -> Result<Page<'_>> {
        let target = self.send("Target.createTarget", json!({ "url": "about:blank" }))?;
        let target_id = string_field(&target, "targetId")?;
        self.attach_target(target_id)
    }

    fn attach_target(&self, target_id: String) -> Result<Page<'_>> {
        let attached = self.send(
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        )?;
        let session_id = string_field(&attached, "sessionId")?;
        let mut page = Page {
            browser: self,
            target_id,
            session_id,
            frame_id: String::new(),
            webmcp: WebMcpState::default(),
            owned: true,
        };
        page.send("Page.enable", json!({}))?;
        page.send("Runtime.enable", json!({}))?;
        let tree = page.send("Page.getFrameTree", json!({}))?;
        page.frame_id = tree
            .pointer("/frameTree/frame/id")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                Error::Protocol(format!("Page.getFrameTree without a frame id: {tree}"))
            })?
            .to_owned();
        Ok(page)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let Some(child) = self.child.as_mut() else {
            return; // someone else's browser: leave it running
        };
        if let Ok(mut cdp) = self.cdp.try_borrow_mut() {
            let _ = cdp.send_timeout(None, "Browser.close", json!({}), Duration::from_secs(2));
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

fn wait_for_endpoint(
    child: &mut Child,
    user_data: &Path,
    log: &Path,
    timeout: Duration,
) -> Result<String> {
    let port_file = user_data.join("DevToolsActivePort");
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(text) = fs::read_to_string(&port_file) {
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next())
                && port.parse::<u16>().is_ok()
                && path.starts_with("/devtools/browser/")
            {
                return Ok(format!("ws://127.0.0.1:{port}{path}"));
            }
        }
        if let Some(status) = child.try_wait()? {
            return Err(Error::Launch(format!(
                "Chromium exited with {status} before opening DevTools; its log:\n{}",
                log_tail(log)
            )));
        }
        if Instant::now() >= deadline {
            return Err(Error::Launch(format!(
                "no DevToolsActivePort after {timeout:?}; Chromium's log:\n{}",
                log_tail(log)
            )));
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn log_tail(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

fn string_field(value: &Value, field: &str) -> Result<String> {
    value
        .get(field)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Error::Protocol(format!("expected `{field}` in {value}")))
}

/// One tab, attached through a flattened session. Borrowing the [`Browser`] keeps it alive.
#[derive(Debug)]
pub struct Page<'b> {
    browser: &'b Browser,
    target_id: String,
    session_id: String,
    frame_id: String,
    pub(crate) webmcp: WebMcpState,
    /// Opened by this harness (closed on drop) rather than attached to an existing tab.
    owned: bool,
}

impl Page<'_> {
    /// Sends a command to this page's session.
    pub fn send(&self, method: &str, params: Value) -> Result<Value> {
        self.browser
            .cdp
            .borrow_mut()
            .send(Some(&self.session_id), method, params)
    }

    /// Waits for this page's event `method` satisfying `accept`.
    pub fn wait_event(
        &self,
        method: &str,
        accept: impl FnMut(&Value) -> bool,
        timeout: Duration,
    ) -> Result<Event> {
        self.browser
            .cdp
            .borrow_mut()
            .wait_event(Some(&self.session_id), method, accept, timeout)
    }

    /// Removes and returns this page's queued events named `method` (a domain if it ends in `.`).
    pub fn take_events(&self, method: &str) -> Result<Vec<Event>> {
        self.browser
            .cdp
            .borrow_mut()
            .take_events(Some(&self.session_id), method)
    }

    pub(crate) fn pump(&self, wait: Duration) -> Result<bool> {
        self.browser.cdp.borrow_mut().pump(wait)
    }

    /// The DevTools target id of this tab.
    pub fn target_id(&self) -> &str {
        &self.target_id
    }

    /// The main frame's id (what `WebMCP.invokeTool` takes as `frameId` for top-level tools).
    pub fn frame_id(&self) -> &str {
        &self.frame_id
    }

    /// Navigates the tab to `url` and waits for its `load` event.
    pub fn navigate(&mut self, url: &str) -> Result<()> {
        self.forget_tools()?;
        self.take_events("Page.loadEventFired")?;
        let navigated = self.send("Page.navigate", json!({ "url": url }))?;
        if let Some(error) = navigated.get("errorText").and_then(Value::as_str) {
            return Err(Error::Cdp {
                method: "Page.navigate".into(),
                message: format!("{url}: {error}"),
            });
        }
        if let Some(frame) = navigated.get("frameId").and_then(Value::as_str) {
            self.frame_id = frame.to_owned();
        }
        self.wait_event("Page.loadEventFired", |_| true, LOAD_TIMEOUT)?;
        Ok(())
    }

    /// Reloads the tab and waits for `load`. Tools registered by the page vanish.
    pub fn reload(&mut self) -> Result<()> {
        self.forget_tools()?;
        self.take_events("Page.loadEventFired")?;
        self.send("Page.reload", json!({}))?;
        self.wait_event("Page.loadEventFired", |_| true, LOAD_TIMEOUT)?;
        Ok(())
    }

    /// Evaluates `js` in the page (awaiting a returned promise) and returns the result by value.
    /// A thrown error or rejected promise is [`Error::Js`] with its description.
    pub fn eval(&self, js: &str) -> Result<Value> {
        let reply = self.send(
            "Runtime.evaluate",
            json!({ "expression": js, "awaitPromise": true, "returnByValue": true, "userGesture": true }),
        )?;
        if let Some(details) = reply.get("exceptionDetails") {
            let text = details
                .pointer("/exception/description")
                .and_then(Value::as_str)
                .or_else(|| details.get("text").and_then(Value::as_str))
                .unwrap_or("exception");
            return Err(Error::Js(text.to_owned()));
        }
        Ok(reply
            .pointer("/result/value")
            .cloned()
            .unwrap_or(Value::Null))
    }

    /// Blocks requests to URLs matching `patterns` (DevTools `Network.setBlockedURLs`, `*` as a
    /// wildcard) from now on, for this tab: to see a page without a script it would load.
    pub fn block_urls(&self, patterns: &[&str]) -> Result<()> {
        self.send("Network.enable", json!({}))?;
        self.send("Network.setBlockedURLs", json!({ "urls": patterns }))?;
        Ok(())
    }

    /// Whether the page requested a resource whose URL ends with `suffix` (its
    /// `performance.getEntriesByType('resource')`).
    pub fn requested(&self, suffix: &str) -> Result<bool> {
        let js = format!(
            "performance.getEntriesByType('resource').some((e) => e.name.endsWith({suffix:?}))"
        );
        Ok(self.eval(&js)? == Value::Bool(true))
    }

    /// Polls `js_condition` every 50 ms until it is truthy; returns its value.
    pub fn wait_for(&self, js_condition: &str, timeout: Duration) -> Result<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let value = self.eval(js_condition)?;
            if truthy(&value) {
                return Ok(value);
            }
            if Instant::now() >= deadline {
                return Err(Error::Timeout {
                    what: format!("`{js_condition}` (last value {value})"),
                    after: timeout,
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Page<'_> {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        if let Ok(mut cdp) = self.browser.cdp.try_borrow_mut() {
            let params = json!({ "targetId": self.target_id });
            let _ = cdp.send_timeout(None, "Target.closeTarget", params, Duration::from_secs(2));
        }
    }
}

/// JavaScript truthiness of a by-value result.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0 && !n.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// A plain HTTP/1.1 GET to `127.0.0.1:<port><path>`; the body.
fn http_get_local(port: u16, path: &str) -> Result<String> {
    crate::cdp::http_get_local(port, path)
}
