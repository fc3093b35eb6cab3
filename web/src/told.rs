//! What the person reads about what agents can ask, and what the page tells them of changes they
//! did not make: a grant that expired, was used up, or ended by a lock, another tab or End
//! session; a site that started waiting for an answer. The sentences are
//! `capability_gate::words`', built from public parameters only, never from the profile.

use std::collections::{BTreeMap, BTreeSet};

use capability_gate::{AskerStatus, Gate, Grant, GrantState, ProposalState, RequestState, words};
use wallet_core::{Attribute, Claim, Money};

use crate::dom;

/// Amounts for people: the browser's `Intl.NumberFormat` in the amount's currency.
fn money(m: &Money) -> String {
    crate::intl::money(
        i64::try_from(m.amount_minor).unwrap_or(i64::MAX),
        m.currency.as_str(),
    )
}

/// Who asks, as the person reads it: the name the site signed if its signature was checked,
/// otherwise its address ("127.0.0.1:8081"); a name only the agent gave is not repeated here.
pub fn site_of(gate: &Gate, grant: &Grant) -> String {
    let verified = gate
        .request(&grant.request_id)
        .and_then(|r| match &r.asker {
            AskerStatus::Verified { site_name } => Some(site_name.as_str()),
            AskerStatus::Unconfirmed => None,
        });
    words::site_label(verified, grant.origin.as_str())
}

/// The question a grant lets agents ask, after "can ask": "whether your yearly income is below
/// €30,000".
pub fn question(claim: &Claim) -> String {
    format!("whether {}", words::whether(claim, &money))
}

/// The time left on a grant, for people: "9 min left", "45 s left", "1 h 5 min left", and the
/// uses left when counted ("one use left").
pub fn left(ms_left: i64, uses_left: Option<u32>) -> String {
    let secs = (ms_left.max(0) + 999) / 1000;
    let time = if secs >= 3600 {
        let (h, m) = (secs / 3600, (secs % 3600) / 60);
        if m == 0 {
            format!("{h} h left")
        } else {
            format!("{h} h {m} min left")
        }
    } else if secs >= 60 {
        format!("{} min left", (secs + 59) / 60)
    } else {
        format!("{secs} s left")
    };
    match uses_left {
        Some(1) => format!("{time}, one use left"),
        Some(n) => format!("{time}, {n} uses left"),
        None => time,
    }
}

/// What the page last told the person about (kept between redraws).
#[derive(Debug, Default)]
pub struct Told {
    /// Live grants at the last look: grant id → (site, what it is about).
    live: BTreeMap<String, (String, Attribute)>,
    /// Requests and applications waiting for the person at the last look.
    waiting: BTreeSet<String>,
    /// Grants the person revoked with their own click: not announced back to them.
    own_revokes: BTreeSet<String>,
    /// Set after the first look: what the page starts with is not news.
    started: bool,
}

impl Told {
    /// The person clicked Revoke on this grant.
    pub fn own_revoke(&mut self, grant_id: &str) {
        self.own_revokes.insert(grant_id.to_owned());
    }

    /// Compares the gate with the last look and announces, in one polite message, what changed
    /// that the person did not do. Returns the message (None if nothing is news).
    pub fn update(&mut self, gate: &Gate) -> Option<String> {
        let mut live = BTreeMap::new();
        for grant in gate.grants().filter(|g| g.state == GrantState::Live) {
            live.insert(
                grant.id.as_str().to_owned(),
                (site_of(gate, grant), grant.claim.attribute()),
            );
        }
        let waiting: BTreeSet<String> = gate
            .requests()
            .filter(|r| matches!(r.state, RequestState::Held))
            .map(|r| format!("r:{}", r.id))
            .chain(
                gate.proposals()
                    .filter(|p| matches!(p.state, ProposalState::Held))
                    .map(|p| format!("p:{}", p.id)),
            )
            .collect();
        let mut news = Vec::new();
        let mut ended = Vec::new();
        if self.started {
            if waiting.iter().any(|w| !self.waiting.contains(w)) {
                news.push("A site is waiting for your answer.".to_owned());
            }
            for (id, (site, attribute)) in &self.live {
                if live.contains_key(id) || self.own_revokes.contains(id) {
                    continue;
                }
                let state = gate.grants().find(|g| g.id.as_str() == id).map(|g| g.state);
                let said = state
                    .and_then(|state| words::grant_ended(site, *attribute, state))
                    .unwrap_or_else(|| {
                        format!("The access you gave {site} to {} ended.", attribute.topic())
                    });
                ended.push(said.clone());
                news.push(said);
            }
        }
        self.own_revokes.retain(|id| live.contains_key(id));
        self.live = live;
        self.waiting = waiting;
        self.started = true;
        if news.is_empty() {
            return None;
        }
        let text = news.join(" ");
        dom::announce(&text);
        if !ended.is_empty() {
            // What ended is also shown, for a person who does not hear the announcement.
            dom::notice(&ended.join(" "));
        }
        Some(text)
    }
}
