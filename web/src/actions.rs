//! What the person does in the page. Each action reads the form, calls the core, saves, redraws.

use capability_gate::Lifetime;
use js_sys::{Array, Uint8Array};
use rand_core::UnwrapErr;
use wallet_core::store::{StoredVault, next_generation};
use wallet_core::{
    Envelope, GrantId, KdfParams, Passphrase, Profile, ProfileInput, SignedReceipt, Vault,
};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::app::{App, now, with_app};
use crate::{dom, render, storage};

type Rng = UnwrapErr<getrandom::SysRng>;

fn rng() -> Rng {
    UnwrapErr(getrandom::SysRng)
}

const WRONG: &str =
    "The passphrase is wrong or the stored profile is damaged. Nothing was changed.";

/// Routes every click on a `[data-action]` element.
pub fn on_click(event: web_sys::Event) {
    let Some(target) = event
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    else {
        return;
    };
    let Ok(Some(button)) = target.closest("[data-action]") else {
        return;
    };
    let action = button.get_attribute("data-action").unwrap_or_default();
    let id = button.get_attribute("data-id").unwrap_or_default();
    match action.as_str() {
        "create-profile" => slow(
            "Encrypting your profile (Argon2id, 64 MiB)…",
            create_profile,
        ),
        "unlock" => slow("Unlocking (Argon2id, 64 MiB)…", unlock),
        "lock" => run(lock),
        "save-profile" => run(save_profile),
        "change-passphrase" => slow(
            "Changing passphrase (two Argon2id runs)…",
            change_passphrase,
        ),
        "export" => export(),
        "grant" => run(|app| grant(app, &id)),
        "deny" => run(|app| deny(app, &id)),
        "revoke" => run(|app| revoke(app, &id)),
        "release" => {
            let digest = button.get_attribute("data-digest").unwrap_or_default();
            run(|app| release(app, &id, &digest));
        }
        "refuse" => run(|app| refuse(app, &id)),
        "sign-again" => sign_later(id),
        "download-receipt" => download_receipt(&id),
        "end-session" => run(end_session),
        "download-session" => download_session_receipt(&id),
        "verify-log" => {
            with_app(|app| match app.gate.log().verify() {
                Ok(()) => dom::set_msg(
                    "verify-result",
                    &format!("Chain intact: {} entries verified.", app.gate.log().len()),
                    true,
                ),
                Err(e) => dom::set_msg("verify-result", &format!("Chain broken: {e}"), false),
            });
        }
        _ => {}
    }
}

/// Runs an action and redraws.
fn run(f: impl FnOnce(&mut App)) {
    with_app(|app| {
        f(app);
        app.after_change();
    });
}

