//! Issue 6 end to end: the housing and pharmacy sites, the wallet and a real signer, each on its
//! own loopback origin, in one headless Chromium with one tab per site. The agent is the
//! DevTools `WebMCP` domain (`page.call_tool` on the right tab); the person is real clicks in
//! the wallet page.
//!
//! Receipts outside their window (and other forgeries) are made by the test itself: the signer
//! runs with a key the test chose, so the test can sign any payload with the very key the site
//! fetches from `/v1/keys`. The sites have no clock override on purpose: a `?now=` parameter
//! would let whoever opens the page make an expired receipt pass.
//!
//! These tests fail, never skip, when Chromium, the WebMCP switch or a built site is missing
//! (run `cargo xtask build-web` first).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::Duration;

use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use signer::{KeyStore, system_now};
use tacit_e2e::signer_proc::TestSigner;
use tacit_e2e::site_proc::TestSite;
use tacit_e2e::site_tab::{HOUSING_TOOLS, PHARMACY_TOOLS, SiteTab as Site};
use tacit_e2e::wallet::{Wallet, completed, error_code, text_of, tool_names, wait_text};
use tacit_e2e::{Browser, StaticServer};
use tacit_site::server::signer_keys::MIN_REFETCH_INTERVAL;
use wallet_core::receipt::sign;
use wallet_core::{
    Claim, ComparisonLog, GrantId, Nonce, Origin, Outcome, ReceiptPayload, SessionId, Timestamp,
    ToolName, derive_key_id,
};

const WAIT: Duration = Duration::from_secs(20);
const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;

/// One browser test at a time: they share two cores and Argon2id at 64 MiB.
fn housing_claims() -> Value {
    json!([
        { "kind": "income_below", "limit": { "amount_minor": 3_000_000, "currency": "EUR" } },
        { "kind": "resides_in", "districts": ["altstadt", "nordhafen", "westend"] }
    ])
}

fn pharmacy_claims() -> Value {
    json!([
        { "kind": "age_at_least", "years": 18 },
        { "kind": "has_none_of", "conditions": ["anticoagulant-therapy", "liver-disease", "pregnancy"] }
    ])
}

/// A key the test knows, so it can sign whatever it likes with the signer's own key.
fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

/// A store whose active key is `key`, valid from a day ago (so backdated payloads verify).
fn store(key: &SigningKey) -> KeyStore {
    KeyStore::from_signing_key(key.clone(), system_now().plus_millis(-24 * HOUR))
}

/// The wallet page, both site servers and the signer, each on its own port. The sites trust the
/// signer through their configuration (its keys URL), never through anything in the page.
struct Stack {
    wallet: StaticServer,
    housing: TestSite,
    pharmacy: TestSite,
    signer: TestSigner,
}

impl Stack {
    fn start(keys: KeyStore) -> Self {
        let wallet = tacit_e2e::serve_site("wallet").unwrap();
        let signer = TestSigner::start(keys, &[&wallet.origin()]).unwrap();
        let keys_url = format!("{}/v1/keys", signer.url());
        let housing = TestSite::start("housing", &keys_url).unwrap();
        let pharmacy = TestSite::start("pharmacy", &keys_url).unwrap();
        Self {
            wallet,
            housing,
            pharmacy,
            signer,
        }
    }
}

/// The person's wallet tab, enrolled with the stack's signer; `query` (say `?short_grants=1`)
/// is appended to the URL.
fn open_wallet<'b>(browser: &'b Browser, stack: &Stack, query: &str) -> Wallet<'b> {
    let wallet = Wallet::open(browser, &stack.wallet, query);
    wallet.enrol(&stack.signer.url(), &stack.signer.enrolment_code().unwrap());
    wallet
}

