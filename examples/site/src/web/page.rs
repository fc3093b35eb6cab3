//! What the person sees: requirements, the latest outcome, the recent history. Text goes in
//! with `textContent` only.

use wallet_core::{Nonce, Timestamp};
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement};

use crate::policy::{Policy, describe};
use crate::submit::{Accepted, Code, Refusal};

/// The latest thing that happened, as the status area shows it.
#[derive(Debug, Clone)]
pub enum Outcome {
    Waiting,
    Asked(Nonce),
    Accepted(Accepted),
    Refused(Refusal),
}

impl Outcome {
    pub fn summary(&self) -> String {
        match self {
            Outcome::Waiting => "waiting".to_owned(),
            Outcome::Asked(nonce) => format!("requirements issued, nonce {nonce}"),
            Outcome::Accepted(a) => format!("accepted, nonce {}", a.nonce),
            Outcome::Refused(r) => format!("refused: {}", r.code.as_str()),
        }
    }
}

/// One line of the history.
#[derive(Debug, Clone)]
pub struct Entry {
    pub at: Timestamp,
    pub tool: String,
    pub summary: String,
}

fn by_id(id: &str) -> Option<Element> {
    web_sys::window()?.document()?.get_element_by_id(id)
}

fn el(tag: &str, class: &str, text: &str) -> Option<Element> {
    let element = web_sys::window()?.document()?.create_element(tag).ok()?;
    if !class.is_empty() {
        element.set_class_name(class);
    }
    element.set_text_content(Some(text));
    Some(element)
}

fn set_text(id: &str, text: &str) {
    if let Some(e) = by_id(id) {
        e.set_text_content(Some(text));
    }
}

fn set_class(id: &str, class: &str) {
    if let Some(e) = by_id(id) {
        e.set_class_name(class);
    }
}

fn show(id: &str, visible: bool) {
    if let Some(e) = by_id(id).and_then(|e| e.dyn_into::<HtmlElement>().ok()) {
        e.set_hidden(!visible);
    }
}

/// Replaces `#id`'s children with `<li>`s of (class, text).
fn list(id: &str, items: &[(&str, String)]) {
    let Some(target) = by_id(id) else { return };
    target.set_text_content(None);
    for (class, text) in items {
        if let Some(li) = el("li", class, text) {
            let _ = target.append_child(&li);
        }
    }
}

pub fn boot_failed(message: &str) {
    set_text("boot-note", message);
    set_class("boot-note", "note error");
}

pub fn ready() {
    show("boot-note", false);
    show("app", true);
}

pub fn requirements(policy: &Policy) {
    let items: Vec<(&str, String)> = policy.claims.iter().map(|c| ("", describe(c))).collect();
    list("requirements", &items);
}

pub fn pills(signer: &str, webmcp: &(String, bool), nonces: &str) {
    let signer_ok = signer.contains("key(s)");
    set_text(
        "signer-pill",
        if signer.is_empty() {
            "Signer: checking…"
        } else {
            signer
        },
    );
    set_class("signer-pill", if signer_ok { "pill ok" } else { "pill" });
    set_text("webmcp-pill", &webmcp.0);
    set_class("webmcp-pill", if webmcp.1 { "pill ok" } else { "pill bad" });
    set_text("nonce-pill", &format!("Requests: {nonces}"));
}

pub fn outcome(policy: &Policy, outcome: &Outcome) {
    let (class, title, text, items, code, detail): (_, _, String, Vec<(&str, String)>, _, _) =
        match outcome {
            Outcome::Waiting => (
                "status idle",
                "Waiting for your agent",
                format!(
                    "Ask your agent to handle this {} for you. It reads what we need, asks for \
                     your consent in your Tacit wallet, and brings back a signed yes/no receipt.",
                    policy.submission
                ),
                Vec::new(),
                String::new(),
                String::new(),
            ),
            Outcome::Asked(nonce) => (
                "status asked",
                "Your agent asked what we need",
                "Approve the questions in your Tacit wallet. Your agent then submits the signed \
                 receipt here."
                    .to_owned(),
                Vec::new(),
                format!("Request reference {nonce}"),
                String::new(),
            ),
            Outcome::Accepted(accepted) => (
                "status ok",
                "Accepted",
                policy.accepted_text.to_owned(),
                accepted
                    .claims
                    .iter()
                    .map(|c| ("yes", format!("✓ {}", describe(c))))
                    .collect(),
                format!(
                    "Receipt for request {} · signer key {}",
                    accepted.nonce, accepted.key_id
                ),
                String::new(),
            ),
            Outcome::Refused(refusal) => (
                "status bad",
                "Refused",
                refusal.code.for_person().to_owned(),
                refusal
                    .claim
                    .iter()
                    .map(|c| ("no", format!("✗ Not shown: {}", describe(c))))
                    .collect(),
                format!("Reason code: {}", refusal.code.as_str()),
                if refusal.code == Code::Busy {
                    String::new()
                } else {
                    refusal.message.clone()
                },
            ),
        };
    set_class("status", class);
    set_text("status-title", title);
    set_text("status-text", &text);
    list("status-items", &items);
    set_text("status-code", &code);
    set_text("status-detail", &detail);
}

pub fn history(entries: &[Entry]) {
    let items: Vec<(&str, String)> = entries
        .iter()
        .map(|e| {
            let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(e.at.millis() as f64));
            let time: String = date.to_locale_time_string("en-GB").into();
            ("", format!("{time} · {} · {}", e.tool, e.summary))
        })
        .collect();
    if items.is_empty() {
        list("history", &[("empty", "Nothing yet.".to_owned())]);
    } else {
        list("history", &items);
    }
}
