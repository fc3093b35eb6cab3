//! "What the agent sees", for developers: the live registry with tool names and annotations,
//! the absence proof and the calls. Each list is redrawn only when what it shows changed.

use super::*;

pub fn agent(view: &View<'_>) {
    // What each live claim tool answers, and for which site (from the gate's live grants).
    let grant_origin: std::collections::BTreeMap<String, String> = view
        .gate
        .grants()
        .filter(|g| g.state == GrantState::Live)
        .filter_map(|g| {
            let what = format!("{} for {}", describe(&g.claim).1, g.origin);
            Some((tool_name_of(g)?.as_str().to_owned(), what))
        })
        .collect();
    let registry_key = content_key(&(
        &grant_origin,
        view.live_tools
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>(),
        view.registry.host().uses_webmcp(),
    ));
    if changed("registry", registry_key) {
        registry(view, &grant_origin);
    }
    let names: Vec<String> = if view.registry.host().uses_webmcp() {
        view.live_tools
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    } else {
        capability_gate::Host::list(view.registry.host())
    };
    let audit = audit_registry(view.gate, &names);
    let absence_key = content_key(&(
        audit
            .fields
            .iter()
            .map(|f| (f.field.to_string(), f.getter.to_string(), f.absent))
            .collect::<Vec<_>>(),
        &audit.unexpected,
    ));
    if changed("absence", absence_key) {
        absence(&audit);
    }
    let calls_key = content_key(
        &view
            .calls
            .iter()
            .map(|c| (c.at.millis(), c.tool.as_str(), c.outcome.as_str()))
            .collect::<Vec<_>>(),
    );
    if changed("calls", calls_key) {
        calls(view);
    }
}

fn registry(view: &View<'_>, grant_origin: &std::collections::BTreeMap<String, String>) {
    let mut items = Vec::new();
    for tool in view.live_tools {
        let name = tool["name"].as_str().unwrap_or("?");
        let hints: Vec<&str> = ["readOnlyHint", "untrustedContentHint", "consequentialHint"]
            .into_iter()
            .filter(|h| tool["annotations"][*h] == true)
            .collect();
        let li = el("li", "", "");
        append(&li, &el("code", "", name));
        append(&li, &el("span", "reveal", &format!(" {}", hints.join(" "))));
        if let Some(origin) = grant_origin.get(name) {
            append(&li, &el("span", "", &format!(" — {origin}")));
        }
        items.push(li);
    }
    if items.is_empty() {
        let note = if view.registry.host().uses_webmcp() {
            "The registry is empty."
        } else {
            "No WebMCP registry in this browser; tools are offered through window.tacit."
        };
        items.push(el("li", "empty", note));
    }
    fill("registry", items);
}

fn absence(audit: &capability_gate::Audit) {
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
}

fn calls(view: &View<'_>) {
    let calls: Vec<_> = view
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
