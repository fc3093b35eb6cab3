//! The browser worker: one thread that owns the DevTools connection to the person's Chromium,
//! attaches to every page (now and later), enables `WebMCP` on each, keeps the [`Mirror`] up to
//! date from `toolsAdded` / `toolsRemoved` / navigations / closed tabs, and runs calls with
//! `WebMCP.invokeTool`, answering each when its `toolResponded` arrives. It stores nothing but
//! the live tool list and the calls in flight.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use serde_json::{Value, json};
use tacit_devtools::{Cdp, Error, Event};
use tokio::sync::{oneshot, watch};

use crate::mirror::{Mirror, Outcome, outcome_of};
use crate::origin::{Scope, origin_of_url};

/// How long the worker waits for browser messages before it looks at its commands again.
const POLL: Duration = Duration::from_millis(5);

/// A request to the worker.
#[derive(Debug)]
pub enum Command {
    /// Call the tool listed as `mcp_name` with `input` (a JSON object).
    Call {
        /// The MCP name.
        mcp_name: String,
        /// The arguments.
        input: Value,
        /// Where the outcome goes.
        reply: oneshot::Sender<Outcome>,
    },
}

/// The handle the MCP side keeps.
#[derive(Debug, Clone)]
pub struct BrowserHandle {
    /// The mirrored tools, shared with the worker.
    pub mirror: Arc<Mutex<Mirror>>,
    /// Commands to the worker.
    pub commands: mpsc::Sender<Command>,
    /// Bumped every time the tool list changes.
    pub changes: watch::Receiver<u64>,
    /// Set (with the reason) when the worker stops: the browser closed or the socket failed.
    pub stopped: watch::Receiver<Option<String>>,
}

impl BrowserHandle {
    /// Locks the mirror (a poisoned lock still holds a consistent list: every update is one
    /// call that cannot panic half-way).
    pub fn mirror(&self) -> std::sync::MutexGuard<'_, Mirror> {
        self.mirror.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Connects to the Chromium whose DevTools listen on `127.0.0.1:<port>` and starts the worker.
/// Only frames that one of `scopes` admits are mirrored (none if `scopes` is empty).
pub fn start(port: u16, scopes: Vec<Scope>) -> Result<BrowserHandle, Error> {
    let ws_url = tacit_devtools::browser_ws_url(port)?;
    let cdp = Cdp::connect(&ws_url)?;
    let mirror = Arc::new(Mutex::new(Mirror::new(scopes)));
    let (commands, inbox) = mpsc::channel();
    let (changed, changes) = watch::channel(0u64);
    let (stop, stopped) = watch::channel(None);
    let mut worker = Worker {
        cdp,
        mirror: mirror.clone(),
        sessions: HashMap::new(),
        pending: HashMap::new(),
        changed,
        version: 0,
    };
    worker.attach_existing()?;
    // The pages' current tools (replayed by `WebMCP.enable`) are in the list before the MCP
    // client can ask for it.
    worker.cdp.pump(Duration::from_millis(50))?;
    for event in worker.cdp.drain_events() {
        worker.event(&event)?;
    }
    std::thread::Builder::new()
        .name("tacit-mcp-browser".to_owned())
        .spawn(move || {
            let reason = worker.run(&inbox);
            let _ = stop.send(Some(reason));
        })
        .map_err(Error::Io)?;
    Ok(BrowserHandle {
        mirror,
        commands,
        changes,
        stopped,
    })
}

struct Worker {
    cdp: Cdp,
    mirror: Arc<Mutex<Mirror>>,
    /// target id → session id of the pages we attached to.
    sessions: HashMap<String, String>,
    /// invocation id → where its outcome goes.
    pending: HashMap<String, oneshot::Sender<Outcome>>,
    changed: watch::Sender<u64>,
    version: u64,
}

impl Worker {
    fn mirror(&self) -> std::sync::MutexGuard<'_, Mirror> {
        self.mirror.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a page at `url` is worth attaching to: its origin is a named one. (Which of its
    /// frames' tools are mirrored is decided per frame, by the frame's own origin.)
    fn wanted(&self, url: &str) -> bool {
        origin_of_url(url).is_some_and(|origin| self.mirror().wants_origin(&origin))
    }

    /// Records every frame of the page behind `session` with the browser's origin for it.
    fn learn_frames(&mut self, session: &str) -> Result<(), Error> {
        let tree = self
            .cdp
            .send(Some(session), "Page.getFrameTree", json!({}))?;
        let mut stack = vec![&tree["frameTree"]];
        while let Some(node) = stack.pop() {
            self.frame_seen(session, &node["frame"]);
            stack.extend(node["childFrames"].as_array().into_iter().flatten());
        }
        Ok(())
    }

    /// Records a DevTools `Page.Frame`; returns whether its tools were dropped (a navigation).
    fn frame_seen(&mut self, session: &str, frame: &Value) -> bool {
        let (Some(id), Some(url)) = (frame["id"].as_str(), frame["url"].as_str()) else {
            return false;
        };
        // The browser's own origin for the frame; a frame without one is opaque ("null").
        let origin = frame["securityOrigin"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| "null".to_owned());
        self.mirror().frame_navigated(session, id, &origin, url)
    }

    fn attach_existing(&mut self) -> Result<(), Error> {
        self.cdp.send(
            None,
            "Target.setDiscoverTargets",
            json!({ "discover": true }),
        )?;
        let targets = self.cdp.send(None, "Target.getTargets", json!({}))?;
        for info in targets["targetInfos"].as_array().into_iter().flatten() {
            self.consider(info)?;
        }
        Ok(())
    }

    /// Attaches to a page target we do not follow yet, if its URL is wanted.
    fn consider(&mut self, info: &Value) -> Result<(), Error> {
        let (Some(target), Some(url)) = (info["targetId"].as_str(), info["url"].as_str()) else {
            return Ok(());
        };
        if info["type"] != "page" || self.sessions.contains_key(target) || !self.wanted(url) {
            return Ok(());
        }
        let attached = self.cdp.send(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target, "flatten": true }),
        )?;
        let Some(session) = attached["sessionId"].as_str().map(str::to_owned) else {
            return Ok(());
        };
        self.sessions.insert(target.to_owned(), session.clone());
        self.cdp.send(Some(&session), "Page.enable", json!({}))?;
        // The frames' origins are known before the first tool is announced.
        self.learn_frames(&session)?;
        // Tools already registered are replayed at once in one `toolsAdded`.
        self.cdp.send(Some(&session), "WebMCP.enable", json!({}))?;
        Ok(())
    }

