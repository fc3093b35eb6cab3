//! The approval cards: applications waiting for the person, then the ones already sent (or
//! refused) in a "Sent" list below them, inside `#proposals`.

use super::*;
use capability_gate::words;

use super::consent::money_words;

/// Who an application goes to, for the person: the site's signed name if a request from it was
/// verified, otherwise its address.
fn site_of(view: &View<'_>, p: &capability_gate::Proposal) -> (bool, String) {
    match view.gate.proposal_asker(&p.id) {
        Some(capability_gate::AskerStatus::Verified { site_name }) => (
            true,
            words::site_label(Some(&site_name), p.audience.as_str()),
        ),
        _ => (false, words::site_label(None, p.audience.as_str())),
    }
}

/// The approval cards, newest first, one `#prop-<id>` each: waiting ones directly in
/// `#proposals`, sent and refused ones in its "Decided" list. A card is rebuilt only when what it
/// shows changed; an application waiting for the person keeps what they ticked.
pub(super) fn proposals(view: &View<'_>) {
    let Some(container) = dom::by_id("proposals") else {
        return;
    };
    let (sent_box, _) = dom::keep_or_build(&container, "proposals-sent", "sent", || {
        let section = el("section", "sent", "");
        attr(&section, "aria-labelledby", "proposals-sent-title");
        append(
            &section,
            // Both kinds are listed here: the heading says so (issue 30, item 7: "Not sent to …"
            // stood under a heading that said "Sent").
            &attr(
                &el("h3", "", "Decided: sent or not sent"),
                "id",
                "proposals-sent-title",
            ),
        );
        append(
            &section,
            &attr(&el("div", "", ""), "id", "proposals-sent-list"),
        );
        section
    });
    let sent_list = dom::query_all(&sent_box, "#proposals-sent-list")
        .into_iter()
        .next()
        .unwrap_or_else(|| sent_box.clone());
    let mut waiting = Vec::new();
    let mut sent = Vec::new();
    let mut all: Vec<_> = view.gate.proposals().collect();
    all.reverse();
    for p in all {
        let (state, signed) = match &p.state {
            ProposalState::Held => ("held", false),
            ProposalState::Released { signed, .. } => ("released", signed.is_some()),
            ProposalState::Refused { .. } => ("refused", false),
        };
        let note = view.signer_notes.get(&p.id);
        let key = content_key(&(
            &p.id,
            state,
            signed,
            p.digest(),
            view.gate.presentations(&p.id).map_or(0, |d| d.len()),
            format!("{:?}", view.gate.proposal_asker(&p.id)),
            // A held card shows its note in place; others are drawn with it.
            if state == "held" { None } else { note },
        ));
        let parent = if state == "held" {
            &container
        } else {
            &sent_list
        };
        let (card, _) = dom::keep_or_build(parent, &format!("prop-{}", p.id), &key, || {
            proposal_card(view, p)
        });
        if let Some(line) = dom::by_id(&format!("prop-note-{}", p.id)) {
            dom::set_text_of(&line, note.map_or("", String::as_str));
        }
        if state == "held" {
            waiting.push(card);
        } else {
            sent.push(card);
        }
    }
    if waiting.is_empty() {
        let (e, _) = dom::keep_or_build(&container, "proposals-empty", "empty", || {
            empty("No application is waiting for you.")
        });
        waiting.push(e);
    }
    match (sent.is_empty(), sent_box.has_attribute("hidden")) {
        (true, false) => {
            attr(&sent_box, "hidden", "");
        }
        (false, true) => {
            let _ = sent_box.remove_attribute("hidden");
        }
        _ => {}
    }
    let held: Vec<ProposalId> = view
        .gate
        .proposals()
        .filter(|p| p.state == ProposalState::Held)
        .map(|p| p.id.clone())
        .collect();
    crate::choices::forget_others(None, Some(&held));
    dom::sync_children(&sent_list, &sent);
    waiting.push(sent_box);
    dom::sync_children(&container, &waiting);
}

