//! The browser side of the bridge: WebSocket, `document.modelContext`, the DOM. Every decision
//! is [`tacit_pairing::bridge::Bridge`]'s, the handshake's or, per connection on the paired
//! route, [`tacit_pairing::link::BridgeLink`]'s.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use js_sys::{Function, Promise};
use serde_json::Value;
use tacit_pairing::bridge::{Bridge, Event, Outgoing, ToolSpec};
use tacit_pairing::link::{BridgeLink, FrameStep, PeerStep};
use tacit_pairing::{Confirming, MailboxTag, Offer, Paired, PairingCode, Role, Start};
use tacit_webmcp::Registration;
use tacit_webmcp::socket::Socket;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use tacit_pairing::relay::socket_url;

use crate::{DEFAULT_RELAY, PAIRING_KEY, persistent_specs};

/// How long to wait before connecting again after the relay closed.
const RECONNECT_MS: i32 = 1500;

enum Phase {
    /// Shown an offer; the handshake's state as it goes.
    Offering {
        offer: Offer,
        start: Option<Box<Start>>,
        confirming: Option<Box<Confirming>>,
    },
    /// Paired: the link's framing, a session once the nonces are exchanged.
    Linked { link: Box<BridgeLink> },
}

struct State {
    relay: String,
    phase: Phase,
    core: Bridge,
    socket: Option<Socket>,
    ctx: Option<JsValue>,
    registrations: BTreeMap<String, Registration>,
    waiting: BTreeMap<u64, Function>,
    timer: Option<i32>,
    /// Bumped on every new socket: handlers of an older one do nothing.
    generation: u64,
}

type Shared = Rc<RefCell<State>>;

fn now() -> i64 {
    js_sys::Date::now() as i64
}

fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    if let Some(crypto) = web_sys::window().and_then(|w| w.crypto().ok()) {
        let _ = crypto.get_random_values_with_u8_array(&mut bytes);
    }
    bytes
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn element(id: &str) -> Option<web_sys::Element> {
    web_sys::window()?.document()?.get_element_by_id(id)
}

fn set_text(id: &str, text: &str) {
    if let Some(e) = element(id) {
        e.set_text_content(Some(text));
    }
}

fn show(id: &str, shown: bool) {
    if let Some(e) = element(id) {
        let _ = if shown {
            e.remove_attribute("hidden")
        } else {
            e.set_attribute("hidden", "")
        };
    }
}

fn set_state(state: &str) {
    if let Some(body) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.body())
    {
        let _ = body.set_attribute("data-state", state);
    }
}

#[wasm_bindgen(start)]
pub fn start() {
    let relay = tacit_webmcp::query_param("relay").unwrap_or_else(|| DEFAULT_RELAY.to_owned());
    let stored = storage()
        .and_then(|s| s.get_item(PAIRING_KEY).ok().flatten())
        .and_then(|text| hex::decode(text).ok())
        .and_then(|bytes| Paired::from_bytes(&bytes).ok())
        .filter(|p| p.role() == Role::Bridge);
    let phase = match stored {
        Some(paired) => Phase::Linked {
            link: Box::new(BridgeLink::new(paired)),
        },
        None => new_offer(&relay),
    };
    let shared: Shared = Rc::new(RefCell::new(State {
        relay,
        phase,
        core: Bridge::new(persistent_specs()),
        socket: None,
        ctx: tacit_webmcp::model_context(),
        registrations: BTreeMap::new(),
        waiting: BTreeMap::new(),
        timer: None,
        generation: 0,
    }));
    let persistent: Vec<ToolSpec> = shared.borrow().core.tools().into_iter().cloned().collect();
    register_all(&shared, persistent);
    if let Some(button) = element("unpair") {
        let s = shared.clone();
        let click = Closure::<dyn FnMut()>::new(move || unpair(&s));
        let _ = button.add_event_listener_with_callback("click", click.as_ref().unchecked_ref());
        click.forget();
    }
    if element("boot-note").is_some() {
        set_text("boot-note", "");
    }
    connect(&shared);
}

