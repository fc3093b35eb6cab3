//! `tacit-mcp`: the MCP door, a stdio MCP server, with two sources of tools (either or both):
//!
//! - **The person's vault, paired directly** (`--vault-relay http://host:port`, issue 29): the
//!   door is a native bridge ([`vault`]). It prints on stderr a code to type into the wallet's
//!   Settings → Pair a bridge, pairs through `tacit-relay` by SPAKE2, keeps the pairing in a
//!   0600 file (`--pairing-file`) so a restart reconnects without pairing again, and offers the
//!   wallet's tools under the fixed namespace `wallet.` (`wallet.request_claims`,
//!   `wallet.claim.<grant>`): the persistent tools always, a claim tool while the vault lists
//!   it. `notifications/tools/list_changed` follows every change (a grant, a revoke, an expiry,
//!   the vault going); every call is forwarded sealed to the vault, which decides; with no
//!   session, or no answer in 30 s, the answer is `vault_unreachable` (an `isError` result). No
//!   browser and no DevTools port are needed for these.
//! - **Pages' WebMCP tools, mirrored**: the door attaches to the person's running Chromium over
//!   its DevTools port and mirrors the WebMCP tools of the pages of the origins the person named
//!   (`--origin`, repeatable; with neither that nor `--vault-relay` it refuses to start):
//!   `tools/list` is the browser's live registry of those pages,
//!   `notifications/tools/list_changed` follows `WebMCP.toolsAdded` / `toolsRemoved`,
//!   `tools/call` is `WebMCP.invokeTool`.
//!
//! A refusal comes back with `isError: true` and the refusal's text. The profile never leaves
//! the person's wallet: the door relays calls and answers, and stores only the pairing.
//!
//! What it promises:
//! - **Every request gets an answer.** A request the door cannot read (a lone UTF-16 surrogate
//!   in a string, nesting past 128 levels, a line over 4 MiB, `arguments` that are not an
//!   object) is answered `-32602` (invalid params) with the reason, under its `id`
//!   ([`screen`], [`server::Door`]); only a method the door does not have is `-32601`.
//! - **No page can pass for another.** Only frames of named origins are mirrored, judged by the
//!   origin the browser computed for the frame; the vault's tools are `wallet.<name>`, a
//!   namespace no origin has (an origin's always ends in `_<port>`); a page tool's MCP name is
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
//! - **Nothing of the person's on its output streams but MCP answers**: stderr carries the
//!   pairing code, the fingerprint and whether the wallet is connected, never a call's input or
//!   answer.
//!
//! What it refuses to do: mirror a page nobody named, let a page pick a tool's name outside its
//! own namespace, read page content beyond the tool registry, or reach a relay over `https://`
//! (this build has no TLS: use an `http://` relay on the machine or through a tunnel).

pub mod browser;
pub mod mirror;
pub mod origin;
pub mod screen;
pub mod server;
pub mod vault;
