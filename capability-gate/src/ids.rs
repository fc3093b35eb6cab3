//! The ids the gate gives consent requests and drafted proposals. An agent names them in
//! `check_request`/`check_proposal` and the wallet page in its buttons' `data-id`; both parse
//! them here, at their edge, and the gate's API takes only parsed ids.
//!
//! In JSON an id is its plain string (as it always was): only the Rust type is new.

use serde::{Deserialize, Serialize};

/// Why a text is not an id. Such a text names no request or proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadId {
    pub field: &'static str,
}

impl core::fmt::Display for BadId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} must match [A-Za-z0-9_-]{{1,64}}", self.field)
    }
}

macro_rules! gate_id {
    ($(#[$meta:meta])* $name:ident, $field:literal, $prefix:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Longest id accepted (the input limit the tools have always applied to it).
            pub const MAX_LEN: usize = 64;
            /// The letter every id the gate makes starts with.
            pub const PREFIX: &'static str = $prefix;

            /// An id as text from outside (an agent's input, the page's DOM): 1 to 64 of
            /// `[A-Za-z0-9_-]`, every id the gate makes and nothing it could not have made.
            pub fn parse(text: &str) -> Result<Self, BadId> {
                let ok = !text.is_empty()
                    && text.len() <= Self::MAX_LEN
                    && text
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                if ok {
                    Ok(Self(text.to_owned()))
                } else {
                    Err(BadId { field: $field })
                }
            }

            /// The gate's own id: the prefix and `suffix` (hex or a counter).
            pub(crate) fn made(suffix: &str) -> Self {
                Self(format!("{}{suffix}", Self::PREFIX))
            }
        }

        wallet_core::string_newtype!($name, BadId);

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

gate_id!(
    /// A consent request's id (`r…`), made by the gate when `request_claims` holds a policy.
    RequestId, "request_id", "r"
);
gate_id!(
    /// A drafted proposal's id (`p…`), made by the gate when `draft_application` holds a draft.
    ProposalId, "proposal_id", "p"
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_id_is_its_plain_string_in_json_and_round_trips() {
        let id = RequestId::parse("r0123abcd").unwrap();
        assert_eq!(serde_json::to_value(&id).unwrap(), json!("r0123abcd"));
        assert_eq!(
            serde_json::from_value::<RequestId>(json!("r0123abcd")).unwrap(),
            id
        );
        assert_eq!(id.to_string(), "r0123abcd");
        assert_eq!(id.as_str(), "r0123abcd");
        let made = ProposalId::made("00ff");
        assert_eq!(made.as_str(), "p00ff");
        assert_eq!(ProposalId::parse(made.as_str()), Ok(made));
    }

    #[test]
    fn parse_refuses_what_the_gate_could_never_have_made() {
        let longest = "r".repeat(64);
        assert!(RequestId::parse(&longest).is_ok());
        for bad in [
            "",
            &"r".repeat(65),
            "r 1",
            "r1\"><img>",
            "r1\u{0}",
            "r\u{e9}",
            "../r1",
            "r1.2",
        ] {
            assert!(RequestId::parse(bad).is_err(), "{bad:?}");
            assert!(ProposalId::parse(bad).is_err(), "{bad:?}");
            assert!(serde_json::from_value::<RequestId>(json!(bad)).is_err());
        }
        assert_eq!(
            RequestId::parse("").unwrap_err().to_string(),
            "request_id must match [A-Za-z0-9_-]{1,64}"
        );
    }
}
