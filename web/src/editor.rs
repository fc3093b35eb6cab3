//! The profile editor: the only place a raw fact is ever put into the DOM, and only while it is
//! open. It is filled by the wallet core's `FillEditor` effect (after the passphrase was checked
//! again) and emptied by `ClearEditor` (close, idle, lock, every failure).
//!
//! Like `render`, it draws from the [`View`] the app hands it and knows nothing of the app.

use capability_gate::credentials::expected_vct;
use capability_gate::wallet::Editor;
use capability_gate::words;
use wallet_core::form::{Control, FieldText, FormText, read_form};
use wallet_core::{Attribute, Field, ProfileInput};
use wasm_bindgen::JsCast;
use web_sys::Element;

use crate::clock::now;
use crate::dom::{self, append, attr, el};
use crate::render::{View, proofs_left};

/// The element the form's fields are drawn into (in `#facts`, under its heading).
const FORM_ROOT: &str = "facts-fields";

/// Draws what the editor shows besides the raw facts (where each fact's answers come from).
pub fn render(view: &View<'_>) {
    controls(view);
    sources(view);
}

/// The form's fields, in the order the person meets them, each with its element's id and its
/// control: wallet-core's form table.
fn fields() -> impl Iterator<Item = (Field, &'static str, Control)> {
    Field::FORM
        .into_iter()
        .filter_map(|f| Some((f, f.input_id()?, f.control()?)))
}

/// The id of the line saying where an attribute's answers come from (`src-income`).
fn source_id(attribute: Attribute) -> String {
    format!("src-{}", attribute.name())
}

fn differs_id(attribute: Attribute) -> String {
    format!("differs-{}", attribute.name())
}

/// Draws the form from wallet-core's form table, once: each field a label and its control (in
/// a grid), a list of checks a fieldset whose legend is the label, the pickers filled from the
/// published catalogues. After each attribute's last field comes the line saying where its
/// answers come from, which the control of the attribute's raw field references
/// (`aria-describedby`).
pub fn setup_form() {
    let Some(root) = dom::by_id(FORM_ROOT) else {
        return;
    };
    root.set_text_content(None);
    let mut grid: Option<Element> = None;
    for (field, id, control) in fields() {
        let input = attr(&draw(control), "id", id);
        // The element the field is drawn in, and the one its description goes on.
        let (cell, target) = if let Control::Checks(_) = control {
            grid = None;
            let set = el("fieldset", "", "");
            append(&set, &el("legend", "", field.label()));
            append(&set, &input);
            append(&root, &set);
            (set.clone(), set)
        } else {
            let grid = grid.get_or_insert_with(|| {
                let grid = el("div", "grid", "");
                append(&root, &grid);
                grid
            });
            let cell = el("div", "field", "");
            append(&cell, &attr(&el("label", "", field.label()), "for", id));
            append(&cell, &input);
            append(grid, &cell);
            if let Control::Choice {
                default: Some(default),
                ..
            } = control
            {
                dom::set_value_of(&input, default);
            }
            (cell, input)
        };
        for attribute in Attribute::ALL {
            if attribute.raw_field() == field {
                let described = format!("{} {}", source_id(attribute), differs_id(attribute));
                attr(&target, "aria-describedby", &described);
            }
            if attribute.form_fields().last() == Some(&field) {
                let line = attr(&el("span", "source", ""), "id", &source_id(attribute));
                append(&cell, &attr(&line, "data-source", "self"));
                // Where an issuer's credential answers one of its questions differently from
                // what the person typed (issue 28 item 6), beside the fact.
                let differs = attr(&el("span", "differs", ""), "id", &differs_id(attribute));
                append(&cell, &attr(&differs, "hidden", ""));
            }
        }
    }
}

/// The element for one field's control; for a list of checks, the box holding them.
fn draw(control: Control) -> Element {
    match control {
        Control::Amount { placeholder } => {
            let input = el("input", "", "");
            attr(&input, "inputmode", "decimal");
            attr(&input, "autocomplete", "off");
            attr(&input, "placeholder", placeholder)
        }
        Control::Choice {
            options, prompt, ..
        } => {
            let select = el("select", "", "");
            append(&select, &attr(&el("option", "", prompt), "value", ""));
            for option in options {
                append(
                    &select,
                    &attr(&el("option", "", option.label), "value", option.code),
                );
            }
            select
        }
        Control::Date => attr(&el("input", "", ""), "type", "date"),
        Control::Checks(entries) => {
            let checks = el("div", "checks", "");
            for entry in entries {
                let label = el("label", "", "");
                let check = el("input", "", "");
                attr(&check, "type", "checkbox");
                attr(&check, "value", entry.code);
                append(&label, &check);
                append(&label, &el("span", "", entry.label));
                append(&checks, &label);
            }
            checks
        }
    }
}