fn new_offer(relay: &str) -> Phase {
    Phase::Offering {
        offer: Offer {
            relay: relay.to_owned(),
            mailbox: MailboxTag::from_random(random()),
            code: PairingCode::from_random(random()),
        },
        start: None,
        confirming: None,
    }
}

fn unpair(shared: &Shared) {
    if let Some(s) = storage() {
        let _ = s.remove_item(PAIRING_KEY);
    }
    let events = {
        let mut state = shared.borrow_mut();
        state.phase = new_offer(&state.relay);
        state.core.disconnected()
    };
    close_socket(shared);
    apply(shared, events);
    connect(shared);
}

fn close_socket(shared: &Shared) {
    let socket = {
        let mut state = shared.borrow_mut();
        state.generation += 1;
        state.socket.take()
    };
    // Dropped outside the borrow: its handlers are detached and it closes.
    drop(socket);
}

/// Opens the socket the phase needs and draws the page.
fn connect(shared: &Shared) {
    let (url, generation) = {
        let mut state = shared.borrow_mut();
        state.generation += 1;
        let route = match &state.phase {
            Phase::Offering { offer, .. } => offer.mailbox.id().hex(),
            Phase::Linked { link } => link.paired().route(),
        };
        (
            socket_url(&state.relay, &route, Role::Bridge),
            state.generation,
        )
    };
    draw(shared);
    let (on_open, on_text, on_binary, on_close) = (
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
    );
    let socket = Socket::open(
        &url,
        move || opened(&on_open, generation),
        move |text| peer_news(&on_text, generation, &text),
        move |bytes| received(&on_binary, generation, bytes),
        move || closed(&on_close, generation),
    );
    let Ok(socket) = socket else {
        set_text(
            "boot-note",
            "The relay's address is not one this page can use.",
        );
        return;
    };
    shared.borrow_mut().socket = Some(socket);
}

fn send(state: &State, bytes: &[u8]) {
    if let Some(socket) = &state.socket {
        socket.send(bytes);
    }
}

fn opened(shared: &Shared, generation: u64) {
    let mut state = shared.borrow_mut();
    if state.generation != generation {
        return;
    }
    let state = &mut *state;
    match &mut state.phase {
        Phase::Offering {
            offer,
            start,
            confirming,
        } => {
            let (begun, message) =
                Start::new(Role::Bridge, &offer.code, &offer.mailbox.id(), random());
            *start = Some(Box::new(begun));
            *confirming = None;
            if let Some(socket) = &state.socket {
                socket.send(&message);
            }
        }
        Phase::Linked { link } => {
            let hello = link.on_open();
            if let Some(socket) = &state.socket {
                socket.send(&hello);
            }
        }
    }
}

fn received(shared: &Shared, generation: u64, bytes: Vec<u8>) {
    if shared.borrow().generation != generation {
        return;
    }
    let mut paired_now = None;
    let mut events = Vec::new();
    let mut reply = None;
    let mut reply_now: Option<[u8; 16]> = None;
    {
        let mut guard = shared.borrow_mut();
        let state = &mut *guard;
        match &mut state.phase {
            Phase::Offering {
                start, confirming, ..
            } => {
                if let Some(begun) = start.take() {
                    // The vault's SPAKE2 message: our confirmation tag goes back.
                    match begun.finish(&bytes) {
                        Ok(c) => {
                            reply = Some(c.tag().to_vec());
                            *confirming = Some(Box::new(c));
                        }
                        Err(e) => set_text("boot-note", &e.to_string()),
                    }
                } else if let Some(c) = confirming.take() {
                    // The vault's tag: it checked ours, now we check its.
                    match c.confirm(&bytes) {
                        Ok(paired) => paired_now = Some(paired),
                        Err(e) => set_text("boot-note", &e.to_string()),
                    }
                }
            }
            Phase::Linked { link } => match link.on_frame(&bytes, random()) {
                // The vault's nonce: answer with ours; the session is the two.
                FrameStep::Nonce { reply } => reply_now = Some(reply),
                FrameStep::Opened { message, confirmed } => {
                    // The vault's first frame in this session: it holds the same one.
                    if confirmed {
                        state.core.connected();
                    }
                    if let Ok(got) = state.core.receive(&message, now()) {
                        events = got;
                    }
                }
                FrameStep::Refused(_) | FrameStep::Ignored => {}
            },
        }
    }
    if let Some(reply) = reply {
        send(&shared.borrow(), &reply);
    }
    if let Some(nonce) = reply_now {
        send(&shared.borrow(), &nonce);
    }
    if let Some(paired) = paired_now {
        if let Some(s) = storage() {
            let _ = s.set_item(PAIRING_KEY, &hex::encode(paired.to_bytes().as_slice()));
        }
        shared.borrow_mut().phase = Phase::Linked {
            link: Box::new(BridgeLink::new(paired)),
        };
        close_socket(shared);
        connect(shared);
        return;
    }
    apply(shared, events);
    draw(shared);
}

