//! Several instances sharing routing through one PostgreSQL (see the crate docs, "Several
//! instances"): the tables, the doorbells, the lease, the delivery loop.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use sqlx::postgres::{PgListener, PgPool, PgPoolOptions};
use sqlx::{Postgres, Row, Transaction};
use tacit_pairing::Role;
use tacit_pairing::relay::{
    Doorbell, Holder, Join, MAX_RELAYED_FRAME, MAX_ROUTES, RelayRefusal, Route, SendBudget,
    expires_at, join_rule, mailbox_admits, side_name,
};
use tacit_store::{Db, Migration};
use tokio::sync::{Notify, mpsc};

use crate::Out;

/// The notification channel every instance listens on.
pub const CHANNEL: &str = "tacit_relay";

/// How often an instance renews its lease.
const RENEW_EVERY: Duration = Duration::from_secs(5);
/// An instance that has not renewed its lease for this long gives up the sides it holds (the
/// lease itself is 30 seconds, in the database's clock: see `RENEW`).
const GIVE_UP_AFTER: Duration = Duration::from_secs(25);
/// How long a pooled query waits for a connection.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections one instance opens to the database, the listener's included.
const POOL_SIZE: u32 = 10;
/// The longest wait between two attempts to reach the database again.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Frames read from the table at once by a delivering connection.
const DELIVERY_BATCH: i64 = 64;

/// The relay's tables (migration set `relay`, applied at start with `tacit-store`).
pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "instances, presence and frames",
    sql: r#"
CREATE TABLE relay_instances (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    alive_until TIMESTAMPTZ NOT NULL
);
CREATE TABLE relay_presence (
    route TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('bridge', 'vault')),
    instance BIGINT NOT NULL,
    connection BIGINT NOT NULL,
    PRIMARY KEY (route, role)
);
CREATE INDEX relay_presence_instance ON relay_presence (instance);
CREATE TABLE relay_frames (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    route TEXT NOT NULL,
    to_role TEXT NOT NULL CHECK (to_role IN ('bridge', 'vault')),
    frame BYTEA NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX relay_frames_side ON relay_frames (route, to_role, id);
CREATE INDEX relay_frames_expiry ON relay_frames (expires_at);
"#,
}];

const NEW_INSTANCE: &str = "INSERT INTO relay_instances (alive_until) \
     VALUES (clock_timestamp() + interval '30 seconds') RETURNING id";
const RENEW: &str = "INSERT INTO relay_instances (id, alive_until) OVERRIDING SYSTEM VALUE \
     VALUES ($1, clock_timestamp() + interval '30 seconds') \
     ON CONFLICT (id) DO UPDATE SET alive_until = EXCLUDED.alive_until";
const LOCK_SIDE: &str = "SELECT pg_advisory_xact_lock(hashtextextended($1, 7))";
const HOLDER: &str = "SELECT EXISTS (SELECT 1 FROM relay_instances i \
     WHERE i.id = p.instance AND i.alive_until >= clock_timestamp()) AS live \
     FROM relay_presence p WHERE p.route = $1 AND p.role = $2";
const LIVE_PEER: &str = "SELECT EXISTS (SELECT 1 FROM relay_presence p JOIN relay_instances i \
     ON i.id = p.instance WHERE p.route = $1 AND p.role = $2 \
     AND i.alive_until >= clock_timestamp())";
const DROP_HOLDER: &str = "DELETE FROM relay_presence WHERE route = $1 AND role = $2";
const ROUTE_KNOWN: &str = "SELECT EXISTS (SELECT 1 FROM relay_presence WHERE route = $1) \
     OR EXISTS (SELECT 1 FROM relay_frames WHERE route = $1 AND expires_at > $2)";
const ROUTES_HELD: &str = "SELECT count(*) FROM (SELECT route FROM relay_presence \
     UNION SELECT route FROM relay_frames WHERE expires_at > $1) r";
const CLAIM: &str = "INSERT INTO relay_presence (route, role, instance, connection) \
     VALUES ($1, $2, $3, $4)";
const RELEASE: &str = "DELETE FROM relay_presence \
     WHERE route = $1 AND role = $2 AND instance = $3 AND connection = $4";
