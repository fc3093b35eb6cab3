//! Drawing the page from the app's state. Every piece of text goes through `textContent`; no
//! raw profile value is drawn anywhere except the profile editor's own fields.

use capability_gate::gate::tool_name_of;
use capability_gate::tool::describe;
use capability_gate::{GrantState, ProposalState, RequestState, audit_registry};
use wallet_core::{Outcome, Timestamp};

use crate::app::{App, now};
use crate::credentials::proofs_left;
use crate::dom::{self, append, attr, button, el, fill};
use crate::person;
use crate::signer::{DEFAULT_SIGNER, Enrolment};
use wasm_bindgen::JsCast;

mod consent;
mod developer;
mod grants;
mod log;
mod proposals;
mod settings;

use consent::requests;
pub use developer::agent;
pub use grants::grants;
use log::{log, session_receipts};
use proposals::proposals;
use settings::{credentials, settings};

pub fn all(app: &App) {
    crate::actions::listen_once();
    session_receipts(app);
    status(app);
    settings(app);
    person::render(app);
    credentials(app);
    crate::editor::render(app);
    requests(app);
    grants(app);
    proposals(app);
    agent(app);
    log(app);
}

fn status(app: &App) {
    let unlocked = app.gate.is_unlocked();
    dom::set_pill(
        "lock-pill",
        if unlocked { "Unlocked" } else { "Locked" },
        if unlocked { "ok" } else { "" },
    );
    let tone = match app.detection.code() {
        "available" | "polyfilled" => "ok",
        "absent" | "superseded-api" | "scripted" => "warn",
        _ => "bad",
    };
    dom::set_pill(
        "webmcp-pill",
        &format!("WebMCP: {}", app.detection.code()),
        tone,
    );
    if let Some(p) = dom::by_id("webmcp-pill") {
        attr(&p, "title", &app.detection.describe());
    }
    let stored = app.stored.is_some();
    let editing = app.wallet.editor() == capability_gate::wallet::Editor::Open;
    dom::show("setup", !stored);
    dom::show("setup-actions", !stored);
    // The person's facts are on the page only while a new profile is made or the editor is
    // open ("Edit my facts"); otherwise not even the empty, disabled fields show.
    dom::show("facts", !stored || (unlocked && editing));
    dom::show("unlock", stored && !unlocked);
    dom::show("editor-actions", unlocked);
    dom::show("end-session-btn", unlocked);
    dom::show("backup", true);
    title(app);
}

/// How many requests and applications wait for the person's answer.
pub(crate) fn waiting_count(app: &App) -> usize {
    let requests = app
        .gate
        .requests()
        .filter(|r| r.state == RequestState::Held)
        .count();
    let proposals = app
        .gate
        .proposals()
        .filter(|p| p.state == ProposalState::Held)
        .count();
    requests + proposals
}

/// The tab's title: `(<n>) Tacit — a site is waiting` while n ≥ 1 requests or applications
/// wait for the person, else `Tacit wallet` (seen from another tab).
fn title(app: &App) {
    let text = title_for(waiting_count(app));
    if let Some(document) = dom::document()
        && document.title() != text
    {
        document.set_title(&text);
    }
}

pub(crate) fn title_for(waiting: usize) -> String {
    if waiting == 0 {
        "Tacit wallet".to_owned()
    } else {
        format!("({waiting}) Tacit \u{2014} a site is waiting")
    }
}

pub(crate) fn day(at: Timestamp) -> String {
    at.date_utc().to_string()
}

/// The "who is asking" line: verified (green) or not confirmed (warning).
pub(super) fn asker_line(verified: bool, text: &str) -> web_sys::Element {
    let line = el(
        "div",
        if verified {
            "asker verified"
        } else {
            "asker unconfirmed"
        },
        text,
    );
    attr(
        &line,
        "data-asker",
        if verified { "verified" } else { "unconfirmed" },
    )
}

pub(super) fn empty(text: &str) -> web_sys::Element {
    el("p", "empty", text)
}

thread_local! {
    static DRAWN: std::cell::RefCell<std::collections::BTreeMap<&'static str, String>> =
        std::cell::RefCell::default();
}

/// Whether a section must be redrawn: only when what it shows changed, so that a reason the
/// person is typing is not wiped by an agent's unrelated call.
pub(super) fn changed(section: &'static str, key: String) -> bool {
    DRAWN.with(|d| {
        let mut d = d.borrow_mut();
        if d.get(section) == Some(&key) {
            false
        } else {
            d.insert(section, key);
            true
        }
    })
}

/// A short stable hash of what a card was drawn from (its `data-key`).
pub(super) fn content_key(parts: &impl std::hash::Hash) -> String {
    use std::hash::Hasher;
    let mut hasher = std::hash::DefaultHasher::new();
    parts.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

pub fn clock(ms: i64) -> String {
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
    format!(
        "{:02}:{:02}:{:02}",
        d.get_hours(),
        d.get_minutes(),
        d.get_seconds()
    )
}
