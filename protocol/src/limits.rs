//! Sizes every party must agree on, written once: the services' request-body limit and the
//! credential batch a wallet may ask an issuer for.

/// The largest request body the signer, the issuers and the sites read: 64 KiB.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Most holder keys (so credentials) in one batch an issuer answers; the wallet never asks for
/// more.
pub const MAX_BATCH: usize = 20;

/// The batch size a wallet asks for by default.
pub const DEFAULT_BATCH: usize = 10;

const _: () = assert!(DEFAULT_BATCH >= 1 && DEFAULT_BATCH <= MAX_BATCH);