/// The whole agent flow for one site: requirements → request_claims → the person grants →
/// every claim tool → draft_application → the person releases → the signed receipt.
/// Returns the requirements, the claim answers and the receipt.
fn obtain_receipt(wallet: &mut Wallet<'_>, site: &mut Site<'_>) -> (Value, Vec<Value>, Value) {
    let policy = site.requirements();
    let id = wallet.request(policy.clone());
    let tools = wallet.grant(&id, "600000", policy["claims"].as_array().unwrap().len());
    let answers: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let out = wallet.call(tool, json!({}));
            assert_eq!(out["ok"], true, "{tool}: {out}");
            out["result"].clone()
        })
        .collect();
    let receipt = wallet.draft_and_release(
        policy["origin"].as_str().unwrap(),
        policy["nonce"].as_str().unwrap(),
    );
    assert_eq!(receipt["payload"]["audience"], policy["origin"]);
    assert_eq!(receipt["payload"]["nonce"], policy["nonce"]);
    (policy, answers, receipt)
}

/// A payload the test makes itself: `answers` for `audience`, bound to `nonce`.
fn forged_payload(
    audience: &str,
    nonce: &str,
    answers: &[(Value, Outcome)],
    issued: Timestamp,
    expires: Timestamp,
) -> ReceiptPayload {
    let origin = Origin::parse(audience).unwrap();
    let mut log = ComparisonLog::new();
    for (i, (claim, outcome)) in answers.iter().enumerate() {
        let claim: Claim = serde_json::from_value(claim.clone()).unwrap();
        log.append(
            issued.plus_millis(-1_000),
            origin.clone(),
            ToolName::parse(&format!("claim.{}.t{i}", claim.kind())).unwrap(),
            claim,
            *outcome,
            GrantId::parse(&format!("t{i}")).unwrap(),
            None,
        );
    }
    ReceiptPayload::new(
        SessionId::parse("s-test").unwrap(),
        origin,
        Nonce::parse(nonce).unwrap(),
        issued,
        expires,
        &log,
    )
    .unwrap()
}

fn all_satisfied(claims: &Value) -> Vec<(Value, Outcome)> {
    claims
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c.clone(), Outcome::Satisfied))
        .collect()
}

fn signed(payload: ReceiptPayload, key: &SigningKey) -> Value {
    serde_json::to_value(sign(payload, key, system_now())).unwrap()
}

#[test]
fn housing_flow_is_accepted_once_and_a_replay_is_refused() {
    let _serial = tacit_e2e::serial();
    let stack = Stack::start(store(&key(1)));
    let browser = Browser::launch().unwrap();
    let mut wallet = open_wallet(&browser, &stack, "");
    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    housing.shows(
        "Waiting for your agent",
        "Tacit wallet",
        "housing-01-waiting",
    );

    // On load only the requirements tool: the submit tool exists only while a nonce the page
    // handed out is open.
    assert_eq!(tool_names(&mut housing.page), ["housing_requirements"]);

    // Requirements: exactly request_claims' input, a fresh nonce each time.
    let first = housing.requirements();

    // Now the site's two tools, with their hints, as the agent sees them.
    let tools = housing.page.tools().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["housing_requirements", "housing_submit_application"]
    );
    for tool in &tools {
        let hints = &tool.raw["annotations"];
        let read_only = tool.name == "housing_requirements";
        assert_eq!(hints["readOnly"], read_only, "{}: {hints}", tool.name);
        assert_eq!(hints["consequential"], !read_only, "{}: {hints}", tool.name);
    }

    let mut keys: Vec<&str> = first
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "attestation",
            "claims",
            "nonce",
            "origin",
            "purpose",
            "site_name"
        ]
    );
    assert_eq!(first["origin"], stack.housing.origin());
    assert_eq!(first["claims"], housing_claims());
    let nonce = first["nonce"].as_str().unwrap();
    assert!(
        nonce.len() == 32 && nonce.bytes().all(|b| b.is_ascii_hexdigit()),
        "{nonce}"
    );
    assert_ne!(housing.requirements()["nonce"], first["nonce"]);
    let out = completed(
        "housing_requirements",
        housing
            .page
            .call_tool("housing_requirements", json!({ "income": 28_400 }))
            .unwrap(),
    );
    assert_eq!(error_code(&out), "invalid_input");

    wallet.create_profile_with_income("28,400.00");
    let (policy, answers, receipt) = obtain_receipt(&mut wallet, &mut housing);
    assert!(
        answers.iter().all(|a| a["satisfied"] == true),
        "{answers:?}"
    );
    let out = housing.submit(&receipt);
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["result"]["accepted"], true);
    assert_eq!(out["result"]["nonce"], policy["nonce"]);
    assert_eq!(out["result"]["audience"], stack.housing.origin());
    assert_eq!(out["result"]["claims"], housing_claims());
    assert_eq!(out["result"]["key_id"], receipt["key_id"]);
    housing.shows(
        "Accepted",
        "eligible for subsidised housing",
        "housing-accepted",
    );
    wait_text(
        &housing.page,
        "#status-items",
        "household income below 30,000.00 EUR",
    );

    // The same receipt again: the nonce is spent.
    let out = housing.submit(&receipt);
    assert_eq!(error_code(&out), "replayed_nonce", "{out}");
    housing.shows("Refused", "replayed_nonce", "housing-refused");
    housing.assert_clean();
}

