//! The active grants and their countdown.

use super::*;

/// The active grants: one row per live grant, kept while it lives; the 1-second countdown
/// updates its text only (a Revoke button is never re-created under the person's pointer).
pub fn grants(app: &App) {
    let Some(container) = dom::by_id("grants") else {
        return;
    };
    let now_ms = now().millis();
    let mut rows = Vec::new();
    for grant in app.gate.grants().filter(|g| g.state == GrantState::Live) {
        let key = content_key(&(
            grant.id.as_str(),
            grant.claim.canonical(),
            grant.origin.as_str(),
        ));
        let (item, _) = dom::keep_or_build(
            &container,
            &format!("grant-{}", grant.id.as_str()),
            &key,
            || {
                let item = el("div", "item", "");
                let name = tool_name_of(grant)
                    .map(|n| n.as_str().to_owned())
                    .unwrap_or_default();
                append(&item, &el("div", "mono", &name));
                append(
                    &item,
                    &el(
                        "div",
                        "",
                        &format!("{} — for {}", describe(&grant.claim).1, grant.origin),
                    ),
                );
                append(&item, &el("span", "countdown", ""));
                append(
                    &item,
                    &button("Revoke", "revoke", grant.id.as_str(), "danger"),
                );
                item
            },
        );
        let left = ((grant.expires_at.millis() - now_ms).max(0) / 1000) as u64;
        let uses = grant
            .uses_left
            .map(|u| format!(", {u} use left"))
            .unwrap_or_default();
        if let Some(countdown) = dom::query_all(&item, ".countdown").into_iter().next() {
            dom::set_text_of(
                &countdown,
                &format!("expires in {}:{:02}{uses} ", left / 60, left % 60),
            );
        }
        rows.push(item);
    }
    if rows.is_empty() {
        let (e, _) = dom::keep_or_build(&container, "grants-empty", "empty", || {
            empty("No active grant: no claim tool exists.")
        });
        rows.push(e);
    }
    dom::sync_children(&container, &rows);
}
