//! The approval cards: applications waiting for the person, and released ones.

use super::*;

/// The approval cards, newest first, one `#prop-<id>` each. A card is rebuilt only when what it
/// shows changed; an application waiting for the person keeps what they unticked.
pub(super) fn proposals(app: &App) {
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
