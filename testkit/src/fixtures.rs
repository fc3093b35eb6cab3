//! Shared fixtures, written once for every crate's tests:
//!
//! - [`profile`]: the fixed test day and clock, the sample profile, random profile inputs;
//! - [`policy`]: the housing and pharmacy sites' origins and their `request_claims` inputs;
//! - [`canary`]: every rendering of a profile's raw values a leak would show, and random
//!   profiles holding none of the codes a site asks about;
//! - [`receipt`]: comparison-log payloads and the key sets that pin signing keys.
//!
//! Everything is re-exported here, so a crate's `tests/common` is one `pub use`.

pub mod canary;
pub mod policy;
pub mod profile;
pub mod receipt;

pub use canary::{arb_profile_outside, renderings};
pub use policy::{
    HOUSING, PHARMACY, REQUEST_CLAIMS_KEYS, housing_policy, housing_policy_at, income_tool,
    pharmacy_policy, sorted_keys,
};
pub use profile::{T0, arb_input, input, profile, today};
pub use receipt::{Answer, HOUR, MINUTE, key_set, payload, payload_with};
