//! Issue 12, "what leaves is what the card shows" and "unlinkable", end to end in Chromium with a
//! real signer (and the housing site's server for the verdict).
//!
//! - An application carries exactly the approval card's items: answers to earlier requests (for
//!   another nonce), a revoked grant's late call and malformed calls are not in the receipt the
//!   site gets; an item the person does not tick does not leave; the site accepts what does.
//! - The housing and the pharmacy receipts of one session share no identifier (session id,
//!   request, grant and proposal ids, tool names, hashes), and no id counts up.
//!
//! These tests fail, never skip, when Chromium, the WebMCP switch or a built site is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::collections::BTreeSet;

use serde_json::{Value, json};
use signer::{KeyStore, system_now};
use tacit_e2e::signer_proc::TestSigner;
use tacit_e2e::site_proc::TestSite;
use tacit_e2e::wallet::{WAIT, Wallet, error_code, housing_policy, keep_tool};
use tacit_e2e::{Browser, Page, StaticServer, ToolStatus};

const ZERO_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The in-page agent calls the kept object with `input`; the envelope it resolves to.
fn call_kept(wallet: &Wallet<'_>, slot: &str, input: &Value) -> Value {
    let js = format!(
        "(async () => {{ try {{ return {{ resolved: await document.modelContext.executeTool(\
         window.__kept[{slot:?}], {input}) }}; }} catch (e) {{ return {{ threw: String(e) }}; }} }})()"
    );
    let out = wallet.page.eval(&js).unwrap();
    let Some(text) = out["resolved"].as_str() else {
        panic!("executeTool on the kept {slot} handle threw: {out}");
    };
    serde_json::from_str(text).unwrap()
}

/// The site's tab: its requirements and submit tools, as the agent calls them.
struct SiteTab<'b> {
    page: Page<'b>,
}

impl<'b> SiteTab<'b> {
    fn open(browser: &'b Browser, site: &TestSite, tools: (&str, &str)) -> Self {
        let mut page = browser.new_page().unwrap();
        page.enable_webmcp().unwrap();
        page.navigate(&site.url("/")).unwrap();
        page.require_webmcp().unwrap();
        // The submit tool (`tools.1`) appears once the requirements tool handed out a nonce.
        page.wait_tool(tools.0, WAIT).unwrap();
        Self { page }
    }

    fn call(&mut self, name: &str, input: Value) -> Value {
        let response = self.page.call_tool(name, input).unwrap();
        assert_eq!(response.status, ToolStatus::Completed, "{:?}", response.raw);
        response.output
    }
}

fn grant_of(tool: &str) -> String {
    tool.rsplit('.').next().unwrap().to_owned()
}

