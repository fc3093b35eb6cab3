//! Who is asking: for each request that carries a site attestation, the page fetches the keys
//! the request's origin publishes (never a URL an agent gave) and hands them to
//! `Gate::confirm_asker`, which decides. This only fetches and records what happened, for the
//! consent card.

use capability_gate::{AskerStatus, GateError, RequestId, site_keys_url};
use tacit_protocol::site_auth::{SiteAuthError, SiteKeys};

use crate::app::{App, now, with_app};
use crate::net;

pub use crate::state::AskerCheck;

/// Starts a check for every request that carries an attestation and has none yet; forgets
/// checks of requests the gate no longer holds.
pub fn start_new_checks(app: &mut App) {
    let gate = &app.gate;
    app.asker_checks.retain(|id, _| gate.request(id).is_some());
    let new: Vec<(RequestId, String)> = app
        .gate
        .requests()
        .filter(|r| r.attestation.is_some() && r.asker == AskerStatus::Unconfirmed)
        .filter(|r| !app.asker_checks.contains_key(&r.id))
        .map(|r| (r.id.clone(), site_keys_url(&r.origin)))
        .collect();
    for (id, url) in new {
        app.asker_checks.insert(id.clone(), AskerCheck::Checking);
        wasm_bindgen_futures::spawn_local(check(id, url));
    }
}

async fn check(request_id: RequestId, url: String) {
    let fetched = net::fetch("GET", &url, &[], None).await;
    let keys = match fetched {
        Ok(reply) if reply.status == 200 => {
            SiteKeys::parse(reply.text.as_bytes()).map_err(|_| "the site's keys are not valid")
        }
        Ok(_) | Err(_) => Err("the site's keys could not be fetched"),
    };
    with_app(|app| {
        let outcome = keys.and_then(|keys| {
            app.gate
                .confirm_asker(&request_id, &keys, now())
                .map_err(|e| match e {
                    GateError::SiteNotConfirmed(SiteAuthError::Expired) => {
                        "the site's signature has expired"
                    }
                    GateError::SiteNotConfirmed(SiteAuthError::OriginMismatch) => {
                        "the site's keys are for another origin"
                    }
                    _ => "the site's signature did not check",
                })
        });
        let state = match outcome {
            Ok(()) => AskerCheck::Confirmed,
            Err(why) => AskerCheck::Failed(why),
        };
        app.asker_checks.insert(request_id.clone(), state);
        app.after_change();
    });
}
