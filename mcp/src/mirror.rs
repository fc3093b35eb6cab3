//! The mirrored registry: which WebMCP tools the open pages have registered right now, under
//! which MCP names, and how a tool's answer becomes an MCP tool result. Pure: it is fed the
//! DevTools events' parameters and answers questions; the browser worker does the I/O.

use serde_json::{Map, Value};

/// One WebMCP tool of one page, as `WebMCP.toolsAdded` announced it.
#[derive(Debug, Clone, PartialEq)]
pub struct PageTool {
    /// The flattened DevTools session of the page.
    pub session: String,
    /// The frame that registered it (what `WebMCP.invokeTool` needs).
    pub frame_id: String,
    /// The tool's WebMCP name.
    pub name: String,
    /// Its description as the page gave it.
    pub description: String,
    /// Its input schema (an object; `{"type":"object"}` if the page gave none).
    pub input_schema: Map<String, Value>,
    /// `readOnly` from the page's annotations, if it gave any.
    pub read_only: Option<bool>,
    /// The page's origin when the tool was added (told to the agent in the description).
    pub origin: String,
}

/// A tool as the MCP client sees it: its MCP name and the page tool behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed<'a> {
    /// The name under which the MCP client lists and calls it.
    pub mcp_name: String,
    /// The page's tool.
    pub tool: &'a PageTool,
}

impl Listed<'_> {
    /// The description the MCP client sees: which site the tool belongs to, then the page's
    /// own description.
    pub fn description(&self) -> String {
        format!("[{}] {}", self.tool.origin, self.tool.description)
    }
}

/// The live tools of every mirrored page, in registration order.
#[derive(Debug, Default)]
pub struct Mirror {
    tools: Vec<PageTool>,
    origins: Vec<(String, String)>,
}

impl Mirror {
    /// Records the origin of the page behind `session` (from its URL).
    pub fn page_at(&mut self, session: &str, url: &str) {
        let origin = origin_of(url);
        match self.origins.iter_mut().find(|(s, _)| s == session) {
            Some(entry) => entry.1 = origin,
            None => self.origins.push((session.to_owned(), origin)),
        }
    }

    fn origin(&self, session: &str) -> String {
        self.origins
            .iter()
            .find(|(s, _)| s == session)
            .map_or_else(String::new, |(_, o)| o.clone())
    }

    /// `WebMCP.toolsAdded` on `session`: `params` is `{tools: [Tool]}`. A tool registered again
    /// under the same frame and name replaces the old entry. Returns whether the list changed.
    pub fn added(&mut self, session: &str, params: &Value) -> bool {
        let origin = self.origin(session);
        let mut changed = false;
        for tool in params["tools"].as_array().into_iter().flatten() {
            let (Some(name), Some(frame_id)) = (tool["name"].as_str(), tool["frameId"].as_str())
            else {
                continue;
            };
            let input_schema = match tool.get("inputSchema") {
                Some(Value::Object(schema)) => schema.clone(),
                _ => {
                    let mut schema = Map::new();
                    schema.insert("type".to_owned(), Value::from("object"));
                    schema
                }
            };
            let entry = PageTool {
                session: session.to_owned(),
                frame_id: frame_id.to_owned(),
                name: name.to_owned(),
                description: tool["description"].as_str().unwrap_or_default().to_owned(),
                input_schema,
                read_only: tool["annotations"]["readOnly"].as_bool(),
                origin: origin.clone(),
            };
            self.tools
                .retain(|t| !(t.session == session && t.frame_id == frame_id && t.name == name));
            self.tools.push(entry);
            changed = true;
        }
        changed
    }

    /// `WebMCP.toolsRemoved` on `session`: `params` is `{tools: [{name, frameId}]}`.
    pub fn removed(&mut self, session: &str, params: &Value) -> bool {
        let before = self.tools.len();
        for gone in params["tools"].as_array().into_iter().flatten() {
            let (name, frame) = (gone["name"].as_str(), gone["frameId"].as_str());
            self.tools.retain(|t| {
                !(t.session == session
                    && Some(t.name.as_str()) == name
                    && Some(t.frame_id.as_str()) == frame)
            });
        }
        self.tools.len() != before
    }

    /// A frame of `session` navigated: its tools are gone (Chromium sends no `toolsRemoved` for
    /// them; the new document registers its own).
    pub fn frame_navigated(&mut self, session: &str, frame_id: &str) -> bool {
        let before = self.tools.len();
        self.tools
            .retain(|t| !(t.session == session && t.frame_id == frame_id));
        self.tools.len() != before
    }

    /// The page behind `session` closed or was detached.
    pub fn page_closed(&mut self, session: &str) -> bool {
        self.origins.retain(|(s, _)| s != session);
        let before = self.tools.len();
        self.tools.retain(|t| t.session != session);
        self.tools.len() != before
    }

    /// The live tools under their MCP names: a tool keeps its WebMCP name unless an earlier
    /// registration (another tab, another site) already holds it; then it is `<name>.<n>` with
    /// the first free `n` from 2.
    pub fn list(&self) -> Vec<Listed<'_>> {
        let mut listed: Vec<Listed<'_>> = Vec::with_capacity(self.tools.len());
        for tool in &self.tools {
            let taken = |name: &str| listed.iter().any(|l| l.mcp_name == name);
            let mut mcp_name = tool.name.clone();
            let mut n = 2;
            while taken(&mcp_name) {
                mcp_name = format!("{}.{n}", tool.name);
                n += 1;
            }
            listed.push(Listed { mcp_name, tool });
        }
        listed
    }

    /// The page tool listed under `mcp_name`, if it is live.
    pub fn resolve(&self, mcp_name: &str) -> Option<PageTool> {
        self.list()
            .into_iter()
            .find(|l| l.mcp_name == mcp_name)
            .map(|l| l.tool.clone())
    }
}