#[test]
fn application_carries_exactly_the_approval_cards_items() {
    let _serial = tacit_e2e::serial();
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let signer =
        TestSigner::start(KeyStore::make(system_now()).unwrap(), &[&server.origin()]).unwrap();
    let housing = TestSite::start("housing", &format!("{}/v1/keys", signer.url())).unwrap();
    let browser = Browser::launch().unwrap();
    let mut wallet = Wallet::open(&browser, &server, "");
    wallet.enrol(&signer.url(), &signer.enrolment_code().unwrap());
    wallet.create_profile(); // 28,400.00 EUR, 1990-02-28, Nordhafen
    let mut site = SiteTab::open(
        &browser,
        &housing,
        ("housing_requirements", "housing_submit_application"),
    );
    let audience = housing.origin();

    // Earlier: the same audience, another nonce, answered.
    let earlier = wallet.request(json!({
        "origin": audience, "nonce": "n-earlier",
        "claims": [
            { "kind": "age_at_least", "years": 18 },
            { "kind": "income_below", "limit": { "amount_minor": 2_900_000, "currency": "EUR" } }
        ]
    }));
    let earlier_tools = wallet.grant(&earlier, "600000", 2);
    for tool in &earlier_tools {
        assert_eq!(wallet.call(tool, json!({}))["ok"], true);
    }

    // The site's own request, granted and answered.
    let policy = site.call("housing_requirements", json!({}))["result"].clone();
    let nonce = policy["nonce"].as_str().unwrap().to_owned();
    let main = wallet.request(policy.clone());
    let main_tools = wallet.grant(&main, "600000", 2);
    for tool in &main_tools {
        let out = wallet.call(tool, json!({}));
        assert_eq!(out["result"]["satisfied"], true, "{tool}: {out}");
    }
    // Malformed calls after the answers (unknown field, wrong type): refused, logged locally.
    let income_tool = main_tools
        .iter()
        .find(|t| t.contains("income_below"))
        .unwrap()
        .clone();
    for bad in [json!({ "bogus": true }), json!({ "nonce": 12345 })] {
        if let Ok(response) = wallet.page.call_tool(&income_tool, bad.clone())
            && response.status == ToolStatus::Completed
        {
            assert_eq!(response.output["ok"], false, "{bad}: {}", response.output);
        }
    }

    // Another request of this audience and nonce: two age questions; one answered, the other's
    // grant revoked before the agent calls it through a kept handle (a late call).
    let extra = wallet.request(json!({
        "origin": audience, "nonce": nonce,
        "claims": [
            { "kind": "age_at_least", "years": 18 },
            { "kind": "age_at_least", "years": 21 }
        ]
    }));
    wallet.grant(&extra, "600000", 2);
    // Which tool answers which claim comes from the gate's own account (`check_request`), never
    // from the tool name: its grant id is random hex that may well contain "21".
    let status = wallet.call("check_request", json!({ "request_id": extra }));
    let tool_for = |years: u64| -> String {
        status["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["claim"]["years"] == years)
            .and_then(|t| t["tool"].as_str())
            .unwrap_or_else(|| panic!("no tool for age {years}: {status}"))
            .to_owned()
    };
    let (age18, age21) = (tool_for(18), tool_for(21));
    assert_eq!(wallet.call(&age18, json!({}))["result"]["satisfied"], true);
    keep_tool(&wallet.page, &age21, "late");
    wallet.revoke(&age21);
    let late = call_kept(&wallet, "late", &json!({}));
    assert_eq!(error_code(&late), "grant_revoked", "{late}");

    // The approval card: the two housing answers and the age-18 answer, nothing else.
    let proposal = wallet.draft(&audience, &nonce);
    let items = wallet.approval_items(&proposal);
    assert_eq!(items.len(), 3, "{items:?}");
    let texts: Vec<String> = items.iter().map(|(_, t)| t.clone()).collect();
    let age_index = texts
        .iter()
        .position(|t| t.contains("18"))
        .unwrap_or_else(|| panic!("no age item on the card: {texts:?}"));
    assert!(
        !texts
            .iter()
            .any(|t| t.contains("21") || t.contains("29,000")),
        "{texts:?}"
    );
    let checked = wallet
        .page
        .eval(&format!(
            "[...document.querySelectorAll('[data-action=release][data-id={proposal}]')]\
               .map(b => [...b.closest('.item').querySelectorAll('.proposal-item input[data-item-index]')]\
               .map(i => [i.dataset.itemIndex, i.checked]))[0]"
        ))
        .unwrap();
    assert_eq!(
        checked.as_array().map(Vec::len),
        Some(3),
        "each item has a box: {checked}"
    );
    // None starts ticked (issue 30, item 6).
    assert!(
        checked.as_array().unwrap().iter().all(|p| p[1] == false),
        "{checked}"
    );
    // The person ticks every item but the age one (real clicks) and releases.
    wallet.front();
    for (n, item) in checked.as_array().unwrap().iter().enumerate() {
        if n == age_index {
            continue;
        }
        let index = item[0].as_str().unwrap().to_owned();
        wallet
            .page
            .click(&format!(
                "#prop-{proposal} .proposal-item input[data-item-index=\"{index}\"]"
            ))
            .unwrap();
    }
    wallet.release(&proposal, true);
    let receipt = wallet.wait_signed(&proposal);

    // Exactly the two kept answers, both satisfied, both from the site's own request.
    let entries = receipt["payload"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{receipt}");
    let main_grants: BTreeSet<String> = main_tools.iter().map(|t| grant_of(t)).collect();
    let mut claims = Vec::new();
    for entry in entries {
        assert_eq!(entry["outcome"], "satisfied", "{entry}");
        assert!(
            main_grants.contains(entry["grant_id"].as_str().unwrap()),
            "an entry from another request: {entry}"
        );
        claims.push(entry["claim"].clone());
    }
    let mut wanted: Vec<Value> = policy["claims"].as_array().unwrap().clone();
    claims.sort_by_key(Value::to_string);
    wanted.sort_by_key(Value::to_string);
    assert_eq!(claims, wanted);
    let text = receipt.to_string();
    for absent in ["age_at_least", "invalid", "declined", "2900000"] {
        assert!(!text.contains(absent), "{absent} left: {receipt}");
    }

    // The site accepts it.
    let answer = site.call("housing_submit_application", json!({ "receipt": receipt }));
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(answer["result"]["accepted"], true, "{answer}");
}

/// Every identifier in a released receipt's payload.
fn identifiers(receipt: &Value, into: &mut BTreeSet<String>) {
    let payload = &receipt["payload"];
    into.insert(payload["session_id"].as_str().unwrap().to_owned());
    for key in ["log_head"] {
        if let Some(s) = payload[key].as_str() {
            into.insert(s.to_owned());
        }
    }
    for entry in payload["entries"].as_array().unwrap() {
        for key in ["grant_id", "tool", "hash", "prev_hash"] {
            into.insert(entry[key].as_str().unwrap().to_owned());
        }
    }
    into.remove(ZERO_HASH);
}

/// An id that is a counter: letters then a small number (`g2`, `r10`, `p-3`).
fn looks_counted(id: &str) -> bool {
    let digits = id.trim_start_matches(|c: char| !c.is_ascii_digit());
    id.len() < 8
        || (!digits.is_empty() && digits.len() <= 6 && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// One site's flow: request, grant, answers, draft, release; every id the agent and the site
/// see.
fn one_site(wallet: &mut Wallet<'_>, policy: Value) -> (Value, BTreeSet<String>) {
    let (audience, nonce) = (
        policy["origin"].as_str().unwrap().to_owned(),
        policy["nonce"].as_str().unwrap().to_owned(),
    );
    let request = wallet.request(policy.clone());
    let tools = wallet.grant(&request, "600000", 2);
    for tool in &tools {
        assert_eq!(wallet.call(tool, json!({}))["ok"], true);
    }
    let proposal = wallet.draft(&audience, &nonce);
    wallet.release(&proposal, true);
    let receipt = wallet.wait_signed(&proposal);
    let mut ids = BTreeSet::new();
    identifiers(&receipt, &mut ids);
    for id in [request.clone(), proposal.clone()]
        .into_iter()
        .chain(tools.iter().map(|t| grant_of(t)))
    {
        assert!(!looks_counted(&id), "a counted id: {id}");
        ids.insert(id);
    }
    ids.extend(tools);
    (receipt, ids)
}

#[test]
fn unlinkable_housing_and_pharmacy_receipts_share_no_identifier() {
    let _serial = tacit_e2e::serial();
    let server: StaticServer = tacit_e2e::serve_site("wallet").unwrap();
    let signer =
        TestSigner::start(KeyStore::make(system_now()).unwrap(), &[&server.origin()]).unwrap();
    let browser = Browser::launch().unwrap();
    let mut wallet = Wallet::open(&browser, &server, "");
    wallet.enrol(&signer.url(), &signer.enrolment_code().unwrap());
    wallet.create_profile();
    let (housing, housing_ids) = one_site(
        &mut wallet,
        housing_policy("http://127.0.0.1:8081", "n-link-h"),
    );
    let (pharmacy, pharmacy_ids) = one_site(
        &mut wallet,
        json!({
            "origin": "http://127.0.0.1:8082", "nonce": "n-link-p",
            "site_name": "Pharmacy", "purpose": "Can this medicine be dispensed",
            "claims": [
                { "kind": "age_at_least", "years": 18 },
                { "kind": "has_none_of",
                  "conditions": ["anticoagulant-therapy", "liver-disease", "pregnancy"] }
            ]
        }),
    );
    let housing_session = housing["payload"]["session_id"].as_str().unwrap();
    let pharmacy_session = pharmacy["payload"]["session_id"].as_str().unwrap();
    assert_ne!(housing_session, pharmacy_session);
    assert!(!looks_counted(housing_session), "{housing_session}");
    let shared: Vec<&String> = housing_ids.intersection(&pharmacy_ids).collect();
    assert!(
        shared.is_empty(),
        "the two sites' receipts share {shared:?}\nhousing {housing}\npharmacy {pharmacy}"
    );
    // The signed envelopes too: nothing but the signer's key id in common.
    let strings = |v: &Value| -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        collect_strings(v, &mut out);
        out
    };
    let common: Vec<String> = strings(&housing)
        .intersection(&strings(&pharmacy))
        // Identifiers: eight characters or more with a digit; not vocabulary ("satisfied"),
        // not an origin (the signer's is common to both, and says so).
        .filter(|s| s.len() >= 8 && s.bytes().any(|b| b.is_ascii_digit()))
        .filter(|s| !s.starts_with("http") && s.as_str() != ZERO_HASH)
        .filter(|s| Some(s.as_str()) != housing["key_id"].as_str())
        .cloned()
        .collect();
    assert!(common.is_empty(), "shared strings: {common:?}");
}

fn collect_strings(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::String(s) => {
            out.insert(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_strings(i, out)),
        _ => {}
    }
}
