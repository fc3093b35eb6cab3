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
//! Several relay instances may share one database (see `tacit-relay`): the pieces they apply
//! there are here too, pure — [`mailbox_admits`] (the same bounds, plus [`MAX_IN_FLIGHT`] while
//! the receiver is connected), [`expires_at`], [`SendBudget`] (the rate, per instance),
//! [`join_rule`] (one connection per side across instances) and [`Doorbell`] (what a
//! notification between instances says: never a frame, only which side has news).
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
/// Frames on their way to a connected side and not yet written to it (the connection's
/// outgoing queue); past it a sender is refused [`RelayRefusal::MailboxFull`].
pub const MAX_IN_FLIGHT: usize = 256;

/// The name of a side in the relay's paths and tables: `bridge` or `vault`.
pub fn side_name(role: Role) -> &'static str {
    match role {
        Role::Bridge => "bridge",
        Role::Vault => "vault",
    }
}

/// The side named `name` (`bridge` or `vault`), if it is one.
pub fn parse_side(name: &str) -> Option<Role> {
    match name {
        "bridge" => Some(Role::Bridge),
        "vault" => Some(Role::Vault),
        _ => None,
    }
}

/// When a frame queued at `queued_at` stops being delivered: [`MAILBOX_TTL_MS`] later. A frame
/// is alive while `now < expires_at(queued_at)`.
pub fn expires_at(queued_at: i64) -> i64 {
    queued_at.saturating_add(MAILBOX_TTL_MS)
}

/// Whether a frame of `len` bytes may wait for a side that has `frames` frames of `bytes` bytes
/// waiting (the expired ones already dropped). While that side is connected (`connected`), up
/// to [`MAX_IN_FLIGHT`] frames may be on their way to it; while it is offline, its mailbox holds
/// at most [`MAX_QUEUED_FRAMES`] frames and [`MAX_QUEUED_BYTES`] bytes.
pub fn mailbox_admits(
    connected: bool,
    frames: usize,
    bytes: usize,
    len: usize,
) -> Result<(), RelayRefusal> {
    if len > MAX_RELAYED_FRAME {
        return Err(RelayRefusal::TooLarge);
    }
    let fits = if connected {
        frames < MAX_IN_FLIGHT
    } else {
        frames < MAX_QUEUED_FRAMES && bytes.saturating_add(len) <= MAX_QUEUED_BYTES
    };
    if fits {
        Ok(())
    } else {
        Err(RelayRefusal::MailboxFull)
    }
}

/// Who holds a side of a route when another connection asks to join it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// Nobody.
    Nobody,
    /// A connection, on an instance that is alive.
    Live,
    /// A connection on an instance that stopped renewing its lease (it crashed or lost the
    /// database): its claim is void.
    Dead,
}

/// What a join does, given who holds the side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// Take the free side.
    Take,
    /// Remove the dead holder's claim, then take the side.
    Replace,
}

/// One connection per side of a route, across instances: a side held by a live connection is
/// refused as [`RelayRefusal::Busy`] (as [`Relay::join`] does in one process); a dead
/// instance's claim is replaced.
pub fn join_rule(holder: Holder) -> Result<Join, RelayRefusal> {
    match holder {
        Holder::Nobody => Ok(Join::Take),
        Holder::Dead => Ok(Join::Replace),
        Holder::Live => Err(RelayRefusal::Busy),
    }
}

/// What one relay instance tells the others (a PostgreSQL notification's payload): which side
/// of which route has news. Never a frame: frames wait in the database, and a doorbell only
/// says where to look, so a lost doorbell loses no frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Doorbell {
    /// Frames are waiting for `to`'s side of `route`.
    Frames { route: Route, to: Role },
    /// `role`'s side of `route` connected.
    Joined { route: Route, role: Role },
    /// `role`'s side of `route` went.
    Left { route: Route, role: Role },
}