const RELEASE_ALL_MINE: &str =
    "DELETE FROM relay_presence WHERE instance = $1 RETURNING route, role";
const RELEASE_DEAD: &str = "DELETE FROM relay_presence p WHERE NOT EXISTS \
     (SELECT 1 FROM relay_instances i WHERE i.id = p.instance \
     AND i.alive_until >= clock_timestamp()) RETURNING route, role";
const WITHDRAW: &str = "DELETE FROM relay_instances WHERE id = $1";
const FORGET_DEAD: &str = "DELETE FROM relay_instances WHERE alive_until < clock_timestamp()";
const NOTIFY: &str = "SELECT pg_notify('tacit_relay', $1)";
const DROP_EXPIRED: &str = "DELETE FROM relay_frames WHERE expires_at <= $1";
/// The side's frames still alive (expired ones no longer count; the sweep deletes them) and
/// whether the side is connected, in one round trip.
const WAITING: &str = "SELECT count(*), COALESCE(sum(octet_length(frame)), 0)::BIGINT, \
     EXISTS (SELECT 1 FROM relay_presence p JOIN relay_instances i ON i.id = p.instance \
     WHERE p.route = $1 AND p.role = $2 AND i.alive_until >= clock_timestamp()) \
     FROM relay_frames WHERE route = $1 AND to_role = $2 AND expires_at > $3";
/// Stores a frame and rings its doorbell (delivered when the transaction commits).
const STORE: &str = "WITH stored AS (INSERT INTO relay_frames (route, to_role, frame, expires_at) \
     VALUES ($1, $2, $3, $4) RETURNING id) SELECT pg_notify('tacit_relay', $5) FROM stored";
const NEXT_FRAMES: &str = "SELECT id, frame FROM relay_frames \
     WHERE route = $1 AND to_role = $2 AND expires_at > $3 ORDER BY id LIMIT $4";
const DELIVERED: &str = "DELETE FROM relay_frames WHERE route = $1 AND to_role = $2 AND id <= $3";

