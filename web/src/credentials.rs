//! The person's credentials, as the page handles them: added from an issuer (Settings →
//! Credentials), sealed with the vault and saved, loaded on unlock, presented after a release
//! (one holder key signs one presentation), refilled with the refresh token when few are left.
//! What a batch must be, which claim a credential answers and which credential a release
//! presents are decided by `capability_gate::credentials` and the gate; this only carries out
//! the effects (fetch, WebCrypto, IndexedDB, localStorage).

use capability_gate::credentials::{Credentials, Jwk};
use capability_gate::{ProofToSign, ProposalId};
use wallet_core::Origin;

use crate::app::{App, now, with_app};
use crate::issuer::{self, Grant, IssuerError};
use crate::keystore::KeyStoreError;
use crate::storage::StorageError;
use crate::{dom, keystore, receipts, storage};

const MSG: &str = "credential-msg";

fn say(text: &str, ok: bool) {
    dom::set_msg(MSG, text, ok);
}

/// Seals the gate's credentials with the vault and saves them. Must succeed before anything a
/// credential backs leaves the wallet.
pub fn persist(app: &App) -> Result<(), PersistError> {
    let vault = app.vault.as_ref().ok_or(PersistError::Locked)?;
    Ok(storage::save_credentials(vault, app.gate.credentials())?)
}

/// Why the credentials were not saved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PersistError {
    #[error("the wallet is locked, so your credentials cannot be saved")]
    Locked,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Why a batch of credentials was not added; `Display` is the sentence the page shows.
#[derive(Debug, thiserror::Error)]
pub enum AddError {
    #[error(transparent)]
    Issuer(#[from] IssuerError),
    #[error(
        "The wallet was locked meanwhile; the new credential was not kept. Unlock and add it \
         again with a new code."
    )]
    LockedMeanwhile,
    #[error("The batch from {name} was refused: {why}. Nothing was stored.")]
    BatchRefused { name: String, why: String },
    #[error("The credential from {name} could not be saved ({cause}); it was not kept.")]
    NotSaved { name: String, cause: PersistError },
    #[error("The wallet is busy; try again.")]
    Busy,
    #[error("{name} gave this wallet no refresh token.")]
    NoRefreshToken { name: String },
}

/// Why the credentials or their keys were not all deleted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeleteError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Keys(#[from] KeyStoreError),
}

/// After unlock: hands the credentials stored for this vault to the gate (none if there are
/// none, or if the stored ones are another profile's). A damaged record is reported and left
/// in place; answers are then the person's own word.
pub fn load_into_gate(app: &mut App) {
    if load_stored(app) {
        refill_due(app);
        check_revocations(app);
    }
}

/// [`load_into_gate`] without what follows a load (refills, status lists): whether the stored
/// credentials were read.
fn load_stored(app: &mut App) -> bool {
    let Some(vault) = &app.vault else {
        return false;
    };
    match storage::load_credentials::<Credentials>(vault) {
        Ok(credentials) => {
            app.gate.set_credentials(credentials.unwrap_or_default());
            true
        }
        Err(e) => {
            app.gate.set_credentials(Credentials::default());
            say(
                &format!(
                    "Your saved credentials could not be read ({e}). Until you add them again, \
                     every answer is your own word."
                ),
                false,
            );
            false
        }
    }
}

/// Another tab saved credentials: take its copy (what it marked used stays used). Only the
/// stored copy counts, and nothing a credential backs leaves before it is saved, so taking the
/// stored copy never un-uses a credential that left.
pub fn reload_from_storage(app: &mut App) {
    if app.gate.is_unlocked() {
        load_into_gate(app);
    }
}

/// The person pressed "Add a credential".
pub fn add() {
    let origin = match issuer::parse_issuer(&dom::value("issuer-url")) {
        Ok(origin) => origin,
        Err(e) => return say(&e.to_string(), false),
    };
    let code = match issuer::parse_code(&dom::value("issuer-code")) {
        Ok(code) => code,
        Err(e) => return say(&e.to_string(), false),
    };
    let started = with_app(|app| {
        if !app.gate.is_unlocked() || app.vault.is_none() {
            return Err("Unlock the wallet first: credentials are sealed with your profile.");
        }
        if app.fetching_credentials {
            return Err("A credential is being added already; wait for it.");
        }
        app.fetching_credentials = true;
        app.after_change();
        Ok(())
    });
    match started {
        Some(Ok(())) => {}
        Some(Err(e)) => return say(e, false),
        None => return,
    }
    say(&format!("Asking {origin} for your credential…"), true);
    wasm_bindgen_futures::spawn_local(async move {
        let outcome = fetch_and_keep(&origin, &Grant::Code(code)).await;
        with_app(|app| {
            app.fetching_credentials = false;
            match outcome {
                Ok((name, added)) => {
                    dom::clear("issuer-code");
                    crate::focus::done(crate::focus::Act::CredentialAdded);
                    say(
                        &format!(
                            "Added: {added} single-use proofs from {name}. Answers it vouches \
                             for are now proven by {name}."
                        ),
                        true,
                    );
                }
                Err(e) => say(&e.to_string(), false),
            }
            app.after_change();
        });
    });
}