/// The relay's news of the vault's side: gone (every claim tool withdrawn, calls unreachable) or
/// back (a `hello`, for a fresh session).
fn peer_news(shared: &Shared, generation: u64, text: &str) {
    let events = {
        let mut guard = shared.borrow_mut();
        let state = &mut *guard;
        if state.generation != generation {
            return;
        }
        let Phase::Linked { link } = &mut state.phase else {
            return;
        };
        match link.on_peer_text(text) {
            PeerStep::Left => state.core.disconnected(),
            PeerStep::Joined { hello } => {
                if let (Some(hello), Some(socket)) = (hello, &state.socket) {
                    socket.send(&hello);
                }
                Vec::new()
            }
            PeerStep::Refused { .. } | PeerStep::Ignored => Vec::new(),
        }
    };
    apply(shared, events);
    draw(shared);
}

fn closed(shared: &Shared, generation: u64) {
    let (events, socket) = {
        let mut state = shared.borrow_mut();
        if state.generation != generation {
            return;
        }
        let socket = state.socket.take();
        if let Phase::Linked { link } = &mut state.phase {
            link.on_close();
        }
        (state.core.disconnected(), socket)
    };
    // This runs in the socket's own handler: its handlers are freed a moment later.
    drop(socket);
    apply(shared, events);
    draw(shared);
    let s = shared.clone();
    let again = Closure::once_into_js(move || {
        if s.borrow().generation == generation {
            connect(&s);
        }
    });
    if let Some(window) = web_sys::window() {
        let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(
            again.unchecked_ref(),
            RECONNECT_MS,
        );
    }
}

/// Carries out what the core decided: tools registered and withdrawn, calls answered, the next
/// wake-up set.
fn apply(shared: &Shared, events: Vec<Event>) {
    for event in events {
        match event {
            Event::ToolsChanged { added, removed } => {
                {
                    let mut state = shared.borrow_mut();
                    for name in removed {
                        // Dropping the registration aborts its controller: the tool is gone.
                        state.registrations.remove(&name);
                    }
                }
                register_all(shared, added);
            }
            Event::Answered { call, output } => {
                let resolve = shared.borrow_mut().waiting.remove(&call);
                if let Some(resolve) = resolve {
                    let _ = resolve.call1(&JsValue::NULL, &tacit_webmcp::to_js(&output));
                }
            }
            Event::Unpaired => {
                // The person ended the pairing in the vault: forget it and offer a new code.
                // In a task of its own: this may run in the socket's own handler, and
                // forgetting the pairing closes that socket.
                let s = shared.clone();
                let forget = Closure::once_into_js(move || unpair(&s));
                if let Some(window) = web_sys::window() {
                    let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(
                        forget.unchecked_ref(),
                        0,
                    );
                }
            }
        }
    }
    schedule(shared);
}

