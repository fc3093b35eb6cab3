//! Whom a relying site trusts, as its configuration names them: the rules every signer and
//! issuer entry must meet before a server acts on it. The servers only read the file and call
//! these; a configuration that breaks one is refused at start, with the rule's sentence.
//!
//! Rules:
//! - keys come from exactly one place: a `keys_url` (fetched; `http://` or `https://` only, so a
//!   `file://` or a bare path cannot smuggle a local file in as "fetched") or a pinned file
//!   ([`key_source`]);
//! - a trusted issuer has a name people read, 1 to [`MAX_ISSUER_NAME_CHARS`] characters, not
//!   blank;
//! - an issuer may be trusted for `income` or `age` only: districts and conditions are always
//!   self-asserted, so an entry claiming an issuer vouches for them is refused
//!   ([`check_issuer`]);
//! - each issuer is listed once ([`check_issuers`]): two entries for one issuer would let the
//!   looser one silently widen the stricter;
//! - fetched keys are refreshed every [`REFRESH_INTERVAL`], and a request naming a key the
//!   cached set lacks may trigger one more fetch only if none happened in the last
//!   [`MIN_REFETCH_INTERVAL`] ([`may_refetch`]), so forged key ids cannot make a site hammer a
//!   signer or an issuer.

use core::time::Duration;

use wallet_core::{Attribute, Origin};

/// How often fetched keys are refreshed in the background: five minutes.
pub const REFRESH_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// The least time between two fetches triggered by unknown key ids: ten seconds.
pub const MIN_REFETCH_INTERVAL: Duration = Duration::from_secs(10);

/// Whether an unknown key id may trigger a fetch, given the time since the last fetch of that
/// party's keys (none yet: `None`). The caller measures the time (a monotonic clock).
pub fn may_refetch(since_last_fetch: Option<Duration>) -> bool {
    since_last_fetch.is_none_or(|elapsed| elapsed >= MIN_REFETCH_INTERVAL)
}

/// Longest name of a trusted issuer, in characters.
pub const MAX_ISSUER_NAME_CHARS: usize = 120;

/// Where a trusted party's keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource<P> {
    /// Fetched from this `http(s)://` URL (and refreshed).
    Url(String),
    /// Read from this pinned file.
    Pinned(P),
}

/// Why an entry's key source is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KeySourceError {
    #[error("keys_url must be an http:// or https:// URL")]
    NotHttp,
    #[error("needs exactly one of keys_url and pinned_keys")]
    NotExactlyOne,
}

/// The key source an entry names: exactly one of `keys_url` (an `http://` or `https://` URL)
/// and `pinned` (whatever names the file; the caller reads it).
pub fn key_source<P>(
    keys_url: Option<&str>,
    pinned: Option<P>,
) -> Result<KeySource<P>, KeySourceError> {
    match (keys_url, pinned) {
        (Some(url), None) if url.starts_with("http://") || url.starts_with("https://") => {
            Ok(KeySource::Url(url.to_owned()))
        }
        (Some(_), None) => Err(KeySourceError::NotHttp),
        (None, Some(path)) => Ok(KeySource::Pinned(path)),
        _ => Err(KeySourceError::NotExactlyOne),
    }
}

/// One trusted-issuer entry, as a configuration names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IssuerEntry<'a> {
    pub issuer: &'a Origin,
    pub name: &'a str,
    pub vouches_for: Option<Attribute>,
    pub keys_url: Option<&'a str>,
    /// Whether the entry names a pinned key file.
    pub pinned: bool,
}

/// Why a trusted-issuer entry is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IssuerEntryError {
    #[error("name must be 1 to {MAX_ISSUER_NAME_CHARS} characters")]
    Name,
    #[error(
        "vouches_for must be income or age (districts and conditions are always self-asserted)"
    )]
    VouchesFor,
    #[error(transparent)]
    Keys(#[from] KeySourceError),
    #[error("is listed twice")]
    ListedTwice,
}

/// Whether `attribute` is one an issuer can be trusted to vouch for.
pub fn issuer_may_vouch_for(attribute: Attribute) -> bool {
    crate::predicates::IssuerAttribute::for_attribute(attribute).is_some()
}

/// The rules for one entry (see the module documentation).
pub fn check_issuer(entry: &IssuerEntry<'_>) -> Result<(), IssuerEntryError> {
    if entry.name.trim().is_empty() || entry.name.chars().count() > MAX_ISSUER_NAME_CHARS {
        return Err(IssuerEntryError::Name);
    }
    if entry.vouches_for.is_some_and(|a| !issuer_may_vouch_for(a)) {
        return Err(IssuerEntryError::VouchesFor);
    }
    key_source(entry.keys_url, entry.pinned.then_some(()))?;
    Ok(())
}

/// The rules for a whole list: each entry's, and each issuer once. The error names the issuer
/// whose entry is refused.
pub fn check_issuers<'a>(
    entries: &[IssuerEntry<'a>],
) -> Result<(), (&'a Origin, IssuerEntryError)> {
    for (i, entry) in entries.iter().enumerate() {
        check_issuer(entry).map_err(|e| (entry.issuer, e))?;
        if entries[..i]
            .iter()
            .any(|other| other.issuer == entry.issuer)
        {
            return Err((entry.issuer, IssuerEntryError::ListedTwice));
        }
    }
    Ok(())
}
