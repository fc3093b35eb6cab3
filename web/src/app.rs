//! The page's state and its wiring to the browser: events, timers, and the path every tool call
//! takes (host → gate → envelope). No rule lives here: the wallet's lifecycle is
//! `capability_gate::wallet`, whose effects [`App::step`] carries out.
//!
//! The page's features that read and change the app (`asker`, `credentials`, `person`) are
//! above it: it reaches them only through [`Features`], which `page` implements and hands to
//! [`start`]. What it draws (`render`, `editor`) and the browser's services are below it.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

use capability_gate::envelope::{Code, Refusal, envelope};
use capability_gate::wallet::{Editor, Effect, Snapshot, Step, Wallet};
use capability_gate::{Gate, Handler, ProposalId, Registry, RequestId};
use gloo_timers::callback::{Interval, Timeout};
use js_sys::{Array, Object, Promise, Reflect};
use rand_core::UnwrapErr;
use serde_json::Value;
use wallet_core::store::StoredVault;
use wallet_core::{DisclosureLedger, Origin, Vault};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::dom::{self, attr};
use crate::host::{Detection, WebMcpHost, detect};
use crate::signer::Enrolment;
use crate::state::AskerCheck;
use crate::storage::StorageError;
use crate::{editor, render, signer, storage};
use tacit_webmcp::{query_param, to_js};

pub use crate::clock::now;
pub use crate::render::View;
pub use crate::state::{Call, SessionReceipt};

/// What the app asks of the features above it, at its moments (`page` implements it).
pub trait Features {
    /// After every change, before the redraw is queued (`asker`: start the checks of newly
    /// attested requests).
    fn changed(&self, app: &mut App);
    /// A redraw, after the sections of the [`View`]: what draws from more than the view
    /// (`person`: the device setting).
    fn draw(&self, app: &App);
    /// [`Effect::LoadCredentials`]: hand the vault's stored credentials to the gate.
    fn load_credentials(&self, app: &mut App);
    /// [`Effect::DeleteCredentials`]: delete the credentials and their keys (the page says so
    /// if they could not all be deleted).
    fn delete_credentials(&self);
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
    pub asker_checks: BTreeMap<RequestId, AskerCheck>,
    pub signer_notes: BTreeMap<ProposalId, String>,
    pub session_receipts: Vec<SessionReceipt>,
    pub latency_ms: u32,
    /// `?short_grants=1` adds a 2-second grant choice, for demonstrations and tests of expiry.
    pub short_grants: bool,
    /// The wallet's lifecycle (locked/unlocked, editor, what was loaded and sealed).
    pub wallet: Wallet,
    /// Closes the editor after a while without input in it.
    editor_idle: Option<Timeout>,
    /// `?editor_idle_ms=N` may only shorten the two minutes (`capability_gate::wallet::editor_idle_ms`).
    editor_idle_ms: u32,
    deadline: Option<Timeout>,
    _countdown: Option<Interval>,
    /// What the person has been told of, for announcing changes they did not make.
    pub told: crate::told::Told,
    features: &'static dyn Features,
}

thread_local! {
    static APP: RefCell<Option<App>> = const { RefCell::new(None) };
}

/// Runs `f` on the app unless it is already borrowed (a re-entrant browser event); such events
/// re-schedule themselves instead of being lost.
pub fn with_app<R>(f: impl FnOnce(&mut App) -> R) -> Option<R> {
    APP.with(|cell| cell.try_borrow_mut().ok()?.as_mut().map(f))
}

thread_local! {
    /// A redraw is queued (one per task at most).
    static REDRAW_QUEUED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tool calls being answered: the redraw waits until their promises have resolved.
    static ANSWERING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// Redraws done so far (`#app[data-redraws]`, for tests).
    static REDRAWS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// The delay of the next redraw queued ([`AFTER_EXPIRY_MS`] after an expiry, else none).
    static REDRAW_DELAY: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// Run once after the next redraw (focus moves that need the drawn page).
    static AFTER_REDRAW: RefCell<Vec<Box<dyn FnOnce()>>> = RefCell::new(Vec::new());
}

