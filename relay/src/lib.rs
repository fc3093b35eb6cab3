//! # tacit-relay
//!
//! Carries frames between the two sides of a route (a paired bridge and vault, see
//! `tacit-pairing`) over WebSockets: `GET /v1/relay/{route}/{bridge|vault}` upgrades; every
//! binary message is one frame for the other side. What it does with a frame (forward, keep in
//! the mailbox while the other side is offline, refuse) is decided by
//! [`tacit_pairing::relay`]'s rules; this crate only moves bytes. It has no key and opens nothing;
//! its logs carry refusal codes and counts, never a route, a frame or its length.
//!
//! A refusal is a text message `{"refused": code, "message": words}` to the sender; a refused
//! join closes the connection after it. When one side of a route connects or goes, the other
//! (if connected) gets the text message `{"peer": "joined"}` or `{"peer": "left"}`, so a bridge
//! withdraws its claim tools the moment its vault is gone. Frames of one side reach the other in
//! the order they were sent (their sequence numbers make a reordered frame a refusal at the
//! receiver, so the relay never reorders).
//!
//! ## One instance (the default)
//! One process, in memory ([`RelayState::new`]), with [`tacit_pairing::relay::Relay`]'s table.
//! Each connection has a bounded outgoing queue ([`OUTGOING_QUEUE`]); a frame for a connection
//! whose queue is full is refused to its sender as `mailbox_full`. Frames waiting for an offline
//! side are lost when the relay stops (the sides notice the gap and reconnect; nothing is lost of
//! the person's).
//!
//! ## Several instances (`--database postgres://…`, [`RelayState::shared`])
//! Instances share routing through one PostgreSQL (tables migrated at start with `tacit-store`,
//! set `relay`). Every frame goes through the database, also when both sides are connected to
//! the same instance, so there is one path and one order:
//!
//! - **Frames.** A frame is written to `relay_frames (id, route, to_role, frame, expires_at)`
//!   (the frame's bytes exactly as sent, and nothing else of it) and announced with `NOTIFY
//!   tacit_relay`. The notification is a doorbell ([`tacit_pairing::relay::Doorbell`], at most 41
//!   bytes: `f <route> <side>`), never the frame: a frame may be 256 KiB where a notification
//!   carries under 8,000 bytes, and a notification is lost while a listener is disconnected where
//!   a row is not, so the table is the only place a frame waits. Every instance `LISTEN`s; the
//!   one holding that side's connection reads the side's rows in `id` order, writes them to the
//!   connection, then deletes them. The sender's frames of one side are stored one after the
//!   other under a per-side advisory lock, so `id` order is sending order and commit order.
//! - **Mailbox.** The rows waiting for a side are its mailbox, with the pure rules' bounds
//!   ([`tacit_pairing::relay::mailbox_admits`]): while the side is offline everywhere, 64 frames
//!   and 1 MiB, each for 10 minutes (`expires_at`, on the relay's clock); while it is connected,
//!   at most [`OUTGOING_QUEUE`] frames not yet delivered. Past a bound the sender is refused
//!   `mailbox_full`. Expired rows are neither delivered nor counted, and are swept every 30
//!   seconds. At most [`tacit_pairing::relay::MAX_ROUTES`] routes (with a side connected or a
//!   frame alive) across all instances; a join of a new route past it is refused `full`.
//! - **Presence.** `relay_presence (route, role, instance, connection)` holds one connection per
//!   side across all instances: a second join of a side held by a live connection, on any
//!   instance, is refused `busy`, as in one process ([`tacit_pairing::relay::join_rule`]).
//!   Joining and leaving ring `j`/`l` doorbells; the instance holding the other side tells it
//!   `{"peer":"joined"}` / `{"peer":"left"}`.
//! - **Liveness.** Each instance holds a lease in `relay_instances`, renewed every 5 seconds for
//!   30 seconds on the database's clock. An instance that stops ([`RelayState::stop`]) releases
//!   its sides at once. A side held by an instance that crashed stays `busy` until that lease
//!   lapses (at most 30 seconds); then a new join takes it, or the sweep releases it (its peer is
//!   told `left`).
//! - **Losing the database.** When the listener's connection drops (or the lease cannot be
//!   renewed for 25 seconds), the instance closes every connection it holds, each told
//!   `{"refused":"unavailable",…}`, refuses joins with `unavailable`, logs it, and reconnects its
//!   listener with backoff (logging when it is back); then it releases the sides it held and
//!   accepts joins again. A frame the database did not take is refused `unavailable` to its
//!   sender: no frame is dropped silently. A delivery the database refuses closes that one
//!   connection with `unavailable`. Frames already stored wait in the table for the side to
//!   reconnect (within their time to live). Each instance opens at most 10 connections to the
//!   database, its listener's included.
//! - **Rate.** The 1,200 frames a minute per side is counted per instance: a side that
//!   reconnects to another instance starts with that instance's bucket.
//! - What the database holds: routes, sides, instance numbers, connection numbers, the frames'
//!   ciphertext and their expiry. No address, no key, no plaintext (the relay has none). Frames are
//!   delivered at least once: if an instance stops between writing frames and deleting their
//!   rows, the next connection of that side gets them again, and its session refuses them as
//!   replays.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::{SinkExt, StreamExt};
use tacit_pairing::Role;
use tacit_pairing::relay::{Delivery, MAX_RELAYED_FRAME, Relay, RelayRefusal, Route};
use tokio::sync::mpsc;

