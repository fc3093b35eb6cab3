//! The command line every headless Chromium of ours gets (tests, the MCP door's tests, the
//! wasm-bindgen test runner's `webdriver.json` written by `cargo xtask ci`), defined once.

/// Headless, sandbox off (containers run as root), no GPU, no background traffic.
pub const HEADLESS_ARGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// The switch that gives the page `document.modelContext` (WebMCP) in Chromium 146+.
pub const WEBMCP_ARG: &str = "--enable-blink-features=WebMCP";

/// [`HEADLESS_ARGS`] with [`WEBMCP_ARG`] first.
pub fn headless_with_webmcp() -> Vec<&'static str> {
    std::iter::once(WEBMCP_ARG)
        .chain(HEADLESS_ARGS.iter().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webmcp_is_on_and_headless_once() {
        let args = headless_with_webmcp();
        assert_eq!(args[0], WEBMCP_ARG);
        assert_eq!(args.iter().filter(|a| **a == "--headless").count(), 1);
        assert!(!HEADLESS_ARGS.contains(&WEBMCP_ARG));
    }
}
