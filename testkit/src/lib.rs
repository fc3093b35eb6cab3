//! Dev-only test kit: what several crates' tests share, written once.
//!
//! - [`on_both_backends!`]: a service's scenarios as tests on SQLite and on PostgreSQL.
//! - [`cli`]: the check every binary's command line passes (`--help`, `--version`, an unknown
//!   flag refused with exit code 2).
//! - [`fixtures`]: profiles, policies, canary renderings and receipt payloads the crates' tests
//!   share.
//! - [`openapi`]: the OpenAPI-document check of the services (paths documented, document valid,
//!   real bodies validate against their components, bodies never sent refused).
//! - [`modules`]: a crate's module graph from its `src/`, and the check that it has no cycle.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test support code

pub mod backends;
pub mod cli;
pub mod fixtures;
pub mod modules;
pub mod openapi;
