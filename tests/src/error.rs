//! The harness's one error type: the DevTools client's, which also names what the harness itself
//! reports (Chromium or the built site missing, with what to do next; a page script that threw;
//! a page without WebMCP).

pub use tacit_devtools::{Error, Result};