/// Shows a progress state, lets the browser paint it, then runs Argon2-heavy work.
fn slow(label: &'static str, f: fn(&mut App)) {
    dom::set_text("busy-text", label);
    dom::show("busy", true);
    set_buttons_disabled(true);
    gloo_timers::callback::Timeout::new(40, move || {
        run(f);
        dom::show("busy", false);
        set_buttons_disabled(false);
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

fn msg(text: &str, ok: bool) {
    dom::set_msg("profile-msg", text, ok);
}

/// What the person typed, validated by wallet-core (amount first, then the whole profile).
fn validated_profile() -> Result<Profile, String> {
    let income_minor =
        wallet_core::profile::parse_amount(&dom::value("f-income")).map_err(|e| e.to_string())?;
    let conditions = dom::by_id("f-conditions")
        .map(|root| dom::query_all(&root, "input[type=checkbox]"))
        .unwrap_or_default()
        .into_iter()
        .filter(dom::checked)
        .filter_map(|c| c.get_attribute("value"))
        .collect();
    let input = ProfileInput {
        income_minor,
        currency: dom::value("f-currency"),
        date_of_birth: dom::value("f-dob"),
        district: dom::value("f-district"),
        conditions,
    };
    Profile::new(&input, now().date_utc()).map_err(|e| e.to_string())
}

fn passphrase(id: &str) -> Result<Passphrase, String> {
    let p = Passphrase::new(dom::value(id)).map_err(|e| e.to_string());
    dom::clear(id);
    p
}

fn save_record(app: &mut App, vault: &Vault, loaded: Option<u64>) -> Result<(), String> {
    let current = storage::load()?.map(|r| r.generation);
    let generation = next_generation(current, loaded).map_err(|e| e.to_string())?;
    let record = StoredVault::new(generation, &vault.to_bytes());
    storage::save(&record)?;
    app.stored = Some(record);
    Ok(())
}

fn create_profile(app: &mut App) {
    let result = (|| {
        if dom::value("new-pass") != dom::value("new-pass2") {
            return Err("The two passphrases differ.".to_owned());
        }
        dom::clear("new-pass2");
        let pass = passphrase("new-pass")?;
        let profile = validated_profile()?;
        let vault = Vault::create(&profile, &pass, KdfParams::DEFAULT, &mut rng())
            .map_err(|e| e.to_string())?;
        save_record(app, &vault, None)?;
        app.vault = Some(vault);
        app.gate.unlock(profile);
        Ok(())
    })();
    match result {
        Ok(()) => msg(
            "Profile created, encrypted and saved in this browser. The wallet is unlocked.",
            true,
        ),
        Err(e) => msg(&e, false),
    }
}

fn unlock(app: &mut App) {
    let result = (|| {
        let pass = passphrase("unlock-pass").map_err(|_| WRONG.to_owned())?;
        let record = storage::load()?.ok_or("No profile is stored in this browser.")?;
        let bytes = record.envelope_bytes().map_err(|_| WRONG.to_owned())?;
        let (vault, profile) = Vault::open(&bytes, &pass).map_err(|_| WRONG.to_owned())?;
        render::fill_facts(&profile.to_input());
        app.vault = Some(vault);
        app.stored = Some(record);
        app.restore_ledger();
        app.gate.unlock(profile);
        Ok::<(), String>(())
    })();
    match result {
        Ok(()) => msg("Unlocked.", true),
        Err(e) => msg(&e, false),
    }
}

fn lock(app: &mut App) {
    app.gate.lock();
    app.vault = None;
    render::fill_facts(&ProfileInput {
        income_minor: 0,
        currency: String::new(),
        date_of_birth: String::new(),
        district: String::new(),
        conditions: Vec::new(),
    });
    dom::set_value("f-income", "");
    msg(
        "Locked. Every claim tool was withdrawn and the keys forgotten.",
        true,
    );
}

fn save_profile(app: &mut App) {
    let result = (|| {
        let profile = validated_profile()?;
        let loaded = app.stored.as_ref().map(|r| r.generation);
        // Reseal a taken copy: if saving fails, the stored copy is untouched and the page keeps
        // the vault it had.
        let mut vault = app.vault.take().ok_or("Unlock the wallet first.")?;
        let sealed = vault
            .reseal(&profile, &mut rng())
            .map_err(|e| e.to_string());
        let saved = sealed.and_then(|()| save_record(app, &vault, loaded));
        app.vault = Some(vault);
        saved?;
        app.gate.replace_profile(profile);
        Ok::<(), String>(())
    })();
    match result {
        Ok(()) => msg(
            "Saved. Active grants were withdrawn because your facts changed.",
            true,
        ),
        Err(e) => msg(&e, false),
    }
}

fn change_passphrase(app: &mut App) {
    let result = (|| {
        if dom::value("chg-pass") != dom::value("chg-pass2") {
            return Err("The two new passphrases differ.".to_owned());
        }
        dom::clear("chg-pass2");
        let old = passphrase("old-pass").map_err(|_| WRONG.to_owned())?;
        let new = passphrase("chg-pass")?;
        let record = storage::load()?.ok_or("No profile is stored in this browser.")?;
        let bytes = record.envelope_bytes().map_err(|_| WRONG.to_owned())?;
        let (mut vault, _profile) = Vault::open(&bytes, &old).map_err(|_| WRONG.to_owned())?;
        vault
            .change_passphrase(&new, KdfParams::DEFAULT, &mut rng())
            .map_err(|e| e.to_string())?;
        save_record(app, &vault, Some(record.generation))?;
        app.vault = Some(vault);
        Ok::<(), String>(())
    })();
    match result {
        Ok(()) => msg(
            "Passphrase changed. Your facts were not re-encrypted; only the key wrapping changed.",
            true,
        ),
        Err(e) => msg(&e, false),
    }
}

fn download(bytes: &[u8], name: &str, mime: &str) {
    let array = Uint8Array::from(bytes);
    let parts = Array::of1(&array);
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    let anchor = dom::el("a", "", "");
    dom::attr(&anchor, "href", &url);
    dom::attr(&anchor, "download", name);
    if let Some(a) = anchor.dyn_ref::<web_sys::HtmlElement>() {
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

fn export() {
    match storage::load() {
        Ok(Some(record)) => match record.envelope_bytes() {
            Ok(bytes) => {
                download(
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
        Err(e) => msg(&e, false),
    }
}

/// The import file input changed: read the file, check it is a vault, store it, lock.
pub fn on_import(event: web_sys::Event) {
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
        if Envelope::parse(&bytes).is_err() {
            msg(
                "This file is not a Tacit backup. Nothing was changed.",
                false,
            );
            return;
        }
        let existing = storage::load().ok().flatten();
        if existing.is_some() {
            let question = "Replace the profile stored in this browser with the imported backup?";
            let confirmed = web_sys::window()
                .and_then(|w| w.confirm_with_message(question).ok())
                .unwrap_or(false);
            if !confirmed {
                msg("Import cancelled. Nothing was changed.", false);
                return;
            }
        }
        let generation = existing.map_or(1, |r| r.generation + 1);
        let record = StoredVault::new(generation, &bytes);
        match storage::save(&record) {
            Ok(()) => run(|app| {
                storage::forget_ledger();
                app.saved_ledger = None;
                app.gate
                    .restore_ledger(wallet_core::DisclosureLedger::default());
                app.gate.lock();
                app.vault = None;
                app.stored = Some(record);
                msg("Backup imported. Unlock it with its passphrase.", true);
            }),
            Err(e) => msg(&e, false),
        }
    });
}

fn grant(app: &mut App, request_id: &str) {
    let Some(card) = dom::by_id(&format!("req-{request_id}")) else {
        return;
    };
    let chosen: Vec<usize> = dom::query_all(&card, "input[data-claim-index]")
        .into_iter()
        .filter(dom::checked)
        .filter_map(|c| c.get_attribute("data-claim-index")?.parse().ok())
        .collect();
    let lifetime = match dom::value(&format!("dur-{request_id}")).as_str() {
        "2000" if app.short_grants => Lifetime {
            duration_ms: 2_000,
            uses: None,
        },
        "60000" => Lifetime::ONE_MINUTE,
        "3600000" => Lifetime::ONE_HOUR,
        "once" => Lifetime::ONE_USE,
        _ => Lifetime::TEN_MINUTES,
    };
    if let Err(e) = app.gate.grant(request_id, &chosen, lifetime, now()) {
        dom::set_msg(&format!("req-msg-{request_id}"), &e.to_string(), false);
    }
}

fn deny(app: &mut App, request_id: &str) {
    let reason = dom::value(&format!("deny-{request_id}"));
    let reason = if reason.trim().is_empty() {
        "The person declined.".to_owned()
    } else {
        reason
    };
    if let Err(e) = app.gate.deny(request_id, &reason) {
        dom::set_msg(&format!("req-msg-{request_id}"), &e.to_string(), false);
    }
}

fn revoke(app: &mut App, grant_id: &str) {
    if let Ok(id) = GrantId::parse(grant_id) {
        let _ = app.gate.revoke(&id);
    }
}

fn release(app: &mut App, proposal_id: &str, digest: &str) {
    match app.gate.release(proposal_id, digest, now()) {
        Ok(_) => {
            app.signer_notes
                .insert(proposal_id.to_owned(), "Asking the signer to sign…".into());
            sign_later(proposal_id.to_owned());
        }
        Err(e) => {
            app.signer_notes
                .insert(proposal_id.to_owned(), e.to_string());
        }
    }
}

fn refuse(app: &mut App, proposal_id: &str) {
    let reason = dom::value(&format!("refuse-{proposal_id}"));
    let reason = if reason.trim().is_empty() {
        "The person refused.".to_owned()
    } else {
        reason
    };
    if let Err(e) = app.gate.refuse(proposal_id, &reason) {
        app.signer_notes
            .insert(proposal_id.to_owned(), e.to_string());
    }
}

/// Asks the signer to sign `payload`. The signer must return the very payload it was given.
async fn sign_payload(
    signer: &str,
    payload: &wallet_core::ReceiptPayload,
) -> Result<SignedReceipt, String> {
    let body = serde_json::to_string(payload).map_err(|e| e.to_string())?;
    let text = post_json(&format!("{signer}/v1/receipts"), &body).await?;
    let signed: SignedReceipt = serde_json::from_str(&text)
        .map_err(|_| "the signer's answer was not a receipt".to_owned())?;
    if &signed.payload != payload {
        return Err("the signer returned another payload".into());
    }
    Ok(signed)
}

/// Posts a released payload to the signer; on success the signed receipt is attached for
/// `check_proposal`. On failure the unsigned payload stays, and the page says so.
fn sign_later(proposal_id: String) {
    wasm_bindgen_futures::spawn_local(async move {
        let job = with_app(|app| {
            let payload = app
                .gate
                .proposal(&proposal_id)
                .and_then(|p| match &p.state {
                    capability_gate::ProposalState::Released { payload, .. } => {
                        Some((**payload).clone())
                    }
                    _ => None,
                })?;
            Some((payload, app.signer_url.clone()))
        })
        .flatten();
        let Some((payload, signer)) = job else { return };
        let outcome = sign_payload(&signer, &payload).await;
        with_app(|app| {
            let note = match outcome {
                Ok(signed) => {
                    let who = format!(
                        "Signed by key {} at {}.",
                        signed.key_id,
                        signed.signed_at.millis()
                    );
                    match app.gate.attach_signed(&proposal_id, signed) {
                        Ok(()) => who,
                        Err(e) => {
                            format!("Signer answer refused: {e}. The unsigned receipt is kept.")
                        }
                    }
                }
                Err(e) => format!(
                    "Signer unreachable or refused ({e}). The unsigned receipt is kept; try again."
                ),
            };
            app.signer_notes.insert(proposal_id.clone(), note);
            app.after_change();
        });
    });
}

/// Ends the session: one receipt per audience for the person's record, each sent to the signer,
/// then the wallet locks.
fn end_session(app: &mut App) {
    let receipts = app.gate.session_receipts(now());
    app.gate.lock();
    app.vault = None;
    if receipts.is_empty() {
        msg(
            "Session ended and wallet locked. No site was answered, so there is no receipt.",
            true,
        );
        return;
    }
    let first = app.session_receipts.len();
    let count = receipts.len();
    for payload in receipts {
        app.session_receipts.push(crate::app::SessionReceipt {
            payload,
            signed: None,
            note: "Asking the signer to sign…".into(),
        });
    }
    msg(
        &format!("Session ended and wallet locked; {count} receipt(s) below."),
        true,
    );
    for index in first..first + count {
        wasm_bindgen_futures::spawn_local(async move {
            let job = with_app(|app| {
                app.session_receipts
                    .get(index)
                    .map(|r| (r.payload.clone(), app.signer_url.clone()))
            })
            .flatten();
            let Some((payload, signer)) = job else { return };
            let outcome = sign_payload(&signer, &payload).await;
            with_app(|app| {
                if let Some(receipt) = app.session_receipts.get_mut(index) {
                    match outcome {
                        Ok(signed) => {
                            receipt.note = format!("Signed by key {}.", signed.key_id);
                            receipt.signed = Some(signed);
                        }
                        Err(e) => {
                            receipt.note = format!(
                                "Signer unreachable or refused ({e}); the unsigned receipt is kept."
                            );
                        }
                    }
                }
                app.after_change();
            });
        });
    }
}

fn download_session_receipt(index: &str) {
    let json = index.parse::<usize>().ok().and_then(|i| {
        with_app(|app| {
            app.session_receipts.get(i).and_then(|r| match &r.signed {
                Some(s) => serde_json::to_string_pretty(s).ok(),
                None => serde_json::to_string_pretty(&r.payload).ok(),
            })
        })
        .flatten()
    });
    if let Some(json) = json {
        download(
            json.as_bytes(),
            &format!("tacit-session-receipt-{index}.json"),
            "application/json",
        );
    }
}

async fn post_json(url: &str, body: &str) -> Result<String, String> {
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_mode(web_sys::RequestMode::Cors);
    init.set_body(&JsValue::from_str(body));
    let request = web_sys::Request::new_with_str_and_init(url, &init)
        .map_err(|e| crate::host::error_text(&e))?;
    request
        .headers()
        .set("content-type", "application/json")
        .map_err(|e| crate::host::error_text(&e))?;
    let window = web_sys::window().ok_or("no window")?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(|e| crate::host::error_text(&e))?
        .dyn_into()
        .map_err(|_| "no response")?;
    let text = JsFuture::from(response.text().map_err(|e| crate::host::error_text(&e))?)
        .await
        .map_err(|e| crate::host::error_text(&e))?
        .as_string()
        .unwrap_or_default();
    if response.ok() {
        Ok(text)
    } else {
        Err(format!("HTTP {}", response.status()))
    }
}

fn download_receipt(proposal_id: &str) {
    let json = with_app(|app| {
        app.gate.proposal(proposal_id).and_then(|p| match &p.state {
            capability_gate::ProposalState::Released {
                signed: Some(s), ..
            } => serde_json::to_string_pretty(s).ok(),
            capability_gate::ProposalState::Released { payload, .. } => {
                serde_json::to_string_pretty(payload).ok()
            }
            _ => None,
        })
    })
    .flatten();
    if let Some(json) = json {
        download(
            json.as_bytes(),
            &format!("tacit-receipt-{proposal_id}.json"),
            "application/json",
        );
    }
}
