//! `tacit-mcp`: the MCP door. A stdio MCP server that attaches to the person's running Chromium
//! over its DevTools port and mirrors the WebMCP tools of the pages of the origins the person
//! named (`--origin`, repeatable; with none it refuses to start): `tools/list` is the browser's
//! live registry of those pages, `notifications/tools/list_changed` follows
//! `WebMCP.toolsAdded` / `toolsRemoved`, `tools/call` is `WebMCP.invokeTool`, and a refusal
//! comes back with `isError: true` and the refusal's text. The profile never leaves the
//! browser: the door relays calls and answers, and stores nothing.
//!
//! What it promises:
//! - **Every request gets an answer.** A request the door cannot read (a lone UTF-16 surrogate
//!   in a string, nesting past 128 levels, a line over 4 MiB, `arguments` that are not an
//!   object) is answered `-32602` (invalid params) with the reason, under its `id`
//!   ([`screen`], [`server::Door`]); only a method the door does not have is `-32601`.
//! - **No page can pass for another.** Only frames of named origins are mirrored, judged by the
//!   origin the browser computed for the frame; a tool's MCP name is
//!   `<namespace>.<WebMCP name>` with the namespace derived from that origin's host and port
//!   ([`origin::namespace`]: `localhost_8080.request_claims`), which no page chooses; and a
//!   page's description and title reach the client after the door's
//!   `From the page at <origin>: `, so page text never stands where the door's words do.
//! - **Every WebMCP annotation is carried.** `readOnlyHint` → MCP `readOnlyHint`;
//!   `consequentialHint: true` → MCP `destructiveHint: true` (MCP has no "acts for the person"
//!   hint; clients that confirm destructive tools then confirm consequential ones, and `false`
//!   sets nothing, since MCP's `destructiveHint: false` would claim more); `untrustedContentHint:
//!   true` → MCP `openWorldHint: true`; `debugging` has no MCP counterpart. All four travel
//!   unchanged in the tool's `_meta` under `tacit/webmcp-annotations`
//!   ([`server::annotations_of`], [`server::meta_of`]).
//! - `serverInfo` is `tacit-mcp` and this crate's version.
//!
//! What it refuses to do: mirror a page nobody named, let a page pick a tool's name outside its
//! own namespace, or read page content beyond the tool registry.

pub mod browser;
pub mod mirror;
pub mod origin;
pub mod screen;
pub mod server;
