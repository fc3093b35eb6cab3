//! What the person does in the page. Each action reads the form, runs one transition of the
//! wallet core (`capability_gate::wallet`) under the cross-tab lock, and the app carries out its
//! effects; nothing here decides about records, generations, floors, memory or locking.
//!
//! This is the top of the page's modules: it routes every click, also the decisions on what
//! agents asked (carried out by `decisions`, after the person's act `person` asks for) and the
//! receipts' buttons (`receipts`).

use capability_gate::ProposalId;
use std::cell::Cell;

use capability_gate::strength::{self, Strength};
use capability_gate::wallet::{DeleteConsent, Effect, ImportKind, StoredCheck, Wallet};
use js_sys::{Array, Promise, Uint8Array};
use wallet_core::{KdfParams, Normalized, Typed};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::app::{App, now, run, with_app};
use crate::choices::{self, Does, Owner};
use crate::decisions::{self, Act};
use crate::signer::{self, Enrolment};
use crate::{credentials, dom, editor, focus, person, receipts, storage};

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
    no_longer_news();
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

/// The person acts again: what the profile's status line said of their previous act ("Profile
/// created…", "Saved…") is no longer news, and goes (issue 30, item 7: it stayed for a quarter
/// of an hour). An error stays until the act that answers it says something else.
fn no_longer_news() {
    if let Some(line) = dom::by_id("profile-msg")
        && line.class_name() == "msg ok"
    {
        dom::set_text_of(&line, "");
    }
}

/// Runs the action of `button` (a `[data-action]` element the person activated).
fn dispatch(button: &web_sys::Element) {
    no_longer_news();
    let action = button.get_attribute("data-action").unwrap_or_default();
    let id = button.get_attribute("data-id").unwrap_or_default();
    match action.as_str() {
        "create-profile" => unless_guessable("new-pass", "Nothing was created.", || {
            slow(
                "Encrypting your profile (Argon2id, 64 MiB)…",
                create_profile,
            )
        }),
        "unlock" => slow("Unlocking (Argon2id, 64 MiB)…", unlock),
        // Locking writes nothing: at once, without waiting for the cross-tab lock.
        "lock" => run(lock),
        "open-editor" => slow("Checking your passphrase (Argon2id, 64 MiB)…", open_editor),
        "close-editor" => run(close_editor),
        "save-profile" => locked_run(save_profile),
        "change-passphrase" => {
            unless_guessable("chg-pass", "The passphrase was not changed.", || {
                slow(
                    "Changing passphrase (two Argon2id runs)…",
                    change_passphrase,
                )
            })
        }
        "export" => export_to("profile-msg"),
        "enrol" => enrol(),
        "add-credential" => credentials::add(),
        "delete-profile" => open_delete_dialog(),
        "delete-export" => export_to("delete-export-msg"),
        "delete-confirm" => delete_confirm(),
        "delete-forgotten" => delete_forgotten(),
        "delete-cancel" => close_delete_dialog(),
        // What is stored is checked, under the cross-tab lock (after any write queued before).
        "verify-log" => storage::locked_then(|| {
            let check = with_app(|app| app.wallet.check_stored(&app.vault, &storage::snapshot()));
            if let Some(check) = check {
                let ok = matches!(check, StoredCheck::Intact { .. });
                dom::set_msg("verify-result", &check.words(), ok);
            }
        }),
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
        "delete-history" => person::ask(Act::DeleteHistory),
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
    if field.id() == "delete-phrase" {
        // The phrase of a forgotten passphrase deletes through its own button, not the
        // dialog's passphrase one.
        event.prevent_default();
        if event.is_trusted() {
            delete_forgotten();
        }
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
        focus::done(focus::Act::Created);
    } else if pass.as_typed() != repeat.as_typed() {
        select_field("new-pass2");
    } else if strength::refuse_weak(&pass).is_err() {
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
    } else if app.gate.is_unlocked() {
        focus::done(focus::Act::Unlocked);
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
    } else if app.wallet.editor() == capability_gate::wallet::Editor::Open {
        focus::done(focus::Act::EditorOpened);
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
    } else if !cleared && strength::refuse_weak(&new).is_err() {
        select_field("chg-pass");
    }
}

/// Downloads the encrypted backup; what happened is said in `target`.
fn export_to(target: &str) {
    let msg = |text: &str, ok: bool| dom::set_msg(target, text, ok);
    match storage::load_record() {
        // The whole stored record: the envelope and, sealed with it, the memory of what was
        // revealed and the person's record (log, receipts, applications, history).
        Ok(Some(record)) => {
            dom::download(
                &wallet_core::store::Backup::file_of(&record),
                "tacit-profile.tacitvault",
                "application/octet-stream",
            );
            msg(
                "Encrypted backup downloaded, with your record of what sites were told. It opens \
                 only with your passphrase.",
                true,
            );
        }
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
                    focus::done(focus::Act::Enrolled);
                }
                Err(e) => dom::set_msg("enrol-msg", &e.to_string(), false),
            }
            app.after_change();
        });
    });
}

