//! The door as a native bridge (`--vault-relay`): it pairs with the person's vault itself,
//! through `tacit-relay`, as the bridge page does (issue 29), so the wallet's tools need no
//! browser and no DevTools port.
//!
//! Every decision is `tacit-pairing`'s: the handshake ([`Start`], [`tacit_pairing::Confirming`]),
//! the per-connection framing ([`BridgeLink`]) and the bridge's core ([`Bridge`]: the tools
//! shown, every call forwarded, `vault_unreachable` when it cannot be). This module moves bytes
//! over a WebSocket (`ws://` only: this build has no TLS), keeps the pairing in a file and runs
//! the core's timer.
//!
//! - **Pairing**: with no pairing kept, the door makes an [`Offer`] and prints on stderr the
//!   code to type into the vault (Settings → Pair a bridge) and the whole offer URI; it runs its
//!   side of SPAKE2 on the offer's mailbox, and once the vault's confirmation checks it prints
//!   the fingerprint both sides show. A failed handshake, a vault that leaves half-way or a
//!   mailbox tag another bridge holds makes a new offer (one handshake per code).
//! - **The pairing file** (`--pairing-file`, default `$XDG_STATE_HOME/tacit/mcp-pairing.json`,
//!   else `~/.local/state/tacit/mcp-pairing.json`) holds the pairing secret: mode 0600 in a
//!   0700 directory, written whole then renamed. Whoever reads it can act as this bridge, which
//!   can do no more than the agent already does. Delete it to pair again.
//! - **The link**: on the pairing's route, `hello`, the nonces and sealed frames
//!   ([`tacit_pairing::link`]); when the relay closes, every claim tool is withdrawn and every
//!   waiting call answered `vault_unreachable`, and the door connects again after 0.5 s,
//!   doubling to 30 s (back to 0.5 s once a session came up).
//! - **Tools**: the core's tools under the fixed namespace [`NAMESPACE`] (`wallet.request_claims`,
//!   `wallet.claim.<grant>`); no mirrored origin can have it, since a mirrored namespace always
//!   ends in `_<port>`. A change of the list (a grant, a revoke, an expiry at the grant's
//!   `expires_at`, the vault going) bumps [`VaultHandle::changes`].
//!
//! Nothing of the person's is printed: the door prints the offer, the fingerprint and whether
//! the wallet is connected, never a call's input or answer.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tacit_pairing::bridge::{Bridge, Event, Outgoing, ToolSpec};
use tacit_pairing::link::{BridgeLink, FrameStep, PeerStep};
use tacit_pairing::relay::socket_url;
use tacit_pairing::{MailboxTag, Offer, Paired, PairingCode, Role, Start};
use tokio::sync::{Notify, oneshot, watch};
use tokio_tungstenite::tungstenite::Message;
use zeroize::Zeroizing;

/// The namespace of the vault's tools in the door's list: `wallet.<the wallet's tool name>`.
pub const NAMESPACE: &str = "wallet";

/// The first wait before connecting again; doubled up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait before connecting again.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The file name under the state directory when `--pairing-file` is not given.
pub const PAIRING_FILE_NAME: &str = "mcp-pairing.json";

/// Why the door cannot run as a bridge with what it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSetup(pub String);

impl std::fmt::Display for BadSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadSetup {}

/// `--vault-relay`: the relay's origin, `http://host:port` (what the vault's Settings show as
/// its relay). `https://` is refused: this build has no TLS.
pub fn relay_origin(text: &str) -> Result<String, BadSetup> {
    let text = text.trim().trim_end_matches('/');
    if text.starts_with("https://") {
        return Err(BadSetup(format!(
            "`{text}`: this build of tacit-mcp speaks to a relay over ws:// only (no TLS); \
             use an http:// relay on this machine or through a tunnel"
        )));
    }
    // The pairing crate's own reading of a relay origin (the one an offer carries).
    Offer::parse_typed("0000-0000-0000", text)
        .map(|offer| offer.relay)
        .map_err(|e| BadSetup(format!("`{text}` is not a relay origin: {e}")))
}

