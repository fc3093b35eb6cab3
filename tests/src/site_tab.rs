//! A relying site's tab (housing or pharmacy, served by [`crate::site_proc::TestSite`]) as the
//! agent sees it: its requirements tool, and its submit tool, which the page lists only while a
//! nonce it handed out is open.

#![allow(clippy::unwrap_used, clippy::panic)] // a test helper: failures are test failures

use serde_json::{Value, json};

use crate::site_proc::TestSite;
use crate::wallet::{WAIT, completed, wait_text};
use crate::{Browser, Page};

/// The housing site's requirements and submit tools.
pub const HOUSING_TOOLS: (&str, &str) = ("housing_requirements", "housing_submit_application");
/// The pharmacy's requirements and checkout tools.
pub const PHARMACY_TOOLS: (&str, &str) = ("pharmacy_requirements", "pharmacy_checkout");

/// A relying site's tab.
#[derive(Debug)]
pub struct SiteTab<'b> {
    pub page: Page<'b>,
    /// The site's origin (`http://127.0.0.1:<port>`).
    pub origin: String,
    requirements_tool: &'static str,
    submit_tool: &'static str,
}

impl<'b> SiteTab<'b> {
    /// Opens the site's page at `/{query}` and waits for its requirements tool (`tools.0`).
    pub fn open(
        browser: &'b Browser,
        server: &TestSite,
        query: &str,
        tools: (&'static str, &'static str),
    ) -> Self {
        let mut page = browser.new_page().unwrap();
        page.enable_webmcp().unwrap();
        page.watch_csp().unwrap();
        page.navigate(&server.url(&format!("/{query}"))).unwrap();
        page.require_webmcp().unwrap();
        page.wait_for("!document.getElementById('app').hidden", WAIT)
            .unwrap();
        page.wait_tool(tools.0, WAIT).unwrap();
        Self {
            page,
            origin: server.origin(),
            requirements_tool: tools.0,
            submit_tool: tools.1,
        }
    }

    /// The requirements tool's result: the policy with a fresh nonce.
    pub fn requirements(&mut self) -> Value {
        let name = self.requirements_tool;
        let out = completed(name, self.page.call_tool(name, json!({})).unwrap());
        assert_eq!(out["ok"], true, "{out}");
        out["result"].clone()
    }

    /// The submit tool's name, once it is listed: the page offers it only while a nonce it
    /// handed out is open (its tool-gate), so an agent that finds it absent asks for the
    /// requirements first, as the requirements tool's description says.
    pub fn submit_tool_now(&mut self) -> &'static str {
        let name = self.submit_tool;
        if !self.page.tools().unwrap().iter().any(|t| t.name == name) {
            self.requirements();
            self.page.wait_tool(name, WAIT).unwrap();
        }
        name
    }

    /// The submit tool called with `input` as it stands; the call must complete.
    pub fn submit_input(&mut self, input: Value) -> Value {
        let name = self.submit_tool_now();
        completed(name, self.page.call_tool(name, input).unwrap())
    }

    /// The submit tool called with a receipt alone.
    pub fn submit(&mut self, receipt: &Value) -> Value {
        self.submit_input(json!({ "receipt": receipt }))
    }

    /// The submit tool called with a receipt and its credential presentations.
    pub fn submit_with_proofs(&mut self, receipt: &Value, presentations: &[String]) -> Value {
        self.submit_input(json!({ "receipt": receipt, "presentations": presentations }))
    }

    /// Waits until the status area shows `title` and `needle`; screenshots it as `shot`.
    pub fn shows(&self, title: &str, needle: &str, shot: &str) {
        wait_text(&self.page, "#status-title", title);
        wait_text(&self.page, "#status", needle);
        self.page.send("Page.bringToFront", json!({})).unwrap();
        self.page.screenshot(shot).unwrap();
    }

    /// No CSP violation, no uncaught error or console error on the page.
    pub fn assert_clean(&self) {
        assert_eq!(self.page.csp_violations().unwrap(), Vec::<String>::new());
        let console = self.page.console().unwrap();
        let bad: Vec<&String> = console
            .iter()
            .filter(|l| l.starts_with("uncaught") || l.starts_with("error"))
            .collect();
        assert!(bad.is_empty(), "console: {console:#?}");
    }
}
