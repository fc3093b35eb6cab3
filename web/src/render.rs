//! Drawing the page from the app's state. Every piece of text goes through `textContent`; no
//! raw profile value is drawn anywhere except the profile editor's own fields.

use capability_gate::gate::tool_name_of;
use capability_gate::tool::describe;
use capability_gate::{GrantState, ProposalState, RequestState, audit_registry};
use wallet_core::{Assessment, Outcome, Timestamp};

use crate::app::{App, now};
use crate::credentials::proofs_left;
use crate::dom::{self, append, attr, button, el, fill};
use crate::signer::{DEFAULT_SIGNER, Enrolment};

pub fn all(app: &App) {
    session_receipts(app);
    status(app);
    settings(app);
    credentials(app);
    crate::editor::render(app);
    requests(app);
    grants(app);
    proposals(app);
    agent(app);
    log(app);
}

fn status(app: &App) {
    let unlocked = app.gate.is_unlocked();
    dom::set_pill(
        "lock-pill",
        if unlocked { "Unlocked" } else { "Locked" },
        if unlocked { "ok" } else { "" },
    );
    let tone = match app.detection.code() {
        "available" => "ok",
        "absent" | "superseded-api" => "warn",
        _ => "bad",
    };
    dom::set_pill(
        "webmcp-pill",
        &format!("WebMCP: {}", app.detection.code()),
        tone,
    );
    if let Some(p) = dom::by_id("webmcp-pill") {
        attr(&p, "title", &app.detection.describe());
    }
    let stored = app.stored.is_some();
    dom::show("setup", !stored);
    dom::show("setup-actions", !stored);
    dom::show("facts", !stored || unlocked);
    dom::show("unlock", stored && !unlocked);
    dom::show("editor-actions", unlocked);
    dom::show("backup", true);
}

/// The Signer setting: where this browser is enrolled, if anywhere.
fn settings(app: &App) {
    let (text, ok, enrolled, origin) = match &app.enrolment {
        Enrolment::Loading => (
            "Reading this browser's enrolment…".to_owned(),
            true,
            "loading",
            DEFAULT_SIGNER.to_owned(),
        ),
        Enrolment::NotEnrolled => (
            "Not enrolled: this browser sends nothing to a signer until you enrol it with a \
             one-time code from tacit-signer enroll."
                .to_owned(),
            false,
            "false",
            DEFAULT_SIGNER.to_owned(),
        ),
        Enrolment::Enrolled(pin) => (
            format!("{}.", pin.describe()),
            true,
            "true",
            pin.signer.to_string(),
        ),
    };
    dom::set_msg("signer-status", &text, ok);
    if let Some(status) = dom::by_id("signer-status") {
        attr(&status, "data-enrolled", enrolled);
    }
    // Put the pinned signer in the field when the enrolment changes, not while the person types.
    if changed("settings", format!("{enrolled}{origin}")) {
        dom::set_value("signer-origin", &origin);
    }
    if let Some(b) = dom::by_id("enrol-btn") {
        let _ = if app.enrolling {
            b.set_attribute("disabled", "")
        } else {
            b.remove_attribute("disabled")
        };
    }
}

pub(crate) fn day(at: Timestamp) -> String {
    at.date_utc().to_string()
}

/// Settings → Credentials: one line per issuer, and whether a credential can be added now.
fn credentials(app: &App) {
    let unlocked = app.gate.is_unlocked();
    let summary = if unlocked {
        app.gate.credentials().summary(now())
    } else {
        Vec::new()
    };
    if let Some(b) = dom::by_id("add-credential-btn") {
        let _ = if app.fetching_credentials || !unlocked {
            b.set_attribute("disabled", "")
        } else {
            b.remove_attribute("disabled")
        };
    }
    let lines: Vec<(String, String, usize)> = summary
        .iter()
        .map(|s| {
            let until = match s.valid_until {
                Some(at) => format!("valid until {}", day(at)),
                None => "none valid".to_owned(),
            };
            (
                s.origin.to_string(),
                format!("From {} · {until} · {}", s.name, proofs_left(s.left)),
                s.left,
            )
        })
        .collect();
    if !changed("credentials", format!("{unlocked}{lines:?}")) {
        return;
    }
    let mut rows: Vec<_> = lines
        .into_iter()
        .map(|(origin, text, left)| {
            let item = el("div", "item credential", &text);
            attr(&item, "data-issuer", &origin);
            attr(&item, "data-left", &left.to_string());
            attr(&item, "title", &origin)
        })
        .collect();
    if rows.is_empty() {
        rows.push(empty(if unlocked {
            "No credential yet: every answer is your own word."
        } else {
            "Unlock the wallet to see and add your credentials."
        }));
    }
    fill("credential-list", rows);
}

