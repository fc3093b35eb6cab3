//! Issue 30, items 1 and 9, end to end in Chromium: the person never loses their record by one
//! click, and a common passphrase does not protect it.
//!
//! - Delete: a page script's clicks on "Delete profile and signer key…" open nothing; the
//!   person's click opens a dialog that says what is lost (the profile, the credentials, the
//!   signer enrolment, and that a new enrolment code will be needed), offers the encrypted
//!   backup first and has the focus on it; Escape and Cancel keep everything; a wrong passphrase
//!   keeps everything; a script's click on the dialog's Delete does nothing; the right
//!   passphrase deletes. Locked, the passphrase is still needed; a person who forgot it deletes
//!   by typing "delete my profile", and only while locked.
//! - A common passphrase ("password") is refused when creating a profile and when changing the
//!   passphrase, with the reason in words.
//!
//! These tests fail, never skip, when Chromium or the built site is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::Duration;

use serde_json::{Value, json};
use tacit_e2e::wallet::{DELETE_OPEN, PASS, Session, WAIT, Wallet};
use tacit_e2e::{DESKTOP, PHONE, Viewport};

/// Long enough for anything a click could set off (an Argon2 run) to have happened.
fn settle() {
    std::thread::sleep(Duration::from_millis(2500));
}

/// Everything a page script can do to "click" `selector` (as in `consent.rs`): `.click()`,
/// synthetic mouse and pointer clicks, synthetic Enter and Space, `requestSubmit`.
fn script_click(wallet: &Wallet<'_>, selector: &str) {
    let js = format!(
        "(() => {{ const b = document.querySelector({sel}); if (!b) return 'missing'; \
           b.click(); \
           b.dispatchEvent(new MouseEvent('click', {{bubbles: true, cancelable: true, view: window}})); \
           b.dispatchEvent(new PointerEvent('click', {{bubbles: true, cancelable: true}})); \
           b.focus(); \
           for (const key of ['Enter', ' ']) {{ \
             b.dispatchEvent(new KeyboardEvent('keydown', {{key, bubbles: true, cancelable: true}})); \
             b.dispatchEvent(new KeyboardEvent('keyup', {{key, bubbles: true, cancelable: true}})); }} \
           const f = b.form || b.closest('form'); \
           if (f && f.requestSubmit) {{ try {{ f.requestSubmit(b.type === 'submit' ? b : undefined); }} catch (e) {{}} }} \
           return 'clicked'; }})()",
        sel = Value::from(selector)
    );
    assert_eq!(
        wallet.page.eval(&js).unwrap(),
        json!("clicked"),
        "{selector} is not on the page"
    );
}

/// Whether the element matching `selector` lies wholly inside the visible viewport.
fn in_view(wallet: &Wallet<'_>, selector: &str) -> bool {
    let js = format!(
        "(() => {{ const r = document.querySelector({sel}).getBoundingClientRect(); \
           return r.width > 0 && r.top >= 0 && r.left >= 0 && \
             r.bottom <= window.innerHeight && r.right <= window.innerWidth; }})()",
        sel = Value::from(selector)
    );
    wallet.page.eval(&js).unwrap() == json!(true)
}

fn delete_open(wallet: &Wallet<'_>) -> bool {
    wallet.page.eval(DELETE_OPEN).unwrap() == json!(true)
}

fn wait_closed(wallet: &Wallet<'_>) {
    wallet
        .page
        .wait_for(&format!("!{DELETE_OPEN}"), WAIT)
        .unwrap();
}

fn active_id(wallet: &Wallet<'_>) -> Value {
    wallet
        .page
        .eval("document.activeElement && document.activeElement.id")
        .unwrap()
}

/// The profile, its floor and this browser's enrolment key names are all still stored.
fn assert_kept(wallet: &Wallet<'_>, record: &Value) {
    assert_eq!(&wallet.stored_vault(), record, "the stored profile is kept");
    assert!(!record.is_null());
}

