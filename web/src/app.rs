//! The page's state and its wiring to the browser: events, timers, and the path every tool call
//! takes (host → gate → envelope). No rule lives here.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

use capability_gate::{Gate, Handler, Registry};
use gloo_timers::callback::{Interval, Timeout};
use js_sys::{Array, Object, Promise, Reflect};
use serde_json::Value;
use wallet_core::store::{MemoryOrigin, StoredVault};
use wallet_core::{DisclosureLedger, Origin, SessionId, Timestamp, Vault};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::asker::AskerCheck;
use crate::dom;
use crate::host::{Detection, WebMcpHost, detect};
use crate::signer::Enrolment;
use crate::{actions, asker, credentials, editor, render, signer, storage};

/// One call an agent made, as the page shows it.
#[derive(Debug, Clone)]
pub struct Call {
    pub at: Timestamp,
    pub tool: String,
    pub outcome: String,
}

/// A receipt made when the person ended a session.
#[derive(Debug, Clone)]
pub struct SessionReceipt {
    pub payload: wallet_core::ReceiptPayload,
    pub signed: Option<wallet_core::SignedReceipt>,
    pub note: String,
}

/// Everything the page holds. The profile itself lives only inside the gate and the vault.
pub struct App {
    pub gate: Gate,
    pub registry: Registry<WebMcpHost>,
    pub vault: Option<Vault>,
    pub stored: Option<StoredVault>,
    pub detection: Detection,
    pub live_tools: Vec<Value>,
    pub calls: VecDeque<Call>,
    /// The signer this browser is enrolled with (the only one it sends anything to).
    pub enrolment: Enrolment,
    /// An enrolment is under way.
    pub enrolling: bool,
    /// A credential is being added (Settings → Credentials).
    pub fetching_credentials: bool,
    /// Issuers a new batch is being fetched from with the refresh token.
    pub refilling: BTreeSet<Origin>,
    /// How the check of each attested request's asker went.
    pub asker_checks: BTreeMap<String, AskerCheck>,
    pub signer_notes: BTreeMap<String, String>,
    pub session_receipts: Vec<SessionReceipt>,
    pub latency_ms: u32,
    /// `?short_grants=1` adds a 2-second grant choice, for demonstrations and tests of expiry.
    pub short_grants: bool,
    /// The ledger as last sealed to storage, to re-seal only on change.
    pub saved_ledger: Option<DisclosureLedger>,
    deadline: Option<Timeout>,
    _countdown: Option<Interval>,
}

thread_local! {
    static APP: RefCell<Option<App>> = const { RefCell::new(None) };
}

/// Runs `f` on the app unless it is already borrowed (a re-entrant browser event); such events
/// re-schedule themselves instead of being lost.
pub fn with_app<R>(f: impl FnOnce(&mut App) -> R) -> Option<R> {
    APP.with(|cell| cell.try_borrow_mut().ok()?.as_mut().map(f))
}

pub fn now() -> Timestamp {
    Timestamp::from_millis(js_sys::Date::now() as i64)
}

fn make_session_id() -> SessionId {
    let mut bytes = [0u8; 9];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness: fall back to the clock, which still tells sessions apart.
        bytes[..8].copy_from_slice(&js_sys::Date::now().to_bits().to_be_bytes());
    }
    SessionId::derive_from_bytes(&bytes)
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

impl App {
    /// After any change: bring the registry in step with the gate, re-arm the expiry timer,
    /// redraw.
    pub fn after_change(&mut self) {
        self.persist_memory();
        asker::start_new_checks(self);
        for (name, error) in self.registry.sync(&self.gate) {
            self.detection = Detection::RegistrationRefused(format!("{name}: {error}"));
        }
        self.arm_deadline();
        render::all(self);
    }

    /// Seals the disclosure memory into the stored record whenever it changed, read-merge-write:
    /// what the stored record knows (another tab's answers) is merged in first, and the
    /// record's envelope is kept as stored (another tab's profile edit is not overwritten).
    fn persist_memory(&mut self) {
        if !self.gate.is_unlocked() || self.saved_ledger.as_ref() == Some(self.gate.ledger()) {
            return;
        }
        if let Err(e) = self.write_memory() {
            dom::set_msg(
                "profile-msg",
                &format!("The disclosure memory could not be saved ({e})."),
                false,
            );
        }
    }

