//! The person's confirmation: Grant, Release and End session act only after a person's act that
//! a page script cannot perform. The choices on the card are snapshotted at the (trusted) click;
//! then either
//! - a platform authenticator registered for this vault is asked for a user-verifying assertion
//!   over a challenge that hashes the act's sentence (shown first) with fresh randomness, and
//!   the answer is verified in Rust, its signature counter included
//!   ([`tacit_protocol::webauthn::verify_assertion`]) against the public key sealed with the
//!   vault — a script can replace `navigator.credentials.get`, so the verification is what
//!   counts; or
//! - the modal `#confirm` dialog asks for the passphrase again, checked against the stored vault
//!   (Argon2id).
//!
//! Which of the two asks, the checks of both, and the sealed device record are
//! [`capability_gate::consent`]'s: when a device is registered but cannot be used (locked,
//! unreadable), the dialog says so in words. Only a [`Confirmed`] from one of the two paths
//! carries out the snapshotted act. Settings → "Confirm with this device" registers or removes
//! the authenticator (sealed with the vault, stored under `tacit.authenticator.v1`).

use std::cell::{Cell, RefCell};

use capability_gate::consent::{self, Confirmation, Confirmed, Device, DeviceState, Made};
use js_sys::{Promise, Reflect, Uint8Array};
use rand_core::UnwrapErr;
use tacit_protocol::webauthn::{Assertion, WebAuthnError};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::app::{App, with_app};
use crate::decisions::{self, Act};
use crate::storage::StorageError;
use crate::{dom, storage};

#[wasm_bindgen(module = "/js/webauthn.js")]
extern "C" {
    #[wasm_bindgen(js_name = createCredential, catch)]
    fn create_credential(
        challenge: &Uint8Array,
        rp_id: &str,
        user_id: &Uint8Array,
        user_name: &str,
    ) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = getAssertion, catch)]
    fn get_assertion(
        challenge: &Uint8Array,
        rp_id: &str,
        credential_id: &Uint8Array,
    ) -> Result<Promise, JsValue>;
}

