//! The person's decisions on what agents asked: grant, deny, revoke, release, refuse, end the
//! session, and the receipts that follow. `actions` routes the clicks here; an [`Act`] that
//! needs the person's confirmation is carried out ([`carry_out`]) once `person` has it.

use capability_gate::consent::{self, Confirmed};
use capability_gate::wallet::ImportKind;
use capability_gate::{Acknowledgement, Lifetime, ProposalId, RequestId, check_signed};
use wallet_core::GrantId;

use crate::app::{App, now, run, with_app};
use crate::choices::{self, NotYet};
use crate::signer::{self, SignError};
use crate::{credentials, dom, focus, receipts, storage};

/// What the person chose on a card, snapshotted at their click.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    Grant {
        request_id: capability_gate::RequestId,
        chosen: Vec<usize>,
        /// The duration choice's value (`once`, `60000`, `600000`, `3600000`, `2000`).
        lifetime: String,
    },
    Release {
        proposal_id: capability_gate::ProposalId,
        digest: String,
        acknowledged: bool,
        kept: Vec<usize>,
    },
    EndSession,
    /// Delete the history of ended sessions.
    DeleteHistory,
    RegisterAuthenticator,
    /// Replace the stored profile with a backup of another vault (its memory starts empty).
    ReplaceProfile {
        backup: Vec<u8>,
    },
}

impl Act {
    /// Which act `capability_gate::consent` asks the person to confirm.
    pub fn kind(&self) -> consent::Act {
        match self {
            Act::Grant { .. } => consent::Act::Grant,
            Act::Release { .. } => consent::Act::Release,
            Act::EndSession => consent::Act::EndSession,
            Act::DeleteHistory => consent::Act::DeleteHistory,
            Act::RegisterAuthenticator => consent::Act::RegisterDevice,
            Act::ReplaceProfile { .. } => consent::Act::ReplaceProfile,
        }
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
        Act::DeleteHistory => receipts::delete_history(),
        Act::RegisterAuthenticator => {}
        Act::ReplaceProfile { backup } => finish_import(backup, Some(ImportKind::DifferentVault)),
    }
}

/// Imports `backup` as the person answered (`confirmed`: the kind they said yes to). The core
/// refuses a replacement the person did not say yes to, also if storage changed meanwhile.
pub fn finish_import(backup: Vec<u8>, confirmed: Option<ImportKind>) {
    wasm_bindgen_futures::spawn_local(async move {
        let _ = storage::locked(move || {
            run(|app| {
                app.step(|wallet, gate, vault, snap, rng| {
                    wallet.import(gate, vault, snap, &backup, confirmed, rng)
                });
            })
        })
        .await;
    });
}

/// The grant card's choices, as the person made them ([`choices`]): the ticked claims the
/// memory would answer, and the duration. Nothing is read from the card's DOM.
pub fn snapshot_grant(request_id: &RequestId) -> Option<Act> {
    match choices::grant_choice(request_id) {
        Ok((chosen, lifetime)) => Some(Act::Grant {
            request_id: request_id.clone(),
            chosen,
            lifetime,
        }),
        Err(why) => {
            let text = match why {
                NotYet::NoCard => return None,
                NotYet::NothingTicked => {
                    "Tick at least one question to grant, or deny the request."
                }
                NotYet::Changed => CHANGED,
            };
            dom::set_msg(&format!("req-msg-{request_id}"), text, false);
            None
        }
    }
}

/// What a card says when it showed something other than the person's own choices at their
/// click (a script ticked or chose for them): it is drawn back, and nothing happens.
const CHANGED: &str = "This card showed choices you did not make; it now shows yours again. \
                       Check it, then click again.";

