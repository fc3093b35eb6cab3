//! The comparison log: an append-only, hash-chained record of every question asked.
//!
//! An entry holds the sequence number, the time, the asking origin, the tool, the claim (its kind
//! and public parameters), the outcome, the grant id, the previous entry's hash and its own hash.
//! Every field is a validated type whose charset excludes whitespace; there is no free-text field
//! and no field that could hold a value from the profile.
//!
//! # Entry hash
//!
//! `hash = SHA-256(canonical bytes)`. The canonical bytes are the domain-separation prefix
//! `b"tacit/log-entry/v1\0"` followed by these fields in this order, each written as a
//! big-endian `u32` byte length and then the bytes:
//!
//! | field       | bytes                                   |
//! |-------------|-----------------------------------------|
//! | `seq`       | `u64` big-endian (8 bytes)              |
//! | `at`        | `i64` big-endian, two's complement (8)  |
//! | `origin`    | UTF-8 text                              |
//! | `tool`      | UTF-8 text                              |
//! | `claim`     | [`Claim::canonical`] as UTF-8 text      |
//! | `outcome`   | [`Outcome::as_str`] as UTF-8 text       |
//! | `grant_id`  | UTF-8 text                              |
//! | `prev_hash` | 32 raw bytes                            |
//! | `issuer`    | UTF-8 text, **only when present**       |
//!
//! `issuer` is the origin of the credential issuer whose predicate answered the claim (an
//! issuer-backed answer); a self-asserted answer has none, so its bytes (and every log and receipt
//! written before issuer-backed answers existed) are unchanged. A present issuer is preceded by
//! the field `issuer` itself (length-prefixed), so no self-asserted entry can collide with it.
//!
//! The first entry has `seq` 0 and `prev_hash` [`Hash::ZERO`]; entry *i* has `seq` *i* and the
//! `hash` of entry *i − 1* as `prev_hash`. So any edit, removal, insertion or reordering breaks the
//! chain, except removing entries from the end, which only a known head reveals
//! ([`ComparisonLog::verify_with_head`]).
//!
//! # Time
//!
//! Time is *not* required to be non-decreasing. It comes from the caller's clock, which can step
//! backwards (NTP, a person fixing their clock), and refusing to record a comparison would break
//! "everything is on the record". Order is given by `seq` and the chain; `at` is informative.
//!
//! # Export format (version 1)
//!
//! UTF-8 text, `\n` line endings, ending with a newline:
//!
//! ```text
//! tacit-comparison-log v1
//! <seq>\t<at>\t<origin>\t<tool>\t<claim>\t<outcome>\t<grant_id>\t<prev_hash>\t<hash>[\t<issuer>]
//! ...
//! ```
//!
//! The tenth field, the issuer's origin, is written only for an issuer-backed answer.
//!
//! Numbers are decimal without `+`, leading zeros or `-0`; hashes are 64 lowercase hex digits;
//! the claim is its canonical rendering (which contains spaces but never a tab). [`import`]
//! accepts exactly what [`ComparisonLog::export`] writes, so importing and exporting again yields
//! the same bytes.
//!
//! [`import`]: ComparisonLog::import

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::claim::{Claim, Outcome};
use crate::error::{ChainBroken, LogError, TextError};
use crate::types::{GrantId, Origin, Timestamp, ToolName};

/// Domain-separation prefix of an entry's canonical bytes.
pub const ENTRY_DOMAIN: &[u8] = b"tacit/log-entry/v1\0";

/// First line of an export.
pub const EXPORT_HEADER: &str = "tacit-comparison-log v1";

/// A SHA-256 hash, written as 64 lowercase hex digits. Equality is constant-time.
#[derive(Clone, Copy, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Hash([u8; 32]);