/// A call to a persistent tool that the boot module registered and forwarded here; an
/// `unknown_tool` refusal if no such tool is registered now.
pub fn call_adopted(name: &str, input: JsValue) -> Promise {
    let call = with_app(|app| app.registry.host().call_adopted(name, input));
    call.flatten().unwrap_or_else(|| {
        let refusal = envelope(&Err(Refusal::new(
            Code::UnknownTool,
            "No such tool is registered now.",
        )));
        Promise::resolve(&to_js(&refusal))
    })
}

/// Runs an action and redraws.
pub fn run(f: impl FnOnce(&mut App)) {
    with_app(|app| {
        f(app);
        app.after_change();
    });
}

/// Queues one redraw of the page for a later task. Everything a change must do at once (the
/// gate, the registry, the answer to a tool call) is done by then; drawing waits, so that an
/// agent's answer and a tool's withdrawal are not held up by the page's DOM work, and several
/// changes in one task make one redraw.
pub fn redraw_later() {
    let delay = REDRAW_DELAY.with(|d| d.replace(0));
    if REDRAW_QUEUED.with(|q| q.replace(true)) {
        return;
    }
    if ANSWERING.with(std::cell::Cell::get) > 0 {
        // [`Answering`]'s drop queues it once the answer has gone out.
        return;
    }
    queue_redraw_task(delay);
}

/// How long the redraw after an expiry waits: a frame. Chromium tells the agent of a withdrawal
/// from a later task, and a redraw queued with no delay sometimes ran first and held the news up
/// (`browser-bench` item 3: expiry p90 3.1 ms with no delay, 1.1 ms with this one). After a
/// person's act no delay is needed: Chromium draws a frame before a timer queued from an input
/// event runs, and the news goes out before it.
const AFTER_EXPIRY_MS: u32 = 16;

/// How long a redraw queued by a tool call waits after the call's promise resolved: Chromium's
/// `executeTool` settles a few tasks after the tool's own promise (0.5–3 ms here), and a burst
/// of calls makes one redraw. A frame, so the person does not see the difference.
const AFTER_ANSWER_MS: u32 = 16;

fn queue_redraw_task(delay_ms: u32) {
    Timeout::new(delay_ms, || {
        if ANSWERING.with(std::cell::Cell::get) > 0 {
            return; // [`Answering`]'s drop queues it again
        }
        let drew = with_app(|app| {
            REDRAW_QUEUED.with(|q| q.set(false));
            app.redraw();
        });
        if drew.is_none() {
            if APP.with(|cell| cell.try_borrow().is_err()) {
                // The app is busy in this very task (not expected from a timer): try again.
                queue_redraw_task(0);
            }
            return;
        }
        for f in AFTER_REDRAW.with(|a| std::mem::take(&mut *a.borrow_mut())) {
            f();
        }
    })
    .forget();
}

/// Runs `f` once the next redraw has drawn the page (to move focus to something it draws).
pub fn after_redraw(f: impl FnOnce() + 'static) {
    AFTER_REDRAW.with(|a| a.borrow_mut().push(Box::new(f)));
    redraw_later();
}

/// Held while a tool call is being answered: a redraw queued meanwhile runs only after the
/// call's promise has resolved (in a later task).
struct Answering;

impl Answering {
    fn new() -> Self {
        ANSWERING.with(|a| a.set(a.get() + 1));
        Answering
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        let left = ANSWERING.with(|a| {
            a.set(a.get().saturating_sub(1));
            a.get()
        });
        if left == 0 && REDRAW_QUEUED.with(std::cell::Cell::get) {
            queue_redraw_task(AFTER_ANSWER_MS);
        }
    }
}

/// The browser's CSPRNG.
pub type Rng = UnwrapErr<getrandom::SysRng>;

pub fn rng() -> Rng {
    UnwrapErr(getrandom::SysRng)
}

/// The session's secret: 32 bytes from the browser's CSPRNG, never stored. It derives each
/// audience's session id and every request, grant and proposal id. None without randomness
/// (the wallet then does not start: no clock fallback).
fn session_secret() -> Option<[u8; 32]> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).ok()?;
    Some(secret)
}

