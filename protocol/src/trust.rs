//! Whom a relying site trusts, as its configuration names them: the rules every signer and
//! issuer entry must meet before a server acts on it. The servers only read the file and call
//! these; a configuration that breaks one is refused at start, with the rule's sentence.
//!
//! Rules:
//! - keys come from exactly one place: a `keys_url` (fetched; `https://`, or `http://` to this
//!   machine only — `127.0.0.0/8`, `[::1]` or `localhost` — so neither a `file://` or bare path
//!   nor a plain-http fetch across a network can stand in for the keys) or a pinned file
//!   ([`key_source`], [`is_loopback_http`]);
//! - a trusted issuer has a name people read, 1 to [`MAX_ISSUER_NAME_CHARS`] characters, not
//!   blank;
//! - an issuer is trusted for one attribute, named (`vouches_for`): `income` or `age` only, since
//!   districts and conditions are always self-asserted; an entry without one, or claiming an
//!   issuer vouches for anything else, is refused ([`check_issuer`]);
//! - an issuer is trusted for one credential type, named (`vct`, 1 to [`MAX_VCT_CHARS`]
//!   characters, no spaces): a credential of another type is not taken as its word;
//! - each issuer is listed once ([`check_issuers`]): two entries for one issuer would let the
//!   looser one silently widen the stricter;
//! - fetched keys are refreshed every [`REFRESH_INTERVAL`], and a request naming a key the
//!   cached set lacks may trigger one more fetch only if none happened in the last
//!   [`MIN_REFETCH_INTERVAL`] ([`may_refetch`]), so forged key ids cannot make a site hammer a
//!   signer or an issuer;
//! - a receipt is judged against signer keys fetched at most [`MAX_KEY_AGE`] ago
//!   ([`needs_fresh_keys`]), since they carry the signer's revoked receipts.

use core::time::Duration;

use wallet_core::{Attribute, Origin};

/// How often fetched keys are refreshed in the background: five minutes.
pub const REFRESH_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// The least time between two fetches triggered by unknown key ids: ten seconds.
pub const MIN_REFETCH_INTERVAL: Duration = Duration::from_secs(10);

/// The oldest a fetched signer key set may be when a receipt is judged: ten seconds. An older
/// one is fetched afresh first (one fetch at a time; a failed fetch keeps the last good set and
/// counts as a fetch, so a signer that is down costs one attempt per this long). The set
/// carries the signer's revoked receipts, so a site refuses the receipts of an install revoked
/// at the signer within this long plus one fetch ([`needs_fresh_keys`]). Keys pinned in a file
/// are never fetched and learn of no revocation.
pub const MAX_KEY_AGE: Duration = Duration::from_secs(10);

/// Whether a receipt must wait for a fresh fetch of the signer's keys, given the time since the
/// last fetch (none yet: `None`).
pub fn needs_fresh_keys(since_last_fetch: Option<Duration>) -> bool {
    since_last_fetch.is_none_or(|elapsed| elapsed >= MAX_KEY_AGE)
}

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
    #[error(
        "keys_url must be an https:// URL, or an http:// URL to this machine (127.0.0.1, [::1] \
         or localhost)"
    )]
    NotHttp,
    #[error(
        "keys_url over plain http:// must point at this machine (127.0.0.1, [::1] or \
         localhost); use https:// for any other host"
    )]
    PlainHttpOffLoopback,
    #[error("needs exactly one of keys_url and pinned_keys")]
    NotExactlyOne,
}

/// The key source an entry names: exactly one of `keys_url` (an `https://` URL, or an
/// `http://` one whose host is this machine: [`is_loopback_http`]) and `pinned` (whatever
/// names the file; the caller reads it).
pub fn key_source<P>(
    keys_url: Option<&str>,
    pinned: Option<P>,
) -> Result<KeySource<P>, KeySourceError> {
    match (keys_url, pinned) {
        (Some(url), None) => check_keys_url(url).map(|()| KeySource::Url(url.to_owned())),
        (None, Some(path)) => Ok(KeySource::Pinned(path)),
        _ => Err(KeySourceError::NotExactlyOne),
    }
}

/// The rule for a URL keys are fetched from: `https://` with a host, or `http://` to this
/// machine ([`is_loopback_http`]).
pub fn check_keys_url(url: &str) -> Result<(), KeySourceError> {
    if let Some(rest) = url.strip_prefix("https://") {
        return match authority_host(rest) {
            Some(_) => Ok(()),
            None => Err(KeySourceError::NotHttp),
        };
    }
    match url.strip_prefix("http://").map(authority_host) {
        Some(Some(_)) if is_loopback_http(url) => Ok(()),
        Some(Some(_)) => Err(KeySourceError::PlainHttpOffLoopback),
        _ => Err(KeySourceError::NotHttp),
    }
}

/// Whether `url` is `http://` to this machine: its host is `localhost`, an IPv4 address in
/// `127.0.0.0/8` or `[::1]`, with no user information (`http://127.0.0.1@evil.example/` is
/// another host).
pub fn is_loopback_http(url: &str) -> bool {
    let Some(host) = url.strip_prefix("http://").and_then(authority_host) else {
        return false;
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return v6
            .parse::<core::net::Ipv6Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    }
    host.parse::<core::net::Ipv4Addr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// The host of a URL's authority (`rest` is what follows `scheme://`), or `None` when there is
/// no host or the authority carries user information.
fn authority_host(rest: &str) -> Option<&str> {
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    if authority.contains('@') || authority.is_empty() {
        return None;
    }
    let host = if authority.starts_with('[') {
        let close = authority.find(']')?;
        let (host, port) = authority.split_at(close + 1);
        if !(port.is_empty() || port.strip_prefix(':').is_some_and(is_port)) {
            return None;
        }
        host
    } else {
        match authority.split_once(':') {
            Some((host, port)) if is_port(port) => host,
            Some(_) => return None,
            None => authority,
        }
    };
    (!host.is_empty()).then_some(host)
}

fn is_port(text: &str) -> bool {
    !text.is_empty() && text.len() <= 5 && text.bytes().all(|b| b.is_ascii_digit())
}

/// Longest credential type (`vct`) a trusted-issuer entry may name, in characters.
pub const MAX_VCT_CHARS: usize = 256;

/// One trusted-issuer entry, as a configuration names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IssuerEntry<'a> {
    pub issuer: &'a Origin,
    pub name: &'a str,
    /// What it is trusted for; required (`None` is refused).
    pub vouches_for: Option<Attribute>,
    /// The credential type (`vct`) it is trusted for; required (`None` is refused).
    pub vct: Option<&'a str>,
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
    #[error(
        "needs vouches_for (income or age): an issuer trusted for every predicate it signs \
         would vouch for what this site never meant to take from it"
    )]
    VouchesForMissing,
    #[error(
        "needs vct, the credential type it issues (1 to {MAX_VCT_CHARS} characters, no spaces, \
         e.g. \"https://tacit.example/vct/income\"): credentials of any other type are refused"
    )]
    Vct,
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
    match entry.vouches_for {
        None => return Err(IssuerEntryError::VouchesForMissing),
        Some(attribute) if !issuer_may_vouch_for(attribute) => {
            return Err(IssuerEntryError::VouchesFor);
        }
        Some(_) => {}
    }
    match entry.vct {
        Some(vct)
            if !vct.is_empty()
                && vct.chars().count() <= MAX_VCT_CHARS
                && !vct.chars().any(|c| c.is_whitespace() || c.is_control()) => {}
        _ => return Err(IssuerEntryError::Vct),
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