/// `scheme://host[:port]` of a URL (the URL itself if it has no such prefix).
fn origin_of(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    format!("{scheme}://{authority}")
}

/// How a call ended, reduced to what an MCP tool result carries.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// `isError` of the MCP result.
    pub is_error: bool,
    /// The text content.
    pub text: String,
    /// The structured content (the tool's output object), if it returned an object.
    pub structured: Option<Value>,
}

impl Outcome {
    /// An error the door itself reports (no tool ran, or it did not finish).
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            is_error: true,
            text: text.into(),
            structured: None,
        }
    }
}

/// The MCP result of a `WebMCP.toolResponded`: `params` is `{status, output?, exception?}`.
/// A completed call whose output is a refusal envelope (`ok: false`, or `isError: true`) is an
/// error result carrying the envelope's text, so that generic clients can tell a refusal from
/// an answer; any other completed output is a success.
pub fn outcome_of(params: &Value) -> Outcome {
    match params["status"].as_str() {
        Some("Completed") => {
            let output = params.get("output").cloned().unwrap_or(Value::Null);
            let refused = output.get("ok") == Some(&Value::Bool(false))
                || output.get("isError") == Some(&Value::Bool(true));
            let text = match &output {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Outcome {
                is_error: refused,
                structured: output.is_object().then_some(output),
                text,
            }
        }
        Some("Canceled") => Outcome::error("The call was cancelled."),
        Some("Error") => {
            let first_line = params["exception"]["description"]
                .as_str()
                .and_then(|d| d.lines().next())
                .unwrap_or("the tool threw");
            Outcome::error(format!("The page's tool failed: {first_line}"))
        }
        other => Outcome::error(format!(
            "The browser answered with an unknown status {}.",
            other.unwrap_or("(none)")
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, frame: &str) -> Value {
        json!({ "name": name, "frameId": frame, "description": format!("does {name}"),
                "inputSchema": { "type": "object", "properties": {} },
                "annotations": { "readOnly": true, "untrustedContent": false,
                                 "consequential": false, "debugging": false } })
    }

    #[test]
    fn follows_added_removed_navigated_and_closed() {
        let mut m = Mirror::default();
        m.page_at("s1", "http://localhost:8080/?x=1");
        assert!(m.added(
            "s1",
            &json!({ "tools": [tool("a", "f1"), tool("b", "f1")] })
        ));
        let listed = m.list();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].description(), "[http://localhost:8080] does a");
        assert_eq!(listed[0].tool.read_only, Some(true));
        assert!(m.removed(
            "s1",
            &json!({ "tools": [{ "name": "a", "frameId": "f1" }] })
        ));
        assert!(!m.removed(
            "s1",
            &json!({ "tools": [{ "name": "a", "frameId": "f1" }] })
        ));
        assert_eq!(m.resolve("a"), None);
        assert_eq!(m.resolve("b").unwrap().frame_id, "f1");
        assert!(m.frame_navigated("s1", "f1"));
        assert!(m.list().is_empty());
        m.added("s1", &json!({ "tools": [tool("c", "f1")] }));
        assert!(m.page_closed("s1"));
        assert!(m.list().is_empty());
    }

    #[test]
    fn a_name_held_by_another_tab_gets_a_suffix_and_a_re_registration_replaces() {
        let mut m = Mirror::default();
        m.added("s1", &json!({ "tools": [tool("request_claims", "f1")] }));
        m.added("s2", &json!({ "tools": [tool("request_claims", "f2")] }));
        m.added("s1", &json!({ "tools": [tool("request_claims", "f1")] }));
        let names: Vec<String> = m.list().into_iter().map(|l| l.mcp_name).collect();
        assert_eq!(names, ["request_claims", "request_claims.2"]);
        assert_eq!(m.resolve("request_claims").unwrap().session, "s2");
        assert_eq!(m.resolve("request_claims.2").unwrap().session, "s1");
        // Malformed entries are ignored; a missing schema becomes an empty object schema.
        assert!(!m.added("s1", &json!({ "tools": [{ "name": 3 }] })));
        m.added(
            "s3",
            &json!({ "tools": [{ "name": "z", "frameId": "f3" }] }),
        );
        assert_eq!(
            m.resolve("z").unwrap().input_schema,
            json!({ "type": "object" }).as_object().unwrap().clone()
        );
    }

    #[test]
    fn refusals_are_errors_and_answers_are_not() {
        let answer = outcome_of(&json!({ "status": "Completed",
            "output": { "ok": true, "result": { "satisfied": true } } }));
        assert!(!answer.is_error);
        assert_eq!(answer.structured.unwrap()["result"]["satisfied"], true);
        let refusal = json!({ "ok": false, "error": { "code": "grant_revoked", "message": "m" } });
        let refused = outcome_of(&json!({ "status": "Completed", "output": refusal }));
        assert!(refused.is_error);
        assert!(refused.text.contains("grant_revoked"));
        let flagged = outcome_of(&json!({ "status": "Completed", "output": { "isError": true } }));
        assert!(flagged.is_error);
        assert!(outcome_of(&json!({ "status": "Canceled" })).is_error);
        let thrown = outcome_of(&json!({ "status": "Error",
            "exception": { "description": "Error: boom\n    at x" } }));
        assert!(thrown.is_error);
        assert_eq!(thrown.text, "The page's tool failed: Error: boom");
        assert!(outcome_of(&json!({})).is_error);
        let text = outcome_of(&json!({ "status": "Completed", "output": "plain" }));
        assert_eq!(
            (text.text.as_str(), text.is_error, text.structured),
            ("plain", false, None)
        );
    }
}
