//! Issue 10 end to end: issuer-backed claims. Two real issuers (a tax office vouching for
//! income, a civil registry vouching for age, each a `tacit-issuer` on its own loopback port
//! with its own key and SQLite database), a real signer, the housing and pharmacy site servers
//! (trusting those issuers through their configuration), and the wallet in headless Chromium.
//! The person adds credentials through the wallet's Settings; the agent is the DevTools `WebMCP`
//! domain.
//!
//! What must hold: a claim at an issuer's ladder step is answered from the credential and the
//! approval card says who proves it; the site gets one single-use presentation per proven
//! answer, disclosing that answer only, and says so; presentations for two sites or two
//! applications share nothing that links them; the agent sees no credential material before
//! the person releases; an agent that edits a presentation or sends it to another site is
//! refused.
//!
//! These tests fail, never skip, when Chromium, the WebMCP switch or a built site is missing
//! (run `cargo xtask build-web` first).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use signer::{KeyStore, system_now};
use tacit_e2e::issuer_proc::{CIVIL_REGISTRY, TAX_OFFICE, TestIssuer};
use tacit_e2e::signer_proc::TestSigner;
use tacit_e2e::site_proc::{TestSite, Trust};
use tacit_e2e::site_tab::{HOUSING_TOOLS, PHARMACY_TOOLS, SiteTab as Site};
use tacit_e2e::wallet::{Wallet, error_code};
use tacit_e2e::{Browser, Page, StaticServer};
use tacit_protocol::sd_jwt::{
    Credential, Disclosure, IssuerMetadata, TrustedIssuer, verify_presentation,
};

const WAIT: Duration = Duration::from_secs(20);
const HOUR: i64 = 3_600_000;

/// One browser test at a time: they share two cores and Argon2id at 64 MiB.
fn signer_store() -> KeyStore {
    KeyStore::from_signing_key(
        SigningKey::from_bytes(&[1; 32]),
        system_now().plus_millis(-24 * HOUR),
    )
}

/// The wallet page, the signer, both issuers and both sites. Housing trusts the tax office by
/// its metadata URL; the pharmacy trusts the civil registry with its keys pinned in a file.
struct Stack {
    wallet: StaticServer,
    signer: TestSigner,
    tax: TestIssuer,
    registry: TestIssuer,
    housing: TestSite,
    pharmacy: TestSite,
}

impl Stack {
    fn start() -> Self {
        let wallet = tacit_e2e::serve_site("wallet").unwrap();
        let signer = TestSigner::start(signer_store(), &[&wallet.origin()]).unwrap();
        let keys_url = format!("{}/v1/keys", signer.url());
        let tax = TestIssuer::tax_office().unwrap();
        let registry = TestIssuer::civil_registry().unwrap();
        let housing =
            TestSite::start_trusting("housing", &keys_url, &[Trust::keys_url(&tax)]).unwrap();
        let pharmacy =
            TestSite::start_trusting("pharmacy", &keys_url, &[Trust::pinned(&registry)]).unwrap();
        Self {
            wallet,
            signer,
            tax,
            registry,
            housing,
            pharmacy,
        }
    }

    /// The person's wallet: enrolled with the signer, a profile created (typed `income`, born
    /// 1990-02-28, Nordhafen).
    fn wallet<'b>(&self, browser: &'b Browser, income: &str) -> Wallet<'b> {
        let wallet = Wallet::open(browser, &self.wallet, "");
        wallet.enrol(&self.signer.url(), &self.signer.enrolment_code().unwrap());
        wallet.create_profile_with_income(income);
        wallet
    }
}

