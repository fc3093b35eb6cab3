//! A scripted agent: walks a relying site's flow through the DevTools `WebMCP` domain, printing
//! each step (tool, input, answer). Used by `cargo xtask demo --agent`.
//!
//! The person's part (grant in the wallet page, release the application) is done by the person,
//! in the wallet page, unless the agent was told to stand in for them; then every such click is
//! announced loudly as a scripted stand-in, and the stand-in types the demo passphrase into the
//! wallet's confirmation dialog after each click (the wallet's check that a person acted).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Error, Page, Result, ToolStatus};

/// How long the agent waits for the person to decide.
pub const PERSON_TIMEOUT: Duration = Duration::from_secs(600);

/// Who answers the wallet's consent and approval questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Person {
    /// A real person, in the wallet page: the agent waits.
    Real,
    /// The script clicks Grant and Release itself, and says so loudly.
    ScriptedStandIn,
}

/// The names of a site's two tools.
#[derive(Debug, Clone, Copy)]
pub struct SiteTools {
    pub requirements: &'static str,
    pub submit: &'static str,
}

pub const HOUSING: SiteTools = SiteTools {
    requirements: "housing_requirements",
    submit: "housing_submit_application",
};
pub const PHARMACY: SiteTools = SiteTools {
    requirements: "pharmacy_requirements",
    submit: "pharmacy_checkout",
};

const STAND_IN: &str =
    "!!! SCRIPTED STAND-IN FOR A PERSON (--auto-approve): no human decided this !!!";

/// Calls a tool and prints the step. The call must complete; refusals are values.
fn step(page: &mut Page<'_>, say: &mut dyn FnMut(&str), tool: &str, input: Value) -> Result<Value> {
    say(&format!("→ {tool} {}", short(&input)));
    let response = page.call_tool(tool, input)?;
    if response.status != ToolStatus::Completed {
        return Err(Error::Js(format!(
            "{tool} did not complete: {}",
            response.raw
        )));
    }
    say(&format!("← {}", short(&response.output)));
    Ok(response.output)
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 240 {
        format!("{}…", text.chars().take(240).collect::<String>())
    } else {
        text
    }
}

