//! # tacit-relay
//!
//! Carries frames between the two sides of a route (a paired bridge and vault, see
//! `tacit-pairing`) over WebSockets: `GET /v1/relay/{route}/{bridge|vault}` upgrades; every
//! binary message is one frame for the other side. What it does with a frame (forward, keep in
//! the mailbox while the other side is offline, refuse) is decided by
//! [`tacit_pairing::relay::Relay`]; this crate only moves bytes. It has no key and opens nothing;
//! its logs carry refusal codes and counts, never a route, a frame or its length.
//!
//! A refusal is a text message `{"refused": code, "message": words}` to the sender; a refused
//! join closes the connection after it. When one side of a route connects or goes, the other
//! (if connected) gets the text message `{"peer": "joined"}` or `{"peer": "left"}`, so a bridge
//! withdraws its claim tools the moment its vault is gone. Each connection has a bounded outgoing queue
//! ([`OUTGOING_QUEUE`]); a frame for a connection whose queue is full is refused to its sender
//! as `mailbox_full`. One process, in memory: frames waiting for an offline side are lost when
//! the relay stops (the sides notice the gap and reconnect; nothing is lost of the person's).

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

/// Frames waiting to be written to one connection.
pub const OUTGOING_QUEUE: usize = 256;

/// The path of the WebSocket endpoint, `{route}` and `{role}` filled in.
pub const RELAY_PATH: &str = "/v1/relay/{route}/{role}";

/// How often waiting frames past their time to live are dropped.
const EXPIRE_EVERY: Duration = Duration::from_secs(30);

/// Where the relay reads the time (milliseconds since the epoch). Tests pass their own.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The relay's state: the rules' table and one sender per live connection.
#[derive(Clone)]
pub struct RelayState {
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
    pub fn new(clock: Clock) -> Self {
        Self {
            relay: Arc::new(Mutex::new(Relay::new())),
            connections: Arc::new(Mutex::new(HashMap::new())),
            next_connection: Arc::new(AtomicU64::new(1)),
            clock,
            observer: None,
        }
    }

    /// The relay on the system clock.
    pub fn system() -> Self {
        Self::new(Arc::new(|| tacit_service::serve::system_now().millis()))
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

    /// Routes held now (for tests and metrics).
    pub fn routes(&self) -> usize {
        self.relay().routes()
    }
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

/// Drops expired frames every 30 seconds, for as long as the runtime runs.
pub fn spawn_expiry(state: RelayState) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EXPIRE_EVERY);
        loop {
            tick.tick().await;
            let now = state.now();
            state.relay().expire(now);
        }
    });
}

/// Serves the relay on `listener` until the process is stopped.
pub async fn serve(listener: tokio::net::TcpListener, state: RelayState) -> std::io::Result<()> {
    spawn_expiry(state.clone());
    axum::serve(
        listener,
        router(state).into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(tacit_service::serve::shutdown_signal())
    .await
}

fn refusal_text(refusal: &RelayRefusal) -> String {
    serde_json::json!({ "refused": refusal.code(), "message": refusal.to_string() }).to_string()
}

async fn upgrade(
    State(state): State<RelayState>,
    Path((route, role)): Path<(String, String)>,
    ws: WebSocketUpgrade,
) -> Response {
    let role = match role.as_str() {
        "bridge" => Role::Bridge,
        "vault" => Role::Vault,
        _ => {
            return (StatusCode::NOT_FOUND, "the side is bridge or vault").into_response();
        }
    };
    let route = match Route::parse(&route) {
        Ok(route) => route,
        Err(refusal) => return (StatusCode::BAD_REQUEST, refusal.to_string()).into_response(),
    };
    ws.max_message_size(MAX_RELAYED_FRAME)
        .max_frame_size(MAX_RELAYED_FRAME)
        .on_upgrade(move |socket| connection(state, route, role, socket))
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