    fn write_memory(&mut self) -> Result<(), String> {
        let Some(vault) = &self.vault else {
            return Ok(());
        };
        let Some(current) = storage::load()? else {
            // Deleted in another tab: nothing to write into.
            return Ok(());
        };
        let key = current.vault_key().map_err(|e| e.to_string())?;
        if current.vault_id().ok().as_ref() != Some(vault.envelope().vault_id()) {
            // Replaced by another profile in another tab.
            return Ok(());
        }
        let floor = storage::load_floors()?.get(&key);
        let (theirs, _) = current
            .open_memory(vault, floor, storage::load_legacy_ledger().as_deref())
            .map_err(|e| e.to_string())?;
        self.gate.merge_ledger(&theirs);
        let generation = current.generation.saturating_add(1);
        let envelope = current.envelope_bytes().map_err(|e| e.to_string())?;
        let mut rng = rand_core::UnwrapErr(getrandom::SysRng);
        let record = StoredVault::sealed_with_envelope(
            generation,
            &envelope,
            vault,
            self.gate.ledger(),
            &mut rng,
        )
        .map_err(|e| e.to_string())?;
        storage::save(&record)?;
        storage::raise_floor(&key, generation)?;
        storage::forget_legacy_ledger();
        self.saved_ledger = Some(self.gate.ledger().clone());
        Ok(())
    }

    /// Merges the stored record's memory in before answering or after another tab wrote.
    /// Fails closed: a record of this vault whose memory cannot be read (removed, damaged,
    /// rolled back) locks the wallet.
    pub fn merge_stored_memory(&mut self) {
        if !self.gate.is_unlocked() {
            return;
        }
        let Some(vault) = &self.vault else { return };
        let Ok(Some(current)) = storage::load() else {
            return;
        };
        if current.vault_id().ok().as_ref() != Some(vault.envelope().vault_id()) {
            return;
        }
        let floor = current
            .vault_key()
            .ok()
            .and_then(|key| storage::load_floors().map(|f| f.get(&key)).ok());
        let opened = match floor {
            Some(floor) => current
                .open_memory(vault, floor, storage::load_legacy_ledger().as_deref())
                .map_err(|e| e.to_string()),
            None => Err("the memory floors could not be read".to_owned()),
        };
        match opened {
            Ok((theirs, _)) => {
                self.gate.merge_ledger(&theirs);
                if self.gate.ledger() == &theirs {
                    // Nothing to write back: storage already knows all this tab knows.
                    self.saved_ledger = Some(theirs);
                }
            }
            Err(e) => {
                self.gate.lock();
                self.vault = None;
                dom::set_msg(
                    "profile-msg",
                    &format!("The wallet locked itself: {e}."),
                    false,
                );
            }
        }
    }

    /// After unlock: take the memory stored in the record (fail closed), then write it back in
    /// the current format at once.
    pub fn restore_memory(&mut self, record: &StoredVault) -> Result<(), String> {
        let Some(vault) = &self.vault else {
            return Ok(());
        };
        let key = record.vault_key().map_err(|e| e.to_string())?;
        let floor = storage::load_floors()?.get(&key);
        let (ledger, origin) = record
            .open_memory(vault, floor, storage::load_legacy_ledger().as_deref())
            .map_err(|e| e.to_string())?;
        if let MemoryOrigin::Sealed(generation) = origin {
            storage::raise_floor(&key, generation)?;
        }
        self.gate.restore_ledger(ledger);
        // Written back on the next change check (format 2, floor raised).
        self.saved_ledger = None;
        Ok(())
    }

    fn arm_deadline(&mut self) {
        self.deadline = self.gate.next_deadline().map(|at| {
            let wait = (at.millis() - now().millis()).clamp(0, i64::from(i32::MAX));
            Timeout::new(wait as u32, || {
                with_app(|app| {
                    app.gate.tick(now());
                    app.after_change();
                });
            })
        });
    }

