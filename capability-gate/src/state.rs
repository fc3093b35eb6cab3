//! The records the gate keeps: consent requests, grants and proposals.

use serde::Serialize;
use sha2::{Digest, Sha256};
use tacit_protocol::site_auth::{Attestation, Requirements};
use tool_gate::{Ended, Lease, LeaseError};
use wallet_core::{Claim, GrantId, LogEntry, Nonce, Origin, ReceiptPayload, SignedReceipt};
use wallet_core::{Outcome, Timestamp};

use crate::ids::{ProposalId, RequestId};

/// Longest grant: one day (tool-gate's longest lease).
pub const MAX_GRANT_MS: i64 = tool_gate::MAX_LEASE_MS;

/// How long a grant lives and how often it may be used: the wallet's words for a
/// [`tool_gate::Lease`] (see [`Lifetime::lease`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetime {
    pub duration_ms: i64,
    /// `None`: unlimited uses until expiry. `Some(1)`: a one-time grant.
    pub uses: Option<u32>,
}

impl Lifetime {
    pub const ONE_MINUTE: Lifetime = Lifetime {
        duration_ms: 60_000,
        uses: None,
    };
    pub const TEN_MINUTES: Lifetime = Lifetime {
        duration_ms: 600_000,
        uses: None,
    };
    pub const ONE_HOUR: Lifetime = Lifetime {
        duration_ms: 3_600_000,
        uses: None,
    };
    /// One use, within ten minutes.
    pub const ONE_USE: Lifetime = Lifetime {
        duration_ms: 600_000,
        uses: Some(1),
    };

    /// Whether tool-gate would issue a lease for it (1 second to a day, at least one use).
    pub fn is_valid(&self) -> bool {
        self.lease(Timestamp::from_millis(0)).is_ok()
    }

    /// The lease a grant made at `now` with this lifetime holds.
    pub fn lease(&self, now: Timestamp) -> Result<Lease, LeaseError> {
        Lease::new(now.millis(), self.duration_ms, self.uses)
    }

    /// A 2-second grant, offered only where the page was opened for demonstrations and tests of
    /// expiry (`?short_grants=1`).
    pub const TWO_SECONDS: Lifetime = Lifetime {
        duration_ms: 2_000,
        uses: None,
    };

    /// The choices a consent card offers, in order: `(value, words)`. `short` adds
    /// [`Lifetime::TWO_SECONDS`] first.
    pub fn choices(short: bool) -> Vec<(&'static str, &'static str)> {
        let mut choices = vec![
            ("60000", "1 minute"),
            (Self::DEFAULT_CHOICE, "10 minutes"),
            ("3600000", "1 hour"),
            ("once", "One use"),
        ];
        if short {
            choices.insert(0, ("2000", "2 seconds"));
        }
        choices
    }

    /// The choice a card starts with.
    pub const DEFAULT_CHOICE: &'static str = "600000";

    /// The lifetime of a card's choice, or `None` for anything the card does not offer (a value
    /// a script put into the select is refused, never read as a default).
    pub fn from_choice(choice: &str, short: bool) -> Option<Lifetime> {
        match choice {
            "2000" if short => Some(Self::TWO_SECONDS),
            "60000" => Some(Self::ONE_MINUTE),
            "600000" => Some(Self::TEN_MINUTES),
            "3600000" => Some(Self::ONE_HOUR),
            "once" => Some(Self::ONE_USE),
            _ => None,
        }
    }

    /// How long, in the words a confirmation uses ("for 10 minutes", "for one use").
    pub fn words(&self) -> String {
        if self.uses == Some(1) {
            return "for one use".to_owned();
        }
        let seconds = self.duration_ms / 1_000;
        match seconds {
            s if s % 3_600 == 0 => plural(s / 3_600, "hour"),
            s if s % 60 == 0 => plural(s / 60, "minute"),
            s => plural(s, "second"),
        }
    }
}

fn plural(n: i64, unit: &str) -> String {
    if n == 1 {
        format!("for 1 {unit}")
    } else {
        format!("for {n} {unit}s")
    }
}

/// Where a consent request stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RequestState {
    Held,
    Granted { grants: Vec<GrantId> },
    Denied { reason: String },
}

/// Who is asking, as far as the wallet could confirm it.
///
/// Every request starts `Unconfirmed`: its origin is the agent's word. It becomes `Verified` only
/// when [`crate::Gate::confirm_asker`] checked the site's signature over exactly these
/// requirements against the keys the origin itself publishes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum AskerStatus {
    /// Only the agent says who is asking (no attestation, not checked yet, or it did not check).
    Unconfirmed,
    /// The site at the request's origin signed these requirements; `site_name` is the name it
    /// signed (or, if it signed none, the name its keys document gives).
    Verified { site_name: String },
}

impl AskerStatus {
    pub fn is_verified(&self) -> bool {
        matches!(self, AskerStatus::Verified { .. })
    }

    /// `"verified"` or `"unconfirmed"`, for the agent.
    pub fn as_str(&self) -> &'static str {
        match self {
            AskerStatus::Unconfirmed => "unconfirmed",
            AskerStatus::Verified { .. } => "verified",
        }
    }
}