/// Why the relay could not start on its database (never the URL: it may hold a password).
#[derive(Debug, thiserror::Error)]
pub enum SharedError {
    #[error("the relay shares routing only through PostgreSQL (postgres://…)")]
    NotPostgres,
    #[error("the relay's database: {0}")]
    Store(#[from] tacit_store::StoreError),
    #[error("cannot reach the relay's database: {0}")]
    Database(#[from] sqlx::Error),
}

type Key = (Route, &'static str);

fn key(route: &Route, role: Role) -> Key {
    (route.clone(), side_name(role))
}

/// How the instance reaches one connection it holds.
pub(crate) struct Signal {
    /// Frames are waiting in the table for this side.
    pub(crate) wake: Notify,
    /// The instance gave up its sides (it lost the database): close with `unavailable`.
    pub(crate) dropped: AtomicBool,
}

struct Local {
    connection: u64,
    out: mpsc::Sender<Out>,
    signal: Arc<Signal>,
}

/// One instance's share of the routing.
pub(crate) struct Shared {
    pool: PgPool,
    instance: i64,
    online: AtomicBool,
    sides: Mutex<HashMap<Key, Local>>,
    budgets: Mutex<HashMap<Key, SendBudget>>,
    /// Rings when the lease lapsed: the listener loop starts over.
    lapsed: Notify,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("instance", &self.instance)
            .finish_non_exhaustive()
    }
}

fn unavailable(error: &sqlx::Error) -> RelayRefusal {
    tracing::debug!(error = %error, "database refused a step");
    RelayRefusal::Unavailable
}

async fn ring(tx: &mut Transaction<'_, Postgres>, bell: &Doorbell) -> Result<(), sqlx::Error> {
    sqlx::query(NOTIFY)
        .bind(bell.encode())
        .execute(&mut **tx)
        .await
        .map(|_| ())
}

async fn lock_side(
    tx: &mut Transaction<'_, Postgres>,
    route: &Route,
    role: Role,
) -> Result<(), sqlx::Error> {
    sqlx::query(LOCK_SIDE)
        .bind(format!("{} {}", route.as_str(), side_name(role)))
        .execute(&mut **tx)
        .await
        .map(|_| ())
}

async fn live_peer(
    tx: &mut Transaction<'_, Postgres>,
    route: &Route,
    role: Role,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(LIVE_PEER)
        .bind(route.as_str())
        .bind(side_name(role))
        .fetch_one(&mut **tx)
        .await
}

/// Rings `left` for every `(route, role)` row released.
async fn ring_left(
    tx: &mut Transaction<'_, Postgres>,
    rows: Vec<sqlx::postgres::PgRow>,
) -> Result<usize, sqlx::Error> {
    let mut n = 0;
    for row in rows {
        let route: String = row.try_get(0)?;
        let role: String = row.try_get(1)?;
        if let (Ok(route), Some(role)) = (
            Route::parse(&route),
            tacit_pairing::relay::parse_side(&role),
        ) {
            ring(tx, &Doorbell::Left { route, role }).await?;
            n += 1;
        }
    }
    Ok(n)
}

/// Tells `role`'s side of `route`, if held here, that the other side `what` (presence only).
fn tell(sides: &HashMap<Key, Local>, route: &Route, role: Role, what: &'static str) {
    if let Some(local) = sides.get(&key(route, role)) {
        let _ = local.out.try_send(Out::Peer(what));
    }
}

impl Shared {
    /// Migrates, registers this instance, starts listening and renewing its lease.
    pub(crate) async fn start(url: &str) -> Result<Arc<Self>, SharedError> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(SharedError::NotPostgres);
        }
        let db = Db::open(url).await?;
        let migrated = db.migrate("relay", MIGRATIONS).await;
        db.close().await;
        migrated?;
        let pool = PgPoolOptions::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect(url)
            .await?;
        let instance: i64 = sqlx::query_scalar(NEW_INSTANCE).fetch_one(&pool).await?;
        let shared = Arc::new(Self {
            pool,
            instance,
            online: AtomicBool::new(false),
            sides: Mutex::new(HashMap::new()),
            budgets: Mutex::new(HashMap::new()),
            lapsed: Notify::new(),
        });
        // The first listener before any join, so no doorbell is missed.
        let listener = shared.listen().await?;
        shared.come_online().await?;
        tokio::spawn(shared.clone().listen_loop(Some(listener)));
        tokio::spawn(shared.clone().renew_loop());
        Ok(shared)
    }

