//! What several of this crate's test binaries share and the `tacit-e2e` library cannot hold
//! (it needs dev-dependencies). Each binary includes it with `mod common;`.

use std::time::Duration;

/// A plain HTTP client, as `curl` or any local process would be; never errors on a status.
pub fn http() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}
