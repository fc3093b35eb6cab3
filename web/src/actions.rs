//! What the person does in the page. Each action reads the form, runs one transition of the
//! wallet core (`capability_gate::wallet`) under the cross-tab lock, and the app carries out its
//! effects; nothing here decides about records, generations, floors, memory or locking.
//!
//! This is the top of the page's modules: it routes every click, also the decisions on what
//! agents asked (carried out by `decisions`, after the person's act `person` asks for) and the
//! receipts' buttons (`receipts`).

use capability_gate::ProposalId;
use capability_gate::wallet::{Effect, ImportKind, Wallet};
use js_sys::Uint8Array;
use wallet_core::{KdfParams, Typed};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::app::{App, now, run, with_app};
use crate::choices::{self, Does, Owner};
use crate::decisions::{self, Act};
use crate::signer::{self, Enrolment};
use crate::{credentials, dom, editor, person, receipts, storage};

/// Routes every click on a `[data-action]` element.
pub fn on_click(event: web_sys::Event) {
    // Only a person's own input counts: a script's `.click()` or synthetic event does nothing.
    if !event.is_trusted() {
        return;
    }
    let Some(target) = event
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    else {
        return;
    };
    // A card's buttons act for the request or proposal they were drawn for, found by the
    // element's identity, never by its (changeable) attributes.
    if let Some((does, owner)) = choices::button_at(&target) {
        return decide_card(does, owner);
    }
    let Ok(Some(button)) = target.closest("[data-action]") else {
        return;
    };
    dispatch(&button);
}

/// Runs a card button's decision for the card it was drawn on. Grant and Release take the
/// card's choices as the person made them ([`choices`]), then wait for the person's act
/// ([`person::ask`]); Deny and Refuse act at once.
fn decide_card(does: Does, owner: Owner) {
    match (does, owner) {
        (Does::Grant, Owner::Request(id)) => {
            if let Some(act) = decisions::snapshot_grant(&id) {
                person::ask(act);
            }
        }
        (Does::Deny, Owner::Request(id)) => run(|app| decisions::deny(app, &id)),
        (Does::DenyAll, Owner::Request(id)) => run(|app| decisions::deny_all_from(app, &id)),
        (Does::Release, Owner::Proposal(id)) => {
            if let Some(act) = decisions::snapshot_release(&id) {
                person::ask(act);
            }
        }
        (Does::Refuse, Owner::Proposal(id)) => run(|app| decisions::refuse(app, &id)),
        _ => {}
    }
}

/// Runs the action of `button` (a `[data-action]` element the person activated).
fn dispatch(button: &web_sys::Element) {
    let action = button.get_attribute("data-action").unwrap_or_default();
    let id = button.get_attribute("data-id").unwrap_or_default();
    match action.as_str() {
        "create-profile" => slow(
            "Encrypting your profile (Argon2id, 64 MiB)…",
            create_profile,
        ),
        "unlock" => slow("Unlocking (Argon2id, 64 MiB)…", unlock),
        // Locking writes nothing: at once, without waiting for the cross-tab lock.
        "lock" => run(lock),
        "open-editor" => slow("Checking your passphrase (Argon2id, 64 MiB)…", open_editor),
        "close-editor" => run(close_editor),
        "save-profile" => locked_run(save_profile),
        "change-passphrase" => slow(
            "Changing passphrase (two Argon2id runs)…",
            change_passphrase,
        ),
        "export" => export(),
        "enrol" => enrol(),
        "add-credential" => credentials::add(),
        "delete-profile" => locked_run(delete_profile),
        "verify-log" => {
            with_app(|app| match app.gate.log().verify() {
                Ok(()) => dom::set_msg(
                    "verify-result",
                    &format!(
                        "The log is intact: its {} entries are unchanged since they were written.",
                        app.gate.log().len()
                    ),
                    true,
                ),
                Err(e) => {
                    dom::set_msg("verify-result", &format!("The log was altered: {e}"), false)
                }
            });
        }
        other => decide(other, &id),
    }
}

/// Routes a trusted click on a decision's `[data-action]`, or on a button of the confirmation
/// dialog or the device setting. Grant, Release and End session read the card's choices now,
/// then wait for the person's act ([`person::ask`]); the others act at once.
///
/// A request's or proposal's `data-id` is parsed here, at the page's edge: a text that is no id
/// names nothing, and nothing happens (as for an id the gate does not hold).
fn decide(action: &str, id: &str) {
    let proposal = || ProposalId::parse(id).ok();
    match action {
        // Grant, Deny, Release and Refuse act only through the card they were drawn on
        // (`decide_card`): an element that merely carries their `data-action` does nothing.
        "revoke" => run(|app| decisions::revoke(app, id)),
        "sign-again" => {
            if let Some(id) = proposal() {
                receipts::sign_later(id);
            }
        }
        "download-receipt" => {
            if let Some(id) = proposal() {
                receipts::download_receipt(&id);
            }
        }
        "end-session" => person::ask(Act::EndSession),
        "download-session" => receipts::download_session_receipt(id),
        "confirm-ok" => person::confirm_ok(),
        "confirm-cancel" => person::confirm_cancel(),
        "register-authenticator" => person::ask_register(),
        "remove-authenticator" => person::remove(),
        _ => {}
    }
}

