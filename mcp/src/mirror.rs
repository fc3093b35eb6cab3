//! The mirrored registry: which WebMCP tools the named origins' pages have registered right
//! now, under which MCP names, and how a tool's answer becomes an MCP tool result. Pure: it is
//! fed the DevTools events' parameters and answers questions; the browser worker does the I/O.
//!
//! What a page cannot do here: list a tool for an origin it is not (a tool's origin is its
//! frame's origin as the browser computed it, and only frames admitted by a [`Scope`] the
//! person named are mirrored); choose its tools' namespace (see [`crate::origin`]); or put text
//! where the door's own words stand (its description and title follow
//! `From the page at <origin>: `, written by the door).

use serde_json::{Map, Value};

use crate::origin::{Scope, namespace};

/// The WebMCP annotations of a tool, as the page gave them (`None`: not given). Chromium's
/// `WebMCP.toolsAdded` spells them without the `Hint` suffix (`readOnly`, `untrustedContent`,
/// `consequential`, `debugging`); the page's `registerTool` with it (`readOnlyHint`, ...).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hints {
    /// `readOnlyHint`: the tool changes nothing.
    pub read_only: Option<bool>,
    /// `untrustedContentHint`: its output carries content the page does not vouch for.
    pub untrusted_content: Option<bool>,
    /// `consequentialHint`: calling it has consequences for the person (a submission, a
    /// purchase, a disclosure).
    pub consequential: Option<bool>,
    /// `debugging`: a tool for developers, not for agents acting for the person.
    pub debugging: Option<bool>,
}

impl Hints {
    /// The hints of a WebMCP `annotations` object, in either spelling (absent: all `None`).
    pub fn of(annotations: &Value) -> Self {
        let hint = |short: &str, long: &str| {
            annotations
                .get(short)
                .or_else(|| annotations.get(long))
                .and_then(Value::as_bool)
        };
        Self {
            read_only: hint("readOnly", "readOnlyHint"),
            untrusted_content: hint("untrustedContent", "untrustedContentHint"),
            consequential: hint("consequential", "consequentialHint"),
            debugging: hint("debugging", "debuggingHint"),
        }
    }
}

/// One WebMCP tool of one frame, as `WebMCP.toolsAdded` announced it.
#[derive(Debug, Clone, PartialEq)]
pub struct PageTool {
    /// The flattened DevTools session of the page.
    pub session: String,
    /// The frame that registered it (what `WebMCP.invokeTool` needs).
    pub frame_id: String,
    /// The tool's WebMCP name.
    pub name: String,
    /// Its title as the page gave it, if the browser sent one (Chromium 156 does not).
    pub title: Option<String>,
    /// Its description as the page gave it.
    pub description: String,
    /// Its input schema (an object; `{"type":"object"}` if the page gave none).
    pub input_schema: Map<String, Value>,
    /// Its annotations.
    pub hints: Hints,
    /// Its frame's origin when the tool was added, as the browser computed it.
    pub origin: String,
}

/// A tool as the MCP client sees it: its MCP name and the page tool behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed<'a> {
    /// The name under which the MCP client lists and calls it: `<namespace>.<WebMCP name>`.
    pub mcp_name: String,
    /// The page's tool.
    pub tool: &'a PageTool,
}

/// How the door marks a page's own words: everything after this is the page's.
pub fn from_the_page(origin: &str, text: &str) -> String {
    format!("From the page at {origin}: {text}")
}

impl Listed<'_> {
    /// The description the MCP client sees: the door's mark of whose words follow, then the
    /// page's own description.
    pub fn description(&self) -> String {
        from_the_page(&self.tool.origin, &self.tool.description)
    }

    /// The title the MCP client sees, marked the same way (if the page's title reached the door).
    pub fn title(&self) -> Option<String> {
        self.tool
            .title
            .as_deref()
            .map(|t| from_the_page(&self.tool.origin, t))
    }
}

#[derive(Debug)]
struct Frame {
    session: String,
    frame_id: String,
    origin: String,
    url: String,
}

/// The live tools of every mirrored frame, in registration order.
#[derive(Debug, Default)]
pub struct Mirror {
    scopes: Vec<Scope>,
    tools: Vec<PageTool>,
    frames: Vec<Frame>,
}

impl Mirror {
    /// An empty mirror of the frames `scopes` admit.
    pub fn new(scopes: Vec<Scope>) -> Self {
        Self {
            scopes,
            ..Self::default()
        }
    }

    /// Whether a page whose top-level document has `origin` is worth attaching to.
    pub fn wants_origin(&self, origin: &str) -> bool {
        self.scopes.iter().any(|s| s.origin == origin)
    }

