//! Issue 12, "disclosure memory no one can reset", end to end in Chromium.
//!
//! With conditions = [pregnancy], `has_none_of{anticoagulant, liver, pregnancy}` is "not
//! satisfied"; then `has_none_of{anticoagulant, liver}` would single out pregnancy and must be
//! declined. Each way of making the wallet forget is tried before the second question: an
//! unrelated profile edit, export and re-import of the same backup, a second tab unlocked before
//! the probing, the old sealed-ledger key deleted plus reload, and an older record restored
//! (rollback). Every one ends declined, or with the vault refused — never "satisfied".
//!
//! These tests fail, never skip, when Chromium, the WebMCP switch or the built site is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use serde_json::{Value, json};
use tacit_e2e::wallet::{PASS, Session, WAIT, Wallet, choose_file, error_code};

const PHARMACY: &str = "http://127.0.0.1:8082";
const WIDE: [&str; 3] = ["anticoagulant-therapy", "liver-disease", "pregnancy"];
const NARROW: [&str; 2] = ["anticoagulant-therapy", "liver-disease"];

/// A fresh wallet tab on an empty origin storage, in which the person creates a profile:
/// 28,400.00 EUR, born 1990-02-28, Nordhafen, pregnancy.
fn pregnant(session: &Session) -> Wallet<'_> {
    session.fresh_profile_with("pregnancy")
}

/// The agent asks the pharmacy's `has_none_of(codes)`; the request's id.
fn request(wallet: &mut Wallet<'_>, nonce: &str, codes: &[&str]) -> String {
    wallet.request(json!({
        "origin": PHARMACY,
        "nonce": nonce,
        "site_name": "Pharmacy",
        "purpose": "Can this medicine be dispensed",
        "claims": [ { "kind": "has_none_of", "conditions": codes } ]
    }))
}

/// The agent asks `has_none_of(codes)`, the person grants it, the agent calls the tool.
fn probe(wallet: &mut Wallet<'_>, nonce: &str, codes: &[&str]) -> Value {
    let id = request(wallet, nonce, codes);
    let tools = wallet.grant(&id, "3600000", 1);
    wallet.call(&tools[0], json!({}))
}

/// The first question: "not satisfied" (pregnancy is held).
fn probe_wide(wallet: &mut Wallet<'_>, nonce: &str) {
    let out = probe(wallet, nonce, &WIDE);
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["result"]["satisfied"], false, "{out}");
}

/// The second question must be declined, never answered. The consent card shows what the
/// memory would decline disabled and unticked (so there is nothing to grant); if it does not,
/// the person grants it and the claim tool must decline.
fn assert_narrow_declined(wallet: &mut Wallet<'_>, nonce: &str, path: &str) {
    let id = request(wallet, nonce, &NARROW);
    let card = wallet.first_claim_box(&id);
    if card[0] == true {
        assert_eq!(card[1], false, "{path}: a declined claim is ticked: {card}");
        assert_ne!(card[2], "", "{path}: disabled without a reason: {card}");
        return;
    }
    let tools = wallet.grant(&id, "3600000", 1);
    let out = wallet.call(&tools[0], json!({}));
    assert_ne!(
        out["result"]["satisfied"], true,
        "{path}: the wallet singled out pregnancy: {out}"
    );
    assert_eq!(error_code(&out), "declined_privacy_floor", "{path}: {out}");
}

