//! # tacit-pairing
//!
//! How the agent's browser (the **bridge**) and the person's **vault** come to share a key
//! without trusting the relay between them, and how they then talk (issue 29).
//!
//! - [`code`]: what the bridge shows and the person types or scans into the vault: the
//!   [`Offer`], a mailbox tag and a short code (`4H7Q-7KQ2-M9XD`), and the relay.
//! - [`handshake`]: SPAKE2 (RustCrypto's `spake2`, Ed25519 group) with the code as password, the
//!   bridge as side A and the vault as side B, then key confirmation: each side sends a tag only
//!   the holder of the same key can make. A wrong code (or a relay in the middle guessing it)
//!   fails confirmation; an eavesdropper, or the relay, learns nothing it can test offline, so
//!   one handshake is one online guess. Both sides show the same [`Paired::fingerprint`].
//! - [`channel`]: per connection, both sides send fresh nonces and derive a [`Session`] from the
//!   pairing secret: AES-256-GCM frames, one key per direction, each frame numbered; a frame is
//!   opened only in order (a replay, a reorder or a frame of another session or of a stranger is
//!   refused and leaves the session as it was).
//! - [`bridge`]: the bridge's core: the tools it shows (persistent ones always, claim tools as
//!   the vault lists them), every call forwarded, `vault_unreachable` when it cannot be.
//! - [`link`]: the bridge's side of one connection on a paired route (`hello`, the nonces, the
//!   relay's `joined` / `left`, sealing and opening), shared by the bridge page and the MCP door.
//! - [`relay`]: the rules of `tacit-relay`, which carries frames it cannot open: one connection
//!   per side of a route, a bounded mailbox with a time to live while a side is offline, a
//!   per-side rate limit.
//!
//! The pairing secret comes from the SPAKE2 key, not from the code: whoever learns the code
//! after pairing cannot make a session with either side.
//!
//! Pure: no clock, no I/O; randomness is an argument (a 32-byte seed for the handshake, the
//! 16-byte connection nonces). Secrets are wiped on drop and never printed.

pub mod bridge;
pub mod channel;
pub mod code;
pub mod handshake;
pub mod link;
pub mod relay;

pub use channel::{FrameError, MAX_FRAME, Session};
pub use code::{CodeError, MailboxId, MailboxTag, Offer, PairingCode};
pub use handshake::{Confirming, Paired, PairingError, Role, Start};