/// Fetches a batch, has the gate's credentials accept it, and saves. Returns the issuer's name
/// and how many proofs were added. Whatever is refused, its holder keys are deleted.
async fn fetch_and_keep(origin: &Origin, grant: &Grant) -> Result<(String, usize), AddError> {
    let fetched = issuer::fetch_batch(origin, grant).await?;
    let holder_jwks: Vec<Jwk> = fetched.holder.iter().map(|k| k.jwk.clone()).collect();
    let name = fetched.info.name.clone();
    // The holder keys of credentials a new batch replaces (used, expired, or saying something
    // else now) are deleted once it is kept.
    let mut dropped: Vec<String> = Vec::new();
    let kept = with_app(|app| -> Result<usize, AddError> {
        if !app.gate.is_unlocked() || app.vault.is_none() {
            return Err(AddError::LockedMeanwhile);
        }
        // Start from the stored copy (another tab may have used some).
        reload_from_storage(app);
        let before = app.gate.credentials().clone();
        let added = app
            .gate
            .credentials_mut()
            .accept_batch(
                &fetched.info,
                &fetched.jwks,
                fetched.response.as_bytes(),
                &holder_jwks,
                now(),
            )
            .map_err(|e| AddError::BatchRefused {
                name: name.clone(),
                why: e.to_string(),
            })?;
        if let Err(cause) = persist(app) {
            app.gate.set_credentials(before);
            return Err(AddError::NotSaved {
                name: name.clone(),
                cause,
            });
        }
        let after = app.gate.credentials().holder_key_ids();
        dropped = before
            .holder_key_ids()
            .into_iter()
            .filter(|id| !after.contains(id))
            .collect();
        Ok(added)
    })
    .unwrap_or(Err(AddError::Busy));
    // This batch's keys that no kept credential names (all of them if it was refused), and the
    // keys of the credentials it replaced.
    let referenced = with_app(|app| app.gate.credentials().holder_key_ids()).unwrap_or_default();
    let mut unused: Vec<String> = fetched
        .holder
        .iter()
        .map(|k| k.id.clone())
        .filter(|id| !referenced.contains(id))
        .collect();
    unused.extend(dropped);
    let _ = keystore::delete_holder_keys(&unused).await;
    kept.map(|added| (name, added))
}

/// After a release: sign each proof with its holder key (taken out of the store as it signs:
/// one key, one presentation), attach the presentations, then ask the signer for the receipt as
/// for any release, and refill issuers that run low. The credentials were saved (used) before
/// this runs.
pub fn present(proposal_id: ProposalId, proofs: Vec<ProofToSign>) {
    wasm_bindgen_futures::spawn_local(async move {
        let mut signatures = Vec::with_capacity(proofs.len());
        let mut failure = None;
        for proof in &proofs {
            match keystore::sign_once_with_holder(
                &proof.holder_key_id,
                proof.signing_input.as_bytes(),
            )
            .await
            {
                Ok(signature) => signatures.push(signature),
                Err(e) => {
                    failure = Some(format!(
                        "The proof from {} could not be signed in this browser ({e}). Nothing \
                         was sent; ask the site to start again.",
                        issuer_name(&proof.issuer)
                    ));
                    break;
                }
            }
        }
        let attached = with_app(|app| {
            let outcome = match failure {
                Some(e) => Err(e),
                None => app
                    .gate
                    .attach_presentations(&proposal_id, signatures, now())
                    .map_err(|e| format!("The proofs were not attached: {e}.")),
            };
            let note = match &outcome {
                Ok(()) => "Proofs signed in this browser; asking the signer to sign…".to_owned(),
                Err(e) => {
                    // The agent is told to start again (a fixed sentence: nothing of the key or
                    // the error leaves); the credentials stay used.
                    let _ = app.gate.fail_presentations(
                        &proposal_id,
                        "The wallet could not finish the proofs for this application. Draft it \
                         again after asking the site for a new nonce.",
                    );
                    e.clone()
                }
            };
            app.signer_notes.insert(proposal_id.clone(), note);
            app.after_change();
            outcome.is_ok()
        })
        .unwrap_or(false);
        // Whatever happened, these keys are done (their credentials are used).
        let used: Vec<String> = proofs.iter().map(|p| p.holder_key_id.clone()).collect();
        let _ = keystore::delete_holder_keys(&used).await;
        if attached {
            receipts::sign_later(proposal_id);
        }
        let mut issuers: Vec<Origin> = proofs.iter().map(|p| p.issuer.clone()).collect();
        issuers.sort();
        issuers.dedup();
        for origin in issuers {
            refill_if_low(origin).await;
        }
    });
}

fn issuer_name(origin: &Origin) -> String {
    with_app(|app| {
        app.gate
            .credentials()
            .issuer_name(origin)
            .map(str::to_owned)
    })
    .flatten()
    .unwrap_or_else(|| origin.to_string())
}

