//! Drawing the page from the app's state. Every piece of text goes through `textContent`; no
//! raw profile value is drawn anywhere except the profile editor's own fields.

use capability_gate::gate::tool_name_of;
use capability_gate::tool::describe;
use capability_gate::{GrantState, ProposalState, RequestState, audit_registry};
use wallet_core::{Assessment, Outcome, Timestamp};

use crate::app::{App, now};
use crate::credentials::proofs_left;
use crate::dom::{self, append, attr, button, el, fill};
use crate::person;
use crate::signer::{DEFAULT_SIGNER, Enrolment};
use wasm_bindgen::JsCast;

pub fn all(app: &App) {
    session_receipts(app);
    status(app);
    settings(app);
    person::render(app);
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

/// A short stable hash of what a card was drawn from (its `data-key`).
fn content_key(parts: &impl std::hash::Hash) -> String {
    use std::hash::Hasher;
    let mut hasher = std::hash::DefaultHasher::new();
    parts.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// The held requests in arrival order: the gate's `received_at`, then its arrival sequence
/// (never the string order of their ids).
fn held_in_arrival_order(app: &App) -> Vec<&capability_gate::Request> {
    let mut held: Vec<&capability_gate::Request> = app
        .gate
        .requests()
        .filter(|r| r.state == RequestState::Held)
        .collect();
    held.sort_by_key(|r| (r.received_at, r.arrival));
    held
}

/// Why the memory would decline a claim, in words, or `None` if it would answer.
fn declined_reason(app: &App, request_id: &str, index: usize) -> Option<String> {
    app.gate.would_decline(request_id, index).map(|why| {
        if why.to_lowercase().contains("declin") {
            why
        } else {
            format!("Would be declined: {why}")
        }
    })
}

/// A currency code in words, for the person.
fn currency_words(code: &str) -> String {
    let name = match code {
        "AUD" => "Australian dollars",
        "CAD" => "Canadian dollars",
        "CHF" => "Swiss francs",
        "CZK" => "Czech koruna",
        "DKK" => "Danish kroner",
        "EUR" => "euros",
        "GBP" => "pounds sterling",
        "HUF" => "Hungarian forint",
        "JPY" => "Japanese yen",
        "NOK" => "Norwegian kroner",
        "NZD" => "New Zealand dollars",
        "PLN" => "Polish złoty",
        "RON" => "Romanian lei",
        "SEK" => "Swedish kronor",
        "USD" => "US dollars",
        _ => return code.to_owned(),
    };
    format!("{name} ({code})")
}

/// The consent cards: one `.request#req-<id>` per held request, in arrival order. A card whose
/// request did not change is kept as it is (the person's ticks, duration and typed reason stay);
/// only its live parts (who is asking, what each answer would reveal, what the memory would
/// decline) are updated in place.
fn requests(app: &App) {
    let Some(container) = dom::by_id("requests") else {
        return;
    };
    let mut cards = Vec::new();
    for request in held_in_arrival_order(app) {
        let claims: Vec<String> = request.claims.iter().map(|c| c.canonical()).collect();
        let key = content_key(&(
            &request.id,
            request.origin.as_str(),
            &claims,
            &request.site_name,
            &request.purpose,
            app.short_grants,
        ));
        let (card, _kept) =
            dom::keep_or_build(&container, &format!("req-{}", request.id), &key, || {
                request_card(app, request)
            });
        update_request_card(app, &card, request);
        cards.push(card);
    }
    if cards.is_empty() {
        let (e, _) = dom::keep_or_build(&container, "requests-empty", "empty", || {
            empty("No request is waiting. When an agent calls request_claims, it appears here.")
        });
        cards.push(e);
    }
    dom::sync_children(&container, &cards);
}

/// Builds a consent card (the parts that follow from the request alone).
fn request_card(app: &App, request: &capability_gate::Request) -> web_sys::Element {
    let card = el("div", "item request", "");
    append(
        &card,
        &el(
            "div",
            "origin",
            &format!("{} asks (request {})", request.origin, request.id),
        ),
    );
    append(&card, &asker_line(false, ""));
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
        attr(&check, "data-claim-index", &i.to_string());
        if let Some(c) = check.dyn_ref::<web_sys::HtmlInputElement>() {
            c.set_checked(true);
        }
        append(&row, &check);
        let text = el("span", "", &describe(claim).1);
        if let wallet_core::Claim::IncomeBelow { limit } = claim {
            attr(&row, "data-currency", limit.currency.as_str());
            append(&text, &el("div", "currency", ""));
        }
        append(&text, &el("div", "reveal", ""));
        append(&text, &el("div", "declined", ""));
        append(&row, &text);
        append(&card, &row);
    }
    let duration = attr(&el("select", "", ""), "id", &format!("dur-{}", request.id));
    for (value, label) in capability_gate::Lifetime::choices(app.short_grants) {
        append(&duration, &attr(&el("option", "", label), "value", value));
    }
    let _ = attr(&duration, "aria-label", "Grant for");
    dom::set_value_of(&duration, capability_gate::Lifetime::DEFAULT_CHOICE);
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
            &attr(
                &el("p", "msg", ""),
                "id",
                &format!("req-msg-{}", request.id),
            ),
            "role",
            "status",
        ),
    );
    card
}

