//! The single-use rule every Tacit service applies to what it hands out once: a site's nonce,
//! an issuer's nonce, enrolment code and refresh token, a signer's enrolment code.
//!
//! A single-use value is **usable** at `now` while it is unused and `now` is strictly before its
//! expiry ([`usable`]). Using it sets `used_at`, so it is never usable again, even before its
//! expiry. At the expiry instant itself it is no longer usable.
//!
//! The services decide this in their database, so that two racing requests cannot both use one
//! value: one conditional `UPDATE … SET used_at = $1 WHERE <key> AND` [`USABLE_AT_1`], accepted
//! only when it changed a row. [`USABLE_AT_1`] is [`usable`] written in SQL, with `$1` the time
//! (Unix milliseconds), the columns `used_at BIGINT NULL` and `expires_at BIGINT NOT NULL`.

/// [`usable`] as a SQL predicate over the columns `used_at` and `expires_at`, with `$1` the
/// current time: join it to the row's key with `AND`.
pub const USABLE_AT_1: &str = crate::usable_at_1!();

/// [`USABLE_AT_1`] as a string literal, for `concat!` into a `const` query:
/// `concat!("UPDATE nonces SET used_at = $1 WHERE nonce = $2 AND ", usable_at_1!())`.
#[macro_export]
macro_rules! usable_at_1 {
    () => {
        "used_at IS NULL AND expires_at > $1"
    };
}

/// Whether a single-use value that expires at `expires_at` and was used at `used_at` (if at all)
/// may be used at `now`: unused, and `now < expires_at`. The same rule as [`USABLE_AT_1`].
pub fn usable<T: PartialOrd>(used_at: Option<T>, expires_at: T, now: T) -> bool {
    used_at.is_none() && expires_at > now
}
