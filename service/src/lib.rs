//! What Tacit's native services share: the signer (`signer`), the issuer (`tacit-issuer`) and
//! the relying-site server (`tacit-site`'s `server` module) each limit requests per client with
//! the same [`RateLimiter`] — a token bucket per peer address (IPv4 as is, IPv6 by its /64,
//! IPv4-mapped IPv6 as the IPv4 client) over a table capped at [`MAX_TRACKED_CLIENTS`] clients.
//!
//! Native only and framework-free: time comes in as an argument, and each service turns a
//! refusal into its own HTTP answer (429 with `Retry-After`).
//!
//! [`http1`] is the response-head parser the services' load generators share and [`bench`] their
//! `main`; [`cli`] what the command lines share; [`logging`] the
//! one logging set-up (`RUST_LOG`, else `--log-level`); [`keyfile`] the private key files (mode
//! 0600, refused when others may read them, replaced by rename); [`response`] the signer's and the issuer's JSON error answers; [`serve`]
//! the serve loop (read-header timeout, peer address, graceful shutdown) and the clock.

pub mod bench;
pub mod cli;
pub mod http1;
pub mod keyfile;
mod limit;
pub mod logging;
pub mod openapi;
pub mod response;
pub mod serve;

pub use limit::{MAX_TRACKED_CLIENTS, RateLimiter, client_key};
