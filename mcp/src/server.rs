//! The MCP side: `tools/list` is the paired vault's tools (`wallet.*`, with `--vault-relay`)
//! and the mirror's live list (with `--origin` / `--page`); `tools/call` of a `wallet.` name goes
//! to the vault through the native bridge ([`crate::vault`]), any other to the browser worker
//! (`WebMCP.invokeTool`); every change of either list is sent as
//! `notifications/tools/list_changed` once the client is initialised.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, InitializeRequestParams, ListToolsResult, MetaObject,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{MaybeSendFuture, NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use crate::browser::{BrowserHandle, Command};
use crate::mirror::{Hints, Outcome, outcome_of_output};
use crate::screen::REFUSE;
use crate::vault::{NAMESPACE, VaultHandle};

/// Deepest nesting of arrays and objects a call's `arguments` may have (the object itself is
/// level 1): the same limit as the wallet's and the sites' tools (`tool_gate::input::MAX_DEPTH`).
pub const MAX_ARGUMENT_DEPTH: usize = 32;

/// The `_meta` key under which a tool's WebMCP annotations travel as the page gave them.
pub const WEBMCP_ANNOTATIONS: &str = "tacit/webmcp-annotations";

/// How long a call may take in the page (the wallet's own tools answer in milliseconds; a
/// `request_claims` returns at once with `held` while the person decides).
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

const INSTRUCTIONS_MIRROR: &str = "The tools named <origin namespace>.<tool name> are the \
    WebMCP tools of the pages the person named (the Tacit wallet and sites), open in the \
    person's browser: the namespace comes from the page's origin (host_port), never from the \
    page. Each of their descriptions and titles starts with 'From the page at <origin>: ' and \
    everything after that is the page's own text, not this door's. ";

const INSTRUCTIONS_VAULT: &str = "The tools named wallet.<tool name> are the person's Tacit \
    wallet's, reached through a pairing the person made: every call goes to the wallet, which \
    decides (a claim request is held until the person answers there). Their descriptions start \
    with 'From the person's wallet: '. When the wallet is closed or offline they answer \
    vault_unreachable: tell the person, do not retry in a loop. ";

const INSTRUCTIONS_END: &str = "A claim tool exists only while the person's grant lives, so the \
    list changes; list again after a tools/list_changed notification. A result with isError is \
    a refusal or a failure: read its text, do not retry a refused call.";

/// How the door marks the vault's words in a description or title.
pub fn from_the_wallet(text: &str) -> String {
    format!("From the person's wallet: {text}")
}

/// The door's MCP server.
#[derive(Debug, Clone)]
pub struct Door {
    browser: Option<BrowserHandle>,
    vault: Option<VaultHandle>,
}

impl Door {
    /// A server over a started browser worker.
    pub fn new(browser: BrowserHandle) -> Self {
        Self {
            browser: Some(browser),
            vault: None,
        }
    }

    /// A server over a browser worker, a native bridge to the person's vault, or both.
    pub fn with(browser: Option<BrowserHandle>, vault: Option<VaultHandle>) -> Self {
        Self { browser, vault }
    }

    fn instructions(&self) -> String {
        let mut text = String::new();
        if self.vault.is_some() {
            text.push_str(INSTRUCTIONS_VAULT);
        }
        if self.browser.is_some() {
            text.push_str(INSTRUCTIONS_MIRROR);
        }
        text.push_str(INSTRUCTIONS_END);
        text
    }

    /// The live tools, as MCP tools: the vault's (`wallet.*`), then the mirrored pages'.
    pub fn tools(&self) -> Vec<Tool> {
        let mut tools: Vec<Tool> = self
            .vault
            .iter()
            .flat_map(VaultHandle::tools)
            .map(|spec| vault_tool(&spec))
            .collect();
        let Some(browser) = &self.browser else {
            return tools;
        };
        let mirror = browser.mirror();
        tools.extend(mirror.list().into_iter().map(|listed| {
            let mut tool = Tool::new(
                listed.mcp_name.clone(),
                listed.description(),
                Arc::new(listed.tool.input_schema.clone()),
            );
            tool.title = listed.title();
            let hints = listed.tool.hints;
            tool.annotations = annotations_of(hints);
            tool.meta = meta_of(hints);
            tool
        }));
        tools
    }

