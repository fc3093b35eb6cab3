//! The wallet page as the tests see it: the person acts through the page's own UI (real clicks
//! and typing), the agent through the DevTools `WebMCP` domain.
//!
//! The page is at `http://localhost:<port>` ([`StaticServer::origin`]). Grant, Release and End
//! session act only after the person's confirmation ([`Wallet::confirm_act`]): by default the
//! passphrase typed again into the `#confirm` dialog ([`Confirm::Passphrase`], works in every
//! tab); [`Wallet::use_authenticator`] registers a DevTools virtual authenticator in Settings
//! instead ([`Confirm::Authenticator`], for tests with many acts). The profile editor is closed
//! while unlocked: [`Wallet::open_editor`] opens it with the passphrase before facts are read
//! or typed.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Browser, Page, StaticServer, ToolResponse, ToolStatus};

/// How long a UI change or a tool may take to appear in these tests.
pub const WAIT: Duration = Duration::from_secs(20);
/// The wallet page served on a free loopback port, and a Chromium with the WebMCP switch.
/// Panics (never skips) when either is missing, with the command that fixes it.
#[allow(clippy::unwrap_used)] // a test helper: failures are test failures
pub fn setup() -> (StaticServer, Browser) {
    let server = crate::serve_site("wallet").unwrap();
    let browser = Browser::launch().unwrap();
    (server, browser)
}

/// One browser test's hold on the machine: the lock that runs browser tests one at a time
/// ([`crate::serial`]), the wallet page served and a Chromium with the WebMCP switch
/// ([`setup`]). Dropped in the order a test's locals `_serial`, `(server, browser)` were: the
/// browser, then the server, then the lock.
#[derive(Debug)]
pub struct Session {
    pub browser: Browser,
    pub server: StaticServer,
    _serial: std::sync::MutexGuard<'static, ()>,
}

impl Session {
    /// Waits for the browser-test lock, then [`setup`].
    pub fn start() -> Self {
        let serial = crate::serial();
        let (server, browser) = setup();
        Self {
            browser,
            server,
            _serial: serial,
        }
    }

    /// A wallet tab at `/{query}` ([`Wallet::open`]).
    pub fn open(&self, query: &str) -> Wallet<'_> {
        Wallet::open(&self.browser, &self.server, query)
    }

    /// A wallet tab at `/{query}` in which the person has created the default profile
    /// ([`Wallet::create_profile`]).
    pub fn with_profile(&self, query: &str) -> Wallet<'_> {
        let wallet = self.open(query);
        wallet.create_profile();
        wallet
    }

    /// A wallet tab on an empty origin storage (what earlier tests of this session stored is
    /// cleared), in which the person creates a profile: 28,400.00 EUR, born 1990-02-28,
    /// Nordhafen, holding `condition`.
    #[allow(clippy::unwrap_used)] // a test helper: failures are test failures
    pub fn fresh_profile_with(&self, condition: &str) -> Wallet<'_> {
        let mut wallet = self.open("");
        wallet
            .page
            .eval("localStorage.clear(); sessionStorage.clear(); true")
            .unwrap();
        wallet.reload();
        wallet.create_profile_of("28,400.00", None, condition);
        wallet
    }
}

/// The passphrase the helpers create profiles with.
pub const PASS: &str = "correct horse battery staple";
/// The persistent tools, sorted.
pub const PERSISTENT: [&str; 5] = [
    "check_proposal",
    "check_request",
    "draft_application",
    "request_claims",
    "wallet_status",
];

/// A policy like the housing site's, from `origin`.
pub fn housing_policy(origin: &str, nonce: &str) -> Value {
    tacit_testkit::fixtures::housing_policy_at(origin, nonce)
}

/// The `code` of a refusal envelope; panics if `out` is not a refusal.
#[allow(clippy::panic)]
pub fn error_code(out: &Value) -> &str {
    if out["ok"] != false {
        panic!("expected a refusal: {out}");
    }
    out["error"]["code"].as_str().unwrap_or_default()
}

/// Waits until the wallet page's first view is drawn: the boot module (`web/boot`) has
/// registered the persistent tools and shown the create or unlock form; the app may not be
/// loaded yet.
#[allow(clippy::unwrap_used)] // a test helper: failures are test failures
pub fn wait_boot(page: &Page<'_>) {
    page.wait_for(
        "document.getElementById('app') && !document.getElementById('app').hidden",
        WAIT,
    )
    .unwrap();
}

/// Whether the wallet's app has started (`#app[data-stage=app]`).
pub const APP_STARTED: &str =
    "document.getElementById('app') && document.getElementById('app').dataset.stage === 'app'";

/// Waits for the first view, then moves the mouse over the page as a person arriving does
/// (a real `Input.dispatchMouseEvent`, a pointer move: no click, no focus), which loads the app,
/// and waits until the app has started.
#[allow(clippy::unwrap_used)] // a test helper: failures are test failures
pub fn wait_app(page: &Page<'_>) {
    wait_boot(page);
    page.send(
        "Input.dispatchMouseEvent",
        json!({ "type": "mouseMoved", "x": 2, "y": 2 }),
    )
    .unwrap();
    page.wait_for(APP_STARTED, WAIT).unwrap();
}