    fn sides(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Local>> {
        self.sides.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn budgets(&self) -> std::sync::MutexGuard<'_, HashMap<Key, SendBudget>> {
        self.budgets.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Routes with a side connected to this instance.
    pub(crate) fn local_routes(&self) -> usize {
        let sides = self.sides();
        let mut routes: Vec<&Route> = sides.keys().map(|(route, _)| route).collect();
        routes.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        routes.dedup();
        routes.len()
    }

    async fn listen(&self) -> Result<PgListener, sqlx::Error> {
        let mut listener = PgListener::connect_with(&self.pool).await?;
        listener.eager_reconnect(false);
        listener.listen(CHANNEL).await?;
        Ok(listener)
    }

    /// After (re)connecting: renew the lease, release every side this instance claimed before
    /// (it closed them when it lost the database), then accept joins.
    async fn come_online(&self) -> Result<(), sqlx::Error> {
        sqlx::query(RENEW)
            .bind(self.instance)
            .execute(&self.pool)
            .await?;
        let mut tx = self.pool.begin().await?;
        let rows = sqlx::query(RELEASE_ALL_MINE)
            .bind(self.instance)
            .fetch_all(&mut *tx)
            .await?;
        ring_left(&mut tx, rows).await?;
        tx.commit().await?;
        self.online.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Lost the database: stop accepting joins and close every connection held here (each is
    /// told `unavailable`; the sides reconnect, and their frames wait in the table).
    fn go_offline(&self) -> usize {
        self.online.store(false, Ordering::SeqCst);
        let held: Vec<Local> = self.sides().drain().map(|(_, local)| local).collect();
        for local in &held {
            local.signal.dropped.store(true, Ordering::SeqCst);
            local.signal.wake.notify_one();
        }
        held.len()
    }

    /// Stopping: closes the connections held here (each told `unavailable`), releases their
    /// sides at once (their peers are told `left`) and withdraws this instance's lease, so the
    /// sides can reconnect to another instance without waiting for the lease to lapse.
    pub(crate) async fn stop(&self) {
        let closed = self.go_offline();
        let released = async {
            let mut tx = self.pool.begin().await?;
            let rows = sqlx::query(RELEASE_ALL_MINE)
                .bind(self.instance)
                .fetch_all(&mut *tx)
                .await?;
            let released = ring_left(&mut tx, rows).await?;
            sqlx::query(WITHDRAW)
                .bind(self.instance)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok::<usize, sqlx::Error>(released)
        };
        match released.await {
            Ok(released) => tracing::info!(closed, released, "stopped: sides released"),
            Err(e) => tracing::warn!(
                error = %e,
                "stopped, but could not release the sides; they are free when the lease lapses"
            ),
        }
    }

    async fn listen_loop(self: Arc<Self>, mut first: Option<PgListener>) {
        let mut backoff = Duration::from_millis(200);
        loop {
            let mut listener = match first.take() {
                Some(listener) => listener,
                None => match self.listen().await {
                    Ok(listener) => listener,
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot reach the database yet; retrying");
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                        continue;
                    }
                },
            };
            if !self.online.load(Ordering::SeqCst) {
                if let Err(e) = self.come_online().await {
                    tracing::warn!(error = %e, "reconnected listener, but the database refused; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
                tracing::info!(
                    instance = self.instance,
                    "listener reconnected to the database; accepting connections again"
                );
            }
            backoff = Duration::from_millis(200);
            let why = loop {
                tokio::select! {
                    received = listener.try_recv() => match received {
                        Ok(Some(note)) => self.dispatch(note.payload()),
                        Ok(None) => break "the database connection closed".to_owned(),
                        Err(e) => break e.to_string(),
                    },
                    () = self.lapsed.notified() => break "the lease could not be renewed".to_owned(),
                }
            };
            let closed = self.go_offline();
            tracing::warn!(
                instance = self.instance,
                reason = %why,
                closed,
                "lost the database: closed the connections held here; reconnecting the listener"
            );
        }
    }

    async fn renew_loop(self: Arc<Self>) {
        let mut renewed = Instant::now();
        let mut failing = false;
        let mut tick = tokio::time::interval(RENEW_EVERY);
        loop {
            tick.tick().await;
            match sqlx::query(RENEW)
                .bind(self.instance)
                .execute(&self.pool)
                .await
            {
                Ok(_) => {
                    renewed = Instant::now();
                    if failing {
                        tracing::info!(instance = self.instance, "lease renewed again");
                    }
                    failing = false;
                }
                Err(e) => {
                    if !failing {
                        tracing::warn!(error = %e, "cannot renew this instance's lease");
                    }
                    failing = true;
                    if renewed.elapsed() > GIVE_UP_AFTER && self.online.load(Ordering::SeqCst) {
                        self.lapsed.notify_one();
                    }
                }
            }
        }
    }

    /// A doorbell from any instance (this one included): wake or tell the side held here.
    fn dispatch(&self, payload: &str) {
        let Some(bell) = Doorbell::parse(payload) else {
            tracing::debug!("ignored a notification that is not a doorbell");
            return;
        };
        let sides = self.sides();
        match bell {
            Doorbell::Frames { route, to } => {
                if let Some(local) = sides.get(&key(&route, to)) {
                    local.signal.wake.notify_one();
                }
            }
            Doorbell::Joined { route, role } => tell(&sides, &route, role.peer(), "joined"),
            Doorbell::Left { route, role } => tell(&sides, &route, role.peer(), "left"),
        }
    }

    /// Connection `connection` claims `role`'s side of `route` across instances. Returns
    /// whether the other side is connected (anywhere).
    pub(crate) async fn join(
        &self,
        route: &Route,
        role: Role,
        connection: u64,
        out: mpsc::Sender<Out>,
        signal: Arc<Signal>,
        now: i64,
    ) -> Result<bool, RelayRefusal> {
        if !self.online.load(Ordering::SeqCst) {
            return Err(RelayRefusal::Unavailable);
        }
        {
            let mut sides = self.sides();
            let k = key(route, role);
            if sides.contains_key(&k) {
                return Err(RelayRefusal::Busy);
            }
            // Held here before the claim commits, so no doorbell for it is missed.
            sides.insert(
                k.clone(),
                Local {
                    connection,
                    out,
                    signal,
                },
            );
            self.budgets()
                .entry(k)
                .or_insert_with(|| SendBudget::new(now));
        }
        let claimed = self.claim(route, role, connection, now).await;
        if claimed.is_err() {
            self.forget(route, role, connection);
        }
        claimed
    }

    async fn claim(
        &self,
        route: &Route,
        role: Role,
        connection: u64,
        now: i64,
    ) -> Result<bool, RelayRefusal> {
        let db = |e: sqlx::Error| unavailable(&e);
        let mut tx = self.pool.begin().await.map_err(db)?;
        lock_side(&mut tx, route, role).await.map_err(db)?;
        let live: Option<bool> = sqlx::query_scalar(HOLDER)
            .bind(route.as_str())
            .bind(side_name(role))
            .fetch_optional(&mut *tx)
            .await
            .map_err(db)?;
        let holder = match live {
            None => Holder::Nobody,
            Some(true) => Holder::Live,
            Some(false) => Holder::Dead,
        };
        match join_rule(holder)? {
            Join::Replace => {
                sqlx::query(DROP_HOLDER)
                    .bind(route.as_str())
                    .bind(side_name(role))
                    .execute(&mut *tx)
                    .await
                    .map_err(db)?;
                let bell = Doorbell::Left {
                    route: route.clone(),
                    role,
                };
                ring(&mut tx, &bell).await.map_err(db)?;
            }
            Join::Take => {
                let known: bool = sqlx::query_scalar(ROUTE_KNOWN)
                    .bind(route.as_str())
                    .bind(now)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(db)?;
                if !known {
                    let held: i64 = sqlx::query_scalar(ROUTES_HELD)
                        .bind(now)
                        .fetch_one(&mut *tx)
                        .await
                        .map_err(db)?;
                    if usize::try_from(held).unwrap_or(usize::MAX) >= MAX_ROUTES {
                        return Err(RelayRefusal::Full);
                    }
                }
            }
        }
        sqlx::query(CLAIM)
            .bind(route.as_str())
            .bind(side_name(role))
            .bind(self.instance)
            .bind(i64::try_from(connection).unwrap_or(i64::MAX))
            .execute(&mut *tx)
            .await
            .map_err(db)?;
        let peer = live_peer(&mut tx, route, role.peer()).await.map_err(db)?;
        let bell = Doorbell::Joined {
            route: route.clone(),
            role,
        };
        ring(&mut tx, &bell).await.map_err(db)?;
        tx.commit().await.map_err(db)?;
        Ok(peer)
    }

    fn forget(&self, route: &Route, role: Role, connection: u64) {
        let mut sides = self.sides();
        let k = key(route, role);
        if sides.get(&k).is_some_and(|l| l.connection == connection) {
            sides.remove(&k);
        }
    }

    /// Connection `connection` left: its claim is released and the other side told.
    pub(crate) async fn leave(&self, route: &Route, role: Role, connection: u64) {
        self.forget(route, role, connection);
        let released = async {
            let mut tx = self.pool.begin().await?;
            lock_side(&mut tx, route, role).await?;
            let gone = sqlx::query(RELEASE)
                .bind(route.as_str())
                .bind(side_name(role))
                .bind(self.instance)
                .bind(i64::try_from(connection).unwrap_or(i64::MAX))
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if gone > 0 {
                let bell = Doorbell::Left {
                    route: route.clone(),
                    role,
                };
                ring(&mut tx, &bell).await?;
            }
            tx.commit().await
        };
        if let Err(e) = released.await {
            // Released when this instance reconnects, or by another once its lease lapses.
            tracing::debug!(error = %e, "could not release a side now");
        }
    }

    /// A frame from `role`'s connection `connection`: stored for the other side and its
    /// doorbell rung, or refused.
    pub(crate) async fn send(
        &self,
        route: &Route,
        role: Role,
        connection: u64,
        frame: &[u8],
        now: i64,
    ) -> Result<(), RelayRefusal> {
        let k = key(route, role);
        if self
            .sides()
            .get(&k)
            .is_none_or(|l| l.connection != connection)
        {
            return Err(RelayRefusal::NotJoined);
        }
        if frame.len() > MAX_RELAYED_FRAME {
            return Err(RelayRefusal::TooLarge);
        }
        self.budgets()
            .entry(k)
            .or_insert_with(|| SendBudget::new(now))
            .take(now)?;
        let to = role.peer();
        let db = |e: sqlx::Error| unavailable(&e);
        let mut tx = self.pool.begin().await.map_err(db)?;
        lock_side(&mut tx, route, to).await.map_err(db)?;
        let (frames, bytes, connected): (i64, i64, bool) = sqlx::query_as(WAITING)
            .bind(route.as_str())
            .bind(side_name(to))
            .bind(now)
            .fetch_one(&mut *tx)
            .await
            .map_err(db)?;
        mailbox_admits(
            connected,
            usize::try_from(frames).unwrap_or(usize::MAX),
            usize::try_from(bytes).unwrap_or(usize::MAX),
            frame.len(),
        )?;
        let bell = Doorbell::Frames {
            route: route.clone(),
            to,
        };
        sqlx::query(STORE)
            .bind(route.as_str())
            .bind(side_name(to))
            .bind(frame)
            .bind(expires_at(now))
            .bind(bell.encode())
            .execute(&mut *tx)
            .await
            .map_err(db)?;
        tx.commit().await.map_err(db)
    }

    /// The frames waiting for `role`'s side of `route` (alive at `now`), oldest first, at most
    /// one batch; and the id to pass to [`Shared::delivered`] once they are written.
    pub(crate) async fn next_frames(
        &self,
        route: &Route,
        role: Role,
        now: i64,
    ) -> Result<(Vec<Vec<u8>>, i64), RelayRefusal> {
        let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(NEXT_FRAMES)
            .bind(route.as_str())
            .bind(side_name(role))
            .bind(now)
            .bind(DELIVERY_BATCH)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| unavailable(&e))?;
        let last = rows.last().map_or(0, |(id, _)| *id);
        Ok((rows.into_iter().map(|(_, frame)| frame).collect(), last))
    }

    /// The frames up to `last` were written to the side's connection: delete them.
    pub(crate) async fn delivered(
        &self,
        route: &Route,
        role: Role,
        last: i64,
    ) -> Result<(), RelayRefusal> {
        sqlx::query(DELIVERED)
            .bind(route.as_str())
            .bind(side_name(role))
            .bind(last)
            .execute(&self.pool)
            .await
            .map(|_| ())
            .map_err(|e| unavailable(&e))
    }

    /// Drops expired frames, the claims of instances whose lease lapsed (their sides' peers are
    /// told `left`), those instances, and send budgets that are full and idle.
    pub(crate) async fn sweep(&self, now: i64) {
        let swept = async {
            sqlx::query(DROP_EXPIRED)
                .bind(now)
                .execute(&self.pool)
                .await?;
            let mut tx = self.pool.begin().await?;
            let rows = sqlx::query(RELEASE_DEAD).fetch_all(&mut *tx).await?;
            let released = ring_left(&mut tx, rows).await?;
            sqlx::query(FORGET_DEAD).execute(&mut *tx).await?;
            tx.commit().await?;
            Ok::<usize, sqlx::Error>(released)
        };
        match swept.await {
            Ok(0) => {}
            Ok(released) => {
                tracing::info!(released, "released sides held by instances that are gone");
            }
            Err(e) => tracing::debug!(error = %e, "sweep failed; next time"),
        }
        let sides: std::collections::HashSet<Key> = self.sides().keys().cloned().collect();
        self.budgets()
            .retain(|k, budget| sides.contains(k) || !budget.is_full(now));
    }
}