    fn run(&mut self, inbox: &mpsc::Receiver<Command>) -> String {
        loop {
            match inbox.try_recv() {
                Ok(command) => self.command(command),
                Err(mpsc::TryRecvError::Empty) => {}
                // The MCP side is gone: nothing to serve.
                Err(mpsc::TryRecvError::Disconnected) => return "the MCP side closed".to_owned(),
            }
            if let Err(e) = self.cdp.pump(POLL) {
                return e.to_string();
            }
            let events = self.cdp.drain_events();
            let mut changed = false;
            for event in events {
                match self.event(&event) {
                    Ok(c) => changed |= c,
                    Err(e) => return e.to_string(),
                }
            }
            if changed {
                self.version += 1;
                let _ = self.changed.send(self.version);
            }
        }
    }

    fn command(&mut self, command: Command) {
        let Command::Call {
            mcp_name,
            input,
            reply,
        } = command;
        let Some(tool) = self.mirror().resolve(&mcp_name) else {
            let _ = reply.send(Outcome::error(format!(
                "No tool `{mcp_name}` is live in the browser now: it was never there, or its \
                 grant ended. List the tools again."
            )));
            return;
        };
        let input = if input.is_object() { input } else { json!({}) };
        match self.cdp.send(
            Some(&tool.session),
            "WebMCP.invokeTool",
            json!({ "frameId": tool.frame_id, "toolName": tool.name, "input": input }),
        ) {
            Ok(started) => match started["invocationId"].as_str() {
                Some(id) => {
                    self.pending.insert(id.to_owned(), reply);
                }
                None => {
                    let _ = reply.send(Outcome::error("The browser did not start the call."));
                }
            },
            Err(Error::Cdp { message, .. }) if message.contains("Tool not found") => {
                let _ = reply.send(Outcome::error(format!(
                    "The tool `{mcp_name}` was withdrawn before the call: its grant ended or \
                     was revoked. Do not retry it; ask again if the person agrees."
                )));
            }
            Err(e) => {
                let _ = reply.send(Outcome::error(format!("The browser refused the call: {e}")));
            }
        }
    }

    /// Handles one event; returns whether the tool list changed.
    fn event(&mut self, event: &Event) -> Result<bool, Error> {
        let session = event.session_id.as_deref();
        let p = &event.params;
        Ok(match (event.method.as_str(), session) {
            ("WebMCP.toolsAdded", Some(s)) => self.mirror().added(s, p),
            ("WebMCP.toolsRemoved", Some(s)) => self.mirror().removed(s, p),
            ("WebMCP.toolResponded", Some(_)) => {
                if let Some(reply) = p["invocationId"]
                    .as_str()
                    .and_then(|id| self.pending.remove(id))
                {
                    let _ = reply.send(outcome_of(p));
                }
                false
            }
            ("Page.frameNavigated", Some(s)) => self.frame_seen(s, &p["frame"]),
            ("Target.targetCreated" | "Target.targetInfoChanged", None) => {
                self.consider(&p["targetInfo"])?;
                false
            }
            ("Target.targetDestroyed", None) => {
                match p["targetId"].as_str().and_then(|t| self.sessions.remove(t)) {
                    Some(session) => self.mirror().page_closed(&session),
                    None => false,
                }
            }
            ("Target.detachedFromTarget", None) => match p["sessionId"].as_str() {
                Some(session) => {
                    self.sessions.retain(|_, s| s != session);
                    self.mirror().page_closed(session)
                }
                None => false,
            },
            _ => false,
        })
    }
}