/// Why the passphrase typed in the dialog did not confirm; `Display` is the dialog's message.
#[derive(Debug, thiserror::Error)]
enum PassphraseError {
    #[error(transparent)]
    Stored(#[from] StorageError),
    #[error(transparent)]
    NotConfirmed(#[from] consent::NotConfirmed),
}

/// Why this device did not confirm, or was not registered; `Display` is what the page's note
/// says of it.
#[derive(Debug, thiserror::Error)]
enum DeviceError {
    #[error("no randomness for a challenge")]
    NoChallenge,
    #[error("no randomness")]
    NoRandomness,
    #[error("no page origin")]
    NoOrigin,
    /// The person cancelled the ceremony, or it timed out (`NotAllowedError`).
    #[error("cancelled or timed out")]
    Cancelled,
    /// The browser refused the ceremony: its exception's name, or the text it threw.
    #[error("{0}")]
    Refused(String),
    #[error("the device did not answer")]
    NoAnswer,
    #[error(transparent)]
    NotVerified(#[from] WebAuthnError),
    #[error(transparent)]
    NotRegistered(#[from] consent::RegisterError),
    /// The record could not be sealed with the vault (whatever [`Device::seal`] said).
    #[error("{0}")]
    NotSealed(Box<dyn std::error::Error>),
    #[error("the wallet was locked")]
    Locked,
    #[error("this browser offers no local storage")]
    NoStorage,
    #[error("the device could not be saved (storage full or blocked)")]
    NotSaved,
    #[error("the page was busy; try again")]
    Busy,
}

/// Where the authenticator's record ([`Device::seal`]) is kept.
pub const AUTHENTICATOR_KEY: &str = "tacit.authenticator.v1";

thread_local! {
    /// The act waiting for the passphrase dialog.
    static PENDING: RefCell<Option<Act>> = const { RefCell::new(None) };
    /// The passphrase is being checked (one check at a time).
    static CHECKING: Cell<bool> = const { Cell::new(false) };
    /// An authenticator ceremony is under way (one at a time).
    static CEREMONY: Cell<bool> = const { Cell::new(false) };
    static LISTENING: Cell<bool> = const { Cell::new(false) };
}

fn rng() -> UnwrapErr<getrandom::SysRng> {
    UnwrapErr(getrandom::SysRng)
}

fn random<const N: usize>() -> Option<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes)
}

/// The sentence the person confirms.
fn describe(app: &App, act: &Act) -> String {
    match act {
        Act::Grant {
            request_id,
            chosen,
            lifetime,
        } => {
            let (origin, total) = app
                .gate
                .request(request_id)
                .map(|r| {
                    // This request's own check: an unconfirmed one is named by its address
                    // even when another request from that address was verified.
                    let name = match &r.asker {
                        capability_gate::AskerStatus::Verified { site_name } => {
                            Some(site_name.as_str())
                        }
                        capability_gate::AskerStatus::Unconfirmed => None,
                    };
                    let site = capability_gate::words::site_label(name, r.origin.as_str());
                    (site, r.claims.len())
                })
                .unwrap_or_default();
            let how_long = capability_gate::Lifetime::from_choice(lifetime, app.short_grants)
                .map(|l| l.words())
                .unwrap_or_else(|| "for a duration this card does not offer".to_owned());
            format!(
                "Grant {} of the {total} questions {origin} asked, {how_long}: the agent may then \
                 ask the wallet for these yes/no answers.",
                chosen.len()
            )
        }
        Act::Release {
            proposal_id, kept, ..
        } => {
            let (audience, total) = app
                .gate
                .proposal(proposal_id)
                .map(|p| {
                    // As its card names it: checked for this application's nonce.
                    let name = match app.gate.proposal_asker(proposal_id) {
                        Some(capability_gate::AskerStatus::Verified { site_name }) => {
                            Some(site_name)
                        }
                        _ => None,
                    };
                    let site =
                        capability_gate::words::site_label(name.as_deref(), p.audience.as_str());
                    (site, p.items.len())
                })
                .unwrap_or_default();
            format!(
                "Release {} of the {total} answers on the application to {audience}: they leave \
                 this browser in a receipt.",
                kept.len()
            )
        }
        Act::EndSession => "End the session: the wallet locks and each site answered gets a \
                            receipt for your records."
            .to_owned(),
        Act::DeleteHistory => "Delete the history of ended sessions from this browser: what \
                               sites were told stays known to them; only your record of it \
                               goes. This cannot be undone."
            .to_owned(),
        Act::RegisterAuthenticator => "Use this device's screen lock or biometrics to confirm \
                                       grants, releases and the end of a session from now on."
            .to_owned(),
        Act::ReplaceProfile { .. } => capability_gate::wallet::ImportKind::DifferentVault
            .question()
            .unwrap_or_default()
            .to_owned(),
    }
}

/// Shows a note where the act's card shows its messages.
fn note(act: &Act, text: &str, ok: bool) {
    match act {
        Act::Grant { request_id, .. } => dom::set_msg(&format!("req-msg-{request_id}"), text, ok),
        Act::Release { proposal_id, .. } => {
            let (id, text) = (proposal_id.clone(), text.to_owned());
            with_app(|app| {
                app.signer_notes.insert(id, text);
                app.after_change();
            });
        }
        Act::EndSession => dom::set_msg("verify-result", text, ok),
        Act::DeleteHistory => dom::set_msg("history-msg", text, ok),
        Act::RegisterAuthenticator => dom::set_msg("authenticator-msg", text, ok),
        Act::ReplaceProfile { .. } => dom::set_msg("profile-msg", text, ok),
    }
}

/// Asks for the person's act, then runs `act`. Called on a trusted click, with the card's
/// choices already read.
pub fn ask(act: Act) {
    if CEREMONY.get() || CHECKING.get() {
        return;
    }
    let Some((sentence, how)) = with_app(|app| {
        let how = consent::confirmation(act.kind(), &device_state(app));
        (describe(app, &act), how)
    }) else {
        return;
    };
    match how {
        Confirmation::Device(device) => {
            CEREMONY.set(true);
            wasm_bindgen_futures::spawn_local(async move {
                // The act's sentence is shown before the device's prompt, and the challenge
                // the device signs is a hash of exactly that sentence.
                note(&act, &format!("{sentence} Confirm on this device…"), true);
                let outcome = assert_person(&device, &sentence).await;
                CEREMONY.set(false);
                match outcome {
                    Ok(confirmed) => {
                        note(&act, "", true);
                        carry_out(act, confirmed);
                    }
                    Err(e) => note(
                        &act,
                        &format!("Not confirmed ({e}). Nothing was done."),
                        false,
                    ),
                }
            });
        }
        Confirmation::Passphrase => open_dialog(act, &sentence, None),
        // Named, and said in the dialog: never a silent downgrade.
        instead @ Confirmation::PassphraseInstead(_) => {
            open_dialog(act, &sentence, instead.notice())
        }
    }
}

/// Carries out an act the person confirmed: only with the proof of it in hand.
fn carry_out(act: Act, confirmed: Confirmed) {
    match act {
        Act::RegisterAuthenticator => wasm_bindgen_futures::spawn_local(register()),
        act => decisions::carry_out(act, confirmed),
    }
}

// ---- the passphrase dialog ----

fn dialog() -> Option<web_sys::HtmlDialogElement> {
    dom::by_id("confirm")?.dyn_into().ok()
}

fn open_dialog(act: Act, sentence: &str, notice: Option<&str>) {
    let Some(dialog) = dialog() else {
        return;
    };
    if dialog.open() {
        return;
    }
    listen_once();
    PENDING.with(|p| *p.borrow_mut() = Some(act));
    match notice {
        Some(notice) => dom::set_text("confirm-text", &format!("{sentence} {notice}")),
        None => dom::set_text("confirm-text", sentence),
    }
    dom::set_msg("confirm-msg", "", true);
    dom::clear("confirm-pass");
    set_dialog_busy(false);
    if dialog.show_modal().is_err() {
        PENDING.with(|p| p.borrow_mut().take());
        return;
    }
    if let Some(pass) = dom::input("confirm-pass") {
        let _ = pass.focus();
    }
}

fn close_dialog() {
    PENDING.with(|p| p.borrow_mut().take());
    dom::clear("confirm-pass");
    if let Some(dialog) = dialog() {
        dialog.close();
    }
}

fn set_dialog_busy(busy: bool) {
    if let Some(dialog) = dom::by_id("confirm") {
        for b in dom::query_all(&dialog, "button, input") {
            let _ = if busy {
                b.set_attribute("disabled", "")
            } else {
                b.remove_attribute("disabled")
            };
        }
    }
}

/// The dialog's own events: Enter in the passphrase field confirms (a trusted key press only);
/// the form never submits by itself (a wrong passphrase keeps the dialog open); closing it with
/// Escape drops the act.
fn listen_once() {
    if LISTENING.replace(true) {
        return;
    }
    let on = |id: &str, event: &str, f: fn(web_sys::Event)| {
        if let Some(target) = dom::by_id(id) {
            let closure = Closure::<dyn FnMut(web_sys::Event)>::new(f);
            let _ =
                target.add_event_listener_with_callback(event, closure.as_ref().unchecked_ref());
            closure.forget();
        }
    };
    on("confirm-form", "submit", |event| event.prevent_default());
    on("confirm-pass", "keydown", |event| {
        let enter = event
            .dyn_ref::<web_sys::KeyboardEvent>()
            .is_some_and(|k| k.key() == "Enter" && !k.is_composing());
        if enter {
            event.prevent_default();
            if event.is_trusted() {
                confirm_ok();
            }
        }
    });
    on("confirm", "close", |_| {
        if !CHECKING.get() {
            PENDING.with(|p| p.borrow_mut().take());
            dom::clear("confirm-pass");
        }
    });
}

/// `[data-action=confirm-ok]` (a trusted click) or Enter: check the passphrase after a paint.
pub fn confirm_ok() {
    if CHECKING.get() || PENDING.with(|p| p.borrow().is_none()) {
        return;
    }
    let typed = dom::value("confirm-pass");
    dom::clear("confirm-pass");
    let empty = typed.is_empty();
    let pass = dom::normalized(typed);
    if empty {
        let empty = consent::NotConfirmed::Empty.to_string();
        dom::set_msg("confirm-msg", &empty, false);
        return;
    }
    CHECKING.set(true);
    dom::set_msg("confirm-msg", "Checking your passphrase…", true);
    set_dialog_busy(true);
    gloo_timers::callback::Timeout::new(40, move || {
        let checked = check_passphrase(&pass);
        CHECKING.set(false);
        set_dialog_busy(false);
        match checked {
            Ok(confirmed) => {
                let act = PENDING.with(|p| p.borrow_mut().take());
                close_dialog();
                let Some(act) = act else {
                    return;
                };
                let locked = with_app(|app| !app.wallet.is_unlocked()).unwrap_or(false);
                if locked && matches!(act, Act::Grant { .. }) {
                    // A request that waited while the wallet was locked: the one passphrase the
                    // person typed unlocks the wallet, then the grant is carried out.
                    unlock_then(act, confirmed, pass);
                } else {
                    carry_out(act, confirmed);
                }
            }
            Err(e) => {
                dom::set_msg("confirm-msg", &e.to_string(), false);
                if let Some(pass) = dom::input("confirm-pass") {
                    let _ = pass.focus();
                }
            }
        }
    })
    .forget();
}

/// `[data-action=confirm-cancel]`: nothing happens.
pub fn confirm_cancel() {
    if CHECKING.get() {
        return;
    }
    close_dialog();
}

/// The passphrase opens the stored vault, the one this page is unlocked on (if it is).
fn check_passphrase(pass: &wallet_core::Normalized) -> Result<Confirmed, PassphraseError> {
    let stored = storage::load_record().map_err(StorageError::from)?;
    let unlocked_on =
        with_app(|app| app.vault.as_ref().map(|v| *v.envelope().vault_id())).flatten();
    Ok(consent::by_passphrase(
        stored.as_ref(),
        pass,
        unlocked_on.as_ref(),
    )?)
}

/// Unlocks the wallet with `pass` (the one the person just confirmed with), under the
/// cross-tab lock, then carries out `act`; if the wallet does not unlock, the act's card says
/// why and nothing is granted.
fn unlock_then(act: Act, confirmed: Confirmed, pass: wallet_core::Normalized) {
    note(&act, "Unlocking (Argon2id, 64 MiB)…", true);
    storage::locked_then(move || {
        let unlocked = with_app(|app| {
            app.step(|wallet, gate, vault, snap, rng| wallet.unlock(gate, vault, snap, &pass, rng));
            app.after_change();
            app.wallet.is_unlocked()
        })
        .unwrap_or(false);
        if unlocked {
            note(&act, "", true);
            carry_out(act, confirmed);
        } else {
            note(
                &act,
                "The wallet could not be unlocked, so nothing was granted. Unlock it above, then allow again.",
                false,
            );
        }
    });
}

// ---- the authenticator ----

fn local() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn stored_record() -> Option<String> {
    local()?.get_item(AUTHENTICATOR_KEY).ok()?
}

/// Forgets the registered authenticator.
pub fn forget_authenticator() {
    if let Some(storage) = local() {
        let _ = storage.remove_item(AUTHENTICATOR_KEY);
    }
}

/// The device registered for the vault this page is on (the unlocked one, else the stored
/// record's).
fn device_state(app: &App) -> DeviceState {
    consent::device(
        stored_record().as_deref(),
        app.vault.as_ref(),
        app.stored.as_ref().and_then(|s| s.vault_id().ok()),
    )
}

fn page_origin() -> Option<(String, String)> {
    let location = web_sys::window()?.location();
    Some((location.origin().ok()?, location.hostname().ok()?))
}

/// The byte fields `names` of a ceremony's answer (empty where missing or not bytes).
fn fields<const N: usize>(object: &JsValue, names: [&str; N]) -> [Vec<u8>; N] {
    names.map(|name| {
        Reflect::get(object, &name.into())
            .ok()
            .filter(|v| v.is_instance_of::<Uint8Array>())
            .map(|v| Uint8Array::new(&v).to_vec())
            .unwrap_or_default()
    })
}

/// Awaits a WebAuthn ceremony the page started; its refusal in words.
async fn ceremony(started: Result<Promise, JsValue>) -> Result<JsValue, DeviceError> {
    let promise = started.map_err(|e| js_error(&e))?;
    JsFuture::from(promise).await.map_err(|e| js_error(&e))
}

fn js_error(e: &JsValue) -> DeviceError {
    Reflect::get(e, &"name".into())
        .ok()
        .and_then(|n| n.as_string())
        .map(|name| match name.as_str() {
            "NotAllowedError" => DeviceError::Cancelled,
            _ => DeviceError::Refused(name),
        })
        .or_else(|| e.as_string().map(DeviceError::Refused))
        .unwrap_or(DeviceError::NoAnswer)
}

/// Asks the authenticator for a user-verifying assertion over the act's challenge
/// ([`tacit_protocol::webauthn::act_challenge`] of `sentence`, the words the person was shown)
/// and verifies it, its counter included; the device's record is sealed again with the new
/// counter before the act is carried out.
async fn assert_person(device: &Device, sentence: &str) -> Result<Confirmed, DeviceError> {
    let fresh = random::<32>().ok_or(DeviceError::NoChallenge)?;
    let challenge = tacit_protocol::webauthn::act_challenge(&fresh, sentence);
    let (origin, rp_id) = page_origin().ok_or(DeviceError::NoOrigin)?;
    let answer = ceremony(get_assertion(
        &Uint8Array::from(&challenge[..]),
        &rp_id,
        &Uint8Array::from(device.credential_id()),
    ))
    .await?;
    let [raw_id, client_data, auth_data, signature] = fields(
        &answer,
        ["rawId", "clientDataJSON", "authenticatorData", "signature"],
    );
    let (confirmed, counted) = device.confirm(
        &Assertion {
            credential_id: &raw_id,
            client_data_json: &client_data,
            authenticator_data: &auth_data,
            signature_der: &signature,
        },
        &challenge,
        &origin,
        &rp_id,
    )?;
    keep_device(&counted)?;
    Ok(confirmed)
}

/// Seals `device` (its new counter) with the unlocked vault and stores it. Without that the
/// act is not carried out: a counter that is not kept would let the same assertion count twice.
fn keep_device(device: &Device) -> Result<(), DeviceError> {
    with_app(|app| {
        let vault = app.vault.as_ref().ok_or(DeviceError::Locked)?;
        let record = device
            .seal(vault, &mut rng())
            .map_err(|e| DeviceError::NotSealed(e.into()))?;
        local()
            .ok_or(DeviceError::NoStorage)?
            .set_item(AUTHENTICATOR_KEY, &record)
            .map_err(|_| DeviceError::NotSaved)
    })
    .unwrap_or(Err(DeviceError::Busy))
}

/// `[data-action=register-authenticator]`: confirmed with the passphrase first.
pub fn ask_register() {
    let unlocked = with_app(|app| app.vault.is_some()).unwrap_or(false);
    if !unlocked {
        dom::set_msg(
            "authenticator-msg",
            "Unlock the wallet first: the device's key is sealed with your profile.",
            false,
        );
        return;
    }
    ask(Act::RegisterAuthenticator);
}

/// Registers a platform credential and seals its id and public key with the vault.
async fn register() {
    let outcome = async {
        let challenge = random::<32>().ok_or(DeviceError::NoChallenge)?;
        let user_id = random::<16>().ok_or(DeviceError::NoRandomness)?;
        let (origin, rp_id) = page_origin().ok_or(DeviceError::NoOrigin)?;
        let vault_id = with_app(|app| app.vault.as_ref().map(|v| *v.envelope().vault_id()))
            .flatten()
            .ok_or(DeviceError::Locked)?;
        dom::set_msg("authenticator-msg", "Follow your device's prompt…", true);
        let answer = ceremony(create_credential(
            &Uint8Array::from(&challenge[..]),
            &rp_id,
            &Uint8Array::from(&user_id[..]),
            "Tacit wallet",
        ))
        .await?;
        let [credential_id, public_key, client_data, auth_data] = fields(
            &answer,
            ["rawId", "publicKey", "clientDataJSON", "authenticatorData"],
        );
        let made = Made {
            credential_id: &credential_id,
            public_key: &public_key,
            algorithm: Reflect::get(&answer, &"algorithm".into())
                .ok()
                .and_then(|a| a.as_f64())
                .unwrap_or(0.0),
            client_data_json: &client_data,
            authenticator_data: &auth_data,
        };
        let device = Device::register(&made, &challenge, &origin, &rp_id)?;
        with_app(|app| {
            let vault = app
                .vault
                .as_ref()
                .filter(|v| v.envelope().vault_id() == &vault_id)
                .ok_or(DeviceError::Locked)?;
            let record = device
                .seal(vault, &mut rng())
                .map_err(|e| DeviceError::NotSealed(e.into()))?;
            local()
                .ok_or(DeviceError::NoStorage)?
                .set_item(AUTHENTICATOR_KEY, &record)
                .map_err(|_| DeviceError::NotSaved)
        })
        .unwrap_or(Err(DeviceError::Busy))
    }
    .await;
    match outcome {
        Ok(()) => dom::set_msg(
            "authenticator-msg",
            "This device now confirms grants, releases and the end of a session.",
            true,
        ),
        Err(e) => dom::set_msg(
            "authenticator-msg",
            &format!("Not registered ({e}). Your passphrase still confirms."),
            false,
        ),
    }
    with_app(|app| app.after_change());
}

/// `[data-action=remove-authenticator]`: the passphrase confirms from now on.
pub fn remove() {
    forget_authenticator();
    dom::set_msg(
        "authenticator-msg",
        "This device no longer confirms; your passphrase does.",
        true,
    );
    with_app(|app| app.after_change());
}

/// Settings → "Confirm with this device": whether one is registered for this vault.
pub fn render(app: &App) {
    listen_once();
    if app.stored.is_none() && stored_record().is_some() {
        // The profile was deleted (not merely unreadable): its device goes with it.
        if matches!(storage::load_record(), Ok(None)) {
            forget_authenticator();
        }
    }
    let state = device_state(app);
    let on = !matches!(state, DeviceState::NotRegistered);
    if let Some(status) = dom::by_id("authenticator-status") {
        let (text, code) = match state {
            DeviceState::Ready(_) | DeviceState::Locked => (
                "On: this device's screen lock or biometrics confirm grants, releases and the \
                 end of a session.",
                "on",
            ),
            DeviceState::Unreadable => (
                "Unreadable: a device is registered but its record could not be read, so your \
                 passphrase confirms. Remove it and register the device again.",
                "unreadable",
            ),
            DeviceState::NotRegistered => (
                "Off: your passphrase confirms grants, releases and the end of a session.",
                "off",
            ),
        };
        dom::set_text_of(&status, text);
        dom::attr(&status, "data-state", code);
    }
    let enable = |id: &str, enabled: bool| {
        if let Some(b) = dom::by_id(id) {
            let _ = if enabled {
                b.remove_attribute("disabled")
            } else {
                b.set_attribute("disabled", "")
            };
        }
    };
    enable("register-authenticator-btn", !on && app.vault.is_some());
    enable("remove-authenticator-btn", on);
}
