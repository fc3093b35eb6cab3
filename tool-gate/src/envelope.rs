//! Refusal is a value: every gated tool answers `{ok: true, result}` or
//! `{ok: false, isError: true, error: {code, message}}`.
//!
//! Chromium turns a throwing `execute` into a bare `UnknownError` (which reads as "retry"), so a
//! gated tool never throws. `isError` is there so that generic clients — MCP tool results carry
//! it, and WebMCP evaluators look for it — tell a refusal from an answer.

use std::borrow::Cow;

use serde_json::{Value, json};

use crate::lease::Ended;

/// A refusal: a code for programs and a sentence for a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: Cow<'static, str>,
    pub message: String,
}

impl Refusal {
    pub fn new(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }

    /// The refusal a call on an ended lease gets.
    pub fn ended(ended: Ended) -> Self {
        Self::new(ended.code(), ended.message())
    }

    /// The refusal a call on a tool that was never granted here gets.
    pub fn unknown_tool(name: &str) -> Self {
        Self::new(
            UNKNOWN_TOOL,
            format!("No tool named {name:?} was granted on this page."),
        )
    }

    /// The refusal for malformed input.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(INVALID_INPUT, message)
    }
}

/// The code for a call on a tool that was never granted.
pub const UNKNOWN_TOOL: &str = "unknown_tool";
/// The code for malformed input.
pub const INVALID_INPUT: &str = "invalid_input";

/// What a tool returns, before it is turned into JSON for the agent.
pub type Reply = Result<Value, Refusal>;

/// The JSON envelope the agent reads.
pub fn envelope(reply: &Reply) -> Value {
    match reply {
        Ok(result) => json!({ "ok": true, "result": result }),
        Err(refusal) => json!({
            "ok": false,
            "isError": true,
            "error": { "code": refusal.code, "message": refusal.message },
        }),
    }
}

/// Whether `value` is a refusal envelope (what a client checks before trusting a result).
pub fn is_refusal(value: &Value) -> bool {
    value.get("ok") == Some(&Value::Bool(false))
        && value.get("isError") == Some(&Value::Bool(true))
        && value.pointer("/error/code").is_some_and(Value::is_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_carries_is_error_and_an_answer_does_not() {
        let refused = envelope(&Err(Refusal::ended(Ended::Revoked)));
        assert_eq!(refused["isError"], true);
        assert_eq!(refused["error"]["code"], "grant_revoked");
        assert!(is_refusal(&refused));
        let answered = envelope(&Ok(json!({ "satisfied": true })));
        assert_eq!(
            answered,
            json!({ "ok": true, "result": { "satisfied": true } })
        );
        assert!(!is_refusal(&answered));
    }
}
