//! "What the agent sees": the live registry, the absence proof and the calls.

use super::*;

pub fn agent(app: &App) {
    let mut items = Vec::new();
    for tool in &app.live_tools {
        let name = tool["name"].as_str().unwrap_or("?");
        let hints: Vec<&str> = ["readOnlyHint", "untrustedContentHint", "consequentialHint"]
            .into_iter()
            .filter(|h| tool["annotations"][*h] == true)
            .collect();
        let li = el("li", "", "");
        append(&li, &el("code", "", name));
        append(&li, &el("span", "reveal", &format!(" {}", hints.join(" "))));
        items.push(li);
    }
    if items.is_empty() {
        let note = if app.registry.host().uses_webmcp() {
            "The registry is empty."
        } else {
            "No WebMCP registry in this browser; tools are offered through window.tacit."
        };
        items.push(el("li", "empty", note));
    }
    fill("registry", items);
    let names: Vec<String> = if app.registry.host().uses_webmcp() {
        app.live_tools
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    } else {
        capability_gate::Host::list(app.registry.host())
    };
    let audit = audit_registry(&app.gate, &names);
    let mut rows: Vec<_> = audit
        .fields
        .iter()
        .map(|f| {
            let verdict = if f.absent {
                "absent from the live registry"
            } else {
                "PRESENT in the live registry"
            };
            el(
                "li",
                if f.absent { "" } else { "error" },
                &format!("{} — {}() — {verdict}", f.field, f.getter),
            )
        })
        .collect();
    for name in &audit.unexpected {
        rows.push(el("li", "error", &format!("{name} — not issued by Tacit")));
    }
    fill("absence", rows);
    let calls: Vec<_> = app
        .calls
        .iter()
        .map(|c| {
            el(
                "li",
                "",
                &format!("{} {} → {}", clock(c.at.millis()), c.tool, c.outcome),
            )
        })
        .collect();
    fill(
        "calls",
        if calls.is_empty() {
            vec![el("li", "empty", "No call yet.")]
        } else {
            calls
        },
    );
}
