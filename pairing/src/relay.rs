//! The relay's rules: what `tacit-relay` does with the frames it carries between the two sides
//! of a route, decided here so the server only moves bytes.
//!
//! A **route** is 32 hex digits: a pairing's mailbox while it pairs, then [`crate::Paired::route`].
//! Each route has at most one connection per [`Role`]. A frame from one side goes to the other
//! side's connection, or waits in that side's **mailbox** when it is not connected: at most
//! [`MAX_QUEUED_FRAMES`] frames and [`MAX_QUEUED_BYTES`] bytes, each for [`MAILBOX_TTL_MS`]
//! (then dropped). Each side of a route may send [`FRAMES_PER_MINUTE`] frames a minute, a
//! token bucket with that burst; at most [`MAX_ROUTES`] routes are held. The relay never opens
//! a frame (it has no key) and nothing here looks inside one. It does tell each side when the
//! other connects or goes ([`Relay::connection`]): presence, never content.
//!
//! Pure: time is an argument (milliseconds), connections are numbers the server gives.

use std::collections::{HashMap, VecDeque};

use thiserror::Error;

use crate::handshake::Role;

/// Frames waiting for one side of a route.
pub const MAX_QUEUED_FRAMES: usize = 64;
/// Bytes waiting for one side of a route.
pub const MAX_QUEUED_BYTES: usize = 1024 * 1024;
/// How long a waiting frame is kept: ten minutes.
pub const MAILBOX_TTL_MS: i64 = 10 * 60 * 1000;
/// Frames one side of a route may send a minute (and in one burst).
pub const FRAMES_PER_MINUTE: u32 = 1200;
/// Routes held at once.
pub const MAX_ROUTES: usize = 10_000;
/// The largest frame carried: a [`crate::MAX_FRAME`] plaintext sealed, with room to spare.
pub const MAX_RELAYED_FRAME: usize = crate::MAX_FRAME + 64;

/// The WebSocket URL of `route`'s `role` side at the relay whose origin is `relay`
/// (`http://h:p` → `ws://h:p/v1/relay/<route>/<bridge|vault>`, `https` → `wss`).
pub fn socket_url(relay: &str, route: &str, role: Role) -> String {
    let base = relay.trim_end_matches('/');
    let ws = if let Some(rest) = base.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = base.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        base.to_owned()
    };
    let side = match role {
        Role::Bridge => "bridge",
        Role::Vault => "vault",
    };
    format!("{ws}/v1/relay/{route}/{side}")
}

/// A route's name: 32 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Route(String);

impl Route {
    pub fn parse(text: &str) -> Result<Self, RelayRefusal> {
        let fine = text.len() == 32
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if fine {
            Ok(Self(text.to_owned()))
        } else {
            Err(RelayRefusal::BadRoute)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Why the relay refused, with the words it sends back (never a frame's content).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RelayRefusal {
    #[error("a route is 32 lowercase hexadecimal digits")]
    BadRoute,
    #[error("this side of the route is already connected elsewhere")]
    Busy,
    #[error("not connected to this route")]
    NotJoined,
    #[error("the frame is larger than the relay carries")]
    TooLarge,
    #[error("the other side is offline and its mailbox is full; try again when it is back")]
    MailboxFull,
    #[error("too many frames; wait {retry_after_ms} ms")]
    RateLimited { retry_after_ms: i64 },
    #[error("the relay holds too many routes now; try again later")]
    Full,
}

impl RelayRefusal {
    /// A short code for logs and close frames.
    pub fn code(&self) -> &'static str {
        match self {
            RelayRefusal::BadRoute => "bad_route",
            RelayRefusal::Busy => "busy",
            RelayRefusal::NotJoined => "not_joined",
            RelayRefusal::TooLarge => "too_large",
            RelayRefusal::MailboxFull => "mailbox_full",
            RelayRefusal::RateLimited { .. } => "rate_limited",
            RelayRefusal::Full => "full",
        }
    }
}

/// Where a frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// To this connection (the other side's), now.
    Forward(u64),
    /// Into the other side's mailbox.
    Queued,
}

#[derive(Debug, Default)]
struct Side {
    connection: Option<u64>,
    /// Frames waiting for this side, with when they came.
    waiting: VecDeque<(i64, Vec<u8>)>,
    waiting_bytes: usize,
    /// This side's sending budget: tokens (in frame units × 60,000) and when last refilled.
    tokens: u64,
    refilled_at: i64,
}

#[derive(Debug, Default)]
struct RouteState {
    bridge: Side,
    vault: Side,
}

impl RouteState {
    fn side(&mut self, role: Role) -> &mut Side {
        match role {
            Role::Bridge => &mut self.bridge,
            Role::Vault => &mut self.vault,
        }
    }

    fn idle(&self) -> bool {
        self.bridge.connection.is_none()
            && self.vault.connection.is_none()
            && self.bridge.waiting.is_empty()
            && self.vault.waiting.is_empty()
    }
}

const UNIT: u64 = 60_000;

/// Every route the relay holds.
#[derive(Debug, Default)]
pub struct Relay {
    routes: HashMap<Route, RouteState>,
}

impl Relay {
    pub fn new() -> Self {
        Self::default()
    }