mod shared;

pub use shared::{CHANNEL, MIGRATIONS, SharedError};

/// Frames waiting to be written to one connection.
pub const OUTGOING_QUEUE: usize = tacit_pairing::relay::MAX_IN_FLIGHT;

/// The path of the WebSocket endpoint, `{route}` and `{role}` filled in.
pub const RELAY_PATH: &str = "/v1/relay/{route}/{role}";

/// How often waiting frames past their time to live are dropped.
const EXPIRE_EVERY: Duration = Duration::from_secs(30);

/// Where the relay reads the time (milliseconds since the epoch). Tests pass their own.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The relay's state: the rules' table and one sender per live connection (one instance), or
/// this instance's share of the routing in PostgreSQL (several instances).
#[derive(Clone)]
pub struct RelayState {
    shared: Option<Arc<shared::Shared>>,
    relay: Arc<Mutex<Relay>>,
    connections: Arc<Mutex<HashMap<u64, mpsc::Sender<Out>>>>,
    next_connection: Arc<AtomicU64>,
    clock: Clock,
    /// Every frame the relay forwards or keeps, for a test to see what the relay sees.
    observer: Option<mpsc::UnboundedSender<Vec<u8>>>,
}

impl std::fmt::Debug for RelayState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayState").finish_non_exhaustive()
    }
}

impl RelayState {
    /// One instance, in memory, on `clock`.
    pub fn new(clock: Clock) -> Self {
        Self {
            shared: None,
            relay: Arc::new(Mutex::new(Relay::new())),
            connections: Arc::new(Mutex::new(HashMap::new())),
            next_connection: Arc::new(AtomicU64::new(1)),
            clock,
            observer: None,
        }
    }

    /// The relay on the system clock.
    pub fn system() -> Self {
        Self::new(system_clock())
    }

    /// One of several instances sharing routing through the PostgreSQL at `url`
    /// (`postgres://…`), on `clock` (the mailbox's time to live; leases use the database's
    /// clock). Migrates the relay's tables, registers this instance and starts listening before
    /// it returns, so it is ready to serve. Must be called inside a Tokio runtime, which then
    /// runs its listener and lease tasks.
    pub async fn shared(url: &str, clock: Clock) -> Result<Self, SharedError> {
        let shared = shared::Shared::start(url).await?;
        let mut state = Self::new(clock);
        state.shared = Some(shared);
        Ok(state)
    }

    /// [`RelayState::shared`] on the system clock.
    pub async fn shared_system(url: &str) -> Result<Self, SharedError> {
        Self::shared(url, system_clock()).await
    }

    /// Sends a copy of every frame the relay carries to `observer` (tests: what does the relay
    /// see?).
    pub fn observed(mut self, observer: mpsc::UnboundedSender<Vec<u8>>) -> Self {
        self.observer = Some(observer);
        self
    }

    fn now(&self) -> i64 {
        (self.clock)()
    }

    fn relay(&self) -> std::sync::MutexGuard<'_, Relay> {
        self.relay.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn connections(&self) -> std::sync::MutexGuard<'_, HashMap<u64, mpsc::Sender<Out>>> {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Before the process exits: with several instances, closes the connections held here (each
    /// told `unavailable`), releases their sides at once (their peers told `left`) and withdraws
    /// this instance's lease, so the sides may reconnect to another instance straight away. One
    /// instance: nothing to do. [`serve`] calls it when it stops.
    pub async fn stop(&self) {
        if let Some(shared) = &self.shared {
            shared.stop().await;
        }
    }

    /// Routes held now (for tests and metrics): in one instance, every route with a side
    /// connected or a frame waiting; with several, the routes with a side connected here.
    pub fn routes(&self) -> usize {
        match &self.shared {
            Some(shared) => shared.local_routes(),
            None => self.relay().routes(),
        }
    }
}

fn system_clock() -> Clock {
    Arc::new(|| tacit_service::serve::system_now().millis())
}

