//! Issue 30, item 3, end to end in Chromium: the record of what sites were told (the comparison
//! log, the history of ended sessions) is sealed with the vault and survives reloads, a second
//! tab and a restored backup; End session closes the session into a history the person can read,
//! download and delete; a new profile starts empty.
//!
//! These tests fail, never skip, when Chromium, the WebMCP switch or the built site is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use serde_json::{Value, json};
use tacit_e2e::wallet::{PASS, Session, WAIT, Wallet, choose_file};

const PHARMACY: &str = "http://127.0.0.1:8082";
/// Satisfied for the profile these tests make (it holds pregnancy only).
const NEITHER: [&str; 2] = ["asthma", "diabetes"];

/// A fresh wallet tab on an empty origin storage with a profile holding pregnancy.
fn fresh(session: &Session) -> Wallet<'_> {
    session.fresh_profile_with("pregnancy")
}

/// The agent asks `has_none_of(asthma, diabetes)`, the person grants it, the agent calls it.
fn answer(wallet: &mut Wallet<'_>, nonce: &str) {
    let id = wallet.request(json!({
        "origin": PHARMACY,
        "nonce": nonce,
        "site_name": "Pharmacy",
        "purpose": "Can this medicine be dispensed",
        "claims": [ { "kind": "has_none_of", "conditions": NEITHER } ]
    }));
    let tools = wallet.grant(&id, "3600000", 1);
    let out = wallet.call(&tools[0], json!({}));
    assert_eq!(out["result"]["satisfied"], true, "{out}");
}

/// How many answers the log shows (rows with an outcome).
fn log_rows(wallet: &Wallet<'_>) -> u64 {
    wallet
        .page
        .eval("document.querySelectorAll('#log li[data-outcome]').length")
        .unwrap()
        .as_u64()
        .unwrap()
}

fn wait_log_rows(wallet: &Wallet<'_>, n: u64) {
    let js = format!("document.querySelectorAll('#log li[data-outcome]').length === {n}");
    if let Err(e) = wallet.page.wait_for(&js, WAIT) {
        panic!(
            "the log does not show {n} answers (it shows {}: {:?}): {e}",
            log_rows(wallet),
            wallet.text("#log")
        );
    }
}

/// The person clicks "Check that the log is intact"; what it says.
fn check(wallet: &Wallet<'_>) -> String {
    wallet.front();
    wallet.page.click("[data-action=verify-log]").unwrap();
    wallet.wait_text("#verify-result", "intact");
    wallet.text("#verify-result")
}