fn stored(wallet: &Wallet<'_>) -> String {
    wallet.stored_vault().as_str().unwrap().to_owned()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn reload_and_unlock(wallet: &mut Wallet<'_>) {
    wallet.reload();
    wallet.unlock(PASS);
}

/// `record` written over the stored vault record, reloaded, the right passphrase typed: the
/// vault is refused and stays locked (fail closed).
fn assert_record_refused(wallet: &mut Wallet<'_>, record: &str) {
    wallet
        .page
        .eval(&format!(
            "localStorage.setItem('tacit.vault.v1', {record:?}); true"
        ))
        .unwrap();
    reload_and_unlock(wallet);
    wallet.wait_text("#profile-msg", "not unlocked");
    assert_eq!(wallet.locked(), true);
}

#[test]
fn memory_baseline_the_second_question_is_declined() {
    let session = Session::start();
    let mut wallet = pregnant(&session);
    probe_wide(&mut wallet, "n-base-1");
    assert_narrow_declined(&mut wallet, "n-base-2", "baseline");
    // The memory is in the record, sealed: no raw value, no separate ledger key.
    let record = stored(&wallet);
    assert!(record.contains("\"memory\""), "{record}");
    for raw in ["pregnancy", "2840000", "liver"] {
        assert!(!record.contains(raw), "the record shows {raw}");
    }
    assert_eq!(
        wallet
            .page
            .eval("localStorage.getItem('tacit.ledger.v1')")
            .unwrap(),
        Value::Null
    );
}

#[test]
fn memory_a_an_unrelated_edit_keeps_the_condition_memory() {
    let session = Session::start();
    let mut wallet = pregnant(&session);
    probe_wide(&mut wallet, "n-a-1");
    // The editor is closed while unlocked: the person opens it with the passphrase first.
    wallet.edit_income("28,500.00");
    wallet.wait_text("#profile-msg", "Saved");
    // The person is told what was reset and that old answers remain known.
    wallet.wait_text("#profile-msg", "income");
    wallet.wait_text("#profile-msg", "remain known");
    assert_narrow_declined(&mut wallet, "n-a-2", "(a) unrelated edit");
    // And after a reload too (the reset was for income only, in the stored record).
    reload_and_unlock(&mut wallet);
    wallet.wait_text("#lock-pill", "Unlocked");
    assert_narrow_declined(&mut wallet, "n-a-3", "(a) unrelated edit, reloaded");
}

#[test]
fn memory_b_export_and_reimport_of_the_same_backup_keeps_memory() {
    let session = Session::start();
    let mut wallet = pregnant(&session);
    // The backup, taken before the probing: the envelope bytes the Export button downloads.
    let record: Value = serde_json::from_str(&stored(&wallet)).unwrap();
    let backup = unhex(record["envelope"].as_str().unwrap());
    let file = tempfile::Builder::new()
        .suffix(".tacitvault")
        .tempfile()
        .unwrap();
    std::fs::write(file.path(), &backup).unwrap();
    probe_wide(&mut wallet, "n-b-1");
    // The person imports it and confirms the replacement.
    wallet
        .page
        .eval("window.confirm = () => true; true")
        .unwrap();
    choose_file(&wallet.page, "#import-file", file.path());
    wallet.wait_text("#profile-msg", "Backup imported");
    wallet.unlock_and_wait(PASS);
    assert_narrow_declined(&mut wallet, "n-b-2", "(b) export + re-import");
}

#[test]
fn memory_c_a_second_tab_unlocked_before_the_probing_merges_first() {
    let session = Session::start();
    let mut first = pregnant(&session);
    let mut second = session.open("");
    second.unlock_and_wait(PASS);
    probe_wide(&mut first, "n-c-1");
    assert_narrow_declined(&mut second, "n-c-2", "(c) second tab");
    // And the other way round: the first tab knows what the second declined on.
    assert_narrow_declined(&mut first, "n-c-3", "(c) first tab after the second");
}

#[test]
fn memory_d_deleting_the_ledger_key_or_rolling_back_the_record_never_answers() {
    let session = Session::start();
    let mut wallet = pregnant(&session);
    let before_probing = stored(&wallet);
    probe_wide(&mut wallet, "n-d-1");

    // (d) the sealed ledger's old key deleted, reload.
    wallet
        .page
        .eval("localStorage.removeItem('tacit.ledger.v1'); true")
        .unwrap();
    reload_and_unlock(&mut wallet);
    wallet.wait_text("#lock-pill", "Unlocked");
    assert_narrow_declined(&mut wallet, "n-d-2", "(d) ledger key deleted");

    // The memory field removed from the record: refused, fail closed.
    let mut record: Value = serde_json::from_str(&stored(&wallet)).unwrap();
    record.as_object_mut().unwrap().remove("memory");
    assert_record_refused(&mut wallet, &record.to_string());

    // Rollback: the record from before the probing restored whole: refused, fail closed.
    assert_record_refused(&mut wallet, &before_probing);
    assert!(wallet.claim_tools().is_empty());
}

#[test]
fn memory_importing_a_different_vault_starts_fresh_only_after_the_person_confirms() {
    let session = Session::start();
    let mut wallet = pregnant(&session);
    probe_wide(&mut wallet, "n-i-1");
    let before = stored(&wallet);
    // The frozen v1 vault is another vault (another id). A page script that answers every
    // `window.confirm` with yes gets no say: replacing the profile needs the person's act.
    let other = tacit_e2e::workspace_root().join("wallet-core/tests/vectors/vault-v1.bin");
    wallet
        .page
        .eval("window.__asked = []; window.confirm = (q) => { window.__asked.push(q); return true; }; true")
        .unwrap();
    choose_file(&wallet.page, "#import-file", &other);
    let asked = wallet.confirm_text();
    assert!(
        asked.contains("DIFFERENT"),
        "the person is told it is another profile: {asked}"
    );
    assert_eq!(
        wallet.page.eval("window.__asked.length").unwrap(),
        json!(0),
        "window.confirm decided a replacement"
    );
    // The person cancels: nothing changes, and the memory still declines.
    wallet.page.click("[data-action=confirm-cancel]").unwrap();
    wallet
        .page
        .wait_for(&format!("!{}", tacit_e2e::wallet::CONFIRM_OPEN), WAIT)
        .unwrap();
    assert_eq!(stored(&wallet), before, "nothing changed");
    assert_narrow_declined(&mut wallet, "n-i-2", "different vault, import cancelled");
    // A wrong passphrase replaces nothing either.
    choose_file(&wallet.page, "#import-file", &other);
    tacit_e2e::wallet::type_confirmation(&wallet.page, "not the passphrase at all").unwrap();
    wallet.wait_text("#confirm-msg", "not right");
    assert_eq!(
        stored(&wallet),
        before,
        "a wrong passphrase replaced the profile"
    );
    wallet.page.click("[data-action=confirm-cancel]").unwrap();
    // Confirmed with the stored profile's passphrase: the other vault opens with an empty
    // memory of its own.
    choose_file(&wallet.page, "#import-file", &other);
    tacit_e2e::wallet::confirm_with_passphrase(&wallet.page, PASS).unwrap();
    wallet.wait_text("#profile-msg", "Backup imported");
    wallet.unlock_and_wait(PASS);
    let record: Value = serde_json::from_str(&stored(&wallet)).unwrap();
    assert!(
        record.get("memory").is_some(),
        "written in the current format: {record}"
    );
}
