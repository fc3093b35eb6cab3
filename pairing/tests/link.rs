//! The bridge's per-connection framing ([`tacit_pairing::link::BridgeLink`]) against a vault
//! written here exactly as `web/src/link.rs` does it (a nonce on connecting and on each `hello`,
//! a session from the bridge's answer, the tools sent at once, each call answered), through a
//! relay that keeps each direction in order and tells the bridge when the vault comes and goes.
//! Then attacked: replay, reorder, an old session's frame, a stranger's, junk.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::collections::VecDeque;

use serde_json::json;
use tacit_pairing::bridge::{Bridge, Event, Outgoing, ToBridge, ToVault, ToolSpec};
use tacit_pairing::link::{BridgeLink, FrameStep, HELLO, NONCE_LEN, PeerStep, SealError};
use tacit_pairing::{FrameError, MailboxTag, Paired, PairingCode, Role, Session, Start};

const T: i64 = 1_800_000_000_000;

fn pair(seed: u8) -> (Paired, Paired) {
    let code = PairingCode::from_random([seed; 5]);
    let mailbox = MailboxTag::from_random([seed; 3]).id();
    let (a, msg_a) = Start::new(Role::Bridge, &code, &mailbox, [seed; 32]);
    let (b, msg_b) = Start::new(Role::Vault, &code, &mailbox, [seed ^ 0xff; 32]);
    let a = a.finish(&msg_b).unwrap();
    let b = b.finish(&msg_a).unwrap();
    let (tag_a, tag_b) = (a.tag(), b.tag());
    (a.confirm(&tag_b).unwrap(), b.confirm(&tag_a).unwrap())
}

/// Deterministic "fresh" nonces for the test.
struct Nonces(u8);

impl Nonces {
    fn next(&mut self) -> [u8; NONCE_LEN] {
        self.0 = self.0.wrapping_add(1);
        [self.0; NONCE_LEN]
    }
}

fn spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        definition: json!({ "description": name, "inputSchema": { "type": "object" } }),
        expires_at: None,
    }
}

/// The vault's side of a link, as `web/src/link.rs` does it.
struct Vault {
    paired: Paired,
    nonce: [u8; NONCE_LEN],
    session: Option<Session>,
    tools: Vec<ToolSpec>,
    nonces: Nonces,
}

impl Vault {
    fn new(paired: Paired) -> Self {
        Self {
            paired,
            nonce: [0; NONCE_LEN],
            session: None,
            tools: vec![spec("claim.g1")],
            nonces: Nonces(100),
        }
    }

    /// The socket opened: a fresh nonce.
    fn on_open(&mut self) -> Vec<Vec<u8>> {
        self.nonce = self.nonces.next();
        self.session = None;
        vec![self.nonce.to_vec()]
    }

    fn seal(&mut self, message: &ToBridge) -> Option<Vec<u8>> {
        let bytes = serde_json::to_vec(message).unwrap();
        self.session.as_mut()?.seal(&bytes).ok()
    }

    fn on_binary(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        match bytes.len() {
            1 if bytes[0] == HELLO => self.on_open(),
            16 => {
                let mut theirs = [0u8; 16];
                theirs.copy_from_slice(bytes);
                self.session = Some(Session::new(&self.paired, &theirs, &self.nonce));
                let tools = ToBridge::Tools {
                    tools: self.tools.clone(),
                };
                self.seal(&tools).into_iter().collect()
            }
            n if n > 16 => {
                let Some(session) = self.session.as_mut() else {
                    return Vec::new();
                };
                let Ok(plain) = session.open(bytes) else {
                    return Vec::new();
                };
                let Ok(ToVault::Call { call, tool, input }) = serde_json::from_slice(&plain) else {
                    return Vec::new();
                };
                let answer = ToBridge::Answer {
                    call,
                    output: json!({ "ok": true, "result": { "tool": tool, "input": input } }),
                };
                self.seal(&answer).into_iter().collect()
            }
            _ => Vec::new(),
        }
    }
}

enum ToBridgeWire {
    Binary(Vec<u8>),
    Text(String),
}

/// The bridge host: a link and a core, as a bridge's glue drives them.
struct Host {
    link: BridgeLink,
    core: Bridge,
    nonces: Nonces,
    events: Vec<Event>,
    refused: Vec<FrameError>,
}

impl Host {
    fn new(paired: Paired) -> Self {
        Self {
            link: BridgeLink::new(paired),
            core: Bridge::new(vec![spec("request_claims")]),
            nonces: Nonces(0),
            events: Vec::new(),
            refused: Vec::new(),
        }
    }

