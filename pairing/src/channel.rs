//! Sessions: the frames a paired bridge and vault exchange over one connection.
//!
//! Each connection starts with both sides sending 16 fresh random bytes (the bridge's first);
//! [`Session::new`] derives from the pairing secret and both nonces a session id and one
//! AES-256-GCM key per direction (HKDF-SHA256). A frame is its sequence number (8 bytes, big
//! endian) and the ciphertext; the AEAD nonce is the sequence number and the associated data
//! binds the session id, the direction and the number. [`Session::open`] takes frames only in
//! order: an old number is [`FrameError::Replayed`], a later one [`FrameError::OutOfOrder`],
//! anything not sealed by the peer in this session [`FrameError::Forged`]; none of them changes
//! the session, so a stranger's or the relay's frames cannot stop the next genuine one.

use core::fmt;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use hkdf::Hkdf;
use sha2::Sha256;
use thiserror::Error;
use zeroize::Zeroizing;

use crate::handshake::{Paired, Role};

/// The largest plaintext a frame carries (256 KiB).
pub const MAX_FRAME: usize = 256 * 1024;

const SEQ_LEN: usize = 8;
const TAG_LEN: usize = 16;

/// Why a frame was refused. The session is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrameError {
    #[error("the frame is too short to be one")]
    TooShort,
    #[error("the frame is larger than {MAX_FRAME} bytes")]
    TooLarge,
    #[error("frame {got} was already received (expected {expected}): a replay")]
    Replayed { expected: u64, got: u64 },
    #[error("frame {got} came before frame {expected}: frames were lost or reordered")]
    OutOfOrder { expected: u64, got: u64 },
    #[error("the frame was not sealed by the paired peer in this session")]
    Forged,
    #[error("this session has sent all the frames it can; reconnect")]
    Exhausted,
}

/// One connection's keys and counters. `Debug` prints no key.
pub struct Session {
    id: [u8; 16],
    send: Aes256Gcm,
    recv: Aes256Gcm,
    send_dir: u8,
    recv_dir: u8,
    next_send: u64,
    next_recv: u64,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("id", &hex::encode(self.id))
            .field("next_send", &self.next_send)
            .field("next_recv", &self.next_recv)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// The session of one connection, from the pairing and the nonces both sides sent.
    pub fn new(paired: &Paired, bridge_nonce: &[u8; 16], vault_nonce: &[u8; 16]) -> Self {
        let mut salt = [0u8; 32];
        salt[..16].copy_from_slice(bridge_nonce);
        salt[16..].copy_from_slice(vault_nonce);
        let hk = Hkdf::<Sha256>::new(Some(&salt), paired.secret());
        let mut id = [0u8; 16];
        let mut to_vault = Zeroizing::new([0u8; 32]);
        let mut to_bridge = Zeroizing::new([0u8; 32]);
        // Lengths far below HKDF-SHA256's limit: expand cannot fail.
        let _ = hk.expand(b"session id", &mut id);
        let _ = hk.expand(b"bridge to vault", to_vault.as_mut());
        let _ = hk.expand(b"vault to bridge", to_bridge.as_mut());
        let cipher = |key: &[u8; 32]| Aes256Gcm::new(<&Key<Aes256Gcm>>::from(key));
        let (send, recv, send_dir, recv_dir) = match paired.role() {
            Role::Bridge => (cipher(&to_vault), cipher(&to_bridge), b'v', b'b'),
            Role::Vault => (cipher(&to_bridge), cipher(&to_vault), b'b', b'v'),
        };
        Self {
            id,
            send,
            recv,
            send_dir,
            recv_dir,
            next_send: 0,
            next_recv: 0,
        }
    }

    /// The session id both sides derive (for logs: says nothing of the keys).
    pub fn id(&self) -> String {
        hex::encode(self.id)
    }

    /// Seals the next frame.
    pub fn seal(&mut self, plaintext: &[u8]) -> Result<Vec<u8>, FrameError> {
        if plaintext.len() > MAX_FRAME {
            return Err(FrameError::TooLarge);
        }
        let seq = self.next_send;
        let next = seq.checked_add(1).ok_or(FrameError::Exhausted)?;
        let aad = self.aad(self.send_dir, seq);
        let sealed = self
            .send
            .encrypt(
                &nonce(seq),
                Payload {
                    msg: plaintext,
                    aad: &aad,
                },
            )
            .map_err(|_| FrameError::TooLarge)?;
        self.next_send = next;
        let mut frame = Vec::with_capacity(SEQ_LEN + sealed.len());
        frame.extend_from_slice(&seq.to_be_bytes());
        frame.extend_from_slice(&sealed);
        Ok(frame)
    }

    /// Opens the peer's next frame (see the module docs for what is refused).
    pub fn open(&mut self, frame: &[u8]) -> Result<Zeroizing<Vec<u8>>, FrameError> {
        if frame.len() < SEQ_LEN + TAG_LEN {
            return Err(FrameError::TooShort);
        }
        if frame.len() > SEQ_LEN + TAG_LEN + MAX_FRAME {
            return Err(FrameError::TooLarge);
        }
        let (seq, body) = frame.split_at(SEQ_LEN);
        let mut number = [0u8; SEQ_LEN];
        number.copy_from_slice(seq);
        let got = u64::from_be_bytes(number);
        let expected = self.next_recv;
        // Authenticate first: a stranger's number says nothing about the session.
        let aad = self.aad(self.recv_dir, got);
        let plain = self
            .recv
            .decrypt(
                &nonce(got),
                Payload {
                    msg: body,
                    aad: &aad,
                },
            )
            .map_err(|_| FrameError::Forged)?;
        match got.cmp(&expected) {
            core::cmp::Ordering::Less => Err(FrameError::Replayed { expected, got }),
            core::cmp::Ordering::Greater => Err(FrameError::OutOfOrder { expected, got }),
            core::cmp::Ordering::Equal => {
                self.next_recv = expected.checked_add(1).ok_or(FrameError::Exhausted)?;
                Ok(Zeroizing::new(plain))
            }
        }
    }

    fn aad(&self, direction: u8, seq: u64) -> [u8; 40] {
        let mut aad = [0u8; 40];
        aad[..15].copy_from_slice(b"tacit-frame v1|");
        aad[15..31].copy_from_slice(&self.id);
        aad[31] = direction;
        aad[32..].copy_from_slice(&seq.to_be_bytes());
        aad
    }
}

fn nonce(seq: u64) -> Nonce<aes_gcm::aead::consts::U12> {
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&seq.to_be_bytes());
    Nonce::from(n)
}