/// The page's forms never submit themselves (no reload, no navigation): a click on a submit
/// button acts through [`on_click`], Enter in a field through [`on_keydown`]. A script's
/// `requestSubmit()` (whose `submit` event the browser marks trusted) therefore does nothing.
pub fn on_submit(event: web_sys::Event) {
    event.prevent_default();
}

/// Enter in a text field of one of the page's forms: a trusted key press runs the action of the
/// form's visible submit button, as a click on it would. The confirmation dialog handles its own
/// field (`person`).
pub fn on_keydown(event: web_sys::Event) {
    let Some(key) = event.dyn_ref::<web_sys::KeyboardEvent>() else {
        return;
    };
    if key.key() != "Enter"
        || key.is_composing()
        || key.alt_key()
        || key.ctrl_key()
        || key.meta_key()
        || event.default_prevented()
    {
        return;
    }
    let Some(field) = event
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
    else {
        return;
    };
    if matches!(
        field.type_().as_str(),
        "checkbox" | "radio" | "button" | "submit" | "reset" | "file" | "image"
    ) {
        return;
    }
    let Some(form) = field.form() else {
        return;
    };
    if form.id() == "confirm-form" {
        return;
    }
    event.prevent_default();
    if !event.is_trusted() {
        return;
    }
    let submit = dom::query_all(&form, "button[type=submit][data-action]")
        .into_iter()
        .find(|b| !b.has_attribute("disabled") && matches!(b.closest("[hidden]"), Ok(None)));
    if let Some(button) = submit {
        dispatch(&button);
    }
}

thread_local! {
    static LISTENING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs the forms' listeners once (the first draw calls it).
/// Installs the page's listeners (once): clicks, the import file, form submits, keys and the
/// new passphrase's strength.
pub fn install() {
    if LISTENING.replace(true) {
        return;
    }
    let Some(document) = dom::document() else {
        return;
    };
    let on = |target: &web_sys::EventTarget, event: &str, f: fn(web_sys::Event)| {
        let closure = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::Event)>::new(f);
        let _ = target.add_event_listener_with_callback(event, closure.as_ref().unchecked_ref());
        // Page-lifetime listeners, installed once.
        closure.forget();
    };
    on(&document, "click", on_click);
    // The cards' boxes and selects: in the capture phase, before any listener of the page's.
    if let Some(window) = web_sys::window() {
        let closure =
            wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::Event)>::new(choices::on_change);
        let _ = window.add_event_listener_with_callback_and_bool(
            "change",
            closure.as_ref().unchecked_ref(),
            true,
        );
        closure.forget();
        let closure =
            wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::Event)>::new(choices::on_click);
        let _ = window.add_event_listener_with_callback_and_bool(
            "click",
            closure.as_ref().unchecked_ref(),
            true,
        );
        closure.forget();
    }
    if let Some(file) = dom::by_id("import-file") {
        on(&file, "change", on_import);
    }
    on(&document, "submit", on_submit);
    on(&document, "keydown", on_keydown);
    if let Some(field) = dom::by_id("new-pass") {
        on(&field, "input", crate::strength::on_new_passphrase);
    }
}

/// Runs an action under the cross-tab lock (it reads, merges and writes the record), then
/// redraws.
fn locked_run(f: fn(&mut App)) {
    storage::locked_then(move || run(f));
}

/// Shows a progress state, lets the browser paint it, then runs Argon2-heavy work under the
/// cross-tab lock.
fn slow(label: &'static str, f: fn(&mut App)) {
    dom::set_text("busy-text", label);
    dom::show("busy", true);
    set_buttons_disabled(true);
    gloo_timers::callback::Timeout::new(40, move || {
        storage::locked_then(move || {
            run(f);
            dom::show("busy", false);
            set_buttons_disabled(false);
        });
    })
    .forget();
}

fn set_buttons_disabled(disabled: bool) {
    if let Some(profile) = dom::by_id("profile") {
        for b in dom::query_all(&profile, "button") {
            let _ = if disabled {
                b.set_attribute("disabled", "")
            } else {
                b.remove_attribute("disabled")
            };
        }
    }
}