/// The "who is asking" line: verified (green) or not confirmed (warning).
fn asker_line(verified: bool, text: &str) -> web_sys::Element {
    let line = el(
        "div",
        if verified {
            "asker verified"
        } else {
            "asker unconfirmed"
        },
        text,
    );
    attr(
        &line,
        "data-asker",
        if verified { "verified" } else { "unconfirmed" },
    )
}

fn empty(text: &str) -> web_sys::Element {
    el("p", "empty", text)
}

thread_local! {
    static DRAWN: std::cell::RefCell<std::collections::BTreeMap<&'static str, String>> =
        std::cell::RefCell::default();
}

/// Whether a section must be redrawn: only when what it shows changed, so that a reason the
/// person is typing is not wiped by an agent's unrelated call.
fn changed(section: &'static str, key: String) -> bool {
    DRAWN.with(|d| {
        let mut d = d.borrow_mut();
        if d.get(section) == Some(&key) {
            false
        } else {
            d.insert(section, key);
            true
        }
    })
}

fn requests(app: &App) {
    let held: Vec<&str> = app
        .gate
        .requests()
        .filter(|r| r.state == RequestState::Held)
        .map(|r| r.id.as_str())
        .collect();
    let ledger = serde_json::to_string(app.gate.ledger()).unwrap_or_default();
    let askers: Vec<String> = app
        .gate
        .requests()
        .filter(|r| r.state == RequestState::Held)
        .map(|r| crate::asker::describe(app, r).1)
        .collect();
    if !changed(
        "requests",
        format!("{held:?}{ledger}{}{askers:?}", app.gate.is_unlocked()),
    ) {
        return;
    }
    let today = now().date_utc();
    let mut cards = Vec::new();
    for request in app
        .gate
        .requests()
        .filter(|r| r.state == RequestState::Held)
    {
        let card = attr(&el("div", "item", ""), "id", &format!("req-{}", request.id));
        append(
            &card,
            &el(
                "div",
                "origin",
                &format!("{} asks (request {})", request.origin, request.id),
            ),
        );
        let (verified, who) = crate::asker::describe(app, request);
        append(&card, &asker_line(verified, &who));
        if let Some(name) = &request.site_name {
            append(
                &card,
                &el("div", "site-text", &format!("Site calls itself: {name}")),
            );
        }
        if let Some(purpose) = &request.purpose {
            append(
                &card,
                &el("div", "site-text", &format!("Site says: {purpose}")),
            );
        }
        for (i, claim) in request.claims.iter().enumerate() {
            let row = el("label", "claim", "");
            let check = el("input", "", "");
            attr(&check, "type", "checkbox");
            attr(&check, "checked", "");
            attr(&check, "data-claim-index", &i.to_string());
            append(&row, &check);
            let text = el("span", "", &describe(claim).1);
            let preview = app.gate.ledger().preview(claim, today);
            let reveal = match preview.assessment {
                Assessment::Decline => {
                    "would be declined: answering would cross your privacy floor".to_owned()
                }
                Assessment::Known(_) => {
                    "already follows from earlier answers: reveals nothing new".to_owned()
                }
                Assessment::Evaluate => format!(
                    "reveals up to {:.1} bits about your {} (now {:.1})",
                    preview.bits_if_satisfied.max(preview.bits_if_not_satisfied),
                    claim.attribute().name(),
                    preview.bits_now
                ),
            };
            append(&text, &el("div", "reveal", &reveal));
            append(&row, &text);
            append(&card, &row);
        }
        let duration = attr(&el("select", "", ""), "id", &format!("dur-{}", request.id));
        let mut choices = vec![
            ("60000", "1 minute"),
            ("600000", "10 minutes"),
            ("3600000", "1 hour"),
            ("once", "One use"),
        ];
        if app.short_grants {
            choices.insert(0, ("2000", "2 seconds"));
        }
        for (value, label) in choices {
            append(&duration, &attr(&el("option", "", label), "value", value));
        }
        let _ = attr(&duration, "aria-label", "Grant for");
        dom::set_value_of(&duration, "600000");
        let actions = el("div", "row", "");
        append(&actions, &duration);
        append(&actions, &button("Grant", "grant", &request.id, "primary"));
        append(
            &actions,
            &attr(
                &attr(&el("input", "", ""), "id", &format!("deny-{}", request.id)),
                "placeholder",
                "Reason to deny (optional)",
            ),
        );
        append(&actions, &button("Deny", "deny", &request.id, "danger"));
        append(&card, &actions);
        append(
            &card,
            &attr(
                &el("p", "msg", ""),
                "id",
                &format!("req-msg-{}", request.id),
            ),
        );
        cards.push(card);
    }
    if cards.is_empty() {
        cards.push(empty(
            "No request is waiting. When an agent calls request_claims, it appears here.",
        ));
    }
    fill("requests", cards);
}

