//! The issuer's rules, pure: which predicates a credential carries and until when it is valid.
//! They live in [`tacit_protocol::issuance::claims`] (tested there) and are re-exported here.

pub use tacit_protocol::issuance::claims::*;