    /// Connection `connection` joins `route` as `role`; returns the frames waiting for it (in
    /// the order they came, the expired ones dropped). [`RelayRefusal::Busy`] if that side is
    /// connected already.
    pub fn join(
        &mut self,
        route: &Route,
        role: Role,
        connection: u64,
        now: i64,
    ) -> Result<Vec<Vec<u8>>, RelayRefusal> {
        if !self.routes.contains_key(route) {
            self.expire(now);
            if self.routes.len() >= MAX_ROUTES {
                return Err(RelayRefusal::Full);
            }
        }
        let state = self.routes.entry(route.clone()).or_default();
        let side = state.side(role);
        if side.connection.is_some() {
            return Err(RelayRefusal::Busy);
        }
        side.connection = Some(connection);
        if side.refilled_at == 0 && side.tokens == 0 {
            side.tokens = u64::from(FRAMES_PER_MINUTE) * UNIT;
            side.refilled_at = now;
        }
        let waiting: Vec<Vec<u8>> = side
            .waiting
            .drain(..)
            .filter(|(at, _)| now - at < MAILBOX_TTL_MS)
            .map(|(_, frame)| frame)
            .collect();
        side.waiting_bytes = 0;
        Ok(waiting)
    }

    /// Connection `connection` left `route` (a connection that is not the side's is ignored).
    pub fn leave(&mut self, route: &Route, role: Role, connection: u64) {
        if let Some(state) = self.routes.get_mut(route) {
            let side = state.side(role);
            if side.connection == Some(connection) {
                side.connection = None;
            }
            if state.idle() {
                self.routes.remove(route);
            }
        }
    }

    /// A frame from `role`'s connection `connection` on `route`: forwarded, queued or refused.
    pub fn send(
        &mut self,
        route: &Route,
        role: Role,
        connection: u64,
        frame: Vec<u8>,
        now: i64,
    ) -> Result<Delivery, RelayRefusal> {
        let state = self.routes.get_mut(route).ok_or(RelayRefusal::NotJoined)?;
        let sender = state.side(role);
        if sender.connection != Some(connection) {
            return Err(RelayRefusal::NotJoined);
        }
        if frame.len() > MAX_RELAYED_FRAME {
            return Err(RelayRefusal::TooLarge);
        }
        take_token(sender, now)?;
        let receiver = state.side(role.peer());
        if let Some(peer) = receiver.connection {
            return Ok(Delivery::Forward(peer));
        }
        while receiver
            .waiting
            .front()
            .is_some_and(|(at, _)| now - at >= MAILBOX_TTL_MS)
        {
            if let Some((_, old)) = receiver.waiting.pop_front() {
                receiver.waiting_bytes -= old.len();
            }
        }
        if receiver.waiting.len() >= MAX_QUEUED_FRAMES
            || receiver.waiting_bytes + frame.len() > MAX_QUEUED_BYTES
        {
            return Err(RelayRefusal::MailboxFull);
        }
        receiver.waiting_bytes += frame.len();
        receiver.waiting.push_back((now, frame));
        Ok(Delivery::Queued)
    }

    /// Drops expired waiting frames and routes with nobody connected and nothing waiting.
    pub fn expire(&mut self, now: i64) {
        for state in self.routes.values_mut() {
            for side in [&mut state.bridge, &mut state.vault] {
                side.waiting.retain(|(at, _)| now - at < MAILBOX_TTL_MS);
                side.waiting_bytes = side.waiting.iter().map(|(_, f)| f.len()).sum();
            }
        }
        self.routes.retain(|_, state| !state.idle());
    }

    /// The connection of `role` on `route`, if it is connected (to tell it the other side
    /// came or went).
    pub fn connection(&self, route: &Route, role: Role) -> Option<u64> {
        let state = self.routes.get(route)?;
        match role {
            Role::Bridge => state.bridge.connection,
            Role::Vault => state.vault.connection,
        }
    }

    /// Routes held.
    pub fn routes(&self) -> usize {
        self.routes.len()
    }

    /// Frames and bytes waiting on `route` for `role` (for tests and the relay's metrics; never
    /// the frames themselves).
    pub fn waiting(&self, route: &Route, role: Role) -> (usize, usize) {
        self.routes.get(route).map_or((0, 0), |state| {
            let side = match role {
                Role::Bridge => &state.bridge,
                Role::Vault => &state.vault,
            };
            (side.waiting.len(), side.waiting_bytes)
        })
    }
}

fn take_token(side: &mut Side, now: i64) -> Result<(), RelayRefusal> {
    let full = u64::from(FRAMES_PER_MINUTE) * UNIT;
    let elapsed = u64::try_from(now.saturating_sub(side.refilled_at)).unwrap_or(0);
    side.tokens = side
        .tokens
        .saturating_add(elapsed.saturating_mul(u64::from(FRAMES_PER_MINUTE)))
        .min(full);
    side.refilled_at = side.refilled_at.max(now);
    if side.tokens >= UNIT {
        side.tokens -= UNIT;
        Ok(())
    } else {
        let missing = UNIT - side.tokens;
        let per_ms = u64::from(FRAMES_PER_MINUTE);
        let wait = missing.div_ceil(per_ms);
        Err(RelayRefusal::RateLimited {
            retry_after_ms: i64::try_from(wait).unwrap_or(i64::MAX),
        })
    }
}