/// The ended sessions the history shows: each one's number of answers, newest first.
fn history(wallet: &Wallet<'_>) -> Vec<u64> {
    let out = wallet
        .page
        .eval(
            "[...document.querySelectorAll('#history li.session')].map(li => +li.dataset.entries)",
        )
        .unwrap();
    out.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

fn wait_history(wallet: &Wallet<'_>, n: usize) {
    let js = format!("document.querySelectorAll('#history li.session').length === {n}");
    if let Err(e) = wallet.page.wait_for(&js, WAIT) {
        panic!(
            "the history does not show {n} sessions ({:?}, {:?}): {e}",
            wallet.text("#history"),
            wallet.text("#profile-msg")
        );
    }
}

fn unlock_after_reload(wallet: &mut Wallet<'_>) {
    wallet.reload();
    wallet.unlock_and_wait(PASS);
}

#[test]
fn history_the_log_survives_reloads_and_shows_in_a_second_tab() {
    let session = Session::start();
    let mut wallet = fresh(&session);
    answer(&mut wallet, "n-h-1");
    answer(&mut wallet, "n-h-2");
    wait_log_rows(&wallet, 2);
    // The sealed record holds no raw fact or condition name.
    let record = wallet.stored_vault().as_str().unwrap().to_owned();
    for raw in ["asthma", "diabetes", "pregnancy", "2840000"] {
        assert!(!record.contains(raw), "the stored record shows {raw}");
    }
    // The person sends an application of the second answer; its record is sealed too.
    let proposal = wallet.draft(PHARMACY, "n-h-2");
    wallet.release(&proposal, true);
    let sent = "document.querySelector('#history li.application[data-sent=Released]')";
    wallet.page.wait_for(&format!("!!{sent}"), WAIT).unwrap();
    unlock_after_reload(&mut wallet);
    wait_log_rows(&wallet, 2);
    let said = check(&wallet);
    assert!(said.contains("its 2 entries"), "{said}");
    // After the reload the application and its receipt still show.
    if let Err(e) = wallet.page.wait_for(&format!("!!{sent}"), WAIT) {
        panic!(
            "the sent application is gone after a reload ({:?}): {e}",
            wallet.text("#history")
        );
    }
    wallet.wait_text("#history", "Receipt for 127.0.0.1:8082");
    // A second tab sees the same log, and its answer reaches the first one.
    let mut second = session.open("");
    second.unlock_and_wait(PASS);
    wait_log_rows(&second, 2);
    answer(&mut second, "n-h-3");
    wait_log_rows(&second, 3);
    unlock_after_reload(&mut wallet);
    wait_log_rows(&wallet, 3);
    let said = check(&wallet);
    assert!(said.contains("its 3 entries"), "{said}");
    // The check reads what is stored, not this tab's copy: with one hex digit of the stored
    // memory changed behind the page's back, it says so (this tab's log is untouched).
    wallet
        .page
        .eval(&format!(
            "(() => {{ const k = {key:?}; const r = JSON.parse(localStorage.getItem(k)); \
               const last = r.memory.slice(-1); \
               r.memory = r.memory.slice(0, -1) + (last === '0' ? '1' : '0'); \
               localStorage.setItem(k, JSON.stringify(r)); return true; }})()",
            key = "tacit.vault.v1"
        ))
        .unwrap();
    wallet.front();
    wallet.page.click("[data-action=verify-log]").unwrap();
    wallet.wait_text("#verify-result", "altered");
    assert!(
        !wallet.text("#verify-result").contains("intact"),
        "{}",
        wallet.text("#verify-result")
    );
}

#[test]
fn history_end_session_download_and_delete() {
    let session = Session::start();
    let mut wallet = fresh(&session);
    answer(&mut wallet, "n-e-1");
    answer(&mut wallet, "n-e-2");
    wait_log_rows(&wallet, 2);
    wallet.end_session();
    wallet.wait_text("#lock-pill", "Locked");
    wallet.wait_text("#history", "Unlock the wallet");
    unlock_after_reload(&mut wallet);
    wait_history(&wallet, 1);
    assert_eq!(history(&wallet), vec![2]);
    wallet
        .page
        .eval("document.getElementById('history-card').scrollIntoView(); true")
        .unwrap();
    let shot = wallet.page.screenshot("history-ended-session").unwrap();
    assert!(shot.exists());
    // The open session starts empty, and says so (not "unlock").
    wait_log_rows(&wallet, 0);
    wallet.wait_text("#log", "No site has been told anything yet");

    // Download: the file the page offers, read from the blob behind its URL (the page revokes
    // the URL right after the click).
    wallet
        .page
        .eval(
            "window.__downloads = []; window.__blobs = []; \
             const made = URL.createObjectURL; \
             URL.createObjectURL = (b) => { window.__blobs.push(b); return made(b); }; \
             HTMLAnchorElement.prototype.click = function () { \
               window.__downloads.push({ name: this.download }); }; true",
        )
        .unwrap();
    wallet.front();
    wallet.page.click("#history-export").unwrap();
    wallet
        .page
        .wait_for("window.__downloads.length === 1", WAIT)
        .unwrap();
    let name = wallet.page.eval("window.__downloads[0].name").unwrap();
    assert_eq!(name, json!("tacit-history.json"));
    let text = wallet
        .page
        .eval("window.__blobs[window.__blobs.length - 1].text()")
        .unwrap();
    let export: Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
    assert_eq!(export["tacit_history"], 1, "{export}");
    let sessions = export["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{export}");
    assert_eq!(sessions[0]["log"].as_array().unwrap().len(), 2, "{export}");

    // Delete is the person's act, confirmed with their passphrase. A script's click, with
    // `window.confirm` answering yes, opens nothing and deletes nothing.
    wallet
        .page
        .eval(
            "window.confirm = () => true; document.getElementById('history-delete').click(); \
             document.getElementById('history-delete').dispatchEvent(new MouseEvent('click', { bubbles: true })); true",
        )
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    assert_eq!(
        wallet.page.eval(tacit_e2e::wallet::CONFIRM_OPEN).unwrap(),
        json!(false),
        "a script's click asked for the person's confirmation"
    );
    assert_eq!(history(&wallet), vec![2]);
    // The person clicks, then cancels: nothing goes.
    wallet.page.click("#history-delete").unwrap();
    let said = wallet.confirm_text();
    assert!(said.contains("history"), "{said}");
    wallet.page.click("[data-action=confirm-cancel]").unwrap();
    wallet
        .page
        .wait_for(
            &format!("!{}", tacit_e2e::wallet::CONFIRM_OPEN),
            tacit_e2e::wallet::WAIT,
        )
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(history(&wallet), vec![2]);
    // Clicked and confirmed: the history goes and stays gone.
    wallet.page.click("#history-delete").unwrap();
    wallet.confirm_act();
    wallet.wait_text("#history-msg", "was deleted");
    wait_history(&wallet, 0);
    unlock_after_reload(&mut wallet);
    wallet.wait_text("#history", "No session has ended yet");
}

#[test]
fn history_a_new_profile_starts_empty_and_a_backup_brings_the_record_back() {
    let session = Session::start();
    let mut wallet = fresh(&session);
    // The backup, taken before the answers: the envelope bytes the Export button downloads.
    let record: Value = serde_json::from_str(wallet.stored_vault().as_str().unwrap()).unwrap();
    let backup = unhex(record["envelope"].as_str().unwrap());
    let file = tempfile::Builder::new()
        .suffix(".tacitvault")
        .tempfile()
        .unwrap();
    std::fs::write(file.path(), &backup).unwrap();
    answer(&mut wallet, "n-b-1");
    wait_log_rows(&wallet, 1);
    // Importing the same vault's backup keeps the sealed record.
    wallet
        .page
        .eval("window.confirm = () => true; true")
        .unwrap();
    choose_file(&wallet.page, "#import-file", file.path());
    wallet.wait_text("#profile-msg", "Backup imported");
    wallet.unlock_and_wait(PASS);
    wait_log_rows(&wallet, 1);

    // Deleting the profile and making a new one in the same tab: nothing of the old one shows.
    wallet.delete_profile();
    wait_log_rows(&wallet, 0);
    wallet.create_profile_of("28,400.00", None, "pregnancy");
    wallet.wait_text("#lock-pill", "Unlocked");
    wait_log_rows(&wallet, 0);
    wallet.wait_text("#history", "No session has ended yet");
    let said = check(&wallet);
    assert!(said.contains("it is empty"), "{said}");
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// Item 3: the backup file the Export button downloads carries the record (the log, the
/// receipts, the applications and the history, sealed with the profile): imported into another
/// browser, which never saw this profile, and unlocked there, the same record shows.
#[test]
fn history_the_downloaded_backup_brings_the_record_to_another_browser() {
    let session = Session::start();
    let mut wallet = fresh(&session);
    answer(&mut wallet, "n-c-1");
    wallet.end_session();
    wallet.wait_text("#lock-pill", "Locked");
    wallet.unlock_and_wait(PASS);
    wait_history(&wallet, 1);
    answer(&mut wallet, "n-c-2");
    wait_log_rows(&wallet, 1);

    // The person clicks Export; the file is the blob the page downloads.
    wallet
        .page
        .eval(
            "window.__blobs = []; const made = URL.createObjectURL; \
             URL.createObjectURL = (b) => { window.__blobs.push(b); return made(b); }; true",
        )
        .unwrap();
    wallet.front();
    wallet.page.click("#export-btn").unwrap();
    wallet.wait_text("#profile-msg", "Encrypted backup downloaded");
    let bytes = wallet
        .page
        .eval(
            "window.__blobs[window.__blobs.length - 1].arrayBuffer() \
               .then((b) => Array.from(new Uint8Array(b)))",
        )
        .unwrap();
    let bytes: Vec<u8> = bytes
        .as_array()
        .unwrap()
        .iter()
        .map(|b| u8::try_from(b.as_u64().unwrap()).unwrap())
        .collect();
    let file = tempfile::Builder::new()
        .suffix(".tacitvault")
        .tempfile()
        .unwrap();
    std::fs::write(file.path(), &bytes).unwrap();
    // What the file holds is sealed: no fact, no site and no answer in the clear (words that
    // hex, which the sealed parts are written in, cannot spell by chance).
    let text = String::from_utf8_lossy(&bytes);
    for plain in [
        "pregnancy",
        "127.0.0.1",
        "Pharmacy",
        "satisfied",
        "28,400",
        "nordhafen",
    ] {
        assert!(!text.contains(plain), "{plain:?} in the backup file");
    }

    // Another browser (its own profile directory: nothing of this one).
    let other = tacit_e2e::Browser::launch().unwrap();
    let mut restored = Wallet::open(&other, &session.server, "");
    restored.front();
    assert_eq!(
        restored.stored_vault(),
        Value::Null,
        "the other browser holds a record"
    );
    choose_file(&restored.page, "#import-file", file.path());
    restored.wait_text("#profile-msg", "Backup imported");
    restored.unlock_and_wait(PASS);
    wait_history(&restored, 1);
    assert_eq!(history(&restored), vec![1]);
    wait_log_rows(&restored, 1);
    let said = check(&restored);
    assert!(said.contains("its one entry"), "{said}");
    // The restored wallet answers from the restored memory too: the record and the memory are
    // the same profile's, and its next answer chains onto the restored log.
    answer(&mut restored, "n-c-3");
    wait_log_rows(&restored, 2);
    restored.reload();
    restored.unlock_and_wait(PASS);
    wait_log_rows(&restored, 2);
}