/// The live parts of a consent card: who is asking, what each answer would reveal, and which
/// claims the memory would decline (disabled, unticked, with the reason shown).
fn update_request_card(app: &App, card: &web_sys::Element, request: &capability_gate::Request) {
    let today = now().date_utc();
    let (verified, who) = crate::asker::describe(app, request);
    if let Some(line) = dom::query_all(card, "[data-asker]").into_iter().next() {
        let (class, state) = if verified {
            ("asker verified", "verified")
        } else {
            ("asker unconfirmed", "unconfirmed")
        };
        if line.class_name() != class {
            line.set_class_name(class);
        }
        attr(&line, "data-asker", state);
        dom::set_text_of(&line, &who);
    }
    let rows = dom::query_all(card, "label.claim");
    for ((index, claim), row) in request.claims.iter().enumerate().zip(rows) {
        let Some(check) = dom::query_all(&row, "input[data-claim-index]")
            .into_iter()
            .next()
        else {
            continue;
        };
        let reason = declined_reason(app, &request.id, index);
        if let wallet_core::Claim::IncomeBelow { limit } = claim {
            // The question's currency in words that are the same whatever the profile's
            // currency: the card is in the DOM, which a page agent can read.
            let words = app
                .gate
                .currency_note(&request.id, index)
                .unwrap_or_else(|| {
                    format!(
                        "Asked in {}. Amounts are never converted.",
                        currency_words(limit.currency.as_str())
                    )
                });
            if let Some(e) = dom::query_all(&row, ".currency").into_iter().next() {
                dom::set_text_of(&e, &words);
            }
        }
        let preview = app.gate.ledger().preview(claim, today);
        let reveal = match (&reason, preview.assessment) {
            (Some(_), _) => String::new(),
            (None, Assessment::Known(_)) => {
                "already follows from earlier answers: reveals nothing new".to_owned()
            }
            (None, _) => format!(
                "reveals up to {:.1} bits about your {} (now {:.1})",
                preview.bits_if_satisfied.max(preview.bits_if_not_satisfied),
                claim.attribute().name(),
                preview.bits_now
            ),
        };
        if let Some(e) = dom::query_all(&row, ".reveal").into_iter().next() {
            dom::set_text_of(&e, &reveal);
        }
        if let Some(e) = dom::query_all(&row, ".declined").into_iter().next() {
            dom::set_text_of(&e, reason.as_deref().unwrap_or(""));
        }
        let input = check.dyn_ref::<web_sys::HtmlInputElement>();
        match &reason {
            Some(reason) => {
                if !check.has_attribute("disabled") {
                    attr(&check, "disabled", "");
                }
                if let Some(i) = input {
                    i.set_checked(false);
                }
                attr(&check, "data-declined", reason);
                attr(&row, "data-declined", reason);
            }
            None if check.has_attribute("data-declined") => {
                // No longer declined (the fact was edited): the person ticks it themselves.
                let _ = check.remove_attribute("disabled");
                let _ = check.remove_attribute("data-declined");
                let _ = row.remove_attribute("data-declined");
            }
            None => {}
        }
    }
}

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

/// The approval cards, newest first, one `#prop-<id>` each. A card is rebuilt only when what it
/// shows changed; an application waiting for the person keeps what they unticked.
fn proposals(app: &App) {
    let Some(container) = dom::by_id("proposals") else {
        return;
    };
    let mut cards = Vec::new();
    let mut all: Vec<_> = app.gate.proposals().collect();
    all.reverse();
    for p in all {
        let (state, signed) = match &p.state {
            ProposalState::Held => ("held", false),
            ProposalState::Released { signed, .. } => ("released", signed.is_some()),
            ProposalState::Refused { .. } => ("refused", false),
        };
        let note = app.signer_notes.get(&p.id);
        let key = content_key(&(
            &p.id,
            state,
            signed,
            p.digest(),
            app.gate.presentations(&p.id).map_or(0, |d| d.len()),
            format!("{:?}", app.gate.proposal_asker(&p.id)),
            // A held card shows its note in place; others are drawn with it.
            if state == "held" { None } else { note },
        ));
        let (card, _) = dom::keep_or_build(&container, &format!("prop-{}", p.id), &key, || {
            proposal_card(app, p)
        });
        if let Some(line) = dom::by_id(&format!("prop-note-{}", p.id)) {
            dom::set_text_of(&line, note.map_or("", String::as_str));
        }
        cards.push(card);
    }
    if cards.is_empty() {
        let (e, _) = dom::keep_or_build(&container, "proposals-empty", "empty", || {
            empty("Nothing to approve. Drafts from draft_application appear here.")
        });
        cards.push(e);
    }
    dom::sync_children(&container, &cards);
}

fn proposal_card(app: &App, p: &capability_gate::Proposal) -> web_sys::Element {
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
    for (index, item) in p.items.iter().enumerate() {
        let li = el("li", "proposal-item", "");
        let label = el("label", "", "");
        let keep = el("input", "", "");
        attr(&keep, "type", "checkbox");
        attr(&keep, "data-item-index", &index.to_string());
        attr(&keep, "aria-label", "Keep this answer");
        if let Some(k) = keep.dyn_ref::<web_sys::HtmlInputElement>() {
            k.set_checked(true);
        }
        // Only a waiting application's answers can be dropped.
        if p.state == ProposalState::Held {
            append(&label, &keep);
        }
        append(
            &label,
            &el("span", "", &format!("{}: ", describe(&item.claim).1)),
        );
        append(&li, &label);
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
            "What leaves: the answers you keep ticked (of these {}), in a receipt your signer \
             signs; no value. Untick an answer to leave it out.",
            p.items.len()
        ),
        n => format!(
            "What leaves: the answers you keep ticked (of these {}), in a receipt your signer \
             signs, and for each kept proven answer a single-use proof from the issuer named \
             ({n} at most); no value, no credential beyond that.",
            p.items.len()
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
            append(
                &card,
                &attr(
                    &attr(
                        &el("p", "msg error", ""),
                        "id",
                        &format!("prop-note-{}", p.id),
                    ),
                    "role",
                    "status",
                ),
            );
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
    card
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