impl Doorbell {
    /// `f <route> <side>`, `j <route> <side>` or `l <route> <side>` (at most 41 bytes, far under the 8,000 a notification carries).
    pub fn encode(&self) -> String {
        let (kind, route, role) = match self {
            Doorbell::Frames { route, to } => ('f', route, *to),
            Doorbell::Joined { route, role } => ('j', route, *role),
            Doorbell::Left { route, role } => ('l', route, *role),
        };
        format!("{kind} {} {}", route.as_str(), side_name(role))
    }

    /// The doorbell `text` encodes; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split(' ');
        let kind = parts.next()?;
        let route = Route::parse(parts.next()?).ok()?;
        let role = parse_side(parts.next()?)?;
        if parts.next().is_some() {
            return None;
        }
        match kind {
            "f" => Some(Doorbell::Frames { route, to: role }),
            "j" => Some(Doorbell::Joined { route, role }),
            "l" => Some(Doorbell::Left { route, role }),
            _ => None,
        }
    }
}

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
    format!("{ws}/v1/relay/{route}/{}", side_name(role))
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
    #[error("the relay cannot reach its database now; try again shortly")]
    Unavailable,
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
            RelayRefusal::Unavailable => "unavailable",
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
    /// This side's sending budget, from its first join.
    budget: Option<SendBudget>,
}

/// One side's sending budget: a token bucket of [`FRAMES_PER_MINUTE`] frames a minute with that
/// burst. A reconnect keeps the bucket it had (it does not refill it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendBudget {
    /// Tokens, in frame units × 60,000.
    tokens: u64,
    refilled_at: i64,
}

impl SendBudget {
    /// A full bucket at `now`.
    pub fn new(now: i64) -> Self {
        Self {
            tokens: u64::from(FRAMES_PER_MINUTE) * UNIT,
            refilled_at: now,
        }
    }

    /// Spends one frame at `now`, or says how long to wait.
    pub fn take(&mut self, now: i64) -> Result<(), RelayRefusal> {
        take_token(self, now)
    }

    /// Whether the bucket would be full at `now` (an idle side: forgetting it changes nothing).
    pub fn is_full(&self, now: i64) -> bool {
        let elapsed = u64::try_from(now.saturating_sub(self.refilled_at)).unwrap_or(0);
        self.tokens
            .saturating_add(elapsed.saturating_mul(u64::from(FRAMES_PER_MINUTE)))
            >= u64::from(FRAMES_PER_MINUTE) * UNIT
    }
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
        if side.budget.is_none() {
            side.budget = Some(SendBudget::new(now));
        }
        let waiting: Vec<Vec<u8>> = side
            .waiting
            .drain(..)
            .filter(|(at, _)| now < expires_at(*at))
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
        sender
            .budget
            .get_or_insert_with(|| SendBudget::new(now))
            .take(now)?;
        let receiver = state.side(role.peer());
        if let Some(peer) = receiver.connection {
            return Ok(Delivery::Forward(peer));
        }
        while receiver
            .waiting
            .front()
            .is_some_and(|(at, _)| now >= expires_at(*at))
        {
            if let Some((_, old)) = receiver.waiting.pop_front() {
                receiver.waiting_bytes -= old.len();
            }
        }
        mailbox_admits(
            false,
            receiver.waiting.len(),
            receiver.waiting_bytes,
            frame.len(),
        )?;
        receiver.waiting_bytes += frame.len();
        receiver.waiting.push_back((now, frame));
        Ok(Delivery::Queued)
    }

    /// Drops expired waiting frames and routes with nobody connected and nothing waiting.
    pub fn expire(&mut self, now: i64) {
        for state in self.routes.values_mut() {
            for side in [&mut state.bridge, &mut state.vault] {
                side.waiting.retain(|(at, _)| now < expires_at(*at));
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

fn take_token(side: &mut SendBudget, now: i64) -> Result<(), RelayRefusal> {
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