/// Puts the person's facts into the editor and marks it open. Only the wallet core's
/// `FillEditor` effect calls this (after the passphrase was checked again).
pub fn fill(input: &ProfileInput) {
    put(&FormText::of_input(input));
    set_state("open");
}

/// Empties every field of the editor (no value of the person's stays in the DOM) and marks it
/// closed.
pub fn clear() {
    // Every field of wallet-core's form table, so a field added later is emptied too.
    put(&FormText::default());
    show_problems(&[]);
    set_state("closed");
}

/// Sets every field of the form to what `form` holds for it.
fn put(form: &FormText) {
    for (field, id, control) in fields() {
        match control {
            Control::Checks(_) => set_checks(id, form.codes(field)),
            _ => dom::set_value(id, form.text(field)),
        }
    }
}

fn set_checks(id: &str, on: &[String]) {
    if let Some(root) = dom::by_id(id) {
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

/// What the person typed into the editor, read by wallet-core's form rules (local amount
/// notations; one plain sentence per field in error). On errors each field says its own next
/// to it (an element referenced by the field's `aria-describedby`, the field marked
/// `aria-invalid`), focus moves to the first one, and the returned text is for the form's
/// message line. Passphrase fields are not touched.
pub fn read_input() -> Result<ProfileInput, FormError> {
    let form = fields().fold(FormText::default(), |form, (field, id, control)| {
        let text = match control {
            Control::Checks(_) => FieldText::Codes(
                dom::by_id(id)
                    .map(|root| dom::query_all(&root, "input[type=checkbox]"))
                    .unwrap_or_default()
                    .into_iter()
                    .filter(dom::checked)
                    .filter_map(|c| c.get_attribute("value"))
                    .collect(),
            ),
            _ => FieldText::Text(dom::value(id)),
        };
        form.with(field, text)
    });
    match read_form(&form, now().date_utc()) {
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
    for (field, id, control) in fields() {
        let Some(input) = dom::by_id(id) else {
            continue;
        };
        // A list of checks is a group: its fieldset carries the description.
        let group = matches!(control, Control::Checks(_));
        let target = if group {
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
                        && !group
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
    if creating {
        // A new profile's form starts at each choice's default (not the person's value: none
        // is stored).
        for (_, id, control) in fields() {
            if let Control::Choice {
                default: Some(default),
                ..
            } = control
                && dom::value(id).is_empty()
            {
                dom::set_value(id, default);
            }
        }
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

/// Where each attribute's answers come from: an issuer's credential, or what the person typed
/// (self-asserted where no issuer's credential can back the attribute at all).
fn sources(view: &View<'_>) {
    let summary = if view.gate.is_unlocked() {
        view.gate.credentials().summary(view.now)
    } else {
        Vec::new()
    };
    let disagreements = view.gate.disagreements(view.now);
    for attribute in Attribute::ALL {
        let id = source_id(attribute);
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
            None if expected_vct(attribute).is_err() => {
                ("typed by you (self-asserted)".to_owned(), "self")
            }
            None => ("typed by you".to_owned(), "self"),
        };
        dom::set_text(&id, &text);
        if let Some(e) = dom::by_id(&id) {
            attr(&e, "data-source", source);
        }
        let differs = disagreements
            .iter()
            .filter(|d| d.attribute == attribute)
            .map(|d| {
                words::disagreement_beside_fact(
                    &words::issuer_label(Some(&d.issuer_name), d.issuer.as_str()),
                    &d.claim,
                    d.credential_says,
                    &crate::intl::money_of,
                )
            })
            .collect::<Vec<_>>()
            .join(" ");
        dom::set_text(&differs_id(attribute), &differs);
        dom::show(&differs_id(attribute), !differs.is_empty());
    }
}
