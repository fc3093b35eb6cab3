//! Reading an agent's input. WebMCP does not enforce `inputSchema`: missing, extra, mistyped and
//! absurdly nested inputs all arrive, so a gated tool reads its input through here first.

use serde_json::Value;

use crate::envelope::Refusal;

/// Deepest nesting of arrays and objects an input may have; past this an input is refused with
/// that reason instead of failing to parse (or overflowing a parser's stack).
pub const MAX_DEPTH: usize = 32;

/// Reads a tool input given as JSON text (what a host gets from `JSON.stringify` of the agent's
/// argument): refuses text nested deeper than [`MAX_DEPTH`] levels with that reason
/// ([`TOO_DEEP`]), and text that is not JSON as such.
pub fn from_text(text: &str) -> Result<Value, Refusal> {
    if nested_too_deep(text) {
        return Err(Refusal::invalid_input(TOO_DEEP));
    }
    serde_json::from_str(text).map_err(|_| Refusal::invalid_input("The input is not valid JSON."))
}

/// Why an input nested deeper than [`MAX_DEPTH`] is refused: the same sentence at every door
/// (the wallet, the sites' pages and their servers).
pub const TOO_DEEP: &str = "The input is nested deeper than 32 levels; no tool takes that.";

/// Whether JSON text opens more than [`MAX_DEPTH`] arrays and objects inside one another
/// (brackets inside strings do not count). Text that is not JSON may answer either way; it is
/// refused anyway.
pub fn nested_too_deep(text: &str) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for byte in text.bytes() {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_input_is_refused_for_its_depth_and_strings_do_not_count() {
        let ok = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(from_text(&ok).is_ok());
        let deep = format!(
            "{}1{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        let refusal = from_text(&deep).unwrap_err();
        assert_eq!(refusal.code, "invalid_input");
        assert!(refusal.message.contains("nested deeper than 32 levels"));
        assert!(
            TOO_DEEP.contains(&MAX_DEPTH.to_string()),
            "the sentence names the limit"
        );
        let very = "{\"a\":".repeat(10_000);
        assert!(
            from_text(&very)
                .unwrap_err()
                .message
                .contains("nested deeper")
        );
        let text = format!("{{\"s\": \"{}\\\"{}\"}}", "[".repeat(100), "{".repeat(100));
        assert_eq!(from_text(&text).unwrap()["s"].as_str().unwrap().len(), 201);
        assert!(
            from_text("{nope")
                .unwrap_err()
                .message
                .contains("not valid JSON")
        );
    }
}
