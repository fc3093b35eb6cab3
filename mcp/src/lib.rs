//! `tacit-mcp`: the MCP door. A stdio MCP server that attaches to the person's running Chromium
//! over its DevTools port and mirrors the WebMCP tools of the wallet and of the open sites:
//! `tools/list` is the browser's live registry, `notifications/tools/list_changed` follows
//! `WebMCP.toolsAdded` / `toolsRemoved`, `tools/call` is `WebMCP.invokeTool`, and a refusal
//! comes back with `isError: true` and the refusal's text. The profile never leaves the
//! browser: the door relays calls and answers, and stores nothing.

pub mod browser;
pub mod mirror;
pub mod server;
