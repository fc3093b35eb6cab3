//! What Tacit's native services share: the signer (`signer`), the issuer (`tacit-issuer`) and
//! the relying-site server (`tacit-site`'s `server` module) each limit requests per client with
//! the same [`RateLimiter`]: the rule of [`tacit_protocol::rate_limit`] (a token bucket per peer
//! address over a table capped at [`MAX_TRACKED_CLIENTS`] clients; the site adds a bucket per
//! IPv6 /48 and an overall one, [`Budgets`]) behind a lock. Time comes in
//! as an argument, and each service turns a refusal into its own HTTP answer (429 with
//! `Retry-After`).
//!
//! [`http1`] is the response-head parser the services' load generators share and [`bench`] their
//! `main`; [`key_cache`] a service's cache of another party's keys; [`cli`] what the command
//! lines share; [`config`] the configurations' defaults; [`error`] the failures the signer and the issuer share and their HTTP answer; [`db`] a service's tables
//! opened and migrated, and when to purge expired rows; [`fetch`] the one client for another party's
//! JSON documents (keys, metadata); [`logging`] the
//! one logging set-up (`RUST_LOG`, else `--log-level`); [`middleware`] the routers' rate limit,
//! timeout, JSON for bare errors and `Content-Type` test; [`keyfile`] the private key files (mode
//! 0600, refused when others may read them, replaced by rename); [`response`] the signer's and the issuer's JSON error answers; [`serve`]
//! the serve loop (read-header timeout, peer address, graceful shutdown) and the clock.

pub mod bench;
pub mod cli;
pub mod config;
pub mod db;
pub mod error;
pub mod fetch;
pub mod http1;
pub mod key_cache;
pub mod keyfile;
mod limit;
pub mod logging;
pub mod middleware;
pub mod openapi;
pub mod response;
pub mod serve;

pub use limit::{Budgets, MAX_TRACKED_CLIENTS, RateLimiter, client_key, net48_key};