fn page_text(page: &Page<'_>) -> String {
    page.eval("document.body.innerText")
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn wait_page_text(page: &Page<'_>, needle: &str) {
    let js = format!("document.body.innerText.includes({needle:?})");
    if let Err(e) = page.wait_for(&js, WAIT) {
        panic!("the page never showed {needle:?}: {e}\n{}", page_text(page));
    }
}

/// What one application produced, and everything the agent saw before the person released it.
struct Application {
    policy: Value,
    proposal: String,
    /// `(data-proof, text)` of each approval card item, read before release.
    card: Vec<(String, String)>,
    receipt: Value,
    presentations: Vec<String>,
    /// Every tool output the agent got up to (and including) the held proposal.
    agent_saw: Vec<Value>,
}

/// The agent's whole flow for one site: requirements → request → (the person grants) → every
/// claim tool → draft → (the person reads the card and releases) → receipt and presentations.
fn apply(wallet: &mut Wallet<'_>, site: &mut Site<'_>) -> Application {
    apply_granting(wallet, site, "600000")
}

/// As [`apply`], the person granting for `duration` (a `#dur-<id>` value).
fn apply_granting(wallet: &mut Wallet<'_>, site: &mut Site<'_>, duration: &str) -> Application {
    let policy = site.requirements();
    let mut agent_saw = vec![policy.clone()];
    let id = wallet.request(policy.clone());
    let tools = wallet.grant(&id, duration, policy["claims"].as_array().unwrap().len());
    agent_saw.push(wallet.call("check_request", json!({ "request_id": id })));
    for tool in &tools {
        let out = wallet.call(tool, json!({}));
        assert_eq!(out["ok"], true, "{tool}: {out}");
        agent_saw.push(out);
    }
    agent_saw.push(wallet.call("wallet_status", json!({})));
    let (audience, nonce) = (
        policy["origin"].as_str().unwrap().to_owned(),
        policy["nonce"].as_str().unwrap().to_owned(),
    );
    let proposal = wallet.draft(&audience, &nonce);
    agent_saw.push(wallet.call("check_proposal", json!({ "proposal_id": proposal })));
    let card = wallet.approval_items(&proposal);
    wallet
        .page
        .screenshot(&format!(
            "credentials-card-{audience_port}-{proposal}",
            audience_port = audience.rsplit(':').next().unwrap_or("")
        ))
        .unwrap();
    wallet.release(&proposal, true);
    let (receipt, presentations) = wallet.wait_signed_with_proofs(&proposal);
    assert_eq!(receipt["payload"]["audience"], policy["origin"]);
    assert_eq!(receipt["payload"]["nonce"], policy["nonce"]);
    Application {
        policy,
        proposal,
        card,
        receipt,
        presentations,
        agent_saw,
    }
}

/// The pieces of a presentation `<issuer-jwt>~<d>~…~<kb-jwt>`.
struct Pieces {
    holder_key: String,
    issuer_signature: String,
    salts: Vec<String>,
    disclosures: Vec<String>,
    issuer_jwt: String,
    kb_signature: String,
}

fn pieces(presentation: &str) -> Pieces {
    let last = presentation.rfind('~').unwrap();
    let (without_kb, kb) = presentation.split_at(last + 1);
    let credential = Credential::parse(without_kb).unwrap();
    let parts: Vec<&str> = without_kb.split('~').collect();
    let disclosures: Vec<String> = parts[1..]
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| (*p).to_owned())
        .collect();
    Pieces {
        holder_key: serde_json::to_string(credential.holder_jwk()).unwrap(),
        issuer_signature: credential
            .issuer_jwt()
            .rsplit('.')
            .next()
            .unwrap()
            .to_owned(),
        salts: credential
            .disclosures()
            .iter()
            .map(|d| d.salt.clone())
            .collect(),
        disclosures,
        issuer_jwt: credential.issuer_jwt().to_owned(),
        kb_signature: kb.rsplit('.').next().unwrap().to_owned(),
    }
}

/// `a` and `b` share no holder key, salt, issuer signature or key-binding signature.
fn assert_unlinkable(a: &str, b: &str) {
    let (a, b) = (pieces(a), pieces(b));
    assert_ne!(a.holder_key, b.holder_key, "one holder key in both");
    assert_ne!(
        a.issuer_signature, b.issuer_signature,
        "one credential in both"
    );
    assert_ne!(a.kb_signature, b.kb_signature);
    let salts: BTreeSet<&String> = a.salts.iter().collect();
    assert!(
        b.salts.iter().all(|s| !salts.contains(s)),
        "a salt in both: {:?} / {:?}",
        a.salts,
        b.salts
    );
}

/// Verifies `presentation` as a site would, against `issuer`'s published keys; the disclosed
/// claims.
fn verify(
    presentation: &str,
    issuer: &TestIssuer,
    aud: &str,
    nonce: &str,
) -> serde_json::Map<String, Value> {
    let metadata = IssuerMetadata::parse(issuer.metadata_json().as_bytes()).unwrap();
    let trusted = [TrustedIssuer {
        iss: metadata.issuer.clone(),
        jwks: metadata.jwks,
    }];
    let verified =
        verify_presentation(presentation, &trusted, aud, nonce, system_now(), 5 * 60_000)
            .unwrap_or_else(|e| panic!("the wallet's presentation does not verify: {e:?}"));
    assert_eq!(verified.iss, issuer.origin());
    verified.disclosed
}

/// `presentation` with its one disclosure's boolean flipped (re-encoded, so it parses).
fn flip_disclosure(presentation: &str) -> String {
    let parts: Vec<&str> = presentation.split('~').collect();
    assert_eq!(parts.len(), 3, "one disclosure expected: {presentation}");
    let mut disclosure = Disclosure::decode(parts[1]).unwrap();
    let value = disclosure.value.as_bool().unwrap();
    disclosure.value = Value::Bool(!value);
    format!("{}~{}~{}", parts[0], disclosure.encode(), parts[2])
}

/// Nothing of `presentations` (issuer JWTs, disclosures, salts, holder keys) nor anything that
/// looks like a JWT or an SD-JWT appears in `outputs`.
fn assert_no_credential_material(outputs: &[Value], presentations: &[String]) {
    assert!(!presentations.is_empty(), "no presentations to look for");
    let text: String = outputs.iter().map(Value::to_string).collect();
    // Needles long or quoted enough never to turn up by chance in a base64url signature.
    for needle in [
        "eyJhbGciOi", // a base64url JWT header: {"alg":…
        "dc+sd-jwt",
        "kb+jwt",
        "_sd_alg",
        r#""_sd""#,
        r#"\"_sd\""#,
        r#""cnf""#,
        r#"\"cnf\""#,
    ] {
        assert!(
            !text.contains(needle),
            "{needle} in an agent output: {text}"
        );
    }
    for presentation in presentations {
        let p = pieces(presentation);
        let signature = &p.issuer_signature;
        assert!(
            !text.contains(signature.as_str()),
            "an issuer signature leaked"
        );
        let jwt_head = p.issuer_jwt.split('.').next().unwrap();
        assert!(!text.contains(jwt_head), "an issuer JWT leaked");
        for d in &p.disclosures {
            assert!(!text.contains(d.as_str()), "disclosure {d} leaked");
        }
        for s in &p.salts {
            assert!(!text.contains(s.as_str()), "salt {s} leaked");
        }
        let key: Value = serde_json::from_str(&p.holder_key).unwrap();
        let x = key["x"].as_str().unwrap();
        assert!(!text.contains(x), "a holder key leaked");
    }
}

