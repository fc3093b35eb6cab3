//! The agent side of WebMCP, through the DevTools `WebMCP` domain.
//!
//! ## What Chromium 156.0.8078.108 sends (measured here, pinned by `tests/harness.rs`)
//! Every event arrives on the page's flattened session.
//! - `WebMCP.enable` → `{}`. Tools already registered are replayed at once in one `toolsAdded`.
//! - `WebMCP.toolsAdded` → `{tools: [Tool]}`, one event per `registerTool`, where
//!   `Tool = {name, description, frameId, inputSchema?, annotations?, stackTrace}`:
//!   `inputSchema` is a parsed JSON object (absent if the page gave none); `annotations` is
//!   `{readOnly, untrustedContent, consequential, debugging}` (booleans, *without* the `Hint`
//!   suffix, all four present, and only if the page gave annotations); `title` is not sent;
//!   `stackTrace` is a `Runtime.StackTrace` of the `registerTool` call.
//! - `WebMCP.toolsRemoved` → `{tools: [{name, frameId}]}` when a registration's signal aborts.
//!   **Navigation and reload remove tools without any `toolsRemoved`**; the page re-registers
//!   them with fresh `toolsAdded`. [`Page::navigate`] and [`Page::reload`] therefore forget the
//!   page's tools themselves.
//! - `WebMCP.invokeTool {frameId, toolName, input}` → `{invocationId}` (a hex string). `input`
//!   must be a JSON **object**: a JSON string, array, number or `null` is rejected as a command
//!   error `Invalid parameters ("Failed to deserialize params.input - CBOR: map start
//!   expected ...")`; a missing `input` is `mandatory field missing`. An unknown frame is
//!   `No frame for given id found`; an unregistered or withdrawn tool is `Tool not found`
//!   (a command error: no invocation is created and the page's code does not run).
//! - `WebMCP.toolInvoked` → `{invocationId, toolName, frameId, input}` where `input` is the
//!   JSON **text** of the input (a string), unlike `invokeTool`'s object.
//! - `WebMCP.toolResponded` → `{invocationId, status, output?, errorText?, exception?}`:
//!   - `status: "Completed"`, `output` = the result after `JSON.stringify`, **parsed**: an object
//!     stays an object, a returned string is a JSON string, a `Map` becomes `{}`, and
//!     `undefined` becomes the *string* `"undefined"`. No `errorText`/`exception`.
//!   - `status: "Error"`, `errorText: ""`, `exception` = a `Runtime.RemoteObject`
//!     `{type: "object", subtype: "error", className: "Error", description, objectId}` whose
//!     `description` is the thrown message **and stack**. (The page-side `executeTool` sees a
//!     bare `UnknownError`; a DevTools agent sees everything. Tools must never throw.)
//!   - `status: "Canceled"`, `errorText: ""` right after `WebMCP.cancelInvocation
//!     {invocationId}` (→ `{}`); the page's `execute` still runs to its end.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::browser::{InputAs, Page};
use crate::cdp::Event;
use crate::error::{Error, Result};

/// How long a tool call may take before [`Page::invoke_tool`] gives up.
pub const INVOKE_TIMEOUT: Duration = Duration::from_secs(30);

/// A tool as announced by `WebMCP.toolsAdded`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// The tool's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The frame that registered it (what `WebMCP.invokeTool` needs).
    pub frame_id: String,
    /// Its input schema, parsed.
    pub input_schema: Value,
    /// The whole tool object as Chromium sent it.
    pub raw: Value,
}

/// How a call ended, as `WebMCP.toolResponded` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolStatus {
    /// The tool returned a value.
    Completed,
    /// The call was cancelled.
    Canceled,
    /// The tool threw or could not be run.
    Error,
    /// A status this harness does not know yet.
    Other(String),
}

/// The answer to one `WebMCP.invokeTool`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResponse {
    /// How the call ended.
    pub status: ToolStatus,
    /// The tool's returned value, parsed (`Null` if none).
    pub output: Value,
    /// The exception, if the call failed: a `Runtime.RemoteObject`.
    pub exception: Option<Value>,
    /// `errorText`, if Chromium sent one.
    pub error_text: Option<String>,
    /// The whole `toolResponded` params.
    pub raw: Value,
}

