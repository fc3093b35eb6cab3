//! The MCP side: `tools/list` is the mirror's live list, `tools/call` goes to the browser worker
//! (`WebMCP.invokeTool`), and every change of the list is sent as
//! `notifications/tools/list_changed` once the client is initialised.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{MaybeSendFuture, NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::sync::oneshot;

use crate::browser::{BrowserHandle, Command};
use crate::mirror::Outcome;

/// How long a call may take in the page (the wallet's own tools answer in milliseconds; a
/// `request_claims` returns at once with `held` while the person decides).
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

const INSTRUCTIONS: &str = "These tools are the WebMCP tools of the pages open in the person's \
    browser (the Tacit wallet and sites), mirrored as they are: a claim tool exists only while \
    the person's grant lives, so the list changes; list again after a tools/list_changed \
    notification. A result with isError is a refusal or a failure: read its text, do not retry \
    a refused call.";

/// The door's MCP server.
#[derive(Debug, Clone)]
pub struct Door {
    browser: BrowserHandle,
}

impl Door {
    /// A server over a started browser worker.
    pub fn new(browser: BrowserHandle) -> Self {
        Self { browser }
    }

    /// The live tools, as MCP tools.
    pub fn tools(&self) -> Vec<Tool> {
        let mirror = self.browser.mirror();
        mirror
            .list()
            .into_iter()
            .map(|listed| {
                let mut tool = Tool::new(
                    listed.mcp_name.clone(),
                    listed.description(),
                    Arc::new(listed.tool.input_schema.clone()),
                );
                if let Some(read_only) = listed.tool.read_only {
                    let mut annotations = ToolAnnotations::new();
                    annotations.read_only_hint = Some(read_only);
                    tool.annotations = Some(annotations);
                }
                tool
            })
            .collect()
    }

    async fn call(&self, name: String, input: serde_json::Value) -> Outcome {
        let (reply, answer) = oneshot::channel();
        let command = Command::Call {
            mcp_name: name,
            input,
            reply,
        };
        if self.browser.commands.send(command).is_err() {
            return Outcome::error("The browser connection is closed.");
        }
        match tokio::time::timeout(CALL_TIMEOUT, answer).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Outcome::error("The browser connection closed during the call."),
            Err(_) => Outcome::error("The page did not answer within 60 seconds."),
        }
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
        .with_instructions(INSTRUCTIONS)
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
        let input = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let outcome = self.call(request.name.into_owned(), input).await;
        Ok(result_of(outcome).into())
    }

    fn on_initialized(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl std::future::Future<Output = ()> + MaybeSendFuture + '_ {
        let peer = context.peer.clone();
        let mut changes = self.browser.changes.clone();
        async move {
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