/// Where the pairing is kept when `--pairing-file` is not given: `$XDG_STATE_HOME/tacit/`, else
/// `$HOME/.local/state/tacit/`.
pub fn default_pairing_file() -> Result<PathBuf, BadSetup> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| PathBuf::from(home).join(".local").join("state"))
        })
        .ok_or_else(|| {
            BadSetup(
                "neither XDG_STATE_HOME nor HOME is set: name where to keep the pairing with \
                 --pairing-file <path>"
                    .to_owned(),
            )
        })?;
    Ok(state.join("tacit").join(PAIRING_FILE_NAME))
}

/// The pairing as the file keeps it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Kept {
    /// `Paired::to_bytes` in hex.
    paired: String,
    /// The relay it was made through (for the person reading the file).
    relay: String,
}

/// Reads the pairing kept at `path`: `Ok(None)` if there is none; a damaged file or one of the
/// vault's side is an error to print (the door then pairs again, and overwrites it).
pub fn load_pairing(path: &Path) -> Result<Option<Paired>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    tighten(path);
    let kept: Kept = serde_json::from_str(&text)
        .map_err(|_| format!("{} is not a pairing this door wrote", path.display()))?;
    let bytes = zeroize_hex(&kept.paired)
        .ok_or_else(|| format!("{} holds a damaged pairing", path.display()))?;
    let paired = Paired::from_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    if paired.role() != Role::Bridge {
        return Err(format!(
            "{} holds a vault's pairing, not a bridge's",
            path.display()
        ));
    }
    Ok(Some(paired))
}

fn zeroize_hex(text: &str) -> Option<Zeroizing<Vec<u8>>> {
    hex::decode(text.trim()).ok().map(Zeroizing::new)
}

/// Makes a pairing file readable by its owner only, if it was not.
fn tighten(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path)
        && meta.permissions().mode() & 0o077 != 0
    {
        eprintln!(
            "tacit-mcp: {} was readable by others; it is now the owner's only (0600)",
            path.display()
        );
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
}

/// Keeps `paired` at `path`: mode 0600 (its directory created 0700 if missing), written to a
/// temporary file beside it and renamed over it.
pub fn save_pairing(path: &Path, paired: &Paired, relay: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let kept = Kept {
        paired: hex::encode(paired.to_bytes().as_slice()),
        relay: relay.to_owned(),
    };
    let text = serde_json::to_string_pretty(&kept).map_err(std::io::Error::other)?;
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path)
}

/// Milliseconds since the epoch.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // The OS's generator: if it fails there is no safe randomness, and the door stops.
    if let Err(e) = getrandom::fill(&mut bytes) {
        eprintln!("tacit-mcp: no randomness from the system ({e}); stopping");
        std::process::exit(1);
    }
    bytes
}

struct Shared {
    core: Bridge,
    /// The link of the pairing, once paired.
    link: Option<BridgeLink>,
    /// Frames to the current connection, while one is open.
    out: Option<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>,
    /// MCP calls waiting for the vault's answer.
    waiting: HashMap<u64, oneshot::Sender<Value>>,
    changed: watch::Sender<u64>,
    version: u64,
    /// The person ended the pairing in the vault: the link stops and the door pairs again.
    unpaired: bool,
}

impl Shared {
    /// Carries out what the core decided.
    fn apply(&mut self, events: Vec<Event>) {
        for event in events {
            match event {
                Event::ToolsChanged { .. } => {
                    self.version += 1;
                    let _ = self.changed.send(self.version);
                }
                Event::Answered { call, output } => {
                    if let Some(reply) = self.waiting.remove(&call) {
                        let _ = reply.send(output);
                    }
                }
                Event::Unpaired => self.unpaired = true,
            }
        }
    }
}

/// The MCP side's handle on the native bridge.
#[derive(Clone)]
pub struct VaultHandle {
    shared: Arc<Mutex<Shared>>,
    /// Bumped every time the vault's tools change.
    pub changes: watch::Receiver<u64>,
    /// Wakes the timer: a deadline may have moved.
    wake: Arc<Notify>,
}

