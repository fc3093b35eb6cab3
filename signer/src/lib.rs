//! tacit-signer and tacit-verify.
//!
//! Not built yet: issue 5 fills this crate.