pub fn grants(app: &App) {
    let now_ms = now().millis();
    let mut rows = Vec::new();
    for grant in app.gate.grants().filter(|g| g.state == GrantState::Live) {
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
        let left = ((grant.expires_at.millis() - now_ms).max(0) / 1000) as u64;
        let uses = grant
            .uses_left
            .map(|u| format!(", {u} use left"))
            .unwrap_or_default();
        append(
            &item,
            &el(
                "span",
                "countdown",
                &format!("expires in {}:{:02}{uses} ", left / 60, left % 60),
            ),
        );
        append(
            &item,
            &button("Revoke", "revoke", grant.id.as_str(), "danger"),
        );
        rows.push(item);
    }
    if rows.is_empty() {
        rows.push(empty("No active grant: no claim tool exists."));
    }
    fill("grants", rows);
}

fn proposals(app: &App) {
    let key: Vec<String> = app
        .gate
        .proposals()
        .map(|p| format!("{}:{:?}", p.id, std::mem::discriminant(&p.state)))
        .chain(app.signer_notes.values().cloned())
        .chain(app.gate.proposals().filter_map(|p| match &p.state {
            ProposalState::Released { signed, .. } => Some(format!(
                "{}{}",
                signed.is_some(),
                app.gate.presentations(&p.id).map_or(0, |d| d.len())
            )),
            _ => None,
        }))
        .chain(
            app.gate
                .proposals()
                .filter_map(|p| app.gate.proposal_asker(&p.id))
                .map(|a| format!("{a:?}")),
        )
        .collect();
    if !changed("proposals", key.join("|")) {
        return;
    }
    let mut cards = Vec::new();
    let mut all: Vec<_> = app.gate.proposals().collect();
    all.reverse();
    for p in all {
        let card = el("div", "item", "");
        append(
            &card,
            &el(
                "div",
                "origin",
                &format!("Application to {} (nonce {})", p.audience, p.nonce),
            ),
        );
        let list = el("ul", "", "");
        let mut proofs = 0;
        for item in &p.items {
            let li = el(
                "li",
                "proposal-item",
                &format!("{}: ", describe(&item.claim).1),
            );
            let answer = if item.satisfied { "yes" } else { "no" };
            append(&li, &el("span", answer, answer));
            match &item.issuer {
                Some(issuer) => {
                    proofs += 1;
                    let credentials = app.gate.credentials();
                    let name = item
                        .issuer_name
                        .clone()
                        .or_else(|| credentials.issuer_name(issuer).map(str::to_owned))
                        .unwrap_or_else(|| issuer.to_string());
                    attr(&li, "data-proof", "issuer");
                    // The origin beside the name: an issuer elsewhere can take any name.
                    let proof = if name == issuer.as_str() {
                        format!("proven by {name}")
                    } else {
                        format!("proven by {name} ({issuer})")
                    };
                    append(&li, &el("span", "proof", &proof));
                    let currency = credentials.issuer(issuer).and_then(|i| i.currency());
                    let shows = tacit_protocol::predicates::disclosure_for(&item.claim, currency)
                        .map(|d| format!("only {d} = {}", item.satisfied))
                        .unwrap_or_else(|| "only this answer".to_owned());
                    append(
                        &li,
                        &el(
                            "div",
                            "leaves",
                            &format!(
                                "Leaves with it: one single-use proof from {name} showing \
                                 {shows}, for {} only.",
                                p.audience
                            ),
                        ),
                    );
                }
                None => {
                    attr(&li, "data-proof", "self");
                    append(&li, &el("span", "proof", "your word"));
                }
            }
            append(&list, &li);
        }
        append(&card, &list);
        let leaves = match proofs {
            0 => format!(
                "What leaves: these {} answers, in a receipt your signer signs; no value.",
                p.items.len()
            ),
            n => format!(
                "What leaves: these {} answers, in a receipt your signer signs, and {n} \
                 single-use {} from the issuers named; no value, no credential beyond that.",
                p.items.len(),
                if n == 1 { "proof" } else { "proofs" }
            ),
        };
        append(&card, &el("p", "leaves", &leaves));
        match &p.state {
            ProposalState::Held => {
                append(
                    &card,
                    &el(
                        "div",
                        "mono",
                        &format!("digest {}", p.digest().get(..16).unwrap_or("")),
                    ),
                );
                match app.gate.proposal_asker(&p.id) {
                    Some(capability_gate::AskerStatus::Verified { site_name }) => append(
                        &card,
                        &asker_line(true, &format!("Verified: {site_name} at {}", p.audience)),
                    ),
                    _ => {
                        append(
                            &card,
                            &asker_line(
                                false,
                                &format!(
                                    "An agent says this is for {}; this is not confirmed.",
                                    p.audience
                                ),
                            ),
                        );
                        let label = el("label", "ack", "");
                        let check = el("input", "", "");
                        attr(&check, "type", "checkbox");
                        attr(&check, "id", &format!("ack-{}", p.id));
                        attr(&check, "data-ack-unconfirmed", &p.id);
                        append(&label, &check);
                        append(
                            &label,
                            &el("span", "", "I understand this site is not confirmed"),
                        );
                        append(&card, &label);
                    }
                }
                if let Some(note) = app.signer_notes.get(&p.id) {
                    append(&card, &el("p", "msg error", note));
                }
                let b = button("Release", "release", &p.id, "primary");
                attr(&b, "data-digest", p.digest());
                append(&card, &b);
                append(
                    &card,
                    &attr(
                        &attr(&el("input", "", ""), "id", &format!("refuse-{}", p.id)),
                        "placeholder",
                        "Reason to refuse",
                    ),
                );
                append(&card, &button("Refuse", "refuse", &p.id, "danger"));
            }
            ProposalState::Refused { reason } => {
                append(&card, &el("p", "msg error", &format!("Refused: {reason}")))
            }
            ProposalState::Released { signed, .. } => {
                let state = if signed.is_some() {
                    "Released and signed."
                } else {
                    "Released, not signed yet."
                };
                append(&card, &el("p", "msg ok", state));
                if let Some(done) = app.gate.presentations(&p.id) {
                    append(
                        &card,
                        &el(
                            "p",
                            "msg ok",
                            &format!(
                                "{} {} attached for {}.",
                                done.len(),
                                if done.len() == 1 { "proof" } else { "proofs" },
                                p.audience
                            ),
                        ),
                    );
                }
                if let Some(note) = app.signer_notes.get(&p.id) {
                    append(&card, &el("p", "msg", note));
                }
                if signed.is_none() {
                    append(
                        &card,
                        &button("Ask the signer again", "sign-again", &p.id, ""),
                    );
                }
                append(
                    &card,
                    &button("Download receipt", "download-receipt", &p.id, ""),
                );
            }
        }
        cards.push(card);
    }
    if cards.is_empty() {
        cards.push(empty(
            "Nothing to approve. Drafts from draft_application appear here.",
        ));
    }
    fill("proposals", cards);
}

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

pub fn clock(ms: i64) -> String {
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
    format!(
        "{:02}:{:02}:{:02}",
        d.get_hours(),
        d.get_minutes(),
        d.get_seconds()
    )
}

fn log(app: &App) {
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

fn session_receipts(app: &App) {
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