/// Nothing the browser holds decides a verdict, so nothing the browser holds can be reset to
/// accept a receipt twice: not a reload, not a duplicated tab, not edited or cleared storage,
/// not a site restart (the nonce is a row in the site's database).
#[test]
fn a_spent_receipt_stays_spent_across_reload_tabs_storage_edits_and_a_site_restart() {
    let _serial = tacit_e2e::serial();
    let mut stack = Stack::start(store(&key(1)));
    let browser = Browser::launch().unwrap();
    let mut wallet = open_wallet(&browser, &stack, "");
    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    wallet.create_profile_with_income("28,400.00");
    let (_, _, receipt) = obtain_receipt(&mut wallet, &mut housing);
    assert_eq!(housing.submit(&receipt)["result"]["accepted"], true);

    // A reload.
    housing.page.reload().unwrap();
    housing.page.wait_tool(HOUSING_TOOLS.0, WAIT).unwrap();
    assert_eq!(error_code(&housing.submit(&receipt)), "replayed_nonce");

    // A second tab of the same site (what "Duplicate tab" gives: same origin, copied storage).
    let mut twin = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    assert_eq!(error_code(&twin.submit(&receipt)), "replayed_nonce");

    // Every storage the page could use, cleared or edited, then a reload.
    housing
        .page
        .eval(
            "sessionStorage.clear(); localStorage.clear(); \
             sessionStorage.setItem('tacit-site.housing.nonces.v1', '{\"records\":[]}'); true",
        )
        .unwrap();
    housing.page.reload().unwrap();
    housing.page.wait_tool(HOUSING_TOOLS.0, WAIT).unwrap();
    assert_eq!(error_code(&housing.submit(&receipt)), "replayed_nonce");

    // The site's server restarts on the same port and database.
    stack.housing.restart().unwrap();
    assert_eq!(error_code(&twin.submit(&receipt)), "replayed_nonce");
    twin.shows("Refused", "replayed_nonce", "housing-refused-after-restart");

    // And the honest path still works after the restart: a fresh nonce, a fresh receipt.
    let (_, _, fresh) = obtain_receipt(&mut wallet, &mut twin);
    assert_eq!(twin.submit(&fresh)["result"]["accepted"], true);
    housing.assert_clean();
    twin.assert_clean();
}