/// A site's policy, passed on by the agent and held for the person. Its text is untrusted
/// unless `asker` is `Verified`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub id: RequestId,
    pub origin: Origin,
    pub nonce: Nonce,
    pub site_name: Option<String>,
    pub purpose: Option<String>,
    pub claims: Vec<Claim>,
    /// The site's signature over these requirements, as the agent passed it on (unchecked).
    pub attestation: Option<Attestation>,
    pub asker: AskerStatus,
    pub received_at: Timestamp,
    /// The gate's arrival sequence: requests are listed by `received_at`, then by this (never
    /// by id, which is pseudo-random).
    pub arrival: u64,
    pub state: RequestState,
}

impl Request {
    /// The requirements as the site would have signed them (absent texts are empty).
    pub fn requirements(&self) -> Requirements {
        Requirements {
            origin: self.origin.clone(),
            nonce: self.nonce.clone(),
            site_name: self.site_name.clone().unwrap_or_default(),
            purpose: self.purpose.clone().unwrap_or_default(),
            claims: self.claims.clone(),
        }
    }
}

/// Where a grant stands. Only `Live` grants have a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantState {
    Live,
    Revoked,
    Expired,
    Spent,
    Locked,
}

/// The person's consent to answer one claim for one origin, for a while.
///
/// Its expiry, uses and end are decided by its [`Lease`] (tool-gate's, [`Grant::lease`]);
/// `expires_at`, `uses_left` and `state` are the wallet's view of that lease, brought in step
/// by every change the gate makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub id: GrantId,
    pub request_id: RequestId,
    pub origin: Origin,
    /// The nonce of the request it answers: only answers to grants of the requests with a
    /// draft's audience and nonce go into that draft.
    pub nonce: Nonce,
    pub claim: Claim,
    pub epoch: u64,
    pub granted_at: Timestamp,
    pub expires_at: Timestamp,
    pub uses_left: Option<u32>,
    /// The gate's sequence number at the grant (grants are listed in grant order).
    pub arrival: u64,
    pub state: GrantState,
    lease: Lease,
}

impl Grant {
    /// A live grant `id` of `request`'s `claim` under `lease`, made in the gate's `epoch` as its
    /// `arrival`th item.
    pub(crate) fn new(
        id: GrantId,
        request: &Request,
        claim: Claim,
        epoch: u64,
        arrival: u64,
        lease: Lease,
    ) -> Self {
        let mut grant = Self {
            id,
            request_id: request.id.clone(),
            origin: request.origin.clone(),
            nonce: request.nonce.clone(),
            claim,
            epoch,
            granted_at: Timestamp::from_millis(lease.granted_at),
            expires_at: Timestamp::from_millis(lease.expires_at),
            uses_left: lease.uses_left,
            arrival,
            state: GrantState::Live,
            lease,
        };
        grant.follow_lease();
        grant
    }

    /// The lease behind the grant's tool.
    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    /// Brings the wallet's view in step with the lease. A revoked lease reads `Locked` if the
    /// lock ended it.
    fn follow_lease(&mut self) {
        self.expires_at = Timestamp::from_millis(self.lease.expires_at);
        self.uses_left = self.lease.uses_left;
        self.state = match self.lease.ended {
            None => GrantState::Live,
            Some(Ended::Expired) => GrantState::Expired,
            Some(Ended::Spent) => GrantState::Spent,
            Some(Ended::Revoked) if self.state == GrantState::Locked => GrantState::Locked,
            Some(Ended::Revoked) => GrantState::Revoked,
        };
    }

    /// Revokes the grant; whether it was live.
    pub(crate) fn revoke(&mut self) -> bool {
        let was_live = self.lease.revoke();
        self.follow_lease();
        was_live
    }

    /// Ends the grant because the wallet locks; whether it was live.
    pub(crate) fn lock(&mut self) -> bool {
        let was_live = self.lease.revoke();
        if was_live {
            self.state = GrantState::Locked;
        }
        self.follow_lease();
        was_live
    }

    /// Expires the grant if `now` is past its expiry; whether it ended now.
    pub(crate) fn expire(&mut self, now: Timestamp) -> bool {
        let ended = self.lease.expire(now.millis());
        self.follow_lease();
        ended
    }

    /// Whether the grant may be used at `now` (without taking a use); an expiry found here is
    /// recorded.
    pub(crate) fn check(&mut self, now: Timestamp) -> Result<(), Ended> {
        self.expire(now);
        self.lease.check(now.millis())
    }

    /// Checks the grant at `now` and takes one use (the last one spends it).
    pub(crate) fn take_use(&mut self, now: Timestamp) -> Result<(), Ended> {
        let taken = self.lease.take_use(now.millis());
        self.follow_lease();
        taken
    }
}

/// Where a proposal stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProposalState {
    Held,
    Released {
        payload: Box<ReceiptPayload>,
        signed: Option<Box<SignedReceipt>>,
    },
    Refused {
        reason: String,
    },
}