impl ToolResponse {
    /// The exception's `description` (message and stack), if there is one.
    pub fn exception_text(&self) -> Option<String> {
        let exception = self.exception.as_ref()?;
        let text = exception.get("description").and_then(Value::as_str);
        Some(text.map_or_else(|| exception.to_string(), str::to_owned))
    }

    /// The output if the call completed, else an error carrying status and exception.
    pub fn completed(self) -> Result<Value> {
        match self.status {
            ToolStatus::Completed => Ok(self.output),
            _ => Err(Error::Js(format!(
                "tool call did not complete: {}",
                self.raw
            ))),
        }
    }
}

/// Per-page WebMCP bookkeeping: the live tools and a log of every WebMCP event seen.
#[derive(Debug, Default)]
pub(crate) struct WebMcpState {
    enabled: bool,
    tools: BTreeMap<(String, String), ToolInfo>,
    log: Vec<Event>,
}

impl Page<'_> {
    /// `WebMCP.enable`; from now on `toolsAdded`/`toolsRemoved` are tracked for this page.
    pub fn enable_webmcp(&mut self) -> Result<()> {
        self.send("WebMCP.enable", json!({}))?;
        self.webmcp.enabled = true;
        self.sync_webmcp()
    }

    /// Fails with a clear message unless the current document has `document.modelContext`.
    pub fn require_webmcp(&self) -> Result<()> {
        match self.eval("typeof document.modelContext")? {
            Value::String(kind) if kind == "object" => Ok(()),
            other => Err(Error::NoWebMcp(format!(
                "document.modelContext is {other} on this page: launch Chromium with \
                 --enable-blink-features=WebMCP and serve the page from a secure origin \
                 (127.0.0.1, localhost)"
            ))),
        }
    }

    /// Applies what is queued, then forgets every tool: navigation and reload drop the page's
    /// tools without sending `toolsRemoved`.
    pub(crate) fn forget_tools(&mut self) -> Result<()> {
        self.sync_webmcp()?;
        self.webmcp.tools.clear();
        Ok(())
    }

    /// Applies the queued WebMCP events of this page to the tool list.
    fn sync_webmcp(&mut self) -> Result<()> {
        for event in self.take_events("WebMCP.")? {
            self.apply_webmcp(event);
        }
        Ok(())
    }

    fn apply_webmcp(&mut self, event: Event) {
        match event.method.as_str() {
            "WebMCP.toolsAdded" => {
                for tool in tools_of(&event.params) {
                    if let Some(info) = tool_info(tool) {
                        self.webmcp
                            .tools
                            .insert((info.frame_id.clone(), info.name.clone()), info);
                    }
                }
            }
            "WebMCP.toolsRemoved" => {
                for tool in tools_of(&event.params) {
                    if let Some(info) = tool_info(tool) {
                        self.webmcp.tools.remove(&(info.frame_id, info.name));
                    }
                }
            }
            _ => {}
        }
        self.webmcp.log.push(event);
    }

    /// Every WebMCP event this page has received so far, in order.
    pub fn webmcp_log(&mut self) -> Result<&[Event]> {
        self.sync_webmcp()?;
        Ok(&self.webmcp.log)
    }

    /// The tools currently registered in this page (all frames), as the agent sees them.
    pub fn tools(&mut self) -> Result<Vec<ToolInfo>> {
        self.sync_webmcp()?;
        Ok(self.webmcp.tools.values().cloned().collect())
    }

    /// Waits until a tool `name` is registered; returns it.
    pub fn wait_tool(&mut self, name: &str, timeout: Duration) -> Result<ToolInfo> {
        let found = self.wait_tools(timeout, |tools| {
            tools.iter().find(|t| t.name == name).cloned()
        })?;
        found.ok_or_else(|| Error::Timeout {
            what: format!("tool `{name}` to be added"),
            after: timeout,
        })
    }

    /// Waits until no tool `name` is registered.
    pub fn wait_tool_gone(&mut self, name: &str, timeout: Duration) -> Result<()> {
        let gone = self.wait_tools(timeout, |tools| {
            (!tools.iter().any(|t| t.name == name)).then_some(())
        })?;
        gone.ok_or_else(|| Error::Timeout {
            what: format!("tool `{name}` to be removed"),
            after: timeout,
        })
    }

    fn wait_tools<T>(
        &mut self,
        timeout: Duration,
        mut check: impl FnMut(&[ToolInfo]) -> Option<T>,
    ) -> Result<Option<T>> {
        if !self.webmcp.enabled {
            self.enable_webmcp()?;
        }
        let deadline = Instant::now() + timeout;
        loop {
            let tools = self.tools()?;
            if let Some(found) = check(&tools) {
                return Ok(Some(found));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            self.pump(Duration::from_millis(20))?;
        }
    }

    /// `WebMCP.invokeTool {frameId, toolName, input}`, then waits for the `toolResponded` with
    /// the returned `invocationId`. `input` must be a JSON object (see the module docs); a
    /// withdrawn tool is an [`Error::Cdp`] with message `Tool not found`.
    pub fn invoke_tool(
        &mut self,
        frame_id: &str,
        name: &str,
        input: Value,
    ) -> Result<ToolResponse> {
        let invocation = self.begin_invoke(frame_id, name, input)?;
        self.await_response(&invocation, INVOKE_TIMEOUT)
    }

    /// Starts a call and returns its `invocationId` without waiting for the answer; pair with
    /// [`Page::await_response`] (and [`Page::cancel_invocation`]) to act while a call runs.
    pub fn begin_invoke(&mut self, frame_id: &str, name: &str, input: Value) -> Result<String> {
        let params = json!({ "frameId": frame_id, "toolName": name, "input": input });
        let invoked = self.send("WebMCP.invokeTool", params)?;
        invoked
            .get("invocationId")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| {
                Error::Protocol(format!("WebMCP.invokeTool without invocationId: {invoked}"))
            })
    }

    /// Waits for the `toolResponded` of `invocation`.
    pub fn await_response(&mut self, invocation: &str, timeout: Duration) -> Result<ToolResponse> {
        let event = self.wait_event(
            "WebMCP.toolResponded",
            |params| params.get("invocationId").and_then(Value::as_str) == Some(invocation),
            timeout,
        )?;
        // Keep the log in wire order: `toolInvoked` (still queued) came before this answer.
        self.sync_webmcp()?;
        let response = tool_response(&event.params);
        self.webmcp.log.push(event);
        Ok(response)
    }

    /// `WebMCP.cancelInvocation {invocationId}`. The agent then gets `status: Canceled`, but the
    /// page's `execute` keeps running.
    pub fn cancel_invocation(&mut self, invocation: &str) -> Result<()> {
        self.send(
            "WebMCP.cancelInvocation",
            json!({ "invocationId": invocation }),
        )?;
        Ok(())
    }

    /// Calls tool `name` in whichever frame registered it (the main frame if none is known).
    pub fn call_tool(&mut self, name: &str, input: Value) -> Result<ToolResponse> {
        let frame = self
            .tools()?
            .into_iter()
            .find(|t| t.name == name)
            .map_or_else(|| self.frame_id().to_owned(), |t| t.frame_id);
        self.invoke_tool(&frame, name, input)
    }
}

