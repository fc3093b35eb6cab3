//! A small, synchronous Chrome DevTools Protocol client, shared by the end-to-end harness
//! (`tacit-e2e`) and the MCP door (`tacit-mcp`).
//!
//! One websocket to the browser endpoint; pages are reached through flattened sessions
//! (`Target.attachToTarget {flatten: true}`, then every command carries `sessionId`). Commands
//! are matched to responses by id; everything else is an event and waits in a queue until a
//! caller takes it with [`Cdp::wait_event`] or [`Cdp::take_events`].
//!
//! ## Why not chromiumoxide
//! chromiumoxide 0.9.1 generates its protocol types from CDP revision r1566079
//! (`chromiumoxide_cdp::CURRENT_REVISION`), which has no `WebMCP` domain: its sources contain no
//! `WebMCP` at all. The tests' whole point is that domain, so we would be sending raw JSON
//! through it anyway, while paying for its async runtime, its code generation and a large build
//! on a 2-core machine. The protocol subset we need (about fifteen commands) fits in a few
//! hundred lines over `tungstenite` + `serde_json`, with untyped `Value`s that cannot lag behind
//! Chromium's schema.
//!
//! Reads use socket read timeouts, so the client is single-threaded and never blocks past a
//! deadline it was given.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

/// Result with the DevTools [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong driving Chromium over DevTools (the end-to-end harness's error too).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Chromium is not installed; the message carries the install command.
    #[error("{0}")]
    BrowserMissing(String),
    /// Chromium did not start, exited early, or gave no DevTools endpoint that could be reached.
    #[error("could not launch or reach Chromium: {0}")]
    Launch(String),
    /// The built site a test serves is absent; the message says to run `cargo xtask build-web`.
    #[error("{0}")]
    SiteMissing(String),
    /// A DevTools command answered with an error object.
    #[error("DevTools `{method}` failed: {message}")]
    Cdp {
        /// The command that failed.
        method: String,
        /// Chromium's error message (and data, if any).
        message: String,
    },
    /// The page threw (or rejected) while evaluating an expression.
    #[error("page script failed: {0}")]
    Js(String),
    /// Something did not happen in time.
    #[error("timed out after {after:?} waiting for {what}")]
    Timeout {
        /// What was awaited, in words.
        what: String,
        /// How long we waited.
        after: Duration,
    },
    /// The browser sent something this client does not understand, or closed the socket.
    #[error("unexpected DevTools message: {0}")]
    Protocol(String),
    /// The page lacks `document.modelContext`.
    #[error("{0}")]
    NoWebMcp(String),
    /// The DevTools websocket failed.
    #[error("DevTools websocket: {0}")]
    WebSocket(#[from] Box<tungstenite::Error>),
    /// A socket operation failed.
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
}

impl From<tungstenite::Error> for Error {
    fn from(e: tungstenite::Error) -> Self {
        Error::WebSocket(Box::new(e))
    }
}

/// Default time a command may take before it is reported as timed out.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// At most this many unclaimed events are kept; the oldest are dropped beyond it.
const MAX_QUEUED_EVENTS: usize = 10_000;

/// A DevTools event: `method`, `params`, and the session it came from (`None` = browser).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// For example `WebMCP.toolsAdded`.
    pub method: String,
    /// The event's parameters as sent.
    pub params: Value,
    /// The flattened session the event belongs to; `None` for browser-level events.
    pub session_id: Option<String>,
}

impl Event {
    fn is(&self, session: Option<&str>, method: &str) -> bool {
        self.method == method && self.session_id.as_deref() == session
    }
}

/// A connection to Chromium's browser DevTools endpoint.
#[derive(Debug)]
pub struct Cdp {
    socket: WebSocket<TcpStream>,
    next_id: u64,
    events: VecDeque<Event>,
    responses: HashMap<u64, Value>,
}

impl Cdp {
    /// Connects to `ws://127.0.0.1:<port>/devtools/browser/<id>`.
    pub fn connect(ws_url: &str) -> Result<Self> {
        let host_port = ws_url
            .strip_prefix("ws://")
            .and_then(|rest| rest.split('/').next())
            .ok_or_else(|| Error::Launch(format!("not a ws:// DevTools URL: {ws_url}")))?;
        let stream = TcpStream::connect(host_port)?;
        stream.set_nodelay(true)?;
        let (socket, _response) = tungstenite::client(ws_url, stream)
            .map_err(|e| Error::Launch(format!("websocket handshake with {ws_url} failed: {e}")))?;
        Ok(Self {
            socket,
            next_id: 1,
            events: VecDeque::new(),
            responses: HashMap::new(),
        })
    }