impl Hash {
    /// The genesis value: `prev_hash` of the first entry and the head of an empty log.
    pub const ZERO: Hash = Hash([0; 32]);

    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// SHA-256 of `data`.
    pub fn digest(data: &[u8]) -> Self {
        Self(Sha256::digest(data).into())
    }

    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Parses exactly 64 lowercase hex digits (uppercase is refused so the text form is unique).
    pub fn from_hex(text: &str) -> Option<Self> {
        decode_lower_hex::<32>(text).map(Self)
    }
}

/// Decodes exactly `2 * N` lowercase hex digits.
pub(crate) fn decode_lower_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let lower = text.len() == 2 * N && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !lower {
        return None;
    }
    let mut out = [0u8; N];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}

impl PartialEq for Hash {
    fn eq(&self, other: &Self) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl ConstantTimeEq for Hash {
    fn ct_eq(&self, other: &Self) -> subtle::Choice {
        self.0.ct_eq(&other.0)
    }
}

impl core::fmt::Debug for Hash {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Hash({})", self.to_hex())
    }
}

impl core::fmt::Display for Hash {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl TryFrom<String> for Hash {
    type Error = TextError;
    fn try_from(value: String) -> Result<Self, TextError> {
        Self::from_hex(&value).ok_or(TextError {
            field: "hash",
            reason: "must be 64 lowercase hex digits",
        })
    }
}

impl From<Hash> for String {
    fn from(value: Hash) -> Self {
        value.to_hex()
    }
}

/// Appends `bytes` preceded by their length as a big-endian `u32`.
pub(crate) fn put_field(out: &mut Vec<u8>, bytes: &[u8]) {
    // Every field is bounded far below 4 GiB (validated types, fixed-size ints and hashes).
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(bytes);
}

/// One comparison. Holds public parameters and the outcome only.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogEntry {
    pub seq: u64,
    pub at: Timestamp,
    pub origin: Origin,
    pub tool: ToolName,
    pub claim: Claim,
    pub outcome: Outcome,
    pub grant_id: GrantId,
    pub prev_hash: Hash,
    pub hash: Hash,
    /// The origin of the issuer whose credential answered this claim; `None` when the answer is
    /// the person's own word (self-asserted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<Origin>,
}

impl LogEntry {
    /// The bytes the entry's hash is computed over (every field but `hash`; see the module docs).
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(ENTRY_DOMAIN);
        put_field(&mut out, &self.seq.to_be_bytes());
        put_field(&mut out, &self.at.millis().to_be_bytes());
        put_field(&mut out, self.origin.as_str().as_bytes());
        put_field(&mut out, self.tool.as_str().as_bytes());
        put_field(&mut out, self.claim.canonical().as_bytes());
        put_field(&mut out, self.outcome.as_str().as_bytes());
        put_field(&mut out, self.grant_id.as_str().as_bytes());
        put_field(&mut out, self.prev_hash.as_bytes());
        if let Some(issuer) = &self.issuer {
            put_field(&mut out, b"issuer");
            put_field(&mut out, issuer.as_str().as_bytes());
        }
        out
    }

    /// Whether this answer is issuer-backed.
    pub fn is_issuer_backed(&self) -> bool {
        self.issuer.is_some()
    }

    /// SHA-256 of [`LogEntry::canonical_bytes`]: what `hash` must be.
    pub fn compute_hash(&self) -> Hash {
        Hash::digest(&self.canonical_bytes())
    }

    /// The entry as one export line, without the newline.
    fn export_line(&self) -> String {
        let mut line = format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            self.seq,
            self.at.millis(),
            self.origin,
            self.tool,
            self.claim.canonical(),
            self.outcome.as_str(),
            self.grant_id,
            self.prev_hash,
            self.hash,
        );
        if let Some(issuer) = &self.issuer {
            line.push('\t');
            line.push_str(issuer.as_str());
        }
        line
    }

    /// Parses one export line; `line` is its 1-based number, for errors.
    fn parse_line(text: &str, line: usize) -> Result<Self, LogError> {
        let bad = |reason| LogError::Import { line, reason };
        // At most 11 pieces, so a line of many tabs costs nothing.
        let mut fields: Vec<&str> = text.splitn(11, '\t').collect();
        let issuer = if fields.len() == 10 {
            fields.pop()
        } else {
            None
        };
        let [
            seq,
            at,
            origin,
            tool,
            claim,
            outcome,
            grant_id,
            prev_hash,
            hash,
        ] = fields[..]
        else {
            return Err(bad(
                "an entry must have 9 tab-separated fields, or 10 with the issuer",
            ));
        };
        let issuer = issuer
            .map(|text| Origin::parse(text).map_err(|_| bad("invalid issuer")))
            .transpose()?;
        Ok(Self {
            seq: parse_canonical_u64(seq).ok_or_else(|| bad("seq is not a canonical number"))?,
            at: parse_canonical_i64(at)
                .map(Timestamp::from_millis)
                .ok_or_else(|| bad("time is not a canonical number"))?,
            origin: Origin::parse(origin).map_err(|_| bad("invalid origin"))?,
            tool: ToolName::parse(tool).map_err(|_| bad("invalid tool name"))?,
            claim: Claim::parse_canonical(claim).map_err(|_| bad("invalid claim"))?,
            outcome: Outcome::parse(outcome).ok_or_else(|| bad("invalid outcome"))?,
            grant_id: GrantId::parse(grant_id).map_err(|_| bad("invalid grant id"))?,
            prev_hash: Hash::from_hex(prev_hash).ok_or_else(|| bad("invalid previous hash"))?,
            hash: Hash::from_hex(hash).ok_or_else(|| bad("invalid hash"))?,
            issuer,
        })
    }
}