    pub fn record_call(&mut self, tool: &str, out: &Value) {
        let outcome = if out["ok"] == true {
            match out["result"]["satisfied"].as_bool() {
                Some(true) => "satisfied".to_owned(),
                Some(false) => "not satisfied".to_owned(),
                None => out["result"]["status"].as_str().unwrap_or("ok").to_owned(),
            }
        } else {
            out["error"]["code"].as_str().unwrap_or("error").to_owned()
        };
        self.calls.push_front(Call {
            at: now(),
            tool: tool.to_owned(),
            outcome,
        });
        self.calls.truncate(50);
    }
}

/// The agent's input as JSON. Anything that does not survive `JSON.stringify` arrives as a
/// string the gate will refuse as `invalid_input`.
fn input_json(input: &JsValue) -> Value {
    if input.is_undefined() || input.is_null() {
        return Value::Null;
    }
    js_sys::JSON::stringify(input)
        .ok()
        .and_then(|s| s.as_string())
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_else(|| Value::String("unserializable input".into()))
}

fn to_js(value: &Value) -> JsValue {
    js_sys::JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

/// Every tool call, whichever door it came through.
pub fn execute(tool: String, handler: Handler, input: JsValue) -> Promise {
    let input = input_json(&input);
    wasm_bindgen_futures::future_to_promise(async move {
        let started = with_app(|app| (app.gate.begin(&handler, &input, now()), app.latency_ms));
        let Some((pending, latency)) = started else {
            let busy = serde_json::json!({ "ok": false, "error": { "code": "busy",
                "message": "The wallet is busy; try again in a moment." } });
            return Ok(to_js(&busy));
        };
        if latency > 0 && matches!(handler, Handler::Claim { .. }) {
            // Slow evaluation on request (`?latency=ms`): the gate re-checks the grant after it.
            gloo_timers::future::TimeoutFuture::new(latency).await;
        }
        let out = with_app(|app| {
            // Another tab may have answered meanwhile: know what it revealed first.
            app.merge_stored_memory();
            let out = app.gate.finish(pending, now());
            app.record_call(&tool, &out);
            app.after_change();
            out
        })
        .unwrap_or(Value::Null);
        Ok(to_js(&out))
    })
}

/// Reads `getTools()` and redraws "what the agent sees".
async fn refresh_registry() {
    let Some(promise) = with_app(|app| app.registry.host().get_tools()).flatten() else {
        with_app(|app| render::agent(app));
        return;
    };
    let Ok(list) = wasm_bindgen_futures::JsFuture::from(promise).await else {
        return;
    };
    let tools: Vec<Value> = Array::from(&list)
        .iter()
        .map(|t| {
            let field = |name: &str| Reflect::get(&t, &name.into()).unwrap_or(JsValue::NULL);
            let annotations = js_sys::JSON::stringify(&field("annotations"))
                .ok()
                .and_then(|s| s.as_string())
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or(Value::Null);
            serde_json::json!({
                "name": field("name").as_string(),
                "title": field("title").as_string(),
                "annotations": annotations,
            })
        })
        .collect();
    with_app(|app| {
        app.live_tools = tools;
        render::agent(app);
    });
}

fn listen(target: &JsValue, event: &str, handler: impl FnMut(web_sys::Event) + 'static) {
    let closure = Closure::<dyn FnMut(web_sys::Event)>::new(handler);
    if let Some(t) = target.dyn_ref::<web_sys::EventTarget>() {
        let _ = t.add_event_listener_with_callback(event, closure.as_ref().unchecked_ref());
    }
    // Page-lifetime listeners, installed once.
    closure.forget();
}

fn install_window_api() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let api = Object::new();
    let tools = Closure::<dyn Fn() -> JsValue>::new(|| {
        let defs = with_app(|app| app.registry.host().definitions()).unwrap_or_default();
        let list: Vec<Value> = defs.iter().map(|d| d.to_webmcp_json()).collect();
        to_js(&Value::Array(list))
    });
    let call = Closure::<dyn Fn(JsValue, JsValue) -> Promise>::new(
        |name: JsValue, input: JsValue| {
            let name = name.as_string().unwrap_or_default();
            match with_app(|app| app.registry.host().definition(&name)).flatten() {
                Some(def) => execute(name, def.handler, input),
                None => {
                    let out = serde_json::json!({ "ok": false, "error": { "code": "unknown_tool",
                    "message": "No tool with this name exists now. Call window.tacit.tools() to list them." } });
                    Promise::resolve(&to_js(&out))
                }
            }
        },
    );
    let status = Closure::<dyn Fn() -> JsValue>::new(|| {
        with_app(|app| JsValue::from_str(app.detection.code())).unwrap_or(JsValue::NULL)
    });
    let _ = Reflect::set(&api, &"tools".into(), tools.as_ref());
    let _ = Reflect::set(&api, &"call".into(), call.as_ref());
    let _ = Reflect::set(&api, &"status".into(), status.as_ref());
    let _ = Reflect::set(&window, &"tacit".into(), &api);
    tools.forget();
    call.forget();
    status.forget();
}

