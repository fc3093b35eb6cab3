//! Versioned records: the profile sealed in a vault and the disclosure memory sealed in a stored
//! record each carry a `format` number next to their fields.
//!
//! Reading a record is two steps: [`version_of`] reads only the `format` member (every other
//! member is skipped unparsed), then the caller parses the bytes again with the one frozen
//! struct of that version, strictly (`deny_unknown_fields`), and migrates it forward with pure
//! functions. A record without `format` is format 1 (written before records were versioned); an
//! explicit `format` of 0 or 1 was never written and is malformed. A format above what this
//! build knows is a [`NewerFormat`]: the record is refused as a whole, never read in part, and
//! the caller must not overwrite it.
//!
//! Adding a field: copy the current wire struct as the frozen struct of its version, bump the
//! current format, write the migration from the frozen struct, and freeze a vector written by the
//! old build under `tests/vectors/`.

use serde::Deserialize;

/// Which versioned record a format number belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Record {
    /// The profile sealed in a vault.
    Profile,
    /// The disclosure memory sealed in a stored record.
    Memory,
}

impl Record {
    /// The record's name in messages.
    pub const fn name(self) -> &'static str {
        match self {
            Record::Profile => "profile",
            Record::Memory => "disclosure memory",
        }
    }
}

impl core::fmt::Display for Record {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A record written by a newer Tacit than this one: refused whole, and left as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[error(
    "this {record} was made by a newer Tacit (format {found}; this version reads up to format \
     {known}); update Tacit to open it. Nothing was changed."
)]
pub struct NewerFormat {
    pub record: Record,
    /// The format the record says it has.
    pub found: u32,
    /// The newest format this build reads (and the one it writes).
    pub known: u32,
}

/// Why a versioned record could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum ReadError {
    /// Not a record of any format this build knows: not JSON, a bad `format` member, or fields
    /// that its format does not have.
    #[error("the {0} record is malformed")]
    Malformed(Record),
    /// Written by a newer Tacit.
    #[error(transparent)]
    Newer(#[from] NewerFormat),
}

/// Only the `format` member; serde skips every other member without building it.
#[derive(Deserialize)]
struct Probe {
    #[serde(default, deserialize_with = "present")]
    format: Option<u32>,
}

/// A present `format` must be a number (`null` is not "absent").
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    u32::deserialize(d).map(Some)
}

/// The format of the record in `bytes`: 1 when it has no `format` member, the member otherwise.
/// Refuses a format above `known` ([`ReadError::Newer`]) and anything that is not a JSON object
/// with at most one numeric `format` of at least 2 ([`ReadError::Malformed`]).
pub fn version_of(bytes: &[u8], record: Record, known: u32) -> Result<u32, ReadError> {
    // Records are JSON objects (serde would also read a struct from an array).
    if bytes.trim_ascii_start().first() != Some(&b'{') {
        return Err(ReadError::Malformed(record));
    }
    let probe: Probe = serde_json::from_slice(bytes).map_err(|_| ReadError::Malformed(record))?;
    match probe.format {
        None => Ok(1),
        Some(found) if found > known => Err(ReadError::Newer(NewerFormat {
            record,
            found,
            known,
        })),
        Some(found) if found >= 2 => Ok(found),
        Some(_) => Err(ReadError::Malformed(record)),
    }
}

/// Parses `bytes` strictly as `T` (a frozen struct of one format).
pub(crate) fn parse<'a, T: Deserialize<'a>>(
    bytes: &'a [u8],
    record: Record,
) -> Result<T, ReadError> {
    serde_json::from_slice(bytes).map_err(|_| ReadError::Malformed(record))
}

/// The `format` member of a current record: serialises as the number `N` and accepts only `N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Tag<const N: u32>;

impl<const N: u32> serde::Serialize for Tag<N> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(N)
    }
}

impl<'de, const N: u32> Deserialize<'de> for Tag<N> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let found = u32::deserialize(d)?;
        if found == N {
            Ok(Self)
        } else {
            Err(serde::de::Error::custom("another record format"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_probe_reads_only_the_format_member() {
        let known = 3;
        let p = Record::Profile;
        assert_eq!(version_of(br#"{"income":1}"#, p, known), Ok(1));
        assert_eq!(
            version_of(br#"{"a":{"format":9},"format":2}"#, p, known),
            Ok(2)
        );
        assert_eq!(version_of(br#"{"format":3,"x":[1,2]}"#, p, known), Ok(3));
        assert_eq!(
            version_of(br#"{"format":4}"#, p, known),
            Err(ReadError::Newer(NewerFormat {
                record: p,
                found: 4,
                known
            }))
        );
        for malformed in [
            &br#"{"format":1}"#[..],
            br#"{"format":0}"#,
            br#"{"format":-2}"#,
            br#"{"format":"2"}"#,
            br#"{"format":2.0}"#,
            br#"{"format":null}"#,
            br#"{"format":2,"format":2}"#,
            br#"{"format":99999999999}"#,
            br#"[2]"#,
            b"",
            br#"{"format":2"#,
        ] {
            assert_eq!(
                version_of(malformed, p, known),
                Err(ReadError::Malformed(p)),
                "{}",
                String::from_utf8_lossy(malformed)
            );
        }
    }

    #[test]
    fn format_tag_accepts_only_its_number() {
        assert_eq!(serde_json::to_string(&Tag::<2>).unwrap_or_default(), "2");
        assert!(serde_json::from_str::<Tag<2>>("2").is_ok());
        assert!(serde_json::from_str::<Tag<2>>("3").is_err());
        assert!(serde_json::from_str::<Tag<2>>("\"2\"").is_err());
    }

    #[test]
    fn format_newer_message_says_newer_tacit() {
        let text = NewerFormat {
            record: Record::Memory,
            found: 5,
            known: 2,
        }
        .to_string();
        assert!(text.contains("made by a newer Tacit"), "{text}");
        assert!(text.contains("format 5"), "{text}");
    }
}
