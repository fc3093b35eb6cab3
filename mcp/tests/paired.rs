//! Issue 29: the MCP door paired with the vault itself. The official TypeScript MCP SDK
//! (`@modelcontextprotocol/sdk`, pinned in `interop/package.json`; `interop/mcp_door_paired.mjs`
//! does the client's part) spawns the real `tacit-mcp --vault-relay <relay>` over stdio; a real
//! `tacit-relay` carries the frames; the person's vault is the wallet page built as a vault, in a
//! headless Chromium. No DevTools port is given to the door: it has no browser.
//!
//! The person reads the code off the door's stderr and types it into the vault's Settings →
//! Pair a bridge (real input events), grants, revokes; the agent lists, calls, and sees
//! `notifications/tools/list_changed` on the grant, the revoke and the expiry of a 2-second grant
//! (the vault's `?short_grants=1` choice). Before pairing a call is `vault_unreachable`; a restart
//! of the door reconnects from its pairing file (0600) without a new code, and so does a relay
//! restart; unpairing in the vault makes the door forget the pairing (its file goes) and print a
//! new code; the door never printed the person's facts on stdout or stderr.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

#[path = "../../interop/node.rs"]
#[allow(dead_code)]
mod node;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tacit_e2e::browser::Browser;
use tacit_e2e::relay_proc::TestRelay;
use tacit_e2e::wallet::{Wallet, housing_policy};

const WAIT: Duration = Duration::from_secs(40);

/// The SDK client driving one door.
struct Agent {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    stderr: Vec<String>,
    changes: usize,
    answers: HashMap<u64, Value>,
    next_id: u64,
    ready: Option<Value>,
}

impl Agent {
    fn spawn(relay: &str, pairing_file: &Path) -> Self {
        node::ensure_node_modules();
        let mut child = Command::new("node")
            .arg("mcp_door_paired.mjs")
            .current_dir(node::interop_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("running node failed ({e}); install it: {}", node::INSTALL));
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                match serde_json::from_str::<Value>(&line) {
                    Ok(value) => {
                        if tx.send(value).is_err() {
                            break;
                        }
                    }
                    Err(e) => panic!("the driver wrote {line:?}: {e}"),
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        let mut agent = Self {
            child,
            stdin,
            lines,
            stderr: Vec::new(),
            changes: 0,
            answers: HashMap::new(),
            next_id: 1,
            ready: None,
        };
        agent.send(&json!({
            "command": env!("CARGO_BIN_EXE_tacit-mcp"),
            "args": ["--vault-relay", relay, "--pairing-file", pairing_file],
        }));
        agent.until("the SDK initialised the door", |a| a.ready.is_some());
        agent
    }

    fn send(&mut self, value: &Value) {
        writeln!(self.stdin, "{value}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn take(&mut self, value: Value) {
        if let Some(id) = value["id"].as_u64() {
            self.answers.insert(id, value);
            return;
        }
        match value["event"].as_str() {
            Some("stderr") => {
                let line = value["line"].as_str().unwrap().to_owned();
                println!("door: {line}");
                self.stderr.push(line);
            }
            Some("list_changed") => self.changes += 1,
            Some("ready") => self.ready = Some(value),
            Some("closed") => {}
            _ => panic!("the driver said {value}"),
        }
    }

    /// Takes what the driver says until `done` holds (fails after [`WAIT`]).
    fn until(&mut self, what: &str, done: impl Fn(&Self) -> bool) {
        let deadline = Instant::now() + WAIT;
        while !done(self) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(value) => self.take(value),
                Err(_) => panic!("never: {what}\nthe door said:\n{}", self.stderr.join("\n")),
            }
        }
    }

    fn request(&mut self, mut command: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        command["id"] = json!(id);
        self.send(&command);
        self.until(&format!("an answer to {command}"), |a| {
            a.answers.contains_key(&id)
        });
        let answer = self.answers.remove(&id).unwrap();
        assert!(answer.get("error").is_none(), "{command} → {answer}");
        answer
    }

    fn names(&mut self) -> Vec<String> {
        let out = self.request(json!({ "op": "list" }));
        out["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    fn list(&mut self) -> Vec<Value> {
        let out = self.request(json!({ "op": "list" }));
        out["tools"].as_array().unwrap().clone()
    }

    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let out = self.request(json!({ "op": "call", "name": name, "arguments": arguments }));
        out["result"].clone()
    }