/// The person adds the tax office's credential (Ana's code, refusing a wrong and a used code
/// with a clear message); the housing application answers income from it, the card says who
/// proves it, the site verifies the presentation and says so; an edited presentation, a missing
/// one and a replayed one are refused; each application spends one proof, and two
/// applications' presentations share nothing.
#[test]
fn housing_income_is_proven_by_the_tax_office_and_tampering_is_refused() {
    let _serial = tacit_e2e::serial();
    let stack = Stack::start();
    let browser = Browser::launch().unwrap();
    let mut wallet = stack.wallet(&browser, "28,400.00");
    let tax = stack.tax.origin();
    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);

    // Before any credential: every answer is the person's word, and the shipped housing site,
    // which takes income only with the tax office's proof, refuses it in words that say how.
    let unproven = apply(&mut wallet, &mut housing);
    assert!(
        unproven.presentations.is_empty(),
        "{:?}",
        unproven.presentations
    );
    assert!(
        unproven.card.len() == 2 && unproven.card.iter().all(|(proof, _)| proof == "self"),
        "{:?}",
        unproven.card
    );
    let out = housing.submit(&unproven.receipt);
    assert_eq!(error_code(&out), "proof_required", "{out}");
    let message = out["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("only with an issuer's proof") && message.contains("add a credential"),
        "{message}"
    );

    // A code the tax office never gave: refused in plain words, nothing stored.
    wallet.submit_credential(&tax, "AAAA-BBBB-CCCC-DDDD");
    wallet.wait_text("#credential-msg", "refused the code");
    assert!(wallet.text("#credential-msg").contains(TAX_OFFICE));
    assert!(!wallet.has_credential(&tax));

    let ana = stack.tax.code_for("Ana").unwrap();
    wallet.add_credential(&tax, &ana);
    let full = wallet.proofs_left(&tax);
    assert_eq!(full, 10, "{}", wallet.credential_text(&tax));
    let line = wallet.credential_text(&tax);
    assert!(line.contains(TAX_OFFICE), "{line}");
    assert!(line.contains("10 proofs left"), "{line}");
    wallet.page.screenshot("credentials-wallet-added").unwrap();

    // The same code again: used, refused; the credential already held stays.
    wallet.submit_credential(&tax, &ana);
    wallet.wait_text("#credential-msg", "refused the code");
    assert_eq!(wallet.proofs_left(&tax), full);

    let first = apply(&mut wallet, &mut housing);
    let income = first
        .card
        .iter()
        .find(|(_, text)| text.contains("income"))
        .unwrap_or_else(|| panic!("no income item on the card: {:?}", first.card));
    assert_eq!(income.0, "issuer", "{:?}", first.card);
    assert!(
        income.1.contains(&format!("proven by {TAX_OFFICE}")),
        "{income:?}"
    );
    let district = first
        .card
        .iter()
        .find(|(_, text)| !text.contains("income"))
        .unwrap();
    assert_eq!(district.0, "self", "{:?}", first.card);
    assert!(district.1.contains("your word"), "{district:?}");

    // One presentation, for this site and this nonce, disclosing exactly the answer.
    assert_eq!(first.presentations.len(), 1, "{:?}", first.presentations);
    let aud = first.policy["origin"].as_str().unwrap();
    let nonce = first.policy["nonce"].as_str().unwrap();
    let disclosed = verify(&first.presentations[0], &stack.tax, aud, nonce);
    assert_eq!(
        Value::Object(disclosed),
        json!({ "income_below_30000": true })
    );
    assert_no_credential_material(&first.agent_saw, &first.presentations);
    // The same look at what the agent gets after release finds the presentation: the check can
    // fail.
    let released = wallet.call("check_proposal", json!({ "proposal_id": first.proposal }));
    assert!(released.to_string().contains("eyJhbGciOi"), "{released}");
    assert!(released.to_string().contains(&first.presentations[0]));
    let entries = first.receipt["payload"]["entries"].to_string();
    assert!(
        entries.contains(&tax),
        "the receipt names the issuer: {entries}"
    );

    // The agent flips the disclosure: the digest no longer matches.
    let out =
        housing.submit_with_proofs(&first.receipt, &[flip_disclosure(&first.presentations[0])]);
    assert_eq!(error_code(&out), "proof_invalid", "{out}");
    // The agent strips the key binding (a bare credential, replayable anywhere).
    let bare = &first.presentations[0][..=first.presentations[0].rfind('~').unwrap()];
    let out = housing.submit_with_proofs(&first.receipt, &[bare.to_owned()]);
    assert_eq!(error_code(&out), "proof_invalid", "{out}");
    // The agent leaves the presentation out.
    let out = housing.submit(&first.receipt);
    assert_eq!(error_code(&out), "proof_missing", "{out}");
    // Neither spent the nonce: the real one is accepted.
    let out = housing.submit_with_proofs(&first.receipt, &first.presentations);
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["result"]["accepted"], true, "{out}");
    let proven = out["result"]["proven"].as_array().unwrap();
    assert_eq!(proven.len(), 1, "{out}");
    assert_eq!(proven[0]["issuer"], tax);
    assert_eq!(proven[0]["issuer_name"], TAX_OFFICE);
    let needle = format!("income proven by {TAX_OFFICE}");
    assert!(out.to_string().contains(&needle), "{out}");
    // The person reads it beside the answer; the server's own sentence is for developers.
    wait_page_text(
        &housing.page,
        &format!("household income below 30,000.00 EUR — proven by {TAX_OFFICE}"),
    );
    housing
        .page
        .screenshot("credentials-housing-accepted")
        .unwrap();
    // The same receipt and presentation again: the nonce is spent.
    let out = housing.submit_with_proofs(&first.receipt, &first.presentations);
    assert_eq!(error_code(&out), "replayed_nonce", "{out}");

    // One proof spent.
    wallet.wait_proofs_left(&tax, full - 1);

    // A second application: another credential, another holder key, nothing shared.
    let second = apply(&mut wallet, &mut housing);
    assert_ne!(second.proposal, first.proposal);
    assert_eq!(second.presentations.len(), 1);
    assert_unlinkable(&first.presentations[0], &second.presentations[0]);
    // The first application's presentation does not fit the second's nonce.
    let out = housing.submit_with_proofs(&second.receipt, &first.presentations);
    assert_eq!(error_code(&out), "proof_invalid", "{out}");
    let out = housing.submit_with_proofs(&second.receipt, &second.presentations);
    assert_eq!(out["result"]["accepted"], true, "{out}");
    wallet.wait_proofs_left(&tax, full - 2);
    wallet.assert_no_csp_violation();
}

