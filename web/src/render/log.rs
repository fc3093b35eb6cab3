//! The comparison log and the session receipts, in words: each line says who asked what and
//! the answer, with the time in the browser's locale and amounts in the question's currency
//! (never minor units, tool names or hashes: those are in the exported log and the developer
//! section).

use super::*;
use capability_gate::words;

use super::consent::money_words;

pub(super) fn log(view: &View<'_>) {
    history(view);
    // Within a session the log only grows, and each entry's hash chains every earlier one: its
    // length and head (and whether it is sealed away while locked) say whether anything changed
    // since it was drawn.
    let log = view.gate.log();
    let key = format!(
        "{} {} {}",
        view.wallet.is_unlocked(),
        log.len(),
        log.head().to_hex()
    );
    if !changed("log", key) {
        return;
    }
    // A check's result counted the entries then: once the log changed, it is no longer true.
    dom::set_msg("verify-result", "", true);
    let rows: Vec<_> = view
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
            let li = el("li", outcome_class, "");
            attr(&li, "data-outcome", e.outcome.as_str());
            let when = el("time", "when", &crate::intl::date_time(e.at.millis()));
            append(&li, &when);
            append(
                &li,
                &el(
                    "span",
                    "",
                    &format!(
                        " {}",
                        words::log_line(e, view.gate.verified_site_name(&e.origin), &money_words)
                    ),
                ),
            );
            li
        })
        .collect();
    fill(
        "log",
        if rows.is_empty() {
            vec![el(
                "li",
                "empty",
                if view.wallet.is_unlocked() {
                    "No site has been told anything yet."
                } else {
                    "Unlock the wallet to read what sites were told: the log is sealed with your profile."
                },
            )]
        } else {
            rows
        },
    );
}

/// A site as the person reads it: its checked name with its address, else its address.
fn site(view: &View<'_>, origin: &wallet_core::Origin) -> String {
    words::site_label(view.gate.verified_site_name(origin), origin.as_str())
}

pub(super) fn session_receipts(view: &View<'_>) {
    let rows: Vec<_> = view
        .session_receipts
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let item = el("div", "item", "");
            let site = site(view, &r.payload.audience);
            let count = r.payload.entries.len();
            append(
                &item,
                &el(
                    "h3",
                    "origin",
                    &format!(
                        "What {site} was told this session: {count} {}",
                        if count == 1 { "answer" } else { "answers" }
                    ),
                ),
            );
            let note = match &r.signed {
                Some(signed) => format!(
                    "Signed by your signer on {}.",
                    crate::intl::date_time(signed.signed_at.millis())
                ),
                None => r.note.clone(),
            };
            append(
                &item,
                &el(
                    "p",
                    if r.signed.is_some() { "msg ok" } else { "msg" },
                    &note,
                ),
            );
            append(
                &item,
                &button(
                    &format!("Download the log for {site}"),
                    "download-session",
                    &i.to_string(),
                    "",
                ),
            );
            item
        })
        .collect();
    fill("session-receipts", rows);
}

/// A session's applications (what became of each) and receipts, one line each, into `lines`.
fn kept_lines(
    view: &View<'_>,
    lines: &web_sys::Element,
    applications: &[wallet_core::history::KeptApplication],
    receipts: &[wallet_core::history::KeptReceipt],
) {
    for a in applications {
        let item = el(
            "li",
            "application",
            &format!(
                "Application to {}: {}",
                site(view, &a.audience),
                a.sent.words()
            ),
        );
        attr(&item, "data-sent", &format!("{:?}", a.sent));
        append(lines, &item);
    }
    for r in receipts {
        let signed = if r.signed.is_some() { ", signed" } else { "" };
        append(
            lines,
            &el(
                "li",
                "receipt",
                &format!("Receipt for {}{signed}", site(view, &r.payload.audience)),
            ),
        );
    }
}

/// The history of ended sessions (sealed with the profile): one item per session, newest first,
/// with what each site was told and what became of each application. Its Download and Delete
/// buttons are `receipts`' (installed at start).
fn history(view: &View<'_>) {
    let record = view.wallet.person_record(view.gate);
    let key = match &record {
        Some(r) => format!(
            "open {} {} {} {} {}",
            r.history.len(),
            r.history.last().map_or(0, |s| s.ended_at.millis()),
            r.applications.len(),
            r.applications
                .iter()
                .filter(|a| a.sent != wallet_core::history::Sent::NotSent)
                .count(),
            r.receipts.iter().filter(|k| k.signed.is_some()).count() + r.receipts.len() * 1000,
        ),
        None => "locked".to_owned(),
    };
    if !changed("history", key) {
        return;
    }
    let Some(record) = record else {
        dom::show("history-actions", false);
        fill(
            "history",
            vec![el(
                "li",
                "empty",
                "Unlock the wallet to read the history of ended sessions.",
            )],
        );
        return;
    };
    dom::show("history-actions", !record.history.is_empty());
    let mut rows: Vec<_> = Vec::new();
    if !record.applications.is_empty() || !record.receipts.is_empty() {
        // The open session's applications and receipts, sealed too: they show after a reload.
        let li = el("li", "open-session", "");
        append(&li, &el("h3", "", "This session so far"));
        let lines = el("ul", "", "");
        kept_lines(view, &lines, &record.applications, &record.receipts);
        append(&li, &lines);
        rows.push(li);
    }
    rows.extend(record.history.iter().rev().map(|s| {
        let li = el("li", "session", "");
        attr(&li, "data-entries", &s.log.len().to_string());
        let count = s.log.len();
        append(
            &li,
            &el(
                "h3",
                "",
                &format!(
                    "Session ended {}: {count} {}",
                    crate::intl::date_time(s.ended_at.millis()),
                    if count == 1 { "answer" } else { "answers" }
                ),
            ),
        );
        let lines = el("ul", "", "");
        for e in &s.log {
            append(
                &lines,
                &el(
                    "li",
                    "",
                    &words::log_line(e, view.gate.verified_site_name(&e.origin), &money_words),
                ),
            );
        }
        kept_lines(view, &lines, &s.applications, &s.receipts);
        append(&li, &lines);
        li
    }));
    fill(
        "history",
        if rows.is_empty() {
            vec![el("li", "empty", "No session has ended yet.")]
        } else {
            rows
        },
    );
}