/// The approval card's choices, as the person made them ([`choices`]): the kept items, the
/// acknowledgement, and the digest the card shows. Nothing is read from the card's DOM.
pub fn snapshot_release(proposal_id: &ProposalId) -> Option<Act> {
    match choices::release_choice(proposal_id) {
        Ok((kept, acknowledged, digest)) => Some(Act::Release {
            proposal_id: proposal_id.clone(),
            digest,
            acknowledged,
            kept,
        }),
        Err(why) => {
            let text = match why {
                NotYet::NoCard => return None,
                NotYet::NothingTicked => {
                    "Tick at least one answer to send, or refuse the application."
                }
                NotYet::Changed => CHANGED,
            };
            with_app(|app| {
                app.signer_notes
                    .insert(proposal_id.clone(), text.to_owned());
                app.after_change();
            });
            None
        }
    }
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
    match app.gate.grant(request_id, chosen, lifetime, now()) {
        Ok(_) => focus::done(focus::Act::Granted),
        Err(e) => dom::set_msg(&format!("req-msg-{request_id}"), &e.to_string(), false),
    }
}

pub fn deny(app: &mut App, request_id: &RequestId) {
    let reason = dom::value(&format!("deny-{request_id}"));
    let reason = if reason.trim().is_empty() {
        "The person declined.".to_owned()
    } else {
        reason
    };
    match app.gate.deny(request_id, &reason) {
        Ok(_) => focus::done(focus::Act::Denied),
        Err(e) => dom::set_msg(&format!("req-msg-{request_id}"), &e.to_string(), false),
    }
}

/// The person denies every request the origin of `request_id` has waiting, in one act.
pub fn deny_all_from(app: &mut App, request_id: &RequestId) {
    let Some(origin) = app.gate.request(request_id).map(|r| r.origin.clone()) else {
        return;
    };
    if let Err(e) = app
        .gate
        .deny_all_from(&origin, capability_gate::words::DENIED_ALL_FROM_HERE)
    {
        dom::set_msg(&format!("req-msg-{request_id}"), &e.to_string(), false);
    } else {
        focus::done(focus::Act::Denied);
    }
}

/// The person's own Revoke: the tool goes at once (the redraw follows in a later task), and
/// the page does not announce back to the person what they just did.
pub fn revoke(app: &mut App, grant_id: &str) {
    if let Ok(id) = GrantId::parse(grant_id)
        && app.gate.revoke(&id).is_ok()
    {
        app.told.own_revoke(grant_id);
        focus::done(focus::Act::Stopped);
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
    let released = app
        .gate
        .release_kept(proposal_id, digest, kept, acknowledged, now());
    if released.is_ok() {
        focus::done(focus::Act::Released);
    }
    match released {
        Ok(released) if released.proofs.is_empty() => {
            app.signer_notes
                .insert(proposal_id.clone(), "Asking the signer to sign…".into());
            receipts::sign_later(proposal_id.clone());
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

pub fn refuse(app: &mut App, proposal_id: &ProposalId) {
    let reason = dom::value(&format!("refuse-{proposal_id}"));
    let reason = if reason.trim().is_empty() {
        "The person refused.".to_owned()
    } else {
        reason
    };
    match app.gate.refuse(proposal_id, &reason) {
        Ok(_) => focus::done(focus::Act::NotSent),
        Err(e) => {
            app.signer_notes.insert(proposal_id.clone(), e.to_string());
        }
    }
}

/// Ends the session: one receipt per audience for the person's record, each sent to the signer;
/// the session goes into the sealed history (`Wallet::end_session`) and the wallet locks.
fn end_session(app: &mut App) {
    let receipts = app.gate.session_receipts(now());
    let count = receipts.len();
    let why = match count {
        0 => "Session ended and wallet locked. No site was answered, so there is no receipt."
            .to_owned(),
        1 => "Session ended and wallet locked; its receipt is below.".to_owned(),
        n => format!("Session ended and wallet locked; its {n} receipts are below."),
    };
    // The wallet core moves the session (its log, receipts and applications) into the sealed
    // history, read-merge-write under the cross-tab lock, then locks through its one lock path.
    let kept = receipts.clone();
    storage::locked_then(move || {
        with_app(|app| {
            app.step(|wallet, gate, vault, snap, rng| {
                wallet.end_session(gate, vault, snap, kept, now(), &why, rng)
            });
            app.after_change();
        });
        focus::done(focus::Act::SessionEnded);
    });
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
