//! The vault's side of the bridge (issue 29): when the page is the person's **vault**
//! (`<meta name="tacit-role" content="vault">`, which `cargo xtask build-web` writes into the
//! `vault` copy of the wallet), it registers no WebMCP tool and opens no `window.tacit`; the
//! agent's tools live on a paired bridge page, and every call the bridge forwards runs here,
//! through the same gate as a WebMCP call would.
//!
//! Pairing (Settings → Pair a bridge): the person types the bridge's code or pastes its offer;
//! the vault runs its side of the SPAKE2 handshake through the relay's mailbox (it checks the
//! bridge's confirmation tag before sending its own) and keeps the pairing in this origin's
//! `localStorage` (`tacit-vault/pairings`), listed with its fingerprint, its relay and when it was
//! last used; Unpair forgets it, tells a connected bridge so (sealed: it forgets the pairing
//! and offers a new code) and closes its link, which withdraws every claim tool at the bridge at
//! once.
//!
//! Each link: on connecting, and on each `hello` from the bridge, the vault sends 16 fresh bytes;
//! the bridge's 16 in answer make the session ([`tacit_pairing::Session`]). Then the vault sends
//! the claim tools that exist now (and again whenever they change) and answers each call.

use std::cell::RefCell;

use capability_gate::{Gate, Handler, ToolDef};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tacit_pairing::bridge::{ToBridge, ToVault, ToolSpec};
use tacit_pairing::{Confirming, Offer, Paired, Role, Session, Start};
use tacit_webmcp::socket::Socket;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::dom;

/// Where the pairings are kept.
pub const PAIRINGS_KEY: &str = "tacit-vault/pairings";

/// The relay when the page's URL names none.
const DEFAULT_RELAY: &str = "http://127.0.0.1:8795";

use tacit_pairing::link::HELLO;

/// One pairing as kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Kept {
    /// [`Paired::to_bytes`] in hex.
    paired: String,
    relay: String,
    paired_at: i64,
    last_used: i64,
}

struct Link {
    paired: Paired,
    relay: String,
    socket: Option<Socket>,
    nonce: [u8; 16],
    session: Option<Session>,
    sent: Option<Vec<ToolSpec>>,
    generation: u64,
}

struct Attempt {
    offer: Offer,
    socket: Socket,
    confirming: Option<Confirming>,
}

/// How a forwarded call is run: the app's answer to a call of a registered tool by name.
pub type Call = fn(&str, JsValue) -> js_sys::Promise;

#[derive(Default)]
struct Links {
    /// Set by [`start`].
    call: Option<Call>,
    links: Vec<Link>,
    attempt: Option<Attempt>,
    tools: Vec<ToolSpec>,
    /// Bumped per link connection.
    generation: u64,
    /// Bumped per pairing attempt.
    attempts: u64,
}

thread_local! {
    static LINKS: RefCell<Links> = RefCell::new(Links::default());
}

/// Whether this page is the person's vault.
pub fn is_vault() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector("meta[name=tacit-role]").ok().flatten())
        .and_then(|m| m.get_attribute("content"))
        .as_deref()
        == Some("vault")
}

fn now() -> i64 {
    js_sys::Date::now() as i64
}

fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    let _ = getrandom::fill(&mut bytes);
    bytes
}

fn relay() -> String {
    tacit_webmcp::query_param("relay").unwrap_or_else(|| DEFAULT_RELAY.to_owned())
}

fn socket_url(relay: &str, route: &str) -> String {
    tacit_pairing::relay::socket_url(relay, route, Role::Vault)
}

