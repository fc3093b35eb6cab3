//! The person's decisions on what agents asked: grant, deny, revoke, release, refuse, end the
//! session, and the receipts that follow.

use capability_gate::consent::Confirmed;
use capability_gate::{Acknowledgement, GateError, Lifetime, ProposalId, RequestId, check_signed};
use wallet_core::GrantId;

use crate::actions::{download, run};
use crate::app::{App, now, with_app};
use crate::person::{self, Act};
use crate::signer::{self, SignError};
use crate::{credentials, dom};

/// Routes a trusted click on a decision's `[data-action]` (the router has checked `isTrusted`).
/// Grant, Release and End session read the card's choices now, then wait for the person's act
/// ([`person::ask`]); the others act at once.
///
/// A request's or proposal's `data-id` is parsed here, at the page's edge: a text that is no id
/// names nothing, and nothing happens (as for an id the gate does not hold).
pub fn on_action(action: &str, id: &str, button: &web_sys::Element) {
    let request = || RequestId::parse(id).ok();
    let proposal = || ProposalId::parse(id).ok();
    match action {
        "grant" => {
            if let Some(act) = request().and_then(|id| snapshot_grant(&id)) {
                person::ask(act);
            }
        }
        "deny" => {
            if let Some(id) = request() {
                run(|app| deny(app, &id));
            }
        }
        "revoke" => run(|app| revoke(app, id)),
        "release" => {
            if let Some(act) = proposal().and_then(|id| snapshot_release(&id, button)) {
                person::ask(act);
            }
        }
        "refuse" => {
            if let Some(id) = proposal() {
                run(|app| refuse(app, &id));
            }
        }
        "sign-again" => {
            if let Some(id) = proposal() {
                sign_later(id);
            }
        }
        "download-receipt" => {
            if let Some(id) = proposal() {
                download_receipt(&id);
            }
        }
        "end-session" => person::ask(Act::EndSession),
        "download-session" => download_session_receipt(id),
        "confirm-ok" => person::confirm_ok(),
        "confirm-cancel" => person::confirm_cancel(),
        "register-authenticator" => person::ask_register(),
        "remove-authenticator" => person::remove(),
        _ => {}
    }
}

/// Runs an act the person confirmed, with the choices snapshotted at their click: only with the
/// proof of that confirmation in hand ([`Confirmed`] is made only by the device or passphrase
/// check in `capability_gate::consent`).
pub fn carry_out(act: Act, _confirmed: Confirmed) {
    match act {
        Act::Grant {
            request_id,
            chosen,
            lifetime,
        } => run(|app| grant(app, &request_id, &chosen, &lifetime)),
        Act::Release {
            proposal_id,
            digest,
            acknowledged,
            kept,
        } => {
            let acknowledged = if acknowledged {
                Acknowledgement::UnconfirmedSite
            } else {
                Acknowledgement::Nothing
            };
            run(|app| release(app, &proposal_id, &digest, acknowledged, &kept));
        }
        Act::EndSession => run(end_session),
        Act::RegisterAuthenticator => {}
        Act::ReplaceProfile { backup } => crate::actions::finish_import(
            backup,
            Some(capability_gate::wallet::ImportKind::DifferentVault),
        ),
    }
}

/// The grant card's choices: the ticked claims that are not disabled, and the duration.
fn snapshot_grant(request_id: &RequestId) -> Option<Act> {
    let card = dom::by_id(&format!("req-{request_id}"))?;
    let chosen: Vec<usize> = dom::query_all(&card, "input[data-claim-index]")
        .into_iter()
        .filter(dom::checked)
        .filter(|c| !c.has_attribute("disabled"))
        .filter_map(|c| c.get_attribute("data-claim-index")?.parse().ok())
        .collect();
    if chosen.is_empty() {
        dom::set_msg(
            &format!("req-msg-{request_id}"),
            "Tick at least one question to grant, or deny the request.",
            false,
        );
        return None;
    }
    Some(Act::Grant {
        request_id: request_id.clone(),
        chosen,
        lifetime: dom::value(&format!("dur-{request_id}")),
    })
}