fn tools_of(params: &Value) -> impl Iterator<Item = &Value> {
    params
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn tool_info(tool: &Value) -> Option<ToolInfo> {
    Some(ToolInfo {
        name: tool.get("name")?.as_str()?.to_owned(),
        description: tool
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        frame_id: tool.get("frameId")?.as_str()?.to_owned(),
        input_schema: tool.get("inputSchema").cloned().unwrap_or(Value::Null),
        raw: tool.clone(),
    })
}

fn tool_response(params: &Value) -> ToolResponse {
    let status = match params.get("status").and_then(Value::as_str) {
        Some("Completed") => ToolStatus::Completed,
        Some("Canceled") => ToolStatus::Canceled,
        Some("Error") => ToolStatus::Error,
        other => ToolStatus::Other(other.unwrap_or("(none)").to_owned()),
    };
    ToolResponse {
        status,
        output: params.get("output").cloned().unwrap_or(Value::Null),
        exception: params.get("exception").cloned(),
        error_text: params
            .get("errorText")
            .and_then(Value::as_str)
            .map(str::to_owned),
        raw: params.clone(),
    }
}

/// The agent inside the page: `document.modelContext.getTools()` and `executeTool()`, whoever
/// provides them (the browser, or a polyfill the page loaded). Unlike the DevTools `WebMCP`
/// domain above, this sees a polyfill's registry.
impl Page<'_> {
    /// `getTools()` in the page: each tool's `{name, annotations}` (annotations `null` if none).
    pub fn page_tools(&self) -> Result<Vec<Value>> {
        let js = "(async () => (await document.modelContext.getTools()).map(t => \
                  ({ name: t.name, annotations: t.annotations ?? null })))()";
        match self.eval(js)? {
            Value::Array(tools) => Ok(tools),
            other => Err(Error::Protocol(format!("getTools() gave {other}"))),
        }
    }

    /// The names `getTools()` lists in the page, sorted.
    pub fn page_tool_names(&self) -> Result<Vec<String>> {
        let mut names: Vec<String> = self
            .page_tools()?
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect();
        names.sort();
        Ok(names)
    }

    /// Waits until `getTools()` in the page lists `name` (`present`) or no longer does.
    pub fn wait_page_tool(&self, name: &str, present: bool, timeout: Duration) -> Result<()> {
        let js = format!(
            "(async () => (await document.modelContext.getTools()).some(t => t.name === {name:?}) \
             === {present})()"
        );
        self.wait_for(&js, timeout).map(|_| ())
    }

    /// Keeps the tool object `getTools()` lists as `name` in the page as `window.__keptTools[slot]`
    /// (an agent holding on to it).
    pub fn keep_page_tool(&self, name: &str, slot: &str) -> Result<()> {
        let js = format!(
            "(async () => {{ const t = (await document.modelContext.getTools()).find(t => \
             t.name === {name:?}); if (!t) return false; window.__keptTools = \
             window.__keptTools || {{}}; window.__keptTools[{slot:?}] = t; return true; }})()"
        );
        match self.eval(&js)? {
            Value::Bool(true) => Ok(()),
            _ => Err(Error::Protocol(format!("getTools() does not list {name}"))),
        }
    }

    /// `executeTool(tool, input)` in the page with the tool object `getTools()` lists as `name`
    /// now. The answer (JSON text) parsed, or [`Error::Js`] with what the promise rejected with.
    pub fn page_execute(&self, name: &str, input: &Value, how: InputAs) -> Result<Value> {
        let find = format!(
            "(await document.modelContext.getTools()).find(t => t.name === {name:?}) \
             ?? {{ name: {name:?}, description: '', window, origin: location.origin }}"
        );
        self.execute_in_page(&find, input, how)
    }

    /// As [`Page::page_execute`], with the tool object kept by [`Page::keep_page_tool`].
    pub fn execute_kept(&self, slot: &str, input: &Value, how: InputAs) -> Result<Value> {
        self.execute_in_page(&format!("window.__keptTools[{slot:?}]"), input, how)
    }

    fn execute_in_page(&self, tool: &str, input: &Value, how: InputAs) -> Result<Value> {
        let json = input.to_string();
        let argument = match how {
            InputAs::Object => json,
            InputAs::Text => Value::String(json).to_string(),
        };
        let js = format!(
            "(async () => {{ const tool = {tool}; try {{ return {{ resolved: await \
             document.modelContext.executeTool(tool, {argument}) }}; }} catch (e) {{ \
             return {{ threw: String(e && e.name) + ': ' + String(e && e.message) }}; }} }})()"
        );
        let out = self.eval(&js)?;
        if let Some(threw) = out.get("threw").and_then(Value::as_str) {
            return Err(Error::Js(threw.to_owned()));
        }
        match out.get("resolved") {
            Some(Value::String(text)) => serde_json::from_str(text)
                .map_err(|e| Error::Protocol(format!("executeTool gave {text:?}: {e}"))),
            other => Err(Error::Protocol(format!(
                "executeTool resolved to something other than JSON text: {other:?}"
            ))),
        }
    }
}
