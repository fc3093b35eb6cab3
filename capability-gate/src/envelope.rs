//! Refusal is a value: every tool answers `{ok: true, result}` or
//! `{ok: false, isError: true, error: {code, message}}`.
//!
//! The shape is tool-gate's ([`tool_gate::envelope()`], one place for it); what is the wallet's
//! here is [`Code`], the closed list of every code an agent can get from the wallet. The grant
//! codes are tool-gate's own ([`tool_gate::Ended::code`]).
//!
//! Chromium turns a throwing `execute` into a bare `UnknownError`, so nothing here throws.

use serde::Serialize;
use serde_json::Value;
use tool_gate::Ended;

/// Why a tool refused. The code is for programs; the message is a sentence for a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// The input is malformed: unknown property, wrong type, string too long, bad value.
    InvalidInput,
    /// The wallet is locked: the person must unlock it in the wallet page.
    WalletLocked,
    /// No consent request with that id.
    UnknownRequest,
    /// No proposal with that id.
    UnknownProposal,
    /// The grant behind this tool was revoked, or the wallet was locked.
    GrantRevoked,
    /// The grant behind this tool expired.
    GrantExpired,
    /// The one-time grant behind this tool was used up.
    GrantSpent,
    /// Answering would narrow what is known below the person's privacy floor.
    DeclinedPrivacyFloor,
    /// The claim cannot be asked of this profile.
    InvalidClaim,
    /// Nothing to draft: no claim has been answered for that audience.
    NothingToDraft,
    /// Too many requests or proposals are waiting for the person.
    TooManyPending,
    /// The wallet page is busy with another call in this very task: try again in a moment.
    Busy,
    /// No tool with that name exists now (a call through the page's own `window.tacit.call`).
    UnknownTool,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidInput => tool_gate::envelope::INVALID_INPUT,
            Code::WalletLocked => "wallet_locked",
            Code::UnknownRequest => "unknown_request",
            Code::UnknownProposal => "unknown_proposal",
            Code::GrantRevoked => Ended::Revoked.code(),
            Code::GrantExpired => Ended::Expired.code(),
            Code::GrantSpent => Ended::Spent.code(),
            Code::DeclinedPrivacyFloor => "declined_privacy_floor",
            Code::InvalidClaim => "invalid_claim",
            Code::NothingToDraft => "nothing_to_draft",
            Code::TooManyPending => "too_many_pending",
            Code::Busy => "busy",
            Code::UnknownTool => tool_gate::envelope::UNKNOWN_TOOL,
        }
    }
}

impl From<Ended> for Code {
    /// The code a call on a grant that ended this way gets.
    fn from(ended: Ended) -> Self {
        match ended {
            Ended::Revoked => Code::GrantRevoked,
            Ended::Expired => Code::GrantExpired,
            Ended::Spent => Code::GrantSpent,
        }
    }
}

/// A refusal: a code and a sentence. Messages never carry a profile value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: Code,
    pub message: String,
}

impl Refusal {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl From<Refusal> for tool_gate::Refusal {
    fn from(refusal: Refusal) -> Self {
        tool_gate::Refusal::new(refusal.code.as_str(), refusal.message)
    }
}

/// What a tool returns, before it is turned into JSON for the agent.
pub type Reply = Result<Value, Refusal>;

/// The JSON envelope the agent reads, built by [`tool_gate::envelope()`]: `{ok: true, result}`,
/// or for a refusal `{ok: false, isError: true, error: {code, message}}` — `isError` so that
/// generic clients (which look for `isError: true`, as MCP tool results carry it) tell a refusal
/// from an answer.
pub fn envelope(reply: &Reply) -> Value {
    tool_gate::envelope(&reply.clone().map_err(tool_gate::Refusal::from))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_grant_codes_are_tool_gates_and_its_envelope_is_the_shape() {
        for ended in [Ended::Revoked, Ended::Expired, Ended::Spent] {
            assert_eq!(Code::from(ended).as_str(), ended.code());
        }
        assert_eq!(
            Code::InvalidInput.as_str(),
            tool_gate::Refusal::invalid_input("x").code
        );
        // A refusal envelope is one tool-gate recognises as such.
        let refused = envelope(&Err(Refusal::new(Code::TooManyPending, "later")));
        assert!(tool_gate::envelope::is_refusal(&refused));
        assert_eq!(refused["error"]["code"], "too_many_pending");
    }

    #[test]
    fn a_refusal_carries_is_error_and_an_answer_does_not() {
        let refused = envelope(&Err(Refusal::new(Code::GrantRevoked, "gone")));
        assert_eq!(
            refused,
            json!({ "ok": false, "isError": true,
                    "error": { "code": "grant_revoked", "message": "gone" } })
        );
        let answered = envelope(&Ok(json!({ "satisfied": true })));
        assert_eq!(
            answered,
            json!({ "ok": true, "result": { "satisfied": true } })
        );
        assert!(answered.get("isError").is_none());
    }

    #[test]
    fn the_page_level_codes_are_spelled_as_the_agent_has_always_read_them() {
        assert_eq!(Code::Busy.as_str(), "busy");
        assert_eq!(Code::UnknownTool.as_str(), "unknown_tool");
        // Serialized (as in an audit record) the same as `as_str`.
        for code in [Code::Busy, Code::UnknownTool, Code::TooManyPending] {
            assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        }
        assert_eq!(
            envelope(&Err(Refusal::new(Code::Busy, "later"))),
            json!({ "ok": false, "isError": true,
                    "error": { "code": "busy", "message": "later" } })
        );
    }
}