#[test]
fn pharmacy_flow_is_accepted_and_misdirected_or_tampered_receipts_are_refused() {
    let _serial = tacit_e2e::serial();
    let stack = Stack::start(store(&key(1)));
    let browser = Browser::launch().unwrap();
    let mut wallet = open_wallet(&browser, &stack, "");
    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    let mut pharmacy = Site::open(&browser, &stack.pharmacy, "", PHARMACY_TOOLS);
    wallet.create_profile_with_income("28,400.00");
    let (policy, answers, receipt) = obtain_receipt(&mut wallet, &mut pharmacy);
    assert_eq!(policy["claims"], pharmacy_claims());
    assert_eq!(policy["origin"], stack.pharmacy.origin());
    assert!(
        answers.iter().all(|a| a["satisfied"] == true),
        "{answers:?}"
    );

    // The pharmacy's receipt at the housing site: made for another audience.
    let out = housing.submit(&receipt);
    assert_eq!(error_code(&out), "wrong_audience", "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&stack.housing.origin())
    );
    housing.shows(
        "Refused",
        "wrong_audience",
        "housing-refused-wrong-audience",
    );

    // Tampered: another window (shorter, or longer than a receipt may have), or a lower age
    // threshold, breaks the signature.
    let expires = receipt["payload"]["expires_at"].as_i64().unwrap();
    for changed in [expires - MINUTE, expires + HOUR] {
        let mut other = receipt.clone();
        other["payload"]["expires_at"] = json!(changed);
        assert_eq!(error_code(&pharmacy.submit(&other)), "bad_signature");
    }
    let mut younger = receipt.clone();
    younger["payload"]["entries"][0]["claim"]["years"] = json!(16);
    let out = pharmacy.submit(&younger);
    assert_eq!(error_code(&out), "bad_signature", "{out}");
    pharmacy.shows("Refused", "bad_signature", "pharmacy-refused");

    // Neither refusal spent the nonce: the honest receipt is accepted.
    let out = pharmacy.submit(&receipt);
    assert_eq!(out["result"]["accepted"], true, "{out}");
    assert_eq!(out["result"]["claims"], pharmacy_claims());
    pharmacy.shows("Accepted", "Dolorex", "pharmacy-accepted");
    wait_text(&pharmacy.page, "#status-items", "at least 18 years old");
    housing.assert_clean();
    pharmacy.assert_clean();
}

#[test]
fn housing_refuses_a_receipt_that_shows_income_above_the_limit() {
    let _serial = tacit_e2e::serial();
    let stack = Stack::start(store(&key(1)));
    let browser = Browser::launch().unwrap();
    let mut wallet = open_wallet(&browser, &stack, "");
    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    wallet.create_profile_with_income("35,000.00");
    let (_, answers, receipt) = obtain_receipt(&mut wallet, &mut housing);
    let satisfied: Vec<&Value> = answers.iter().map(|a| &a["satisfied"]).collect();
    assert_eq!(satisfied, [&json!(false), &json!(true)], "{answers:?}");

    let out = housing.submit(&receipt);
    assert_eq!(error_code(&out), "claim_not_satisfied", "{out}");
    assert_eq!(out["error"]["claim"], housing_claims()[0]);
    let message = out["error"]["message"].as_str().unwrap();
    assert!(message.contains("income_below 3000000 EUR"), "{message}");
    assert!(message.contains("not_satisfied"), "{message}");
    // No raw value anywhere in what the site says.
    let text = out.to_string() + &text_of(&housing.page, "body");
    for raw in [
        "3500000",
        "35,000",
        "35000",
        "1990-02-28",
        "nordhafen",
        "asthma",
    ] {
        assert!(!text.contains(raw), "the site shows {raw}");
    }
    housing.shows(
        "Refused",
        "Not shown: household income below 30,000.00 EUR",
        "housing-refused-claim",
    );
    housing.assert_clean();
}

