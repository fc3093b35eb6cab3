//! What the person sees: requirements, the latest outcome and what happens next; under "For
//! developers" (a closed `<details>`), the reference line, the server's message, the pills and
//! the recent history. Text goes in with `textContent` only.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement};

use super::SiteInfo;
pub use crate::view::Outcome;

/// One line of the history.
#[derive(Debug, Clone)]
pub struct Entry {
    pub at_ms: f64,
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

pub fn requirements(needs: &[String]) {
    let items: Vec<(&str, String)> = needs.iter().map(|n| ("", n.clone())).collect();
    list("requirements", &items);
}

/// Which issuers' proof counts here, under the requirements.
pub fn issuers(names: &[String]) {
    set_text("issuers", &crate::view::issuers_text(names));
}

pub fn pills(server: &(String, bool), webmcp: &(String, bool), nonces: &str) {
    set_text("signer-pill", &server.0);
    set_class("signer-pill", if server.1 { "pill ok" } else { "pill bad" });
    set_text("webmcp-pill", &webmcp.0);
    set_class("webmcp-pill", if webmcp.1 { "pill ok" } else { "pill bad" });
    set_text("nonce-pill", &format!("Requests: {nonces}"));
}

pub fn outcome(site: &SiteInfo, outcome: &Outcome) {
    let status = outcome.status(&site.site_name, &site.submission, &site.accepted_text);
    let items: Vec<(&str, String)> = status
        .items
        .iter()
        .map(|(class, text)| (*class, text.clone()))
        .collect();
    set_class("status", status.class);
    set_text("status-title", &status.title);
    set_text("status-text", &status.text);
    list("status-items", &items);
    set_text("status-next", &status.next);
    show("status-next", !status.next.is_empty());
    set_text("status-code", &status.code);
    set_text("status-detail", &status.detail);
}

pub fn history(entries: &[Entry]) {
    let items: Vec<(&str, String)> = entries
        .iter()
        .map(|e| {
            let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(e.at_ms));
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