/// One claim of a proposal: its latest outcome for the audience and where that answer came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProposalItem {
    pub claim: Claim,
    pub satisfied: bool,
    /// The issuer whose credential backs the answer (the latest entry's), `None` when it is the
    /// person's own word.
    pub issuer: Option<Origin>,
    /// That issuer's display name, as the wallet knew it when the proposal was drafted.
    pub issuer_name: Option<String>,
}

impl ProposalItem {
    pub fn is_issuer_backed(&self) -> bool {
        self.issuer.is_some()
    }
}

/// A drafted application: what would be disclosed to one audience, held for the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    pub id: ProposalId,
    pub audience: Origin,
    pub nonce: Nonce,
    /// Each claim answered for the audience, its latest outcome and that outcome's provenance,
    /// in first-asked order.
    pub items: Vec<ProposalItem>,
    /// One entry per item (`entries[i]` is the answer `items[i]` shows), chained from genesis:
    /// the receipt's entries when every item is kept.
    pub entries: Vec<LogEntry>,
    pub created_at: Timestamp,
    /// The gate's arrival sequence (proposals are listed by `created_at`, then by this).
    pub arrival: u64,
    pub state: ProposalState,
    /// The indices of the items that left, once released (all of them unless the person
    /// dropped some before release).
    pub kept: Option<Vec<usize>>,
    digest: String,
}

impl Proposal {
    /// A proposal without issuer names (see [`Proposal::with_issuer_names`]).
    pub fn new(
        id: ProposalId,
        audience: Origin,
        nonce: Nonce,
        entries: Vec<LogEntry>,
        created_at: Timestamp,
    ) -> Self {
        Self::with_issuer_names(id, audience, nonce, entries, created_at, |_| None)
    }

    /// A proposal whose issuer-backed items carry the issuer's display name from `name_of`.
    ///
    /// `entries` are the answers it may carry (the caller picks them: answers to the grants of
    /// the request it answers). Declined and invalid entries are skipped; each claim's latest
    /// answer is its item, in first-asked order; and [`Proposal::entries`] holds exactly those
    /// answers, one per item, chained afresh from genesis.
    pub fn with_issuer_names(
        id: ProposalId,
        audience: Origin,
        nonce: Nonce,
        entries: Vec<LogEntry>,
        created_at: Timestamp,
        name_of: impl Fn(&Origin) -> Option<String>,
    ) -> Self {
        let mut items: Vec<ProposalItem> = Vec::new();
        let mut sources: Vec<&LogEntry> = Vec::new();
        for entry in &entries {
            let satisfied = match entry.outcome {
                Outcome::Satisfied => true,
                Outcome::NotSatisfied => false,
                Outcome::Declined | Outcome::Invalid => continue,
            };
            let issuer_name = entry.issuer.as_ref().and_then(&name_of);
            let item = ProposalItem {
                claim: entry.claim.clone(),
                satisfied,
                issuer: entry.issuer.clone(),
                issuer_name,
            };
            match items.iter().position(|i| i.claim == entry.claim) {
                Some(at) => {
                    if let (Some(existing), Some(source)) = (items.get_mut(at), sources.get_mut(at))
                    {
                        *existing = item;
                        *source = entry;
                    }
                }
                None => {
                    items.push(item);
                    sources.push(entry);
                }
            }
        }
        let entries = wallet_core::rechain(sources);
        let digest = substance_digest(&audience, &nonce, &items, &entries);
        Self {
            id,
            audience,
            nonce,
            items,
            entries,
            created_at,
            arrival: 0,
            state: ProposalState::Held,
            kept: None,
            digest,
        }
    }

    /// The digest of the substance (audience, nonce, claims, outcomes, their provenance, order,
    /// log head) that the person approves. Any change to the substance changes it.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    pub(crate) fn digest_matches(&self, shown: &str) -> bool {
        let now = substance_digest(&self.audience, &self.nonce, &self.items, &self.entries);
        now == self.digest && shown == self.digest
    }

    /// Whether any item is issuer-backed (its release needs presentations).
    pub fn needs_proofs(&self) -> bool {
        self.items.iter().any(ProposalItem::is_issuer_backed)
    }
}

fn substance_digest(
    audience: &Origin,
    nonce: &Nonce,
    items: &[ProposalItem],
    entries: &[LogEntry],
) -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u32).to_be_bytes());
        h.update(bytes);
    };
    field(b"tacit/proposal/v1");
    field(audience.as_str().as_bytes());
    field(nonce.as_str().as_bytes());
    for item in items {
        field(item.claim.canonical().as_bytes());
        field(if item.satisfied { b"1" } else { b"0" });
        // Self-asserted items hash as before; an issuer-backed one adds its issuer and name.
        if let Some(issuer) = &item.issuer {
            field(b"issuer");
            field(issuer.as_str().as_bytes());
            field(item.issuer_name.as_deref().unwrap_or_default().as_bytes());
        }
    }
    let head = entries.last().map(|e| e.hash.to_hex()).unwrap_or_default();
    field(head.as_bytes());
    hex::encode(h.finalize())
}