#[test]
fn receipts_outside_their_window_and_forgeries_are_refused_with_their_code() {
    let _serial = tacit_e2e::serial();
    let signer_key = key(1);
    let stack = Stack::start(store(&signer_key));
    let browser = Browser::launch().unwrap();
    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    let origin = housing.origin.clone();
    let policy = housing.requirements();
    let nonce = policy["nonce"].as_str().unwrap().to_owned();
    let answers = all_satisfied(&housing_claims());
    let now = system_now();
    let make = |nonce: &str, issued: i64, expires: i64| {
        forged_payload(
            &origin,
            nonce,
            &answers,
            now.plus_millis(issued),
            now.plus_millis(expires),
        )
    };

    // Expired an hour ago, signed with the signer's own key.
    let out = housing.submit(&signed(
        make(&nonce, -HOUR - 10 * MINUTE, -HOUR),
        &signer_key,
    ));
    assert_eq!(error_code(&out), "expired", "{out}");
    housing.shows("Refused", "expired", "housing-refused-expired");
    // Valid only from an hour on.
    let out = housing.submit(&signed(make(&nonce, HOUR, HOUR + 10 * MINUTE), &signer_key));
    assert_eq!(error_code(&out), "not_yet_valid", "{out}");
    // A key the signer does not publish (the site re-fetches the keys before saying so).
    let out = housing.submit(&signed(make(&nonce, -MINUTE, 10 * MINUTE), &key(9)));
    assert_eq!(error_code(&out), "unknown_key", "{out}");
    // A log whose entries were reordered before signing.
    let mut swapped = make(&nonce, -MINUTE, 10 * MINUTE);
    swapped.entries.swap(0, 1);
    let out = housing.submit(&signed(swapped, &signer_key));
    assert_eq!(error_code(&out), "chain_broken", "{out}");
    // A nonce this site never issued.
    let out = housing.submit(&signed(
        make("0123456789abcdef", -MINUTE, 10 * MINUTE),
        &signer_key,
    ));
    assert_eq!(error_code(&out), "unknown_nonce", "{out}");
    // The agent names another nonce than the receipt's.
    let good = signed(make(&nonce, -MINUTE, 10 * MINUTE), &signer_key);
    let out = housing.submit_input(json!({ "receipt": good, "nonce": "not-this-one" }));
    assert_eq!(error_code(&out), "nonce_mismatch", "{out}");
    // A receipt whose answers do not cover the policy.
    let partial = forged_payload(
        &origin,
        &nonce,
        &answers[..1],
        now.plus_millis(-MINUTE),
        now.plus_millis(10 * MINUTE),
    );
    let out = housing.submit(&signed(partial, &signer_key));
    assert_eq!(error_code(&out), "claim_not_satisfied", "{out}");
    assert_eq!(out["error"]["claim"], housing_claims()[1]);

    // Input the wallet would refuse too.
    let receipt_text = good.to_string();
    for input in [
        json!({}),
        json!({ "receipt": good, "extra": true }),
        json!({ "receipt": receipt_text }),
        json!({ "receipt": 5 }),
        json!({ "receipt": { "payload": {} } }),
        json!({ "receipt": good, "nonce": 5 }),
    ] {
        let out = housing.submit_input(input.clone());
        assert_eq!(error_code(&out), "invalid_input", "{input}: {out}");
        assert!(out["error"]["message"].as_str().unwrap().len() > 10);
    }

    // None of that spent the nonce: the honest receipt is accepted, once.
    let out = housing.submit_input(json!({ "receipt": good, "nonce": nonce }));
    assert_eq!(out["result"]["accepted"], true, "{out}");
    assert_eq!(
        out["result"]["key_id"],
        derive_key_id(&signer_key.verifying_key()).as_str()
    );

    // `?signer=` on the site's page changes nothing: an attacker's signer with its own key
    // published at a URL of its choosing. The page decides nothing; the server trusts only its
    // configured signer.
    let attacker_key = key(9);
    let attacker = TestSigner::start(store(&attacker_key), &[]).unwrap();
    let mut misled = Site::open(
        &browser,
        &stack.housing,
        &format!("?signer={}", attacker.url()),
        HOUSING_TOOLS,
    );
    let fresh = misled.requirements()["nonce"].as_str().unwrap().to_owned();
    let out = misled.submit(&signed(make(&fresh, -MINUTE, 10 * MINUTE), &attacker_key));
    assert_eq!(error_code(&out), "unknown_key", "{out}");
    misled.shows("Refused", "unknown_key", "housing-refused-url-signer");
    // The same nonce still takes a receipt from the configured signer.
    let out = misled.submit(&signed(make(&fresh, -MINUTE, 10 * MINUTE), &signer_key));
    assert_eq!(out["result"]["accepted"], true, "{out}");
    housing.assert_clean();
}