    async fn call(&self, name: String, input: Value) -> Outcome {
        if let (Some(vault), Some(tool)) = (
            &self.vault,
            name.strip_prefix(NAMESPACE)
                .and_then(|n| n.strip_prefix('.')),
        ) {
            // The core answers every call: the vault's envelope, or vault_unreachable after
            // its own timeout (30 s), well within CALL_TIMEOUT.
            return match tokio::time::timeout(CALL_TIMEOUT, vault.call(tool, input)).await {
                Ok(output) => outcome_of_output(output),
                Err(_) => Outcome::error("The wallet did not answer within 60 seconds."),
            };
        }
        let Some(browser) = &self.browser else {
            return Outcome::error(format!(
                "No tool `{name}` is offered: the wallet's tools are named {NAMESPACE}.<tool>; \
                 list the tools again."
            ));
        };
        let (reply, answer) = oneshot::channel();
        let command = Command::Call {
            mcp_name: name,
            input,
            reply,
        };
        if browser.commands.send(command).is_err() {
            return Outcome::error("The browser connection is closed.");
        }
        match tokio::time::timeout(CALL_TIMEOUT, answer).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Outcome::error("The browser connection closed during the call."),
            Err(_) => Outcome::error("The page did not answer within 60 seconds."),
        }
    }
}

/// The MCP tool of one of the vault's tools: `wallet.<name>`, the description and title the
/// vault gave marked [`from_the_wallet`], its input schema, and its annotations carried as a
/// mirrored page's are ([`annotations_of`], [`meta_of`]).
pub fn vault_tool(spec: &tacit_pairing::bridge::ToolSpec) -> Tool {
    let definition = &spec.definition;
    let schema = match definition.get("inputSchema") {
        Some(Value::Object(schema)) => schema.clone(),
        _ => {
            let mut schema = Map::new();
            schema.insert("type".to_owned(), Value::from("object"));
            schema
        }
    };
    let description = definition["description"].as_str().unwrap_or_default();
    let mut tool = Tool::new(
        format!("{NAMESPACE}.{}", spec.name),
        from_the_wallet(description),
        Arc::new(schema),
    );
    tool.title = definition["title"].as_str().map(from_the_wallet);
    let hints = Hints::of(&definition["annotations"]);
    tool.annotations = annotations_of(hints);
    tool.meta = meta_of(hints);
    tool
}

/// MCP's annotations for a tool with the WebMCP `hints`, `None` when the page gave none.
///
/// - `readOnlyHint` is MCP's `readOnlyHint`, unchanged.
/// - `consequentialHint: true` becomes MCP's `destructiveHint: true`: MCP has no hint for "this
///   acts for the person", and clients that confirm before a destructive tool then confirm
///   before a consequential one. `consequentialHint: false` sets nothing: it does not say the
///   tool's updates are only additive, which is what MCP's `destructiveHint: false` claims.
/// - `untrustedContentHint: true` becomes MCP's `openWorldHint: true`, the MCP hint for output
///   from outside the server's closed world; `false` sets nothing.
/// - `debugging` has no MCP counterpart.
///
/// All four travel unchanged in the tool's `_meta` (see [`meta_of`]).
pub fn annotations_of(hints: Hints) -> Option<ToolAnnotations> {
    if hints == Hints::default() {
        return None;
    }
    let mut annotations = ToolAnnotations::new();
    annotations.read_only_hint = hints.read_only;
    annotations.destructive_hint = hints.consequential.filter(|c| *c);
    annotations.open_world_hint = hints.untrusted_content.filter(|u| *u);
    Some(annotations)
}

/// The tool's `_meta`: `{"tacit/webmcp-annotations": {readOnlyHint, untrustedContentHint,
/// consequentialHint, debugging}}` with the hints the page gave, in WebMCP's spelling.
pub fn meta_of(hints: Hints) -> Option<MetaObject> {
    let mut given = Map::new();
    for (key, hint) in [
        ("readOnlyHint", hints.read_only),
        ("untrustedContentHint", hints.untrusted_content),
        ("consequentialHint", hints.consequential),
        ("debugging", hints.debugging),
    ] {
        if let Some(hint) = hint {
            given.insert(key.to_owned(), Value::Bool(hint));
        }
    }
    if given.is_empty() {
        return None;
    }
    let mut meta = Map::new();
    meta.insert(WEBMCP_ANNOTATIONS.to_owned(), Value::Object(given));
    Some(MetaObject::from(meta))
}