/// Builds the app, wires events, registers the persistent tools.
pub fn start() {
    let executor: crate::host::Executor = Rc::new(execute);
    let on_refused: crate::host::OnRefused = Rc::new(|error: String| {
        with_app(|app| {
            app.detection = Detection::RegistrationRefused(error);
            render::all(app);
        });
    });
    let host = WebMcpHost::new(executor, on_refused);
    let context = host.context().cloned();
    let stored = storage::load();
    let app = App {
        gate: Gate::new(make_session_id(), DisclosureLedger::default()),
        registry: Registry::new(host),
        vault: None,
        stored: stored.clone().ok().flatten(),
        detection: detect(),
        live_tools: Vec::new(),
        calls: VecDeque::new(),
        enrolment: Enrolment::Loading,
        enrolling: false,
        fetching_credentials: false,
        refilling: BTreeSet::new(),
        asker_checks: BTreeMap::new(),
        signer_notes: BTreeMap::new(),
        session_receipts: Vec::new(),
        saved_ledger: None,
        short_grants: query_param("short_grants").as_deref() == Some("1"),
        latency_ms: query_param("latency")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
            .min(10_000),
        deadline: None,
        _countdown: Some(Interval::new(1_000, || {
            with_app(|app| render::grants(app));
        })),
    };
    APP.with(|cell| *cell.borrow_mut() = Some(app));

    if let Some(ctx) = context {
        listen(&ctx, "toolchange", |_| {
            wasm_bindgen_futures::spawn_local(refresh_registry())
        });
    }
    if let Some(document) = dom::document() {
        listen(&document, "click", actions::on_click);
        if let Some(file) = dom::by_id("import-file") {
            listen(&file, "change", actions::on_import);
        }
    }
    if let Some(window) = web_sys::window() {
        listen(&window, "storage", |event| {
            let key = event
                .dyn_ref::<web_sys::StorageEvent>()
                .and_then(|e| e.key());
            if key.as_deref() == Some(storage::CREDENTIALS_KEY) {
                // Another tab added or used credentials: its saved copy is the current one.
                with_app(|app| {
                    credentials::reload_from_storage(app);
                    app.after_change();
                });
            }
            if key.as_deref() == Some(storage::STORAGE_KEY) {
                with_app(|app| {
                    app.merge_stored_memory();
                    let edited_elsewhere = match (storage::load(), &app.stored) {
                        (Ok(Some(now)), Some(loaded)) => now.envelope != loaded.envelope,
                        (Ok(None), Some(_)) => true,
                        _ => false,
                    };
                    if edited_elsewhere {
                        dom::set_msg(
                            "profile-msg",
                            "Your profile was changed in another tab. Reload this page before saving here.",
                            false,
                        );
                    }
                    app.after_change();
                });
            }
        });
    }
    install_window_api();
    editor::setup_form();
    wasm_bindgen_futures::spawn_local(async {
        let loaded = signer::load().await;
        with_app(|app| {
            app.enrolment = match loaded {
                Ok(enrolment) => enrolment,
                Err(e) => {
                    dom::set_msg(
                        "enrol-msg",
                        &format!("This browser's key store could not be read ({e})."),
                        false,
                    );
                    Enrolment::NotEnrolled
                }
            };
            app.after_change();
        });
    });
    dom::show("boot-note", false);
    dom::show("app", true);
    with_app(|app| {
        if let Err(e) = &stored {
            dom::set_msg(
                "profile-msg",
                &format!("The stored profile could not be read ({e}). It was left untouched."),
                false,
            );
        }
        app.after_change();
    });
    wasm_bindgen_futures::spawn_local(refresh_registry());
}
