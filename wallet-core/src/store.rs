//! The stored record around a vault envelope, and the rule that keeps two tabs from silently
//! overwriting each other.
//!
//! The page keeps one record per profile in browser storage. Each save bumps `generation`; a
//! writer must name the generation it loaded, and a save is refused if storage has moved on
//! since. Storage writes the record in one call, so a failed write leaves the last good copy.

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::vault::Envelope;

/// What is kept in browser storage: the envelope and its generation. Nothing in it is secret
/// beyond what the envelope already protects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredVault {
    pub generation: u64,
    /// The vault envelope, lowercase hex.
    pub envelope: String,
}

impl StoredVault {
    /// A record for `envelope` at `generation`.
    pub fn new(generation: u64, envelope: &[u8]) -> Self {
        Self {
            generation,
            envelope: hex::encode(envelope),
        }
    }

    /// The record as stored text.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses stored text and checks that the envelope is well-formed (not that it opens).
    pub fn decode(text: &str) -> Result<Self, Error> {
        let record: Self = serde_json::from_str(text)
            .map_err(|_| Error::StoreFormat("not a Tacit profile record"))?;
        Envelope::parse(&record.envelope_bytes()?)?;
        Ok(record)
    }

    /// The envelope's bytes.
    pub fn envelope_bytes(&self) -> Result<Vec<u8>, Error> {
        hex::decode(&self.envelope).map_err(|_| Error::StoreFormat("envelope is not hex"))
    }
}

/// The generation a save may write, given what storage holds now and what the writer loaded.
/// Refuses when storage holds a record the writer did not load.
pub fn next_generation(in_storage: Option<u64>, loaded: Option<u64>) -> Result<u64, Error> {
    match (in_storage, loaded) {
        (None, None) => Ok(1),
        (Some(current), Some(mine)) if current == mine => Ok(current + 1),
        _ => Err(Error::StaleWrite),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_generations_refuse_stale_writes() {
        assert_eq!(next_generation(None, None), Ok(1));
        assert_eq!(next_generation(Some(3), Some(3)), Ok(4));
        assert_eq!(next_generation(Some(4), Some(3)), Err(Error::StaleWrite));
        assert_eq!(
            next_generation(Some(1), None),
            Err(Error::StaleWrite),
            "a fresh tab cannot clobber"
        );
        assert_eq!(
            next_generation(None, Some(2)),
            Err(Error::StaleWrite),
            "deleted elsewhere"
        );
    }

    #[test]
    fn store_record_refuses_garbage() {
        assert!(StoredVault::decode("{}").is_err());
        assert!(StoredVault::decode(r#"{"generation":1,"envelope":"zz"}"#).is_err());
        assert!(StoredVault::decode(r#"{"generation":1,"envelope":"00"}"#).is_err());
        assert!(StoredVault::decode(r#"{"generation":1,"envelope":"","x":1}"#).is_err());
    }
}
