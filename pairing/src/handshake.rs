//! The pairing handshake: SPAKE2 over the code, then key confirmation.
//!
//! ```text
//! bridge (A)                          relay                           vault (B)
//! Start::new(Bridge, code, mailbox, seed) → msg_a  ──────────────►  Start::new(Vault, …) → msg_b
//!                              ◄──────────────  msg_b
//! finish(msg_b) → Confirming: tag ──────────────►  finish(msg_a) → Confirming: confirm(tag_a)?
//!                              ◄──────────────  tag_b            → Paired
//! confirm(tag_b)? → Paired
//! ```
//!
//! Both sides bind the mailbox and their roles into the SPAKE2 password and identities, so a
//! message for one pairing or role cannot be used in another. The SPAKE2 key is expanded with
//! HKDF-SHA256 into the two confirmation tags, the pairing secret and the fingerprint; a wrong
//! code gives both sides different keys, so confirmation fails ([`PairingError::WrongCode`]),
//! and nothing either side sends lets anyone test a guess without another handshake.

use core::fmt;

use hkdf::Hkdf;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sha2::Sha256;
use spake2::{Ed25519Group, Identity, Password, Spake2};
use subtle::ConstantTimeEq;
use thiserror::Error;
use zeroize::{Zeroize, Zeroizing};

use crate::code::{MailboxId, PairingCode};

const ID_BRIDGE: &[u8] = b"tacit-bridge";
const ID_VAULT: &[u8] = b"tacit-vault";
const SALT: &[u8] = b"tacit-pairing v1";

/// Which side of the pairing this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The agent's side: shows the code, registers the tools, forwards every call.
    Bridge,
    /// The person's side: holds everything and decides.
    Vault,
}

impl Role {
    pub fn peer(self) -> Self {
        match self {
            Role::Bridge => Role::Vault,
            Role::Vault => Role::Bridge,
        }
    }

    fn byte(self) -> u8 {
        match self {
            Role::Bridge => b'b',
            Role::Vault => b'v',
        }
    }
}

/// Why pairing failed, in words for the person.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PairingError {
    #[error("the other side's pairing message is damaged or from another kind of device")]
    BadMessage,
    #[error(
        "the pairing code did not match: check the code the bridge shows and pair again with a new code"
    )]
    WrongCode,
    #[error("the stored pairing is damaged; pair again")]
    Damaged,
}

/// A handshake begun: the SPAKE2 state until the peer's message comes.
pub struct Start {
    role: Role,
    spake: Spake2<Ed25519Group>,
}