    /// Sends a command and waits up to [`COMMAND_TIMEOUT`] for its result.
    /// `session` is a flattened session id, or `None` for browser-level commands.
    pub fn send(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<Value> {
        self.send_timeout(session, method, params, COMMAND_TIMEOUT)
    }

    /// [`Cdp::send`] with an explicit timeout.
    pub fn send_timeout(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let mut command = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            command["sessionId"] = Value::from(session);
        }
        self.socket.send(Message::text(command.to_string()))?;
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(response) = self.responses.remove(&id) {
                return Self::result_of(method, response);
            }
            if !self.read_one(deadline)? {
                return Err(Error::Timeout {
                    what: format!("the answer to `{method}`"),
                    after: timeout,
                });
            }
        }
    }

    fn result_of(method: &str, response: Value) -> Result<Value> {
        if let Some(error) = response.get("error") {
            let mut message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(no message)")
                .to_owned();
            if let Some(data) = error.get("data") {
                message.push_str(&format!(" ({data})"));
            }
            return Err(Error::Cdp {
                method: method.to_owned(),
                message,
            });
        }
        Ok(response.get("result").cloned().unwrap_or(Value::Null))
    }

    /// Waits until an event `method` from `session` satisfies `accept`, and removes it from the
    /// queue. Events that arrived earlier are considered first, in order.
    pub fn wait_event(
        &mut self,
        session: Option<&str>,
        method: &str,
        mut accept: impl FnMut(&Value) -> bool,
        timeout: Duration,
    ) -> Result<Event> {
        let deadline = Instant::now() + timeout;
        let mut checked = 0;
        loop {
            while checked < self.events.len() {
                let hit = self
                    .events
                    .get(checked)
                    .is_some_and(|event| event.is(session, method) && accept(&event.params));
                if hit && let Some(event) = self.events.remove(checked) {
                    return Ok(event);
                }
                checked += 1;
            }
            if !self.read_one(deadline)? {
                return Err(Error::Timeout {
                    what: format!("event `{method}`"),
                    after: timeout,
                });
            }
        }
    }

    /// Reads whatever has already arrived, then removes and returns the queued events `method`
    /// (any method if `method` is empty, or a whole domain if it ends with `.`) from `session`.
    pub fn take_events(&mut self, session: Option<&str>, method: &str) -> Result<Vec<Event>> {
        self.pump(Duration::ZERO)?;
        let matches = |event: &Event| {
            event.session_id.as_deref() == session
                && (method.is_empty()
                    || event.method == method
                    || (method.ends_with('.') && event.method.starts_with(method)))
        };
        let mut taken = Vec::new();
        self.events.retain(|event| {
            if matches(event) {
                taken.push(event.clone());
                false
            } else {
                true
            }
        });
        Ok(taken)
    }

    /// Removes and returns every queued event, from every session, in arrival order.
    pub fn drain_events(&mut self) -> Vec<Event> {
        self.events.drain(..).collect()
    }

    /// Reads messages for up to `wait` (at least whatever is already buffered), queueing events.
    /// Returns whether anything arrived.
    pub fn pump(&mut self, wait: Duration) -> Result<bool> {
        let deadline = Instant::now() + wait;
        let mut any = false;
        while self.read_one(deadline)? {
            any = true;
        }
        Ok(any)
    }

    /// Reads one message unless `deadline` passes first. Returns false on timeout.
    fn read_one(&mut self, deadline: Instant) -> Result<bool> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        // A zero read timeout is an error for the OS; a millisecond is "whatever is buffered".
        let timeout = remaining.max(Duration::from_millis(1));
        self.socket.get_mut().set_read_timeout(Some(timeout))?;
        let message = match self.socket.read() {
            Ok(message) => message,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(false);
            }
            Err(e) => return Err(e.into()),
        };
        let text = match message {
            Message::Text(text) => text,
            Message::Close(frame) => {
                return Err(Error::Protocol(format!(
                    "browser closed DevTools socket: {frame:?}"
                )));
            }
            // Pings are answered by tungstenite; binary frames are not used by CDP.
            _ => return Ok(true),
        };
        let value: Value = serde_json::from_str(text.as_str())
            .map_err(|e| Error::Protocol(format!("not JSON ({e}): {text}")))?;
        if let Some(id) = value.get("id").and_then(Value::as_u64) {
            self.responses.insert(id, value);
        } else if let Some(method) = value.get("method").and_then(Value::as_str) {
            if self.events.len() >= MAX_QUEUED_EVENTS {
                self.events.pop_front();
            }
            self.events.push_back(Event {
                method: method.to_owned(),
                params: value.get("params").cloned().unwrap_or(Value::Null),
                session_id: value
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            });
        } else {
            return Err(Error::Protocol(text.to_string()));
        }
        Ok(true)
    }
}

/// The browser's websocket URL, read from `http://127.0.0.1:<port>/json/version` of a Chromium
/// started with `--remote-debugging-port=<port>`.
pub fn browser_ws_url(port: u16) -> Result<String> {
    let body = http_get_local(port, "/json/version")?;
    let info: Value = serde_json::from_str(&body)
        .map_err(|e| Error::Protocol(format!("/json/version is not JSON: {e}")))?;
    info.get("webSocketDebuggerUrl")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Error::Protocol(format!("no webSocketDebuggerUrl in {info}")))
}

/// A plain GET of DevTools' own HTTP endpoint on loopback (it keeps the connection open, so the
/// body is read by its Content-Length).
pub fn http_get_local(port: u16, path: &str) -> Result<String> {
    use std::io::{Read, Write};
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| {
        Error::Launch(format!(
            "no browser listens for DevTools on 127.0.0.1:{port} ({e}); start Chromium with \
             --remote-debugging-port={port}"
        ))
    })?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )?;
    let mut data = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if length > 1 << 20 {
                return Err(Error::Protocol(format!("{path}: answer too large")));
            }
            if data.len() >= end + 4 + length {
                return Ok(String::from_utf8_lossy(&data[end + 4..end + 4 + length]).into_owned());
            }
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(Error::Protocol(format!("{path}: connection closed early")));
        }
        data.extend_from_slice(&chunk[..n]);
    }
}
