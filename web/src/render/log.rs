//! The comparison log and the session receipts.

use super::*;

pub(super) fn log(app: &App) {
    let rows: Vec<_> = app
        .gate
        .log()
        .entries()
        .iter()
        .rev()
        .take(200)
        .map(|e| {
            let outcome_class = match e.outcome {
                Outcome::Satisfied => "yes",
                Outcome::NotSatisfied => "no",
                _ => "reveal",
            };
            let li = el(
                "li",
                "",
                &format!(
                    "#{} {} {} {} — {} ",
                    e.seq,
                    clock(e.at.millis()),
                    e.origin,
                    e.tool,
                    e.claim.canonical()
                ),
            );
            append(&li, &el("span", outcome_class, e.outcome.as_str()));
            li
        })
        .collect();
    fill(
        "log",
        if rows.is_empty() {
            vec![el("li", "empty", "No comparison yet.")]
        } else {
            rows
        },
    );
}

pub(super) fn session_receipts(app: &App) {
    let rows: Vec<_> = app
        .session_receipts
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let item = el("div", "item", "");
            append(
                &item,
                &el(
                    "div",
                    "origin",
                    &format!(
                        "Receipt for {} ({} comparisons)",
                        r.payload.audience,
                        r.payload.entries.len()
                    ),
                ),
            );
            append(
                &item,
                &el(
                    "p",
                    if r.signed.is_some() { "msg ok" } else { "msg" },
                    &r.note,
                ),
            );
            append(
                &item,
                &button("Download", "download-session", &i.to_string(), ""),
            );
            item
        })
        .collect();
    fill("session-receipts", rows);
}
