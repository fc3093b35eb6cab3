//! What the person does in the page. Each action reads the form, calls the core, saves, redraws.

use js_sys::{Array, Uint8Array};
use rand_core::UnwrapErr;
use wallet_core::store::{StoredVault, next_profile_generation};
use wallet_core::{Envelope, KdfParams, Passphrase, Profile, ProfileInput, Vault};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::app::{App, now, with_app};
use crate::signer::{self, Enrolment};
use crate::{credentials, decisions, dom, editor, storage};

type Rng = UnwrapErr<getrandom::SysRng>;

fn rng() -> Rng {
    UnwrapErr(getrandom::SysRng)
}

const WRONG: &str =
    "The passphrase is wrong or the stored profile is damaged. Nothing was changed.";

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
        "enrol" => enrol(),
        "add-credential" => credentials::add(),
        "delete-profile" => run(delete_profile),
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
        other => decisions::on_action(other, &id, &button),
    }
}

/// Runs an action and redraws.
pub(crate) fn run(f: impl FnOnce(&mut App)) {
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

pub(crate) fn msg(text: &str, ok: bool) {
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

/// Writes `vault`'s envelope at `generation` with the memory sealed in: the stored record's
/// memory (if it is this vault's; fail closed if it cannot be read) merged with the gate's.
/// `gate_memory`: the gate's ledger is this vault's (the wallet is unlocked on it).
fn save_record(
    app: &mut App,
    vault: &Vault,
    generation: u64,
    current: Option<&StoredVault>,
    gate_memory: bool,
) -> Result<(), String> {
    let mut memory = if gate_memory {
        app.gate.ledger().clone()
    } else {
        wallet_core::DisclosureLedger::default()
    };
    if let Some(current) =
        current.filter(|c| c.vault_id().ok().as_ref() == Some(vault.envelope().vault_id()))
    {
        let key = current.vault_key().map_err(|e| e.to_string())?;
        let floor = storage::load_floors()?.get(&key);
        let (stored, _) = current
            .open_memory(vault, floor, storage::load_legacy_ledger().as_deref())
            .map_err(|e| e.to_string())?;
        memory.merge_from(&stored);
    }
    let record =
        StoredVault::sealed(generation, vault, &memory, &mut rng()).map_err(|e| e.to_string())?;
    storage::save(&record)?;
    let key = record.vault_key().map_err(|e| e.to_string())?;
    storage::raise_floor(&key, generation)?;
    storage::forget_legacy_ledger();
    if gate_memory {
        app.gate.restore_ledger(memory.clone());
        app.saved_ledger = Some(memory);
    }
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
        let current = storage::load()?;
        let generation =
            next_profile_generation(current.as_ref(), None).map_err(|e| e.to_string())?;
        // A new vault starts with an empty memory.
        app.gate.lock();
        app.gate
            .restore_ledger(wallet_core::DisclosureLedger::default());
        app.gate.unlock(profile);
        match save_record(app, &vault, generation, None, true) {
            Ok(()) => {
                app.vault = Some(vault);
                Ok(())
            }
            Err(e) => {
                app.gate.lock();
                Err(e)
            }
        }
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
        app.vault = Some(vault);
        if let Err(e) = app.restore_memory(&record) {
            app.vault = None;
            return Err(format!(
                "This profile was not unlocked: {e}. Restore the record this browser last saved, or import your backup."
            ));
        }
        editor::fill_facts(&profile.to_input());
        app.stored = Some(record);
        app.gate.unlock(profile);
        credentials::load_into_gate(app);
        Ok::<(), String>(())
    })();
    match result {
        Ok(()) => msg("Unlocked.", true),
        Err(e) => msg(&e, false),
    }
}

/// Empties the editor's fields.
fn lock_fields() {
    editor::fill_facts(&ProfileInput {
        income_minor: 0,
        currency: String::new(),
        date_of_birth: String::new(),
        district: String::new(),
        conditions: Vec::new(),
    });
    dom::set_value("f-income", "");
}

fn lock(app: &mut App) {
    app.gate.lock();
    app.vault = None;
    lock_fields();
    msg(
        "Locked. Every claim tool was withdrawn and the keys forgotten.",
        true,
    );
}

