//! The page (wasm32 only). It asks its own server what to show and which two tools it has
//! (`GET /api/site`), registers them on `document.modelContext` as the page's gate
//! ([`crate::gate::PageGate`]) says — the requirements tool for good, the submit tool only while
//! a nonce the page obtained is open — and forwards every call to the server's API
//! (`GET /api/requirements`, `POST /api/applications`), returning the server's envelope
//! unchanged. A submit call through a handle kept past the tool's withdrawal gets tool-gate's
//! refusal without reaching the server. It keeps no keys and the verdict is the server's. A
//! network failure is a `site_unreachable` refusal with a sentence, never a throw.

mod host;
mod page;
mod tools;

use std::cell::RefCell;

use js_sys::Promise;
use serde_json::{Value, json};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::gate::{PageGate, SiteTool};
use crate::submit::{Code, Refusal, parse_requirements_input};

/// How long one call to the site's server may take.
const FETCH_TIMEOUT_MS: u32 = 15_000;

/// What the server says the page is (public policy words).
#[derive(Debug, Clone)]
pub struct SiteInfo {
    pub site_name: String,
    pub submission: String,
    pub accepted_text: String,
    pub needs: Vec<String>,
    /// The issuers whose proof this site accepts, in words ("Tax Office Nordstadt").
    pub issuers: Vec<String>,
    pub requirements_tool: String,
    pub submit_tool: String,
}

