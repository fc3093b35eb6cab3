//! Strict input validation. WebMCP does not enforce `inputSchema`: missing, extra and mistyped
//! fields all arrive, so every tool checks its own input here, whatever its schema says. Reading
//! the text and its depth limit are tool-gate's ([`tool_gate::input`]); the fields are the
//! wallet's.

use serde_json::{Map, Value};

use crate::envelope::{Code, Refusal};

/// Longest string any tool accepts in any field.
pub const MAX_STRING: usize = 512;

/// Deepest nesting of arrays and objects any tool input may have (tool-gate's). No tool needs
/// more than 3; past this an input is refused with that reason instead of failing to parse.
pub const MAX_DEPTH: usize = tool_gate::input::MAX_DEPTH;

/// Reads a tool input given as JSON text (what a host gets from `JSON.stringify` of the agent's
/// argument) with [`tool_gate::input::from_text`]: text nested deeper than [`MAX_DEPTH`] levels
/// is refused with that reason, and text that is not JSON as such, before any tool looks at it.
/// Both are the wallet's `invalid_input`.
pub fn from_text(text: &str) -> Result<Value, Refusal> {
    tool_gate::input::from_text(text).map_err(|refusal| invalid(refusal.message))
}

/// A validated JSON object whose properties are all known to the tool.
#[derive(Debug)]
pub struct Fields<'a> {
    map: &'a Map<String, Value>,
}

fn invalid(message: String) -> Refusal {
    Refusal::new(Code::InvalidInput, message)
}

/// Accepts `null`/absent input as an empty object; refuses anything else but an object whose
/// property names are all in `allowed`.
pub fn object<'a>(input: &'a Value, allowed: &[&str]) -> Result<Fields<'a>, Refusal> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    let map = match input {
        Value::Object(map) => map,
        Value::Null => EMPTY.get_or_init(Map::new),
        _ => return Err(invalid("The input must be a JSON object.".to_owned())),
    };
    if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        let shown: String = unknown.chars().take(40).collect();
        let expected = if allowed.is_empty() {
            "none".to_owned()
        } else {
            allowed.join(", ")
        };
        return Err(invalid(format!(
            "Unknown property \"{shown}\": this tool accepts only: {expected}."
        )));
    }
    Ok(Fields { map })
}

impl<'a> Fields<'a> {
    /// The raw value of a field, if present.
    pub fn get(&self, field: &str) -> Option<&'a Value> {
        self.map.get(field)
    }

    /// An optional string of at most `max` characters.
    pub fn opt_str(&self, field: &str, max: usize) -> Result<Option<&'a str>, Refusal> {
        match self.map.get(field) {
            None => Ok(None),
            Some(Value::String(s)) if s.chars().count() <= max => Ok(Some(s)),
            Some(Value::String(_)) => Err(invalid(format!(
                "Field \"{field}\" is longer than {max} characters."
            ))),
            Some(_) => Err(invalid(format!("Field \"{field}\" must be a string."))),
        }
    }

    /// A required string of at most `max` characters.
    pub fn str(&self, field: &str, max: usize) -> Result<&'a str, Refusal> {
        self.opt_str(field, max)?
            .ok_or_else(|| invalid(format!("Field \"{field}\" is required.")))
    }

    /// A required array of at most `max` items.
    pub fn array(&self, field: &str, max: usize) -> Result<&'a Vec<Value>, Refusal> {
        match self.map.get(field) {
            Some(Value::Array(items)) if items.len() <= max => Ok(items),
            Some(Value::Array(_)) => Err(invalid(format!(
                "Field \"{field}\" has more than {max} items."
            ))),
            Some(_) => Err(invalid(format!("Field \"{field}\" must be an array."))),
            None => Err(invalid(format!("Field \"{field}\" is required."))),
        }
    }
}

/// Parses a field's text with a wallet-core parser, naming the field on failure.
pub fn parse_with<T, E: core::fmt::Display>(
    field: &str,
    text: &str,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> Result<T, Refusal> {
    parse(text).map_err(|e| invalid(format!("Field \"{field}\" is not acceptable: {e}.")))
}