// ---- a guessable new passphrase ----

#[wasm_bindgen(module = "/js/strength.js")]
extern "C" {
    #[wasm_bindgen(js_name = rateStrength, catch)]
    fn rate_strength(pass: &str) -> Result<Promise, JsValue>;
}

/// The strength estimate's words when it rates `pass` weak (zxcvbn score 0–2); `None` when it
/// does not, or when the estimate cannot be loaded (the wallet core's own floor still holds:
/// `capability_gate::strength::refuse_weak`).
async fn weak_by_estimate(pass: &str) -> Option<String> {
    let rated = JsFuture::from(rate_strength(pass).ok()?).await.ok()?;
    let pair = Array::from(&rated);
    let code = pair.get(0).as_string()?;
    (code == Strength::Weak.code())
        .then(|| pair.get(1).as_string())
        .flatten()
}

/// Runs `then` unless the strength estimate rates the new passphrase in `field` weak; then the
/// person is told why, in the estimate's words, and `nothing` (what did not happen). Too short
/// is left to the wallet core, which says it at once.
fn unless_guessable(field: &'static str, nothing: &'static str, then: fn()) {
    let pass = dom::value(field);
    if strength::before_estimate(&pass).is_some() {
        return then();
    }
    dom::set_text("busy-text", "Checking how hard the passphrase is to guess…");
    dom::show("busy", true);
    wasm_bindgen_futures::spawn_local(async move {
        let weak = weak_by_estimate(&pass).await;
        dom::show("busy", false);
        match weak {
            Some(words) if dom::value(field) == pass => {
                msg(&format!("{words} {nothing}"), false);
                select_field(field);
            }
            _ => then(),
        }
    });
}

// ---- deleting the profile ----

thread_local! {
    /// A deletion is being checked (one at a time; the dialog stays open meanwhile).
    static DELETING: Cell<bool> = const { Cell::new(false) };
    static DELETE_LISTENING: Cell<bool> = const { Cell::new(false) };
}

fn delete_dialog() -> Option<web_sys::HtmlDialogElement> {
    dom::by_id("delete-dialog")?.dyn_into().ok()
}

fn focus(id: &str) {
    if let Some(e) = dom::by_id(id).and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
        let _ = e.focus();
    }
}

/// `[data-action=delete-profile]` (a trusted click): the dialog that says what is lost, offers
/// the backup first, and asks for the passphrase. Nothing is deleted yet.
fn open_delete_dialog() {
    let Some(dialog) = delete_dialog() else {
        return;
    };
    if dialog.open() {
        return;
    }
    listen_delete_once();
    reset_delete_dialog();
    if dialog.show_modal().is_ok() {
        focus("delete-export-btn");
    }
}

fn reset_delete_dialog() {
    dom::clear("delete-pass");
    dom::clear("delete-phrase");
    dom::set_msg("delete-msg", "", true);
    dom::set_msg("delete-export-msg", "", true);
    if let Some(forgot) = dom::by_id("delete-forgot") {
        let _ = forgot.remove_attribute("open");
    }
    set_delete_busy(false);
}