#[test]
fn a_grant_that_expires_mid_flow_withdraws_the_tool_and_the_site_refuses_the_gap() {
    let _serial = tacit_e2e::serial();
    let stack = Stack::start(store(&key(1)));
    let browser = Browser::launch().unwrap();
    let mut wallet = open_wallet(&browser, &stack, "?short_grants=1");
    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    wallet.create_profile_with_income("28,400.00");
    let policy = housing.requirements();
    let id = wallet.request(policy.clone());
    let tools = wallet.grant(&id, "2000", 2);
    let income = tools.iter().find(|t| t.contains("income_below")).unwrap();
    let district = tools.iter().find(|t| t.contains("resides_in")).unwrap();
    let frame = wallet
        .page
        .tools()
        .unwrap()
        .into_iter()
        .find(|t| &t.name == district)
        .unwrap()
        .frame_id;
    assert_eq!(wallet.call(income, json!({}))["result"]["satisfied"], true);

    // The agent dawdles; the two-second grant ends and both tools leave the registry.
    for name in &tools {
        wallet
            .page
            .wait_tool_gone(name, Duration::from_secs(15))
            .unwrap();
    }
    let err = wallet
        .page
        .invoke_tool(&frame, district, json!({}))
        .unwrap_err();
    assert!(err.to_string().contains("Tool not found"), "{err}");
    wallet.assert_request_expired(&id);

    // The receipt it can still get shows only the income answer: the site names the gap.
    let receipt = wallet.draft_and_release(
        policy["origin"].as_str().unwrap(),
        policy["nonce"].as_str().unwrap(),
    );
    assert_eq!(receipt["payload"]["entries"].as_array().unwrap().len(), 1);
    let out = housing.submit(&receipt);
    assert_eq!(error_code(&out), "claim_not_satisfied", "{out}");
    assert_eq!(out["error"]["claim"], housing_claims()[1]);
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not answer it"),
        "{out}"
    );
    housing.shows(
        "Refused",
        "Not shown: lives in Altstadt, Nordhafen or Westend",
        "housing-refused-grant-expired",
    );
}

#[test]
fn a_signer_key_rotated_between_signing_and_submission_still_verifies() {
    let _serial = tacit_e2e::serial();
    let (old, new) = (key(1), key(2));
    let mut stack = Stack::start(store(&old));
    let started = std::time::Instant::now();
    let browser = Browser::launch().unwrap();
    let mut wallet = open_wallet(&browser, &stack, "");
    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    let mut pharmacy = Site::open(&browser, &stack.pharmacy, "", PHARMACY_TOOLS);
    wallet.create_profile_with_income("28,400.00");
    let (_, _, before) = obtain_receipt(&mut wallet, &mut housing);
    let old_id = derive_key_id(&old.verifying_key());
    assert_eq!(before["key_id"], old_id.as_str());

    // The operator rotates and restarts the signer on the same port.
    let mut rotated = store(&old);
    rotated.rotate_to(new.clone(), system_now()).unwrap();
    stack.signer.restart(rotated).unwrap();

    // Signed before the rotation, submitted after: the old key is retired, not revoked.
    let out = housing.submit(&before);
    assert_eq!(out["result"]["accepted"], true, "{out}");
    assert_eq!(out["result"]["key_id"], old_id.as_str());
    housing.shows("Accepted", "eligible", "housing-accepted-after-rotation");

    // Signed after the rotation by the new key, which the pharmacy's cached set lacks: it
    // fetches the keys afresh and accepts.
    let (_, _, after) = obtain_receipt(&mut wallet, &mut pharmacy);
    let new_id = derive_key_id(&new.verifying_key());
    assert_eq!(after["key_id"], new_id.as_str());
    // The site fetches at most once per MIN_REFETCH_INTERVAL (so forged key ids cannot make
    // it hammer the signer); its start-up fetch must be that long ago.
    let wait = MIN_REFETCH_INTERVAL.saturating_sub(started.elapsed());
    std::thread::sleep(wait);
    let out = pharmacy.submit(&after);
    assert_eq!(out["result"]["accepted"], true, "{out}");
    assert_eq!(out["result"]["key_id"], new_id.as_str());
    pharmacy.shows("Accepted", "Dolorex", "pharmacy-accepted-after-rotation");
}