fn kept() -> Vec<Kept> {
    web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .and_then(|s| s.get_item(PAIRINGS_KEY).ok().flatten())
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn keep(all: &[Kept]) {
    if let Some(s) = web_sys::window().and_then(|w| w.local_storage().ok().flatten())
        && let Ok(text) = serde_json::to_string(all)
    {
        let _ = s.set_item(PAIRINGS_KEY, &text);
    }
}

/// In a vault page: shows the pairing section, wires its form, and connects every kept pairing;
/// each call a bridge forwards is run by `call`.
pub fn start(call: Call) {
    LINKS.with(|cell| cell.borrow_mut().call = Some(call));
    dom::show("pairing", true);
    if let Some(form) = dom::by_id("pair-form") {
        let submit = Closure::<dyn FnMut(web_sys::Event)>::new(|e: web_sys::Event| {
            e.prevent_default();
            // Only the person's own submit pairs (a script's synthetic event does not).
            if e.is_trusted() {
                pair(&dom::value("pair-code"));
            }
        });
        let _ = form.add_event_listener_with_callback("submit", submit.as_ref().unchecked_ref());
        submit.forget();
    }
    for k in kept() {
        let Ok(bytes) = hex::decode(&k.paired) else {
            continue;
        };
        if let Ok(paired) = Paired::from_bytes(&bytes)
            && paired.role() == Role::Vault
        {
            connect_link(paired, k.relay);
        }
    }
    listen_unpair();
    draw_pairings();
}

/// The claim tools registered now, as the bridge shows them (with their grant's expiry).
pub fn sync_tools(defs: &[ToolDef], gate: &Gate) {
    let tools: Vec<ToolSpec> = defs
        .iter()
        .filter_map(|def| {
            let Handler::Claim { grant, .. } = &def.handler else {
                return None;
            };
            let expires_at = gate
                .grants()
                .find(|g| &g.id == grant)
                .map(|g| g.expires_at.millis());
            Some(ToolSpec {
                name: def.name.as_str().to_owned(),
                definition: def.to_webmcp_json(),
                expires_at,
            })
        })
        .collect();
    LINKS.with(|cell| {
        let Ok(mut links) = cell.try_borrow_mut() else {
            return;
        };
        links.tools = tools;
        let tools = links.tools.clone();
        for link in &mut links.links {
            send_tools(link, &tools);
        }
    });
}

fn send_tools(link: &mut Link, tools: &[ToolSpec]) {
    if link.sent.as_deref() == Some(tools) {
        return;
    }
    let (Some(session), Some(socket)) = (&mut link.session, &link.socket) else {
        return;
    };
    let message = ToBridge::Tools {
        tools: tools.to_vec(),
    };
    if let Ok(bytes) = serde_json::to_vec(&message)
        && let Ok(frame) = session.seal(&bytes)
        && socket.send(&frame)
    {
        link.sent = Some(tools.to_vec());
    }
}

/// The person asked to pair with the bridge whose code or offer is `text`.
fn pair(text: &str) {
    let text = text.trim();
    let offer = if text.starts_with("tacit-pair:") {
        Offer::parse(text)
    } else {
        Offer::parse_typed(text, &relay())
    };
    let offer = match offer {
        Ok(offer) => offer,
        Err(e) => {
            dom::set_msg("pair-msg", &format!("{e}."), false);
            return;
        }
    };
    let url = socket_url(&offer.relay, &offer.mailbox.id().hex());
    let generation = LINKS.with(|cell| {
        let mut links = cell.borrow_mut();
        links.attempts += 1;
        links.attempts
    });
    let socket = Socket::open(
        &url,
        || {},
        |_| {},
        move |bytes| pairing_message(generation, &bytes),
        || {},
    );
    let Ok(socket) = socket else {
        dom::set_msg(
            "pair-msg",
            "The bridge's relay address cannot be used.",
            false,
        );
        return;
    };
    let old = LINKS.with(|cell| {
        cell.borrow_mut().attempt.replace(Attempt {
            offer,
            socket,
            confirming: None,
        })
    });
    drop(old);
    dom::set_msg("pair-msg", "Pairing: waiting for the bridge…", true);
}

enum Outcome {
    Continue,
    Paired(Paired, String),
    Failed(String),
}

fn pairing_message(generation: u64, bytes: &[u8]) {
    let outcome = LINKS.with(|cell| {
        let mut links = cell.borrow_mut();
        if links.attempts != generation {
            return Outcome::Continue;
        }
        let Some(attempt) = links.attempt.as_mut() else {
            return Outcome::Continue;
        };
        match attempt.confirming.take() {
            None => {
                // The bridge's SPAKE2 message: ours goes back.
                let mailbox = attempt.offer.mailbox.id();
                let (start, reply) =
                    Start::new(Role::Vault, &attempt.offer.code, &mailbox, random());
                match start.finish(bytes) {
                    Ok(confirming) => {
                        attempt.socket.send(&reply);
                        attempt.confirming = Some(confirming);
                        Outcome::Continue
                    }
                    Err(e) => Outcome::Failed(e.to_string()),
                }
            }
            Some(confirming) => {
                // The bridge's tag: checked before ours is sent.
                let ours = confirming.tag();
                match confirming.confirm(bytes) {
                    Ok(paired) => {
                        attempt.socket.send(&ours);
                        Outcome::Paired(paired, attempt.offer.relay.clone())
                    }
                    Err(e) => Outcome::Failed(e.to_string()),
                }
            }
        }
    });
    match outcome {
        Outcome::Continue => {}
        Outcome::Failed(why) => {
            end_attempt();
            dom::set_msg("pair-msg", &format!("Not paired: {why}."), false);
        }
        Outcome::Paired(paired, relay) => {
            end_attempt();
            let mut all = kept();
            all.push(Kept {
                paired: hex::encode(paired.to_bytes().as_slice()),
                relay: relay.clone(),
                paired_at: now(),
                last_used: now(),
            });
            keep(&all);
            dom::set_msg(
                "pair-msg",
                &format!(
                    "Paired. Check that the bridge shows the same number: {}.",
                    paired.fingerprint()
                ),
                true,
            );
            dom::set_value("pair-code", "");
            connect_link(paired, relay);
            draw_pairings();
        }
    }
}

fn end_attempt() {
    // Closed a moment later: the last message sent must leave first.
    let attempt = LINKS.with(|cell| cell.borrow_mut().attempt.take());
    if let Some(attempt) = attempt {
        let close = Closure::once_into_js(move || drop(attempt));
        if let Some(w) = web_sys::window() {
            let _ = w
                .set_timeout_with_callback_and_timeout_and_arguments_0(close.unchecked_ref(), 1000);
        }
    }
}

fn connect_link(paired: Paired, relay: String) {
    let route = paired.route();
    let generation = LINKS.with(|cell| {
        let mut links = cell.borrow_mut();
        links.generation += 1;
        let generation = links.generation;
        match links.links.iter_mut().find(|l| l.paired.route() == route) {
            Some(link) => link.generation = generation,
            None => links.links.push(Link {
                paired,
                relay: relay.clone(),
                socket: None,
                nonce: [0; 16],
                session: None,
                sent: None,
                generation,
            }),
        }
        generation
    });
    let (on_open, on_binary, on_close) = (route.clone(), route.clone(), route.clone());
    let socket = Socket::open(
        &socket_url(&relay, &route),
        move || {
            with_link(&on_open, generation, |link| {
                link.nonce = random();
                link.session = None;
                if let Some(s) = &link.socket {
                    s.send(&link.nonce);
                }
            });
        },
        |_| {},
        move |bytes| link_message(&on_binary, generation, bytes),
        move || {
            let again = with_link(&on_close, generation, |link| {
                // Freed a moment later: this runs in the socket's own handler.
                let socket = link.socket.take();
                link.session = None;
                link.sent = None;
                (link.paired.clone(), link.relay.clone(), socket)
            });
            if let Some((paired, relay, socket)) = again {
                drop(socket);
                let retry = Closure::once_into_js(move || connect_link(paired, relay));
                if let Some(w) = web_sys::window() {
                    let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(
                        retry.unchecked_ref(),
                        1500,
                    );
                }
            }
        },
    );
    let Ok(socket) = socket else {
        return;
    };
    with_link(&route, generation, |link| link.socket = Some(socket));
}

/// Runs `f` on the link of `route` if `generation` is still its own.
fn with_link<R>(route: &str, generation: u64, f: impl FnOnce(&mut Link) -> R) -> Option<R> {
    LINKS.with(|cell| {
        let mut links = cell.try_borrow_mut().ok()?;
        let link = links
            .links
            .iter_mut()
            .find(|l| l.paired.route() == route && l.generation == generation)?;
        Some(f(link))
    })
}

fn link_message(route: &str, generation: u64, bytes: Vec<u8>) {
    let tools = LINKS.with(|cell| cell.borrow().tools.clone());
    let call = with_link(route, generation, |link| match bytes.len() {
        1 if bytes[0] == HELLO => {
            link.nonce = random();
            link.session = None;
            if let Some(s) = &link.socket {
                s.send(&link.nonce);
            }
            None
        }
        16 => {
            let mut theirs = [0u8; 16];
            theirs.copy_from_slice(&bytes);
            link.session = Some(Session::new(&link.paired, &theirs, &link.nonce));
            link.sent = None;
            send_tools(link, &tools);
            None
        }
        n if n > 16 => {
            let plain = link.session.as_mut()?.open(&bytes).ok()?;
            serde_json::from_slice::<ToVault>(&plain).ok()
        }
        _ => None,
    });
    if let Some(Some(ToVault::Call { call, tool, input })) = call {
        touch(route);
        let route = route.to_owned();
        let Some(run) = LINKS.with(|cell| cell.borrow().call) else {
            return;
        };
        wasm_bindgen_futures::spawn_local(async move {
            let promise = run(&tool, tacit_webmcp::to_js(&input));
            let output = wasm_bindgen_futures::JsFuture::from(promise)
                .await
                .ok()
                .and_then(|v| js_sys::JSON::stringify(&v).ok())
                .and_then(|s| s.as_string())
                .and_then(|s| serde_json::from_str::<Value>(&s).ok())
                .unwrap_or(Value::Null);
            with_link(&route, generation, |link| {
                let answer = ToBridge::Answer { call, output };
                if let (Some(session), Some(socket)) = (&mut link.session, &link.socket)
                    && let Ok(bytes) = serde_json::to_vec(&answer)
                    && let Ok(frame) = session.seal(&bytes)
                {
                    socket.send(&frame);
                }
            });
        });
    }
}

/// Records that the pairing of `route` was used now.
fn touch(route: &str) {
    let mut all = kept();
    let mut changed = false;
    for k in &mut all {
        let same = hex::decode(&k.paired)
            .ok()
            .and_then(|b| Paired::from_bytes(&b).ok())
            .is_some_and(|p| p.route() == route);
        if same && now() - k.last_used > 60_000 {
            k.last_used = now();
            changed = true;
        }
    }
    if changed {
        keep(&all);
        draw_pairings();
    }
}

/// Forgets the pairing of `route` and closes its link (the bridge withdraws every claim tool).
fn unpair(route: &str) {
    let all: Vec<Kept> = kept()
        .into_iter()
        .filter(|k| {
            hex::decode(&k.paired)
                .ok()
                .and_then(|b| Paired::from_bytes(&b).ok())
                .is_none_or(|p| p.route() != route)
        })
        .collect();
    keep(&all);
    let gone = LINKS.with(|cell| {
        let mut links = cell.borrow_mut();
        let at = links.links.iter().position(|l| l.paired.route() == route);
        at.map(|i| links.links.remove(i))
    });
    if let Some(mut link) = gone {
        // A bridge that is connected now is told, sealed, that the pairing is over (it forgets
        // it and offers a new code); then the link closes, a moment later so that the frame
        // leaves first. Either way the relay tells the bridge the vault is gone at once.
        if let (Some(session), Some(socket)) = (&mut link.session, &link.socket)
            && let Ok(bytes) = serde_json::to_vec(&ToBridge::Unpaired {})
            && let Ok(frame) = session.seal(&bytes)
        {
            socket.send(&frame);
        }
        let close = Closure::once_into_js(move || drop(link));
        if let Some(w) = web_sys::window() {
            let _ =
                w.set_timeout_with_callback_and_timeout_and_arguments_0(close.unchecked_ref(), 500);
        }
    }
    dom::set_msg(
        "pair-msg",
        "Unpaired: that bridge offers no claim tool any more.",
        true,
    );
    draw_pairings();
}

fn draw_pairings() {
    let Some(list) = dom::by_id("pairings") else {
        return;
    };
    list.set_text_content(None);
    for k in kept() {
        let Some(paired) = hex::decode(&k.paired)
            .ok()
            .and_then(|b| Paired::from_bytes(&b).ok())
        else {
            continue;
        };
        let item = dom::el(
            "li",
            "pairing",
            &format!(
                "Bridge {} · through {} · last used {}",
                paired.fingerprint(),
                k.relay,
                crate::intl::date(k.last_used)
            ),
        );
        let _ = item.set_attribute("data-route", &paired.route());
        let button = dom::el("button", "", "Unpair");
        let _ = button.set_attribute("type", "button");
        let _ = item.append_child(&button);
        let _ = list.append_child(&item);
    }
}

/// One listener for every Unpair button the list will ever hold (the list is redrawn often;
/// a listener per button would be one more closure kept per redraw).
fn listen_unpair() {
    let Some(list) = dom::by_id("pairings") else {
        return;
    };
    let click = Closure::<dyn FnMut(web_sys::Event)>::new(|e: web_sys::Event| {
        // Only the person's own click unpairs (a script's synthetic one does not).
        if !e.is_trusted() {
            return;
        }
        let route = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .filter(|el| el.tag_name().eq_ignore_ascii_case("button"))
            .and_then(|el| el.closest("li[data-route]").ok().flatten())
            .and_then(|li| li.get_attribute("data-route"));
        if let Some(route) = route {
            unpair(&route);
        }
    });
    let _ = list.add_event_listener_with_callback("click", click.as_ref().unchecked_ref());
    click.forget();
}