/// With both credentials, the pharmacy's age answer is proven by the civil registry; a housing
/// presentation handed to the pharmacy is refused; presentations for the two sites share
/// nothing. The person typed an income above the housing limit: the tax office's answer (Ana
/// earns 28,500.00 EUR) is the one given, proven, and accepted.
/// Issue 28 item 6: the person typed 31,000.00 while the tax office holds 28,500.00. The person
/// is told (the credential line, beside the fact in the editor, on the card beside the question,
/// naming the office and no amount); the site is told the office's answer with its proof, under
/// the same label as when the two agree.
/// Issue 31, Token Status List: the tax office revokes Ana. A presentation of a credential it
/// issued her before is then refused by the housing site (`credential_revoked`, read from the
/// office's status list, which the site fetches and verifies), and the refusal spends nothing:
/// the same receipt without the revoked proof is judged on its own merits.
#[test]
fn a_credential_the_issuer_revoked_is_refused_by_the_site_and_spends_nothing() {
    let _serial = tacit_e2e::serial();
    let stack = Stack::start();
    let browser = Browser::launch().unwrap();
    let mut wallet = stack.wallet(&browser, "28,400.00");
    let tax = stack.tax.origin();
    wallet.add_credential(&tax, &stack.tax.code_for("Ana").unwrap());
    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);

    // Valid: accepted.
    let first = apply(&mut wallet, &mut housing);
    assert_eq!(first.presentations.len(), 1, "{:?}", first.presentations);
    let entry =
        Credential::parse(&first.presentations[0][..=first.presentations[0].rfind('~').unwrap()])
            .unwrap()
            .status()
            .cloned()
            .expect("the tax office's credential names its status list entry");
    assert_eq!(entry.uri, format!("{tax}/status/1"));
    let out = housing.submit_with_proofs(&first.receipt, &first.presentations);
    assert_eq!(out["result"]["accepted"], true, "{out}");

    // Revoked at the office: the next presentation, from the same batch, is refused.
    assert!(stack.tax.revoke("Ana Demo").unwrap() >= 1);
    let second = apply(&mut wallet, &mut housing);
    assert_eq!(second.presentations.len(), 1);
    // The site uses a list it read for at most 10 s (less than the office's `ttl`): after that
    // it reads the new one.
    std::thread::sleep(Duration::from_secs(11));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let refused = loop {
        let out = housing.submit_with_proofs(&second.receipt, &second.presentations);
        if error_code(&out) == "credential_revoked" {
            break out;
        }
        assert_eq!(
            out["result"]["accepted"],
            Value::Null,
            "a revoked credential was accepted: {out}"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "never refused as revoked: {out}"
        );
        std::thread::sleep(Duration::from_secs(2));
    };
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("revoked") && message.contains("Nothing was spent"),
        "{message}"
    );
    // Nothing was spent: the same receipt without its proof is judged on its own merits (its
    // issuer-backed answer lacks the proof), not refused `replayed_nonce`.
    let out = housing.submit(&second.receipt);
    assert_eq!(error_code(&out), "proof_missing", "{out}");

    // The wallet reads the office's list when it loads its credentials (here: the next unlock),
    // drops the revoked ones and tells the person; the answer is their own word again.
    assert!(wallet.has_credential(&tax));
    wallet.reload();
    wallet.unlock_and_wait(tacit_e2e::wallet::PASS);
    wallet.wait_text("#credential-msg", "has revoked");
    let said = wallet.text("#credential-msg");
    assert!(
        said.contains("Tax Office Nordstadt") && said.contains("your own word"),
        "{said}"
    );
    wallet
        .page
        .wait_for(
            &format!(
                "!document.querySelector({:?})",
                tacit_e2e::wallet::credential_selector(&tax)
            ),
            Duration::from_secs(20),
        )
        .unwrap();
}

