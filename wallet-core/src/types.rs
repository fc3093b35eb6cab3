//! Small public newtypes shared by the log, receipts and the gate: times, origins and tokens.
//!
//! Each is validated on construction so that it can be written into byte-stable formats
//! (no spaces, tabs, newlines or non-ASCII).

use serde::{Deserialize, Serialize};

use crate::error::TextError;

/// A point in time as Unix milliseconds. The crate never reads a clock: callers pass these in.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub const fn from_millis(ms: i64) -> Self {
        Self(ms)
    }

    pub const fn millis(self) -> i64 {
        self.0
    }

    /// `self + ms`, saturating.
    pub const fn plus_millis(self, ms: i64) -> Self {
        Self(self.0.saturating_add(ms))
    }

    /// The calendar date (UTC) of this instant, for age claims; [`time::Date::MIN`] for an
    /// instant outside `time`'s range (see [`Timestamp::checked_date_utc`]).
    pub fn date_utc(self) -> time::Date {
        self.checked_date_utc().unwrap_or(time::Date::MIN)
    }

    /// The calendar date (UTC) of this instant; `None` outside `time`'s range of dates.
    pub fn checked_date_utc(self) -> Option<time::Date> {
        let secs = self.0.div_euclid(1000);
        time::OffsetDateTime::from_unix_timestamp(secs)
            .ok()
            .map(|t| t.date())
    }
}

/// A web origin such as `https://housing.example` or `http://127.0.0.1:8081`: scheme, host and
/// optional port, nothing else.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Origin(String);

impl Origin {
    pub const MAX_LEN: usize = 256;

    pub fn parse(text: &str) -> Result<Self, TextError> {
        let bad = |reason| TextError {
            field: "origin",
            reason,
        };
        if text.is_empty() || text.len() > Self::MAX_LEN {
            return Err(bad("must be 1 to 256 characters"));
        }
        let rest = text
            .strip_prefix("https://")
            .or_else(|| text.strip_prefix("http://"))
            .ok_or_else(|| bad("must start with http:// or https://"))?;
        let host_ok = !rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
            && !rest.starts_with(':');
        if !host_ok {
            return Err(bad("must be scheme://host[:port] with no path"));
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Origin {
    type Error = TextError;
    fn try_from(value: String) -> Result<Self, TextError> {
        Self::parse(&value)
    }
}

impl From<Origin> for String {
    fn from(value: Origin) -> Self {
        value.0
    }
}

impl core::fmt::Display for Origin {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

macro_rules! token {
    ($(#[$meta:meta])* $name:ident, $field:literal, $max:expr, $extra:expr, $reason:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            pub const MAX_LEN: usize = $max;

            pub fn parse(text: &str) -> Result<Self, TextError> {
                let extra: &[u8] = $extra;
                let ok = !text.is_empty()
                    && text.len() <= Self::MAX_LEN
                    && text.bytes().all(|b| b.is_ascii_alphanumeric() || extra.contains(&b));
                if ok {
                    Ok(Self(text.to_owned()))
                } else {
                    Err(TextError { field: $field, reason: $reason })
                }
            }
        }

        $crate::string_newtype!($name, TextError);
    };
}

/// What every validated string newtype (`struct Name(String)` with a `parse(&str) ->
/// Result<Self, $error>`) has besides its rule: `as_str`, `TryFrom<String>` through `parse`
/// (so serde's `try_from = "String"` validates), `From<Name> for String` and `Display`. The
/// wallet's tokens here and capability-gate's request and proposal ids use it.
#[macro_export]
macro_rules! string_newtype {
    ($name:ident, $error:ty) => {
        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = $error;
            fn try_from(value: String) -> Result<Self, $error> {
                Self::parse(&value)
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> Self {
                value.0
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

token!(
    /// A WebMCP tool name: `[A-Za-z0-9_.-]{1,128}`.
    ToolName, "tool", 128, b"_.-", "must match [A-Za-z0-9_.-]{1,128}"
);
token!(
    /// A grant's id, issued by the gate.
    GrantId, "grant_id", 64, b"_-", "must match [A-Za-z0-9_-]{1,64}"
);
token!(
    /// A site's nonce: opaque to the wallet, echoed into receipts.
    Nonce, "nonce", 128, b"_-.~", "must match [A-Za-z0-9_.~-]{1,128}"
);
token!(
    /// A session's id, chosen by the wallet.
    SessionId, "session_id", 64, b"_-", "must match [A-Za-z0-9_-]{1,64}"
);
token!(
    /// A signing key's id (hex of the first 8 bytes of SHA-256 of the public key).
    KeyId, "key_id", 64, b"_-", "must match [A-Za-z0-9_-]{1,64}"
);

impl SessionId {
    /// `s-` and 18 lowercase hex digits of `bytes` (from the caller's randomness): always a
    /// valid id, so the page needs no fallback.
    pub fn derive_from_bytes(bytes: &[u8; 9]) -> Self {
        Self(format!("s-{}", hex::encode(bytes)))
    }
}

impl GrantId {
    /// `g` and the gate's counter: always a valid id.
    pub fn derive_from_counter(n: u64) -> Self {
        Self(format!("g{n}"))
    }

    /// `g` and 16 lowercase hex digits of `bytes` (pseudo-random, from the gate's per-session
    /// secret): always a valid id, and nothing in it counts grants.
    pub fn derive_from_bytes(bytes: &[u8; 8]) -> Self {
        Self(format!("g{}", hex::encode(bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_derived_from_bytes_parse() {
        let id = SessionId::derive_from_bytes(&[0xab; 9]);
        assert_eq!(id.as_str(), "s-ababababababababab");
        assert_eq!(SessionId::parse(id.as_str()), Ok(id));
        let grant = GrantId::derive_from_counter(u64::MAX);
        assert_eq!(GrantId::parse(grant.as_str()), Ok(grant));
        let grant = GrantId::derive_from_bytes(&[0x0f; 8]);
        assert_eq!(grant.as_str(), "g0f0f0f0f0f0f0f0f");
        assert_eq!(GrantId::parse(grant.as_str()), Ok(grant));
    }
}
