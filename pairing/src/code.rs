//! The pairing code and the offer that carries it.
//!
//! A [`PairingCode`] is 8 symbols of Crockford base32 (40 bits), shown `7KQ2-M9XD`. It is read
//! the way a person types it: case, spaces and dashes do not matter, and `I`/`L` read as `1`,
//! `O` as `0`. It is only ever a SPAKE2 password, so its 40 bits face online guessing only, one
//! guess per handshake, and the vault takes one handshake per code.
//!
//! An [`Offer`] is what the bridge shows: a 4-symbol **mailbox tag** (where the relay keeps the
//! vault's first messages; it tells the relay nothing of the code) and the code, typed as
//! `MMMM-CCCC-CCCC` ([`Offer::typed`]), and, for a QR code or a paste, with the relay's origin:
//! `tacit-pair:v1/MMMM-CCCC-CCCC/<relay>` ([`Offer::to_uri`]). The relay route of the mailbox
//! is a hash of the tag ([`MailboxTag::id`]); a tag another bridge is waiting on is refused by
//! the relay as busy, and the bridge picks another.

use core::fmt;

use thiserror::Error;

/// Crockford's base32 alphabet (no I, L, O, U).
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Symbols in a code.
pub const CODE_LEN: usize = 8;

/// The URI scheme and version of an [`Offer`].
pub const OFFER_PREFIX: &str = "tacit-pair:v1/";

/// Why a code or offer was refused, in words for the person.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CodeError {
    #[error("a pairing code has 12 letters and digits, like 4H7Q-7KQ2-M9XD (the bridge shows it)")]
    Length,
    #[error("a pairing code has only letters and digits (not {0:?}); U is never used")]
    Symbol(char),
    #[error("this is not a Tacit pairing code: it should start with tacit-pair:v1/")]
    NotAnOffer,
    #[error("a mailbox is 32 hexadecimal digits")]
    Mailbox,
    #[error("the pairing offer's relay must be an http:// or https:// address with no path")]
    Relay,
}

/// The short code the bridge shows. Its `Debug` does not print it.
#[derive(Clone, PartialEq, Eq)]
pub struct PairingCode([u8; CODE_LEN]);

impl fmt::Debug for PairingCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PairingCode(…)")
    }
}

impl PairingCode {
    /// The code for 5 random bytes (40 bits).
    pub fn from_random(bytes: [u8; 5]) -> Self {
        Self(encode(&bytes))
    }

    /// Reads a code as a person types it (see the module docs).
    pub fn parse(text: &str) -> Result<Self, CodeError> {
        let symbols: [u8; CODE_LEN] = symbols(text)?.try_into().map_err(|_| CodeError::Length)?;
        Ok(Self(symbols))
    }

    /// `7KQ2-M9XD`.
    pub fn display(&self) -> String {
        let text: String = self.0.iter().map(|&b| b as char).collect();
        format!("{}-{}", &text[..4], &text[4..])
    }

    /// The 8 symbols without the dash: what the handshake uses.
    pub(crate) fn canonical(&self) -> &[u8] {
        &self.0
    }
}

/// The low `5 × N` bits of `bytes` (big endian) as `N` symbols.
fn encode<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let bits = bytes.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
    let mut symbols = [0u8; N];
    for (i, s) in symbols.iter_mut().enumerate() {
        let shift = 5 * (N - 1 - i);
        *s = ALPHABET[((bits >> shift) & 31) as usize];
    }
    symbols
}

/// Reads symbols as a person types them (case, `I`/`L` → `1`, `O` → `0`), skipping dashes and
/// white space.
fn symbols(text: &str) -> Result<Vec<u8>, CodeError> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        if c == '-' || c.is_whitespace() {
            continue;
        }
        let c = match c.to_ascii_uppercase() {
            'I' | 'L' => '1',
            'O' => '0',
            c => c,
        };
        if !c.is_ascii() || !ALPHABET.contains(&(c as u8)) {
            return Err(CodeError::Symbol(c));
        }
        out.push(c as u8);
    }
    Ok(out)
}

