//! The site page's WebMCP words: where `document.modelContext` comes from ([`detect`], through
//! `tacit_webmcp`) and the pill that says so ([`webmcp_note`]). Registering, reading the agent's
//! input and handing envelopes back are `tacit_webmcp`'s, shared with the wallet page.
//!
//! `document.modelContext` is the browser's own or, without native WebMCP, the vendored
//! `@mcp-b/webmcp-polyfill` that the page's `webmcp.js` loads before the wasm starts.

use js_sys::Promise;
use serde_json::Value;
pub use tacit_webmcp::{POLYFILL, Source as Detection, error_text, model_context, to_js};

/// A tool's behaviour: the agent's input as JSON in (`Err`: the sentence an unreadable or too
/// deeply nested input is refused with, `tacit_webmcp::input_json`'s), a Promise of the envelope
/// out.
pub type Run = fn(Result<Value, String>) -> Promise;

/// Where this page's `document.modelContext` comes from. A marker a page script set cannot make
/// a script-made context pass for native: native means the browser's own getter.
pub fn detect() -> Detection {
    tacit_webmcp::source()
}

/// Where polyfilled tools can be seen, said on the pill: the polyfill's registry lives in the
/// page's own scripts, so neither the DevTools `WebMCP` domain nor `tacit-mcp` sees them.
pub const POLYFILL_REACH: &str = "tools are visible to scripts in this page only, not to browser \
                                  agents over DevTools or to tacit-mcp";

/// The WebMCP pill's text and whether it is good news, with `registered` tools in the registry
/// `detection` found (for the page's `webmcp_note`).
pub fn webmcp_note(detection: Detection, registered: usize) -> (String, bool) {
    let tools = if registered == 1 { "tool" } else { "tools" };
    match detection {
        Detection::Native => (format!("WebMCP: {registered} {tools}"), true),
        Detection::Polyfilled => (
            format!(
                "WebMCP: polyfilled ({POLYFILL}), {registered} {tools} \u{2014} {POLYFILL_REACH}"
            ),
            true,
        ),
        Detection::Scripted => (
            format!("WebMCP from a page script (not the browser's): {registered} {tools}"),
            false,
        ),
        Detection::Absent => (
            "WebMCP absent: agents cannot reach this site's tools".to_owned(),
            false,
        ),
    }
}