fn proposal_card(view: &View<'_>, p: &capability_gate::Proposal) -> web_sys::Element {
    let card = el("div", "item approval", "");
    let (verified, site) = site_of(view, p);
    let title_id = format!("prop-title-{}", p.id);
    attr(&card, "role", "group");
    attr(&card, "aria-labelledby", &title_id);
    let (before, after) = match &p.state {
        ProposalState::Held => ("Send these answers to ", "?"),
        ProposalState::Released { .. } => ("Sent to ", ""),
        ProposalState::Refused { .. } => ("Not sent to ", ""),
    };
    // The site's address is the agent's word unless a request from it was verified.
    let named = if verified {
        words::Said::Site(site.clone())
    } else {
        words::Said::Agent(site.clone())
    };
    let title = attr(&el("h3", "origin", ""), "id", &title_id);
    said_into(
        &title,
        &[
            words::Said::Wallet(before.to_owned()),
            named,
            words::Said::Wallet(after.to_owned()),
        ],
    );
    append(&card, &title);
    let list = el("ul", "answers", "");
    let mut proofs = 0;
    let mut boxes = Vec::new();
    for (index, item) in p.items.iter().enumerate() {
        let li = el("li", "proposal-item", "");
        let label = el("label", "", "");
        let keep = el("input", "", "");
        attr(&keep, "type", "checkbox");
        attr(&keep, "data-item-index", &index.to_string());
        // Unticked: the person ticks each answer to send (`choices` keeps what they tick).
        if let Some(k) = keep.dyn_ref::<web_sys::HtmlInputElement>() {
            k.set_checked(false);
        }
        // Only a waiting application's answers can be dropped.
        if p.state == ProposalState::Held {
            boxes.push((keep.clone(), index));
            append(&label, &keep);
        }
        append(
            &label,
            &el(
                "span",
                "question",
                &words::question(&item.claim, &money_words),
            ),
        );
        append(&li, &label);
        let answer = words::yes_no(item.satisfied);
        let said = el("span", "answer", "Your answer: ");
        append(&said, &el("strong", answer, answer));
        append(&li, &said);
        match &item.issuer {
            Some(_) => {
                proofs += 1;
                let name = words::item_issuer(item, view.gate.credentials()).unwrap_or_default();
                attr(&li, "data-proof", "issuer");
                append(&li, &el("span", "proof", &format!("proven by {name}")));
                append(
                    &li,
                    &el(
                        "p",
                        "leaves",
                        &format!(
                            "Goes with it: a proof from {name} that this answer is {answer}, \
                             usable once and by {site} only."
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
    if p.state == ProposalState::Held {
        let leaves = match proofs {
            0 => "Tick the answers to send. What is sent: the answers you tick, in a receipt \
                  your signer signs. None of your facts."
                .to_owned(),
            _ => "Tick the answers to send. What is sent: the answers you tick, in a receipt \
                  your signer signs, and for each proven answer you tick, its proof. None of \
                  your facts."
                .to_owned(),
        };
        append(&card, &el("p", "leaves", &leaves));
    }
    let developer = el("details", "for-developers", "");
    append(&developer, &el("summary", "", "Details for developers"));
    append(
        &developer,
        &el("p", "mono", &format!("Audience {}", p.audience)),
    );
    append(&developer, &el("p", "mono", &format!("Nonce {}", p.nonce)));
    append(
        &developer,
        &el("p", "mono", &format!("Digest {}", p.digest())),
    );
    match &p.state {
        ProposalState::Held => {
            let mut ack = None;
            if verified {
                append(
                    &card,
                    &asker_line(true, &format!("Verified: {site} at {}", p.audience)),
                );
            } else {
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
                attr(&check, "data-ack-unconfirmed", p.id.as_str());
                append(&label, &check);
                append(
                    &label,
                    &el("span", "", "I understand this site is not confirmed"),
                );
                append(&card, &label);
                ack = Some(check);
            }
            append(
                &card,
                &status_line("msg error", &format!("prop-note-{}", p.id)),
            );
            let actions = el("div", "row actions decision", "");
            let b = button(
                &format!("Send to {site}"),
                "release",
                p.id.as_str(),
                "primary",
            );
            attr(&b, "data-digest", p.digest());
            append(&actions, &b);
            let refuse = button("Don't send", "refuse", p.id.as_str(), "danger");
            append(&actions, &refuse);
            append(&card, &actions);
            // What the person keeps, acknowledges and clicks on this card is kept in Rust from
            // now on (`choices`), with the digest it shows.
            crate::choices::keep_proposal(
                &p.id,
                &b,
                &refuse,
                std::mem::take(&mut boxes),
                ack.as_ref(),
                p.digest(),
            );
            append(&card, &reason_field(&format!("refuse-{}", p.id)));
        }
        ProposalState::Refused { reason } => {
            let text = if reason.trim().is_empty() {
                "You chose not to send this.".to_owned()
            } else {
                format!("You chose not to send this: {reason}")
            };
            append(&card, &el("p", "msg error", &text));
        }
        ProposalState::Released { signed, .. } => {
            match signed {
                Some(signed) => {
                    append(
                        &card,
                        &el(
                            "p",
                            "msg ok",
                            &format!(
                                "Signed by your signer on {}.",
                                crate::intl::date_time(signed.signed_at.millis())
                            ),
                        ),
                    );
                    append(
                        &developer,
                        &el("p", "mono", &format!("Signer key {}", signed.key_id)),
                    );
                }
                None => append(&card, &el("p", "msg", "Sent, not signed yet.")),
            }
            if let Some(done) = view.gate.presentations(&p.id) {
                let text = match done.len() {
                    1 => format!("1 proof goes with it, for {site} only."),
                    n => format!("{n} proofs go with it, for {site} only."),
                };
                append(&card, &el("p", "msg ok", &text));
            }
            // The signer's own note, unless the sentence above already says it is signed.
            if let Some(note) = view.signer_notes.get(&p.id)
                && signed.is_none()
            {
                append(&card, &el("p", "msg", note));
            }
            let actions = el("div", "row actions", "");
            if signed.is_none() {
                append(
                    &actions,
                    &button("Ask the signer again", "sign-again", p.id.as_str(), ""),
                );
            }
            append(
                &actions,
                &button(
                    "Download this receipt",
                    "download-receipt",
                    p.id.as_str(),
                    "",
                ),
            );
            append(&card, &actions);
        }
    }
    append(&card, &developer);
    card
}
