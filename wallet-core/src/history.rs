//! The person's record beside the memory (issue 30, item 3): the comparison log of the open
//! session, the receipts made in it, the applications answered in it (released, refused or not
//! sent), and the history of sessions the person ended.
//!
//! It is sealed in the stored record together with the disclosure memory (memory format 3, see
//! [`crate::store`]), so it survives reloads, browser restarts and a restored backup of the same
//! vault, goes with the record when the profile is deleted, and starts empty for a new profile.
//!
//! # Merge across tabs
//! Two tabs that wrote the same record are merged by [`PersonRecord::merge`], append-only:
//! - **The log** of the open session: if one chain is a prefix of the other the longer one wins;
//!   if they diverge, the stored chain is kept as it is and this tab's entries after the common
//!   prefix that storage lacks are appended to it, chained afresh ([`crate::log::rechain`]'s
//!   rule). No stored entry is ever dropped or rewritten. Both chains must verify from genesis,
//!   or the merge refuses ([`ChainBroken`]): the caller fails closed.
//! - **Receipts and applications**: a union (the same payload or application once; a signed copy
//!   supersedes an unsigned one of the same payload).
//! - **Sessions**: `session` counts ended sessions. A record whose count is higher has ended the
//!   session the other still holds open, so its open parts win and the other's are dropped (they
//!   were moved into its history when the session ended: every answer is sealed before it is
//!   released). Ended sessions are a union keyed by when they ended and their log's head.
//! - **Deleting the history** raises `cleared`: a record with a higher `cleared` wins the
//!   history outright, so a tab that still holds the deleted sessions cannot bring them back.
//!
//! # Bounds
//! The history keeps the newest [`MAX_SESSIONS`] ended sessions; ending one more drops the
//! oldest ([`PersonRecord::end_session`] says how many were dropped, and the wallet tells the
//! person). The open session is never trimmed (nothing is dropped silently from it):
//! [`PersonRecord::check_bounds`] says when it holds more than [`MAX_SESSION_ENTRIES`] log
//! entries or [`MAX_SESSION_ITEMS`] receipts or applications; nothing acts on that yet (the page
//! does not yet ask the person to end such a session). Measured (`history_sizes` in
//! `tests/history.rs`): a sealed record whose open log holds [`MAX_SESSION_ENTRIES`] entries is
//! 1,351,690 bytes of stored text (about 676 bytes an entry). The history is bounded by count,
//! not size: 50 full sessions would not fit in the 5 MB `localStorage` holds per origin in
//! Chromium, and a write that does not fit fails, which locks the wallet (fail closed) without
//! dropping anything stored.

use serde::{Deserialize, Serialize};

use crate::error::ChainBroken;
use crate::log::{ComparisonLog, Hash, LogEntry, chain_head, verify_entries};
use crate::receipt::{ReceiptPayload, SignedReceipt};
use crate::types::{Origin, Timestamp};

/// Ended sessions kept in the history; ending one more drops the oldest.
pub const MAX_SESSIONS: usize = 50;
/// Log entries an open session may hold.
pub const MAX_SESSION_ENTRIES: usize = 2000;
/// Receipts (and, separately, applications) an open session may hold.
pub const MAX_SESSION_ITEMS: usize = 200;

/// A receipt made in a session: the payload, and the signer's signature once it verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeptReceipt {
    pub payload: ReceiptPayload,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed: Option<SignedReceipt>,
}

/// What became of an application.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sent {
    /// The person released it to the site.
    Released,
    /// The person refused to send it.
    Refused,
    /// The session ended before the person decided: not sent.
    NotSent,
}

impl Sent {
    /// How the history names it.
    pub const fn words(self) -> &'static str {
        match self {
            Sent::Released => "Sent",
            Sent::Refused => "Not sent (you refused)",
            Sent::NotSent => "Not sent",
        }
    }
}

/// One application answered in a session: to whom, when it was made, what became of it, and the
/// answers it held (chained from genesis, as the proposal holds them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeptApplication {
    pub audience: Origin,
    pub created_at: Timestamp,
    pub sent: Sent,
    pub entries: Vec<LogEntry>,
}