    /// Records the origin (the browser's `securityOrigin`) and URL of a frame of `session`.
    pub fn frame_at(&mut self, session: &str, frame_id: &str, origin: &str, url: &str) {
        match self
            .frames
            .iter_mut()
            .find(|f| f.session == session && f.frame_id == frame_id)
        {
            Some(frame) => {
                frame.origin = origin.to_owned();
                frame.url = url.to_owned();
            }
            None => self.frames.push(Frame {
                session: session.to_owned(),
                frame_id: frame_id.to_owned(),
                origin: origin.to_owned(),
                url: url.to_owned(),
            }),
        }
    }

    /// The origin of a frame, if it is known and a named scope admits it.
    fn admitted(&self, session: &str, frame_id: &str) -> Option<&str> {
        let frame = self
            .frames
            .iter()
            .find(|f| f.session == session && f.frame_id == frame_id)?;
        self.scopes
            .iter()
            .any(|s| s.admits(&frame.origin, &frame.url))
            .then_some(frame.origin.as_str())
    }

    /// `WebMCP.toolsAdded` on `session`: `params` is `{tools: [Tool]}`. A tool of a frame no
    /// named scope admits (or of a frame not seen yet) is not mirrored. A tool registered again
    /// under the same frame and name replaces the old entry. Returns whether the list changed.
    pub fn added(&mut self, session: &str, params: &Value) -> bool {
        let mut changed = false;
        for tool in params["tools"].as_array().into_iter().flatten() {
            let (Some(name), Some(frame_id)) = (tool["name"].as_str(), tool["frameId"].as_str())
            else {
                continue;
            };
            let Some(origin) = self.admitted(session, frame_id).map(str::to_owned) else {
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
                title: tool["title"].as_str().map(str::to_owned),
                description: tool["description"].as_str().unwrap_or_default().to_owned(),
                input_schema,
                hints: Hints::of(&tool["annotations"]),
                origin,
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

    /// A frame of `session` navigated to `url` (with the browser's `origin` for it): its tools
    /// are gone (Chromium sends no `toolsRemoved` for them; the new document registers its own).
    pub fn frame_navigated(
        &mut self,
        session: &str,
        frame_id: &str,
        origin: &str,
        url: &str,
    ) -> bool {
        self.frame_at(session, frame_id, origin, url);
        let before = self.tools.len();
        self.tools
            .retain(|t| !(t.session == session && t.frame_id == frame_id));
        self.tools.len() != before
    }

    /// The page behind `session` closed or was detached.
    pub fn page_closed(&mut self, session: &str) -> bool {
        self.frames.retain(|f| f.session != session);
        let before = self.tools.len();
        self.tools.retain(|t| t.session != session);
        self.tools.len() != before
    }

    /// The live tools under their MCP names, `<namespace of the origin>.<WebMCP name>`; when an
    /// earlier registration of the same origin (another tab of it) already holds that name, the
    /// later one is `<name>.<n>` with the first free `n` from 2. Origins never share a
    /// namespace, so a suffix is only ever given against a tool of the same origin.
    pub fn list(&self) -> Vec<Listed<'_>> {
        let mut listed: Vec<Listed<'_>> = Vec::with_capacity(self.tools.len());
        for tool in &self.tools {
            let taken = |name: &str| listed.iter().any(|l| l.mcp_name == name);
            let base = format!("{}.{}", namespace(&tool.origin), tool.name);
            let mut mcp_name = base.clone();
            let mut n = 2;
            while taken(&mcp_name) {
                mcp_name = format!("{base}.{n}");
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
            outcome_of_output(params.get("output").cloned().unwrap_or(Value::Null))
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

/// The MCP result of a tool's completed `output` (a page's, or the paired vault's envelope): a
/// refusal envelope (`ok: false`, or `isError: true`) is an error result carrying its text; any
/// other output is a success, its object as the structured content.
pub fn outcome_of_output(output: Value) -> Outcome {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    const WALLET: &str = "http://localhost:8080";
    const OTHER: &str = "http://localhost:9000";

    fn tool(name: &str, frame: &str) -> Value {
        json!({ "name": name, "frameId": frame, "description": format!("does {name}"),
                "inputSchema": { "type": "object", "properties": {} },
                "annotations": { "readOnly": true, "untrustedContent": false,
                                 "consequential": true, "debugging": false } })
    }

    fn mirror(named: &[&str]) -> Mirror {
        Mirror::new(named.iter().map(|o| Scope::origin(o).unwrap()).collect())
    }

    #[test]
    fn follows_added_removed_navigated_and_closed() {
        let mut m = mirror(&[WALLET]);
        m.frame_at("s1", "f1", WALLET, "http://localhost:8080/?x=1");
        assert!(m.added(
            "s1",
            &json!({ "tools": [tool("a", "f1"), tool("b", "f1")] })
        ));
        let listed = m.list();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].mcp_name, "localhost_8080.a");
        assert_eq!(
            listed[0].description(),
            "From the page at http://localhost:8080: does a"
        );
        assert_eq!(listed[0].title(), None);
        assert_eq!(
            listed[0].tool.hints,
            Hints {
                read_only: Some(true),
                untrusted_content: Some(false),
                consequential: Some(true),
                debugging: Some(false)
            }
        );
        assert!(m.removed(
            "s1",
            &json!({ "tools": [{ "name": "a", "frameId": "f1" }] })
        ));
        assert!(!m.removed(
            "s1",
            &json!({ "tools": [{ "name": "a", "frameId": "f1" }] })
        ));
        assert_eq!(m.resolve("localhost_8080.a"), None);
        assert_eq!(m.resolve("localhost_8080.b").unwrap().frame_id, "f1");
        assert_eq!(m.resolve("b"), None, "no name without its namespace");
        assert!(m.frame_navigated("s1", "f1", WALLET, "http://localhost:8080/"));
        assert!(m.list().is_empty());
        m.added("s1", &json!({ "tools": [tool("c", "f1")] }));
        assert!(m.page_closed("s1"));
        assert!(m.list().is_empty());
    }

    #[test]
    fn only_named_origins_are_mirrored_and_namespaces_are_not_the_pages_to_choose() {
        let mut m = mirror(&[WALLET]);
        // The impostor tab came first and registers the wallet's names, and one that spells
        // the wallet's namespace; a same-site iframe of another origin inside the wallet's page
        // registers too; a frame never seen is not trusted either.
        m.frame_at("imp", "fi", OTHER, "http://localhost:9000/");
        m.added(
            "imp",
            &json!({ "tools": [tool("request_claims", "fi"),
                               tool("localhost_8080.request_claims", "fi")] }),
        );
        m.frame_at("s1", "top", WALLET, "http://localhost:8080/");
        m.frame_at("s1", "child", OTHER, "http://localhost:9000/frame");
        m.added("s1", &json!({ "tools": [tool("request_claims", "child")] }));
        m.added(
            "s1",
            &json!({ "tools": [tool("request_claims", "unseen")] }),
        );
        assert!(m.list().is_empty());
        m.added("s1", &json!({ "tools": [tool("request_claims", "top")] }));
        let names: Vec<String> = m.list().into_iter().map(|l| l.mcp_name).collect();
        assert_eq!(names, ["localhost_8080.request_claims"]);

        // Both named: each origin's tools under its own namespace, marked with its own origin.
        let mut m = mirror(&[OTHER, WALLET]);
        m.frame_at("imp", "fi", OTHER, "http://localhost:9000/");
        m.frame_at("s1", "top", WALLET, "http://localhost:8080/");
        m.added(
            "imp",
            &json!({ "tools": [tool("request_claims", "fi"),
                               tool("localhost_8080.request_claims", "fi")] }),
        );
        m.added("s1", &json!({ "tools": [tool("request_claims", "top")] }));
        let listed = m.list();
        let names: Vec<&str> = listed.iter().map(|l| l.mcp_name.as_str()).collect();
        assert_eq!(
            names,
            [
                "localhost_9000.request_claims",
                "localhost_9000.localhost_8080.request_claims",
                "localhost_8080.request_claims"
            ]
        );
        assert_eq!(
            m.resolve("localhost_8080.request_claims").unwrap().session,
            "s1"
        );
        assert!(
            listed[1]
                .description()
                .starts_with("From the page at http://localhost:9000: ")
        );
    }

    #[test]
    fn a_name_held_by_another_tab_of_the_origin_gets_a_suffix_and_a_re_registration_replaces() {
        let mut m = mirror(&[WALLET]);
        for (s, f) in [("s1", "f1"), ("s2", "f2"), ("s3", "f3")] {
            m.frame_at(s, f, WALLET, "http://localhost:8080/");
        }
        m.added("s1", &json!({ "tools": [tool("request_claims", "f1")] }));
        m.added("s2", &json!({ "tools": [tool("request_claims", "f2")] }));
        m.added("s1", &json!({ "tools": [tool("request_claims", "f1")] }));
        let names: Vec<String> = m.list().into_iter().map(|l| l.mcp_name).collect();
        assert_eq!(
            names,
            [
                "localhost_8080.request_claims",
                "localhost_8080.request_claims.2"
            ]
        );
        assert_eq!(
            m.resolve("localhost_8080.request_claims").unwrap().session,
            "s2"
        );
        // Malformed entries are ignored; a missing schema becomes an empty object schema; the
        // `Hint` spellings are read too; a title is marked like the description.
        assert!(!m.added("s1", &json!({ "tools": [{ "name": 3 }] })));
        m.added(
            "s3",
            &json!({ "tools": [{ "name": "z", "frameId": "f3", "title": "Zed",
                                 "annotations": { "consequentialHint": true } }] }),
        );
        let z = m.resolve("localhost_8080.z").unwrap();
        assert_eq!(
            z.input_schema,
            json!({ "type": "object" }).as_object().unwrap().clone()
        );
        assert_eq!(z.hints.consequential, Some(true));
        assert_eq!(z.hints.read_only, None);
        let listed = m.list();
        assert_eq!(
            listed[2].title().unwrap(),
            "From the page at http://localhost:8080: Zed"
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