/// Reads the status list of every issuer whose credentials name one (its own
/// `<issuer>/status/1`, checked with the keys kept for it) and drops the credentials it
/// revoked, saying so: an answer it vouched for is the person's own word again. Whenever the
/// credentials are loaded (unlock, another tab's save). A list that cannot be read changes
/// nothing (a site reads it too, and refuses a revoked credential itself).
pub fn check_revocations(app: &App) {
    thread_local! {
        /// When the lists were last read (at most once a minute: loads are frequent).
        static LAST: std::cell::Cell<Option<i64>> = const { std::cell::Cell::new(None) };
    }
    let at = now().millis();
    if !app.gate.is_unlocked() || LAST.get().is_some_and(|last| at - last < 60_000) {
        return;
    }
    LAST.set(Some(at));
    for held in app.gate.credentials().issuers() {
        let origin = held.origin().clone();
        let own = format!(
            "{}{}",
            origin.as_str().trim_end_matches('/'),
            tacit_protocol::status_list::STATUS_PATH
        );
        if app.gate.credentials().status_uri(&origin).as_deref() != Some(own.as_str()) {
            continue;
        }
        let jwks = held.jwks().clone();
        wasm_bindgen_futures::spawn_local(async move {
            let Ok(reply) = crate::net::fetch(
                "GET",
                &own,
                &[("accept", tacit_protocol::status_list::MEDIA_TYPE)],
                None,
            )
            .await
            else {
                return;
            };
            if !reply.ok() {
                return;
            }
            let Ok(list) =
                tacit_protocol::status_list::verify_token(reply.text.trim(), &jwks, &own, now())
            else {
                return;
            };
            let dropped = with_app(|app| {
                // The stored copy (another tab may have used some), without starting another
                // read of the lists.
                if !app.gate.is_unlocked() || !load_stored(app) {
                    return Vec::new();
                }
                let before = app.gate.credentials().clone();
                let name = before
                    .issuer_name(&origin)
                    .unwrap_or(origin.as_str())
                    .to_owned();
                let dropped = app.gate.credentials_mut().drop_revoked(&origin, &list);
                if dropped.is_empty() {
                    return dropped;
                }
                if persist(app).is_err() {
                    app.gate.set_credentials(before);
                    return Vec::new();
                }
                say(
                    &format!(
                        "{name} has revoked {} of your credentials, so they were removed: the \
                         answers it vouched for are your own word again. Ask {name} why; it can \
                         give you a new code.",
                        dropped.len()
                    ),
                    false,
                );
                app.after_change();
                dropped
            })
            .unwrap_or_default();
            if !dropped.is_empty() {
                let _ = keystore::delete_holder_keys(&dropped).await;
            }
        });
    }
}

/// Fetches a new batch for every issuer whose credentials need one now ([`refill_if_low`]):
/// whenever the credentials are loaded (unlock, another tab's save), since an age predicate the
/// typed birth date says may have turned is no longer presented, so no presentation would
/// trigger its refill.
pub fn refill_due(app: &App) {
    if !app.gate.is_unlocked() {
        return;
    }
    for origin in app.gate.refills_due(now()) {
        if !app.refilling.contains(&origin) {
            wasm_bindgen_futures::spawn_local(refill_if_low(origin));
        }
    }
}

/// Fetches a new batch with the refresh token when fewer than three proofs are left from
/// `origin` (counting an age predicate that may have turned as spent), and says so.
async fn refill_if_low(origin: Origin) {
    let job = with_app(|app| {
        if !app.gate.is_unlocked() || !app.gate.refills_due(now()).contains(&origin) {
            return None;
        }
        if !app.refilling.insert(origin.clone()) {
            return None;
        }
        let name = app.gate.credentials().issuer_name(&origin)?.to_owned();
        Some((
            name,
            app.gate
                .credentials()
                .refresh_token(&origin)
                .map(str::to_owned),
        ))
    })
    .flatten();
    let Some((name, token)) = job else { return };
    let outcome = match token {
        Some(token) => fetch_and_keep(&origin, &Grant::Refresh(token)).await,
        None => Err(AddError::NoRefreshToken { name: name.clone() }),
    };
    with_app(|app| {
        app.refilling.remove(&origin);
        match outcome {
            Ok((name, added)) => say(&format!("Fetched {added} new proofs from {name}."), true),
            Err(e) => say(
                &format!(
                    "Few proofs are left from {name}, and new ones could not be fetched: {e} \
                     Add the credential again with a new code from {name}."
                ),
                false,
            ),
        }
        app.after_change();
    });
}

/// Deletes the credentials and every holder key (the profile is deleted, or replaced by
/// another).
pub async fn delete_all() -> Result<(), DeleteError> {
    let stored = storage::delete_credentials();
    let keys = keystore::delete_all_holder_keys().await;
    stored?;
    Ok(keys?)
}
