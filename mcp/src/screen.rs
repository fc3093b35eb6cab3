//! Every request gets an answer. `rmcp`'s stdio transport silently drops a line `serde_json`
//! cannot read (by design: <https://github.com/modelcontextprotocol/rust-sdk/issues/938>), and
//! `serde_json` cannot read valid JSON that holds a lone UTF-16 surrogate (`"\ud800"`, which
//! JavaScript's `JSON.stringify` writes for a lone surrogate) or nests deeper than 128 levels,
//! so such a request was never answered and the client waited out its timeout. It also answers a
//! JSON-RPC message it cannot type-check with an `Invalid request` that carries no `id`, which
//! the client cannot match to its request either.
//!
//! The screen sits between stdin and `rmcp`: a line `rmcp` can read passes unchanged; a request
//! it cannot read, whose `id` the screen can still find (a scan of the top-level members that
//! neither decodes strings nor recurses), is replaced by a request for the door's own method
//! [`REFUSE`], which the door answers with `-32602` (invalid params) and the reason, under the
//! request's `id`. A line with no readable `id` (not JSON, a notification) passes to `rmcp`,
//! which ignores it: nothing could be correlated with an answer. A line longer than
//! [`MAX_LINE`] is not buffered; it is scanned as it streams past and refused the same way.

use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

/// The door's own method, answered with an invalid-params error carrying `params.reason`.
pub const REFUSE: &str = "tacit-mcp/refuse-unreadable";

/// The longest request line the door reads (4 MiB); a longer request is refused unread.
pub const MAX_LINE: usize = 4 * 1024 * 1024;

/// The longest top-level member (`"id": ...`, `"method": ...`) the scanner keeps.
const MAX_MEMBER: usize = 4096;

/// A streaming scan of one line's top-level JSON object: it keeps the `id` and `method` members
/// and nothing else, and never decodes a string or recurses (so no input can make it fail the
/// way a parser does, or overflow a stack).
#[derive(Debug, Default)]
struct Envelope {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The line is not a single object (text before `{` or after its `}`).
    not_object: bool,
    /// The top-level object closed.
    closed: bool,
    member: Vec<u8>,
    member_too_long: bool,
    id: Option<Value>,
    method: Option<Result<String, ()>>,
    /// What `params` is, when it is small enough to have been read and is not an object.
    params_not_object: Option<&'static str>,
}

impl Envelope {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if self.depth == 0 {
            match b {
                b'{' if !self.closed => self.depth = 1,
                b' ' | b'\t' | b'\r' | b'\n' => {}
                // A UTF-8 byte order mark before the object is allowed (RFC 8259 §8.1).
                0xEF | 0xBB | 0xBF if !self.closed => {}
                _ => self.not_object = true,
            }
            return;
        }
        if self.in_string {
            match (self.escaped, b) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            self.keep(b);
            return;
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => {
                self.depth -= 1;
                if self.depth == 0 {
                    self.end_member();
                    self.closed = true;
                    return;
                }
            }
            b',' if self.depth == 1 => {
                self.end_member();
                return;
            }
            _ => {}
        }
        self.keep(b);
    }

    fn keep(&mut self, b: u8) {
        if self.depth == 1 || !self.member.is_empty() || self.in_string {
            if self.member.len() < MAX_MEMBER {
                self.member.push(b);
            } else {
                self.member_too_long = true;
            }
        }
    }

    fn end_member(&mut self) {
        let text = std::mem::take(&mut self.member);
        let too_long = std::mem::replace(&mut self.member_too_long, false);
        if too_long {
            return;
        }
        let mut wrapped = Vec::with_capacity(text.len() + 2);
        wrapped.push(b'{');
        wrapped.extend_from_slice(&text);
        wrapped.push(b'}');
        // One member: `{"id": 7}`; a member that is itself unreadable (a lone surrogate in the
        // method's name) is kept as such.
        if let Ok(map) = serde_json::from_slice::<Map<String, Value>>(&wrapped) {
            for (key, value) in map {
                match key.as_str() {
                    "id" => self.id = Some(value),
                    "method" => {
                        self.method = Some(value.as_str().map(str::to_owned).ok_or(()));
                    }
                    "params" => {
                        self.params_not_object = match value {
                            Value::Object(_) => None,
                            Value::Array(_) => Some("an array"),
                            Value::String(_) => Some("a string"),
                            Value::Number(_) => Some("a number"),
                            Value::Bool(_) => Some("a boolean"),
                            Value::Null => Some("null"),
                        };
                    }
                    _ => {}
                }
            }
        } else if text.trim_ascii_start().starts_with(b"\"method\"") {
            self.method = Some(Err(()));
        }
    }

    /// The request's `id`, if the line is one request object with a usable one.
    fn request_id(&self) -> Option<&Value> {
        if self.not_object || !self.closed || self.depth != 0 || self.method.is_none() {
            return None;
        }
        self.id.as_ref().filter(|id| match id {
            Value::String(_) => true,
            Value::Number(n) => n.is_i64() || n.is_u64(),
            _ => false,
        })
    }
}