    fn on_wire(&mut self, wire: ToBridgeWire) -> Vec<Vec<u8>> {
        match wire {
            ToBridgeWire::Text(text) => match self.link.on_peer_text(&text) {
                PeerStep::Joined { hello } => hello.iter().map(|h| h.to_vec()).collect(),
                PeerStep::Left => {
                    self.events.extend(self.core.disconnected());
                    Vec::new()
                }
                PeerStep::Refused { .. } | PeerStep::Ignored => Vec::new(),
            },
            ToBridgeWire::Binary(bytes) => match self.link.on_frame(&bytes, self.nonces.next()) {
                FrameStep::Nonce { reply } => vec![reply.to_vec()],
                FrameStep::Opened { message, confirmed } => {
                    if confirmed {
                        self.core.connected();
                    }
                    self.events.extend(self.core.receive(&message, T).unwrap());
                    Vec::new()
                }
                FrameStep::Refused(e) => {
                    self.refused.push(e);
                    Vec::new()
                }
                FrameStep::Ignored => Vec::new(),
            },
        }
    }

    fn call(&mut self, tool: &str) -> Option<Vec<u8>> {
        match self.core.call(tool, json!({ "x": 1 }), T) {
            Outgoing::Send { message, .. } => Some(self.link.seal(&message).unwrap()),
            Outgoing::Answer(_) => None,
        }
    }
}

/// Delivers everything in flight, in order per direction, until both queues are empty.
fn settle(
    host: &mut Host,
    vault: &mut Vault,
    to_vault: &mut VecDeque<Vec<u8>>,
    to_bridge: &mut VecDeque<ToBridgeWire>,
) {
    for _ in 0..100 {
        if let Some(frame) = to_bridge.pop_front() {
            to_vault.extend(host.on_wire(frame));
        } else if let Some(frame) = to_vault.pop_front() {
            to_bridge.extend(
                vault
                    .on_binary(&frame)
                    .into_iter()
                    .map(ToBridgeWire::Binary),
            );
        } else {
            return;
        }
    }
    panic!("the link never settled");
}

fn tool_names(host: &Host) -> Vec<String> {
    host.core.tools().iter().map(|t| t.name.clone()).collect()
}