#[test]
fn issue28_item6_a_typed_fact_the_credential_contradicts_is_told_to_the_person_not_the_site() {
    let _serial = tacit_e2e::serial();
    let stack = Stack::start();
    let browser = Browser::launch().unwrap();
    let mut wallet = stack.wallet(&browser, "31,000.00");
    let tax = stack.tax.origin();
    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    wallet.add_credential(&tax, &stack.tax.code_for("Ana").unwrap());

    // Settings: the credential's line says it answers differently.
    let line = wallet.credential_text(&tax);
    assert!(
        line.contains("answers differently from what you typed"),
        "{line}"
    );
    // Beside the fact: the office, the question at 30,000, its answer and the typed one.
    wallet.open_editor();
    assert_eq!(wallet.hidden("differs-income"), json!(false));
    let beside = wallet.text("#differs-income");
    assert!(beside.contains(TAX_OFFICE), "{beside}");
    assert!(beside.contains("30,000"), "{beside}");
    assert!(
        beside.contains("with yes; what you typed answers no"),
        "{beside}"
    );
    assert_eq!(
        wallet.hidden("differs-age"),
        json!(true),
        "no age credential"
    );
    wallet.close_editor();

    // On the card, beside the income question (and only there): no amount, the office named.
    let policy = housing.requirements();
    let id = wallet.request(policy.clone());
    let card = format!("#req-{id}");
    wallet.wait_text(&format!("{card} .differs"), "answer this differently");
    let shown: Vec<Value> = wallet
        .page
        .eval(&format!(
            "[...document.querySelectorAll('{card} li.claim-item')].map(li => {{ \
               const d = li.querySelector('.differs'); \
               return d.hidden ? null : d.textContent; }})"
        ))
        .unwrap()
        .as_array()
        .unwrap()
        .clone();
    let told: Vec<&str> = shown.iter().filter_map(Value::as_str).collect();
    assert_eq!(told.len(), 1, "one question differs: {shown:?}");
    assert!(told[0].contains(TAX_OFFICE), "{told:?}");
    assert!(
        !told[0].contains("31,000") && !told[0].contains("28,500"),
        "{told:?}"
    );

    // The site gets the office's answer (yes) with its proof, labelled as any proven answer.
    let app = apply(&mut wallet, &mut housing);
    let income = app
        .card
        .iter()
        .find(|(_, text)| text.contains("income"))
        .unwrap_or_else(|| panic!("no income item on the card: {:?}", app.card));
    assert_eq!(income.0, "issuer", "{:?}", app.card);
    assert_eq!(app.presentations.len(), 1, "{:?}", app.presentations);
    let out = housing.submit_with_proofs(&app.receipt, &app.presentations);
    assert_eq!(out["ok"], true, "{out}");
}

#[test]
fn pharmacy_age_is_proven_by_the_registry_and_a_misdirected_presentation_is_refused() {
    let _serial = tacit_e2e::serial();
    let stack = Stack::start();
    let browser = Browser::launch().unwrap();
    let mut wallet = stack.wallet(&browser, "35,000.00");
    let (tax, registry) = (stack.tax.origin(), stack.registry.origin());
    wallet.add_credential(&tax, &stack.tax.code_for("Ana").unwrap());
    wallet.add_credential(&registry, &stack.registry.code_for("Ana").unwrap());
    assert!(wallet.credential_text(&registry).contains(CIVIL_REGISTRY));
    let registry_full = wallet.proofs_left(&registry);

    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    let housed = apply(&mut wallet, &mut housing);
    assert_eq!(housed.presentations.len(), 1);

    let mut pharmacy = Site::open(&browser, &stack.pharmacy, "", PHARMACY_TOOLS);
    let bought = apply(&mut wallet, &mut pharmacy);
    let age = bought
        .card
        .iter()
        .find(|(proof, _)| proof == "issuer")
        .unwrap_or_else(|| panic!("no proven item on the card: {:?}", bought.card));
    assert!(
        age.1.contains(&format!("proven by {CIVIL_REGISTRY}")),
        "{age:?}"
    );
    assert_eq!(
        bought.card.iter().filter(|(p, _)| p == "self").count(),
        1,
        "{:?}",
        bought.card
    );
    assert_eq!(bought.presentations.len(), 1);
    let aud = bought.policy["origin"].as_str().unwrap();
    let nonce = bought.policy["nonce"].as_str().unwrap();
    let disclosed = verify(&bought.presentations[0], &stack.registry, aud, nonce);
    assert_eq!(
        Value::Object(disclosed),
        json!({ "age_equal_or_over_18": true })
    );
    assert_no_credential_material(&bought.agent_saw, &bought.presentations);
    assert_unlinkable(&housed.presentations[0], &bought.presentations[0]);

    // The agent hands the pharmacy the housing presentation: another issuer, another audience.
    let out = pharmacy.submit_with_proofs(&bought.receipt, &housed.presentations);
    let code = error_code(&out);
    assert!(
        ["untrusted_issuer", "proof_invalid", "proof_mismatch"].contains(&code),
        "{out}"
    );
    // Both at once: one too many.
    let both = [
        bought.presentations[0].clone(),
        housed.presentations[0].clone(),
    ];
    let out = pharmacy.submit_with_proofs(&bought.receipt, &both);
    assert_eq!(out["ok"], false, "{out}");
    // The pharmacy's own presentation at the housing site: refused there too.
    let out = housing.submit_with_proofs(&housed.receipt, &bought.presentations);
    assert_eq!(out["ok"], false, "{out}");

    let out = pharmacy.submit_with_proofs(&bought.receipt, &bought.presentations);
    assert_eq!(out["result"]["accepted"], true, "{out}");
    let needle = format!("proven by {CIVIL_REGISTRY}");
    assert!(out.to_string().contains(&needle), "{out}");
    wait_page_text(&pharmacy.page, &needle);
    pharmacy
        .page
        .screenshot("credentials-pharmacy-accepted")
        .unwrap();
    let out = housing.submit_with_proofs(&housed.receipt, &housed.presentations);
    assert_eq!(out["result"]["accepted"], true, "{out}");
    wallet.wait_proofs_left(&registry, registry_full - 1);
    wallet.assert_no_csp_violation();
}

