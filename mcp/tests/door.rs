//! The MCP door end to end: the real `tacit-mcp` binary, spawned over stdio by an `rmcp` client
//! (as a desktop agent's MCP host spawns it), attached to a real headless Chromium with WebMCP
//! on, in which the wallet page runs. The person's acts (create, grant, revoke) go through real
//! input events in the page; the agent's go through MCP only.
//!
//! Issue 28, item 15: a tab of another loopback origin, opened first, registering the wallet's
//! `request_claims`, a fake claim tool that says yes, and a name spelling the wallet's
//! namespace, with the wallet's origin written into its descriptions, cannot pass for the
//! wallet: by default only the named origin is mirrored, and when both are named each origin's
//! tools carry its own namespace and its own origin in the door's words.

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

mod common;

use common::{devtools_port, ns, open_page, serve_pages};

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
    /// The door with `args` after `--devtools-port <port>`.
    fn spawn(port: u16, args: &[&str]) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let agent = Agent::default();
        let changes = agent.changes.clone();
        let client = runtime.block_on(async {
            let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tacit-mcp"));
            command
                .args(["--devtools-port", &port.to_string()])
                .args(args);
            let transport = TokioChildProcess::new(command).unwrap();
            agent.serve(transport).await.unwrap()
        });
        Self {
            runtime,
            client,
            changes,
        }
    }

    fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.runtime
            .block_on(self.client.peer().list_all_tools())
            .unwrap()
    }

    fn names(&self) -> Vec<String> {
        self.tools()
            .into_iter()
            .map(|t| t.name.into_owned())
            .collect()
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

/// The agent asks `policy` through the door's `request` tool (not an error result), the person
/// grants its one claim for `duration` in the page, and the door lists the claim tool (under
/// `namespace`) after a `list_changed`: the claim tool's MCP name, the list and how long the
/// change took.
fn ask_and_grant(
    door: &Door,
    wallet: &mut Wallet<'_>,
    (request, namespace): (&str, &str),
    policy: Value,
    duration: &str,
) -> (String, Vec<String>, Duration) {
    let asked = door.call(request, policy);
    assert_ne!(asked.is_error, Some(true), "{}", text_of(&asked));
    let request_id = asked.structured_content.as_ref().unwrap()["result"]["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    wait_card(wallet, &request_id);
    let before = door.changes.load(Ordering::SeqCst);
    let claim = format!("{namespace}.{}", wallet.grant(&request_id, duration, 1)[0]);
    let (names, took) = door.wait_list(before, |names| names.iter().any(|n| n == &claim));
    (claim, names, took)
}

#[test]
fn a_desktop_agent_lists_follows_calls_and_is_refused_after_revoke() {
    let _serial = tacit_e2e::serial();
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let browser = Browser::launch().unwrap();
    let mut wallet = Wallet::open(&browser, &server, "?short_grants=1");
    wallet.create_profile(); // 28,400.00 EUR, 1990-02-28, Nordhafen
    // `--page` (a URL prefix on exactly its origin) still names the wallet.
    let door = Door::spawn(devtools_port(&browser), &["--page", &server.url("/")]);
    let namespace = ns(&server.origin());
    let request = format!("{namespace}.request_claims");
    let at = (request.as_str(), namespace.as_str());

    // The wallet's standing tools, and no claim tool: nothing is granted.
    let names = door.names();
    assert!(names.contains(&request), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with(&format!("{namespace}.claim."))),
        "{names:?}"
    );

    // The agent asks through MCP; the person grants in the page.
    let (claim, names, after_grant) = ask_and_grant(
        &door,
        &mut wallet,
        at,
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
    let bad = door.call(&request, json!({ "origin": 7 }));
    assert_eq!(bad.is_error, Some(true), "{}", text_of(&bad));
    assert!(text_of(&bad).contains("\"ok\":false"), "{}", text_of(&bad));

    // An expiring grant (two seconds): the list changes again when it ends, without any act.
    let (short, _, _) = ask_and_grant(
        &door,
        &mut wallet,
        at,
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

#[test]
fn an_impostor_tab_on_another_origin_cannot_pass_for_the_wallet() {
    let _serial = tacit_e2e::serial();
    let server = tacit_e2e::serve_site("wallet").unwrap();
    let pages = serve_pages();
    let browser = Browser::launch().unwrap();
    let (wallet_origin, impostor_origin) = (server.origin(), pages.origin());
    let (wallet_ns, impostor_ns) = (ns(&wallet_origin), ns(&impostor_origin));
    // The impostor's tab is opened first and registers first.
    let _impostor = open_page(
        &browser,
        &pages,
        &format!("?role=impostor&wallet={wallet_origin}&ns={wallet_ns}"),
    );
    let mut wallet = Wallet::open(&browser, &server, "");
    wallet.create_profile(); // 28,400.00 EUR
    let request = format!("{wallet_ns}.request_claims");
    let port = devtools_port(&browser);

    // Named: the wallet's origin only. Nothing of the impostor's is listed, under any name.
    let door = Door::spawn(port, &["--origin", &wallet_origin]);
    let tools = door.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.contains(&request.as_str()), "{names:?}");
    for tool in &tools {
        assert!(tool.name.starts_with(&format!("{wallet_ns}.")), "{names:?}");
        assert!(!tool.name.contains(&impostor_ns), "{names:?}");
        let description = tool.description.as_deref().unwrap_or_default();
        assert!(
            description.starts_with(&format!("From the page at {wallet_origin}: ")),
            "{description}"
        );
        assert!(
            !description.contains("[http"),
            "the impostor's words: {description}"
        );
    }
    // The names the impostor took are nobody's here.
    for name in ["request_claims", "claim.income_below", "request_claims.2"] {
        let refused = door.call(name, json!({}));
        assert_eq!(
            refused.is_error,
            Some(true),
            "{name}: {}",
            text_of(&refused)
        );
        assert!(
            text_of(&refused).contains("No tool"),
            "{}",
            text_of(&refused)
        );
    }
    // The wallet's name reaches the wallet: the request is held for the person there.
    let (claim, _, _) = ask_and_grant(
        &door,
        &mut wallet,
        (&request, &wallet_ns),
        json!({ "origin": "https://housing.example", "nonce": "n-impostor-1",
                "claims": [{ "kind": "income_below",
                             "limit": { "amount_minor": 2_000_000, "currency": "EUR" } }] }),
        "600000",
    );
    let answer = door.call(&claim, json!({}));
    assert_ne!(answer.is_error, Some(true), "{}", text_of(&answer));
    assert_eq!(
        answer.structured_content.unwrap()["result"]["satisfied"],
        false,
        "the wallet's own answer: 28,400 is not below 20,000"
    );
    door.runtime.block_on(door.client.cancel()).unwrap();

    // Both named: each origin's tools under its own namespace and its own origin, whatever the
    // page wrote; the impostor's yes is its own tool's, under its namespace.
    let door = Door::spawn(
        port,
        &["--origin", &impostor_origin, "--origin", &wallet_origin],
    );
    let tools = door.tools();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    for tool in &tools {
        let origin = if tool.name.starts_with(&format!("{wallet_ns}.")) {
            &wallet_origin
        } else {
            assert!(
                tool.name.starts_with(&format!("{impostor_ns}.")),
                "{names:?}"
            );
            &impostor_origin
        };
        let description = tool.description.as_deref().unwrap_or_default();
        assert!(
            description.starts_with(&format!("From the page at {origin}: ")),
            "{description}"
        );
    }
    for impostors in [
        "request_claims",
        "claim.income_below",
        &format!("{wallet_ns}.request_claims"),
    ] {
        let name = format!("{impostor_ns}.{impostors}");
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let wallet_tools: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with(&format!("{wallet_ns}.")))
        .collect();
    assert!(wallet_tools.contains(&&request), "{names:?}");
    assert!(wallet_tools.contains(&&claim), "{names:?}");
    // The wallet's request tool is the wallet's: its call is held in the wallet's page.
    let asked = door.call(
        &request,
        json!({ "origin": "https://housing.example", "nonce": "n-impostor-2",
                "claims": [{ "kind": "age_at_least", "years": 18 }] }),
    );
    assert_ne!(asked.is_error, Some(true), "{}", text_of(&asked));
    let request_id = asked.structured_content.as_ref().unwrap()["result"]["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    wait_card(&wallet, &request_id);
    let fake = door.call(&format!("{impostor_ns}.claim.income_below"), json!({}));
    assert_eq!(
        fake.structured_content.unwrap()["result"]["satisfied"],
        true
    );
    door.runtime.block_on(door.client.cancel()).unwrap();
}