/// Unsigned decimal with no sign, no leading zeros: the only spelling `Display` produces.
fn parse_canonical_u64(text: &str) -> Option<u64> {
    let ok = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    if ok { text.parse().ok() } else { None }
}

/// Signed decimal: an optional `-` then a canonical unsigned number, never `-0`.
fn parse_canonical_i64(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    parse_canonical_u64(digits)?;
    if digits == "0" && text.starts_with('-') {
        return None;
    }
    text.parse().ok()
}

/// Checks a chain of entries from genesis: entry `i` has `seq == i`, `prev_hash` equal to the
/// previous entry's `hash` (or [`Hash::ZERO`]) and a `hash` that recomputes.
///
/// Fails with [`ChainBroken`] naming the first entry that does not hold.
pub fn verify_entries(entries: &[LogEntry]) -> Result<(), ChainBroken> {
    let mut prev = Hash::ZERO;
    for (index, entry) in entries.iter().enumerate() {
        let ok = u64::try_from(index).is_ok_and(|i| i == entry.seq)
            && bool::from(entry.prev_hash.ct_eq(&prev))
            && bool::from(entry.compute_hash().ct_eq(&entry.hash));
        if !ok {
            return Err(ChainBroken { index });
        }
        prev = entry.hash;
    }
    Ok(())
}

/// The hash of the last entry, or [`Hash::ZERO`] for none. Does not verify the chain.
pub fn chain_head(entries: &[LogEntry]) -> Hash {
    entries.last().map_or(Hash::ZERO, |e| e.hash)
}

/// `entries` as a chain of their own from genesis: the same comparisons (time, origin, tool,
/// claim, outcome, grant, issuer) in the same order, numbered from 0 and hashed afresh. This is
/// how a receipt carries exactly the answers chosen for it and still verifies on its own.
pub fn rechain<'a>(entries: impl IntoIterator<Item = &'a LogEntry>) -> Vec<LogEntry> {
    let mut log = ComparisonLog::new();
    for e in entries {
        log.append(
            e.at,
            e.origin.clone(),
            e.tool.clone(),
            e.claim.clone(),
            e.outcome,
            e.grant_id.clone(),
            e.issuer.clone(),
        );
    }
    log.entries
}

