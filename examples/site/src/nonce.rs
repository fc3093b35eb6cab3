//! The nonce book: which nonces this site issued, and which were spent on an accepted
//! submission.
//!
//! Rules:
//! - a nonce is made from 8 random bytes the caller supplies (16 lowercase hex digits);
//! - a nonce is **open** from issue until it is consumed or lapses ([`NONCE_LIFETIME_MS`]);
//! - only an open nonce can be consumed, exactly once; a consumed nonce stays in the book as
//!   **used**, so a second submission is told it is a replay;
//! - the book holds at most [`MAX_RECORDS`]; past that the oldest record is forgotten, and a
//!   forgotten nonce reads as unknown. Either way it can never be accepted again.
//!
//! The book is plain data (serde), so a page can keep it in `sessionStorage` across reloads.

use serde::{Deserialize, Serialize};
use wallet_core::{Nonce, Timestamp};

/// How long an issued nonce stays open: one hour.
pub const NONCE_LIFETIME_MS: i64 = 60 * 60 * 1000;

/// Most records kept.
pub const MAX_RECORDS: usize = 256;

/// A fresh nonce from 8 random bytes: 16 lowercase hex digits.
#[allow(
    clippy::expect_used,
    reason = "16 lowercase hex digits always match Nonce's charset and length"
)]
pub fn make_nonce(random: [u8; 8]) -> Nonce {
    Nonce::parse(&hex::encode(random)).expect("16 hex digits are a valid nonce")
}

/// One issued nonce.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NonceRecord {
    pub nonce: Nonce,
    pub issued_at: Timestamp,
    pub used_at: Option<Timestamp>,
}

/// Where a nonce stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonceState {
    /// Issued, not used, not lapsed: a submission may consume it.
    Open,
    /// Consumed by an accepted submission.
    Used,
    /// Issued more than [`NONCE_LIFETIME_MS`] ago and never used.
    Lapsed,
    /// Never issued here (or forgotten).
    Unknown,
}

/// See the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NonceBook {
    /// In issue order, oldest first.
    records: Vec<NonceRecord>,
}

/// Why a book could not be restored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BookFormatError;

impl NonceBook {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `nonce` as issued at `now`. Returns false (and changes nothing) if the book
    /// already knows it: a nonce is issued once.
    pub fn issue(&mut self, nonce: Nonce, now: Timestamp) -> bool {
        if self.records.iter().any(|r| r.nonce == nonce) {
            return false;
        }
        self.records.push(NonceRecord {
            nonce,
            issued_at: now,
            used_at: None,
        });
        if self.records.len() > MAX_RECORDS {
            let excess = self.records.len() - MAX_RECORDS;
            self.records.drain(..excess);
        }
        true
    }

    /// Where `nonce` stands at `now`.
    pub fn state(&self, nonce: &Nonce, now: Timestamp) -> NonceState {
        match self.records.iter().find(|r| &r.nonce == nonce) {
            None => NonceState::Unknown,
            Some(r) if r.used_at.is_some() => NonceState::Used,
            Some(r) if now >= r.issued_at.plus_millis(NONCE_LIFETIME_MS) => NonceState::Lapsed,
            Some(_) => NonceState::Open,
        }
    }

    /// Marks an open nonce used at `now`; any other state is returned as the error.
    pub fn consume(&mut self, nonce: &Nonce, now: Timestamp) -> Result<(), NonceState> {
        match self.state(nonce, now) {
            NonceState::Open => {
                if let Some(r) = self.records.iter_mut().find(|r| &r.nonce == nonce) {
                    r.used_at = Some(now);
                }
                Ok(())
            }
            other => Err(other),
        }
    }

    /// (open, used) counts at `now`.
    pub fn counts(&self, now: Timestamp) -> (usize, usize) {
        self.records
            .iter()
            .fold((0, 0), |(open, used), r| match self.state(&r.nonce, now) {
                NonceState::Open => (open + 1, used),
                NonceState::Used => (open, used + 1),
                _ => (open, used),
            })
    }