impl std::fmt::Debug for VaultHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VaultHandle").finish_non_exhaustive()
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The wallet's persistent tools as the bridge shows them (its own definitions, no expiry).
pub fn persistent_specs() -> Vec<ToolSpec> {
    capability_gate::tool::persistent_tools()
        .into_iter()
        .map(|def| ToolSpec {
            name: def.name.as_str().to_owned(),
            definition: def.to_webmcp_json(),
            expires_at: None,
        })
        .collect()
}

impl VaultHandle {
    /// The tools to list now (the core's: persistent, then the vault's claim tools).
    pub fn tools(&self) -> Vec<ToolSpec> {
        lock(&self.shared)
            .core
            .tools()
            .into_iter()
            .cloned()
            .collect()
    }

    /// Whether a session with the vault is up.
    pub fn is_connected(&self) -> bool {
        lock(&self.shared).core.is_connected()
    }

    /// Calls the wallet's tool `tool` (its name without [`NAMESPACE`]): the vault's envelope, or
    /// the core's `vault_unreachable` when it cannot answer (no session, or no answer in 30 s).
    pub async fn call(&self, tool: &str, input: Value) -> Value {
        let (reply, answer) = oneshot::channel();
        {
            let mut shared = lock(&self.shared);
            let shared = &mut *shared;
            match shared.core.call(tool, input, now()) {
                Outgoing::Answer(output) => return output,
                Outgoing::Send { call, message } => {
                    shared.waiting.insert(call, reply);
                    // If it cannot go now, the core answers it unreachable at its timeout.
                    if let (Some(link), Some(out)) = (shared.link.as_mut(), &shared.out)
                        && let Ok(frame) = link.seal(&message)
                    {
                        let _ = out.send(frame);
                    }
                }
            }
        }
        self.wake.notify_one();
        answer.await.unwrap_or(Value::Null)
    }
}

/// Starts the native bridge on the current tokio runtime: pairs (or loads the pairing at
/// `pairing_file`), links, and keeps the core's timer.
pub fn start(relay: String, pairing_file: PathBuf) -> VaultHandle {
    let (changed, changes) = watch::channel(0u64);
    let shared = Arc::new(Mutex::new(Shared {
        core: Bridge::new(persistent_specs()),
        link: None,
        out: None,
        waiting: HashMap::new(),
        changed,
        version: 0,
        unpaired: false,
    }));
    let wake = Arc::new(Notify::new());
    let handle = VaultHandle {
        shared: shared.clone(),
        changes,
        wake: wake.clone(),
    };
    tokio::spawn(timer(shared.clone(), wake.clone()));
    tokio::spawn(run(relay, pairing_file, shared, wake));
    handle
}

/// Ticks the core at its next deadline (a claim tool's expiry, a call's timeout).
async fn timer(shared: Arc<Mutex<Shared>>, wake: Arc<Notify>) {
    loop {
        let wait = lock(&shared)
            .core
            .next_deadline()
            .map_or(60_000, |at| (at - now()).clamp(0, 60_000));
        let wait = Duration::from_millis(u64::try_from(wait).unwrap_or(0));
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = wake.notified() => {}
        }
        let mut shared = lock(&shared);
        let events = shared.core.tick(now());
        shared.apply(events);
    }
}

async fn run(relay: String, file: PathBuf, shared: Arc<Mutex<Shared>>, wake: Arc<Notify>) {
    let paired = match load_pairing(&file) {
        Ok(Some(paired)) => {
            eprintln!(
                "tacit-mcp: paired with your wallet (fingerprint {}), kept in {}",
                paired.fingerprint(),
                file.display()
            );
            paired
        }
        Ok(None) => pair(&relay, &file).await,
        Err(why) => {
            eprintln!("tacit-mcp: {why}; pairing again");
            pair(&relay, &file).await
        }
    };
    let mut paired = paired;
    loop {
        link(&relay, paired, &shared, &wake).await;
        // The person unpaired this door in the vault: forget the pairing and offer a new code.
        if let Err(e) = std::fs::remove_file(&file)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!(
                "tacit-mcp: the ended pairing could not be removed from {} ({e})",
                file.display()
            );
        }
        eprintln!("tacit-mcp: your wallet ended this pairing; pair again to use its tools");
        paired = pair(&relay, &file).await;
    }
}

