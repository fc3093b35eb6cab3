//! Proof of possession of a holder key: the rule lives in `tacit_protocol::issuer_pop` (pure,
//! shared with the wallet); re-exported here.

pub use tacit_protocol::issuer_pop::{POP_DOMAIN, PopError, pop_signing_input, verify_pop};
