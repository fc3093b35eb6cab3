//! `tacit-relay` on a real socket, with WebSocket clients as the bridge, the vault and a
//! stranger: pairing through it, frames it cannot read, a mailbox for an offline vault, a
//! connected side it will not hand to a stranger, and replays of what it carried refused by the
//! vault.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use tacit_pairing::{FrameError, MailboxId, Paired, PairingCode, Role, Session, Start};
use tacit_relay::RelayState;
use tokio::sync::mpsc;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

struct Relay {
    port: u16,
    seen: mpsc::UnboundedReceiver<Vec<u8>>,
    clock: Arc<AtomicI64>,
    _runtime: tokio::runtime::Runtime,
}

impl Relay {
    fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let clock = Arc::new(AtomicI64::new(1_800_000_000_000));
        let (tx, seen) = mpsc::unbounded_channel();
        let c = clock.clone();
        let state = RelayState::new(Arc::new(move || c.load(Ordering::SeqCst))).observed(tx);
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        runtime.spawn(tacit_relay::serve(listener, state));
        Self {
            port,
            seen,
            clock,
            _runtime: runtime,
        }
    }

    fn connect(&self, route: &str, role: &str) -> Socket {
        let url = format!("ws://127.0.0.1:{}/v1/relay/{route}/{role}", self.port);
        let (mut socket, _) = tungstenite::connect(url).unwrap();
        if let MaybeTlsStream::Plain(s) = socket.get_mut() {
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        }
        socket
    }

    /// Every frame the relay carried so far.
    fn seen(&mut self) -> Vec<Vec<u8>> {
        let mut all = Vec::new();
        while let Ok(frame) = self.seen.try_recv() {
            all.push(frame);
        }
        all
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

fn code() -> PairingCode {
    PairingCode::from_random([9, 8, 7, 6, 5])
}

/// Pairs a bridge and a vault through the relay at `mailbox`.
fn pair_through(relay: &Relay, mailbox: &MailboxId) -> (Paired, Paired) {
    let route = mailbox.hex();
    let mut bridge = relay.connect(&route, "bridge");
    let (b, msg_a) = Start::new(Role::Bridge, &code(), mailbox, [1; 32]);
    send(&mut bridge, &msg_a);
    // The vault comes later: the bridge's message waited in its mailbox.
    let mut vault = relay.connect(&route, "vault");
    let (v, msg_b) = Start::new(Role::Vault, &code(), mailbox, [2; 32]);
    let got_a = recv(&mut vault).unwrap();
    send(&mut vault, &msg_b);
    let v = v.finish(&got_a).unwrap();
    let b = b.finish(&recv(&mut bridge).unwrap()).unwrap();
    send(&mut bridge, &b.tag());
    let got_tag_b = recv(&mut vault).unwrap();
    send(&mut vault, &v.tag());
    let v = v.confirm(&got_tag_b).unwrap();
    let b = b.confirm(&recv(&mut bridge).unwrap()).unwrap();
    (b, v)
}

#[test]
fn a_bridge_and_a_vault_pair_and_talk_through_the_relay_which_sees_only_ciphertext() {
    let mut relay = Relay::start();
    let mailbox = MailboxId::from_random([3; 16]);
    let (b, v) = pair_through(&relay, &mailbox);
    assert_eq!(b.fingerprint(), v.fingerprint());

    // A connection on the pairing's own route.
    let mut bridge = relay.connect(&b.route(), "bridge");
    let mut vault = relay.connect(&v.route(), "vault");
    send(&mut bridge, &[4; 16]);
    send(&mut vault, &[5; 16]);
    let vault_nonce: [u8; 16] = recv(&mut bridge).unwrap().try_into().unwrap();
    let bridge_nonce: [u8; 16] = recv(&mut vault).unwrap().try_into().unwrap();
    let mut bs = Session::new(&b, &[4; 16], &vault_nonce);
    let mut vs = Session::new(&v, &bridge_nonce, &[5; 16]);
    let call = br#"{"tool":"income_below_30000","input":{}}"#;
    send(&mut bridge, &bs.seal(call).unwrap());
    assert_eq!(
        vs.open(&recv(&mut vault).unwrap()).unwrap().as_slice(),
        call
    );
    let answer = br#"{"ok":true,"result":{"satisfied":true}}"#;
    send(&mut vault, &vs.seal(answer).unwrap());
    assert_eq!(
        bs.open(&recv(&mut bridge).unwrap()).unwrap().as_slice(),
        answer
    );

    // What the relay carried: no call, no answer, no code.
    let seen = relay.seen();
    assert!(seen.len() >= 8, "{}", seen.len());
    for frame in &seen {
        for needle in [&b"income"[..], b"satisfied", code().display().as_bytes()] {
            assert!(
                !frame.windows(needle.len()).any(|w| w == needle),
                "the relay saw {:?}",
                String::from_utf8_lossy(needle)
            );
        }
    }
}

#[test]
fn a_stranger_cannot_take_a_connected_side_and_a_replay_of_what_the_relay_carried_is_refused() {
    let mut relay = Relay::start();
    let mailbox = MailboxId::from_random([6; 16]);
    let (b, v) = pair_through(&relay, &mailbox);
    let route = b.route();
    let mut bridge = relay.connect(&route, "bridge");
    let mut vault = relay.connect(&route, "vault");
    // A stranger who knows the route: the vault's side is taken.
    let mut stranger = relay.connect(&route, "vault");
    let refused = recv(&mut stranger).unwrap_err();
    assert!(refused.contains("\"busy\""), "{refused}");
    // Junk paths.
    for path in [format!("{route}/admin"), "zz/bridge".to_owned()] {
        let url = format!("ws://127.0.0.1:{}/v1/relay/{path}", relay.port);
        assert!(tungstenite::connect(url).is_err(), "{path}");
    }

    send(&mut bridge, &[1; 16]);
    send(&mut vault, &[2; 16]);
    recv(&mut bridge).unwrap();
    recv(&mut vault).unwrap();
    let mut bs = Session::new(&b, &[1; 16], &[2; 16]);
    let mut vs = Session::new(&v, &[1; 16], &[2; 16]);
    relay.seen();
    send(&mut bridge, &bs.seal(b"grant?").unwrap());
    assert_eq!(
        vs.open(&recv(&mut vault).unwrap()).unwrap().as_slice(),
        b"grant?"
    );
    let carried = relay.seen();
    assert_eq!(carried.len(), 1);

    // The bridge goes; a stranger takes its side and replays what the relay carried, and a
    // frame of its own making.
    drop(bridge);
    std::thread::sleep(Duration::from_millis(200));
    let mut stranger = relay.connect(&route, "bridge");
    send(&mut stranger, &carried[0]);
    let replayed = recv(&mut vault).unwrap();
    assert_eq!(
        vs.open(&replayed).unwrap_err(),
        FrameError::Replayed {
            expected: 1,
            got: 0
        }
    );
    send(&mut stranger, &[0; 40]);
    assert_eq!(
        vs.open(&recv(&mut vault).unwrap()).unwrap_err(),
        FrameError::Forged
    );
    // The vault's session is unharmed: the real bridge's next frame opens.
    let next = bs.seal(b"still me").unwrap();
    send(&mut stranger, &next);
    assert_eq!(
        vs.open(&recv(&mut vault).unwrap()).unwrap().as_slice(),
        b"still me"
    );
}

#[test]
fn frames_for_an_offline_vault_wait_in_order_then_expire() {
    let relay = Relay::start();
    let route = "ab".repeat(16);
    let mut bridge = relay.connect(&route, "bridge");
    for i in 0..3u8 {
        send(&mut bridge, &[i; 32]);
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut vault = relay.connect(&route, "vault");
    for i in 0..3u8 {
        assert_eq!(recv(&mut vault).unwrap(), vec![i; 32]);
    }
    drop(vault);
    std::thread::sleep(Duration::from_millis(200));
    send(&mut bridge, &[9; 32]);
    std::thread::sleep(Duration::from_millis(200));
    // Eleven minutes later the frame is gone.
    relay.clock.fetch_add(
        tacit_pairing::relay::MAILBOX_TTL_MS + 60_000,
        Ordering::SeqCst,
    );
    send(&mut bridge, &[10; 32]);
    std::thread::sleep(Duration::from_millis(200));
    let mut vault = relay.connect(&route, "vault");
    assert_eq!(recv(&mut vault).unwrap(), vec![10; 32]);
}

/// The next text message.
fn text(socket: &mut Socket) -> String {
    loop {
        if let Message::Text(t) = socket.read().unwrap() {
            return t.to_string();
        }
    }
}

#[test]
fn each_side_is_told_when_the_other_comes_and_goes_and_nothing_more() {
    let relay = Relay::start();
    let route = "cd".repeat(16);
    let mut bridge = relay.connect(&route, "bridge");
    let mut vault = relay.connect(&route, "vault");
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    assert_eq!(
        text(&mut vault),
        r#"{"peer":"joined"}"#,
        "told the bridge is there"
    );
    drop(vault);
    assert_eq!(text(&mut bridge), r#"{"peer":"left"}"#);
    let mut vault = relay.connect(&route, "vault");
    assert_eq!(text(&mut bridge), r#"{"peer":"joined"}"#);
    send(&mut vault, &[7; 32]);
    assert_eq!(recv(&mut bridge).unwrap(), vec![7; 32]);
}