/// Closes the dialog (Cancel, or after the deletion); nothing typed stays in it.
fn close_delete_dialog() {
    if DELETING.get() {
        return;
    }
    reset_delete_dialog();
    if let Some(dialog) = delete_dialog() {
        dialog.close();
    }
}

fn set_delete_busy(busy: bool) {
    if let Some(dialog) = dom::by_id("delete-dialog") {
        for b in dom::query_all(&dialog, "button, input") {
            let _ = if busy {
                b.set_attribute("disabled", "")
            } else {
                b.remove_attribute("disabled")
            };
        }
    }
}

/// Escape closes the dialog (the browser's `cancel`), never while a deletion is checked; on
/// every close what was typed is emptied.
fn listen_delete_once() {
    if DELETE_LISTENING.replace(true) {
        return;
    }
    let on = |event: &str, f: fn(web_sys::Event)| {
        if let Some(target) = dom::by_id("delete-dialog") {
            let closure = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::Event)>::new(f);
            let _ =
                target.add_event_listener_with_callback(event, closure.as_ref().unchecked_ref());
            // Page-lifetime listeners, installed once.
            closure.forget();
        }
    };
    on("cancel", |event| {
        if DELETING.get() {
            event.prevent_default();
        } else {
            // Escape: emptied at once (the `close` event that follows comes a task later, when
            // the dialog already reads as closed).
            reset_delete_dialog();
        }
    });
    on("close", |_| {
        if !DELETING.get() {
            reset_delete_dialog();
        }
    });
}

/// How the person confirmed in the dialog.
enum Confirm {
    Passphrase(Normalized),
    Forgotten(String),
}

/// `[data-action=delete-confirm]` or Enter in the passphrase field: the passphrase is checked
/// (Argon2id, after a paint) and only then is anything deleted.
fn delete_confirm() {
    let pass = dom::passphrase("delete-pass");
    delete_with(
        Confirm::Passphrase(pass),
        "Checking your passphrase (Argon2id, 64 MiB)…",
    );
}

/// `[data-action=delete-forgotten]` or Enter in its field: the person forgot the passphrase
/// and typed the phrase.
fn delete_forgotten() {
    let phrase = dom::value("delete-phrase");
    delete_with(Confirm::Forgotten(phrase), "Deleting…");
}

fn delete_with(confirm: Confirm, label: &'static str) {
    if DELETING.get() || !delete_dialog().is_some_and(|d| d.open()) {
        return;
    }
    DELETING.set(true);
    dom::set_msg("delete-msg", label, true);
    set_delete_busy(true);
    gloo_timers::callback::Timeout::new(40, move || {
        storage::locked_then(move || {
            let mut refused = None;
            run(|app| refused = delete_profile(app, &confirm));
            DELETING.set(false);
            set_delete_busy(false);
            match refused {
                None => close_delete_dialog(),
                Some(text) => {
                    dom::set_msg("delete-msg", &text, false);
                    let field = match confirm {
                        Confirm::Passphrase(_) => "delete-pass",
                        Confirm::Forgotten(_) => "delete-phrase",
                    };
                    select_field(field);
                }
            }
        });
    })
    .forget();
}

/// Deletes the profile, its disclosure memory, its credentials and their keys, this browser's
/// install key and its enrolment, if the wallet core accepts the person's confirmation;
/// otherwise returns the core's refusal (said in the dialog, not under the profile).
fn delete_profile(app: &mut App, confirm: &Confirm) -> Option<String> {
    let mut refused = None;
    app.step(|wallet, gate, vault, snap, _| {
        let consent = match confirm {
            Confirm::Passphrase(pass) => DeleteConsent::Passphrase(pass),
            Confirm::Forgotten(phrase) => DeleteConsent::Forgotten(phrase),
        };
        let (wallet, effects) = wallet.delete(gate, vault, snap, consent);
        if effects.iter().any(|e| matches!(e, Effect::DeleteRecord)) {
            return (wallet, effects);
        }
        let effects = effects
            .into_iter()
            .filter_map(|e| match e {
                Effect::Message { text, .. } => {
                    refused = Some(text);
                    None
                }
                other => Some(other),
            })
            .collect();
        (wallet, effects)
    });
    refused
}