fn schedule(shared: &Shared) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let deadline = {
        let mut state = shared.borrow_mut();
        if let Some(timer) = state.timer.take() {
            window.clear_timeout_with_handle(timer);
        }
        state.core.next_deadline()
    };
    let Some(at) = deadline else {
        return;
    };
    let delay = i32::try_from((at - now()).clamp(0, 60_000)).unwrap_or(60_000);
    let s = shared.clone();
    let tick = Closure::once_into_js(move || {
        s.borrow_mut().timer = None;
        let events = s.borrow_mut().core.tick(now());
        apply(&s, events);
        draw(&s);
    });
    if let Ok(timer) =
        window.set_timeout_with_callback_and_timeout_and_arguments_0(tick.unchecked_ref(), delay)
    {
        shared.borrow_mut().timer = Some(timer);
    }
}

fn register_all(shared: &Shared, tools: Vec<ToolSpec>) {
    let Some(ctx) = shared.borrow().ctx.clone() else {
        return;
    };
    for tool in tools {
        let mut definition = tool.definition.clone();
        if let Value::Object(map) = &mut definition {
            map.insert("name".into(), Value::String(tool.name.clone()));
        }
        let (s, name) = (shared.clone(), tool.name.clone());
        let execute = tacit_webmcp::execute_fn(move |input| call(&s, &name, input));
        if let Ok(registration) = tacit_webmcp::register(&ctx, &definition, &execute, |_| {}) {
            shared
                .borrow_mut()
                .registrations
                .insert(tool.name, registration);
        }
    }
}

/// An agent's call: answered now, or forwarded and answered when the vault replies.
fn call(shared: &Shared, name: &str, input: JsValue) -> Promise {
    let input = match tacit_webmcp::input_json(&input) {
        Ok(input) => input,
        Err(message) => {
            let refusal = tool_gate::Refusal::invalid_input(message);
            return Promise::resolve(&tacit_webmcp::to_js(&tool_gate::envelope(&Err(refusal))));
        }
    };
    let outgoing = shared.borrow_mut().core.call(name, input, now());
    match outgoing {
        Outgoing::Answer(output) => Promise::resolve(&tacit_webmcp::to_js(&output)),
        Outgoing::Send { call, message } => {
            let sealed = {
                let mut state = shared.borrow_mut();
                match &mut state.phase {
                    Phase::Linked { link } => link.seal(&message).ok(),
                    Phase::Offering { .. } => None,
                }
            };
            if let Some(frame) = sealed {
                send(&shared.borrow(), &frame);
            }
            let s = shared.clone();
            let promise = Promise::new(&mut move |resolve, _reject| {
                s.borrow_mut().waiting.insert(call, resolve);
            });
            schedule(shared);
            promise
        }
    }
}

/// The offer's QR code, drawn again only when the offer changed.
fn draw_qr(uri: &str) {
    let Some(box_) = element("qr") else {
        return;
    };
    if box_.get_attribute("data-offer").as_deref() == Some(uri) {
        return;
    }
    // Our own SVG of our own offer: no text of anyone else's reaches this markup.
    box_.set_inner_html(&crate::offer_qr_svg(uri).unwrap_or_default());
    let _ = box_.set_attribute("data-offer", uri);
}

fn draw(shared: &Shared) {
    let state = shared.borrow();
    match &state.phase {
        Phase::Offering { offer, .. } => {
            set_state("offering");
            show("offer-section", true);
            show("paired-section", false);
            set_text("typed", &offer.typed());
            let uri = offer.to_uri();
            set_text("offer", &uri);
            draw_qr(&uri);
        }
        Phase::Linked { link } => {
            let paired = link.paired();
            let connected = state.core.is_connected();
            set_state(if connected {
                "connected"
            } else {
                "unreachable"
            });
            show("offer-section", false);
            show("paired-section", true);
            set_text("fingerprint", &paired.fingerprint());
            set_text(
                "link",
                if connected {
                    "Your wallet is connected: calls go to it, and it decides."
                } else {
                    "Your wallet is not reachable now: every call is answered \"vault_unreachable\" until it is open again."
                },
            );
        }
    }
}
