//! What the person sees: requirements, the latest outcome, the recent history. Text goes in
//! with `textContent` only.

use serde_json::Value;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement};

use super::SiteInfo;
use crate::submit::Code;

/// The latest thing that happened, as the status area shows it: what the server answered.
#[derive(Debug, Clone)]
pub enum Outcome {
    Waiting,
    Asked(String),
    Accepted {
        nonce: String,
        key_id: String,
        claims: Vec<String>,
    },
    Refused {
        code: String,
        message: String,
        claim: Option<String>,
    },
}

impl Outcome {
    /// Reads a server envelope (`submit`: the verdict tool's; otherwise the requirements').
    pub fn of(envelope: &Value, submit: bool) -> Self {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        if envelope["ok"] == true {
            let result = &envelope["result"];
            if !submit {
                return Outcome::Asked(text(&result["nonce"]));
            }
            let claims = result["claims"]
                .as_array()
                .map(|cs| cs.iter().map(describe_json).collect())
                .unwrap_or_default();
            return Outcome::Accepted {
                nonce: text(&result["nonce"]),
                key_id: text(&result["key_id"]),
                claims,
            };
        }
        let error = &envelope["error"];
        Outcome::Refused {
            code: text(&error["code"]),
            message: text(&error["message"]),
            claim: error.get("claim").map(describe_json),
        }
    }

    pub fn summary(&self) -> String {
        match self {
            Outcome::Waiting => "waiting".to_owned(),
            Outcome::Asked(nonce) => format!("requirements issued, nonce {nonce}"),
            Outcome::Accepted { nonce, .. } => format!("accepted, nonce {nonce}"),
            Outcome::Refused { code, .. } => format!("refused: {code}"),
        }
    }
}

/// A claim from the server's JSON, in words (the raw JSON if it is not a claim).
fn describe_json(claim: &Value) -> String {
    serde_json::from_value::<wallet_core::Claim>(claim.clone())
        .map(|c| crate::policy::describe(&c))
        .unwrap_or_else(|_| claim.to_string())
}

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

pub fn pills(server: &(String, bool), webmcp: &(String, bool), nonces: &str) {
    set_text("signer-pill", &server.0);
    set_class("signer-pill", if server.1 { "pill ok" } else { "pill bad" });
    set_text("webmcp-pill", &webmcp.0);
    set_class("webmcp-pill", if webmcp.1 { "pill ok" } else { "pill bad" });
    set_text("nonce-pill", &format!("Requests: {nonces}"));
}

pub fn outcome(site: &SiteInfo, outcome: &Outcome) {
    let (class, title, text, items, code, detail): (_, _, String, Vec<(&str, String)>, _, _) =
        match outcome {
            Outcome::Waiting => (
                "status idle",
                "Waiting for your agent",
                format!(
                    "Ask your agent to handle this {} for you. It reads what we need, asks for \
                     your consent in your Tacit wallet, and brings back a signed yes/no receipt.",
                    site.submission
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
            Outcome::Accepted {
                nonce,
                key_id,
                claims,
            } => (
                "status ok",
                "Accepted",
                site.accepted_text.clone(),
                claims.iter().map(|c| ("yes", format!("✓ {c}"))).collect(),
                format!(
                    "Receipt for request {nonce} · signer key {key_id} · checked by the site's server"
                ),
                String::new(),
            ),
            Outcome::Refused {
                code,
                message,
                claim,
            } => {
                let known = Code::parse(code);
                (
                    "status bad",
                    "Refused",
                    known
                        .map_or("The site refused the request.", Code::for_person)
                        .to_owned(),
                    claim
                        .iter()
                        .map(|c| ("no", format!("✗ Not shown: {c}")))
                        .collect(),
                    format!("Reason code: {code}"),
                    if known == Some(Code::Busy) {
                        String::new()
                    } else {
                        message.clone()
                    },
                )
            }
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