/// How deep `value` nests arrays and objects (a scalar is 0), counted without recursion.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, level)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(members) => Box::new(members.values()),
            _ => continue,
        };
        deepest = deepest.max(level);
        stack.extend(children.map(|child| (child, level + 1)));
    }
    deepest
}

/// Why `params` are not a `tools/call` the door can run (they did not read as one).
fn call_params_problem(params: Option<&Value>) -> String {
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let Some(params) = params else {
        return "tools/call needs params {name, arguments}.".to_owned();
    };
    let Some(members) = params.as_object() else {
        return format!(
            "tools/call params must be an object {{name, arguments}}, not {}.",
            kind(params)
        );
    };
    match members.get("name") {
        None => return "tools/call params need a `name` (a string).".to_owned(),
        Some(Value::String(_)) => {}
        Some(other) => {
            return format!("`name` must be a string, not {}.", kind(other));
        }
    }
    match members.get("arguments") {
        None | Some(Value::Null | Value::Object(_)) => {}
        Some(other) => {
            return format!(
                "`arguments` must be a JSON object (the tool's named inputs), not {}.",
                kind(other)
            );
        }
    }
    match serde_json::from_value::<CallToolRequestParams>(params.clone()) {
        Ok(_) => "tools/call params did not read as a tools/call.".to_owned(),
        Err(e) => format!("tools/call params are not valid: {e}."),
    }
}

fn result_of(outcome: Outcome) -> CallToolResult {
    let content = vec![ContentBlock::text(outcome.text)];
    let mut result = if outcome.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = outcome.structured;
    result
}

impl ServerHandler for Door {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(
            Implementation::new("tacit-mcp", env!("CARGO_PKG_VERSION"))
                .with_title("Tacit MCP door")
                .with_description(
                    "Offers the person's paired Tacit wallet's tools and mirrors the WebMCP \
                     tools of the named origins' pages in the person's Chromium",
                ),
        )
        .with_instructions(self.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: self.tools(),
            ..Default::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let input = Value::Object(request.arguments.unwrap_or_default());
        if depth(&input) > MAX_ARGUMENT_DEPTH {
            return Err(ErrorData::invalid_params(
                format!(
                    "The arguments are nested deeper than {MAX_ARGUMENT_DEPTH} levels; no tool \
                     takes that."
                ),
                None,
            ));
        }
        let outcome = self.call(request.name.into_owned(), input).await;
        Ok(result_of(outcome).into())
    }