impl SiteInfo {
    fn from_json(site: &Value) -> Option<(Self, SiteTool, SiteTool)> {
        let text = |key: &str| site.get(key)?.as_str().map(str::to_owned);
        let tools = site.get("tools")?.as_array()?;
        let [requirements, submit] = tools.as_slice() else {
            return None;
        };
        let info = Self {
            site_name: text("site_name")?,
            submission: text("submission")?,
            accepted_text: text("accepted_text")?,
            needs: site
                .get("needs")?
                .as_array()?
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect(),
            issuers: site
                .get("trusted_issuers")
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(|i| i.get("name")?.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
            requirements_tool: requirements.get("name")?.as_str()?.to_owned(),
            submit_tool: submit.get("name")?.as_str()?.to_owned(),
        };
        Some((
            info,
            SiteTool::from_def(requirements.clone())?,
            SiteTool::from_def(submit.clone())?,
        ))
    }
}

/// The page's state: what it shows. Nothing in it decides anything.
struct Site {
    info: SiteInfo,
    server_note: (String, bool),
    webmcp_note: (String, bool),
    issued: u32,
    accepted: u32,
    last: page::Outcome,
    history: Vec<page::Entry>,
    gate: PageGate,
    /// `None` without WebMCP.
    registry: Option<tool_gate::Registry<host::PageHost, SiteTool>>,
    /// The pending `setTimeout` for the gate's next deadline.
    timer: Option<i32>,
}

thread_local! {
    static SITE: RefCell<Option<Site>> = const { RefCell::new(None) };
}

fn with_site<R>(f: impl FnOnce(&mut Site) -> R) -> Option<R> {
    SITE.with(|cell| cell.try_borrow_mut().ok()?.as_mut().map(f))
}

/// Starts the page: asks the server what it is, registers the tools, shows the requirements.
pub fn start() {
    wasm_bindgen_futures::spawn_local(async {
        let site = match call("GET", "/api/site", None).await {
            Ok(site) => site,
            Err(refusal) => {
                return page::boot_failed(&format!(
                    "This page could not reach its site's server: {}",
                    refusal.message
                ));
            }
        };
        let Some((info, requirements_def, submit_def)) = SiteInfo::from_json(&site) else {
            return page::boot_failed(
                "This site's server described itself in a form this page does not know.",
            );
        };
        boot(info, requirements_def, submit_def);
    });
}

fn boot(info: SiteInfo, requirements_def: SiteTool, submit_def: SiteTool) {
    let runs = vec![
        (requirements_def.name.clone(), requirements as tools::Run),
        (submit_def.name.clone(), submit as tools::Run),
    ];
    let mut site = Site {
        info,
        server_note: ("Site server: connected".to_owned(), true),
        webmcp_note: (String::new(), false),
        issued: 0,
        accepted: 0,
        last: page::Outcome::Waiting,
        history: Vec::new(),
        gate: PageGate::new(requirements_def, submit_def),
        registry: tools::model_context()
            .map(|ctx| tool_gate::Registry::new(host::PageHost::new(ctx, runs, on_refused))),
        timer: None,
    };
    sync_tools(&mut site);
    page::requirements(&site.info.needs);
    page::issuers(&site.info.issuers);
    SITE.with(|cell| *cell.borrow_mut() = Some(site));
    with_site(render);
    page::ready();
}

fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

/// Brings the registered tools in step with the page's gate, says so in the pill, and sets the
/// timer for the gate's next deadline.
fn sync_tools(site: &mut Site) {
    let Some(registry) = site.registry.as_mut() else {
        site.webmcp_note = tools::webmcp_note(tools::Detection::Absent, 0);
        return;
    };
    let refused = registry.sync(site.gate.wanted());
    let registered = tool_gate::Host::list(registry.host()).len();
    site.webmcp_note = match refused.into_iter().next() {
        None => tools::webmcp_note(tools::detect(), registered),
        Some((name, e)) => (format!("WebMCP refused a tool: {name}: {e}"), false),
    };
    arm_timer(site);
}

/// One `setTimeout` at a time, for the gate's next deadline.
fn arm_timer(site: &mut Site) {
    let Some(window) = web_sys::window() else {
        return;
    };
    if let Some(id) = site.timer.take() {
        window.clear_timeout_with_handle(id);
    }
    let Some(deadline) = site.gate.next_deadline() else {
        return;
    };
    let delay = deadline
        .saturating_sub(now_ms())
        .clamp(0, i64::from(i32::MAX)) as i32;
    let wake = wasm_bindgen::closure::Closure::once_into_js(on_deadline);
    site.timer = window
        .set_timeout_with_callback_and_timeout_and_arguments_0(wake.unchecked_ref(), delay)
        .ok();
}

fn on_deadline() {
    with_site(|site| {
        site.timer = None;
        site.gate.tick(now_ms());
        sync_tools(site);
        render(site);
    });
}

fn on_refused(error: String) {
    with_site(|site| {
        site.webmcp_note = (format!("WebMCP refused a tool: {error}"), false);
        render(site);
    });
}

fn render(site: &mut Site) {
    page::pills(
        &site.server_note,
        &site.webmcp_note,
        &format!("{} issued, {} accepted", site.issued, site.accepted),
    );
    page::outcome(&site.info, &site.last);
    page::history(&site.history);
}

/// Records what `tool` answered, tells the page's gate (a nonce obtained, a nonce spent) and
/// shows it.
fn record(tool_is_submit: bool, out: &Value) {
    with_site(|site| {
        if tool_is_submit {
            site.gate.on_submit_answer(out, now_ms());
        } else {
            site.gate.on_requirements(out, now_ms());
        }
        sync_tools(site);
        let outcome = page::Outcome::of(out, tool_is_submit);
        match &outcome {
            page::Outcome::Asked(_) => site.issued += 1,
            page::Outcome::Accepted { .. } => site.accepted += 1,
            _ => {}
        }
        site.server_note = match &outcome {
            page::Outcome::Refused { code, .. } if code == Code::SiteUnreachable.as_str() => {
                ("Site server: unreachable".to_owned(), false)
            }
            _ => ("Site server: connected".to_owned(), true),
        };
        let tool = if tool_is_submit {
            site.info.submit_tool.clone()
        } else {
            site.info.requirements_tool.clone()
        };
        site.history.insert(
            0,
            page::Entry {
                at_ms: js_sys::Date::now(),
                tool,
                summary: outcome.summary(),
            },
        );
        site.history.truncate(20);
        site.last = outcome;
        render(site);
    });
}

/// The requirements tool: the server's requirements (fresh nonce, attestation), unchanged. A
/// nonce in them brings the submit tool (until the nonce's expiry).
fn requirements(input: Result<Value, String>) -> Promise {
    wasm_bindgen_futures::future_to_promise(async move {
        let read = input.map_err(|why| Refusal::new(Code::InvalidInput, why));
        let out = match read.and_then(|input| parse_requirements_input(&input)) {
            Err(refusal) => refusal.envelope(),
            Ok(()) => envelope_of(call("GET", "/api/requirements", None).await),
        };
        record(false, &out);
        Ok(tools::to_js(&out))
    })
}

/// The submission tool: checked against the page's gate when it begins (a handle kept past the
/// tool's withdrawal gets tool-gate's refusal here), then the agent's input goes to the server as
/// it is and the server's verdict comes back unchanged. An accepted one withdraws the tool
/// unless another nonce of this page is open.
fn submit(input: Result<Value, String>) -> Promise {
    wasm_bindgen_futures::future_to_promise(async move {
        let checked = with_site(|site| {
            let checked = site.gate.begin_submit(now_ms());
            if checked.is_err() {
                sync_tools(site);
            }
            checked.map_err(|(refusal, _)| refusal)
        });
        let out = match (checked, input) {
            (Some(Err(refusal)), _) => refusal,
            (_, Err(why)) => Refusal::new(Code::InvalidInput, why).envelope(),
            (_, Ok(input)) => envelope_of(call("POST", "/api/applications", Some(&input)).await),
        };
        record(true, &out);
        Ok(tools::to_js(&out))
    })
}

fn envelope_of(answer: Result<Value, Refusal>) -> Value {
    answer.unwrap_or_else(|refusal| refusal.envelope())
}

/// Calls the site's own server. An envelope (`{ok, …}`) comes back as it is, whatever the
/// status; a plain JSON error (`{error, message}`) becomes a refusal envelope; anything else —
/// no answer, not JSON — is `site_unreachable`.
async fn call(method: &str, path: &str, body: Option<&Value>) -> Result<Value, Refusal> {
    let unreachable = |why: String| {
        Refusal::new(
            Code::SiteUnreachable,
            format!(
                "This page could not reach the site's server ({why}). Nothing was decided; try \
                 again in a moment."
            ),
        )
    };
    let text = fetch_text(method, path, body).await.map_err(unreachable)?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|_| unreachable("its answer was not JSON".to_owned()))?;
    if value.get("ok").is_some_and(Value::is_boolean) || path == "/api/site" {
        return Ok(value);
    }
    match (
        value.get("error").and_then(Value::as_str),
        value.get("message").and_then(Value::as_str),
    ) {
        (Some(code), Some(message)) => Ok(json!(crate::api::RefusalEnvelope {
            ok: false,
            is_error: true,
            error: crate::api::RefusalError {
                code: code.to_owned(),
                message: message.to_owned(),
                claim: None,
            },
        })),
        _ => Err(unreachable("its answer was not an envelope".to_owned())),
    }
}

async fn fetch_text(method: &str, path: &str, body: Option<&Value>) -> Result<String, String> {
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    init.set_mode(web_sys::RequestMode::SameOrigin);
    init.set_cache(web_sys::RequestCache::NoStore);
    init.set_signal(Some(&web_sys::AbortSignal::timeout_with_u32(
        FETCH_TIMEOUT_MS,
    )));
    if let Some(body) = body {
        let headers = web_sys::Headers::new().map_err(|e| tools::error_text(&e))?;
        headers
            .set("content-type", "application/json")
            .map_err(|e| tools::error_text(&e))?;
        init.set_headers(&headers);
        init.set_body(&wasm_bindgen::JsValue::from_str(&body.to_string()));
    }
    let request =
        web_sys::Request::new_with_str_and_init(path, &init).map_err(|e| tools::error_text(&e))?;
    let window = web_sys::window().ok_or("no window")?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(|e| tools::error_text(&e))?
        .dyn_into()
        .map_err(|_| "no response")?;
    let text = response.text().map_err(|e| tools::error_text(&e))?;
    JsFuture::from(text)
        .await
        .map_err(|e| tools::error_text(&e))?
        .as_string()
        .ok_or_else(|| format!("HTTP {} without a body", response.status()))
}
