//! The page (wasm32 only): reads the clock, draws randomness, keeps the nonce book in
//! `sessionStorage`, fetches the signer's keys, registers the two tools and draws the outcome.
//! Every decision is [`crate::judge`]'s; nothing here throws to an agent.

mod page;
mod tools;

use std::cell::RefCell;

use js_sys::Promise;
use serde_json::{Value, json};
use wallet_core::{KeySet, Origin, Timestamp};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::nonce::{NonceBook, make_nonce};
use crate::policy::{Policy, PolicyError};
use crate::submit::parse_submission;
use crate::submit::{Accepted, Code, Refusal, Submission, judge, parse_requirements_input};

/// The signer a site trusts unless the page is opened with `?signer=<origin>`.
pub const DEFAULT_SIGNER: &str = "http://127.0.0.1:8787";

/// How long a key fetch may take.
const FETCH_TIMEOUT_MS: u32 = 5_000;

/// The page's state.
struct Site {
    policy: Policy,
    origin: Origin,
    book: NonceBook,
    keys: Option<KeySet>,
    signer: String,
    signer_note: String,
    webmcp_note: (String, bool),
    last: page::Outcome,
    history: Vec<page::Entry>,
    _tools: Vec<tools::Registration>,
}

thread_local! {
    static SITE: RefCell<Option<Site>> = const { RefCell::new(None) };
}

fn with_site<R>(f: impl FnOnce(&mut Site) -> R) -> Option<R> {
    SITE.with(|cell| cell.try_borrow_mut().ok()?.as_mut().map(f))
}

fn now() -> Timestamp {
    Timestamp::from_millis(js_sys::Date::now() as i64)
}

fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    search.trim_start_matches('?').split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name)
            .then(|| js_sys::decode_uri_component(v).ok()?.as_string())
            .flatten()
    })
}

fn storage_key(policy: &Policy) -> String {
    format!("tacit-site.{}.nonces.v1", policy.id)
}

fn session_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok().flatten()
}

fn load_book(policy: &Policy) -> NonceBook {
    session_storage()
        .and_then(|s| s.get_item(&storage_key(policy)).ok().flatten())
        .and_then(|text| NonceBook::from_json(&text).ok())
        .unwrap_or_default()
}

fn save_book(site: &Site) {
    if let Some(storage) = session_storage() {
        let _ = storage.set_item(&storage_key(&site.policy), &site.book.to_json());
    }
}

/// Starts the page for `policy`; a policy that does not check is shown, not served.
pub fn start(policy: Result<Policy, PolicyError>) {
    let policy = match policy.and_then(|p| p.check().map(|()| p)) {
        Ok(policy) => policy,
        Err(e) => return page::boot_failed(&format!("This site's policy is invalid: {e}.")),
    };
    let origin = web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .and_then(|o| Origin::parse(&o).ok());
    let Some(origin) = origin else {
        return page::boot_failed("This page has no usable origin (open it over http on a host).");
    };
    let (signer, signer_note) = match query_param("signer") {
        None => (DEFAULT_SIGNER.to_owned(), String::new()),
        Some(text) => match Origin::parse(text.trim_end_matches('/')) {
            Ok(o) => (o.as_str().to_owned(), String::new()),
            Err(_) => (
                DEFAULT_SIGNER.to_owned(),
                "The ?signer= parameter is not an origin; using the default signer.".to_owned(),
            ),
        },
    };
    let book = load_book(&policy);
    let mut site = Site {
        policy,
        origin,
        book,
        keys: None,
        signer,
        signer_note,
        webmcp_note: (String::new(), false),
        last: page::Outcome::Waiting,
        history: Vec::new(),
        _tools: Vec::new(),
    };
    site.webmcp_note = match tools::model_context() {
        None => (
            "WebMCP absent: agents cannot reach this site's tools".to_owned(),
            false,
        ),
        Some(ctx) => {
            let defs = [
                (
                    site.policy.requirements_tool_json(),
                    requirements as tools::Run,
                ),
                (site.policy.submit_tool_json(), submit as tools::Run),
            ];
            let mut failed = None;
            for (def, run) in defs {
                match tools::register(&ctx, &def, run, on_refused) {
                    Ok(registration) => site._tools.push(registration),
                    Err(e) => failed = Some(e),
                }
            }
            match failed {
                None => ("WebMCP: 2 tools".to_owned(), true),
                Some(e) => (format!("WebMCP refused a tool: {e}"), false),
            }
        }
    };
    page::requirements(&site.policy);
    SITE.with(|cell| *cell.borrow_mut() = Some(site));
    with_site(render);
    page::ready();
    // Fetch the keys now, so the page shows whether the signer answers.
    wasm_bindgen_futures::spawn_local(async {
        let _ = load_keys(false).await;
    });
}

fn on_refused(error: String) {
    with_site(|site| {
        site.webmcp_note = (format!("WebMCP refused a tool: {error}"), false);
        render(site);
    });
}

fn render(site: &mut Site) {
    let (open, used) = site.book.counts(now());
    page::pills(
        &site.signer_note,
        &site.webmcp_note,
        &format!("{open} open, {used} used"),
    );
    page::outcome(&site.policy, &site.last);
    page::history(&site.history);
}

fn record(site: &mut Site, tool: &str, outcome: page::Outcome) {
    site.history.insert(
        0,
        page::Entry {
            at: now(),
            tool: tool.to_owned(),
            summary: outcome.summary(),
        },
    );
    site.history.truncate(20);
    site.last = outcome;
    render(site);
}

fn busy() -> Value {
    Refusal::new(
        Code::Busy,
        "The site is busy or still starting; try again in a moment.",
    )
    .envelope()
}

