//! `tacit-devtools`: the DevTools client Tacit's tests and its MCP door share.

pub mod cdp;
pub mod chromium;

pub use cdp::{Cdp, Error, Event, Result, browser_ws_url};