    /// The book as JSON, for storage.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{\"records\":[]}".to_owned())
    }

    /// Restores a book written by [`NonceBook::to_json`]; refuses anything else, more than
    /// [`MAX_RECORDS`] records, or a nonce listed twice.
    pub fn from_json(text: &str) -> Result<Self, BookFormatError> {
        let book: Self = serde_json::from_str(text).map_err(|_| BookFormatError)?;
        if book.records.len() > MAX_RECORDS {
            return Err(BookFormatError);
        }
        for (i, r) in book.records.iter().enumerate() {
            if book.records[..i].iter().any(|o| o.nonce == r.nonce) {
                return Err(BookFormatError);
            }
        }
        Ok(book)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: u64) -> Nonce {
        make_nonce(i.to_be_bytes())
    }

    const T0: Timestamp = Timestamp::from_millis(1_800_000_000_000);

    #[test]
    fn nonces_are_sixteen_hex_digits() {
        assert_eq!(
            make_nonce([0, 1, 2, 3, 0xfc, 0xfd, 0xfe, 0xff]).as_str(),
            "00010203fcfdfeff"
        );
    }

    #[test]
    fn issued_nonce_is_consumed_once() {
        let mut book = NonceBook::new();
        assert!(book.issue(n(1), T0));
        assert_eq!(book.state(&n(1), T0), NonceState::Open);
        assert_eq!(book.consume(&n(1), T0.plus_millis(5)), Ok(()));
        assert_eq!(book.state(&n(1), T0), NonceState::Used);
        assert_eq!(
            book.consume(&n(1), T0.plus_millis(6)),
            Err(NonceState::Used)
        );
        assert_eq!(book.counts(T0), (0, 1));
    }

    #[test]
    fn unknown_nonce_is_never_consumed() {
        let mut book = NonceBook::new();
        book.issue(n(1), T0);
        assert_eq!(book.consume(&n(2), T0), Err(NonceState::Unknown));
        assert_eq!(book.state(&n(1), T0), NonceState::Open);
    }

    #[test]
    fn a_nonce_is_issued_once() {
        let mut book = NonceBook::new();
        assert!(book.issue(n(1), T0));
        book.consume(&n(1), T0).unwrap();
        assert!(
            !book.issue(n(1), T0),
            "re-issuing would reopen a used nonce"
        );
        assert_eq!(book.state(&n(1), T0), NonceState::Used);
    }

    #[test]
    fn nonces_lapse_after_an_hour() {
        let mut book = NonceBook::new();
        book.issue(n(1), T0);
        let just_before = T0.plus_millis(NONCE_LIFETIME_MS - 1);
        assert_eq!(book.state(&n(1), just_before), NonceState::Open);
        let at = T0.plus_millis(NONCE_LIFETIME_MS);
        assert_eq!(book.state(&n(1), at), NonceState::Lapsed);
        assert_eq!(book.consume(&n(1), at), Err(NonceState::Lapsed));
    }

    #[test]
    fn the_book_is_bounded_and_forgotten_nonces_stay_refused() {
        let mut book = NonceBook::new();
        book.issue(n(0), T0);
        book.consume(&n(0), T0).unwrap();
        for i in 1..=MAX_RECORDS as u64 {
            assert!(book.issue(n(i), T0));
        }
        assert_eq!(book.records.len(), MAX_RECORDS);
        assert_eq!(book.state(&n(0), T0), NonceState::Unknown);
        assert_eq!(book.consume(&n(0), T0), Err(NonceState::Unknown));
        assert_eq!(book.counts(T0), (MAX_RECORDS, 0));
    }

    #[test]
    fn storage_round_trip_and_refusals() {
        let mut book = NonceBook::new();
        book.issue(n(1), T0);
        book.issue(n(2), T0);
        book.consume(&n(2), T0).unwrap();
        let json = book.to_json();
        assert_eq!(NonceBook::from_json(&json), Ok(book.clone()));
        assert!(NonceBook::from_json("").is_err());
        assert!(NonceBook::from_json("{\"records\":[],\"x\":1}").is_err());
        let twice = json.replace(n(2).as_str(), n(1).as_str());
        assert_eq!(NonceBook::from_json(&twice), Err(BookFormatError));
        let bad_nonce = json.replace(n(2).as_str(), "has space");
        assert!(NonceBook::from_json(&bad_nonce).is_err());
    }
}