fn save_profile(app: &mut App) {
    let result = (|| {
        let profile = validated_profile()?;
        let current = storage::load()?;
        let generation = next_profile_generation(current.as_ref(), app.stored.as_ref())
            .map_err(|e| e.to_string())?;
        let mut vault = app.vault.take().ok_or("Unlock the wallet first.")?;
        if let Err(e) = vault.reseal(&profile, &mut rng()) {
            app.vault = Some(vault);
            return Err(e.to_string());
        }
        // The memory reset for changed facts goes into the same write.
        let before = app.gate.ledger().clone();
        let changed = app.gate.replace_profile(profile);
        if let Err(e) = save_record(app, &vault, generation, current.as_ref(), true) {
            // Nothing was stored: the stored facts are still in force; lock to re-read them.
            app.gate.restore_ledger(before);
            app.gate.lock();
            return Err(format!("{e} The wallet was locked; unlock to continue."));
        }
        app.vault = Some(vault);
        Ok::<_, String>(changed)
    })();
    match result {
        Ok(changed) if changed.is_empty() => msg(
            "Saved. Active grants were withdrawn. No fact changed, so the disclosure memory is as it was.",
            true,
        ),
        Ok(changed) => {
            let names: Vec<&str> = changed.iter().map(|a| a.name()).collect();
            msg(
                &format!(
                    "Saved. Active grants were withdrawn. The disclosure memory was reset only for what you changed ({}); answers already given about the old value remain known to whoever received them.",
                    names.join(", ")
                ),
                true,
            )
        }
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
        let generation =
            next_profile_generation(Some(&record), Some(&record)).map_err(|e| e.to_string())?;
        let unlocked_on_it = app.gate.is_unlocked()
            && app.vault.as_ref().map(|v| v.envelope().vault_id())
                == Some(vault.envelope().vault_id());
        save_record(app, &vault, generation, Some(&record), unlocked_on_it)?;
        if unlocked_on_it {
            app.vault = Some(vault);
        }
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

pub(crate) fn download(bytes: &[u8], name: &str, mime: &str) {
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
        let existing = match storage::load() {
            Ok(existing) => existing,
            Err(e) => {
                msg(&format!("{e}. Nothing was changed."), false);
                return;
            }
        };
        let same_vault = existing
            .as_ref()
            .map(|r| r.same_vault(&bytes).unwrap_or(false));
        let question = match same_vault {
            Some(true) => Some(
                "Replace the stored copy of this profile with the imported backup? What the wallet remembers having revealed is kept.",
            ),
            Some(false) => Some(
                "This backup is a DIFFERENT profile. Replace the profile stored in this browser with it? The imported profile starts with an empty disclosure memory: it does not know what was revealed before.",
            ),
            None => None,
        };
        if let Some(question) = question {
            let confirmed = web_sys::window()
                .and_then(|w| w.confirm_with_message(question).ok())
                .unwrap_or(false);
            if !confirmed {
                msg("Import cancelled. Nothing was changed.", false);
                return;
            }
        }
        let record = match StoredVault::imported(&bytes, existing.as_ref()) {
            Ok(record) => record,
            Err(e) => {
                msg(&e.to_string(), false);
                return;
            }
        };
        match storage::save(&record) {
            Ok(()) => run(|app| {
                app.gate.lock();
                app.vault = None;
                if same_vault != Some(true) {
                    // The credentials were the replaced profile's: they go with it.
                    wasm_bindgen_futures::spawn_local(async {
                        let _ = credentials::delete_all().await;
                    });
                    storage::forget_legacy_ledger();
                    app.saved_ledger = None;
                    app.gate
                        .restore_ledger(wallet_core::DisclosureLedger::default());
                }
                app.stored = Some(record);
                msg("Backup imported. Unlock it with its passphrase.", true);
            }),
            Err(e) => msg(&e, false),
        }
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
                Err(e) => dom::set_msg("enrol-msg", &e, false),
            }
            app.after_change();
        });
    });
}

/// Deletes the profile, its disclosure memory, its credentials and their keys, this browser's
/// install key and its enrolment.
fn delete_profile(app: &mut App) {
    if let Err(e) = storage::delete_profile() {
        msg(&e, false);
        return;
    }
    app.gate.lock();
    app.gate
        .restore_ledger(wallet_core::DisclosureLedger::default());
    app.vault = None;
    app.stored = None;
    app.saved_ledger = None;
    app.enrolment = Enrolment::NotEnrolled;
    lock_fields();
    wasm_bindgen_futures::spawn_local(async {
        let deleted = crate::keystore::delete()
            .await
            .map_err(|e| format!("this browser's signer key could not be deleted ({e})"))
            .and(credentials::delete_all().await.map_err(|e| {
                format!("the credentials and their keys could not all be deleted ({e})")
            }));
        let text = match &deleted {
            Ok(()) => "Profile, disclosure memory, credentials and their keys, signer key and \
                enrolment deleted from this browser."
                .to_owned(),
            Err(e) => format!("Profile deleted, but {e}."),
        };
        msg(&text, deleted.is_ok());
        with_app(|app| app.after_change());
    });
}