impl App {
    /// The state drawing reads, borrowed, at the time now.
    pub fn view(&self) -> View<'_> {
        View {
            gate: &self.gate,
            registry: &self.registry,
            detection: &self.detection,
            stored: self.stored.as_ref(),
            wallet: &self.wallet,
            live_tools: &self.live_tools,
            calls: &self.calls,
            enrolment: &self.enrolment,
            enrolling: self.enrolling,
            fetching_credentials: self.fetching_credentials,
            signer_notes: &self.signer_notes,
            asker_checks: &self.asker_checks,
            session_receipts: &self.session_receipts,
            short_grants: self.short_grants,
            now: now(),
        }
    }

    /// After any change: keep the wallet core in step with the gate (a lock from anywhere goes
    /// through its one lock path), seal a changed memory, bring the registry in step with the
    /// gate, re-arm the expiry timer, redraw.
    pub fn after_change(&mut self) {
        self.step(|wallet, gate, vault, _, _| wallet.reconcile(gate, vault));
        if self.wallet.memory_dirty(&self.gate) {
            storage::locked_then(|| {
                with_app(|app| {
                    app.step(|wallet, gate, vault, snap, rng| {
                        wallet.seal_memory(gate, vault, snap, rng)
                    });
                    app.after_change();
                });
            });
        }
        let features = self.features;
        features.changed(self);
        self.arm_deadline();
        redraw_later();
        // Last: a withdrawal reaches the agent once this task ends.
        for (name, error) in self.registry.sync(&self.gate) {
            self.detection = Detection::RegistrationRefused(format!("{name}: {error}"));
        }
        // In a vault, the paired bridges are told the claim tools that exist now.
        crate::link::sync_tools(&self.registry.host().definitions(), &self.gate);
    }

    /// Draws what changed, then tells the person in words of changes they did not make.
    fn redraw(&mut self) {
        render::all(&self.view());
        self.features.draw(self);
        editor::render(&self.view());
        self.told.update(&self.gate);
        let count = REDRAWS.with(|r| {
            r.set(r.get() + 1);
            r.get()
        });
        if let Some(app) = dom::by_id("app") {
            attr(&app, "data-redraws", &count.to_string());
        }
    }

    /// Runs one transition of the wallet core on what storage holds now and carries out its
    /// effects. Returns whether the action's passphrase fields are to be emptied. Transitions
    /// that write run inside [`storage::locked`].
    pub fn step(
        &mut self,
        f: impl FnOnce(Wallet, &mut Gate, &mut Option<Vault>, &Snapshot, &mut Rng) -> Step,
    ) -> bool {
        let snap = storage::snapshot();
        let was_unlocked = self.wallet.is_unlocked();
        let wallet = std::mem::take(&mut self.wallet);
        let (wallet, effects) = f(wallet, &mut self.gate, &mut self.vault, &snap, &mut rng());
        self.wallet = wallet;
        // A lock says what changed and why where a sighted person sees it too, not only below
        // the fold (`profile-msg`) and to a screen reader.
        let lock_words = (was_unlocked && !self.wallet.is_unlocked())
            .then(|| {
                effects.iter().find_map(|e| match e {
                    Effect::Message { text, .. } => Some(text.clone()),
                    _ => None,
                })
            })
            .flatten();
        let cleared = self.carry_out(effects);
        if let Some(text) = lock_words {
            dom::announce(&text);
            dom::notice(&text);
        }
        self.stored = self.wallet.loaded().cloned();
        cleared
    }

    /// Carries out effects in order; a failed write stops them and locks.
    fn carry_out(&mut self, effects: Vec<Effect>) -> bool {
        let mut clear_passphrase = false;
        for effect in effects {
            if matches!(effect, Effect::ClearPassphrase) {
                clear_passphrase = true;
            }
            if let Err(e) = self.apply(effect) {
                let wallet = std::mem::take(&mut self.wallet);
                let (wallet, more) =
                    wallet.write_failed(&mut self.gate, &mut self.vault, &e.to_string());
                self.wallet = wallet;
                for effect in more {
                    let _ = self.apply(effect);
                }
                break;
            }
        }
        clear_passphrase
    }

    fn apply(&mut self, effect: Effect) -> Result<(), StorageError> {
        match effect {
            Effect::Store(record) => storage::save(&record)?,
            Effect::DeleteRecord => storage::delete_record()?,
            Effect::RaiseFloor { key, generation } => storage::raise_floor(&key, generation)?,
            Effect::ForgetFloor { key } => storage::forget_floor(&key)?,
            Effect::ForgetLegacyLedger => storage::forget_legacy_ledger(),
            Effect::LoadCredentials => {
                let features = self.features;
                features.load_credentials(self);
            }
            Effect::DeleteCredentials => self.features.delete_credentials(),
            Effect::DeleteSignerKey => {
                self.enrolment = Enrolment::NotEnrolled;
                wasm_bindgen_futures::spawn_local(async {
                    if let Err(e) = crate::keystore::delete().await {
                        dom::set_msg(
                            "profile-msg",
                            &format!("This browser's signer key could not be deleted ({e})."),
                            false,
                        );
                    }
                });
            }
            Effect::FillEditor(input) => {
                editor::fill(&input);
                self.arm_editor_idle();
            }
            Effect::ClearEditor => {
                editor::clear();
                self.editor_idle = None;
            }
            Effect::ClearPassphrase => {}
            Effect::Message { text, ok } => dom::set_msg("profile-msg", &text, ok),
            Effect::SyncTools => {
                for (name, error) in self.registry.sync(&self.gate) {
                    self.detection = Detection::RegistrationRefused(format!("{name}: {error}"));
                }
            }
        }
        Ok(())
    }

    /// (Re-)starts the editor's idle timer: without input in it for `editor_idle_ms`, it
    /// closes and empties itself.
    pub fn arm_editor_idle(&mut self) {
        if self.wallet.editor() != Editor::Open {
            self.editor_idle = None;
            return;
        }
        self.editor_idle = Some(Timeout::new(self.editor_idle_ms, || {
            with_app(|app| {
                app.step(|wallet, _, _, _, _| {
                    wallet.close_editor(
                        "The editor closed itself after a while without input; your facts were cleared from the page.",
                    )
                });
                app.after_change();
            });
        }));
    }

    fn arm_deadline(&mut self) {
        self.deadline = self.gate.next_deadline().map(|at| {
            let wait = (at.millis() - now().millis()).clamp(0, i64::from(i32::MAX));
            Timeout::new(wait as u32, || {
                with_app(|app| {
                    app.gate.tick(now());
                    REDRAW_DELAY.with(|d| d.set(AFTER_EXPIRY_MS));
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

/// The agent's input as JSON, read through the gate's reader: anything that does not survive
/// `JSON.stringify`, or is nested deeper than `capability_gate::input::MAX_DEPTH`, is `Err` with
/// the sentence the gate refuses it with (`invalid_input`), before any tool looks at it (and it
/// never reaches serde_json's recursion).
fn input_json(input: &JsValue) -> Result<Value, String> {
    tacit_webmcp::input_json_with(input, |text| {
        capability_gate::input::from_text(text).map_err(|refusal| refusal.message)
    })
}

/// Every tool call, whichever door it came through.
pub fn execute(tool: String, handler: Handler, input: JsValue) -> Promise {
    let input = input_json(&input);
    wasm_bindgen_futures::future_to_promise(async move {
        let started = with_app(|app| {
            let input = input.as_ref().map_err(String::as_str);
            (app.gate.begin_read(&handler, input, now()), app.latency_ms)
        });
        let Some((pending, latency)) = started else {
            let busy = envelope(&Err(Refusal::new(
                Code::Busy,
                "The wallet is busy; try again in a moment.",
            )));
            return Ok(to_js(&busy));
        };
        if latency > 0 && matches!(handler, Handler::Claim { .. }) {
            // Slow evaluation on request (`?latency=ms`): the gate re-checks the grant after it.
            gloo_timers::future::TimeoutFuture::new(latency).await;
        }
        // Under the cross-tab lock, the wallet's one answering transition (merge what other
        // tabs revealed, answer, seal); its effects carried out, the answer is released.
        let answering = Answering::new();
        let out = storage::locked(move || {
            with_app(|app| {
                let mut sealing = None;
                app.step(|wallet, gate, vault, snap, rng| {
                    let (wallet, effects, answer) =
                        wallet.answer(gate, vault, snap, pending, now(), rng);
                    sealing = Some(answer);
                    (wallet, effects)
                });
                let out = match sealing {
                    Some(answer) => app.wallet.release(&app.gate, answer),
                    None => Value::Null,
                };
                app.record_call(&tool, &out);
                app.after_change();
                out
            })
        })
        .await
        .flatten()
        .unwrap_or(Value::Null);
        let out = to_js(&out);
        // The redraw this call queued runs in a later task, after this promise has resolved.
        drop(answering);
        Ok(out)
    })
}

/// Reads `getTools()` and redraws "what the agent sees".
async fn refresh_registry() {
    let Some(promise) = with_app(|app| app.registry.host().get_tools()).flatten() else {
        with_app(|app| render::agent(&app.view()));
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
        render::agent(&app.view());
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
                    let out = envelope(&Err(Refusal::new(
                        Code::UnknownTool,
                        "No tool with this name exists now. Call window.tacit.tools() to list them.",
                    )));
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
pub fn start(features: &'static dyn Features, adopted: BTreeMap<String, web_sys::AbortController>) {
    let started = APP.with(|cell| cell.try_borrow().map_or(true, |app| app.is_some()));
    if started {
        // Started already (the loader calls once; a page script calling again changes nothing).
        return;
    }
    let executor: crate::host::Executor = Rc::new(execute);
    let on_refused: crate::host::OnRefused = Rc::new(|error: String| {
        with_app(|app| {
            app.detection = Detection::RegistrationRefused(error);
        });
        redraw_later();
    });
    let vault = crate::link::is_vault();
    let host = WebMcpHost::new(executor, on_refused, adopted, vault);
    let context = host.context().cloned();
    let Some(secret) = session_secret() else {
        dom::set_text(
            "boot-note",
            "This browser offers no secure random numbers, so the wallet cannot start.",
        );
        return;
    };
    let stored = storage::load_record();
    let app = App {
        gate: Gate::with_secret(secret, DisclosureLedger::default()),
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
        wallet: Wallet::new(stored.clone().ok().flatten()),
        editor_idle: None,
        editor_idle_ms: capability_gate::wallet::editor_idle_ms(
            query_param("editor_idle_ms").as_deref(),
        ),
        short_grants: query_param("short_grants").as_deref() == Some("1"),
        latency_ms: query_param("latency")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
            .min(10_000),
        deadline: None,
        _countdown: Some(Interval::new(1_000, || {
            // The countdown's text only: no row, button or section is redrawn by the clock.
            with_app(|app| render::grants(&app.view()));
        })),
        told: crate::told::Told::default(),
        features,
    };
    APP.with(|cell| *cell.borrow_mut() = Some(app));

    if let Some(ctx) = context {
        listen(&ctx, "toolchange", |_| {
            wasm_bindgen_futures::spawn_local(refresh_registry())
        });
    }
    if let Some(editor) = dom::by_id("editor") {
        // Input in the open editor keeps it open; none for a while closes it.
        for event in ["input", "keydown"] {
            listen(&editor, event, |_| {
                with_app(|app| app.arm_editor_idle());
            });
        }
    }
    if let Some(window) = web_sys::window() {
        listen(&window, "storage", |event| {
            let key = event
                .dyn_ref::<web_sys::StorageEvent>()
                .and_then(|e| e.key());
            if key.as_deref() == Some(storage::CREDENTIALS_KEY) {
                // Another tab added or used credentials: its saved copy is the current one.
                // (Only while unlocked: a locked wallet holds no credentials.)
                with_app(|app| {
                    if app.gate.is_unlocked() {
                        let features = app.features;
                        features.load_credentials(app);
                    }
                    app.after_change();
                });
            }
            if key.as_deref() == Some(storage::STORAGE_KEY) {
                // Another tab wrote the record: merge what it revealed before answering here
                // (the core locks this tab if the record is gone, another vault's, or its
                // memory cannot be read).
                storage::locked_then(|| {
                    with_app(|app| {
                        app.step(|wallet, gate, vault, snap, _| {
                            wallet.merge_stored(gate, vault, snap)
                        });
                        app.after_change();
                    });
                });
            }
        });
    }
    // `window.tacit` only where no WebMCP registry (native or the polyfill) carries the tools,
    // and never in a vault, whose tools are its paired bridges' (`link`).
    if vault {
        crate::link::start(call_adopted);
    } else if !with_app(|app| app.registry.host().uses_webmcp()).unwrap_or(false) {
        install_window_api();
    }
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
    if let Some(main) = dom::by_id("app") {
        // Leaves the boot module's view (`web/boot`): every section is the app's from here on.
        attr(&main, "data-stage", "app");
    }
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
