//! The profile editor: the only place a raw fact is ever put into the DOM, and only while it is
//! open. It is filled by the wallet core's `FillEditor` effect (after the passphrase was checked
//! again) and emptied by `ClearEditor` (close, idle, lock, every failure).
//!
//! Like `render`, it draws from the [`View`] the app hands it and knows nothing of the app.

use capability_gate::wallet::Editor;
use wallet_core::catalogue::{CONDITIONS, CURRENCIES, DISTRICTS};
use wallet_core::form::{FormText, read_form};
use wallet_core::{Attribute, Field, ProfileInput};
use wasm_bindgen::JsCast;

use crate::clock::now;
use crate::dom::{self, append, attr, el};
use crate::render::{View, proofs_left};

/// Draws what the editor shows besides the raw facts (where each fact's answers come from).
pub fn render(view: &View<'_>) {
    controls(view);
    sources(view);
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
    // Every field of wallet-core's form descriptor, so a field added later is emptied too; the
    // conditions are a group of checkboxes.
    for (field, id) in fields() {
        if field != Field::Conditions {
            dom::set_value(id, "");
        }
    }
    show_problems(&[]);
    set_conditions(&[]);
    set_state("closed");
}

fn set_conditions(on: &[String]) {
    if let Some(root) = dom::by_id("f-conditions") {
        for check in dom::query_all(&root, "input[type=checkbox]") {
            let checked = check
                .get_attribute("value")
                .is_some_and(|v| on.contains(&v));
            if let Some(i) = check.dyn_ref::<web_sys::HtmlInputElement>() {
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

/// Why the editor's form was not read; `Display` is the form's message line (each field in
/// error says its own problem beside it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    #[error("Please check the field marked below. {0}")]
    OneField(String),
    #[error("Please check the {0} fields marked below.")]
    Fields(usize),
}

/// The form's fields, in the order the person meets them, with the element each error
/// message goes beside (the field's own box): wallet-core's form descriptor.
fn fields() -> impl Iterator<Item = (Field, &'static str)> {
    Field::FORM
        .into_iter()
        .filter_map(|f| f.input_id().map(|id| (f, id)))
}

/// What the person typed into the editor, read by wallet-core's form rules (local amount
/// notations; one plain sentence per field in error). On errors each field says its own next
/// to it (an element referenced by the field's `aria-describedby`, the field marked
/// `aria-invalid`), focus moves to the first one, and the returned text is for the form's
/// message line. Passphrase fields are not touched.
pub fn read_input() -> Result<ProfileInput, FormError> {
    let conditions: Vec<String> = dom::by_id("f-conditions")
        .map(|root| dom::query_all(&root, "input[type=checkbox]"))
        .unwrap_or_default()
        .into_iter()
        .filter(dom::checked)
        .filter_map(|c| c.get_attribute("value"))
        .collect();
    let (income, currency, dob, district) = (
        dom::value("f-income"),
        dom::value("f-currency"),
        dom::value("f-dob"),
        dom::value("f-district"),
    );
    let form = FormText {
        income: &income,
        currency: &currency,
        date_of_birth: &dob,
        district: &district,
        conditions: &conditions,
    };
    match read_form(form, now().date_utc()) {
        Ok(input) => {
            show_problems(&[]);
            Ok(input)
        }
        Err(problems) => {
            show_problems(&problems);
            Err(match problems.as_slice() {
                [(_, one)] => FormError::OneField(one.clone()),
                many => FormError::Fields(many.len()),
            })
        }
    }
}

/// Shows each field's problem beside it and clears the others'; focuses the first field in
/// error.
fn show_problems(problems: &[(Field, String)]) {
    let mut first = None;
    for (field, id) in fields() {
        let Some(input) = dom::by_id(id) else {
            continue;
        };
        // The conditions are a group: its fieldset carries the description.
        let target = if field == Field::Conditions {
            input.closest("fieldset").ok().flatten().unwrap_or(input)
        } else {
            input
        };
        let err_id = format!("{id}-error");
        let problem = problems.iter().find(|(f, _)| *f == field).map(|(_, t)| t);
        let described: Vec<String> = target
            .get_attribute("aria-describedby")
            .unwrap_or_default()
            .split_whitespace()
            .filter(|t| *t != err_id)
            .map(str::to_owned)
            .collect();
        match problem {
            Some(text) => {
                let line = dom::by_id(&err_id).unwrap_or_else(|| {
                    let line = attr(&el("p", "field-error", ""), "id", &err_id);
                    if let Some(parent) = target.parent_element()
                        && field != Field::Conditions
                    {
                        append(&parent, &line);
                    } else {
                        append(&target, &line);
                    }
                    line
                });
                dom::set_text_of(&line, text);
                let mut ids = vec![err_id.clone()];
                ids.extend(described);
                attr(&target, "aria-describedby", &ids.join(" "));
                attr(&target, "aria-invalid", "true");
                first.get_or_insert(target);
            }
            None => {
                if let Some(line) = dom::by_id(&err_id) {
                    line.remove();
                }
                if described.is_empty() {
                    let _ = target.remove_attribute("aria-describedby");
                } else {
                    attr(&target, "aria-describedby", &described.join(" "));
                }
                let _ = target.remove_attribute("aria-invalid");
            }
        }
    }
    if let Some(target) = first {
        let focus = if target.tag_name().eq_ignore_ascii_case("fieldset") {
            dom::query_all(&target, "input").into_iter().next()
        } else {
            Some(target)
        };
        if let Some(e) = focus.and_then(|f| f.dyn_into::<web_sys::HtmlElement>().ok()) {
            let _ = e.focus();
        }
    }
}

/// The editor's controls: with a profile stored, its fields are usable only while it is open;
/// without one they are the new profile's form.
fn controls(view: &View<'_>) {
    let creating = view.stored.is_none();
    let open = view.wallet.editor() == Editor::Open;
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
    let unlocked = view.wallet.is_unlocked();
    dom::show("editor-open", unlocked && !open);
    dom::show("editor-close", unlocked && open);
}

/// Where each fact's answers come from: an issuer's credential, or what the person typed.
fn sources(view: &View<'_>) {
    let summary = if view.gate.is_unlocked() {
        view.gate.credentials().summary(view.now)
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
                    s.valid_until
                        .map(|t| crate::intl::date(t.millis()))
                        .unwrap_or_default(),
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