/// Every release spends one proof; when fewer than three are left the wallet fetches a new
/// batch with the refresh token the tax office gave it (the enrolment code is long spent), and
/// the proofs from that batch verify at the site like the first ones.
#[test]
fn proofs_run_low_and_the_wallet_refills_with_its_refresh_token() {
    let _serial = tacit_e2e::serial();
    let stack = Stack::start();
    let browser = Browser::launch().unwrap();
    let mut wallet = stack.wallet(&browser, "28,400.00");
    let tax = stack.tax.origin();
    wallet.add_credential(&tax, &stack.tax.code_for("Chloe").unwrap());
    assert_eq!(wallet.proofs_left(&tax), 10);
    assert_eq!(stack.tax.issued_batches().unwrap(), 1);
    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    let mut seen = Vec::new();
    for spent in 1..=8 {
        let application = apply_granting(&mut wallet, &mut housing, "once");
        assert_eq!(application.presentations.len(), 1);
        let out = housing.submit_with_proofs(&application.receipt, &application.presentations);
        assert_eq!(
            out["result"]["accepted"], true,
            "application {spent}: {out}"
        );
        if spent < 8 {
            wallet.wait_proofs_left(&tax, 10 - spent);
        }
        seen.push(application.presentations[0].clone());
    }
    // Two left: a new batch, fetched with the refresh token.
    wallet.wait_text(
        "#credential-msg",
        "Fetched 10 new proofs from Tax Office Nordstadt",
    );
    assert!(
        wallet.proofs_left(&tax) >= 10,
        "{}",
        wallet.credential_text(&tax)
    );
    assert_eq!(stack.tax.issued_batches().unwrap(), 2);
    let after = wallet.proofs_left(&tax);
    let application = apply_granting(&mut wallet, &mut housing, "once");
    let out = housing.submit_with_proofs(&application.receipt, &application.presentations);
    assert_eq!(out["result"]["accepted"], true, "{out}");
    wallet.wait_proofs_left(&tax, after - 1);
    seen.push(application.presentations[0].clone());
    for (i, a) in seen.iter().enumerate() {
        for b in &seen[i + 1..] {
            assert_unlinkable(a, b);
        }
    }
}

/// A rogue issuer on another origin that calls itself "Tax Office Nordstadt": the wallet takes
/// its credential (the person typed its address), but the housing site trusts issuers by
/// origin, not by name, and refuses its proof. Addresses that are not issuers store nothing.
#[test]
fn an_untrusted_issuer_is_refused_even_under_a_trusted_name() {
    let _serial = tacit_e2e::serial();
    let stack = Stack::start();
    let browser = Browser::launch().unwrap();
    // Started before the page loads: the page may connect only to the services it is told of
    // when it is served (its CSP), and the person types the rogue's address themselves.
    let rogue = TestIssuer::start("income", TAX_OFFICE).unwrap();
    assert_ne!(rogue.origin(), stack.tax.origin());
    let mut wallet = stack.wallet(&browser, "28,400.00");

    // Not an issuer (the signer answers this wallet, but not as an issuer); nobody listening.
    // (The browser reads a cross-origin answer without CORS as no answer at all.)
    wallet.submit_credential(&stack.signer.url(), "AAAA-BBBB-CCCC-DDDD");
    wallet.wait_text("#credential-msg", &stack.signer.url());
    wallet.wait_text("#credential-msg", "nothing was stored");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nobody = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    wallet.submit_credential(&nobody, "AAAA-BBBB-CCCC-DDDD");
    wallet.wait_text("#credential-msg", &nobody);
    wallet.wait_text("#credential-msg", "could not be reached");
    assert_eq!(
        wallet
            .page
            .eval("document.querySelectorAll('.credential').length")
            .unwrap(),
        json!(0),
        "{}",
        wallet.text("#credential-list")
    );

    wallet.add_credential(&rogue.origin(), &rogue.code_for("Ana").unwrap());
    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    let application = apply(&mut wallet, &mut housing);
    assert_eq!(application.presentations.len(), 1);
    assert!(
        pieces(&application.presentations[0])
            .issuer_jwt
            .split('.')
            .nth(1)
            .map(|p| URL_SAFE_NO_PAD.decode(p).unwrap())
            .map(|p| String::from_utf8(p).unwrap())
            .unwrap()
            .contains(&rogue.origin()),
        "the presentation is the rogue's"
    );
    let out = housing.submit_with_proofs(&application.receipt, &application.presentations);
    assert_eq!(error_code(&out), "untrusted_issuer", "{out}");
    // Without the presentation: the receipt itself names an issuer the site does not trust.
    let out = housing.submit(&application.receipt);
    assert_eq!(error_code(&out), "untrusted_issuer", "{out}");
}

