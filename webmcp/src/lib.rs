//! The WebMCP host glue shared by the wallet page (`tacit-web`), the relying sites' pages
//! (`tacit-site`'s `web` module) and the gate's JS package (`tool-gate-js`).
//!
//! Only JavaScript plumbing lives here: finding `document.modelContext` and where it comes from,
//! reading an agent's input as JSON, handing an envelope (`{ok, result}` or
//! `{ok: false, isError: true, error}`) back as a plain object, registering a tool with an
//! `AbortController` of its own (withdrawn when the [`Registration`] is dropped), and routing a
//! call through a tool handle kept past its withdrawal, and (`socket`) the WebSocket the vault
//! and the bridge talk over the relay with. What a tool may do, and every refusal,
//! is decided in the pure crates (`capability-gate`, `tool-gate`).
//!
//! The pure parts ([`Source::decide`], [`parse_query`]) build and are tested on every target;
//! [`to_js`] builds everywhere (it only calls into JavaScript); the
//! rest is wasm32 only.

/// The vendored polyfill the pages load without native WebMCP (`vendor/webmcp-polyfill/`).
pub const POLYFILL: &str = "@mcp-b/webmcp-polyfill 5.1.0";

/// The global the pages' `webmcp.js` sets (read-only) to what it did: `native`, `polyfilled`,
/// `polyfill-failed` or `insecure-context`.
pub const MARKER: &str = "__tacitWebmcp";

/// What a page sees of WebMCP, read at once by `glue::observe` (capability-gate's `Seen`
/// decides from it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// `document.modelContext` is there.
    pub has_context: bool,
    /// Its getter is the browser's own (native code).
    pub native_getter: bool,
    /// What the page's loader marked in [`MARKER`], if anything.
    pub marker: Option<String>,
    /// A secure context (https or localhost).
    pub secure: bool,
    /// `navigator.modelContext.provideContext`, the API from before March 2026, is present.
    pub superseded_api: bool,
}

/// Where a page's `document.modelContext` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The browser's own (its getter is native code).
    Native,
    /// The vendored polyfill ([`POLYFILL`]), installed by the page's `webmcp.js` (which marks
    /// [`MARKER`] `= 'polyfilled'` only after it loaded).
    Polyfilled,
    /// Some other script's: neither the browser's nor the page's loader's.
    Scripted,
    /// No `document.modelContext`.
    Absent,
}

impl Source {
    /// Decides from what the page sees: whether `document.modelContext` exists, whether its
    /// getter is the browser's own, and what the loader marked. A marker a page script set cannot
    /// make a script-made context pass for native: native means the browser's own getter.
    pub fn decide(has_context: bool, native_getter: bool, marker: Option<&str>) -> Self {
        match (has_context, native_getter, marker) {
            (false, _, _) => Source::Absent,
            (true, true, _) => Source::Native,
            (true, false, Some("polyfilled")) => Source::Polyfilled,
            (true, false, _) => Source::Scripted,
        }
    }
}

/// Why a registration failed: the browser's (or the polyfill's) error, as `name: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// The value of `name` in a query string (`?a=1&b=2`, with or without the `?`), percent-decoded
/// by `decode`; the first occurrence wins. `None` when absent or undecodable.
pub fn parse_query(
    search: &str,
    name: &str,
    decode: impl Fn(&str) -> Option<String>,
) -> Option<String> {
    search
        .trim_start_matches('?')
        .split('&')
        .find_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            (key == name).then(|| decode(value))
        })
        .flatten()
}

/// JSON (an envelope `{ok, result}` / `{ok: false, isError: true, error}`, a tool definition) as
/// a plain JS object, built member by member: never a `Map` (which would stringify to `{}`), and
/// without serde_json's writer (which `tool-gate-js` keeps out of its package). It builds on
/// every target (for `tool-gate-js`'s native tests) but calls into JavaScript.
#[cfg(feature = "glue")]
pub fn to_js(value: &serde_json::Value) -> wasm_bindgen::JsValue {
    use js_sys::{Array, Object, Reflect};
    use serde_json::Value;
    use wasm_bindgen::JsValue;
    match value {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Number(n) => n.as_f64().map_or(JsValue::NULL, JsValue::from_f64),
        Value::String(s) => JsValue::from_str(s),
        Value::Array(items) => items.iter().map(to_js).collect::<Array>().into(),
        Value::Object(members) => {
            let object = Object::new();
            for (key, member) in members {
                let _ = Reflect::set(&object, &key.into(), &to_js(member));
            }
            object.into()
        }
    }
}

#[cfg(all(feature = "glue", target_arch = "wasm32"))]
mod glue;
#[cfg(all(feature = "glue", target_arch = "wasm32"))]
pub use glue::*;
#[cfg(all(feature = "glue", target_arch = "wasm32"))]
pub mod socket;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_browsers_own_getter_is_native() {
        assert_eq!(Source::decide(true, true, None), Source::Native);
        assert_eq!(
            Source::decide(true, true, Some("polyfilled")),
            Source::Native
        );
        assert_eq!(
            Source::decide(true, false, Some("polyfilled")),
            Source::Polyfilled
        );
        // A script that claims "native" in the marker is still a script.
        assert_eq!(
            Source::decide(true, false, Some("native")),
            Source::Scripted
        );
        assert_eq!(Source::decide(true, false, None), Source::Scripted);
        assert_eq!(
            Source::decide(false, true, Some("polyfilled")),
            Source::Absent
        );
        assert_eq!(Source::decide(false, false, None), Source::Absent);
    }

    #[test]
    fn query_values_are_found_by_exact_key_and_decoded() {
        let same = |v: &str| Some(v.to_owned());
        assert_eq!(
            parse_query("?latency=20&short_grants=1", "short_grants", same),
            Some("1".to_owned())
        );
        assert_eq!(
            parse_query("latency=20", "latency", same),
            Some("20".to_owned())
        );
        // A key that only starts with the name is another key.
        assert_eq!(parse_query("?latency_ms=5", "latency", same), None);
        // The first occurrence wins, even when it does not decode.
        assert_eq!(parse_query("?a=%&a=2", "a", |_| None), None);
        assert_eq!(parse_query("?a=1&a=2", "a", same), Some("1".to_owned()));
        assert_eq!(parse_query("?flag&a=1", "flag", same), None);
        assert_eq!(parse_query("", "a", same), None);
    }
}