/// What is written to a connection.
#[derive(Debug)]
enum Out {
    Frame(Vec<u8>),
    Peer(&'static str),
}

/// Tells the other side of `route` (if connected) that `role`'s side `joined` or `left`.
fn tell_peer(state: &RelayState, route: &Route, role: Role, what: &'static str) {
    let peer = state.relay().connection(route, role.peer());
    if let Some(peer) = peer
        && let Some(sender) = state.connections().get(&peer).cloned()
    {
        let _ = sender.try_send(Out::Peer(what));
    }
}

/// The relay's router.
pub fn router(state: RelayState) -> Router {
    Router::new()
        .route(RELAY_PATH, get(upgrade))
        .route("/v1/health", get(|| async { "ok" }))
        .with_state(state)
}

/// Drops expired frames every 30 seconds, for as long as the runtime runs (with several
/// instances, also the claims of instances that are gone).
pub fn spawn_expiry(state: RelayState) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EXPIRE_EVERY);
        loop {
            tick.tick().await;
            let now = state.now();
            match &state.shared {
                Some(shared) => shared.sweep(now).await,
                None => state.relay().expire(now),
            }
        }
    });
}

/// Serves the relay on `listener` until the process is stopped (then [`RelayState::stop`]).
pub async fn serve(listener: tokio::net::TcpListener, state: RelayState) -> std::io::Result<()> {
    spawn_expiry(state.clone());
    let served = axum::serve(
        listener,
        router(state.clone()).into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(tacit_service::serve::shutdown_signal())
    .await;
    state.stop().await;
    served
}

fn refusal_text(refusal: &RelayRefusal) -> String {
    serde_json::json!({ "refused": refusal.code(), "message": refusal.to_string() }).to_string()
}

async fn upgrade(
    State(state): State<RelayState>,
    Path((route, role)): Path<(String, String)>,
    ws: WebSocketUpgrade,
) -> Response {
    let Some(role) = tacit_pairing::relay::parse_side(&role) else {
        return (StatusCode::NOT_FOUND, "the side is bridge or vault").into_response();
    };
    let route = match Route::parse(&route) {
        Ok(route) => route,
        Err(refusal) => return (StatusCode::BAD_REQUEST, refusal.to_string()).into_response(),
    };
    ws.max_message_size(MAX_RELAYED_FRAME)
        .max_frame_size(MAX_RELAYED_FRAME)
        .on_upgrade(move |socket| async move {
            match state.shared.clone() {
                Some(shared) => shared_connection(state, shared, route, role, socket).await,
                None => connection(state, route, role, socket).await,
            }
        })
}

async fn connection(state: RelayState, route: Route, role: Role, socket: WebSocket) {
    let id = state.next_connection.fetch_add(1, Ordering::Relaxed);
    let (mut sink, mut stream) = socket.split();
    let (tx, mut rx) = mpsc::channel::<Out>(OUTGOING_QUEUE);
    let joined = {
        let now = state.now();
        let joined = state.relay().join(&route, role, id, now);
        if joined.is_ok() {
            state.connections().insert(id, tx.clone());
        }
        joined
    };
    let waiting = match joined {
        Ok(waiting) => waiting,
        Err(refusal) => {
            tracing::debug!(code = refusal.code(), "join refused");
            let _ = sink
                .send(Message::Text(refusal_text(&refusal).into()))
                .await;
            let _ = sink.close().await;
            return;
        }
    };
    tell_peer(&state, &route, role, "joined");
    if state.relay().connection(&route, role.peer()).is_some() {
        let _ = sink
            .send(Message::Text(r#"{"peer":"joined"}"#.into()))
            .await;
    }
    for frame in waiting {
        if sink.send(Message::Binary(frame.into())).await.is_err() {
            break;
        }
    }
    loop {
        tokio::select! {
            outgoing = rx.recv() => match outgoing {
                Some(Out::Frame(frame)) => {
                    if sink.send(Message::Binary(frame.into())).await.is_err() {
                        break;
                    }
                }
                Some(Out::Peer(what)) => {
                    let text = serde_json::json!({ "peer": what }).to_string();
                    if sink.send(Message::Text(text.into())).await.is_err() {
                        break;
                    }
                }
                None => break,
            },
            incoming = stream.next() => match incoming {
                Some(Ok(Message::Binary(frame))) => {
                    if let Err(refusal) = carry(&state, &route, role, id, frame.to_vec()) {
                        tracing::debug!(code = refusal.code(), "frame refused");
                        if sink.send(Message::Text(refusal_text(&refusal).into())).await.is_err() {
                            break;
                        }
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                // Pings are answered by axum; text from a side is not a frame.
                Some(Ok(_)) => {}
            },
        }
    }
    state.relay().leave(&route, role, id);
    state.connections().remove(&id);
    tell_peer(&state, &route, role, "left");
}

/// One frame from `role`'s connection `id`: forwarded, kept or refused.
fn carry(
    state: &RelayState,
    route: &Route,
    role: Role,
    id: u64,
    frame: Vec<u8>,
) -> Result<(), RelayRefusal> {
    let now = state.now();
    if let Some(observer) = &state.observer {
        let _ = observer.send(frame.clone());
    }
    let delivery = state.relay().send(route, role, id, frame.clone(), now)?;
    if let Delivery::Forward(peer) = delivery {
        let sender = state.connections().get(&peer).cloned();
        match sender {
            Some(sender) => sender
                .try_send(Out::Frame(frame))
                .map_err(|_| RelayRefusal::MailboxFull)?,
            None => return Err(RelayRefusal::NotJoined),
        }
    }
    Ok(())
}

async fn send_text(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    text: String,
) -> bool {
    sink.send(Message::Text(text.into())).await.is_ok()
}

/// One connection when several instances share the database: frames in and out go through the
/// table; doorbells wake this task or bring presence news.
async fn shared_connection(
    state: RelayState,
    shared: Arc<shared::Shared>,
    route: Route,
    role: Role,
    socket: WebSocket,
) {
    let id = state.next_connection.fetch_add(1, Ordering::Relaxed);
    let (mut sink, mut stream) = socket.split();
    let (tx, mut rx) = mpsc::channel::<Out>(OUTGOING_QUEUE);
    let signal = Arc::new(shared::Signal {
        wake: tokio::sync::Notify::new(),
        dropped: std::sync::atomic::AtomicBool::new(false),
    });
    let joined = shared
        .join(&route, role, id, tx, signal.clone(), state.now())
        .await;
    let mut peer_here = match joined {
        Ok(peer_here) => peer_here,
        Err(refusal) => {
            tracing::debug!(code = refusal.code(), "join refused");
            let _ = send_text(&mut sink, refusal_text(&refusal)).await;
            let _ = sink.close().await;
            return;
        }
    };
    if peer_here && !send_text(&mut sink, r#"{"peer":"joined"}"#.to_owned()).await {
        shared.leave(&route, role, id).await;
        return;
    }
    // The mailbox first.
    signal.wake.notify_one();
    loop {
        tokio::select! {
            biased;
            outgoing = rx.recv() => match outgoing {
                Some(Out::Peer(what)) => {
                    // Each change once, however many doorbells said it.
                    let here = what == "joined";
                    if here != peer_here {
                        peer_here = here;
                        let text = serde_json::json!({ "peer": what }).to_string();
                        if !send_text(&mut sink, text).await {
                            break;
                        }
                    }
                }
                Some(Out::Frame(frame)) => {
                    if sink.send(Message::Binary(frame.into())).await.is_err() {
                        break;
                    }
                }
                // The instance let go of this connection (it lost the database).
                None => {
                    let _ = send_text(&mut sink, refusal_text(&RelayRefusal::Unavailable)).await;
                    let _ = sink.close().await;
                    break;
                }
            },
            () = signal.wake.notified() => {
                if signal.dropped.load(Ordering::SeqCst) {
                    let _ = send_text(&mut sink, refusal_text(&RelayRefusal::Unavailable)).await;
                    let _ = sink.close().await;
                    break;
                }
                match deliver(&state, &shared, &route, role, &mut sink).await {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(refusal) => {
                        let _ = send_text(&mut sink, refusal_text(&refusal)).await;
                        let _ = sink.close().await;
                        break;
                    }
                }
            },
            incoming = stream.next() => match incoming {
                Some(Ok(Message::Binary(frame))) => {
                    if let Some(observer) = &state.observer {
                        let _ = observer.send(frame.to_vec());
                    }
                    let sent = shared.send(&route, role, id, &frame, state.now()).await;
                    if let Err(refusal) = sent {
                        tracing::debug!(code = refusal.code(), "frame refused");
                        if !send_text(&mut sink, refusal_text(&refusal)).await {
                            break;
                        }
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
        }
    }
    shared.leave(&route, role, id).await;
}

/// Writes every frame waiting for this side, oldest first, deleting each batch once written.
/// `Ok(false)`: the connection is gone.
async fn deliver(
    state: &RelayState,
    shared: &shared::Shared,
    route: &Route,
    role: Role,
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
) -> Result<bool, RelayRefusal> {
    loop {
        let (frames, last) = shared.next_frames(route, role, state.now()).await?;
        if frames.is_empty() {
            return Ok(true);
        }
        for frame in frames {
            if sink.send(Message::Binary(frame.into())).await.is_err() {
                return Ok(false);
            }
        }
        shared.delivered(route, role, last).await?;
    }
}