    /// Calls until `done` holds.
    fn poll(&mut self, name: &str, arguments: Value, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let out = self.call(name, arguments.clone());
            if done(&out) {
                return out;
            }
            assert!(Instant::now() < deadline, "{name} never got there: {out}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn stderr_line(&mut self, needle: &str) -> String {
        self.until(&format!("a stderr line with {needle:?}"), |a| {
            a.stderr.iter().any(|l| l.contains(needle))
        });
        self.stderr
            .iter()
            .find(|l| l.contains(needle))
            .unwrap()
            .clone()
    }

    /// The `n`th (from 1) stderr line with `needle`, once there is one.
    fn nth_stderr_line(&mut self, needle: &str, n: usize) -> String {
        self.until(&format!("{n} stderr lines with {needle:?}"), |a| {
            a.stderr.iter().filter(|l| l.contains(needle)).count() >= n
        });
        self.stderr
            .iter()
            .filter(|l| l.contains(needle))
            .nth(n - 1)
            .unwrap()
            .clone()
    }

    fn wait_changes(&mut self, more_than: usize) {
        self.until(&format!("more than {more_than} list_changed"), |a| {
            a.changes > more_than
        });
    }

    fn raw(&mut self) -> String {
        let out = self.request(json!({ "op": "raw" }));
        out["raw"].as_str().unwrap().to_owned()
    }

    fn close(mut self) {
        self.send(&json!({ "op": "close" }));
        let deadline = Instant::now() + WAIT;
        loop {
            match self.lines.recv_timeout(Duration::from_millis(200)) {
                Ok(value) => self.take(value),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            assert!(Instant::now() < deadline, "the driver did not close");
        }
        assert!(self.child.wait().unwrap().success());
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of a tool result.
fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn fresh_dir() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("tacit-mcp-paired-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The person grants request `id` in the vault for `duration` (a value of the card's select).
fn grant(vault: &Wallet<'_>, id: &str, duration: &str) {
    vault
        .page
        .wait_for(&format!("!!document.getElementById('req-{id}')"), WAIT)
        .unwrap();
    // Nothing is ticked until the person ticks it.
    vault.allow(id, duration);
}

/// The agent asks for the housing claims; the request's id (held for the person).
fn request(agent: &mut Agent, nonce: &str) -> String {
    let policy = housing_policy("http://127.0.0.1:9", nonce);
    let out = agent.call("wallet.request_claims", policy);
    assert_ne!(out["isError"], true, "{out}");
    assert_eq!(
        out["structuredContent"]["result"]["status"], "held",
        "{out}"
    );
    out["structuredContent"]["result"]["request_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The claim tools (`wallet.claim…`) the door lists now.
fn claim_tools(agent: &mut Agent) -> Vec<String> {
    agent
        .names()
        .into_iter()
        .filter(|n| !PERSISTENT.iter().any(|p| format!("wallet.{p}") == *n))
        .collect()
}

const PERSISTENT: [&str; 5] = tacit_e2e::wallet::PERSISTENT;

/// Lists until the claim tools are `n` (a change may come in more than one message).
fn wait_claims(agent: &mut Agent, n: usize) -> Vec<String> {
    let deadline = Instant::now() + WAIT;
    loop {
        let claims = claim_tools(agent);
        if claims.len() == n {
            return claims;
        }
        assert!(
            Instant::now() < deadline,
            "never {n} claim tools: {claims:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_door_paired_directly_lists_calls_and_follows_grant_revoke_and_expiry() {
    let _serial = tacit_e2e::serial();
    let mut relay = TestRelay::start().unwrap();
    let vault_site = tacit_e2e::serve_site("vault").unwrap();
    let person = Browser::launch().unwrap();
    let vault = Wallet::open(
        &person,
        &vault_site,
        &format!("?relay={}&short_grants=1", relay.url()),
    );
    vault.create_profile();
    let dir = fresh_dir();
    let pairing_file = dir.join("state").join("pairing.json");
    let mut agent = Agent::spawn(&relay.url(), &pairing_file);

    // serverInfo is the door's; its instructions name the wallet's namespace.
    let ready = agent.ready.clone().unwrap();
    assert_eq!(ready["server"]["name"], "tacit-mcp", "{ready}");
    assert!(
        ready["instructions"]
            .as_str()
            .unwrap()
            .contains("wallet.<tool name>"),
        "{ready}"
    );

    // Unpaired: the persistent tools, under `wallet.`, with the wallet's definitions; no claim
    // tool; a call is vault_unreachable, an isError result in words.
    let tools = agent.list();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let want: Vec<String> = PERSISTENT.iter().map(|p| format!("wallet.{p}")).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, want, "{tools:?}");
    let request_tool = tools
        .iter()
        .find(|t| t["name"] == "wallet.request_claims")
        .unwrap();
    assert!(
        request_tool["description"]
            .as_str()
            .unwrap()
            .starts_with("From the person's wallet: "),
        "{request_tool}"
    );
    assert_eq!(request_tool["inputSchema"]["type"], "object");
    let out = agent.call("wallet.wallet_status", json!({}));
    assert_eq!(out["isError"], true, "{out}");
    assert!(text(&out).contains("vault_unreachable"), "{out}");
    assert_eq!(
        out["structuredContent"]["error"]["code"],
        "vault_unreachable"
    );

    // The person types the code the door printed on stderr into the vault.
    let line = agent.stderr_line("type this code: ");
    assert!(line.contains("Settings → Pair a bridge"), "{line}");
    let typed = line
        .rsplit("type this code: ")
        .next()
        .unwrap()
        .trim()
        .to_owned();
    assert_eq!(typed.len(), 14, "{typed}");
    let offer = agent.stderr_line("tacit-pair:v1/");
    assert!(
        offer.contains(&format!("tacit-pair:v1/{typed}/{}", relay.url())),
        "{offer}"
    );

    // A wrong code first (the right mailbox, one symbol of the code changed): the vault says
    // so, and the door, whose handshake was spent, shows a new code.
    let mut wrong: Vec<char> = typed.chars().collect();
    wrong[5] = if wrong[5] == '7' { '8' } else { '7' };
    let wrong: String = wrong.into_iter().collect();
    vault.front();
    vault.page.fill("#pair-code", &wrong).unwrap();
    vault.page.click("#pair-btn").unwrap();
    vault.wait_text("#pair-msg", "Not paired");
    let note = agent.stderr_line("not paired: ");
    println!("the door after a wrong code: {note}");
    let line = agent.nth_stderr_line("type this code: ", 2);
    let retyped = line
        .rsplit("type this code: ")
        .next()
        .unwrap()
        .trim()
        .to_owned();
    assert_ne!(retyped, typed, "the spent code was offered again");
    let typed = retyped;
    let out = agent.call("wallet.wallet_status", json!({}));
    assert!(text(&out).contains("vault_unreachable"), "{out}");

    let started = Instant::now();
    vault.front();
    vault.page.fill("#pair-code", &typed).unwrap();
    vault.page.click("#pair-btn").unwrap();
    vault.wait_text("#pair-msg", "Paired");
    let paired = agent.stderr_line("the same number: ");
    let fingerprint = paired
        .split("the same number: ")
        .nth(1)
        .unwrap()
        .chars()
        .take(7)
        .collect::<String>();
    assert!(
        vault.text("#pair-msg").contains(&fingerprint),
        "{} vs {fingerprint}",
        vault.text("#pair-msg")
    );
    agent.stderr_line("your wallet is connected");
    println!(
        "paired and connected {} ms after the person submitted the code",
        started.elapsed().as_millis()
    );
    // The pairing is kept for the owner only.
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&pairing_file), 0o600);
    assert_eq!(mode(pairing_file.parent().unwrap()), 0o700);

    // The agent asks; the claim tool is not there yet.
    let status = agent.call("wallet.wallet_status", json!({}));
    assert_ne!(status["isError"], true, "{status}");
    let id = request(&mut agent, "nonce-door-paired-1");
    assert!(claim_tools(&mut agent).is_empty());

    // The person grants (one minute): list_changed, and the claim tools (one per claim, each
    // under its own grant) are listed.
    let before = agent.changes;
    grant(&vault, &id, "60000");
    agent.wait_changes(before);
    let checked = agent.call("wallet.check_request", json!({ "request_id": id }));
    assert_eq!(
        checked["structuredContent"]["result"]["status"], "granted",
        "{checked}"
    );
    let granted = tacit_e2e::wallet::granted_tools(&checked["structuredContent"]);
    assert_eq!(granted.len(), 2, "{checked}");
    let claims = wait_claims(&mut agent, granted.len());
    let mut want: Vec<String> = granted.iter().map(|t| format!("wallet.{t}")).collect();
    want.sort_unstable();
    let mut listed = claims.clone();
    listed.sort_unstable();
    assert_eq!(listed, want);
    for claim in &claims {
        let answer = agent.call(claim, json!({}));
        assert_ne!(answer["isError"], true, "{answer}");
        assert_eq!(answer["structuredContent"]["ok"], true, "{answer}");
        assert!(
            answer["structuredContent"]["result"]["satisfied"].is_boolean(),
            "{answer}"
        );
    }

    // The person revokes each: list_changed, the tool gone, and a call to it refused by the
    // vault.
    for (i, claim) in claims.iter().enumerate() {
        let before = agent.changes;
        let grant_id = claim.rsplit('.').next().unwrap().to_owned();
        vault.front();
        vault
            .page
            .click(&format!("[data-action=revoke][data-id={grant_id}]"))
            .unwrap();
        agent.wait_changes(before);
        let left = wait_claims(&mut agent, claims.len() - i - 1);
        assert!(!left.contains(claim), "{left:?}");
        let refused = agent.call(claim, json!({}));
        assert_eq!(refused["isError"], true, "{refused}");
        assert_eq!(refused["structuredContent"]["ok"], false, "{refused}");
        println!("a call after the revoke: {}", text(&refused));
    }

    // A second grant for 2 seconds: listed, then withdrawn at its expiry.
    let id = request(&mut agent, "nonce-door-paired-2");
    let before = agent.changes;
    grant(&vault, &id, "2000");
    agent.wait_changes(before);
    let claims = wait_claims(&mut agent, 2);
    let granted_at = Instant::now();
    let before = agent.changes;
    agent.wait_changes(before);
    wait_claims(&mut agent, 0);
    println!(
        "the 2-second grant's tools were withdrawn {} ms after they were listed",
        granted_at.elapsed().as_millis()
    );
    for claim in &claims {
        let expired = agent.call(claim, json!({}));
        assert_eq!(expired["isError"], true, "{expired}");
        println!("a call after the expiry: {}", text(&expired));
    }

    // Nothing of the person's facts went out of the door: not on stdout (every MCP message, as
    // the SDK read it), not on stderr; and the relay carried only ciphertext.
    let raw = agent.raw();
    assert!(raw.contains("satisfied"), "the raw log is the MCP stream");
    let stderr = agent.stderr.join("\n");
    for needle in ["28400", "28,400", "1990-02-28", "asthma", "Nordhafen"] {
        assert!(
            !raw.contains(needle),
            "the door's stdout carried {needle:?}"
        );
        assert!(
            !stderr.contains(needle),
            "the door's stderr carried {needle:?}"
        );
        for frame in relay.seen() {
            assert!(
                !frame.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "the relay carried {needle:?} in the clear"
            );
        }
    }
    agent.close();

    // A restart reconnects from the pairing file: no new code, the same fingerprint, and the
    // vault answers.
    let mut again = Agent::spawn(&relay.url(), &pairing_file);
    let kept = again.stderr_line("paired with your wallet (fingerprint");
    assert!(kept.contains(&fingerprint), "{kept}");
    again.stderr_line("your wallet is connected");
    let status = again.poll("wallet.wallet_status", json!({}), |o| o["isError"] != true);
    assert_eq!(status["structuredContent"]["ok"], true, "{status}");
    assert!(
        !again.stderr.iter().any(|l| l.contains("type this code")),
        "{:?}",
        again.stderr
    );

    // The relay goes down and comes back empty: the door says so, connects again by itself
    // (as does the vault), and the wallet answers again.
    let before = again.changes;
    relay.restart().unwrap();
    let down = Instant::now();
    again.stderr_line("not reachable now");
    again.nth_stderr_line("your wallet is connected", 2);
    println!(
        "the door was connected again {} ms after the relay restarted",
        down.elapsed().as_millis()
    );
    let status = again.poll("wallet.wallet_status", json!({}), |o| o["isError"] != true);
    assert_eq!(status["structuredContent"]["ok"], true, "{status}");
    assert_eq!(again.changes, before, "no claim tool, so no list change");

    // The person unpairs the door in the vault: the door is told, forgets the pairing (the
    // file goes) and prints a new code; calls are unreachable until the person pairs again.
    vault.front();
    vault.page.click("#pairings button").unwrap();
    vault.wait_text("#pair-msg", "Unpaired");
    again.stderr_line("your wallet ended this pairing");
    let fresh = again.nth_stderr_line("type this code: ", 1);
    assert!(
        !fresh.contains(&fingerprint),
        "the new code line names the old pairing: {fresh}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while pairing_file.exists() {
        assert!(
            Instant::now() < deadline,
            "the ended pairing stayed in its file"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = again.call("wallet.wallet_status", json!({}));
    assert_eq!(out["isError"], true, "{out}");
    assert!(text(&out).contains("vault_unreachable"), "{out}");
    again.close();
    let _ = std::fs::remove_dir_all(&dir);
}