pub(crate) fn msg(text: &str, ok: bool) {
    dom::set_msg("profile-msg", text, ok);
}

/// Empties passphrase fields (after the action succeeded or the passphrase was wrong; kept on
/// other errors).
fn clear_if(cleared: bool, ids: &[&str]) {
    if cleared {
        for id in ids {
            dom::clear(id);
        }
    }
}

fn create_profile(app: &mut App) {
    let input = match editor::read_input() {
        Ok(input) => input,
        Err(e) => return msg(&e.to_string(), false),
    };
    let (pass, repeat) = (dom::passphrase("new-pass"), dom::passphrase("new-pass2"));
    let had_profile = app.stored.is_some();
    let cleared = app.step(|wallet, gate, vault, snap, rng| {
        wallet.create(
            gate,
            vault,
            snap,
            &pass,
            &repeat,
            &input,
            now(),
            KdfParams::DEFAULT,
            rng,
        )
    });
    // The passphrases are emptied only once the profile is made; on any other error they stay.
    clear_if(cleared, &["new-pass", "new-pass2"]);
    if !had_profile && app.stored.is_some() {
        keep_storage();
    } else if pass.as_typed() != repeat.as_typed() {
        select_field("new-pass2");
    } else if pass.as_typed().chars().count() < capability_gate::strength::MIN_CHARS {
        select_field("new-pass");
    }
}

/// Asks the browser not to evict the wallet's storage (`navigator.storage.persist()`) and says
/// on the page whether it agreed.
fn keep_storage() {
    let Some(storage) = web_sys::window().map(|w| w.navigator().storage()) else {
        return;
    };
    wasm_bindgen_futures::spawn_local(async move {
        let granted = match storage.persist() {
            Ok(promise) => JsFuture::from(promise)
                .await
                .ok()
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
            Err(_) => false,
        };
        let text = if granted {
            "This browser agreed to keep the wallet's data even when space runs low."
        } else {
            "This browser did not promise to keep the wallet's data: it may delete it when space \
             runs low. Keep your encrypted backup up to date."
        };
        if let Some(note) = dom::by_id("persist-msg") {
            dom::set_text_of(&note, text);
            dom::attr(
                &note,
                "data-persisted",
                if granted { "true" } else { "false" },
            );
        }
        dom::show("persist-msg", true);
    });
}

/// Puts the caret back into `id` with its text selected (to type over it), e.g. after a wrong
/// passphrase.
fn select_field(id: &str) {
    if let Some(field) = dom::input(id) {
        let _ = field.focus();
        field.select();
    }
}

/// The wallet core's "wrong passphrase" message, in the page's words, and whether it was said.
/// The field keeps what was typed (selected, to type over it), so the core's
/// `ClearPassphrase` is dropped with it.
fn wrong_in_words(effects: Vec<Effect>, what: &str, wrong: &mut bool) -> Vec<Effect> {
    *wrong = effects.iter().any(|e| {
        matches!(e, Effect::Message { text, ok: false }
            if text == capability_gate::wallet::WRONG
                || text.starts_with("The passphrase is wrong")
                || text.starts_with("That passphrase is not right"))
    });
    if !*wrong {
        return effects;
    }
    effects
        .into_iter()
        .filter(|e| !matches!(e, Effect::ClearPassphrase))
        .map(|e| match e {
            Effect::Message { ok: false, .. } => Effect::Message {
                text: format!("That {what} is not right. Nothing was changed; try again."),
                ok: false,
            },
            other => other,
        })
        .collect()
}

fn unlock(app: &mut App) {
    let pass = dom::passphrase("unlock-pass");
    let mut wrong = false;
    let cleared = app.step(|wallet, gate, vault, snap, rng| {
        let (wallet, effects) = wallet.unlock(gate, vault, snap, &pass, rng);
        (wallet, wrong_in_words(effects, "passphrase", &mut wrong))
    });
    clear_if(cleared, &["unlock-pass"]);
    if wrong {
        select_field("unlock-pass");
    }
}

fn lock(app: &mut App) {
    app.step(|wallet, gate, vault, _, _| {
        wallet.lock(
            gate,
            vault,
            "Locked. Every claim tool was withdrawn and the keys forgotten.",
            true,
        )
    });
}

fn open_editor(app: &mut App) {
    let pass = dom::passphrase("editor-pass");
    let mut wrong = false;
    let cleared = app.step(|wallet, _, vault, _, _| {
        let (wallet, effects) = wallet.open_editor(vault, &pass);
        (wallet, wrong_in_words(effects, "passphrase", &mut wrong))
    });
    clear_if(cleared, &["editor-pass"]);
    if wrong {
        select_field("editor-pass");
    }
}

