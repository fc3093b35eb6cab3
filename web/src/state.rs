//! The records the page keeps beside the gate and draws: plain data, shared by `app` (which
//! keeps them), the modules that fill them in, and `render` (which only reads them).

use wallet_core::Timestamp;

/// One call an agent made, as the page shows it.
#[derive(Debug, Clone)]
pub struct Call {
    pub at: Timestamp,
    pub tool: String,
    pub outcome: String,
}

/// A receipt made when the person ended a session.
#[derive(Debug, Clone)]
pub struct SessionReceipt {
    pub payload: wallet_core::ReceiptPayload,
    pub signed: Option<wallet_core::SignedReceipt>,
    pub note: String,
}

/// How the check of one request's asker went (`asker`), for the consent card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskerCheck {
    Checking,
    Confirmed,
    Failed(&'static str),
}