/// What the screen does with one line.
#[derive(Debug, PartialEq)]
pub enum Screened {
    /// Let `rmcp` read it as it is.
    Pass,
    /// Give `rmcp` this line instead: a [`REFUSE`] request under the original `id`.
    Refuse(Vec<u8>),
}

/// Screens one complete line (without its newline).
pub fn screen(line: &[u8]) -> Screened {
    let text = line.strip_suffix(b"\r").unwrap_or(line);
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    if text.trim_ascii().is_empty() {
        return Screened::Pass;
    }
    let error = match serde_json::from_slice::<ClientJsonRpcMessage>(text) {
        Ok(_) => return Screened::Pass,
        Err(e) => e,
    };
    let mut envelope = Envelope::default();
    envelope.feed(text);
    refusal(&envelope, &reason_for(&envelope, &error))
}

fn refusal(envelope: &Envelope, reason: &str) -> Screened {
    match envelope.request_id() {
        Some(id) => {
            let request = json!({
                "jsonrpc": "2.0", "id": id, "method": REFUSE, "params": { "reason": reason }
            });
            Screened::Refuse(request.to_string().into_bytes())
        }
        None => Screened::Pass,
    }
}

/// The sentence an unreadable request is refused with.
fn reason_for(envelope: &Envelope, error: &serde_json::Error) -> String {
    let what = match &envelope.method {
        Some(Ok(method)) => format!("The `{method}` request"),
        _ => "The request".to_owned(),
    };
    let message = error.to_string();
    // serde_json's words for a lone surrogate: "lone leading surrogate in hex escape", and
    // "unexpected end of hex escape" for a leading one followed by no `\u` escape.
    if message.contains("surrogate") || message.contains("end of hex escape") {
        format!(
            "{what} holds a string that is not Unicode text (a lone UTF-16 surrogate, \\uD800 to \
             \\uDFFF without its pair; {message}); send well-formed strings."
        )
    } else if message.contains("recursion limit") {
        format!(
            "{what} is nested deeper than 128 levels, which the door does not read; no tool \
             takes that."
        )
    } else if let Some(kind) = envelope.params_not_object {
        format!("{what}'s params must be an object, not {kind}.")
    } else if matches!(envelope.method, Some(Err(()))) {
        format!("{what} names a method that is not Unicode text ({message}).")
    } else {
        format!("{what} is not a JSON-RPC 2.0 request the door can read: {message}.")
    }
}

