//! Two `tacit-relay` instances (two runtimes, two loopback ports) sharing one real, throw-away
//! PostgreSQL: the bridge on one, the vault on the other. Frames and presence cross, in order; an
//! offline vault's mailbox is the table, holding exactly the bytes sent; a second vault on the
//! other instance is refused as on one; a stranger gets nothing; a burst arrives whole; losing
//! the database is said, not silent. Without PostgreSQL these tests fail with the install
//! command; they never skip.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::net::TcpStream;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use sqlx::postgres::PgPool;
use tacit_pairing::relay::{FRAMES_PER_MINUTE, MAILBOX_TTL_MS, MAX_QUEUED_FRAMES};
use tacit_pairing::{FrameError, MailboxId, PairingCode, Role, Session, Start};
use tacit_relay::RelayState;
use tacit_store::testing::PgCluster;
use tokio::sync::mpsc;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

const T0: i64 = 1_800_000_000_000;

fn cluster() -> &'static PgCluster {
    static CLUSTER: OnceLock<PgCluster> = OnceLock::new();
    CLUSTER.get_or_init(|| PgCluster::start().unwrap_or_else(|e| panic!("{e}")))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// A fresh database on the cluster, a pool on it for the test's own looks, and the relays' clock.
struct Db {
    url: String,
    pool: PgPool,
    clock: Arc<AtomicI64>,
    rt: tokio::runtime::Runtime,
}

impl Db {
    fn fresh(name: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let rt = runtime();
        let name = format!("{name}_{}", N.fetch_add(1, Ordering::Relaxed));
        let url = rt.block_on(cluster().create_database(&name)).unwrap();
        let pool = rt.block_on(PgPool::connect(&url)).unwrap();
        Self {
            url,
            pool,
            clock: Arc::new(AtomicI64::new(T0)),
            rt,
        }
    }

    fn frames(&self) -> Vec<(String, String, Vec<u8>, i64)> {
        self.rt
            .block_on(
                sqlx::query_as(
                    "SELECT route, to_role, frame, expires_at FROM relay_frames ORDER BY id",
                )
                .fetch_all(&self.pool),
            )
            .unwrap()
    }

    fn columns(&self, table: &str) -> Vec<String> {
        self.rt
            .block_on(
                sqlx::query_scalar(
                    "SELECT column_name::TEXT FROM information_schema.columns \
                     WHERE table_name = $1 ORDER BY ordinal_position",
                )
                .bind(table)
                .fetch_all(&self.pool),
            )
            .unwrap()
    }

    fn run(&self, sql: &'static str) {
        self.rt
            .block_on(sqlx::query(sql).execute(&self.pool))
            .unwrap();
    }
}

/// One relay instance on its own runtime and port.
struct Instance {
    port: u16,
    seen: mpsc::UnboundedReceiver<Vec<u8>>,
    state: RelayState,
    runtime: tokio::runtime::Runtime,
}

impl Instance {
    fn start(db: &Db) -> Self {
        let runtime = runtime();
        let (tx, seen) = mpsc::unbounded_channel();
        let c = db.clock.clone();
        let state = runtime
            .block_on(RelayState::shared(
                &db.url,
                Arc::new(move || c.load(Ordering::SeqCst)),
            ))
            .unwrap()
            .observed(tx);
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        runtime.spawn(tacit_relay::serve(listener, state.clone()));
        Self {
            port,
            seen,
            state,
            runtime,
        }
    }

    /// What the instance does when the process is told to stop.
    fn stop(&self) {
        self.runtime.block_on(self.state.stop());
    }

    fn connect(&self, route: &str, role: &str) -> Socket {
        let url = format!("ws://127.0.0.1:{}/v1/relay/{route}/{role}", self.port);
        let (mut socket, _) = tungstenite::connect(url).unwrap();
        timeout(&mut socket, Duration::from_secs(10));
        socket
    }

    fn seen(&mut self) -> Vec<Vec<u8>> {
        let mut all = Vec::new();
        while let Ok(frame) = self.seen.try_recv() {
            all.push(frame);
        }
        all
    }
}

fn timeout(socket: &mut Socket, after: Duration) {
    if let MaybeTlsStream::Plain(s) = socket.get_mut() {
        s.set_read_timeout(Some(after)).unwrap();
    }
}

fn send(socket: &mut Socket, frame: &[u8]) {
    socket.send(Message::Binary(frame.to_vec().into())).unwrap();
}