#[test]
fn a_bridge_and_the_vault_as_web_link_rs_does_it_converge_on_one_session_and_talk() {
    let (bridge_side, vault_side) = pair(7);
    let mut host = Host::new(bridge_side);
    let mut vault = Vault::new(vault_side);
    let (mut to_vault, mut to_bridge) = (VecDeque::new(), VecDeque::new());

    // The vault is online first: its opening nonce waits at the relay for the bridge.
    to_bridge.extend(vault.on_open().into_iter().map(ToBridgeWire::Binary));
    // The bridge connects: its hello, and the relay's notice that the vault is there (another
    // hello). Three nonces cross: the last exchange is the session both hold.
    to_vault.push_back(host.link.on_open().to_vec());
    to_bridge.push_back(ToBridgeWire::Text(r#"{"peer":"joined"}"#.into()));
    settle(&mut host, &mut vault, &mut to_vault, &mut to_bridge);
    assert!(host.core.is_connected() && host.link.has_session());
    assert_eq!(tool_names(&host), ["request_claims", "claim.g1"]);
    // Frames sealed under the sessions that were replaced are refused as forged, nothing more.
    assert!(
        host.refused.iter().all(|e| *e == FrameError::Forged),
        "{:?}",
        host.refused
    );

    // A call goes and its answer comes back.
    let frame = host.call("claim.g1").unwrap();
    to_vault.push_back(frame);
    settle(&mut host, &mut vault, &mut to_vault, &mut to_bridge);
    let answered: Vec<_> = host
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Answered { output, .. } => Some(output.clone()),
            Event::ToolsChanged { .. } | Event::Unpaired => None,
        })
        .collect();
    assert_eq!(
        answered,
        [json!({ "ok": true, "result": { "tool": "claim.g1", "input": { "x": 1 } } })]
    );

    // The vault goes: the session is dropped, the claim tools withdrawn, calls unreachable.
    host.events.clear();
    to_bridge.push_back(ToBridgeWire::Text(r#"{"peer":"left"}"#.into()));
    settle(&mut host, &mut vault, &mut to_vault, &mut to_bridge);
    assert!(!host.link.has_session() && !host.core.is_connected());
    assert_eq!(tool_names(&host), ["request_claims"]);
    assert_eq!(host.link.seal(b"{}"), Err(SealError::NoSession));
    assert!(host.call("request_claims").is_none());

    // It comes back (its open sends a nonce, the relay says joined): the link is up again.
    to_bridge.extend(vault.on_open().into_iter().map(ToBridgeWire::Binary));
    to_bridge.push_back(ToBridgeWire::Text(r#"{"peer":"joined"}"#.into()));
    settle(&mut host, &mut vault, &mut to_vault, &mut to_bridge);
    assert!(host.core.is_connected());
    assert_eq!(tool_names(&host), ["request_claims", "claim.g1"]);
    let frame = host.call("request_claims").unwrap();
    to_vault.push_back(frame);
    host.events.clear();
    settle(&mut host, &mut vault, &mut to_vault, &mut to_bridge);
    assert!(
        host.events
            .iter()
            .any(|e| matches!(e, Event::Answered { output, .. } if output["ok"] == true))
    );
}

/// A link with a session to `vault`, and the vault's next three sealed frames.
fn linked(vault: &mut Vault, link: &mut BridgeLink) -> Vec<Vec<u8>> {
    let ours = [42u8; NONCE_LEN];
    let opened = vault.on_open();
    let FrameStep::Nonce { reply } = link.on_frame(&opened[0], ours) else {
        panic!("a nonce did not connect")
    };
    assert_eq!(reply, ours);
    let tools = vault.on_binary(&reply);
    assert_eq!(tools.len(), 1);
    let mut frames = tools;
    for call in 1..=2 {
        let answer = ToBridge::Answer {
            call,
            output: json!({ "ok": true }),
        };
        frames.push(vault.seal(&answer).unwrap());
    }
    frames
}

#[test]
fn replayed_reordered_old_and_strangers_frames_are_refused_and_change_nothing() {
    let (bridge_side, vault_side) = pair(9);
    let mut vault = Vault::new(vault_side);
    let mut link = BridgeLink::new(bridge_side.clone());

    // Before any nonce, a sealed frame has no session to open in.
    let mut other = BridgeLink::new(bridge_side);
    let early = linked(&mut Vault::new(vault.paired.clone()), &mut other);
    assert!(matches!(
        link.on_frame(&early[0], [1; 16]),
        FrameStep::Refused(FrameError::Forged)
    ));

    let frames = linked(&mut vault, &mut link);
    // Reordered: frame 1 before frame 0 is refused, then 0 and 1 open in order.
    assert!(matches!(
        link.on_frame(&frames[1], [0; 16]),
        FrameStep::Refused(FrameError::OutOfOrder {
            expected: 0,
            got: 1
        })
    ));
    assert!(!link.is_confirmed());
    assert!(matches!(
        link.on_frame(&frames[0], [0; 16]),
        FrameStep::Opened {
            confirmed: true,
            ..
        }
    ));
    assert!(link.is_confirmed());
    // Replayed.
    assert!(matches!(
        link.on_frame(&frames[0], [0; 16]),
        FrameStep::Refused(FrameError::Replayed {
            expected: 1,
            got: 0
        })
    ));
    // Tampered.
    let mut bent = frames[1].clone();
    let last = bent.len() - 1;
    bent[last] ^= 1;
    assert!(matches!(
        link.on_frame(&bent, [0; 16]),
        FrameStep::Refused(FrameError::Forged)
    ));
    // A stranger's pairing with its own vault: its frames never open here.
    let (stranger_bridge, stranger_vault) = pair(11);
    let strange = linked(
        &mut Vault::new(stranger_vault),
        &mut BridgeLink::new(stranger_bridge),
    );
    assert!(matches!(
        link.on_frame(&strange[0], [0; 16]),
        FrameStep::Refused(FrameError::Forged)
    ));
    // None of that disturbed the session: the genuine next frame opens.
    let FrameStep::Opened {
        message: plain,
        confirmed: false,
    } = link.on_frame(&frames[1], [0; 16])
    else {
        panic!("the genuine frame did not open, or confirmed again")
    };
    assert_eq!(
        serde_json::from_slice::<ToBridge>(&plain).unwrap(),
        ToBridge::Answer {
            call: 1,
            output: json!({ "ok": true })
        }
    );

    // A new nonce (the vault reconnected) starts a new session: the old session's frames are
    // refused in it.
    let renewed = vault.on_open();
    assert!(matches!(
        link.on_frame(&renewed[0], [5; 16]),
        FrameStep::Nonce { .. }
    ));
    assert!(
        !link.is_confirmed(),
        "a new session is confirmed by its own first frame"
    );
    assert!(matches!(
        link.on_frame(&frames[2], [0; 16]),
        FrameStep::Refused(FrameError::Forged)
    ));

    // Junk lengths are ignored and do not drop the session.
    for junk in [&[][..], &[HELLO][..], &[0u8; 15][..]] {
        assert!(matches!(link.on_frame(junk, [0; 16]), FrameStep::Ignored));
    }
    assert!(link.has_session());
    // Closing drops it; opening again says hello and holds none until the vault's nonce.
    link.on_close();
    assert!(!link.has_session());
    assert_eq!(link.on_open(), [HELLO]);
    assert!(!link.has_session());
}

#[test]
fn the_relays_notices_are_read_as_json_and_nothing_else_counts() {
    let (bridge_side, vault_side) = pair(13);
    let mut link = BridgeLink::new(bridge_side);
    let frames = linked(&mut Vault::new(vault_side), &mut link);
    // Before the session is confirmed, joined asks for a fresh one; after, it changes nothing.
    assert_eq!(
        link.on_peer_text(r#"{"peer":"joined"}"#),
        PeerStep::Joined {
            hello: Some([HELLO])
        }
    );
    assert!(matches!(
        link.on_frame(&frames[0], [0; 16]),
        FrameStep::Opened {
            confirmed: true,
            ..
        }
    ));
    assert_eq!(
        link.on_peer_text(r#"{"peer":"joined"}"#),
        PeerStep::Joined { hello: None }
    );
    assert!(link.has_session(), "joined alone keeps the session");
    assert_eq!(
        link.on_peer_text(r#"{"refused":"rate_limited","message":"wait"}"#),
        PeerStep::Refused {
            code: "rate_limited".into()
        }
    );
    for junk in [
        "left",
        r#"{"peer":"someone"}"#,
        r#"{"peer":7}"#,
        r#"["left"]"#,
        "",
        r#"{"note":"\"left\""}"#,
    ] {
        assert_eq!(link.on_peer_text(junk), PeerStep::Ignored, "{junk}");
    }
    assert!(link.has_session(), "no junk dropped the session");
    assert_eq!(link.on_peer_text(r#"{"peer":"left"}"#), PeerStep::Left);
    assert!(!link.has_session());
    assert_eq!(link.seal(b"x"), Err(SealError::NoSession));
}

/// Delivers one message at a time; after each, while the core says connected, the agent calls.
/// Returns (calls made, calls answered by the vault, calls answered at once).
fn converge_calling(
    host: &mut Host,
    vault: &mut Vault,
    to_vault: &mut VecDeque<Vec<u8>>,
    to_bridge: &mut VecDeque<ToBridgeWire>,
) -> (usize, usize, usize) {
    let (mut made, mut at_once) = (0, 0);
    for step in 0..200 {
        // Alternate directions, so frames cross as they do on a real relay.
        let bridge_turn = step % 2 == 0;
        if bridge_turn && let Some(frame) = to_bridge.pop_front() {
            to_vault.extend(host.on_wire(frame));
        } else if let Some(frame) = to_vault.pop_front() {
            to_bridge.extend(
                vault
                    .on_binary(&frame)
                    .into_iter()
                    .map(ToBridgeWire::Binary),
            );
        } else if let Some(frame) = to_bridge.pop_front() {
            to_vault.extend(host.on_wire(frame));
        } else {
            break;
        }
        if step >= 40 {
            continue;
        }
        match host.call("request_claims") {
            Some(frame) => {
                made += 1;
                to_vault.push_back(frame);
            }
            None => at_once += 1,
        }
    }
    assert!(to_vault.is_empty() && to_bridge.is_empty(), "never settled");
    let answered = host
        .events
        .iter()
        .filter(|e| matches!(e, Event::Answered { output, .. } if output["ok"] == true))
        .count();
    (made, answered, at_once)
}

#[test]
fn no_call_is_sealed_in_a_session_the_vault_does_not_hold_while_the_nonces_converge() {
    // The vault first (its nonce waits), then the bridge (hello, and joined: another hello).
    let (bridge_side, vault_side) = pair(21);
    let mut host = Host::new(bridge_side);
    let mut vault = Vault::new(vault_side);
    let (mut to_vault, mut to_bridge) = (VecDeque::new(), VecDeque::new());
    to_bridge.extend(vault.on_open().into_iter().map(ToBridgeWire::Binary));
    to_vault.push_back(host.link.on_open().to_vec());
    to_bridge.push_back(ToBridgeWire::Text(r#"{"peer":"joined"}"#.into()));
    let (made, answered, at_once) =
        converge_calling(&mut host, &mut vault, &mut to_vault, &mut to_bridge);
    assert!(made > 0 && at_once > 0, "{made} sent, {at_once} at once");
    assert_eq!(answered, made, "a call sent was lost");

    // The bridge first (its hello waits in the vault's mailbox), then the vault: its opening
    // nonce, the queued hello's nonce, and joined.
    let (bridge_side, vault_side) = pair(23);
    let mut host = Host::new(bridge_side);
    let mut vault = Vault::new(vault_side);
    let (mut to_vault, mut to_bridge) = (VecDeque::new(), VecDeque::new());
    let hello = host.link.on_open().to_vec();
    to_bridge.push_back(ToBridgeWire::Text(r#"{"peer":"joined"}"#.into()));
    to_bridge.extend(vault.on_open().into_iter().map(ToBridgeWire::Binary));
    to_vault.push_back(hello);
    let (made, answered, _) =
        converge_calling(&mut host, &mut vault, &mut to_vault, &mut to_bridge);
    assert!(made > 0);
    assert_eq!(answered, made, "a call sent was lost");
}