impl KeptApplication {
    /// The key two tabs' copies are matched by.
    fn key(&self) -> (&Origin, Timestamp, Hash) {
        (&self.audience, self.created_at, chain_head(&self.entries))
    }
}

/// A session the person ended, as it stood then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndedSession {
    pub ended_at: Timestamp,
    pub log: Vec<LogEntry>,
    #[serde(default)]
    pub receipts: Vec<KeptReceipt>,
    #[serde(default)]
    pub applications: Vec<KeptApplication>,
}

impl EndedSession {
    fn key(&self) -> (Timestamp, Hash) {
        (self.ended_at, chain_head(&self.log))
    }
}

/// The person's record sealed beside the memory. See the module docs for its rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonRecord {
    /// Sessions ended so far (never lowered): which record's open session is current.
    #[serde(default)]
    pub session: u64,
    /// Times the history was deleted (never lowered).
    #[serde(default)]
    pub cleared: u64,
    /// The open session's comparison log, chained from genesis.
    #[serde(default)]
    pub log: Vec<LogEntry>,
    #[serde(default)]
    pub receipts: Vec<KeptReceipt>,
    #[serde(default)]
    pub applications: Vec<KeptApplication>,
    /// Ended sessions, oldest first.
    #[serde(default)]
    pub history: Vec<EndedSession>,
}

/// Why a record cannot take more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Full {
    #[error("this session's log is full ({MAX_SESSION_ENTRIES} entries): end the session")]
    Log,
    #[error("this session holds {MAX_SESSION_ITEMS} receipts or applications: end the session")]
    Items,
}

impl PersonRecord {
    /// Checks every chain (the open log, every application's and every ended session's) from
    /// genesis. A record that fails is refused whole by the store (fail closed).
    pub fn verify(&self) -> Result<(), ChainBroken> {
        verify_entries(&self.log)?;
        for a in &self.applications {
            verify_entries(&a.entries)?;
        }
        for s in &self.history {
            verify_entries(&s.log)?;
            for a in &s.applications {
                verify_entries(&a.entries)?;
            }
        }
        Ok(())
    }