/// The approval card's choices: the digest shown, the acknowledgement, the kept items.
fn snapshot_release(proposal_id: &ProposalId, button: &web_sys::Element) -> Option<Act> {
    let card = dom::by_id(&format!("prop-{proposal_id}"))?;
    let kept: Vec<usize> = dom::query_all(&card, "input[data-item-index]")
        .into_iter()
        .filter(dom::checked)
        .filter_map(|c| c.get_attribute("data-item-index")?.parse().ok())
        .collect();
    if kept.is_empty() {
        with_app(|app| {
            app.signer_notes.insert(
                proposal_id.clone(),
                "Keep at least one answer to release, or refuse the application.".into(),
            );
            app.after_change();
        });
        return None;
    }
    Some(Act::Release {
        proposal_id: proposal_id.clone(),
        digest: button.get_attribute("data-digest").unwrap_or_default(),
        acknowledged: dom::input(&format!("ack-{proposal_id}")).is_some_and(|i| i.checked()),
        kept,
    })
}

fn grant(app: &mut App, request_id: &RequestId, chosen: &[usize], lifetime: &str) {
    let Some(lifetime) = Lifetime::from_choice(lifetime, app.short_grants) else {
        dom::set_msg(
            &format!("req-msg-{request_id}"),
            "That duration is not one this card offers. Nothing was granted.",
            false,
        );
        return;
    };
    if let Err(e) = app.gate.grant(request_id, chosen, lifetime, now()) {
        dom::set_msg(&format!("req-msg-{request_id}"), &e.to_string(), false);
    }
}

fn deny(app: &mut App, request_id: &RequestId) {
    let reason = dom::value(&format!("deny-{request_id}"));
    let reason = if reason.trim().is_empty() {
        "The person declined.".to_owned()
    } else {
        reason
    };
    if let Err(e) = app.gate.deny(request_id, &reason) {
        dom::set_msg(&format!("req-msg-{request_id}"), &e.to_string(), false);
    }
}

/// The person's own Revoke: the tool goes at once (the redraw follows in a later task), and
/// the page does not announce back to the person what they just did.
fn revoke(app: &mut App, grant_id: &str) {
    if let Ok(id) = GrantId::parse(grant_id)
        && app.gate.revoke(&id).is_ok()
    {
        app.told.own_revoke(grant_id);
    }
}

fn release(
    app: &mut App,
    proposal_id: &ProposalId,
    digest: &str,
    acknowledged: Acknowledgement,
    kept: &[usize],
) {
    if app.gate.is_unlocked() {
        // Another tab may have used credentials: pick from the saved copy.
        credentials::reload_from_storage(app);
    }
    match app
        .gate
        .release_kept(proposal_id, digest, kept, acknowledged, now())
    {
        Ok(released) if released.proofs.is_empty() => {
            app.signer_notes
                .insert(proposal_id.clone(), "Asking the signer to sign…".into());
            sign_later(proposal_id.clone());
        }
        Ok(released) => {
            // The picked credentials are marked used: saved before anything leaves.
            match credentials::persist(app) {
                Ok(()) => {
                    app.signer_notes.insert(
                        proposal_id.clone(),
                        "Signing the proofs in this browser…".into(),
                    );
                    credentials::present(proposal_id.clone(), released.proofs);
                }
                Err(e) => {
                    app.signer_notes.insert(
                        proposal_id.clone(),
                        format!(
                            "Nothing was sent: the used proofs could not be recorded ({e}). \
                             Ask the site to start again."
                        ),
                    );
                }
            }
        }
        Err(e) => {
            app.signer_notes.insert(proposal_id.clone(), e.to_string());
        }
    }
}

fn refuse(app: &mut App, proposal_id: &ProposalId) {
    let reason = dom::value(&format!("refuse-{proposal_id}"));
    let reason = if reason.trim().is_empty() {
        "The person refused.".to_owned()
    } else {
        reason
    };
    if let Err(e) = app.gate.refuse(proposal_id, &reason) {
        app.signer_notes.insert(proposal_id.clone(), e.to_string());
    }
}

