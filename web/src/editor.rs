//! The profile editor: the only place a raw fact is ever put into the DOM.

use wallet_core::catalogue::{CONDITIONS, CURRENCIES, DISTRICTS};
use wallet_core::{Attribute, ProfileInput};

use crate::app::{App, now};
use crate::credentials::proofs_left;
use crate::dom::{self, append, attr, el, fill};
use crate::render::day;

/// Draws what the editor shows besides the raw facts (where each fact's answers come from).
pub fn render(app: &App) {
    sources(app);
}

/// Fills the pickers from the published catalogues, once.
pub fn setup_form() {
    let options = |id: &str, items: Vec<(&str, &str)>| {
        fill(
            id,
            items
                .into_iter()
                .map(|(value, label)| attr(&el("option", "", label), "value", value))
                .collect(),
        );
    };
    options("f-currency", CURRENCIES.iter().map(|c| (*c, *c)).collect());
    dom::set_value("f-currency", "EUR");
    let mut districts = vec![("", "Choose your district")];
    districts.extend(DISTRICTS.iter().map(|d| (d.code, d.label)));
    options("f-district", districts);
    fill(
        "f-conditions",
        CONDITIONS
            .iter()
            .map(|c| {
                let label = el("label", "", "");
                let check = el("input", "", "");
                attr(&check, "type", "checkbox");
                attr(&check, "value", c.code);
                append(&label, &check);
                append(&label, &el("span", "", c.label));
                label
            })
            .collect(),
    );
}

/// Puts the person's facts into the editor (the only place raw values are shown).
pub fn fill_facts(input: &ProfileInput) {
    let income = u64::try_from(input.income_minor)
        .map(wallet_core::profile::format_minor)
        .unwrap_or_default();
    dom::set_value("f-income", &income);
    dom::set_value(
        "f-currency",
        if input.currency.is_empty() {
            "EUR"
        } else {
            &input.currency
        },
    );
    dom::set_value("f-dob", &input.date_of_birth);
    dom::set_value("f-district", &input.district);
    if let Some(root) = dom::by_id("f-conditions") {
        for check in dom::query_all(&root, "input[type=checkbox]") {
            let on = check
                .get_attribute("value")
                .is_some_and(|v| input.conditions.contains(&v));
            if let Some(i) = wasm_bindgen::JsCast::dyn_ref::<web_sys::HtmlInputElement>(&check) {
                i.set_checked(on);
            }
        }
    }
}

/// Where each fact's answers come from: an issuer's credential, or what the person typed.
fn sources(app: &App) {
    let summary = if app.gate.is_unlocked() {
        app.gate.credentials().summary(now())
    } else {
        Vec::new()
    };
    for (id, attribute) in [
        ("src-income", Attribute::Income),
        ("src-age", Attribute::Age),
    ] {
        let backing = summary
            .iter()
            .find(|s| s.attribute == attribute && s.left > 0);
        let (text, source) = match backing {
            Some(s) => (
                format!(
                    "from {}, valid until {}, {} (other thresholds: typed by you)",
                    s.name,
                    s.valid_until.map(day).unwrap_or_default(),
                    proofs_left(s.left)
                ),
                "issuer",
            ),
            None => ("typed by you".to_owned(), "self"),
        };
        dom::set_text(id, &text);
        if let Some(e) = dom::by_id(id) {
            attr(&e, "data-source", source);
        }
    }
    for id in ["src-district", "src-conditions"] {
        dom::set_text(id, "typed by you (self-asserted)");
    }
}