fn announce(offer: &Offer) {
    eprintln!(
        "tacit-mcp: to give this agent your wallet's tools, open your wallet, go to Settings → \
         Pair a bridge, and type this code: {}",
        offer.typed()
    );
    eprintln!("tacit-mcp: (or paste the whole offer: {})", offer.to_uri());
}

fn new_offer(relay: &str) -> Offer {
    Offer {
        relay: relay.to_owned(),
        mailbox: MailboxTag::from_random(random()),
        code: PairingCode::from_random(random()),
    }
}

/// How one pairing connection ended.
enum Attempt {
    Paired(Paired),
    /// This offer is spent or unusable: make another.
    NewOffer(String),
    /// The connection went: try this offer again after a wait.
    Again(String),
}

/// Pairs through the relay's mailbox until a pairing is confirmed; keeps it at `file`.
async fn pair(relay: &str, file: &Path) -> Paired {
    let mut offer = new_offer(relay);
    announce(&offer);
    let mut backoff = FIRST_BACKOFF;
    loop {
        match pair_once(&offer).await {
            Attempt::Paired(paired) => {
                match save_pairing(file, &paired, relay) {
                    Ok(()) => eprintln!(
                        "tacit-mcp: paired. Check that your wallet shows the same number: {} \
                         (the pairing is kept in {})",
                        paired.fingerprint(),
                        file.display()
                    ),
                    Err(e) => eprintln!(
                        "tacit-mcp: paired (your wallet shows {}), but the pairing could not be \
                         kept in {}: {e}; a restart pairs again",
                        paired.fingerprint(),
                        file.display()
                    ),
                }
                return paired;
            }
            Attempt::NewOffer(why) => {
                eprintln!("tacit-mcp: not paired: {why}. A new code:");
                offer = new_offer(relay);
                announce(&offer);
                backoff = FIRST_BACKOFF;
            }
            Attempt::Again(why) => {
                eprintln!(
                    "tacit-mcp: the relay at {relay}: {why}; trying again in {} ms",
                    backoff.as_millis()
                );
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

async fn pair_once(offer: &Offer) -> Attempt {
    let mailbox = offer.mailbox.id();
    let url = socket_url(&offer.relay, &mailbox.hex(), Role::Bridge);
    let mut socket = match tokio_tungstenite::connect_async(url.as_str()).await {
        Ok((socket, _)) => socket,
        Err(e) => return Attempt::Again(format!("cannot connect ({e})")),
    };
    let (start, message) = Start::new(Role::Bridge, &offer.code, &mailbox, random());
    if let Err(e) = socket.send(Message::binary(message)).await {
        return Attempt::Again(format!("the connection failed ({e})"));
    }
    let mut start = Some(start);
    let mut confirming = None;
    loop {
        let Some(Ok(message)) = socket.next().await else {
            return Attempt::Again("the connection closed".to_owned());
        };
        match message {
            Message::Binary(bytes) => {
                if let Some(begun) = start.take() {
                    // The vault's SPAKE2 message: our confirmation tag goes back.
                    match begun.finish(&bytes) {
                        Ok(c) => {
                            if socket
                                .send(Message::binary(c.tag().to_vec()))
                                .await
                                .is_err()
                            {
                                return Attempt::NewOffer("the connection failed".to_owned());
                            }
                            confirming = Some(c);
                        }
                        Err(e) => return Attempt::NewOffer(e.to_string()),
                    }
                } else if let Some(c) = confirming.take() {
                    // The vault's tag: it checked ours, now we check its.
                    return match c.confirm(&bytes) {
                        Ok(paired) => {
                            let _ = socket.close(None).await;
                            Attempt::Paired(paired)
                        }
                        Err(e) => Attempt::NewOffer(e.to_string()),
                    };
                }
            }
            Message::Text(text) => {
                let Ok(Value::Object(notice)) = serde_json::from_str::<Value>(text.as_str()) else {
                    continue;
                };
                if let Some(code) = notice.get("refused").and_then(Value::as_str) {
                    return if code == "busy" {
                        Attempt::NewOffer("another bridge holds this code's mailbox".to_owned())
                    } else {
                        Attempt::Again(format!("it refused ({code})"))
                    };
                }
                if notice.get("peer").and_then(Value::as_str) == Some("left")
                    && confirming.is_some()
                {
                    return Attempt::NewOffer(
                        "the wallet stopped half-way (was the code typed right?)".to_owned(),
                    );
                }
            }
            Message::Close(_) => return Attempt::Again("the connection closed".to_owned()),
            _ => {}
        }
    }
}

/// Keeps the link on the pairing's route up, until the person ends the pairing in the vault.
async fn link(relay: &str, paired: Paired, shared: &Arc<Mutex<Shared>>, wake: &Arc<Notify>) {
    let url = socket_url(relay, &paired.route(), Role::Bridge);
    let fingerprint = paired.fingerprint();
    {
        let mut state = lock(shared);
        state.link = Some(BridgeLink::new(paired));
        state.unpaired = false;
    }
    let mut backoff = FIRST_BACKOFF;
    let mut told_unreachable = false;
    loop {
        let had_session = match tokio_tungstenite::connect_async(url.as_str()).await {
            Ok((socket, _)) => connection(socket, shared, wake, &fingerprint).await,
            Err(e) => {
                if !told_unreachable {
                    eprintln!("tacit-mcp: cannot reach the relay at {relay} ({e})");
                }
                false
            }
        };
        {
            let mut guard = lock(shared);
            let state = &mut *guard;
            state.out = None;
            if let Some(link) = state.link.as_mut() {
                link.on_close();
            }
            let was = state.core.is_connected();
            let events = state.core.disconnected();
            state.apply(events);
            if was {
                eprintln!(
                    "tacit-mcp: your wallet is not reachable now; calls are answered \
                     vault_unreachable until it is"
                );
            }
        }
        if lock(shared).unpaired {
            lock(shared).link = None;
            return;
        }
        told_unreachable = true;
        if had_session {
            backoff = FIRST_BACKOFF;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// One connection on the pairing's route, until it closes; whether a session came up on it.
async fn connection(
    socket: Socket,
    shared: &Arc<Mutex<Shared>>,
    wake: &Arc<Notify>,
    fingerprint: &str,
) -> bool {
    let (mut sink, mut stream) = socket.split();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let hello = {
        let mut state = lock(shared);
        state.out = Some(tx);
        state.link.as_mut().map(BridgeLink::on_open)
    };
    let mut had_session = false;
    if let Some(hello) = hello
        && sink.send(Message::binary(hello.to_vec())).await.is_err()
    {
        return false;
    }
    loop {
        let reply = tokio::select! {
            frame = rx.recv() => match frame {
                Some(frame) => Some(frame),
                None => return had_session,
            },
            message = stream.next() => match message {
                Some(Ok(Message::Binary(bytes))) => {
                    let mut guard = lock(shared);
                    let state = &mut *guard;
                    let Some(link) = state.link.as_mut() else {
                        return had_session;
                    };
                    match link.on_frame(&bytes, random()) {
                        FrameStep::Nonce { reply } => Some(reply.to_vec()),
                        FrameStep::Opened { message, confirmed } => {
                            if confirmed && !state.core.is_connected() {
                                eprintln!(
                                    "tacit-mcp: your wallet is connected (fingerprint \
                                     {fingerprint})"
                                );
                            }
                            if confirmed {
                                state.core.connected();
                                had_session = true;
                            }
                            if let Ok(events) = state.core.receive(&message, now()) {
                                state.apply(events);
                                wake.notify_one();
                            }
                            if state.unpaired {
                                return had_session;
                            }
                            None
                        }
                        FrameStep::Refused(_) | FrameStep::Ignored => None,
                    }
                }
                Some(Ok(Message::Text(text))) => {
                    let mut guard = lock(shared);
                    let state = &mut *guard;
                    let Some(link) = state.link.as_mut() else {
                        return had_session;
                    };
                    match link.on_peer_text(text.as_str()) {
                        PeerStep::Joined { hello } => hello.map(|h| h.to_vec()),
                        PeerStep::Left => {
                            let was = state.core.is_connected();
                            let events = state.core.disconnected();
                            state.apply(events);
                            if was {
                                eprintln!(
                                    "tacit-mcp: your wallet went offline; calls are answered \
                                     vault_unreachable until it is back"
                                );
                            }
                            None
                        }
                        PeerStep::Refused { code } => {
                            eprintln!("tacit-mcp: the relay refused: {code}");
                            None
                        }
                        PeerStep::Ignored => None,
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return had_session,
                Some(Ok(_)) => None,
            },
        };
        if let Some(bytes) = reply
            && sink.send(Message::binary(bytes)).await.is_err()
        {
            return had_session;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn paired(role: Role) -> Paired {
        let code = PairingCode::from_random([3; 5]);
        let mailbox = MailboxTag::from_random([4; 3]).id();
        let (a, msg_a) = Start::new(Role::Bridge, &code, &mailbox, [1; 32]);
        let (b, msg_b) = Start::new(Role::Vault, &code, &mailbox, [2; 32]);
        let (a, b) = (a.finish(&msg_b).unwrap(), b.finish(&msg_a).unwrap());
        let (tag_a, tag_b) = (a.tag(), b.tag());
        match role {
            Role::Bridge => a.confirm(&tag_b).unwrap(),
            Role::Vault => b.confirm(&tag_a).unwrap(),
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "tacit-mcp-vault-{name}-{}-{}",
            std::process::id(),
            now()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_pairing_is_kept_for_the_owner_only_and_read_back() {
        let dir = scratch("keep");
        let file = dir.join("deep").join("pairing.json");
        assert!(load_pairing(&file).unwrap().is_none());
        let bridge = paired(Role::Bridge);
        save_pairing(&file, &bridge, "http://127.0.0.1:8795").unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(file.parent().unwrap()), 0o700);
        let back = load_pairing(&file).unwrap().unwrap();
        assert_eq!(back.route(), bridge.route());
        assert_eq!(back.fingerprint(), bridge.fingerprint());
        // Saved again over itself: still 0600, no temporary file left.
        save_pairing(&file, &bridge, "http://127.0.0.1:8795").unwrap();
        assert_eq!(mode(&file), 0o600);
        let names: Vec<_> = std::fs::read_dir(file.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["pairing.json"]);
        // A file others could read is tightened when read.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(load_pairing(&file).unwrap().is_some());
        assert_eq!(mode(&file), 0o600);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_or_foreign_pairing_file_is_refused_in_words() {
        let dir = scratch("bad");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pairing.json");
        for (text, needle) in [
            ("not json", "not a pairing this door wrote"),
            (r#"{"paired":"zz","relay":"x"}"#, "damaged"),
            (r#"{"paired":"62","relay":"x"}"#, "damaged"),
            (r#"{"paired":"00","relay":"x","extra":1}"#, "not a pairing"),
        ] {
            std::fs::write(&file, text).unwrap();
            let why = load_pairing(&file).unwrap_err();
            assert!(why.contains(needle), "{text}: {why}");
        }
        // The vault's side of a pairing is not a bridge's.
        save_pairing(&file, &paired(Role::Vault), "http://127.0.0.1:1").unwrap();
        let why = load_pairing(&file).unwrap_err();
        assert!(why.contains("a vault's pairing"), "{why}");
        // Nothing of the secret is in the words.
        let text = std::fs::read_to_string(&file).unwrap();
        let kept: Value = serde_json::from_str(&text).unwrap();
        assert!(!why.contains(kept["paired"].as_str().unwrap()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_relay_is_an_http_origin() {
        assert_eq!(
            relay_origin("http://127.0.0.1:8795/").unwrap(),
            "http://127.0.0.1:8795"
        );
        let tls = relay_origin("https://relay.example").unwrap_err();
        assert!(tls.0.contains("no TLS"), "{tls}");
        for bad in [
            "ws://127.0.0.1:1",
            "127.0.0.1:8795",
            "http://h/path",
            "http://u@h",
        ] {
            assert!(relay_origin(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_default_pairing_file_is_under_the_state_directory() {
        let path = default_pairing_file().unwrap();
        assert!(path.ends_with("tacit/mcp-pairing.json"), "{path:?}");
    }
}