impl fmt::Debug for Start {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Start")
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl Start {
    /// Begins pairing as `role` for `code` at `mailbox`, with 32 bytes of fresh randomness.
    /// Returns the state and the message to send to the other side.
    pub fn new(
        role: Role,
        code: &PairingCode,
        mailbox: &MailboxId,
        mut seed: [u8; 32],
    ) -> (Self, Vec<u8>) {
        let mut password = Zeroizing::new(Vec::with_capacity(64));
        password.extend_from_slice(SALT);
        password.push(b'|');
        password.extend_from_slice(mailbox.as_bytes());
        password.push(b'|');
        password.extend_from_slice(code.canonical());
        let password = Password::new(password.as_slice());
        let (a, b) = (Identity::new(ID_BRIDGE), Identity::new(ID_VAULT));
        let rng = ChaCha20Rng::from_seed(seed);
        seed.zeroize();
        let (spake, message) = match role {
            Role::Bridge => Spake2::<Ed25519Group>::start_a_with_rng(&password, &a, &b, rng),
            Role::Vault => Spake2::<Ed25519Group>::start_b_with_rng(&password, &a, &b, rng),
        };
        (Self { role, spake }, message)
    }

    /// Takes the other side's message; then send [`Confirming::tag`] and wait for theirs.
    pub fn finish(self, peer_message: &[u8]) -> Result<Confirming, PairingError> {
        let key = Zeroizing::new(
            self.spake
                .finish(peer_message)
                .map_err(|_| PairingError::BadMessage)?,
        );
        let hk = Hkdf::<Sha256>::new(Some(SALT), &key);
        let mut bridge_tag = [0u8; 32];
        let mut vault_tag = [0u8; 32];
        let mut secret = Zeroizing::new([0u8; 32]);
        let expand = |info: &[u8], out: &mut [u8]| {
            hk.expand(info, out).map_err(|_| PairingError::BadMessage)
        };
        expand(b"confirm bridge", &mut bridge_tag)?;
        expand(b"confirm vault", &mut vault_tag)?;
        expand(b"pairing secret", secret.as_mut())?;
        let (mine, theirs) = match self.role {
            Role::Bridge => (bridge_tag, vault_tag),
            Role::Vault => (vault_tag, bridge_tag),
        };
        Ok(Confirming {
            role: self.role,
            mine,
            theirs,
            secret,
        })
    }
}

/// Keys agreed, not yet confirmed: send [`Self::tag`], check the peer's with [`Self::confirm`].
pub struct Confirming {
    role: Role,
    mine: [u8; 32],
    theirs: [u8; 32],
    secret: Zeroizing<[u8; 32]>,
}

impl fmt::Debug for Confirming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Confirming")
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl Confirming {
    /// This side's confirmation tag, to send.
    pub fn tag(&self) -> [u8; 32] {
        self.mine
    }

    /// Checks the peer's tag (in constant time): the same code on both sides, or
    /// [`PairingError::WrongCode`].
    pub fn confirm(self, peer_tag: &[u8]) -> Result<Paired, PairingError> {
        if peer_tag.len() != 32 || !bool::from(self.theirs.ct_eq(peer_tag)) {
            return Err(PairingError::WrongCode);
        }
        Ok(Paired {
            role: self.role,
            secret: self.secret,
        })
    }
}

/// A confirmed pairing: the secret both sides hold. Seal it with the vault (or the bridge's
/// storage); [`crate::Session`]s for each connection derive from it. `Debug` prints no secret.
#[derive(Clone)]
pub struct Paired {
    role: Role,
    secret: Zeroizing<[u8; 32]>,
}

impl fmt::Debug for Paired {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Paired")
            .field("role", &self.role)
            .field("route", &self.route())
            .finish_non_exhaustive()
    }
}

impl Paired {
    pub fn role(&self) -> Role {
        self.role
    }

    /// Six digits both sides show ("482 913"), so the person sees they paired the two devices
    /// they meant to.
    pub fn fingerprint(&self) -> String {
        let mut out = [0u8; 4];
        self.expand(b"fingerprint", &mut out);
        let n = u32::from_be_bytes(out) % 1_000_000;
        format!("{:03} {:03}", n / 1000, n % 1000)
    }

    /// What the relay routes this pairing's connections by (32 hex digits); says nothing of the
    /// secret, and nothing either side sends inside a frame.
    pub fn route(&self) -> String {
        let mut out = [0u8; 16];
        self.expand(b"relay route", &mut out);
        hex::encode(out)
    }

    /// For sealed storage: the role and the secret (33 bytes, wiped on drop).
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        let mut out = Zeroizing::new(Vec::with_capacity(33));
        out.push(self.role.byte());
        out.extend_from_slice(self.secret.as_ref());
        out
    }

    /// Reads what [`Self::to_bytes`] wrote.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, PairingError> {
        let (&role, secret) = bytes.split_first().ok_or(PairingError::Damaged)?;
        let role = match role {
            b'b' => Role::Bridge,
            b'v' => Role::Vault,
            _ => return Err(PairingError::Damaged),
        };
        let secret: [u8; 32] = secret.try_into().map_err(|_| PairingError::Damaged)?;
        Ok(Self {
            role,
            secret: Zeroizing::new(secret),
        })
    }

    pub(crate) fn secret(&self) -> &[u8; 32] {
        &self.secret
    }

    fn expand(&self, info: &[u8], out: &mut [u8]) {
        let hk = Hkdf::<Sha256>::from_prk(self.secret.as_ref());
        // A 32-byte PRK always expands to these short lengths.
        if let Ok(hk) = hk {
            let _ = hk.expand(info, out);
        }
    }
}
