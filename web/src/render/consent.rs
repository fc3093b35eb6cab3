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

/// The consent cards: one `.request#req-<id>` per held request, in arrival order. A card whose
/// request did not change is kept as it is (the person's ticks, duration and typed reason stay);
/// only its live parts (who is asking, what each answer would reveal, what the memory would
/// decline) are updated in place.
pub(super) fn requests(view: &View<'_>) {
    let Some(container) = dom::by_id("requests") else {
        return;
    };
    let mut cards = Vec::new();
    let mut drawn = Vec::new();
    // Locked, every card says so, and its Allow button says it unlocks.
    let locked = !view.gate.is_unlocked();
    crate::choices::set_locked(locked);
    for request in held_in_arrival_order(view) {
        drawn.push(request.id.clone());
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
    crate::choices::forget_others(Some(&drawn), None);
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

/// The name the site signed, if its signature checked.
fn verified_name(request: &capability_gate::Request) -> Option<&str> {
    match &request.asker {
        capability_gate::AskerStatus::Verified { site_name } => Some(site_name.as_str()),
        capability_gate::AskerStatus::Unconfirmed => None,
    }
}

/// The card's heading, its site-name line and its purpose line, each in pieces: the wallet's
/// words, and the agent's or the site's quoted and marked ([`words::Said`]).
fn card_words(request: &capability_gate::Request) -> [Option<Vec<words::Said>>; 3] {
    let name = verified_name(request);
    let verified = name.is_some_and(|n| !n.trim().is_empty());
    [
        Some(words::card_heading(name, request.origin.as_str())),
        words::card_site_name(verified, request.site_name.as_deref()),
        Some(words::card_purpose(verified, request.purpose.as_deref())),
    ]
}

use crate::choices::allow_words;

/// Builds a consent card (the parts that follow from the request alone).
fn request_card(view: &View<'_>, request: &capability_gate::Request) -> web_sys::Element {
    let card = el("div", "item request", "");
    let heading_id = format!("req-title-{}", request.id);
    attr(&card, "role", "group");
    attr(&card, "aria-labelledby", &heading_id);
    let [heading, name, purpose] = card_words(request);
    let title = attr(&el("h3", "origin asks", ""), "id", &heading_id);
    said_into(&title, heading.as_deref().unwrap_or_default());
    append(&card, &title);
    append(&card, &asker_line(false, ""));
    let name_line = el("p", "site-text site-name", "");
    said_into(&name_line, name.as_deref().unwrap_or_default());
    if name.is_none() {
        attr(&name_line, "hidden", "");
    }
    append(&card, &name_line);
    let purpose_line = el("p", "site-text purpose", "");
    said_into(&purpose_line, purpose.as_deref().unwrap_or_default());
    append(&card, &purpose_line);
    append(
        &card,
        &el(
            "p",
            "hint",
            "Tick the questions you allow it to ask. Its agent gets a yes or a no, never your facts.",
        ),
    );
    let list = el("ul", "claims", "");
    let mut boxes = Vec::new();
    for (i, claim) in request.claims.iter().enumerate() {
        let item = el("li", "claim-item", "");
        let row = el("label", "claim", "");
        let check = el("input", "", "");
        let check_id = format!("req-{}-claim-{i}", request.id);
        attr(&check, "type", "checkbox");
        attr(&check, "id", &check_id);
        attr(&check, "data-claim-index", &i.to_string());
        let described = format!("{check_id}-reveal {check_id}-differs {check_id}-declined");
        attr(&check, "aria-describedby", &described);
        // Nothing is pre-ticked: only the person ticks a question (a claim the memory would
        // decline cannot be ticked).
        boxes.push((check.clone(), i));
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
        // A credential that answers this question differently from what the person typed
        // (issue 28 item 6): said here, hidden until then.
        append(
            &item,
            &attr(
                &attr(
                    &el("p", "differs", ""),
                    "id",
                    &format!("{check_id}-differs"),
                ),
                "hidden",
                "",
            ),
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
    let note = attr(
        &el("p", "locked-note", words::UNLOCK_TO_ANSWER),
        "hidden",
        "",
    );
    append(&card, &note);
    let actions = el("div", "row actions decision", "");
    let allow = button(
        &allow_words(capability_gate::Lifetime::DEFAULT_CHOICE, view.short_grants),
        "grant",
        request.id.as_str(),
        "primary",
    );
    append(&actions, &allow);
    let deny = button(words::DONT_ALLOW, "deny", request.id.as_str(), "danger");
    append(&actions, &deny);
    // Shown while this origin has more than one request waiting (`update_request_card`).
    let deny_all = button(
        words::DONT_ALLOW_ANY_FROM_HERE,
        "deny-all",
        request.id.as_str(),
        "danger",
    );
    attr(&deny_all, "hidden", "");
    append(&actions, &deny_all);
    append(&card, &actions);
    // What the person chooses on this card is kept in Rust from now on (`choices`): the boxes,
    // the duration (the Allow button's words follow it) and the buttons, by identity.
    crate::choices::keep_request(
        &request.id,
        &allow,
        &deny,
        &deny_all,
        boxes,
        &duration,
        capability_gate::Lifetime::DEFAULT_CHOICE,
        view.short_grants,
    );
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
    if let Some(note) = dom::query_all(card, ".locked-note").into_iter().next() {
        let locked = !view.gate.is_unlocked();
        let hidden = note.has_attribute("hidden");
        if locked && hidden {
            let _ = note.remove_attribute("hidden");
        } else if !locked && !hidden {
            attr(&note, "hidden", "");
        }
    }
    let today = view.now.date_utc();
    let (verified, who) = who_asks(view, request);
    // Who asks may change once the site's signature is checked: the heading and the lines
    // that quote the site or the agent follow.
    let [heading, name, purpose] = card_words(request);
    for (selector, pieces) in [
        ("h3.asks", heading),
        (".site-name", name),
        (".purpose", purpose),
    ] {
        if let Some(line) = dom::query_all(card, selector).into_iter().next() {
            let pieces = pieces.unwrap_or_default();
            let text: String = pieces.iter().map(words::Said::text).collect();
            if line.text_content().unwrap_or_default() != text {
                line.set_text_content(None);
                said_into(&line, &pieces);
            }
            let hidden = line.has_attribute("hidden");
            if pieces.is_empty() && !hidden {
                attr(&line, "hidden", "");
            } else if !pieces.is_empty() && hidden {
                let _ = line.remove_attribute("hidden");
            }
        }
    }
    let waiting_here = view
        .gate
        .requests()
        .filter(|r| r.origin == request.origin && r.state == capability_gate::RequestState::Held)
        .count();
    if let Some(all) = dom::query_all(card, "[data-action=deny-all]")
        .into_iter()
        .next()
    {
        let hidden = all.has_attribute("hidden");
        if waiting_here > 1 && hidden {
            let _ = all.remove_attribute("hidden");
        } else if waiting_here <= 1 && !hidden {
            attr(&all, "hidden", "");
        }
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
        if let wallet_core::Claim::IncomeBelow { .. } = claim {
            // The question's currency, only where it matters: while locked (the profile's
            // currency unknown), or when the profile's income is in another one.
            let note = view.gate.currency_note(&request.id, index);
            if let Some(e) = dom::query_all(&row, ".currency").into_iter().next() {
                dom::set_text_of(&e, note.as_deref().unwrap_or_default());
                let hidden = e.has_attribute("hidden");
                if note.is_none() && !hidden {
                    attr(&e, "hidden", "");
                } else if note.is_some() && hidden {
                    let _ = e.remove_attribute("hidden");
                }
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
        if let Some(e) = dom::query_all(&row, ".differs").into_iter().next() {
            let differs = view.gate.disagreement_on(&request.id, index, view.now);
            dom::set_text_of(&e, differs.as_deref().unwrap_or(""));
            match (differs.is_some(), e.has_attribute("hidden")) {
                (true, true) => {
                    let _ = e.remove_attribute("hidden");
                }
                (false, false) => {
                    attr(&e, "hidden", "");
                }
                _ => {}
            }
        }
        // Whether the box is ticked and can be ticked is kept in `choices` (the memory's word,
        // then the person's); the box is drawn from there.
        match &reason {
            Some(reason) => {
                attr(&check, "data-declined", reason);
                attr(&row, "data-declined", reason);
            }
            None if check.has_attribute("data-declined") => {
                let _ = check.remove_attribute("data-declined");
                let _ = row.remove_attribute("data-declined");
            }
            None => {}
        }
        crate::choices::memory_says(&request.id, index, reason.is_some());
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
            (false, format!("This is not confirmed: {why}."))
        }
    }
}