/// Asks the pinned signer to sign a released payload; the signed receipt is attached for
/// `check_proposal` only if the gate finds that it verifies against the signer's published keys.
/// Otherwise the unsigned payload stays, and the page says why.
pub fn sign_later(proposal_id: ProposalId) {
    wasm_bindgen_futures::spawn_local(async move {
        let job = with_app(|app| {
            let payload = app
                .gate
                .proposal(&proposal_id)
                .and_then(|p| match &p.state {
                    capability_gate::ProposalState::Released { payload, .. } => {
                        Some((**payload).clone())
                    }
                    _ => None,
                })?;
            Some((payload, app.enrolment.pin().cloned()))
        })
        .flatten();
        let Some((payload, pin)) = job else { return };
        let enrolled = pin.is_some();
        if enrolled {
            with_app(|app| {
                app.signer_notes
                    .insert(proposal_id.clone(), "Asking the signer to sign…".into());
                app.after_change();
            });
        }
        let outcome = signer::request_signature(pin, &payload).await;
        with_app(|app| {
            let note = match outcome {
                Ok((signed, keys)) => {
                    let who = format!(
                        "Signed by your signer on {}; the signature verified against the \
                         signer's published keys.",
                        crate::intl::date_time(signed.signed_at.millis())
                    );
                    match app.gate.attach_signed(&proposal_id, signed, &keys, now()) {
                        Ok(()) => who,
                        Err(GateError::ReceiptUnverified | GateError::ReceiptMismatch) => {
                            SignError::NotVerified.note()
                        }
                        Err(e) => format!("Signer answer refused: {e}."),
                    }
                }
                Err(e) => e.note(),
            };
            app.signer_notes.insert(proposal_id.clone(), note);
            app.after_change();
        });
    });
}

/// Ends the session: one receipt per audience for the person's record, each sent to the signer,
/// then the wallet locks.
fn end_session(app: &mut App) {
    let receipts = app.gate.session_receipts(now());
    let count = receipts.len();
    let why = match count {
        0 => "Session ended and wallet locked. No site was answered, so there is no receipt."
            .to_owned(),
        1 => "Session ended and wallet locked; its receipt is below.".to_owned(),
        n => format!("Session ended and wallet locked; its {n} receipts are below."),
    };
    // The one lock path of the wallet core.
    app.step(|wallet, gate, vault, _, _| wallet.lock(gate, vault, &why, true));
    if receipts.is_empty() {
        return;
    }
    let first = app.session_receipts.len();
    for payload in receipts {
        app.session_receipts.push(crate::app::SessionReceipt {
            payload,
            signed: None,
            note: "Asking the signer to sign…".into(),
        });
    }
    for index in first..first + count {
        wasm_bindgen_futures::spawn_local(async move {
            let job = with_app(|app| {
                app.session_receipts
                    .get(index)
                    .map(|r| (r.payload.clone(), app.enrolment.pin().cloned()))
            })
            .flatten();
            let Some((payload, pin)) = job else { return };
            let outcome = signer::request_signature(pin, &payload).await;
            with_app(|app| {
                if let Some(receipt) = app.session_receipts.get_mut(index) {
                    let checked = outcome.and_then(|(signed, keys)| {
                        check_signed(&payload, &signed, &keys, now())
                            .map(|()| signed)
                            .map_err(|_| SignError::NotVerified)
                    });
                    match checked {
                        Ok(signed) => {
                            receipt.note = format!(
                                "Signed by your signer on {}.",
                                crate::intl::date_time(signed.signed_at.millis())
                            );
                            receipt.signed = Some(signed);
                        }
                        Err(e) => receipt.note = e.note(),
                    }
                }
                app.after_change();
            });
        });
    }
}

fn download_session_receipt(index: &str) {
    let json = index.parse::<usize>().ok().and_then(|i| {
        with_app(|app| {
            app.session_receipts.get(i).and_then(|r| match &r.signed {
                Some(s) => serde_json::to_string_pretty(s).ok(),
                None => serde_json::to_string_pretty(&r.payload).ok(),
            })
        })
        .flatten()
    });
    if let Some(json) = json {
        download(
            json.as_bytes(),
            &format!("tacit-session-receipt-{index}.json"),
            "application/json",
        );
    }
}

fn download_receipt(proposal_id: &ProposalId) {
    let json = with_app(|app| {
        app.gate.proposal(proposal_id).and_then(|p| match &p.state {
            capability_gate::ProposalState::Released {
                signed: Some(s), ..
            } => serde_json::to_string_pretty(s).ok(),
            capability_gate::ProposalState::Released { payload, .. } => {
                serde_json::to_string_pretty(payload).ok()
            }
            _ => None,
        })
    })
    .flatten();
    if let Some(json) = json {
        download(
            json.as_bytes(),
            &format!("tacit-receipt-{proposal_id}.json"),
            "application/json",
        );
    }
}
