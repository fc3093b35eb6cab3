//! The consent cards: one per held request, in arrival order.

use super::*;

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
pub(super) fn requests(app: &App) {
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