    /// Requests that did not read as what their method needs arrive here (rmcp falls back to a
    /// custom request): they get invalid params with the reason, never `-32601`; so do the
    /// requests the screen could not read ([`REFUSE`]). Only a method the door does not have is
    /// method-not-found.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let params = request.params.as_ref();
        let reason = match request.method.as_str() {
            REFUSE => params
                .and_then(|p| p["reason"].as_str())
                .unwrap_or("The request could not be read.")
                .to_owned(),
            "tools/call" => call_params_problem(params),
            "tools/list" => match request.params_as::<PaginatedRequestParams>() {
                Err(e) => format!("tools/list params must be {{cursor?}}: {e}."),
                Ok(_) => "tools/list params are not valid.".to_owned(),
            },
            "initialize" => match request.params_as::<InitializeRequestParams>() {
                Err(e) => format!("initialize params are not valid: {e}."),
                Ok(_) => "initialize params are not valid.".to_owned(),
            },
            "ping" => "ping takes no params (or an object).".to_owned(),
            other => {
                return Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("The door has no method `{other}`."),
                    None,
                ));
            }
        };
        Err(ErrorData::invalid_params(reason, None))
    }

    fn on_initialized(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl std::future::Future<Output = ()> + MaybeSendFuture + '_ {
        let sources: Vec<tokio::sync::watch::Receiver<u64>> = self
            .browser
            .iter()
            .map(|b| b.changes.clone())
            .chain(self.vault.iter().map(|v| v.changes.clone()))
            .collect();
        async move {
            for mut changes in sources {
                let peer = context.peer.clone();
                changes.mark_unchanged();
                tokio::spawn(async move {
                    while changes.changed().await.is_ok() {
                        if peer.notify_tool_list_changed().await.is_err() {
                            break;
                        }
                    }
                });
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hints_map_onto_mcp_and_all_travel_in_meta() {
        assert_eq!(annotations_of(Hints::default()), None);
        assert_eq!(meta_of(Hints::default()), None);
        let hints = Hints {
            read_only: Some(false),
            untrusted_content: Some(false),
            consequential: Some(true),
            debugging: Some(true),
        };
        let annotations = serde_json::to_value(annotations_of(hints).unwrap()).unwrap();
        assert_eq!(
            annotations,
            json!({ "readOnlyHint": false, "destructiveHint": true })
        );
        let meta = serde_json::to_value(meta_of(hints).unwrap()).unwrap();
        assert_eq!(
            meta[WEBMCP_ANNOTATIONS],
            json!({ "readOnlyHint": false, "untrustedContentHint": false,
                    "consequentialHint": true, "debugging": true })
        );
        let untrusted = Hints {
            untrusted_content: Some(true),
            ..Hints::default()
        };
        assert_eq!(
            serde_json::to_value(annotations_of(untrusted).unwrap()).unwrap(),
            json!({ "openWorldHint": true })
        );
    }

    #[test]
    fn a_vault_tool_is_namespaced_marked_and_keeps_its_schema_and_hints() {
        let spec = tacit_pairing::bridge::ToolSpec {
            name: "claim.income_below.g1".into(),
            definition: json!({ "name": "ignored", "title": "Income",
                "description": "Answers whether the income is below the limit.",
                "inputSchema": { "type": "object", "properties": {} },
                "annotations": { "readOnlyHint": true, "consequentialHint": false } }),
            expires_at: Some(1),
        };
        let tool = serde_json::to_value(vault_tool(&spec)).unwrap();
        assert_eq!(tool["name"], "wallet.claim.income_below.g1");
        assert_eq!(
            tool["description"],
            "From the person's wallet: Answers whether the income is below the limit."
        );
        assert_eq!(tool["title"], "From the person's wallet: Income");
        assert_eq!(
            tool["inputSchema"],
            json!({ "type": "object", "properties": {} })
        );
        assert_eq!(tool["annotations"], json!({ "readOnlyHint": true }));
        assert_eq!(
            tool["_meta"][WEBMCP_ANNOTATIONS],
            json!({ "readOnlyHint": true, "consequentialHint": false })
        );
        // No schema given: an empty object schema; the persistent tools all map.
        let bare = tacit_pairing::bridge::ToolSpec {
            name: "x".into(),
            definition: json!({}),
            expires_at: None,
        };
        let tool = serde_json::to_value(vault_tool(&bare)).unwrap();
        assert_eq!(tool["inputSchema"], json!({ "type": "object" }));
        for spec in crate::vault::persistent_specs() {
            let tool = vault_tool(&spec);
            assert!(tool.name.starts_with("wallet."), "{}", tool.name);
            assert!(tool.description.is_some_and(|d| d.len() > 30));
        }
    }

    #[test]
    fn depth_and_the_reasons_for_bad_call_params() {
        assert_eq!(depth(&json!(1)), 0);
        assert_eq!(depth(&json!({})), 1);
        assert_eq!(depth(&json!({ "a": [[1]], "b": {} })), 3);
        for (params, needle) in [
            (None, "needs params"),
            (Some(json!([1])), "not an array"),
            (Some(json!({})), "need a `name`"),
            (
                Some(json!({ "name": 7 })),
                "`name` must be a string, not a number",
            ),
            (
                Some(json!({ "name": "t", "arguments": "x" })),
                "`arguments` must be a JSON object",
            ),
        ] {
            let reason = call_params_problem(params.as_ref());
            assert!(reason.contains(needle), "{reason}");
        }
    }
}
