//! The bridge's side of one connection on a paired route: what to send when the socket opens,
//! what each binary frame and each relay notice means, and the [`Session`] they make. Both
//! bridges use it (the page, `web/bridge`, and the MCP door, `tacit-mcp --vault-relay`); the
//! host moves the bytes and feeds the [`crate::bridge::Bridge`] core.
//!
//! The wire, as the vault (`web/src/link.rs`) speaks it:
//!
//! ```text
//! bridge                                   vault
//! open → [HELLO] (1 byte) ───────────────►  16 fresh bytes (its nonce; also sent on its open)
//!        ◄─────────────── vault nonce
//! 16 fresh bytes (ours) ─────────────────►  Session::new(paired, ours, its)
//! Session::new(paired, ours, its)
//! every later frame: > 16 bytes, sealed JSON (ToVault / ToBridge)
//! ```
//!
//! Every nonce the vault sends starts a new session (the last exchange wins, so a reconnect on
//! either side converges: a `hello` on open and the relay's `joined` make two exchanges, and a
//! vault that connects later sends its own nonce too). A session is **confirmed** by the first
//! frame that opens in it (the vault sends its tools as soon as it holds the session): only then
//! does the host call `Bridge::connected`, so no call is sealed in a session the vault does not
//! hold, where it would wait for the core's timeout instead of being answered at once.
//!
//! The relay's text notices: `{"peer":"joined"}` → send [`HELLO`] again unless a session is
//! confirmed; `{"peer":"left"}` → the session is gone (the host calls `Bridge::disconnected`). A
//! frame that does not open (a replay, a reorder, a stranger's, one of a replaced session) is
//! refused and changes nothing; any other length is ignored.
//!
//! Pure: the fresh nonce is an argument.

use serde_json::Value;
use zeroize::Zeroizing;

use crate::channel::{FrameError, Session};
use crate::handshake::Paired;

/// The one-byte message the bridge sends when it connects on a paired route (and when the
/// relay says the vault joined).
pub const HELLO: u8 = 1;

/// The length of a connection nonce.
pub const NONCE_LEN: usize = 16;

/// What a binary frame from the vault meant.
#[derive(Debug)]
pub enum FrameStep {
    /// The vault's nonce: send `reply` (our nonce). A new session exists, not yet confirmed.
    Nonce { reply: [u8; NONCE_LEN] },
    /// A message from the vault, opened: give it to `Bridge::receive`. If `confirmed` it is the
    /// first of its session: the vault holds the same one, so call `Bridge::connected` first.
    Opened {
        message: Zeroizing<Vec<u8>>,
        confirmed: bool,
    },
    /// A sealed frame that did not open in this session (or came with no session); nothing
    /// changed.
    Refused(FrameError),
    /// Not a frame of this protocol (an empty or short message); nothing changed.
    Ignored,
}

/// What a text notice from the relay meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerStep {
    /// The vault connected: send `hello` ([`HELLO`]) if there is one (none while a session is
    /// confirmed).
    Joined { hello: Option<[u8; 1]> },
    /// The vault went: the session is dropped; the host calls `Bridge::disconnected`.
    Left,
    /// The relay refused something (`code` as `tacit-relay` names it: `busy`, `rate_limited`…).
    Refused { code: String },
    /// Something else: nothing to do.
    Ignored,
}

/// Why a message could not be sealed for the vault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    #[error("no session with the vault on this connection")]
    NoSession,
    #[error(transparent)]
    Frame(#[from] FrameError),
}

/// One bridge connection's framing state over a pairing. `Debug` prints no key.
#[derive(Debug)]
pub struct BridgeLink {
    paired: Paired,
    session: Option<Session>,
    confirmed: bool,
}

impl BridgeLink {
    /// The link of the bridge side of `paired` (no session until the vault's nonce comes).
    pub fn new(paired: Paired) -> Self {
        Self {
            paired,
            session: None,
            confirmed: false,
        }
    }

    /// The pairing this link runs over.
    pub fn paired(&self) -> &Paired {
        &self.paired
    }

    /// Whether a session exists on this connection (confirmed or not).
    pub fn has_session(&self) -> bool {
        self.session.is_some()
    }

    /// Whether the session is confirmed: a frame of the vault's opened in it.
    pub fn is_confirmed(&self) -> bool {
        self.confirmed
    }

    fn drop_session(&mut self) {
        self.session = None;
        self.confirmed = false;
    }

    /// The socket opened: any old session is gone; send the returned [`HELLO`].
    pub fn on_open(&mut self) -> [u8; 1] {
        self.drop_session();
        [HELLO]
    }

    /// The socket closed: the session is gone (the host calls `Bridge::disconnected`).
    pub fn on_close(&mut self) {
        self.drop_session();
    }

    /// A binary message from the relay; `fresh_nonce` is 16 new random bytes, used only if the
    /// message is the vault's nonce.
    pub fn on_frame(&mut self, bytes: &[u8], fresh_nonce: [u8; NONCE_LEN]) -> FrameStep {
        match bytes.len() {
            NONCE_LEN => {
                let mut vault_nonce = [0u8; NONCE_LEN];
                vault_nonce.copy_from_slice(bytes);
                self.session = Some(Session::new(&self.paired, &fresh_nonce, &vault_nonce));
                self.confirmed = false;
                FrameStep::Nonce { reply: fresh_nonce }
            }
            n if n > NONCE_LEN => match self.session.as_mut() {
                None => FrameStep::Refused(FrameError::Forged),
                Some(session) => match session.open(bytes) {
                    Ok(message) => {
                        let confirmed = !self.confirmed;
                        self.confirmed = true;
                        FrameStep::Opened { message, confirmed }
                    }
                    Err(e) => FrameStep::Refused(e),
                },
            },
            _ => FrameStep::Ignored,
        }
    }

    /// A text message from the relay.
    pub fn on_peer_text(&mut self, text: &str) -> PeerStep {
        let Ok(Value::Object(notice)) = serde_json::from_str::<Value>(text) else {
            return PeerStep::Ignored;
        };
        if let Some(code) = notice.get("refused").and_then(Value::as_str) {
            return PeerStep::Refused {
                code: code.to_owned(),
            };
        }
        match notice.get("peer").and_then(Value::as_str) {
            Some("joined") => PeerStep::Joined {
                hello: (!self.confirmed).then_some([HELLO]),
            },
            Some("left") => {
                self.drop_session();
                PeerStep::Left
            }
            _ => PeerStep::Ignored,
        }
    }

    /// Seals `plaintext` (a [`crate::bridge::ToVault`] in JSON) as the next frame to the vault.
    pub fn seal(&mut self, plaintext: &[u8]) -> Result<Vec<u8>, SealError> {
        let session = self.session.as_mut().ok_or(SealError::NoSession)?;
        Ok(session.seal(plaintext)?)
    }
}
