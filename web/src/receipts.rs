//! Receipts: the pinned signer is asked to sign what the person released, and the person may
//! download a receipt, signed or not. `decisions` (a release without credentials) and
//! `credentials` (a release whose proofs this browser signed) both come here.

use capability_gate::{GateError, ProposalId};

use crate::app::{now, with_app};
use crate::dom;
use crate::signer::{self, SignError};

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

/// `[data-action=download-session]`: the session receipt at `index` (signed if it is).
pub fn download_session_receipt(index: &str) {
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
        dom::download(
            json.as_bytes(),
            &format!("tacit-session-receipt-{index}.json"),
            "application/json",
        );
    }
}

/// `[data-action=download-receipt]`: a release's receipt (signed if it is).
pub fn download_receipt(proposal_id: &ProposalId) {
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
        dom::download(
            json.as_bytes(),
            &format!("tacit-receipt-{proposal_id}.json"),
            "application/json",
        );
    }
}

/// The history's Download button (the JSON file of ended sessions). Installed once, at start.
/// Delete is the person's act (`data-action=delete-history`, confirmed like End session).
pub fn wire_history_buttons() {
    thread_local! {
        static WIRED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if WIRED.with(|w| w.replace(true)) {
        return;
    }
    let on = |id: &str, f: fn()| {
        if let Some(target) = dom::by_id(id) {
            let closure =
                wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::Event)>::new(move |_| f());
            let _ = target.add_event_listener_with_callback(
                "click",
                wasm_bindgen::JsCast::unchecked_ref(closure.as_ref()),
            );
            closure.forget();
        }
    };
    on("history-export", export_history);
}

fn export_history() {
    let json = with_app(|app| {
        app.wallet
            .person_record(&app.gate)
            .map(|r| r.export_history())
    })
    .flatten();
    match json {
        Some(json) => dom::download(json.as_bytes(), "tacit-history.json", "application/json"),
        None => dom::set_msg(
            "history-msg",
            "Unlock the wallet to download its history.",
            false,
        ),
    }
}

/// Deletes the history of ended sessions, once the person confirmed it with their passphrase
/// or device (`person::ask(Act::DeleteHistory)` after their own click on "Delete the
/// history…"; `decisions::carry_out` calls this only with the proof of it).
pub fn delete_history() {
    crate::storage::locked_then(move || {
        with_app(|app| {
            app.step(|wallet, gate, vault, snap, rng| {
                wallet.clear_history(gate, vault, snap, true, rng)
            });
            if app.wallet.is_unlocked() {
                dom::set_msg(
                    "history-msg",
                    "The history of ended sessions was deleted.",
                    true,
                );
            }
            app.after_change();
        });
    });
}