/// Two wallet tabs of one profile: a proof one tab spends is spent in the other too, so the
/// second tab's application presents another credential (a single-use credential presented
/// twice would link the two applications).
#[test]
fn two_tabs_never_present_the_same_credential() {
    let _serial = tacit_e2e::serial();
    let stack = Stack::start();
    let browser = Browser::launch().unwrap();
    let mut first = stack.wallet(&browser, "28,400.00");
    let tax = stack.tax.origin();
    first.add_credential(&tax, &stack.tax.code_for("Ana").unwrap());
    let mut second = Wallet::open(&browser, &stack.wallet, "");
    second.unlock(tacit_e2e::wallet::PASS);
    second.wait_text("#lock-pill", "Unlocked");
    second.wait_proofs_left(&tax, 10);

    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    let a = apply(&mut first, &mut housing);
    let out = housing.submit_with_proofs(&a.receipt, &a.presentations);
    assert_eq!(out["result"]["accepted"], true, "{out}");
    first.wait_proofs_left(&tax, 9);
    second.wait_proofs_left(&tax, 9);

    let b = apply(&mut second, &mut housing);
    assert_eq!(b.presentations.len(), 1);
    assert_unlinkable(&a.presentations[0], &b.presentations[0]);
    let out = housing.submit_with_proofs(&b.receipt, &b.presentations);
    assert_eq!(out["result"]["accepted"], true, "{out}");
    first.wait_proofs_left(&tax, 8);
    second.wait_proofs_left(&tax, 8);
}

/// How many holder keys the wallet keeps in IndexedDB (`tacit-wallet`, store `holder`).
fn holder_keys(wallet: &Wallet<'_>) -> i64 {
    let js = "new Promise((ok, no) => { const r = indexedDB.open('tacit-wallet'); \
        r.onerror = () => no(r.error); \
        r.onsuccess = () => { const db = r.result; \
          if (!db.objectStoreNames.contains('holder')) { db.close(); ok(-1); return; } \
          const c = db.transaction('holder').objectStore('holder').count(); \
          c.onsuccess = () => { db.close(); ok(c.result); }; c.onerror = () => no(c.error); }; })";
    wallet.page.eval(js).unwrap().as_i64().unwrap()
}

/// The credentials are sealed with the profile: a reload shows nothing until the person unlocks,
/// then the same proofs; a lock clears them from the page. A credential that says no makes the
/// answer no, whatever the person typed, and the site sees that proven no. Each presentation
/// costs its key; deleting the profile deletes the credentials and every key.
#[test]
fn credentials_are_sealed_with_the_profile_and_a_proven_no_stays_no() {
    let _serial = tacit_e2e::serial();
    let stack = Stack::start();
    let browser = Browser::launch().unwrap();
    // The person types an income below the limit; the tax office knows Ben earns 72,000 EUR.
    let mut wallet = stack.wallet(&browser, "28,400.00");
    let tax = stack.tax.origin();
    wallet.add_credential(&tax, &stack.tax.code_for("Ben").unwrap());
    assert_eq!(holder_keys(&wallet), 10);
    let stored: String = wallet
        .page
        .eval("JSON.stringify(Object.assign({}, localStorage))")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        !stored.contains("eyJ"),
        "a credential stored in clear: {stored}"
    );
    assert!(!stored.contains("income_below"), "a claim stored in clear");

    // Locked: nothing of the credentials on the page.
    wallet.page.click("[data-action=lock]").unwrap();
    wallet.wait_text("#lock-pill", "Locked");
    assert!(
        !wallet.has_credential(&tax),
        "{}",
        wallet.text("#credential-list")
    );
    // Reloaded and unlocked: the same proofs.
    wallet.reload();
    assert!(!wallet.has_credential(&tax));
    wallet.unlock(tacit_e2e::wallet::PASS);
    wallet.wait_text("#lock-pill", "Unlocked");
    wallet.wait_proofs_left(&tax, 10);

    let mut housing = Site::open(&browser, &stack.housing, "", HOUSING_TOOLS);
    let application = apply(&mut wallet, &mut housing);
    let income = application
        .card
        .iter()
        .find(|(_, text)| text.contains("income"))
        .unwrap();
    assert_eq!(income.0, "issuer", "{:?}", application.card);
    assert!(income.1.contains(": no"), "{income:?}");
    let aud = application.policy["origin"].as_str().unwrap();
    let nonce = application.policy["nonce"].as_str().unwrap();
    let disclosed = verify(&application.presentations[0], &stack.tax, aud, nonce);
    assert_eq!(
        Value::Object(disclosed),
        json!({ "income_below_30000": false })
    );
    let out = housing.submit_with_proofs(&application.receipt, &application.presentations);
    assert_eq!(error_code(&out), "claim_not_satisfied", "{out}");
    // The key that signed it is gone.
    wallet.wait_proofs_left(&tax, 9);
    assert_eq!(holder_keys(&wallet), 9);

    // Deleting the profile deletes the credentials and every holder key.
    wallet.delete_profile();
    assert_eq!(holder_keys(&wallet), 0);
    assert!(!wallet.has_credential(&tax));
    let stored: String = wallet
        .page
        .eval("Object.keys(localStorage).join(',')")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!stored.contains("credential"), "left behind: {stored}");
}

