//! The MCP door end to end: the real `tacit-mcp` binary, spawned over stdio by an `rmcp` client
//! (as a desktop agent's MCP host spawns it), attached to a real headless Chromium with WebMCP
//! on, in which the wallet page runs. The person's acts (create, grant, revoke) go through real
//! input events in the page; the agent's go through MCP only.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{MaybeSendFuture, NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tacit_e2e::browser::Browser;
use tacit_e2e::wallet::Wallet;
use tokio::sync::Notify;

/// The desktop agent: counts `tools/list_changed` notifications.
#[derive(Clone, Default)]
struct Agent {
    changes: Arc<AtomicUsize>,
    notify: Arc<Notify>,
}

impl ClientHandler for Agent {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + MaybeSendFuture + '_ {
        self.changes.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_waiters();
        std::future::ready(())
    }
}

struct Door {
    runtime: tokio::runtime::Runtime,
    client: RunningService<RoleClient, Agent>,
    changes: Arc<AtomicUsize>,
}

impl Door {
    fn spawn(port: u16, page_prefix: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let agent = Agent::default();
        let changes = agent.changes.clone();
        let client = runtime.block_on(async {
            let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tacit-mcp"));
            command.args(["--devtools-port", &port.to_string(), "--page", page_prefix]);
            let transport = TokioChildProcess::new(command).unwrap();
            agent.serve(transport).await.unwrap()
        });
        Self {
            runtime,
            client,
            changes,
        }
    }

    fn names(&self) -> Vec<String> {
        let tools = self
            .runtime
            .block_on(self.client.peer().list_all_tools())
            .unwrap();
        tools.into_iter().map(|t| t.name.into_owned()).collect()
    }

    fn call(&self, name: &str, input: Value) -> CallToolResult {
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = input.as_object().cloned();
        self.runtime
            .block_on(self.client.peer().call_tool(params))
            .unwrap()
    }

    /// Waits until the tool list satisfies `accept`, and until at least one `list_changed`
    /// arrived after `since` notifications; returns the names and how long it took.
    fn wait_list(
        &self,
        since: usize,
        accept: impl Fn(&[String]) -> bool,
    ) -> (Vec<String>, Duration) {
        let start = Instant::now();
        loop {
            let names = self.names();
            if self.changes.load(Ordering::SeqCst) > since && accept(&names) {
                return (names, start.elapsed());
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no list_changed leading to the expected list: {names:?} ({} notifications)",
                self.changes.load(Ordering::SeqCst)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

/// The page draws a request's card in a task after answering the agent: wait for it before the
/// person acts on it.
fn wait_card(wallet: &Wallet<'_>, request_id: &str) {
    wallet
        .page
        .wait_for(
            &format!("!!document.getElementById('dur-{request_id}')"),
            Duration::from_secs(10),
        )
        .unwrap();
}

/// The agent asks `policy` through the door (not an error result), the person grants its one
/// claim for `duration` in the page, and the door lists the claim tool after a `list_changed`:
/// the claim tool's name, the list and how long the change took.
fn ask_and_grant(
    door: &Door,
    wallet: &mut Wallet<'_>,
    policy: Value,
    duration: &str,
) -> (String, Vec<String>, Duration) {
    let asked = door.call("request_claims", policy);
    assert_ne!(asked.is_error, Some(true), "{}", text_of(&asked));
    let request_id = asked.structured_content.as_ref().unwrap()["result"]["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    wait_card(wallet, &request_id);
    let before = door.changes.load(Ordering::SeqCst);
    let claim = wallet.grant(&request_id, duration, 1)[0].clone();
    let (names, took) = door.wait_list(before, |names| names.iter().any(|n| n == &claim));
    (claim, names, took)
}

fn devtools_port(browser: &Browser) -> u16 {
    let file = browser
        .profile_dir()
        .unwrap()
        .join("profile")
        .join("DevToolsActivePort");
    let text = std::fs::read_to_string(&file).unwrap();
    text.lines().next().unwrap().trim().parse().unwrap()
}

#[test]
fn a_desktop_agent_lists_follows_calls_and_is_refused_after_revoke() {
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let browser = Browser::launch().unwrap();
    let mut wallet = Wallet::open(&browser, &server, "?short_grants=1");
    wallet.create_profile(); // 28,400.00 EUR, 1990-02-28, Nordhafen
    let door = Door::spawn(devtools_port(&browser), &server.origin());

    // The wallet's standing tools, and no claim tool: nothing is granted.
    let names = door.names();
    assert!(names.iter().any(|n| n == "request_claims"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("claim.")), "{names:?}");

    // The agent asks through MCP; the person grants in the page.
    let (claim, names, after_grant) = ask_and_grant(
        &door,
        &mut wallet,
        json!({ "origin": "https://housing.example", "nonce": "n-mcp-1",
                "claims": [{ "kind": "income_below",
                             "limit": { "amount_minor": 3_000_000, "currency": "EUR" } }] }),
        "600000",
    );
    assert!(names.contains(&claim), "{names:?}");

    // The claim tool answers through the door: a yes/no, nothing else.
    let answer = door.call(&claim, json!({}));
    assert_ne!(answer.is_error, Some(true), "{}", text_of(&answer));
    let output = answer.structured_content.clone().unwrap();
    assert_eq!(output["ok"], true, "{output}");
    assert_eq!(output["result"]["satisfied"], true, "{output}");
    assert!(!text_of(&answer).contains("28400"), "{}", text_of(&answer));

    // The person revokes: the list changes, and a call by the kept name is refused with isError.
    let before = door.changes.load(Ordering::SeqCst);
    wallet.revoke(&claim);
    let (names, after_revoke) = door.wait_list(before, |names| !names.contains(&claim));
    assert!(!names.contains(&claim));
    let refused = door.call(&claim, json!({}));
    assert_eq!(refused.is_error, Some(true), "{}", text_of(&refused));
    assert!(text_of(&refused).contains("withdrawn") || text_of(&refused).contains("No tool"));

    // A refusal from the wallet itself (a malformed request) is an error result with the
    // envelope's text: generic clients can tell it from an answer.
    let bad = door.call("request_claims", json!({ "origin": 7 }));
    assert_eq!(bad.is_error, Some(true), "{}", text_of(&bad));
    assert!(text_of(&bad).contains("\"ok\":false"), "{}", text_of(&bad));

    // An expiring grant (two seconds): the list changes again when it ends, without any act.
    let (short, _, _) = ask_and_grant(
        &door,
        &mut wallet,
        json!({ "origin": "https://housing.example", "nonce": "n-mcp-2",
                "claims": [{ "kind": "age_at_least", "years": 18 }] }),
        "2000",
    );
    let before = door.changes.load(Ordering::SeqCst);
    let (names, after_expiry) = door.wait_list(before, |names| !names.contains(&short));
    assert!(!names.contains(&short));
    let late = door.call(&short, json!({}));
    assert_eq!(late.is_error, Some(true), "{}", text_of(&late));
    println!(
        "list_changed seen by the MCP client: after grant {after_grant:?}, after revoke \
         {after_revoke:?}, expiry observed {after_expiry:?} after the grant was listed"
    );
    door.runtime.block_on(door.client.cancel()).unwrap();
}