/// The text of the first element matching `selector` on `page` ("" if none).
#[allow(clippy::unwrap_used)] // a test helper: failures are test failures
pub fn text_of(page: &Page<'_>, selector: &str) -> String {
    let js = format!("(document.querySelector({selector:?}) || {{}}).textContent || ''");
    page.eval(&js)
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Waits until `selector`'s text on `page` contains `needle`; the panic shows what it shows.
#[allow(clippy::panic)] // a test helper: failures are test failures
pub fn wait_text(page: &Page<'_>, selector: &str, needle: &str) {
    let js = format!(
        "((document.querySelector({selector:?}) || {{}}).textContent || '').includes({needle:?})"
    );
    if let Err(e) = page.wait_for(&js, WAIT) {
        panic!(
            "{selector} never showed {needle:?} (it shows {:?}): {e}",
            text_of(page, selector)
        );
    }
}

/// The names `page`'s live registry lists, sorted.
#[allow(clippy::unwrap_used)] // a test helper: failures are test failures
pub fn tool_names(page: &mut Page<'_>) -> Vec<String> {
    let mut names: Vec<String> = page.tools().unwrap().into_iter().map(|t| t.name).collect();
    names.sort();
    names
}

/// The tool names of a `check_request` answer (`result.tools[].tool`), in its order.
#[allow(clippy::unwrap_used)] // a test helper: failures are test failures
pub fn granted_tools(out: &Value) -> Vec<String> {
    out["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].as_str().unwrap().to_owned())
        .collect()
}

/// What `window.tacit.tools()` (the page's own door when WebMCP is absent) lists: the tool
/// names, sorted, as JSON.
#[allow(clippy::unwrap_used)] // a test helper: failures are test failures
pub fn fallback_tool_names(page: &Page<'_>) -> Value {
    page.eval("window.tacit.tools().map(t => t.name).sort()")
        .unwrap()
}

/// `window.tacit.call(name, input)`'s answer (the page's own door when WebMCP is absent).
#[allow(clippy::unwrap_used)] // a test helper: failures are test failures
pub fn fallback_call(page: &Page<'_>, name: &str, input: &Value) -> Value {
    page.eval(&format!("window.tacit.call({name:?}, {input})"))
        .unwrap()
}

/// The `state` of each tool of a `check_request` answer (`result.tools[].state`), in order.
#[allow(clippy::unwrap_used)] // a test helper: failures are test failures
pub fn tool_states(out: &Value) -> Vec<&str> {
    out["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["state"].as_str().unwrap_or_default())
        .collect()
}

/// A tool call's response must be `Completed` (refusals are values); its output.
pub fn completed(name: &str, response: ToolResponse) -> Value {
    assert_eq!(
        response.status,
        ToolStatus::Completed,
        "{name}: {:?}",
        response.raw
    );
    response.output
}

/// The agent calls `name` on `page`; the call must complete. Its output.
#[allow(clippy::unwrap_used)] // a test helper: failures are test failures
pub fn call(page: &mut Page<'_>, name: &str, input: Value) -> Value {
    completed(name, page.call_tool(name, input).unwrap())
}

/// Puts `path` into the file input `selector` (as a person choosing it in the file dialog).
#[allow(clippy::unwrap_used)] // a test helper: failures are test failures
pub fn choose_file(page: &Page<'_>, selector: &str, path: &std::path::Path) {
    let document = page.send("DOM.getDocument", json!({})).unwrap();
    let root = document["root"]["nodeId"].as_i64().unwrap();
    let node = page
        .send(
            "DOM.querySelector",
            json!({ "nodeId": root, "selector": selector }),
        )
        .unwrap();
    page.send(
        "DOM.setFileInputFiles",
        json!({ "nodeId": node["nodeId"], "files": [path.to_str().unwrap()] }),
    )
    .unwrap();
}

/// The in-page agent keeps the tool object `getTools()` lists as `name` now, as
/// `window.__kept[slot]`; panics if it is not listed.
#[allow(clippy::unwrap_used)] // a test helper: failures are test failures
pub fn keep_tool(page: &Page<'_>, name: &str, slot: &str) {
    let js = format!(
        "(async () => {{ const t = (await document.modelContext.getTools()).find(t => \
         t.name === {name:?}); if (!t) return false; window.__kept = window.__kept || {{}}; \
         window.__kept[{slot:?}] = t; return true; }})()"
    );
    assert_eq!(page.eval(&js).unwrap(), true, "{name} not in getTools()");
}

/// `.credential[data-issuer="<origin>"]`: the credential list's entry for an issuer.
pub fn credential_selector(origin: &str) -> String {
    format!(
        ".credential[data-issuer=\"{}\"]",
        origin.trim_end_matches('/')
    )
}

/// How the person confirms Grant, Release and End session (the act a page script cannot do).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Confirm {
    /// The `#confirm` dialog: the passphrase typed again with real input into `#confirm-pass`,
    /// then a real click on `[data-action=confirm-ok]` (an Argon2 run, about a second, per act).
    /// Works in every tab of a profile; the default.
    #[default]
    Passphrase,
    /// A WebAuthn user-verifying assertion from this tab's DevTools virtual authenticator (its
    /// id), registered in Settings by [`Wallet::use_authenticator`]: no dialog, milliseconds per
    /// act. For tests with many acts.
    Authenticator(String),
}

/// `#confirm` is open.
pub const CONFIRM_OPEN: &str =
    "(() => { const d = document.getElementById('confirm'); return !!(d && d.open); })()";

/// `#delete-dialog` (the confirmation before deleting the profile) is open.
pub const DELETE_OPEN: &str =
    "(() => { const d = document.getElementById('delete-dialog'); return !!(d && d.open); })()";

/// The person's confirmation in `page` (a wallet tab): waits until the `#confirm` dialog is
/// open, types `pass` into `#confirm-pass` with real input and clicks
/// `[data-action=confirm-ok]` with a real click. Does not wait for the dialog to close (a wrong
/// passphrase keeps it open). An error if the page never asks.
pub fn type_confirmation(page: &Page<'_>, pass: &str) -> crate::Result<()> {
    page.wait_for(CONFIRM_OPEN, WAIT).map_err(|e| {
        crate::Error::Js(format!(
            "the page asked for no confirmation (no open #confirm dialog): {e}"
        ))
    })?;
    page.fill("#confirm-pass", pass)?;
    page.click("[data-action=confirm-ok]")?;
    Ok(())
}

/// [`type_confirmation`], then waits until the dialog has closed (the passphrase was right and
/// the act goes ahead); an error with `#confirm-msg` if it stays open.
pub fn confirm_with_passphrase(page: &Page<'_>, pass: &str) -> crate::Result<()> {
    type_confirmation(page, pass)?;
    let closed = format!("!{CONFIRM_OPEN}");
    page.wait_for(&closed, WAIT).map(|_| ()).map_err(|e| {
        let said = page
            .eval("(document.getElementById('confirm-msg') || {}).textContent || ''")
            .unwrap_or_default();
        crate::Error::Js(format!(
            "the confirmation dialog stayed open (it says {said}): {e}"
        ))
    })
}

/// The person ticks, with real clicks, every box of the card `card` (`#req-<id>` or
/// `#prop-<id>`) that can be ticked and is not ticked yet: a request's questions the memory
/// would answer, an application's answers. No box starts ticked (issue 30, item 6), so this
/// comes before Allow or Send. Waits until each box shows ticked; an error if one never does.
pub fn tick_all(page: &Page<'_>, card: &str) -> crate::Result<()> {
    page.wait_for(&format!("!!document.querySelector({card:?})"), WAIT)?;
    let boxes = page.eval(&format!(
        "[...document.querySelectorAll({card:?} + ' input[data-claim-index], ' + {card:?} + \
           ' input[data-item-index]')].filter((b) => !b.disabled && !b.checked && \
           !b.hasAttribute('data-declined') && b.getClientRects().length) \
           .map((b) => b.dataset.claimIndex !== undefined ? \
             'input[data-claim-index=\"' + b.dataset.claimIndex + '\"]' : \
             'input[data-item-index=\"' + b.dataset.itemIndex + '\"]')"
    ))?;
    for one in boxes.as_array().into_iter().flatten() {
        let selector = format!("{card} {}", one.as_str().unwrap_or_default());
        page.click(&selector)?;
        page.wait_for(
            &format!("document.querySelector({selector:?}).checked"),
            WAIT,
        )?;
    }
    Ok(())
}

/// [`tick_all`] if the person has ticked no box of `card` yet; a choice they made (some boxes
/// ticked, others not) is left as it is.
pub fn tick_if_none(page: &Page<'_>, card: &str) -> crate::Result<()> {
    page.wait_for(&format!("!!document.querySelector({card:?})"), WAIT)?;
    let none = page.eval(&format!(
        "![...document.querySelectorAll({card:?} + ' input[data-claim-index], ' + {card:?} + \
           ' input[data-item-index]')].some((b) => b.checked)"
    ))?;
    if none == json!(true) {
        tick_all(page, card)?;
    }
    Ok(())
}

/// The wallet page in one tab.
#[derive(Debug)]
pub struct Wallet<'b> {
    pub page: Page<'b>,
    /// How this tab's person confirms Grant, Release and End session.
    pub confirm: Confirm,
}

#[allow(clippy::unwrap_used, clippy::panic)] // a test helper: failures are test failures
impl<'b> Wallet<'b> {
    /// A wallet tab already open in `page`; the person confirms with the passphrase.
    pub fn new(page: Page<'b>) -> Self {
        Self {
            page,
            confirm: Confirm::Passphrase,
        }
    }

    /// Opens the wallet at `/{query}` with WebMCP tracking and CSP watching on.
    pub fn open(browser: &'b Browser, server: &StaticServer, query: &str) -> Self {
        Self::open_with(browser, server, query, &[])
    }

    /// As [`Wallet::open`], with `scripts` evaluated in every new document of the tab before
    /// any of the page's own (`Page.addScriptToEvaluateOnNewDocument`): a hostile script that
    /// got there first.
    pub fn open_with(
        browser: &'b Browser,
        server: &StaticServer,
        query: &str,
        scripts: &[&str],
    ) -> Self {
        let mut page = browser.new_page().unwrap();
        for source in scripts {
            page.send(
                "Page.addScriptToEvaluateOnNewDocument",
                json!({ "source": source }),
            )
            .unwrap();
        }
        page.enable_webmcp().unwrap();
        page.watch_csp().unwrap();
        page.navigate(&server.url(&format!("/{query}"))).unwrap();
        page.require_webmcp().unwrap();
        wait_app(&page);
        Self::new(page)
    }

    /// Reloads the tab and waits until the wallet's app is shown again (locked, or on the
    /// create-profile form).
    pub fn reload(&mut self) {
        self.page.reload().unwrap();
        wait_app(&self.page);
    }

    /// The text of the first element matching `selector` ("" if none).
    pub fn text(&self, selector: &str) -> String {
        text_of(&self.page, selector)
    }

    /// Whether the element with id `id` is hidden (its `hidden` property; panics if absent).
    pub fn hidden(&self, id: &str) -> Value {
        self.page
            .eval(&format!("document.getElementById({id:?}).hidden"))
            .unwrap()
    }

    /// Sets an input's or select's value and fires `change`.
    pub fn set(&self, id: &str, value: &str) {
        self.page
            .eval(&format!(
                "(() => {{ const e = document.getElementById({id:?}); e.value = {value:?}; \
                 e.dispatchEvent(new Event('change', {{bubbles: true}})); return e.value; }})()"
            ))
            .unwrap();
    }

    /// Waits until `selector`'s text contains `needle`.
    pub fn wait_text(&self, selector: &str, needle: &str) {
        wait_text(&self.page, selector, needle);
    }

    /// Brings this tab to the front (the person looks at the wallet).
    pub fn front(&self) {
        self.page.send("Page.bringToFront", json!({})).unwrap();
    }

    /// The person creates a profile: 28,400.00 EUR, born 1990-02-28, Nordhafen, asthma.
    pub fn create_profile(&self) {
        self.create_profile_with_income("28,400.00");
    }

    /// The same profile with another income, typed as a person would (`35,000.00`).
    pub fn create_profile_with_income(&self, income: &str) {
        self.create_profile_of(income, None, "asthma");
    }

    /// The profile with `income` (in `currency` when given, else the form's default EUR), born
    /// 1990-02-28, living in Nordhafen, with the one health condition `condition`.
    pub fn create_profile_of(&self, income: &str, currency: Option<&str>, condition: &str) {
        self.create_profile_as(PASS, income, currency, condition);
    }

    /// [`Wallet::create_profile_of`] with the passphrase `pass`, typed into both fields.
    pub fn create_profile_as(
        &self,
        pass: &str,
        income: &str,
        currency: Option<&str>,
        condition: &str,
    ) {
        self.front();
        self.page.fill("#new-pass", pass).unwrap();
        self.page.fill("#new-pass2", pass).unwrap();
        self.page.fill("#f-income", income).unwrap();
        if let Some(currency) = currency {
            self.page.select("#f-currency", currency).unwrap();
        }
        self.set("f-dob", "1990-02-28");
        self.set("f-district", "nordhafen");
        self.page
            .click(&format!("#f-conditions input[value={condition}]"))
            .unwrap();
        self.page.click("[data-action=create-profile]").unwrap();
        self.wait_text("#lock-pill", "Unlocked");
    }

    /// The person opens "Delete profile" and clicks "Delete profile and signer key…" (real
    /// clicks); waits until the delete dialog is open. Nothing is deleted yet.
    pub fn open_delete_dialog(&self) {
        self.front();
        let unfolded = "document.getElementById('delete-profile-box').open";
        if self.page.eval(unfolded).unwrap() != json!(true) {
            self.page.click("#delete-profile-box summary").unwrap();
        }
        self.page.click("[data-action=delete-profile]").unwrap();
        self.page.wait_for(DELETE_OPEN, WAIT).unwrap();
    }

    /// In the open delete dialog, the person types `pass` and clicks "Delete profile" (real
    /// input). Does not wait: a wrong passphrase keeps the dialog open.
    pub fn try_delete(&self, pass: &str) {
        self.page.fill("#delete-pass", pass).unwrap();
        self.page.click("[data-action=delete-confirm]").unwrap();
    }

    /// The person deletes the profile, confirming with [`PASS`] in the delete dialog; waits
    /// until the dialog has closed and the page says what was deleted.
    pub fn delete_profile(&self) {
        self.open_delete_dialog();
        self.try_delete(PASS);
        if let Err(e) = self.page.wait_for(&format!("!{DELETE_OPEN}"), WAIT) {
            panic!(
                "the delete dialog stayed open (it says {:?}): {e}",
                self.text("#delete-msg")
            );
        }
        self.wait_text("#profile-msg", "credentials and their keys");
    }

    /// The person types a passphrase and clicks Unlock.
    pub fn unlock(&self, pass: &str) {
        let shown = "(() => { const e = document.getElementById('unlock-pass'); \
                     return !!e && e.getClientRects().length > 0; })()";
        if let Err(e) = self.page.wait_for(shown, WAIT) {
            panic!(
                "no unlock field shows: {e} (lock pill {:?}, page says {:?})",
                self.text("#lock-pill"),
                self.text("#profile-msg")
            );
        }
        self.page.fill("#unlock-pass", pass).unwrap();
        self.page.click("[data-action=unlock]").unwrap();
    }

    /// The person unlocks with `pass`; waits until the lock pill says Unlocked.
    pub fn unlock_and_wait(&self, pass: &str) {
        self.unlock(pass);
        self.wait_text("#lock-pill", "Unlocked");
    }

    /// The stored vault record (`localStorage['tacit.vault.v1']`; null when there is none).
    pub fn stored_vault(&self) -> Value {
        self.page
            .eval("localStorage.getItem('tacit.vault.v1')")
            .unwrap()
    }

    /// The value of the input or select with id `id` (panics if absent).
    pub fn field(&self, id: &str) -> Value {
        self.page
            .eval(&format!("document.getElementById({id:?}).value"))
            .unwrap()
    }

    /// The first claim's box on the consent card of request `id`: `[disabled, checked,
    /// data-declined or ""]`, or null when the card has no such box.
    pub fn first_claim_box(&self, id: &str) -> Value {
        self.page
            .eval(&format!(
                "(() => {{ const b = document.querySelector('#req-{id} input[data-claim-index=\"0\"]'); \
                   return b ? [b.disabled, b.checked, b.dataset.declined || ''] : null; }})()"
            ))
            .unwrap()
    }

    /// `wallet_status`'s `locked` as the agent reads it.
    pub fn locked(&mut self) -> Value {
        self.call("wallet_status", json!({}))["result"]["locked"].clone()
    }

    /// Asserts that `check_request` reports every tool of request `id` expired.
    pub fn assert_request_expired(&mut self, id: &str) {
        let out = self.call("check_request", json!({ "request_id": id }));
        assert!(tool_states(&out).iter().all(|s| *s == "expired"), "{out}");
    }

    /// `#editor`'s `data-state` (`open`, `closed`, or "" if there is none).
    pub fn editor_state(&self) -> String {
        self.page
            .eval("(document.getElementById('editor') || {dataset: {}}).dataset.state || ''")
            .unwrap()
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The person opens the profile editor: types `pass` into `#editor-pass` and clicks
    /// `[data-action=open-editor]` (real input). Does not wait.
    pub fn try_open_editor(&self, pass: &str) {
        self.front();
        self.page.fill("#editor-pass", pass).unwrap();
        self.page.click("[data-action=open-editor]").unwrap();
    }

    /// The person opens the editor with the passphrase; waits until it is open and filled.
    pub fn open_editor(&self) {
        self.try_open_editor(PASS);
        let open = "(document.getElementById('editor') || {dataset: {}}).dataset.state === 'open'";
        if let Err(e) = self.page.wait_for(open, WAIT) {
            panic!(
                "the editor never opened: {e} (the page says {:?})",
                self.text("#profile-msg")
            );
        }
    }

    /// The person closes the editor; waits until it says closed.
    pub fn close_editor(&self) {
        self.front();
        self.page.click("[data-action=close-editor]").unwrap();
        self.page
            .wait_for(
                "(document.getElementById('editor') || {dataset: {}}).dataset.state === 'closed'",
                WAIT,
            )
            .unwrap();
    }

    /// The person opens the editor, types `income` over the income field and saves.
    pub fn edit_income(&self, income: &str) {
        self.open_editor();
        self.page.fill("#f-income", income).unwrap();
        self.page.click("[data-action=save-profile]").unwrap();
    }

    /// Waits until the page's `#confirm` dialog is open and returns what it says to the person.
    pub fn confirm_text(&self) -> String {
        self.page
            .wait_for(CONFIRM_OPEN, WAIT)
            .unwrap_or_else(|e| panic!("the page opened no confirmation dialog: {e}"));
        self.text("#confirm-text")
    }

    /// The person's act after a click on Grant, Release or End session, as [`Wallet::confirm`]
    /// says: the passphrase in the dialog, or nothing to do with the virtual authenticator.
    pub fn confirm_act(&self) {
        match &self.confirm {
            Confirm::Passphrase => {
                if let Err(e) = confirm_with_passphrase(&self.page, PASS) {
                    let shot = self.page.screenshot("confirm-failed");
                    panic!(
                        "{e}\n(page messages {:?} / {:?}; console {:?}; screenshot {shot:?})",
                        self.text("#profile-msg"),
                        self.text("#consent"),
                        self.page.console().unwrap_or_default()
                    );
                }
            }
            // automaticPresenceSimulation answers navigator.credentials.get by itself.
            Confirm::Authenticator(_) => {}
        }
    }

    /// Adds a virtual authenticator to this tab (DevTools `WebAuthn` domain: CTAP2, internal,
    /// resident keys, user verification, verified, presence simulated) and returns its id.
    pub fn add_virtual_authenticator(&self) -> String {
        self.page
            .send("WebAuthn.enable", json!({ "enableUI": false }))
            .unwrap();
        let added = self
            .page
            .send(
                "WebAuthn.addVirtualAuthenticator",
                json!({ "options": {
                    "protocol": "ctap2",
                    "transport": "internal",
                    "hasResidentKey": true,
                    "hasUserVerification": true,
                    "isUserVerified": true,
                    "automaticPresenceSimulation": true,
                } }),
            )
            .unwrap();
        added["authenticatorId"].as_str().unwrap().to_owned()
    }

    /// The person registers this device in Settings → "Confirm with this device" (the
    /// passphrase dialog first), with a virtual authenticator added to this tab; from then on
    /// Grant, Release and End session are confirmed by it. Waits until the page says it is on.
    pub fn use_authenticator(&mut self) {
        let id = self.add_virtual_authenticator();
        self.register_authenticator();
        self.confirm = Confirm::Authenticator(id);
    }

    /// Clicks `[data-action=register-authenticator]`, confirms with the passphrase and waits
    /// until `#authenticator-status` is `data-state="on"`.
    pub fn register_authenticator(&self) {
        self.front();
        self.page
            .click("[data-action=register-authenticator]")
            .unwrap();
        if let Err(e) = confirm_with_passphrase(&self.page, PASS) {
            panic!("{e}");
        }
        let on = "(document.getElementById('authenticator-status') || {dataset: {}}).dataset.state === 'on'";
        if let Err(e) = self.page.wait_for(on, WAIT) {
            panic!(
                "the authenticator was never registered: {e} (the page says {:?})",
                self.text("#authenticator")
            );
        }
    }

    /// Sets whether this tab's virtual authenticator verifies the user (`WebAuthn.setUserVerified`).
    pub fn set_user_verified(&self, verified: bool) {
        let Confirm::Authenticator(id) = &self.confirm else {
            panic!("no virtual authenticator in this tab: call use_authenticator first");
        };
        self.page
            .send(
                "WebAuthn.setUserVerified",
                json!({ "authenticatorId": id, "isUserVerified": verified }),
            )
            .unwrap();
    }

    /// The person clicks End session and confirms it.
    pub fn end_session(&self) {
        self.front();
        self.page.click("[data-action=end-session]").unwrap();
        self.confirm_act();
    }

    /// The agent calls a tool; the call must complete (refusals are values).
    pub fn call(&mut self, name: &str, input: Value) -> Value {
        call(&mut self.page, name, input)
    }

    /// The agent calls `name` until `done` holds.
    pub fn poll(&mut self, name: &str, input: Value, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let out = self.call(name, input.clone());
            if done(&out) {
                return out;
            }
            assert!(Instant::now() < deadline, "{name} never got there: {out}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The names in the live registry, sorted.
    pub fn tool_names(&mut self) -> Vec<String> {
        tool_names(&mut self.page)
    }

    /// The live claim tools.
    pub fn claim_tools(&mut self) -> Vec<String> {
        self.tool_names()
            .into_iter()
            .filter(|n| n.starts_with("claim."))
            .collect()
    }

    /// `request_claims` as the agent; waits until the page shows the request. Its id.
    pub fn request(&mut self, policy: Value) -> String {
        let out = self.call("request_claims", policy);
        assert_eq!(out["ok"], true, "{out}");
        assert_eq!(out["result"]["status"], "held");
        let id = out["result"]["request_id"].as_str().unwrap().to_owned();
        self.page
            .wait_for(&format!("!!document.getElementById('req-{id}')"), WAIT)
            .unwrap();
        id
    }

    /// The person's side of a grant of request `id` for `duration`: the duration chosen with
    /// real key presses, every question ticked with real clicks (unless they ticked some
    /// already), Allow clicked and confirmed. Does not wait for the agent's side.
    pub fn allow(&self, id: &str, duration: &str) {
        self.front();
        self.page.select(&format!("#dur-{id}"), duration).unwrap();
        tick_if_none(&self.page, &format!("#req-{id}")).unwrap();
        self.page
            .click(&format!("[data-action=grant][data-id={id}]"))
            .unwrap();
        self.confirm_act();
    }

    /// The person grants every claim of a request for `duration` (a `#dur-<id>` option value:
    /// `2000` with `?short_grants=1`, `60000`, `600000`, `3600000`, `once`); waits until the
    /// agent sees the `expect_tools` new tools. Their names.
    pub fn grant(&mut self, id: &str, duration: &str, expect_tools: usize) -> Vec<String> {
        self.allow(id, duration);
        let out = self.poll("check_request", json!({ "request_id": id }), |o| {
            o["result"]["status"] == "granted"
        });
        let names = granted_tools(&out);
        assert_eq!(names.len(), expect_tools);
        for name in &names {
            self.page.wait_tool(name, WAIT).unwrap();
        }
        names
    }

    /// The person enrols this browser with the signer at `signer` (its origin) using a one-time
    /// `code` from `tacit-signer enroll`, through the page's settings; waits until the page says
    /// it is enrolled.
    pub fn enrol(&self, signer: &str, code: &str) {
        self.front();
        self.page
            .wait_for(
                "(document.getElementById('signer-status') || {dataset: {}}).dataset.enrolled !== 'loading'",
                WAIT,
            )
            .unwrap();
        self.page.fill("#signer-origin", signer).unwrap();
        self.page.fill("#enrol-code", code).unwrap();
        self.page.click("[data-action=enrol]").unwrap();
        let enrolled = "document.getElementById('signer-status').dataset.enrolled === 'true'";
        if let Err(e) = self.page.wait_for(enrolled, WAIT) {
            panic!(
                "never enrolled with {signer}: {e} (the page says {:?} / {:?})",
                self.text("#signer-status"),
                self.text("#enrol-msg")
            );
        }
    }

    /// The person adds a credential (Settings → Credentials): types the issuer's URL and a
    /// one-time enrolment `code`, clicks add, and waits until the credential list shows the
    /// issuer. Panics with the page's message if it never does.
    pub fn add_credential(&self, issuer_url: &str, code: &str) {
        self.submit_credential(issuer_url, code);
        let origin = issuer_url.trim_end_matches('/');
        let shown = format!(
            "!!document.querySelector({:?})",
            credential_selector(origin)
        );
        if let Err(e) = self.page.wait_for(&shown, WAIT) {
            panic!(
                "the credential from {origin} never showed: {e} (the page says {:?}; list {:?})",
                self.text("#credential-msg"),
                self.text("#credential-list")
            );
        }
    }

    /// The person types the issuer's URL and a code and clicks add, without waiting for the
    /// outcome (see `#credential-msg`).
    pub fn submit_credential(&self, issuer_url: &str, code: &str) {
        self.front();
        self.page
            .wait_for("!!document.getElementById('issuer-url')", WAIT)
            .unwrap();
        self.page.fill("#issuer-url", issuer_url).unwrap();
        self.page.fill("#issuer-code", code).unwrap();
        self.page.click("[data-action=add-credential]").unwrap();
    }

    /// Whether the credential list shows a credential from `origin`.
    pub fn has_credential(&self, origin: &str) -> bool {
        let js = format!(
            "!!document.querySelector({:?})",
            credential_selector(origin)
        );
        self.page.eval(&js).unwrap() == json!(true)
    }

    /// The credential list's line for `origin` ("From Tax Office Nordstadt · valid until … · 7
    /// proofs left"); panics if there is none.
    pub fn credential_text(&self, origin: &str) -> String {
        assert!(self.has_credential(origin), "no credential from {origin}");
        self.text(&credential_selector(origin))
    }

    /// How many unused proofs the page says are left from `origin` (its `data-left`); panics
    /// if it shows no credential from `origin`.
    pub fn proofs_left(&self, origin: &str) -> usize {
        let js = format!(
            "(document.querySelector({:?}) || {{dataset: {{}}}}).dataset.left ?? null",
            credential_selector(origin)
        );
        let left = self.page.eval(&js).unwrap();
        match left.as_str().map(str::parse::<usize>) {
            Some(Ok(n)) => n,
            _ => panic!(
                "no credential from {origin} with a data-left ({left}); list {:?}",
                self.text("#credential-list")
            ),
        }
    }

    /// Waits until the page says `proofs` are left from `origin`.
    pub fn wait_proofs_left(&self, origin: &str, proofs: usize) {
        let js = format!(
            "(document.querySelector({:?}) || {{dataset: {{}}}}).dataset.left === '{proofs}'",
            credential_selector(origin)
        );
        if let Err(e) = self.page.wait_for(&js, WAIT) {
            panic!(
                "{origin} never showed {proofs} proofs left: {e} (list {:?})",
                self.text("#credential-list")
            );
        }
    }

    /// The approval card of `proposal` (before release, while its Release button shows): each
    /// item's provenance (`data-proof`: `issuer` or `self`) and text ("…: yes proven by Tax
    /// Office Nordstadt" or "…: yes your word").
    pub fn approval_items(&self, proposal: &str) -> Vec<(String, String)> {
        let release = format!("[data-action=release][data-id={proposal}]");
        let js = format!(
            "(() => {{ const b = document.querySelector({release:?}); \
             const card = b && b.closest('.item'); \
             if (!card) return null; \
             return [...card.querySelectorAll('.proposal-item')] \
               .map(li => [li.dataset.proof || '', li.textContent]); }})()"
        );
        let items = self.page.eval(&js).unwrap();
        let Some(items) = items.as_array() else {
            panic!("no approval card with a Release button for {proposal}");
        };
        items
            .iter()
            .map(|pair| {
                (
                    pair[0].as_str().unwrap_or_default().to_owned(),
                    pair[1].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    /// The agent drafts an application and the person releases it, confirming the "not
    /// confirmed" warning if the page shows one (an unsigned request, as these tests' hand-made
    /// policies are); the signer signs. The signed receipt. If the signer was unreachable (say,
    /// just restarted), the person presses "Ask the signer again" once, as the page offers.
    pub fn draft_and_release(&mut self, audience: &str, nonce: &str) -> Value {
        let proposal = self.draft(audience, nonce);
        self.release(&proposal, true);
        self.wait_signed(&proposal)
    }

    /// The agent drafts an application for `audience` and `nonce`; waits until the page shows
    /// its Release button. The proposal id.
    pub fn draft(&mut self, audience: &str, nonce: &str) -> String {
        let out = self.call(
            "draft_application",
            json!({ "audience": audience, "nonce": nonce }),
        );
        assert_eq!(out["result"]["status"], "held", "{out}");
        let proposal = out["result"]["proposal_id"].as_str().unwrap().to_owned();
        let release = format!("[data-action=release][data-id={proposal}]");
        self.page
            .wait_for(&format!("!!document.querySelector({release:?})"), WAIT)
            .unwrap();
        proposal
    }

    /// The person clicks Release on `proposal`, first ticking "I understand this site is not
    /// confirmed" if `acknowledge` and the page asks for it.
    pub fn release(&self, proposal: &str, acknowledge: bool) {
        self.front();
        let ack = format!("#ack-{proposal}");
        // Asks and is not ticked yet (a click on a ticked box would untick it).
        let asks = self
            .page
            .eval(&format!(
                "(() => {{ const a = document.querySelector({ack:?}); return !!a && !a.checked; }})()"
            ))
            .unwrap()
            == json!(true);
        if asks && acknowledge {
            self.page.click(&ack).unwrap();
        }
        tick_if_none(&self.page, &format!("#prop-{proposal}")).unwrap();
        let release = format!("[data-action=release][data-id={proposal}]");
        self.page.click(&release).unwrap();
        self.confirm_act();
    }

    /// Waits until `proposal` is released and signed; the signed receipt.
    pub fn wait_signed(&mut self, proposal: &str) -> Value {
        self.wait_signed_with_proofs(proposal).0
    }

    /// As [`Wallet::draft_and_release`], also returning the presentations `check_proposal`
    /// hands out beside the receipt (one per issuer-backed item; none if all are self-asserted).
    pub fn draft_release_prove(&mut self, audience: &str, nonce: &str) -> (Value, Vec<String>) {
        let proposal = self.draft(audience, nonce);
        self.release(&proposal, true);
        self.wait_signed_with_proofs(&proposal)
    }

    /// Waits until `proposal` is released and signed; the signed receipt and the presentations
    /// beside it (`check_proposal`'s `presentations`, empty if it has none).
    pub fn wait_signed_with_proofs(&mut self, proposal: &str) -> (Value, Vec<String>) {
        let out = self.wait_signed_output(proposal);
        let presentations = match &out["result"]["presentations"] {
            Value::Null => Vec::new(),
            Value::Array(list) => list
                .iter()
                .map(|p| p.as_str().unwrap().to_owned())
                .collect(),
            other => panic!("presentations is not a list of strings: {other}"),
        };
        (out["result"]["receipt"].clone(), presentations)
    }

    /// Waits until `proposal` is released and signed; `check_proposal`'s whole answer.
    pub fn wait_signed_output(&mut self, proposal: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        let mut asked_again = false;
        loop {
            let out = self.call("check_proposal", json!({ "proposal_id": proposal }));
            if out["result"]["signed"] == true {
                assert_eq!(out["result"]["status"], "released");
                return out;
            }
            let again = format!("[data-action=sign-again][data-id={proposal}]");
            let offered = self
                .page
                .eval(&format!("!!document.querySelector({again:?})"))
                .unwrap()
                == json!(true);
            let note = self.text("#proposals");
            if offered && !asked_again && note.contains("unreachable") {
                self.page.click(&again).unwrap();
                asked_again = true;
            }
            assert!(Instant::now() < deadline, "never signed: {out} / {note}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The person revokes the grant behind claim tool `tool`; waits until it is gone.
    pub fn revoke(&mut self, tool: &str) {
        let grant = tool.rsplit('.').next().unwrap_or_default();
        self.page
            .click(&format!("[data-action=revoke][data-id={grant}]"))
            .unwrap();
        self.page.wait_tool_gone(tool, WAIT).unwrap();
    }

    /// Fails if the page reported a CSP violation.
    pub fn assert_no_csp_violation(&self) {
        let violations = self.page.csp_violations().unwrap();
        assert!(violations.is_empty(), "{violations:?}");
    }
}