/// The requirements tool: the policy with a fresh nonce, recorded in the book.
fn requirements(input: Value) -> Promise {
    let out = with_site(|site| {
        let tool = site.policy.requirements_tool;
        if let Err(refusal) = parse_requirements_input(&input) {
            record(site, tool, page::Outcome::Refused(refusal.clone()));
            return refusal.envelope();
        }
        let at = now();
        for _ in 0..3 {
            let mut random = [0u8; 8];
            if getrandom::fill(&mut random).is_err() {
                break;
            }
            let nonce = make_nonce(random);
            if site.book.issue(nonce.clone(), at) {
                save_book(site);
                let result = site.policy.requirements(&site.origin, &nonce);
                record(site, tool, page::Outcome::Asked(nonce));
                return json!({ "ok": true, "result": result });
            }
        }
        busy()
    })
    .unwrap_or_else(busy);
    Promise::resolve(&tools::to_js(&out))
}

/// The submission tool: validate, fetch keys if needed, judge, show.
fn submit(input: Value) -> Promise {
    wasm_bindgen_futures::future_to_promise(async move {
        let out = submit_inner(&input).await;
        Ok(tools::to_js(&out))
    })
}

async fn submit_inner(input: &Value) -> Value {
    let Some(tool) = with_site(|s| s.policy.submit_tool) else {
        return busy();
    };
    let submission = match parse_submission(input) {
        Ok(s) => s,
        Err(refusal) => return finish(tool, Err(refusal)),
    };
    let cached = with_site(|s| s.keys.clone()).flatten();
    let (keys, from_cache) = match cached {
        Some(k) => (k, true),
        None => match load_keys(false).await {
            Ok(k) => (k, false),
            Err(refusal) => return finish(tool, Err(refusal)),
        },
    };
    let mut verdict = decide(&submission, &keys);
    // A key the cached set does not know may be newer than the cache: fetch once, afresh.
    if from_cache && matches!(&verdict, Err(r) if r.code == Code::UnknownKey) {
        verdict = match load_keys(true).await {
            Ok(fresh) => decide(&submission, &fresh),
            Err(refusal) => Err(refusal),
        };
    }
    finish(tool, verdict)
}

/// Judges and, on acceptance, persists the spent nonce, in one borrow: two calls racing with
/// the same receipt cannot both pass.
fn decide(submission: &Submission, keys: &KeySet) -> Result<Accepted, Refusal> {
    with_site(|site| {
        let verdict = judge(
            &site.policy,
            &site.origin,
            &mut site.book,
            submission,
            keys,
            now(),
        );
        if verdict.is_ok() {
            save_book(site);
        }
        verdict
    })
    .unwrap_or_else(|| Err(Refusal::new(Code::Busy, "The site is busy; try again.")))
}

fn finish(tool: &'static str, verdict: Result<Accepted, Refusal>) -> Value {
    with_site(|site| {
        let (out, outcome) = match verdict {
            Ok(accepted) => (
                accepted.envelope(&site.policy),
                page::Outcome::Accepted(accepted),
            ),
            Err(refusal) => (refusal.envelope(), page::Outcome::Refused(refusal)),
        };
        record(site, tool, outcome);
        out
    })
    .unwrap_or_else(busy)
}

/// The signer's key set, fetched (bypassing caches if `fresh`) and kept; a failure is the
/// `signer_unreachable` refusal.
async fn load_keys(fresh: bool) -> Result<KeySet, Refusal> {
    let Some(signer) = with_site(|s| s.signer.clone()) else {
        return Err(Refusal::new(Code::Busy, "The site is still starting."));
    };
    let url = format!("{signer}/v1/keys");
    let fetched = fetch_text(&url, fresh).await.and_then(|text| {
        KeySet::parse(text.as_bytes()).map_err(|_| "the answer is not a key set".to_owned())
    });
    with_site(|site| match fetched {
        Ok(set) => {
            site.signer_note = format!("Signer {signer}: {} key(s)", set.keys.len());
            site.keys = Some(set.clone());
            render(site);
            Ok(set)
        }
        Err(e) => {
            site.signer_note = format!("Signer {signer} unreachable");
            render(site);
            Err(Refusal::new(
                Code::SignerUnreachable,
                format!(
                    "The site could not fetch the signer's public keys from {url} ({e}), so it \
                     cannot check the receipt. Nothing was spent; submit again in a moment."
                ),
            ))
        }
    })
    .unwrap_or_else(|| Err(Refusal::new(Code::Busy, "The site is busy; try again.")))
}

async fn fetch_text(url: &str, fresh: bool) -> Result<String, String> {
    let init = web_sys::RequestInit::new();
    init.set_method("GET");
    init.set_mode(web_sys::RequestMode::Cors);
    if fresh {
        init.set_cache(web_sys::RequestCache::NoCache);
    }
    init.set_signal(Some(&web_sys::AbortSignal::timeout_with_u32(
        FETCH_TIMEOUT_MS,
    )));
    let request =
        web_sys::Request::new_with_str_and_init(url, &init).map_err(|e| tools::error_text(&e))?;
    let window = web_sys::window().ok_or("no window")?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(|e| tools::error_text(&e))?
        .dyn_into()
        .map_err(|_| "no response")?;
    if !response.ok() {
        return Err(format!("HTTP {}", response.status()));
    }
    let text = response.text().map_err(|e| tools::error_text(&e))?;
    JsFuture::from(text)
        .await
        .map_err(|e| tools::error_text(&e))?
        .as_string()
        .ok_or_else(|| "no body".to_owned())
}