fn close_editor(app: &mut App) {
    app.step(|wallet, _, _, _, _| {
        wallet.close_editor("The editor is closed; your facts were cleared from the page.")
    });
}

fn save_profile(app: &mut App) {
    let input = match editor::read_input() {
        Ok(input) => input,
        Err(e) => return msg(&e.to_string(), false),
    };
    app.step(|wallet, gate, vault, snap, rng| {
        wallet.save_profile(gate, vault, snap, &input, now(), rng)
    });
    app.arm_editor_idle();
}

fn change_passphrase(app: &mut App) {
    let (old, new, repeat) = (
        dom::passphrase("old-pass"),
        dom::passphrase("chg-pass"),
        dom::passphrase("chg-pass2"),
    );
    let mut wrong = false;
    let cleared = app.step(|wallet, gate, vault, snap, rng| {
        let (wallet, effects) = wallet.change_passphrase(
            gate,
            vault,
            snap,
            &old,
            &new,
            &repeat,
            KdfParams::DEFAULT,
            rng,
        );
        (
            wallet,
            wrong_in_words(effects, "current passphrase", &mut wrong),
        )
    });
    clear_if(cleared, &["old-pass", "chg-pass", "chg-pass2"]);
    if wrong {
        select_field("old-pass");
    } else if new.as_typed() != repeat.as_typed() {
        select_field("chg-pass2");
    }
}

fn export() {
    match storage::load_record() {
        Ok(Some(record)) => match record.envelope_bytes() {
            Ok(bytes) => {
                dom::download(
                    &bytes,
                    "tacit-profile.tacitvault",
                    "application/octet-stream",
                );
                msg(
                    "Encrypted backup downloaded. It opens only with your passphrase.",
                    true,
                );
            }
            Err(e) => msg(&e.to_string(), false),
        },
        Ok(None) => msg("There is no profile to export yet.", false),
        Err(e) => msg(&e.to_string(), false),
    }
}

/// The import file input changed: read the file, check it is a vault, store it, lock.
pub fn on_import(event: web_sys::Event) {
    // Only the person's own choice of a file counts.
    if !event.is_trusted() {
        return;
    }
    let Some(input) = event
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
    else {
        return;
    };
    let Some(file) = input.files().and_then(|f| f.get(0)) else {
        return;
    };
    input.set_value("");
    wasm_bindgen_futures::spawn_local(async move {
        let Ok(buffer) = JsFuture::from(file.array_buffer()).await else {
            msg("The file could not be read.", false);
            return;
        };
        let bytes = Uint8Array::new(&buffer).to_vec();
        let kind = match Wallet::import_kind(&storage::snapshot(), &bytes) {
            Ok(kind) => kind,
            Err(e) => return msg(&e.to_string(), false),
        };
        let confirmed = match kind {
            // Replacing the person's profile with another one needs the person's act (the
            // passphrase of the stored profile, or the registered device), not a dialog a
            // page script can answer.
            ImportKind::DifferentVault => {
                return person::ask(Act::ReplaceProfile { backup: bytes });
            }
            ImportKind::Nothing => None,
            ImportKind::SameVault => web_sys::window()
                .and_then(|w| {
                    w.confirm_with_message(kind.question().unwrap_or_default())
                        .ok()
                })
                .unwrap_or(false)
                .then_some(kind),
        };
        decisions::finish_import(bytes, confirmed);
    });
}

/// The person enrols this browser with the signer in the Signer setting, using the one-time
/// code `tacit-signer enroll` printed.
fn enrol() {
    let busy = with_app(|app| std::mem::replace(&mut app.enrolling, true)).unwrap_or(true);
    if busy {
        return;
    }
    let signer_text = dom::value("signer-origin");
    let code = dom::value("enrol-code");
    dom::set_msg("enrol-msg", "Enrolling this browser…", true);
    run(|_| {});
    wasm_bindgen_futures::spawn_local(async move {
        let outcome = signer::enrol(&signer_text, &code).await;
        with_app(|app| {
            app.enrolling = false;
            match outcome {
                Ok(pin) => {
                    dom::clear("enrol-code");
                    dom::set_msg("enrol-msg", &format!("{}.", pin.describe()), true);
                    app.enrolment = Enrolment::Enrolled(pin);
                }
                Err(e) => dom::set_msg("enrol-msg", &e.to_string(), false),
            }
            app.after_change();
        });
    });
}

/// Deletes the profile, its disclosure memory, its credentials and their keys, this browser's
/// install key and its enrolment.
fn delete_profile(app: &mut App) {
    app.step(|wallet, gate, vault, snap, _| wallet.delete(gate, vault, snap));
}