    /// Whether there is nothing in it (a new profile's record).
    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
            && self.receipts.is_empty()
            && self.applications.is_empty()
            && self.history.is_empty()
    }

    /// The open session's log as a verified [`ComparisonLog`].
    pub fn comparison_log(&self) -> Result<ComparisonLog, ChainBroken> {
        ComparisonLog::from_entries(self.log.clone())
    }

    /// Refuses an open session past its bounds (see the module docs).
    pub fn check_bounds(&self) -> Result<(), Full> {
        if self.log.len() > MAX_SESSION_ENTRIES {
            return Err(Full::Log);
        }
        if self.receipts.len() > MAX_SESSION_ITEMS || self.applications.len() > MAX_SESSION_ITEMS {
            return Err(Full::Items);
        }
        Ok(())
    }

    /// Adds a receipt (a signed copy replaces the unsigned one of the same payload).
    pub fn add_receipt(&mut self, receipt: KeptReceipt) {
        add_receipt(&mut self.receipts, receipt);
    }

    /// Adds an application, or updates the state of the one with the same key.
    pub fn add_application(&mut self, application: KeptApplication) {
        match self
            .applications
            .iter_mut()
            .find(|a| a.key() == application.key())
        {
            Some(kept) => kept.sent = later(kept.sent, application.sent),
            None => self.applications.push(application),
        }
    }

    /// Ends the open session at `now`: its log, receipts and applications move into the history
    /// (nothing moves if it is empty), and the open session starts empty. Returns how many of the
    /// oldest sessions were dropped to keep [`MAX_SESSIONS`].
    pub fn end_session(&mut self, now: Timestamp) -> usize {
        self.session = self.session.saturating_add(1);
        let log = std::mem::take(&mut self.log);
        let receipts = std::mem::take(&mut self.receipts);
        let applications = std::mem::take(&mut self.applications);
        if log.is_empty() && receipts.is_empty() && applications.is_empty() {
            return 0;
        }
        self.history.push(EndedSession {
            ended_at: now,
            log,
            receipts,
            applications,
        });
        let over = self.history.len().saturating_sub(MAX_SESSIONS);
        self.history.drain(..over);
        over
    }

    /// Deletes the history of ended sessions (the open session stays).
    pub fn clear_history(&mut self) {
        self.cleared = self.cleared.saturating_add(1);
        self.history.clear();
    }

    /// The history as the JSON file the person downloads.
    pub fn export_history(&self) -> String {
        #[derive(Serialize)]
        struct Export<'a> {
            tacit_history: u32,
            sessions: &'a [EndedSession],
        }
        serde_json::to_string_pretty(&Export {
            tacit_history: 1,
            sessions: &self.history,
        })
        .unwrap_or_default()
    }

    /// Merges two records of the same vault: `stored` as storage holds it and `mine` as this tab
    /// holds it (see the module docs). Refuses if either does not verify.
    pub fn merge(stored: &Self, mine: &Self) -> Result<Self, ChainBroken> {
        stored.verify()?;
        mine.verify()?;
        let (ahead, behind) = if mine.session > stored.session {
            (mine, stored)
        } else {
            (stored, mine)
        };
        let mut out = ahead.clone();
        if mine.session == stored.session {
            out.log = merge_logs(&stored.log, &mine.log);
            for r in &mine.receipts {
                add_receipt(&mut out.receipts, r.clone());
            }
            for a in &mine.applications {
                out.add_application(a.clone());
            }
        }
        out.session = ahead.session;
        // History: a higher `cleared` wins outright; equal ones are a union.
        let (hist_ahead, hist_other) = if behind.cleared > ahead.cleared {
            (behind, ahead)
        } else {
            (ahead, behind)
        };
        out.cleared = hist_ahead.cleared;
        out.history = hist_ahead.history.clone();
        if hist_other.cleared == hist_ahead.cleared {
            for s in &hist_other.history {
                if !out.history.iter().any(|k| k.key() == s.key()) {
                    out.history.push(s.clone());
                }
            }
            out.history.sort_by_key(|s| s.ended_at);
        }
        let over = out.history.len().saturating_sub(MAX_SESSIONS);
        out.history.drain(..over);
        Ok(out)
    }
}

/// The later of two states of one application: a decision beats "not sent".
fn later(a: Sent, b: Sent) -> Sent {
    match (a, b) {
        (Sent::NotSent, other) => other,
        (kept, _) => kept,
    }
}

fn add_receipt(receipts: &mut Vec<KeptReceipt>, receipt: KeptReceipt) {
    match receipts.iter_mut().find(|r| r.payload == receipt.payload) {
        Some(kept) => {
            if kept.signed.is_none() {
                kept.signed = receipt.signed;
            }
        }
        None => receipts.push(receipt),
    }
}

/// The two verified chains merged: stored's entries unchanged, then mine's entries after the
/// common prefix that stored lacks, chained onto stored's head.
fn merge_logs(stored: &[LogEntry], mine: &[LogEntry]) -> Vec<LogEntry> {
    let common = stored
        .iter()
        .zip(mine)
        .take_while(|(a, b)| a.hash == b.hash)
        .count();
    if common == stored.len() {
        return mine.to_vec();
    }
    if common == mine.len() {
        return stored.to_vec();
    }
    let same = |a: &LogEntry, b: &LogEntry| {
        a.at == b.at
            && a.origin == b.origin
            && a.tool == b.tool
            && a.claim == b.claim
            && a.outcome == b.outcome
            && a.grant_id == b.grant_id
            && a.issuer == b.issuer
    };
    let theirs = &stored[common..];
    let mut log = ComparisonLog::from_entries(stored.to_vec()).unwrap_or_default();
    if log.len() != stored.len() {
        // Unreachable: both chains were verified by the caller.
        return stored.to_vec();
    }
    for e in &mine[common..] {
        if theirs.iter().any(|t| same(t, e)) {
            continue;
        }
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
    log.entries().to_vec()
}