/// Calls `tool` every second until `done` holds or the person's time runs out.
fn until(
    page: &mut Page<'_>,
    say: &mut dyn FnMut(&str),
    tool: &str,
    input: Value,
    done: impl Fn(&Value) -> bool,
) -> Result<Value> {
    let deadline = Instant::now() + PERSON_TIMEOUT;
    let mut last = String::new();
    loop {
        let response = page.call_tool(tool, input.clone())?;
        let status = response.output["result"]["status"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        if status != last {
            say(&format!("← {tool}: {}", short(&response.output)));
            last = status;
        }
        if done(&response.output) {
            return Ok(response.output);
        }
        if Instant::now() >= deadline {
            return Err(Error::Timeout {
                what: format!("the person to decide ({tool})"),
                after: PERSON_TIMEOUT,
            });
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The person's act on `what` (`request 3`, `proposal 7`: `kind` and `id`) in the wallet
/// page: the scripted stand-in waits for its button (`[data-action=<verb>][data-id=<id>]`),
/// clicks it (`labels.0`, as the button reads) and types the demo passphrase into the
/// confirmation dialog; a real person is told what the agent waits for (`labels.1`, the verb).
fn person_acts(
    wallet: &Page<'_>,
    say: &mut dyn FnMut(&str),
    person: Person,
    labels: (&str, &str),
    kind: &str,
    id: &str,
) -> Result<()> {
    let what = format!("{kind} {id}");
    let button = &format!("[data-action={}][data-id={id}]", labels.1);
    if person != Person::ScriptedStandIn {
        say(&format!(
            "… waiting for you to {} {what} in your wallet",
            labels.1
        ));
        return Ok(());
    }
    say(STAND_IN);
    say(&format!("   clicking {} on {what} in the wallet", labels.0));
    wallet.wait_for(
        &format!("!!document.querySelector('{button}')"),
        Duration::from_secs(20),
    )?;
    // No box starts ticked: the person ticks every question or answer first.
    let card = if kind == "request" { "req" } else { "prop" };
    crate::wallet::tick_all(wallet, &format!("#{card}-{id}"))?;
    wallet.click(button)?;
    say("   typing the demo passphrase into the wallet's confirmation dialog");
    crate::wallet::confirm_with_passphrase(wallet, crate::wallet::PASS)
}

/// `out["result"][member]` as a string ("" when it is not one).
fn result_str(out: &Value, member: &str) -> String {
    out["result"][member]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The whole flow against one site: requirements → `request_claims` → (the person grants) →
/// every claim tool → `draft_application` → (the person releases) → submit the signed receipt
/// and the presentations of its issuer-backed answers. The wallet's tools are called on
/// `wallet`, where the person also acts.
/// Returns the site's answer to the submission.
pub fn run_flow(
    wallet: &mut Page<'_>,
    site: &mut Page<'_>,
    tools: SiteTools,
    person: Person,
    say: &mut dyn FnMut(&str),
) -> Result<Value> {
    run_flow_via(wallet, None, site, tools, person, say)
}

/// [`run_flow`] with the wallet's tools on `agents` (the bridge page in the agent's browser,
/// issue 29) and the person's acts in `vault` (their vault page, in another browser); `None`
/// means the person acts on `agents` itself (the wallet page registers its own tools).
pub fn run_flow_via(
    wallet: &mut Page<'_>,
    vault: Option<&Page<'_>>,
    site: &mut Page<'_>,
    tools: SiteTools,
    person: Person,
    say: &mut dyn FnMut(&str),
) -> Result<Value> {
    let requirements = step(site, say, tools.requirements, json!({}))?;
    let policy = requirements["result"].clone();
    let (origin, nonce) = (policy["origin"].clone(), policy["nonce"].clone());
    let held = step(wallet, say, "request_claims", policy)?;
    let request = result_str(&held, "request_id");
    person_acts(
        vault.unwrap_or(&*wallet),
        say,
        person,
        ("Grant (10 minutes)", "grant"),
        "request",
        &request,
    )?;
    let granted = until(
        wallet,
        say,
        "check_request",
        json!({ "request_id": request }),
        |o| matches!(o["result"]["status"].as_str(), Some("granted" | "denied")),
    )?;
    if granted["result"]["status"] == "denied" {
        say("the person denied the request; stopping");
        return Ok(granted);
    }
    let names: Vec<String> = granted["result"]["tools"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .filter_map(|t| t["tool"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    for name in &names {
        wallet.wait_tool(name, Duration::from_secs(20))?;
        step(wallet, say, name, json!({}))?;
    }
    let draft = step(
        wallet,
        say,
        "draft_application",
        json!({ "audience": origin, "nonce": nonce }),
    )?;
    let proposal = result_str(&draft, "proposal_id");
    person_acts(
        vault.unwrap_or(&*wallet),
        say,
        person,
        ("Release", "release"),
        "proposal",
        &proposal,
    )?;
    let released = until(
        wallet,
        say,
        "check_proposal",
        json!({ "proposal_id": proposal }),
        |o| o["result"]["status"] == "refused" || o["result"]["signed"] == true,
    )?;
    if released["result"]["status"] == "refused" {
        say("the person refused the application; stopping");
        return Ok(released);
    }
    let receipt = released["result"]["receipt"].clone();
    // Issuer-backed answers travel as presentations beside the receipt, one per proven answer.
    match &released["result"]["presentations"] {
        Value::Array(list) if !list.is_empty() => step(
            site,
            say,
            tools.submit,
            json!({ "receipt": receipt, "presentations": list }),
        ),
        _ => step(site, say, tools.submit, json!({ "receipt": receipt })),
    }
}