/// The next binary message, or the text of a refusal (presence news is skipped).
fn recv(socket: &mut Socket) -> Result<Vec<u8>, String> {
    loop {
        match socket.read().unwrap() {
            Message::Binary(b) => return Ok(b.to_vec()),
            Message::Text(t) if t.contains("\"peer\"") => {}
            Message::Text(t) => return Err(t.to_string()),
            Message::Close(_) => return Err("closed".into()),
            _ => {}
        }
    }
}

/// The next text message.
fn text(socket: &mut Socket) -> String {
    loop {
        if let Message::Text(t) = socket.read().unwrap() {
            return t.to_string();
        }
    }
}

/// Nothing at all arrives within `wait`.
fn silent(socket: &mut Socket, wait: Duration) {
    timeout(socket, wait);
    match socket.read() {
        Err(tungstenite::Error::Io(e))
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) => {}
        other => panic!("expected nothing, got {other:?}"),
    }
    timeout(socket, Duration::from_secs(10));
}

fn settle() {
    std::thread::sleep(Duration::from_millis(300));
}

fn code() -> PairingCode {
    PairingCode::from_random([9, 8, 7, 6, 5])
}

#[test]
fn a_bridge_on_one_instance_and_a_vault_on_another_pair_and_talk_in_order_both_ways() {
    let db = Db::fresh("cross");
    let mut one = Instance::start(&db);
    let mut two = Instance::start(&db);
    let mailbox = MailboxId::from_random([3; 16]);
    let route = mailbox.hex();

    // Pairing: the bridge's first message waits in the table until the vault comes, on the
    // other instance.
    let mut bridge = one.connect(&route, "bridge");
    let (b, msg_a) = Start::new(Role::Bridge, &code(), &mailbox, [1; 32]);
    send(&mut bridge, &msg_a);
    let mut vault = two.connect(&route, "vault");
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    assert_eq!(text(&mut vault), r#"{"peer":"joined"}"#);
    let (v, msg_b) = Start::new(Role::Vault, &code(), &mailbox, [2; 32]);
    let got_a = recv(&mut vault).unwrap();
    assert_eq!(got_a, msg_a);
    send(&mut vault, &msg_b);
    let v = v.finish(&got_a).unwrap();
    let b = b.finish(&recv(&mut bridge).unwrap()).unwrap();
    send(&mut bridge, &b.tag());
    let got_tag_b = recv(&mut vault).unwrap();
    send(&mut vault, &v.tag());
    let v = v.confirm(&got_tag_b).unwrap();
    let b = b.confirm(&recv(&mut bridge).unwrap()).unwrap();
    assert_eq!(b.fingerprint(), v.fingerprint());
    drop(bridge);
    drop(vault);

    // The paired route, across the two instances: sealed frames, in order, both ways.
    let mut bridge = one.connect(&b.route(), "bridge");
    let mut vault = two.connect(&v.route(), "vault");
    send(&mut bridge, &[4; 16]);
    send(&mut vault, &[5; 16]);
    let vault_nonce: [u8; 16] = recv(&mut bridge).unwrap().try_into().unwrap();
    let bridge_nonce: [u8; 16] = recv(&mut vault).unwrap().try_into().unwrap();
    let mut bs = Session::new(&b, &[4; 16], &vault_nonce);
    let mut vs = Session::new(&v, &bridge_nonce, &[5; 16]);
    for i in 0..10 {
        let call = format!(r#"{{"tool":"income_below_30000","n":{i}}}"#);
        send(&mut bridge, &bs.seal(call.as_bytes()).unwrap());
        let answer = format!(r#"{{"ok":true,"satisfied":true,"n":{i}}}"#);
        send(&mut vault, &vs.seal(answer.as_bytes()).unwrap());
    }
    for i in 0..10 {
        // A reordered frame would be refused by the session: these open in order.
        let call = vs.open(&recv(&mut vault).unwrap()).unwrap();
        assert_eq!(
            call.as_slice(),
            format!(r#"{{"tool":"income_below_30000","n":{i}}}"#).as_bytes()
        );
        let answer = bs.open(&recv(&mut bridge).unwrap()).unwrap();
        assert_eq!(
            answer.as_slice(),
            format!(r#"{{"ok":true,"satisfied":true,"n":{i}}}"#).as_bytes()
        );
    }

    // Presence crosses: the vault goes, the bridge is told; it comes back on the first instance.
    drop(vault);
    assert_eq!(text(&mut bridge), r#"{"peer":"left"}"#);
    let mut vault = one.connect(&v.route(), "vault");
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    assert_eq!(text(&mut vault), r#"{"peer":"joined"}"#);
    send(&mut vault, &[7; 32]);
    assert_eq!(recv(&mut bridge).unwrap(), vec![7; 32]);

    // The bridge goes; a stranger takes its side on the other instance and replays a frame the
    // relay carried, then forges one: the vault's session refuses both and is unharmed.
    let carried = bs.seal(b"grant?").unwrap();
    send(&mut bridge, &carried);
    assert_eq!(
        vs.open(&recv(&mut vault).unwrap()).unwrap().as_slice(),
        b"grant?"
    );
    drop(bridge);
    assert_eq!(text(&mut vault), r#"{"peer":"left"}"#);
    let mut stranger = two.connect(&b.route(), "bridge");
    send(&mut stranger, &carried);
    assert!(matches!(
        vs.open(&recv(&mut vault).unwrap()).unwrap_err(),
        FrameError::Replayed { .. }
    ));
    send(&mut stranger, &[0; 40]);
    assert_eq!(
        vs.open(&recv(&mut vault).unwrap()).unwrap_err(),
        FrameError::Forged
    );
    send(&mut stranger, &bs.seal(b"still me").unwrap());
    assert_eq!(
        vs.open(&recv(&mut vault).unwrap()).unwrap().as_slice(),
        b"still me"
    );

    // What both instances carried: no call, no answer, no code; and nothing is left in the table.
    let mut seen = one.seen();
    seen.extend(two.seen());
    assert!(seen.len() >= 31, "{}", seen.len());
    for frame in &seen {
        for needle in [&b"income"[..], b"satisfied", code().display().as_bytes()] {
            assert!(
                !frame.windows(needle.len()).any(|w| w == needle),
                "the relay saw {:?}",
                String::from_utf8_lossy(needle)
            );
        }
    }
    settle();
    assert!(db.frames().is_empty());
}

#[test]
fn an_offline_vaults_mailbox_is_the_table_holding_exactly_the_bytes_sent_and_it_expires() {
    let db = Db::fresh("mailbox");
    let one = Instance::start(&db);
    let two = Instance::start(&db);
    let route = "ab".repeat(16);
    let mut bridge = one.connect(&route, "bridge");
    let sent: Vec<Vec<u8>> = (0..3u8)
        .map(|i| vec![i ^ 0x5a; 40 + usize::from(i)])
        .collect();
    for frame in &sent {
        send(&mut bridge, frame);
    }
    settle();
    // The table holds the frames exactly as sent, for the vault, with their expiry: nothing
    // else of value (no address, no key, no plaintext the relay never had).
    let rows = db.frames();
    assert_eq!(rows.len(), 3);
    for (row, frame) in rows.iter().zip(&sent) {
        assert_eq!(row.0, route);
        assert_eq!(row.1, "vault");
        assert_eq!(&row.2, frame);
        assert_eq!(row.3, T0 + MAILBOX_TTL_MS);
    }
    assert_eq!(
        db.columns("relay_frames"),
        ["id", "route", "to_role", "frame", "expires_at"]
    );
    assert_eq!(
        db.columns("relay_presence"),
        ["route", "role", "instance", "connection"]
    );
    assert_eq!(db.columns("relay_instances"), ["id", "alive_until"]);

    // The vault joins on the other instance: the mailbox, in order, then the table is empty.
    let mut vault = two.connect(&route, "vault");
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    for frame in &sent {
        assert_eq!(&recv(&mut vault).unwrap(), frame);
    }
    settle();
    assert!(db.frames().is_empty());

    // Offline again: a frame waits, eleven minutes pass, it is gone; a later one arrives.
    drop(vault);
    assert_eq!(text(&mut bridge), r#"{"peer":"left"}"#);
    send(&mut bridge, &[9; 32]);
    settle();
    db.clock
        .fetch_add(MAILBOX_TTL_MS + 60_000, Ordering::SeqCst);
    send(&mut bridge, &[10; 32]);
    settle();
    let mut vault = two.connect(&route, "vault");
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    assert_eq!(recv(&mut vault).unwrap(), vec![10; 32]);
    silent(&mut vault, Duration::from_millis(500));
    drop(vault);
    assert_eq!(text(&mut bridge), r#"{"peer":"left"}"#);

    // The mailbox keeps the pure rules' bound: 64 frames, then mailbox_full to the sender.
    for i in 0..MAX_QUEUED_FRAMES {
        send(&mut bridge, &[u8::try_from(i).unwrap(); 8]);
    }
    send(&mut bridge, &[0xff; 8]);
    let refused = recv(&mut bridge).unwrap_err();
    assert!(refused.contains("\"mailbox_full\""), "{refused}");
    assert_eq!(db.frames().len(), MAX_QUEUED_FRAMES);
    let mut vault = one.connect(&route, "vault");
    for i in 0..MAX_QUEUED_FRAMES {
        assert_eq!(recv(&mut vault).unwrap(), vec![u8::try_from(i).unwrap(); 8]);
    }
    silent(&mut vault, Duration::from_millis(300));
}

#[test]
fn a_second_vault_on_the_other_instance_is_busy_and_a_stranger_gets_nothing() {
    let db = Db::fresh("busy");
    let one = Instance::start(&db);
    let two = Instance::start(&db);
    let route = "cd".repeat(16);
    let mut bridge = one.connect(&route, "bridge");
    let mut vault = two.connect(&route, "vault");
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    // A second vault, on either instance: refused as one instance refuses it, and closed.
    for instance in [&one, &two] {
        let mut second = instance.connect(&route, "vault");
        let refused = recv(&mut second).unwrap_err();
        assert!(refused.contains("\"busy\""), "{refused}");
        assert_eq!(recv(&mut second).unwrap_err(), "closed");
    }
    // A stranger on another route, both sides, on both instances, gets nothing of this route.
    let other = "ef".repeat(16);
    let mut stranger_bridge = one.connect(&other, "bridge");
    let mut stranger_vault = two.connect(&other, "vault");
    assert_eq!(text(&mut stranger_bridge), r#"{"peer":"joined"}"#);
    assert_eq!(text(&mut stranger_vault), r#"{"peer":"joined"}"#);
    send(&mut bridge, &[1; 32]);
    send(&mut vault, &[2; 32]);
    assert_eq!(recv(&mut vault).unwrap(), vec![1; 32]);
    assert_eq!(recv(&mut bridge).unwrap(), vec![2; 32]);
    silent(&mut stranger_bridge, Duration::from_millis(500));
    silent(&mut stranger_vault, Duration::from_millis(200));
    // And the stranger's frames stay on its route.
    send(&mut stranger_bridge, &[6; 32]);
    assert_eq!(recv(&mut stranger_vault).unwrap(), vec![6; 32]);
    silent(&mut vault, Duration::from_millis(300));
    // Junk paths are refused.
    for path in [format!("{route}/admin"), "zz/bridge".to_owned()] {
        let url = format!("ws://127.0.0.1:{}/v1/relay/{path}", one.port);
        assert!(tungstenite::connect(url).is_err(), "{path}");
    }
    // Once the vault is gone, its side is free again, on either instance.
    drop(vault);
    assert_eq!(text(&mut bridge), r#"{"peer":"left"}"#);
    let mut vault = one.connect(&route, "vault");
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    send(&mut bridge, &[3; 32]);
    assert_eq!(recv(&mut vault).unwrap(), vec![3; 32]);
}

#[test]
fn a_side_held_by_an_instance_that_is_gone_can_be_taken_and_its_peer_is_told() {
    let db = Db::fresh("dead");
    let one = Instance::start(&db);
    let two = Instance::start(&db);
    let route = "12".repeat(16);
    let mut bridge = one.connect(&route, "bridge");
    let vault = two.connect(&route, "vault");
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    // Instance two dies without a word: its claim stays, and while its lease runs the side is
    // busy.
    drop(two);
    drop(vault);
    settle();
    let mut again = one.connect(&route, "vault");
    assert!(recv(&mut again).unwrap_err().contains("\"busy\""));
    // Its lease lapses (as 30 seconds without renewal would): the side can be taken.
    db.run(
        "UPDATE relay_instances SET alive_until = clock_timestamp() - interval '1 second' \
            WHERE id = (SELECT max(id) FROM relay_instances)",
    );
    let mut vault = one.connect(&route, "vault");
    let told = [text(&mut bridge), text(&mut bridge)];
    assert_eq!(told, [r#"{"peer":"left"}"#, r#"{"peer":"joined"}"#]);
    send(&mut bridge, &[8; 32]);
    assert_eq!(recv(&mut vault).unwrap(), vec![8; 32]);
}

#[test]
fn an_instance_that_stops_lets_go_of_its_sides_at_once() {
    let db = Db::fresh("stop");
    let one = Instance::start(&db);
    let two = Instance::start(&db);
    let route = "78".repeat(16);
    let mut bridge = one.connect(&route, "bridge");
    let mut vault = two.connect(&route, "vault");
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    two.stop();
    let refused = recv(&mut vault).unwrap_err();
    assert!(refused.contains("\"unavailable\""), "{refused}");
    assert_eq!(text(&mut bridge), r#"{"peer":"left"}"#);
    // No waiting for a lease: the vault reconnects to the other instance straight away.
    let mut vault = one.connect(&route, "vault");
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    send(&mut vault, &[4; 32]);
    assert_eq!(recv(&mut bridge).unwrap(), vec![4; 32]);
    drop(two);
}

#[test]
fn the_rate_is_counted_per_instance() {
    let db = Db::fresh("rate");
    let one = Instance::start(&db);
    let two = Instance::start(&db);
    let route = "9a".repeat(16);
    let mut vault = two.connect(&route, "vault");
    let mut bridge = one.connect(&route, "bridge");
    assert_eq!(text(&mut vault), r#"{"peer":"joined"}"#);
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    let started = Instant::now();
    for i in 0..FRAMES_PER_MINUTE {
        send(&mut bridge, &i.to_be_bytes());
    }
    send(&mut bridge, b"one too many");
    let refused = recv(&mut bridge).unwrap_err();
    assert!(refused.contains("\"rate_limited\""), "{refused}");
    for i in 0..FRAMES_PER_MINUTE {
        assert_eq!(recv(&mut vault).unwrap(), i.to_be_bytes(), "frame {i}");
    }
    eprintln!(
        "{FRAMES_PER_MINUTE} frames across two instances, then a refusal: {:?}",
        started.elapsed()
    );
    // A reconnect to the same instance keeps its bucket; the other instance has its own.
    drop(bridge);
    assert_eq!(text(&mut vault), r#"{"peer":"left"}"#);
    let mut bridge = one.connect(&route, "bridge");
    send(&mut bridge, b"still too many");
    assert!(recv(&mut bridge).unwrap_err().contains("\"rate_limited\""));
    drop(bridge);
    assert_eq!(text(&mut vault), r#"{"peer":"joined"}"#);
    assert_eq!(text(&mut vault), r#"{"peer":"left"}"#);
    let mut bridge = two.connect(&route, "bridge");
    send(&mut bridge, b"fresh bucket");
    assert_eq!(recv(&mut vault).unwrap(), b"fresh bucket");
}

#[test]
fn a_burst_of_200_frames_arrives_complete_and_in_order() {
    let db = Db::fresh("burst");
    let one = Instance::start(&db);
    let two = Instance::start(&db);
    let route = "34".repeat(16);
    let mut bridge = one.connect(&route, "bridge");
    let mut vault = two.connect(&route, "vault");
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    let frame = |i: u32| {
        let mut f = i.to_be_bytes().to_vec();
        f.extend_from_slice(&[0xa5; 200]);
        f
    };
    let started = Instant::now();
    for i in 0..200 {
        send(&mut bridge, &frame(i));
    }
    for i in 0..200 {
        assert_eq!(recv(&mut vault).unwrap(), frame(i), "frame {i}");
    }
    let elapsed = started.elapsed();
    eprintln!("200 frames of 204 bytes across two instances: {elapsed:?}");
    // And back, the other way.
    for i in 0..200 {
        send(&mut vault, &frame(i));
    }
    for i in 0..200 {
        assert_eq!(recv(&mut bridge).unwrap(), frame(i), "frame {i}");
    }
    settle();
    assert!(db.frames().is_empty());
}

#[test]
fn losing_the_database_is_told_to_the_sides_and_the_instances_come_back() {
    let db = Db::fresh("drop");
    let one = Instance::start(&db);
    let two = Instance::start(&db);
    let route = "56".repeat(16);
    let mut bridge = one.connect(&route, "bridge");
    send(&mut bridge, &[1; 32]);
    settle();
    // Every connection the relays hold to the database is cut.
    db.run(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    let refused = recv(&mut bridge).unwrap_err();
    assert!(refused.contains("\"unavailable\""), "{refused}");
    // The instances reconnect; a side that reconnects is served again, and the frame stored
    // before the cut is delivered.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut vault = loop {
        let mut vault = two.connect(&route, "vault");
        match recv(&mut vault) {
            Ok(frame) => {
                assert_eq!(frame, vec![1; 32]);
                break vault;
            }
            Err(refused) => {
                assert!(refused.contains("\"unavailable\""), "{refused}");
                assert!(Instant::now() < deadline, "instance two did not come back");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    };
    let mut bridge = loop {
        let mut bridge = one.connect(&route, "bridge");
        match text(&mut bridge).as_str() {
            r#"{"peer":"joined"}"# => break bridge,
            refused => {
                assert!(refused.contains("\"unavailable\""), "{refused}");
                assert!(Instant::now() < deadline, "instance one did not come back");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    };
    send(&mut bridge, &[2; 32]);
    assert_eq!(recv(&mut vault).unwrap(), vec![2; 32]);
    send(&mut vault, &[3; 32]);
    assert_eq!(recv(&mut bridge).unwrap(), vec![3; 32]);
}
