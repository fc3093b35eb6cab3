//! End-to-end tests driving headless Chromium through the DevTools `WebMCP` domain.
//!
//! Not built yet: issue 4 fills this crate.
