//! # tacit-protocol
//!
//! The rules on the wire between Tacit's parties, decided here and nowhere else:
//! - [`request_auth`]: a signer request is signed by an **enrolled install key** (ES256, a
//!   WebCrypto P-256 key the wallet cannot export) over the method, path, a timestamp and the
//!   body digest; the signer checks it with [`request_auth::RequestAuth::verify`];
//! - [`issuer_pop`]: a wallet proves to an issuer that it holds each holder key it asks a
//!   credential for (ES256 over the issuer's origin and a fresh issuer nonce);
//! - [`site_auth`]: a relying site signs its requirements (origin, policy digest, nonce,
//!   expiry) with a key it publishes at `<origin>/.well-known/tacit-site.json`; the wallet checks
//!   them with [`site_auth::verify_requirements`] before it calls the asker verified.
//! - [`issuance`]: an issuer's checks of a credential request before its database is asked, and
//!   the lifetimes of its nonces, refresh tokens and enrolment codes.
//! - [`limits`]: the request-body limit and the credential batch sizes every party shares.
//! - [`single_use`]: when a nonce, code or token handed out once may still be used (and the
//!   same rule as the SQL predicate the services' conditional `UPDATE`s carry).
//! - [`trust`]: the rules a relying site's configuration of whom it trusts must meet (key
//!   sources, trusted issuers).
//! - [`rate_limit`]: the token buckets every service limits requests with, per client and
//!   optionally per IPv6 /48 and overall (time is an argument; the services keep the table
//!   behind a lock).
//! - [`status_list`]: Token Status List: an issuer's signed list of the credentials it revoked,
//!   and the entry each credential names in it.
//! - [`predicates`]: which SD-JWT VC claim (`income_below_30000`, `age_equal_or_over_18`) proves
//!   which wallet claim, the one table issuers, wallets and sites share.
//!
//! It refuses to touch the outside world: no clock (time is an argument), no randomness of its
//! own, no I/O, no browser types. It builds for `wasm32-unknown-unknown`.

pub mod issuance;
pub mod issuer_pop;
pub mod limits;
pub mod oid4vci;
pub mod predicates;
pub mod rate_limit;
pub mod request_auth;
pub mod sd_jwt;
pub mod single_use;
pub mod site_auth;
pub mod status_list;
pub mod trust;
pub mod webauthn;
