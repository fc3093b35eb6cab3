//! The consent cards: one per held request, in arrival order.

use super::*;
use capability_gate::words;

/// The held requests in arrival order: the gate's `received_at`, then its arrival sequence
/// (never the string order of their ids).
fn held_in_arrival_order<'a>(view: &View<'a>) -> Vec<&'a capability_gate::Request> {
    let mut held: Vec<&capability_gate::Request> = view
        .gate
        .requests()
        .filter(|r| r.state == RequestState::Held)
        .collect();
    held.sort_by_key(|r| (r.received_at, r.arrival));
    held
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
pub(super) fn requests(view: &View<'_>) {
    let Some(container) = dom::by_id("requests") else {
        return;
    };
    let mut cards = Vec::new();
    for request in held_in_arrival_order(view) {
        let claims: Vec<String> = request.claims.iter().map(|c| c.canonical()).collect();
        let key = content_key(&(
            &request.id,
            request.origin.as_str(),
            &claims,
            &request.site_name,
            &request.purpose,
            view.short_grants,
        ));
        let (card, _kept) =
            dom::keep_or_build(&container, &format!("req-{}", request.id), &key, || {
                request_card(view, request)
            });
        update_request_card(view, &card, request);
        cards.push(card);
    }
    if cards.is_empty() {
        let (e, _) = dom::keep_or_build(&container, "requests-empty", "empty", || {
            empty(
                "No site is waiting for an answer. When an agent asks on a site's behalf, it appears here.",
            )
        });
        cards.push(e);
    }
    dom::sync_children(&container, &cards);
}

/// Amounts for people: the browser's `Intl.NumberFormat` in the amount's currency.
pub(super) use crate::intl::money_of as money_words;

/// Who asks, for the heading: the name the site signed if its signature checked, otherwise
/// its address (a name only the agent gave is shown apart, as the site's own words).
fn site_of(request: &capability_gate::Request) -> String {
    let verified = match &request.asker {
        capability_gate::AskerStatus::Verified { site_name } => Some(site_name.as_str()),
        capability_gate::AskerStatus::Unconfirmed => None,
    };
    words::site_label(verified, request.origin.as_str())
}

/// The Allow button's words for the duration chosen in `select` ("Allow for 10 minutes").
fn allow_words(choice: &str, short: bool) -> String {
    capability_gate::Lifetime::from_choice(choice, short)
        .map(|l| words::allow(&l))
        .unwrap_or_else(|| "Allow".to_owned())
}

/// Builds a consent card (the parts that follow from the request alone).
fn request_card(view: &View<'_>, request: &capability_gate::Request) -> web_sys::Element {
    let card = el("div", "item request", "");
    let heading_id = format!("req-title-{}", request.id);
    attr(&card, "role", "group");
    attr(&card, "aria-labelledby", &heading_id);
    append(
        &card,
        &attr(
            &el("h3", "origin asks", &words::heading(&site_of(request))),
            "id",
            &heading_id,
        ),
    );
    append(&card, &asker_line(false, ""));
    if let Some(name) = &request.site_name {
        append(
            &card,
            &el("p", "site-text", &format!("The site calls itself: {name}")),
        );
    }
    match &request.purpose {
        Some(purpose) => append(
            &card,
            &el(
                "p",
                "site-text purpose",
                &format!("What for, in the site's words: {purpose}"),
            ),
        ),
        None => append(
            &card,
            &el(
                "p",
                "site-text purpose",
                "The site did not say what this is for.",
            ),
        ),
    }
    append(
        &card,
        &el(
            "p",
            "hint",
            "Tick the questions you allow it to ask. Its agent gets a yes or a no, never your facts.",
        ),
    );
    let list = el("ul", "claims", "");
    for (i, claim) in request.claims.iter().enumerate() {
        let item = el("li", "claim-item", "");
        let row = el("label", "claim", "");
        let check = el("input", "", "");
        let check_id = format!("req-{}-claim-{i}", request.id);
        attr(&check, "type", "checkbox");
        attr(&check, "id", &check_id);
        attr(&check, "data-claim-index", &i.to_string());
        let described = format!("{check_id}-reveal {check_id}-declined");
        attr(&check, "aria-describedby", &described);
        // Nothing is pre-ticked until the memory said it would answer (update_request_card
        // ticks it then, once; a claim it would decline is never ticked).
        append(&row, &check);
        let text = el("span", "question", &words::question(claim, &money_words));
        append(&row, &text);
        // Why it stays unticked, inside the label: read with the box itself.
        append(
            &row,
            &attr(
                &el("span", "declined", ""),
                "id",
                &format!("{check_id}-declined"),
            ),
        );
        append(&item, &row);
        if let wallet_core::Claim::IncomeBelow { limit } = claim {
            attr(&row, "data-currency", limit.currency.as_str());
            append(&item, &el("p", "currency", ""));
        }
        append(
            &item,
            &attr(&el("p", "reveal", ""), "id", &format!("{check_id}-reveal")),
        );
        let bits = el("details", "bits", "");
        append(&bits, &el("summary", "", "In numbers"));
        append(&bits, &el("p", "bits-line", ""));
        append(&item, &bits);

        append(&list, &item);
    }
    append(&card, &list);
    let dur_id = format!("dur-{}", request.id);
    let choose = el("div", "field duration", "");
    append(
        &choose,
        &attr(&el("label", "", words::DURATION_LABEL), "for", &dur_id),
    );
    let duration = attr(&el("select", "", ""), "id", &dur_id);
    for (value, label) in capability_gate::Lifetime::choices(view.short_grants) {
        append(&duration, &attr(&el("option", "", label), "value", value));
    }
    dom::set_value_of(&duration, capability_gate::Lifetime::DEFAULT_CHOICE);
    append(&choose, &duration);
    append(&card, &choose);
    let actions = el("div", "row actions", "");
    let allow = button(
        &allow_words(capability_gate::Lifetime::DEFAULT_CHOICE, view.short_grants),
        "grant",
        request.id.as_str(),
        "primary",
    );
    append(&actions, &allow);
    append(
        &actions,
        &button(words::DONT_ALLOW, "deny", request.id.as_str(), "danger"),
    );
    append(&card, &actions);
    // The button follows the duration choice.
    if let Some(select) = duration.dyn_ref::<web_sys::HtmlSelectElement>() {
        let (select_c, short) = (select.clone(), view.short_grants);
        let follow = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(move || {
            dom::set_text_of(&allow, &allow_words(&select_c.value(), short));
        });
        select.set_onchange(Some(wasm_bindgen::JsCast::unchecked_ref(
            &follow.into_js_value(),
        )));
    }
    append(&card, &reason_field(&format!("deny-{}", request.id)));
    append(
        &card,
        &status_line("msg", &format!("req-msg-{}", request.id)),
    );
    card
}

