//! The harness's one error type. Every message says what to do next where there is something to do.

use std::time::Duration;

/// Result with the harness [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while driving the browser.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Chromium is not installed; the message carries the install command.
    #[error("{0}")]
    BrowserMissing(String),
    /// Chromium started but did not give us a DevTools endpoint, or exited early.
    #[error("could not launch Chromium: {0}")]
    Launch(String),
    /// The built site is absent; the message says to run `cargo xtask build-web`.
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
    /// The browser sent something this client does not understand.
    #[error("unexpected DevTools message: {0}")]
    Protocol(String),
    /// The page lacks `document.modelContext`.
    #[error("{0}")]
    NoWebMcp(String),
    /// The DevTools websocket failed.
    #[error("DevTools websocket: {0}")]
    WebSocket(#[from] Box<tungstenite::Error>),
    /// A file or process operation failed.
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
}

impl From<tungstenite::Error> for Error {
    fn from(e: tungstenite::Error) -> Self {
        Error::WebSocket(Box::new(e))
    }
}

impl From<tacit_devtools::Error> for Error {
    fn from(e: tacit_devtools::Error) -> Self {
        use tacit_devtools::Error as D;
        match e {
            D::Launch(m) => Error::Launch(m),
            D::Cdp { method, message } => Error::Cdp { method, message },
            D::Timeout { what, after } => Error::Timeout { what, after },
            D::Protocol(m) => Error::Protocol(m),
            D::WebSocket(e) => Error::WebSocket(e),
            D::Io(e) => Error::Io(e),
        }
    }
}