/// The append-only comparison log. Entries are only added by [`ComparisonLog::append`] or taken
/// from a verified source ([`ComparisonLog::import`], [`ComparisonLog::from_entries`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ComparisonLog {
    entries: Vec<LogEntry>,
}

impl ComparisonLog {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes entries from storage or the wire, refusing them unless the chain holds.
    pub fn from_entries(entries: Vec<LogEntry>) -> Result<Self, ChainBroken> {
        verify_entries(&entries)?;
        Ok(Self { entries })
    }

    /// Records a comparison answered by `issuer`'s credential (`None`: the person's own word),
    /// chaining it to the current head, and returns the new entry.
    #[allow(clippy::too_many_arguments)]
    pub fn append(
        &mut self,
        at: Timestamp,
        origin: Origin,
        tool: ToolName,
        claim: Claim,
        outcome: Outcome,
        grant_id: GrantId,
        issuer: Option<Origin>,
    ) -> &LogEntry {
        let index = self.entries.len();
        let mut entry = LogEntry {
            seq: index as u64,
            at,
            origin,
            tool,
            claim,
            outcome,
            grant_id,
            prev_hash: self.head(),
            hash: Hash::ZERO,
            issuer,
        };
        entry.hash = entry.compute_hash();
        self.entries.push(entry);
        &self.entries[index]
    }

    pub fn entries(&self) -> &[LogEntry] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The last entry's hash; [`Hash::ZERO`] when the log is empty.
    pub fn head(&self) -> Hash {
        chain_head(&self.entries)
    }

    /// Checks the whole chain (see [`verify_entries`]).
    pub fn verify(&self) -> Result<(), ChainBroken> {
        verify_entries(&self.entries)
    }

    /// Checks the chain and that it ends at `expected`, a head recorded earlier (for example in a
    /// receipt). This is what reveals entries removed from, or added to, the end.
    ///
    /// A head mismatch is [`ChainBroken`] with `index` equal to the number of entries.
    pub fn verify_with_head(&self, expected: Hash) -> Result<(), ChainBroken> {
        self.verify()?;
        if bool::from(self.head().ct_eq(&expected)) {
            Ok(())
        } else {
            Err(ChainBroken {
                index: self.entries.len(),
            })
        }
    }

    /// The byte-stable text form (see the module docs).
    pub fn export(&self) -> String {
        let mut out = String::with_capacity(32 + self.entries.len() * 256);
        out.push_str(EXPORT_HEADER);
        out.push('\n');
        for entry in &self.entries {
            out.push_str(&entry.export_line());
            out.push('\n');
        }
        out
    }

    /// Parses an export, validating every field and refusing any spelling `export` would not
    /// write, then verifies the chain. Never panics.
    ///
    /// Format errors are [`LogError::Import`] with the 1-based line; a chain that does not hold
    /// is [`LogError::ChainBroken`].
    pub fn import(text: &str) -> Result<Self, LogError> {
        let Some(body) = text.strip_suffix('\n') else {
            return Err(LogError::Import {
                line: text.split('\n').count(),
                reason: "missing final newline",
            });
        };
        let mut lines = body.split('\n');
        if lines.next() != Some(EXPORT_HEADER) {
            return Err(LogError::Import {
                line: 1,
                reason: "not a tacit-comparison-log v1 export",
            });
        }
        let entries = lines
            .enumerate()
            .map(|(i, line)| LogEntry::parse_line(line, i + 2))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::from_entries(entries)?)
    }

    /// [`ComparisonLog::import`] for raw bytes: refuses anything that is not UTF-8.
    pub fn import_bytes(bytes: &[u8]) -> Result<Self, LogError> {
        match core::str::from_utf8(bytes) {
            Ok(text) => Self::import(text),
            Err(e) => {
                let before = bytes.get(..e.valid_up_to()).unwrap_or_default();
                Err(LogError::Import {
                    line: 1 + before.iter().filter(|&&b| b == b'\n').count(),
                    reason: "not UTF-8",
                })
            }
        }
    }
}
