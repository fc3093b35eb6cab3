//! Drawing the page from the app's state. Every piece of text goes through `textContent`; no
//! raw profile value is drawn anywhere except the profile editor's own fields.
//!
//! Drawing reads a [`View`] (the app's state, borrowed read-only) and depends on no other part
//! of the page's behaviour: `app` makes the view and calls here, never the reverse, and the
//! listeners that act on what is drawn are `actions`' (installed once at start).

use std::collections::{BTreeMap, VecDeque};

use capability_gate::gate::tool_name_of;
use capability_gate::tool::describe;
use capability_gate::wallet::Wallet;
use capability_gate::{Gate, ProposalId, Registry, RequestId};
use capability_gate::{GrantState, ProposalState, RequestState, audit_registry};
use wallet_core::store::StoredVault;
use wallet_core::{Outcome, Timestamp};

use crate::dom::{self, append, attr, button, el, fill};
use crate::host::{Detection, WebMcpHost};
use crate::signer::{DEFAULT_SIGNER, Enrolment};
use crate::state::{AskerCheck, Call, SessionReceipt};
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

/// What drawing reads: the app's state, borrowed, and the time it is drawn at.
pub struct View<'a> {
    pub gate: &'a Gate,
    pub registry: &'a Registry<WebMcpHost>,
    pub detection: &'a Detection,
    pub stored: Option<&'a StoredVault>,
    pub wallet: &'a Wallet,
    pub live_tools: &'a [serde_json::Value],
    pub calls: &'a VecDeque<Call>,
    pub enrolment: &'a Enrolment,
    pub enrolling: bool,
    pub fetching_credentials: bool,
    pub signer_notes: &'a BTreeMap<ProposalId, String>,
    pub asker_checks: &'a BTreeMap<RequestId, AskerCheck>,
    pub session_receipts: &'a [SessionReceipt],
    pub short_grants: bool,
    pub now: Timestamp,
}

/// `"7 proofs left"`, `"1 proof left"`.
pub fn proofs_left(n: usize) -> String {
    if n == 1 {
        "1 proof left".to_owned()
    } else {
        format!("{n} proofs left")
    }
}

/// Draws every section but the profile's and the editor's (`person` and `editor` draw those).
pub fn all(view: &View<'_>) {
    session_receipts(view);
    status(view);
    settings(view);
    credentials(view);
    requests(view);
    grants(view);
    proposals(view);
    agent(view);
    log(view);
}

/// A card's status line, empty until a message is put in it: `<p class=… id=… role="status">`.
fn status_line(class: &str, id: &str) -> web_sys::Element {
    attr(&attr(&el("p", class, ""), "id", id), "role", "status")
}

/// The optional "Why not?" field under a card's refusing button; its input has the id `id` (the
/// action reads it from there).
fn reason_field(id: &str) -> web_sys::Element {
    let reason = el("div", "field reason", "");
    append(
        &reason,
        &attr(
            &el("label", "", "Why not? (optional, the agent reads it)"),
            "for",
            id,
        ),
    );
    append(&reason, &attr(&el("input", "", ""), "id", id));
    reason
}

fn status(view: &View<'_>) {
    let unlocked = view.gate.is_unlocked();
    dom::set_pill(
        "lock-pill",
        if unlocked { "Unlocked" } else { "Locked" },
        if unlocked { "ok" } else { "" },
    );
    dom::set_pill(
        "webmcp-pill",
        &format!("WebMCP: {}", view.detection.code()),
        view.detection.tone(),
    );
    let polyfilled = matches!(view.detection, Detection::Polyfilled);
    if let Some(p) = dom::by_id("webmcp-pill") {
        let title = match polyfilled {
            true => format!(
                "{} {}",
                view.detection.describe(),
                capability_gate::words::POLYFILL_REACH
            ),
            false => view.detection.describe(),
        };
        if p.get_attribute("title").as_deref() != Some(title.as_str()) {
            attr(&p, "title", &title);
        }
        webmcp_reach(&p, polyfilled);
    }
    let stored = view.stored.is_some();
    dom::show("setup", !stored);
    dom::show("setup-actions", !stored);
    dom::show("facts", view.wallet.facts_shown());
    dom::show("unlock", stored && !unlocked);
    dom::show("editor-actions", unlocked);
    dom::show("end-session-btn", unlocked);
    dom::show("backup", true);
    title(view);
}

/// The sentence beside the WebMCP pill, `#webmcp-reach`, shown only on the polyfill: its tools
/// are visible to this page's scripts, not to browser agents over DevTools nor to `tacit-mcp`.
fn webmcp_reach(pill: &web_sys::Element, polyfilled: bool) {
    if dom::by_id("webmcp-reach").is_none() {
        let note = attr(
            &el("p", "webmcp-reach", capability_gate::words::POLYFILL_REACH),
            "id",
            "webmcp-reach",
        );
        attr(&note, "role", "note");
        // After the header's pills, where the person reads the page's status.
        let at = pill.parent_element().unwrap_or_else(|| pill.clone());
        let _ = at.after_with_node_1(&note);
    }
    dom::show("webmcp-reach", polyfilled);
}

/// How many requests and applications wait for the person's answer.
pub(crate) fn waiting_count(view: &View<'_>) -> usize {
    let requests = view
        .gate
        .requests()
        .filter(|r| r.state == RequestState::Held)
        .count();
    let proposals = view
        .gate
        .proposals()
        .filter(|p| p.state == ProposalState::Held)
        .count();
    requests + proposals
}

/// The tab's title: `(<n>) Tacit — a site is waiting` while n ≥ 1 requests or applications
/// wait for the person, else `Tacit wallet` (seen from another tab).
fn title(view: &View<'_>) {
    let text = title_for(waiting_count(view));
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

/// Puts `pieces` into `parent`: the wallet's own words as text, an agent's or a site's inside a
/// `<q>` (the browser draws its quotation marks) marked `data-said="agent"` or `"site"`, so no
/// agent text reads as the wallet's.
pub(super) fn said_into(parent: &web_sys::Element, pieces: &[capability_gate::words::Said]) {
    use capability_gate::words::Said;
    for piece in pieces {
        match piece {
            Said::Wallet(text) => {
                let _ = parent.append_with_str_1(text);
            }
            Said::Agent(text) => {
                let q = attr(&el("q", "said agent", text), "data-said", "agent");
                append(parent, &attr(&q, "title", "The agent's words, not checked"));
            }
            Said::Site(text) => {
                let q = attr(&el("q", "said site", text), "data-said", "site");
                append(
                    parent,
                    &attr(&q, "title", "The site's words, signed by the site"),
                );
            }
        }
    }
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
