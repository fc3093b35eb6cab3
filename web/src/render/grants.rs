//! The active grants, in the person's words, and their countdown.

use super::*;
use crate::told;

/// The active grants: a line saying how many questions agents can ask now, then one row per
/// live grant ("City Housing Programme can ask whether your income is below €30,000 — 9 min
/// left", and a Stop now button naming what it stops). A row is kept while its grant lives; the
/// 1-second countdown changes its time text only, so a focused button keeps focus. Tool names
/// are in the "For developers" section only.
pub fn grants(view: &View<'_>) {
    let Some(container) = dom::by_id("grants") else {
        return;
    };
    let now_ms = view.now.millis();
    let live: Vec<_> = view
        .gate
        .grants()
        .filter(|g| g.state == GrantState::Live)
        .collect();
    let mut rows = Vec::new();
    let summary = match live.len() {
        0 => "Agents can ask no question right now.".to_owned(),
        1 => "Agents can ask 1 question right now.".to_owned(),
        n => format!("Agents can ask {n} questions right now."),
    };
    let (line, _) = dom::keep_or_build(&container, "agent-can-ask", "summary", || {
        el("p", "agent-can-ask", "")
    });
    dom::set_text_of(&line, &summary);
    rows.push(line);
    for grant in live {
        let site = told::site_of(view.gate, grant);
        let question = told::question(&grant.claim);
        let key = content_key(&(
            grant.id.as_str(),
            grant.claim.canonical(),
            grant.origin.as_str(),
            &site,
            &question,
        ));
        let (item, _) = dom::keep_or_build(
            &container,
            &format!("grant-{}", grant.id.as_str()),
            &key,
            || {
                let item = el("div", "item grant", "");
                let line = el("p", "grant-line", "");
                append(
                    &line,
                    &el("span", "grant-what", &format!("{site} can ask {question}")),
                );
                append(&line, &el("span", "", " — "));
                append(&line, &el("span", "countdown", ""));
                append(&item, &line);
                let stop = button("Stop now", "revoke", grant.id.as_str(), "danger");
                attr(
                    &stop,
                    "aria-label",
                    &format!("Stop now: {site} can no longer ask {question}"),
                );
                attr(&stop, "type", "button");
                append(&item, &stop);
                item
            },
        );
        let left = told::left(grant.expires_at.millis() - now_ms, grant.uses_left);
        if let Some(countdown) = dom::query_all(&item, ".countdown").into_iter().next() {
            dom::set_text_of(&countdown, &left);
        }
        rows.push(item);
    }
    dom::sync_children(&container, &rows);
}