/// Copies `input` to `output` line by line through [`screen`], until `input` ends (then
/// `output` is shut, which `rmcp` reads as the end of the session).
pub async fn run(
    mut input: impl AsyncBufRead + Unpin,
    mut output: impl AsyncWrite + Unpin,
) -> std::io::Result<()> {
    let mut line = Vec::new();
    let mut envelope = Envelope::default();
    let mut oversized = false;
    loop {
        let (consumed, ended) = {
            let available = input.fill_buf().await?;
            if available.is_empty() {
                break;
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..take];
            envelope.feed(chunk);
            if !oversized && line.len() + chunk.len() > MAX_LINE + 1 {
                oversized = true;
                line = Vec::new();
            }
            if !oversized {
                line.extend_from_slice(chunk);
            }
            (take, newline.is_some())
        };
        input.consume(consumed);
        if !ended {
            continue;
        }
        let screened = if oversized {
            refusal(
                &envelope,
                &format!(
                    "The request is larger than {} MiB, which the door does not read.",
                    MAX_LINE / (1024 * 1024)
                ),
            )
        } else {
            screen(line.strip_suffix(b"\n").unwrap_or(&line))
        };
        match screened {
            Screened::Pass if !oversized => output.write_all(&line).await?,
            Screened::Pass => {}
            Screened::Refuse(request) => {
                output.write_all(&request).await?;
                output.write_all(b"\n").await?;
            }
        }
        output.flush().await?;
        line.clear();
        envelope = Envelope::default();
        oversized = false;
    }
    output.shutdown().await
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn refused(line: &str) -> Value {
        match screen(line.as_bytes()) {
            Screened::Refuse(request) => serde_json::from_slice(&request).unwrap(),
            Screened::Pass => panic!("passed: {line}"),
        }
    }

    fn call(params: &str, id: &str) -> String {
        format!(r#"{{"method":"tools/call","params":{params},"jsonrpc":"2.0","id":{id}}}"#)
    }

    #[test]
    fn readable_lines_pass_and_unreadable_requests_are_refused_under_their_id() {
        let good = call(r#"{"name":"t","arguments":{"a":"\ud83d\ude00"}}"#, "1");
        assert_eq!(screen(good.as_bytes()), Screened::Pass);
        // Not requests, or no id to answer under: rmcp decides.
        for line in [
            "",
            "  ",
            "not json",
            r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\ud800"}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping","params":{"a":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":"\ud800","method":"ping","params":{"a":"\ud800"}}"#,
        ] {
            assert_eq!(screen(line.as_bytes()), Screened::Pass, "{line}");
        }

        let lone = refused(&call(r#"{"name":"t","arguments":{"a":"x\ud800y"}}"#, "7"));
        assert_eq!(lone["id"], 7);
        assert_eq!(lone["method"], REFUSE);
        let reason = lone["params"]["reason"].as_str().unwrap();
        assert!(reason.starts_with("The `tools/call` request"), "{reason}");
        assert!(reason.contains("lone UTF-16 surrogate"), "{reason}");

        let low = refused(&call(r#"{"name":"\udc00"}"#, r#""abc""#));
        assert_eq!(low["id"], "abc");

        let deep = format!(
            r#"{{"name":"t","arguments":{{"a":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let deep = refused(&call(&deep, "9"));
        assert!(
            deep["params"]["reason"]
                .as_str()
                .unwrap()
                .contains("nested deeper than 128 levels")
        );

        // The id may come first, last, or after deep members; a CRLF and a BOM are allowed.
        let first = format!(
            "\u{feff}{{\"jsonrpc\":\"2.0\",\"id\":3,\"params\":{{\"x\":{}{}}},\"method\":\"tools/call\"}}\r",
            "{\"y\":".repeat(300),
            "}".repeat(300)
        );
        assert_eq!(refused(&first)["id"], 3);

        let method = refused(r#"{"jsonrpc":"2.0","id":4,"method":"tools/\ud800"}"#);
        assert!(
            method["params"]["reason"]
                .as_str()
                .unwrap()
                .contains("lone UTF-16 surrogate")
        );
        // Well-formed JSON of the wrong shape, with an id: refused under it (rmcp would answer
        // without one).
        let shape = refused(r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#);
        assert_eq!(shape["id"], 5);
        let params = refused(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"x"}"#);
        assert_eq!(
            params["params"]["reason"],
            "The `tools/call` request's params must be an object, not a string."
        );
    }

    #[tokio::test]
    async fn run_passes_lines_refuses_and_streams_past_oversized_ones() {
        let big = format!(
            r#"{{"method":"tools/call","params":{{"name":"t","arguments":{{"s":"{}"}}}},"jsonrpc":"2.0","id":11}}"#,
            "x".repeat(MAX_LINE + 10)
        );
        let input = format!(
            "{}\n{}\n{big}\n{}",
            call(r#"{"name":"t"}"#, "1"),
            call(r#"{"name":"\ud800"}"#, "2"),
            call(r#"{"name":"t"}"#, "12")
        );
        let mut output = Vec::new();
        run(tokio::io::BufReader::new(input.as_bytes()), &mut output)
            .await
            .unwrap();
        let lines: Vec<Value> = output
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(
            lines.len(),
            3,
            "the last line has no newline: not delivered"
        );
        assert_eq!(lines[0]["method"], "tools/call");
        assert_eq!(
            (lines[1]["id"].clone(), lines[1]["method"].clone()),
            (json!(2), json!(REFUSE))
        );
        assert_eq!(lines[2]["id"], 11);
        assert!(
            lines[2]["params"]["reason"]
                .as_str()
                .unwrap()
                .contains("larger than 4 MiB")
        );
    }
}
