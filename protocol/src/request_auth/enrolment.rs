//! Enrolment: the one-time code an operator hands a person, and the bodies of
//! `POST /v1/installs`.

use core::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use wallet_core::Timestamp;

use super::{AuthError, InstallId, Jwk};

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A one-time enrolment code: 16 Crockford base32 characters (80 bits). Its `Debug` hides it;
/// `Display` writes `XXXX-XXXX-XXXX-XXXX` for the person to type.
#[derive(Clone, PartialEq, Eq)]
pub struct EnrolmentCode([u8; 16]);

impl EnrolmentCode {
    /// Reads a code typed by a person: any case, dashes and spaces ignored, and the Crockford
    /// look-alikes `I`/`L` read as `1`, `O` as `0`.
    pub fn parse(text: &str) -> Result<Self, AuthError> {
        let mut out = [0u8; 16];
        let mut n = 0;
        for b in text.bytes().filter(|b| *b != b'-' && *b != b' ') {
            let c = match b.to_ascii_uppercase() {
                b'I' | b'L' => b'1',
                b'O' => b'0',
                c if CROCKFORD.contains(&c) => c,
                _ => return Err(AuthError::BadCode),
            };
            *out.get_mut(n).ok_or(AuthError::BadCode)? = c;
            n += 1;
        }
        (n == 16).then_some(Self(out)).ok_or(AuthError::BadCode)
    }

    /// The 16 characters without dashes.
    pub fn canonical(&self) -> &str {
        core::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl core::fmt::Display for EnrolmentCode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let c = self.canonical();
        write!(f, "{}-{}-{}-{}", &c[..4], &c[4..8], &c[8..12], &c[12..])
    }
}

impl core::fmt::Debug for EnrolmentCode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("EnrolmentCode(…)")
    }
}

/// A code from 10 random bytes (the caller's randomness), 5 bits a character.
pub fn make_enrolment_code(random: [u8; 10]) -> EnrolmentCode {
    let bits = random
        .iter()
        .fold(0u128, |acc, b| (acc << 8) | u128::from(*b));
    let mut out = [0u8; 16];
    for (i, c) in out.iter_mut().enumerate() {
        let index = (bits >> (75 - 5 * i)) & 31;
        *c = CROCKFORD[index as usize];
    }
    EnrolmentCode(out)
}

/// What the signer stores for a code: SHA-256 over a domain tag and the canonical characters.
pub fn derive_code_hash(code: &EnrolmentCode) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(b"tacit-enrolment-code-v1\0");
    hasher.update(code.0);
    hasher.finalize().into()
}

/// The body of `POST /v1/installs`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnrolmentRequest {
    pub code: String,
    pub public_key: Jwk,
}

/// The answer to a successful enrolment (`201`).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnrolmentResponse {
    pub install_id: InstallId,
    pub signer_origin: String,
    pub keys_url: String,
}

/// Shortest an enrolment code may stay valid: one second.
pub const MIN_CODE_VALIDITY: Duration = Duration::from_secs(1);

/// Longest an enrolment code may stay valid, at the signer and at an issuer alike: 30 days. A
/// code is a bearer secret handed to a person out of band, redeemable by whoever holds it; a
/// month covers a letter in the post, and a code not redeemed by then is best made anew.
pub const MAX_CODE_VALIDITY: Duration = Duration::from_secs(30 * 24 * 3600);

/// Why a code validity was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CodeValidityError {
    #[error("add a unit: s, m, h or d (for example 24h)")]
    NoUnit,
    #[error("expected a whole number then s, m, h or d (for example 24h)")]
    NotANumber,
    #[error("the unit is one of s, m, h or d (for example 24h)")]
    BadUnit,
    #[error("an enrolment code is valid for between 1 second and 30 days")]
    OutOfRange,
}

/// Reads a code validity as an operator types it: a whole number and one unit, `90s`, `30m`,
/// `24h`, `7d`; surrounding spaces are ignored. Within [`MIN_CODE_VALIDITY`] to
/// [`MAX_CODE_VALIDITY`] ([`code_expiry`]).
pub fn parse_code_validity(text: &str) -> Result<Duration, CodeValidityError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or(CodeValidityError::NoUnit)?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().map_err(|_| CodeValidityError::NotANumber)?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(CodeValidityError::BadUnit),
    };
    let valid_for = Duration::from_secs(n.saturating_mul(seconds));
    check_code_validity(valid_for)?;
    Ok(valid_for)
}

/// Whether a code may stay valid for `valid_for`: [`MIN_CODE_VALIDITY`] to
/// [`MAX_CODE_VALIDITY`], both included.
pub fn check_code_validity(valid_for: Duration) -> Result<(), CodeValidityError> {
    if (MIN_CODE_VALIDITY..=MAX_CODE_VALIDITY).contains(&valid_for) {
        Ok(())
    } else {
        Err(CodeValidityError::OutOfRange)
    }
}

/// When a code made at `now` and valid for `valid_for` expires; refused outside
/// [`check_code_validity`]'s bounds.
pub fn code_expiry(now: Timestamp, valid_for: Duration) -> Result<Timestamp, CodeValidityError> {
    check_code_validity(valid_for)?;
    let millis = i64::try_from(valid_for.as_millis()).map_err(|_| CodeValidityError::OutOfRange)?;
    Ok(now.plus_millis(millis))
}