#[test]
fn delete_needs_the_persons_click_and_passphrase() {
    let session = Session::start();
    let wallet = session.with_profile("");
    let record = wallet.stored_vault();
    assert!(!record.is_null());

    // A script's clicks on Delete open nothing and delete nothing.
    wallet.page.click("#delete-profile-box summary").unwrap();
    script_click(&wallet, "[data-action=delete-profile]");
    settle();
    assert!(!delete_open(&wallet), "a script opened the delete dialog");
    assert_kept(&wallet, &record);
    assert!(wallet.text("#lock-pill").contains("Unlocked"));

    // The person's click opens the dialog: what is lost, in words; the backup first, focused.
    wallet.open_delete_dialog();
    let said = wallet.text("#delete-dialog");
    for needle in [
        "encrypted profile",
        "credentials",
        "signer key and enrolment",
        "new enrolment code",
        "Download the encrypted backup first",
        "Type your passphrase to delete",
    ] {
        assert!(
            said.contains(needle),
            "the dialog does not say {needle:?}: {said}"
        );
    }
    assert_eq!(active_id(&wallet), "delete-export-btn");
    // On a desktop and on a phone the dialog's choices are in view without scrolling.
    for (name, viewport) in [("desktop", DESKTOP), ("phone", PHONE)] {
        let Viewport { width, height, .. } = viewport;
        wallet
            .page
            .screenshot_at(&format!("record-delete-dialog-{name}"), viewport)
            .unwrap();
        for button in [
            "#delete-export-btn",
            "#delete-confirm-btn",
            "#delete-cancel-btn",
        ] {
            assert!(
                in_view(&wallet, button),
                "{button} is out of view at {width}x{height}"
            );
        }
    }
    wallet.page.set_viewport(DESKTOP).unwrap();
    // Escape cancels: nothing deleted, nothing typed kept.
    wallet.page.fill("#delete-pass", PASS).unwrap();
    wallet.page.press("Escape").unwrap();
    wait_closed(&wallet);
    assert_kept(&wallet, &record);
    assert_eq!(wallet.field("delete-pass"), "");
    // Cancel keeps everything.
    wallet.open_delete_dialog();
    wallet.page.click("[data-action=delete-cancel]").unwrap();
    wait_closed(&wallet);
    assert_kept(&wallet, &record);
    // The backup is offered first and downloads (said in the dialog).
    wallet.open_delete_dialog();
    wallet.page.click("[data-action=delete-export]").unwrap();
    wallet.wait_text("#delete-export-msg", "Encrypted backup downloaded");
    // The wrong passphrase keeps everything and says so in the dialog.
    wallet.try_delete("wrong wrong wrong");
    wallet.wait_text(
        "#delete-msg",
        "That passphrase is not right. Nothing was deleted.",
    );
    assert!(delete_open(&wallet));
    assert_kept(&wallet, &record);
    // Nothing typed: said, nothing deleted.
    wallet.page.fill("#delete-pass", "").unwrap();
    wallet.page.click("[data-action=delete-confirm]").unwrap();
    wallet.wait_text("#delete-msg", "Type your passphrase to delete the profile.");
    assert_kept(&wallet, &record);
    // A script's click on the dialog's Delete, with the right passphrase in the field, does
    // nothing.
    wallet.page.fill("#delete-pass", PASS).unwrap();
    script_click(&wallet, "[data-action=delete-confirm]");
    settle();
    assert!(delete_open(&wallet));
    assert_kept(&wallet, &record);
    // Unlocked, the phrase for a forgotten passphrase does not stand in for it.
    wallet.page.click("#delete-forgot summary").unwrap();
    wallet
        .page
        .fill("#delete-phrase", "delete my profile")
        .unwrap();
    wallet.page.click("[data-action=delete-forgotten]").unwrap();
    wallet.wait_text(
        "#delete-msg",
        "While the wallet is unlocked, confirm with your passphrase.",
    );
    assert_kept(&wallet, &record);
    // The right passphrase (Enter in the field) deletes.
    wallet.page.fill("#delete-pass", PASS).unwrap();
    wallet.page.press("Enter").unwrap();
    wait_closed(&wallet);
    wallet.wait_text("#profile-msg", "new enrolment code");
    assert_eq!(wallet.stored_vault(), Value::Null);
    assert!(wallet.text("#lock-pill").contains("Locked"));
}

