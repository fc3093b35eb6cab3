//! The DevTools client: `tacit-devtools`, shared with the MCP door (`tacit-mcp`). Its errors
//! convert into the harness's [`crate::Error`] with the same variants.

pub use tacit_devtools::cdp::{COMMAND_TIMEOUT, Cdp, Event, browser_ws_url, http_get_local};