/// Symbols in a mailbox tag.
pub const TAG_LEN: usize = 4;

/// The mailbox tag a bridge shows before its code: 4 symbols (20 bits), only to find the
/// mailbox (the code is what authenticates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MailboxTag([u8; TAG_LEN]);

impl MailboxTag {
    /// The tag for 3 random bytes (the low 20 bits are used).
    pub fn from_random(bytes: [u8; 3]) -> Self {
        Self(encode(&bytes))
    }

    pub fn display(&self) -> String {
        self.0.iter().map(|&b| b as char).collect()
    }

    /// The mailbox the tag names: the first 16 bytes of SHA-256 of a label and the tag.
    pub fn id(&self) -> MailboxId {
        use sha2::{Digest, Sha256};
        let digest = Sha256::new()
            .chain_update(b"tacit-pairing mailbox v1|")
            .chain_update(self.0)
            .finalize();
        let mut id = [0u8; 16];
        id.copy_from_slice(&digest[..16]);
        MailboxId(id)
    }
}

/// Where the relay keeps the vault's first messages for this pairing: 16 bytes (its route is
/// their hex).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MailboxId([u8; 16]);

impl MailboxId {
    pub fn from_random(bytes: [u8; 16]) -> Self {
        Self(bytes)
    }

    pub fn parse(text: &str) -> Result<Self, CodeError> {
        let bytes = hex::decode(text).map_err(|_| CodeError::Mailbox)?;
        bytes.try_into().map(Self).map_err(|_| CodeError::Mailbox)
    }

    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

/// What the bridge shows: the relay, the mailbox tag and the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub relay: String,
    pub mailbox: MailboxTag,
    pub code: PairingCode,
}

impl Offer {
    /// `MMMM-CCCC-CCCC`: what the person types into the vault (which knows its relay).
    pub fn typed(&self) -> String {
        format!("{}-{}", self.mailbox.display(), self.code.display())
    }

    /// `tacit-pair:v1/MMMM-CCCC-CCCC/<relay>`.
    pub fn to_uri(&self) -> String {
        format!("{OFFER_PREFIX}{}/{}", self.typed(), self.relay)
    }

    /// Reads what a QR code or a paste gave (surrounding white space ignored).
    pub fn parse(text: &str) -> Result<Self, CodeError> {
        let rest = text
            .trim()
            .strip_prefix(OFFER_PREFIX)
            .ok_or(CodeError::NotAnOffer)?;
        let (typed, relay) = rest.split_once('/').ok_or(CodeError::NotAnOffer)?;
        Self::parse_typed(typed, relay)
    }

    /// Reads the typed form, `MMMM-CCCC-CCCC` as a person types it, for the relay `relay`.
    pub fn parse_typed(typed: &str, relay: &str) -> Result<Self, CodeError> {
        let all = symbols(typed)?;
        if all.len() != TAG_LEN + CODE_LEN {
            return Err(CodeError::Length);
        }
        let mut tag = [0u8; TAG_LEN];
        tag.copy_from_slice(&all[..TAG_LEN]);
        let mut code = [0u8; CODE_LEN];
        code.copy_from_slice(&all[TAG_LEN..]);
        Ok(Self {
            relay: relay_origin(relay)?,
            mailbox: MailboxTag(tag),
            code: PairingCode(code),
        })
    }
}

/// `http(s)://host[:port]`, nothing after (a trailing `/` is dropped), no user info, no query.
fn relay_origin(text: &str) -> Result<String, CodeError> {
    let text = text.strip_suffix('/').unwrap_or(text);
    let host = text
        .strip_prefix("http://")
        .or_else(|| text.strip_prefix("https://"))
        .ok_or(CodeError::Relay)?;
    let fine = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
    if fine {
        Ok(text.to_owned())
    } else {
        Err(CodeError::Relay)
    }
}