/// The live parts of a consent card: who is asking, what each answer would reveal, and which
/// claims the memory would decline (disabled, unticked, with the reason shown).
fn update_request_card(
    view: &View<'_>,
    card: &web_sys::Element,
    request: &capability_gate::Request,
) {
    let today = view.now.date_utc();
    let (verified, who) = who_asks(view, request);
    if let Some(heading) = dom::query_all(card, "h3.asks").into_iter().next() {
        dom::set_text_of(&heading, &words::heading(&site_of(request)));
    }
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
    // The Allow button says the duration the select holds now (also after a redraw).
    if let Some(allow) = dom::query_all(card, "[data-action=grant]")
        .into_iter()
        .next()
    {
        let choice = dom::query_all(card, "select")
            .into_iter()
            .next()
            .and_then(|s| s.dyn_into::<web_sys::HtmlSelectElement>().ok())
            .map(|s| s.value())
            .unwrap_or_default();
        dom::set_text_of(&allow, &allow_words(&choice, view.short_grants));
    }
    let floors = view.gate.ledger().floors();
    let rows = dom::query_all(card, "li.claim-item");
    for ((index, claim), row) in request.claims.iter().enumerate().zip(rows) {
        let Some(check) = dom::query_all(&row, "input[data-claim-index]")
            .into_iter()
            .next()
        else {
            continue;
        };
        let reason = view
            .gate
            .would_decline(&request.id, index)
            .map(|_| words::declined(claim.attribute()));
        if let wallet_core::Claim::IncomeBelow { limit } = claim {
            // The question's currency in words that are the same whatever the profile's
            // currency: the card is in the DOM, which a page agent can read.
            let words = view
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
        let preview = view.gate.ledger().preview(claim, today);
        let (reveal, bits) = match &reason {
            Some(_) => (String::new(), String::new()),
            None => (
                words::reveals(claim, preview.assessment, &floors, &money_words),
                words::bits_detail(claim.attribute(), &preview),
            ),
        };
        if let Some(e) = dom::query_all(&row, ".reveal").into_iter().next() {
            dom::set_text_of(&e, &reveal);
        }
        if let Some(e) = dom::query_all(&row, ".bits-line").into_iter().next() {
            dom::set_text_of(&e, &bits);
        }
        if let Some(bits) = dom::query_all(&row, "details.bits").into_iter().next() {
            let hidden = bits.has_attribute("hidden");
            match (&reason, hidden) {
                (Some(_), false) => {
                    attr(&bits, "hidden", "");
                }
                (None, true) => {
                    let _ = bits.remove_attribute("hidden");
                }
                _ => {}
            }
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
                attr(&check, "data-ticked", "");
            }
            None if check.has_attribute("data-declined") => {
                // No longer declined (the fact was edited): the person ticks it themselves.
                let _ = check.remove_attribute("disabled");
                let _ = check.remove_attribute("data-declined");
                let _ = row.remove_attribute("data-declined");
            }
            None => {
                // The first time the memory says it would answer, the box starts ticked; after
                // that it is the person's.
                if !check.has_attribute("data-ticked") {
                    attr(&check, "data-ticked", "");
                    if let Some(i) = input {
                        i.set_checked(true);
                    }
                }
            }
        }
    }
}

/// The line the consent card shows about who is asking.
fn who_asks(view: &View<'_>, request: &capability_gate::Request) -> (bool, String) {
    match &request.asker {
        capability_gate::AskerStatus::Verified { site_name } => {
            (true, format!("Verified: {site_name} at {}", request.origin))
        }
        capability_gate::AskerStatus::Unconfirmed => {
            let why = match (&request.attestation, view.asker_checks.get(&request.id)) {
                (None, _) => "the site gave no signature",
                (Some(_), Some(AskerCheck::Failed(why))) => why,
                (Some(_), _) => "checking the site's signature…",
            };
            (
                false,
                format!(
                    "An agent says this is for {}; this is not confirmed ({why}).",
                    request.origin
                ),
            )
        }
    }
}
