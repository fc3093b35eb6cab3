//! The profile editor: the only place a raw fact is ever put into the DOM, and only while it is
//! open. It is filled by the wallet core's `FillEditor` effect (after the passphrase was checked
//! again) and emptied by `ClearEditor` (close, idle, lock, every failure).

use capability_gate::wallet::Editor;
use wallet_core::catalogue::{CONDITIONS, CURRENCIES, DISTRICTS};
use wallet_core::{Attribute, ProfileInput};

use crate::app::{App, now};
use crate::credentials::proofs_left;
use crate::dom::{self, append, attr, el};
use crate::render::day;

/// Draws what the editor shows besides the raw facts (where each fact's answers come from).
pub fn render(app: &App) {
    controls(app);
    sources(app);
}

/// Fills the pickers from the published catalogues, once.
pub fn setup_form() {
    let options = |id: &str, items: Vec<(&str, &str)>| {
        dom::fill(
            id,
            items
                .into_iter()
                .map(|(value, label)| attr(&el("option", "", label), "value", value))
                .collect(),
        );
    };
    let mut currencies = vec![("", "Currency")];
    currencies.extend(CURRENCIES.iter().map(|c| (*c, *c)));
    options("f-currency", currencies);
    dom::set_value("f-currency", "EUR");
    let mut districts = vec![("", "Choose your district")];
    districts.extend(DISTRICTS.iter().map(|d| (d.code, d.label)));
    options("f-district", districts);
    dom::fill(
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

/// Puts the person's facts into the editor and marks it open. Only the wallet core's
/// `FillEditor` effect calls this (after the passphrase was checked again).
pub fn fill(input: &ProfileInput) {
    let income = u64::try_from(input.income_minor)
        .map(wallet_core::profile::format_minor)
        .unwrap_or_default();
    dom::set_value("f-income", &income);
    dom::set_value("f-currency", &input.currency);
    dom::set_value("f-dob", &input.date_of_birth);
    dom::set_value("f-district", &input.district);
    set_conditions(&input.conditions);
    set_state("open");
}

/// Empties every field of the editor (no value of the person's stays in the DOM) and marks it
/// closed.
pub fn clear() {
    for id in ["f-income", "f-currency", "f-dob", "f-district"] {
        dom::set_value(id, "");
    }
    set_conditions(&[]);
    set_state("closed");
}

fn set_conditions(on: &[String]) {
    if let Some(root) = dom::by_id("f-conditions") {
        for check in dom::query_all(&root, "input[type=checkbox]") {
            let checked = check
                .get_attribute("value")
                .is_some_and(|v| on.contains(&v));
            if let Some(i) = wasm_bindgen::JsCast::dyn_ref::<web_sys::HtmlInputElement>(&check) {
                i.set_checked(checked);
            }
        }
    }
}

fn set_state(state: &str) {
    if let Some(editor) = dom::by_id("editor") {
        attr(&editor, "data-state", state);
    }
}

/// What the person typed into the editor (validated by wallet-core when saved).
pub fn read_input() -> Result<ProfileInput, String> {
    let income_minor =
        wallet_core::profile::parse_amount(&dom::value("f-income")).map_err(|e| e.to_string())?;
    let conditions = dom::by_id("f-conditions")
        .map(|root| dom::query_all(&root, "input[type=checkbox]"))
        .unwrap_or_default()
        .into_iter()
        .filter(dom::checked)
        .filter_map(|c| c.get_attribute("value"))
        .collect();
    Ok(ProfileInput {
        income_minor,
        currency: dom::value("f-currency"),
        date_of_birth: dom::value("f-dob"),
        district: dom::value("f-district"),
        conditions,
    })
}

/// The editor's controls: with a profile stored, its fields are usable only while it is open;
/// without one they are the new profile's form.
fn controls(app: &App) {
    let creating = app.stored.is_none();
    let open = app.wallet.editor() == Editor::Open;
    if creating && dom::value("f-currency").is_empty() {
        // A new profile's form starts at EUR (not the person's value: none is stored).
        dom::set_value("f-currency", "EUR");
    }
    if let Some(editor) = dom::by_id("editor") {
        attr(&editor, "data-state", if open { "open" } else { "closed" });
        let usable = creating || open;
        for field in dom::query_all(&editor, "#facts input, #facts select") {
            let _ = if usable {
                field.remove_attribute("disabled")
            } else {
                field.set_attribute("disabled", "")
            };
        }
    }
    let unlocked = app.wallet.is_unlocked();
    dom::show("editor-open", unlocked && !open);
    dom::show("editor-close", unlocked && open);
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
