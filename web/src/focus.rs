//! The page's half of `capability_gate::focus`: once the person's act is done and the page is
//! redrawn, the focus moves to the rule's target if the act took it away (it is on the body, on
//! nothing, or on a control that is gone, hidden or disabled) — a person whose focus is still on
//! a control keeps it. The page reads what it shows; the rule is the pure crate's.

pub use capability_gate::focus::Act;
use capability_gate::focus::{self, Place, Screen, Target};
use wasm_bindgen::JsCast;
use web_sys::Element;

use crate::{app, dom};

/// What the person can focus in a card, first first.
const CONTROLS: &str = "input:not([disabled]), select:not([disabled]), textarea:not([disabled]), \
                        button:not([disabled]), summary, a[href]";

/// Once `act` is done: after the redraw that follows, the focus moves where the rule says if
/// the act took it away.
pub fn done(act: Act) {
    app::after_redraw(move || land(act));
}

fn land(act: Act) {
    let own_form = act.leaves_its_form() && within(form_of(act));
    if !lost() && !own_form {
        return;
    }
    let target = focus::after(act, &screen());
    if let Some(element) = element(&target).and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = element.focus();
    }
}

/// The form whose controls an act is done with ([`Act::leaves_its_form`]).
fn form_of(act: Act) -> &'static str {
    match act {
        Act::Enrolled => "enrol-form",
        Act::CredentialAdded => "credential-form",
        _ => "",
    }
}

/// Whether the focus is inside the element `id`.
fn within(id: &str) -> bool {
    let (Some(active), Some(form)) = (active(), dom::by_id(id)) else {
        return false;
    };
    form.contains(Some(&active))
}

fn active() -> Option<Element> {
    dom::document()?.active_element()
}

/// Whether the focus is nowhere the person can see or use.
fn lost() -> bool {
    let Some(document) = dom::document() else {
        return false;
    };
    let Some(active) = document.active_element() else {
        return true;
    };
    let on_body = document.body().is_some_and(|b| {
        b.unchecked_ref::<web_sys::Node>()
            .is_same_node(Some(&active))
    });
    on_body
        || !active.is_connected()
        || active.has_attribute("disabled")
        || active.get_client_rects().length() == 0
        || matches!(active.closest("[hidden]"), Ok(Some(_)))
}

/// The waiting requests, applications and grants, in the order the page shows them.
fn screen() -> Screen {
    let ids = |selector: &str, prefix: &str| -> Vec<String> {
        let Some(root) = dom::document().and_then(|d| d.document_element()) else {
            return Vec::new();
        };
        dom::query_all(&root, selector)
            .into_iter()
            .filter_map(|e| e.id().strip_prefix(prefix).map(str::to_owned))
            .collect()
    };
    let grants = dom::by_id("grants")
        .map(|g| {
            dom::query_all(&g, "[data-action=revoke][data-id]")
                .into_iter()
                .filter_map(|b| b.get_attribute("data-id"))
                .collect()
        })
        .unwrap_or_default();
    Screen {
        requests: ids("#requests > [id^='req-']", "req-"),
        applications: ids("#proposals > [id^='prop-']", "prop-"),
        grants,
    }
}

fn first_control(card_id: &str) -> Option<Element> {
    let card = dom::by_id(card_id)?;
    dom::query_all(&card, CONTROLS)
        .into_iter()
        .find(|e| e.get_client_rects().length() > 0)
}

fn element(target: &Target) -> Option<Element> {
    match target {
        Target::Request(id) => first_control(&format!("req-{id}")),
        Target::Application(id) => first_control(&format!("prop-{id}")),
        Target::Grant(id) => dom::by_id("grants").and_then(|g| {
            dom::query_all(&g, "[data-action=revoke][data-id]")
                .into_iter()
                .find(|b| b.get_attribute("data-id").as_deref() == Some(id.as_str()))
        }),
        Target::Place(place) => match place {
            Place::Waiting => dom::by_id("waiting"),
            Place::Backup => dom::by_id("export-btn"),
            Place::CredentialAddress => dom::by_id("issuer-url"),
            Place::Credentials => dom::by_id("credential-list"),
            Place::FirstFact => first_control("facts-fields"),
            Place::Record => dom::by_id("log-title"),
        },
    }
}