/// The harness's issuers are real issuers: their metadata names their origin and keys, each
/// seeded code redeems once over HTTP, a fresh code works, and a site trusting them starts.
#[test]
fn test_issuers_serve_the_issuer_contract() {
    let tax = TestIssuer::tax_office().unwrap();
    let registry = TestIssuer::civil_registry().unwrap();
    assert_ne!(tax.origin(), registry.origin());
    for issuer in [&tax, &registry] {
        let metadata: Value = serde_json::from_str(&http_get(&issuer.keys_url())).unwrap();
        assert_eq!(metadata["issuer"], issuer.origin());
        assert_eq!(
            metadata,
            serde_json::from_str::<Value>(issuer.metadata_json()).unwrap()
        );
        let jwks: Value = serde_json::from_str(&issuer.jwks_json()).unwrap();
        assert_eq!(jwks, metadata["jwks"]);
        let about: Value = serde_json::from_str(&http_get(&issuer.url("/v1/issuer"))).unwrap();
        assert_eq!(about["name"], issuer.name());
        assert_eq!(about["attribute"], issuer.attribute().as_str());
        let names: Vec<String> = issuer.codes().into_iter().map(|(_, n)| n).collect();
        assert_eq!(names, ["Ana Demo", "Ben Demo", "Chloe Demo"]);
    }
    let income: Vec<Option<i64>> = tax.people().iter().map(|(_, p)| p.income_minor).collect();
    assert_eq!(income, [Some(2_850_000), Some(7_200_000), Some(1_500_000)]);

    // Ana's code: one batch, then refused; a fresh code for her: another batch.
    let ana = tax.code_for("Ana").unwrap();
    let (status, body) = batch(&tax, &ana, 3);
    assert_eq!(status, 200, "{body}");
    let credentials = body["credentials"].as_array().unwrap();
    assert_eq!(credentials.len(), 3);
    let metadata = IssuerMetadata::parse(tax.metadata_json().as_bytes()).unwrap();
    for text in credentials {
        let credential = Credential::parse(text.as_str().unwrap()).unwrap();
        credential
            .verify_issuer(&metadata.jwks, system_now())
            .unwrap();
        assert_eq!(credential.iss(), tax.origin());
        assert_eq!(
            credential.disclosure("income_below_30000").unwrap().value,
            true
        );
        assert_eq!(
            credential.disclosure("income_below_25000").unwrap().value,
            false
        );
    }
    let (status, body) = batch(&tax, &ana, 1);
    assert_eq!(
        (status, body["error"].as_str()),
        (403, Some("code_refused"))
    );
    let (status, body) = batch(&tax, &tax.fresh_code("Ana").unwrap(), 1);
    assert_eq!(status, 200, "{body}");
    // Ben's registry code: he is 18 (born 2008-09-01).
    let (status, body) = batch(&registry, &registry.code_for("Ben").unwrap(), 1);
    assert_eq!(status, 200, "{body}");
    let credential = Credential::parse(body["credentials"][0].as_str().unwrap()).unwrap();
    assert_eq!(
        credential.disclosure("age_equal_or_over_21").unwrap().value,
        false
    );

    // Sites start trusting them, by URL and pinned.
    let signer = TestSigner::start(signer_store(), &["http://127.0.0.1:1"]).unwrap();
    let keys_url = format!("{}/v1/keys", signer.url());
    let site = TestSite::start_trusting(
        "housing",
        &keys_url,
        &[Trust::keys_url(&tax), Trust::pinned(&registry)],
    )
    .unwrap();
    let requirements: Value =
        serde_json::from_str(&http_get(&site.url("/api/requirements"))).unwrap();
    assert_eq!(
        requirements["result"]["origin"],
        site.origin(),
        "{requirements}"
    );
}

fn http_get(url: &str) -> String {
    let mut response = common::http().get(url).call().unwrap();
    response.body_mut().read_to_string().unwrap()
}

/// `POST /v1/credentials` with `n` fresh native holder keys and `code`: status and body.
fn batch(issuer: &TestIssuer, code: &str, n: usize) -> (u16, Value) {
    use p256::ecdsa::signature::Signer;
    let nonce: Value = serde_json::from_str(&http_get(&issuer.url("/v1/nonce"))).unwrap();
    let nonce = nonce["nonce"].as_str().unwrap();
    let keys: Vec<Value> = (0..n)
        .map(|_| {
            let key = tacit_issuer::make_signing_key().unwrap();
            let input = tacit_protocol::issuer_pop::pop_signing_input(&issuer.origin(), nonce);
            let signature: p256::ecdsa::Signature = key.sign(input.as_bytes());
            let jwk =
                tacit_protocol::request_auth::InstallKey::from_verifying_key(*key.verifying_key())
                    .to_jwk();
            json!({ "jwk": jwk, "proof": URL_SAFE_NO_PAD.encode(signature.to_bytes()) })
        })
        .collect();
    let body = json!({ "code": code, "nonce": nonce, "holder_keys": keys });
    let mut response = common::http()
        .post(&issuer.url("/v1/credentials"))
        .header("content-type", "application/json")
        .send(body.to_string().as_bytes())
        .unwrap();
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap())
}