#[test]
fn locked_delete_needs_the_passphrase_or_the_typed_phrase() {
    let session = Session::start();
    let wallet = session.with_profile("");
    let record = wallet.stored_vault();
    wallet.page.click("[data-action=lock]").unwrap();
    wallet.wait_text("#lock-pill", "Locked");

    // Locked, a wrong passphrase deletes nothing.
    wallet.open_delete_dialog();
    wallet.try_delete("wrong wrong wrong");
    wallet.wait_text(
        "#delete-msg",
        "That passphrase is not right. Nothing was deleted.",
    );
    assert_kept(&wallet, &record);
    // The person forgot it: the dialog says the profile cannot be recovered; a wrong phrase
    // deletes nothing, the phrase deletes.
    wallet.page.click("#delete-forgot summary").unwrap();
    let said = wallet.text("#delete-forgot");
    assert!(said.contains("cannot be recovered"), "{said}");
    wallet.page.fill("#delete-phrase", "yes delete").unwrap();
    wallet.page.press("Enter").unwrap();
    wallet.wait_text("#delete-msg", "type \"delete my profile\"");
    assert_kept(&wallet, &record);
    wallet
        .page
        .fill("#delete-phrase", "delete my profile")
        .unwrap();
    wallet.page.click("[data-action=delete-forgotten]").unwrap();
    wait_closed(&wallet);
    wallet.wait_text("#profile-msg", "new enrolment code");
    assert_eq!(wallet.stored_vault(), Value::Null);

    // A new profile can be made, and deleted with the right passphrase while locked.
    wallet.create_profile();
    wallet.page.click("[data-action=lock]").unwrap();
    wallet.wait_text("#lock-pill", "Locked");
    wallet.delete_profile();
    assert_eq!(wallet.stored_vault(), Value::Null);
}

#[test]
fn a_common_passphrase_is_refused_at_create_and_at_change() {
    let session = Session::start();
    let wallet = session.open("");
    // Create with "password": refused, in words; nothing stored.
    wallet.page.fill("#new-pass", "password").unwrap();
    wallet.page.fill("#new-pass2", "password").unwrap();
    wallet.page.fill("#f-income", "28,400.00").unwrap();
    wallet.set("f-dob", "1990-02-28");
    wallet.set("f-district", "nordhafen");
    wallet
        .page
        .click("#f-conditions input[value=asthma]")
        .unwrap();
    wallet.page.click("[data-action=create-profile]").unwrap();
    wallet.wait_text("#profile-msg", "common password");
    let said = wallet.text("#profile-msg");
    assert!(said.contains("Nothing was created"), "{said}");
    settle();
    assert_eq!(wallet.stored_vault(), Value::Null);
    assert!(wallet.text("#lock-pill").contains("Locked"));
    assert_eq!(
        active_id(&wallet),
        "new-pass",
        "the field to fix has the focus"
    );
    // The demo's passphrase is accepted.
    wallet.create_profile();

    // Change to "password": refused, in words; the old passphrase still opens the profile.
    let before = wallet.stored_vault();
    wallet.page.click("#editor-actions summary").unwrap();
    wallet.page.fill("#old-pass", PASS).unwrap();
    wallet.page.fill("#chg-pass", "password").unwrap();
    wallet.page.fill("#chg-pass2", "password").unwrap();
    wallet
        .page
        .click("[data-action=change-passphrase]")
        .unwrap();
    wallet.wait_text("#profile-msg", "common password");
    let said = wallet.text("#profile-msg");
    assert!(said.contains("The passphrase was not changed"), "{said}");
    settle();
    assert_eq!(wallet.stored_vault(), before);
    wallet.page.click("[data-action=lock]").unwrap();
    wallet.wait_text("#lock-pill", "Locked");
    wallet.unlock_and_wait(PASS);
}
