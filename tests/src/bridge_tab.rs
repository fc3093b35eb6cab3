//! The bridge page (issue 29) as the agent's browser loads it, and the person's pairing of it
//! with their vault: the person reads the code the bridge shows and types it into the vault's
//! Settings → Pair a bridge, with real input events; both then show one fingerprint.

use std::time::Duration;

use serde_json::Value;

use crate::wallet::{Wallet, text_of};
use crate::{Browser, Error, Page, Result};

/// How long a pairing step may take.
pub const PAIR_WAIT: Duration = Duration::from_secs(20);

/// Opens the bridge page at `url` in a new tab of `browser`, with WebMCP tracking on, and waits
/// until it shows an offer or its pairing's state.
pub fn open<'b>(browser: &'b Browser, url: &str) -> Result<Page<'b>> {
    open_with(browser, url, &[])
}

/// As [`open`], with `scripts` evaluated in every new document of the tab before any of the
/// bridge's own (`Page.addScriptToEvaluateOnNewDocument`): the agent rewriting its own page.
pub fn open_with<'b>(browser: &'b Browser, url: &str, scripts: &[&str]) -> Result<Page<'b>> {
    let mut page = browser.new_page()?;
    for source in scripts {
        page.send(
            "Page.addScriptToEvaluateOnNewDocument",
            serde_json::json!({ "source": source }),
        )?;
    }
    page.enable_webmcp()?;
    page.navigate(url)?;
    page.require_webmcp()?;
    page.wait_for("!!document.body.dataset.state", PAIR_WAIT)?;
    Ok(page)
}

/// The bridge's state: `offering`, `connected` or `unreachable`.
pub fn state(bridge: &Page<'_>) -> Result<String> {
    Ok(bridge
        .eval("document.body.dataset.state || ''")?
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

/// Waits until the bridge's state is `want`.
pub fn wait_state(bridge: &Page<'_>, want: &str, timeout: Duration) -> Result<()> {
    bridge
        .wait_for(
            &format!("document.body.dataset.state === {}", Value::from(want)),
            timeout,
        )
        .map(|_| ())
}

/// The person pairs `bridge` with their `vault`: reads the bridge's code, types it into the
/// vault's pairing form and submits it (real input events), then waits until both are paired.
/// Returns the fingerprint both show; fails if they differ.
pub fn pair(vault: &Wallet<'_>, bridge: &Page<'_>) -> Result<String> {
    wait_state(bridge, "offering", PAIR_WAIT)?;
    let typed = text_of(bridge, "#typed");
    vault.front();
    vault.page.fill("#pair-code", &typed)?;
    vault.page.click("#pair-btn")?;
    vault.page.wait_for(
        "(document.getElementById('pair-msg')?.textContent || '').includes('Paired')",
        PAIR_WAIT,
    )?;
    wait_state(bridge, "connected", PAIR_WAIT)?;
    let fingerprint = text_of(bridge, "#fingerprint");
    let said = vault.text("#pair-msg");
    if fingerprint.is_empty() || !said.contains(&fingerprint) {
        return Err(Error::Js(format!(
            "the vault and the bridge show different pairings: {said:?} vs {fingerprint:?}"
        )));
    }
    Ok(fingerprint)
}
