//! The gate: consent requests, grants, proposals, and the execution of every tool.
//!
//! Time comes in as `now` on every call; the gate never reads a clock. The host asks
//! [`Gate::next_deadline`] when to wake up and then calls [`Gate::tick`].
//!
//! Each grant's expiry, use count and end are a [`tool_gate::Lease`]: granting issues one
//! ([`Lifetime::lease`]), revoke, lock and expiry end it, and a claim call is checked against it
//! when it begins and checked again, taking a use, when it completes.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tacit_protocol::site_auth::{SITE_KEYS_PATH, SiteAuthError, SiteKeys, verify_requirements};
use wallet_core::receipt::KeySet;
use wallet_core::{
    Claim, ComparisonLog, DisclosureLedger, GrantId, LogEntry, Nonce, Origin, Outcome, Profile,
    ReceiptPayload, SessionId, SignedReceipt, Timestamp,
};

use tacit_protocol::sd_jwt::{
    self, DEFAULT_MAX_KB_AGE_MS, Jwks, SdJwtError, TrustedIssuer, kb_jwt_signing_input,
};

use crate::credentials::{Credentials, TakeError};
use crate::envelope::{Code, Refusal, Reply, envelope};
use crate::exec::Book;
use crate::ids::{ProposalId, RequestId};
pub use crate::tool::tool_name_of;
use crate::tool::{Handler, ToolDef, claim_tool, persistent_tools};
use tool_gate::Ended;

pub use crate::state::{
    AskerStatus, Grant, GrantState, Lifetime, Proposal, ProposalItem, ProposalState, Request,
    RequestState,
};

/// How long a released receipt stays valid: the longest window a receipt may have
/// (`wallet_core::receipt::MAX_WINDOW_MS`, 15 minutes).
pub const RECEIPT_TTL_MS: i64 = wallet_core::receipt::MAX_WINDOW_MS;
pub use crate::exec::{MAX_PENDING, MAX_PENDING_PER_ORIGIN};
/// Dead grants remembered (to tell a stale handle why it is refused).
pub const MAX_DEAD_GRANTS: usize = 256;
/// Decided requests, and decided proposals, remembered (for `check_request`/`check_proposal`);
/// older ones are forgotten so a long session does not grow without bound.
pub const MAX_DECIDED: usize = 256;

/// What the person can get wrong in the wallet page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    #[error("no such request")]
    UnknownRequest,
    #[error("no such grant")]
    UnknownGrant,
    #[error("no such proposal")]
    UnknownProposal,
    #[error("this request was already decided")]
    AlreadyDecided,
    #[error("this proposal was already released")]
    AlreadyReleased,
    #[error("this proposal was refused")]
    AlreadyRefused,
    #[error("the proposal changed since it was shown; review it again")]
    ApprovalVoid,
    #[error("unlock the wallet first")]
    Locked,
    #[error("choose at least one claim, each listed once")]
    NoClaimChosen,
    #[error("keep at least one answer, each listed once")]
    NoItemKept,
    #[error("the grant must last between 1 second and 24 hours, and allow at least one use")]
    BadLifetime,
    #[error("the reason must be 1 to 500 characters")]
    BadReason,
    #[error("the receipt does not match this proposal")]
    ReceiptMismatch,
    #[error("the signer's answer did not verify")]
    ReceiptUnverified,
    #[error("this request carries no site signature to check")]
    NoAttestation,
    #[error("the site's signature did not check: {0}")]
    SiteNotConfirmed(SiteAuthError),
    #[error(
        "this site is not confirmed; tick \"I understand this site is not confirmed\" to release anyway"
    )]
    UnconfirmedAudience,
    #[error("the receipt payload could not be built: {0}")]
    Receipt(wallet_core::StructureError),
    #[error("no proofs left from {issuer}; add a credential again")]
    NoProofsLeft { issuer: String },
    #[error(
        "the credentials from {issuer} no longer give this answer; ask the site to start again"
    )]
    ProofMismatch { issuer: String },
    #[error("this proposal has no proofs waiting to be signed")]
    NoProofsPending,
    #[error("expected {expected} signatures, got {got}")]
    SignatureCount { expected: usize, got: usize },
    #[error("proof {index} did not verify ({code}); nothing was attached")]
    PresentationUnverified { index: usize, code: &'static str },
}

/// What the person acknowledged when releasing a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Acknowledgement {
    /// Nothing beyond the release itself.
    #[default]
    Nothing,
    /// The person ticked "I understand this site is not confirmed".
    UnconfirmedSite,
}

/// What the page must sign for one issuer-backed item of a released proposal: the key-binding JWT
/// of a presentation of one credential, for the proposal's audience and nonce. Never shown to an
/// agent.
#[derive(Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProofToSign {
    /// The RFC 7638 thumbprint of the holder key that must sign (the page's key store name).
    pub holder_key_id: String,
    /// The KB-JWT signing input: sign its UTF-8 bytes with ECDSA P-256 SHA-256 (WebCrypto).
    pub signing_input: String,
    /// The presentation without its KB-JWT: `<issuer-jwt>~<one disclosure>~`.
    pub without_kb: String,
    /// The claim it proves.
    pub claim: Claim,
    /// The issuer whose credential it is.
    pub issuer: Origin,
}

impl core::fmt::Debug for ProofToSign {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ProofToSign")
            .field("claim", &self.claim)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

/// A release: the receipt payload to have signed, and the proofs to sign (one per issuer-backed
/// item, in item order; empty when every answer is the person's own word).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    pub payload: ReceiptPayload,
    pub proofs: Vec<ProofToSign>,
}

/// The presentations of a released proposal: waiting for signatures, then finished.
#[derive(Clone, PartialEq, Eq)]
enum Proofs {
    /// The proofs to sign, and each one's issuer key set (kept so that locking the wallet or
    /// removing the issuer in between does not change how the presentation is checked).
    Pending(Vec<ProofToSign>, Vec<Jwks>),
    Attached(Vec<String>),
    /// The page could not finish them (a holder key is gone, signing failed); the reason is
    /// told to the agent.
    Failed(String),
}

impl core::fmt::Debug for Proofs {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Proofs::Pending(p, _) => write!(f, "Pending({})", p.len()),
            Proofs::Attached(p) => write!(f, "Attached({})", p.len()),
            Proofs::Failed(_) => f.write_str("Failed"),
        }
    }
}

/// Where the wallet fetches the keys of the site at `origin`: always under that origin, never a
/// URL an agent gave.
pub fn site_keys_url(origin: &Origin) -> String {
    format!("{}{SITE_KEYS_PATH}", origin.as_str())
}

/// Checks a signer's answer for a payload the wallet sent: the very payload, signed by a key
/// the pinned signer publishes, for the payload's own audience and nonce, valid at `now`.
pub fn check_signed(
    sent: &ReceiptPayload,
    signed: &SignedReceipt,
    keys: &KeySet,
    now: Timestamp,
) -> Result<(), GateError> {
    if &signed.payload != sent {
        return Err(GateError::ReceiptMismatch);
    }
    wallet_core::receipt::verify(signed, keys, &sent.audience, &sent.nonce, now)
        .map(|_| ())
        .map_err(|_| GateError::ReceiptUnverified)
}

/// A call that has been checked and is waiting to be completed (see [`Gate::finish`]).
#[derive(Debug)]
pub struct Pending(PendingKind);

#[derive(Debug)]
enum PendingKind {
    Done(Reply),
    Claim {
        grant: GrantId,
        epoch: u64,
        nonce: Option<String>,
    },
}

/// Domain separation of the per-audience session ids derived from a gate's secret.
pub const SESSION_ID_DOMAIN: &[u8] = b"tacit/gate/session-id/v1\0";
/// Domain separation of the request, grant and proposal ids derived from a gate's secret.
pub const GATE_ID_DOMAIN: &[u8] = b"tacit/gate/id/v1\0";

/// A per-session secret. Never shown, never serialized; `Debug` prints nothing of it.
#[derive(Clone)]
struct Secret([u8; 32]);

impl core::fmt::Debug for Secret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// See the crate docs.
#[derive(Debug)]
pub struct Gate {
    pub(crate) session: SessionId,
    /// With a secret ([`Gate::with_secret`]) session ids are per audience and every id is
    /// pseudo-random; without ([`Gate::new`], for tests) one session id and counter ids.
    secret: Option<Secret>,
    pub(crate) epoch: u64,
    pub(crate) profile: Option<Profile>,
    pub(crate) ledger: DisclosureLedger,
    pub(crate) log: ComparisonLog,
    pub(crate) requests: BTreeMap<RequestId, Request>,
    pub(crate) grants: BTreeMap<GrantId, Grant>,
    pub(crate) proposals: BTreeMap<ProposalId, Proposal>,
    pub(crate) credentials: Credentials,
    /// Per released proposal with issuer-backed items, its presentations.
    proofs: BTreeMap<ProposalId, Proofs>,
    next_id: u64,
    /// Arrival sequence of requests, grants and proposals (separate from the id counter).
    next_arrival: u64,
}

impl Gate {
    /// A locked gate for tests and tools: every receipt carries `session`, and request, grant and
    /// proposal ids count up (`r1`, `g2`, `p3`). A page uses [`Gate::with_secret`].
    pub fn new(session: SessionId, ledger: DisclosureLedger) -> Self {
        Self {
            session,
            secret: None,
            epoch: 0,
            profile: None,
            ledger,
            log: ComparisonLog::new(),
            requests: BTreeMap::new(),
            grants: BTreeMap::new(),
            proposals: BTreeMap::new(),
            credentials: Credentials::default(),
            proofs: BTreeMap::new(),
            next_id: 1,
            next_arrival: 0,
        }
    }

    /// A locked gate for one page session, unlinkable across audiences: `secret` (32 random
    /// bytes the page draws once per session and never stores) derives each audience's session
    /// id ([`Gate::session_for`]), and request, grant and proposal ids are pseudo-random (derived
    /// from the secret and a counter), so no two sites' receipts share an identifier and no id
    /// tells how many others were issued. The ledger carries what earlier sessions revealed.
    pub fn with_secret(secret: [u8; 32], ledger: DisclosureLedger) -> Self {
        let mut gate = Self::new(session_id_from(&secret, b"local"), ledger);
        gate.secret = Some(Secret(secret));
        gate
    }

    /// The session id receipts for `audience` carry: derived from the secret and the audience
    /// (`s-` and 18 hex digits of SHA-256 over a domain tag, the secret and the audience), or,
    /// for a gate made with [`Gate::new`], its one session id.
    pub fn session_for(&self, audience: &Origin) -> SessionId {
        match &self.secret {
            Some(secret) => session_id_from(&secret.0, audience.as_str().as_bytes()),
            None => self.session.clone(),
        }
    }

    /// 8 pseudo-random bytes for the next id of `kind`, or `None` without a secret.
    fn id_bytes(&mut self, kind: &[u8]) -> (u64, Option<[u8; 8]>) {
        let n = self.next_counter();
        let bytes = self.secret.as_ref().map(|secret| {
            let mut h = Sha256::new();
            h.update(GATE_ID_DOMAIN);
            h.update(secret.0);
            h.update((kind.len() as u32).to_be_bytes());
            h.update(kind);
            h.update(n.to_be_bytes());
            let digest = h.finalize();
            let mut out = [0u8; 8];
            out.copy_from_slice(&digest[..8]);
            out
        });
        (n, bytes)
    }

    /// The part of a fresh id after its prefix: hex of the id bytes, or the counter.
    fn make_id_suffix(&mut self, prefix: &str) -> String {
        match self.id_bytes(prefix.as_bytes()) {
            (_, Some(bytes)) => hex::encode(bytes),
            (n, None) => n.to_string(),
        }
    }

    fn next_grant_id(&mut self) -> GrantId {
        loop {
            let id = match self.id_bytes(b"g") {
                (_, Some(bytes)) => GrantId::derive_from_bytes(&bytes),
                (n, None) => GrantId::derive_from_counter(n),
            };
            if !self.grants.contains_key(&id) {
                return id;
            }
        }
    }

    fn next_arrival(&mut self) -> u64 {
        self.next_arrival += 1;
        self.next_arrival
    }

    fn next_counter(&mut self) -> u64 {
        let n = self.next_id;
        self.next_id += 1;
        n
    }

    // ----- what exists --------------------------------------------------------------------

    /// The tools that should be registered right now: the persistent ones, and one claim tool
    /// per live grant.
    pub fn tools(&self) -> Vec<ToolDef> {
        let mut tools = persistent_tools();
        tools.extend(
            self.grants
                .values()
                .filter(|g| g.state == GrantState::Live)
                .filter_map(|g| claim_tool(&g.claim, &g.origin, &g.id, g.epoch)),
        );
        tools
    }

    /// Whether the wallet holds an unlocked profile.
    pub fn is_unlocked(&self) -> bool {
        self.profile.is_some()
    }

    /// The gate's own session id. A gate made with [`Gate::new`] puts it in every receipt; one
    /// made with [`Gate::with_secret`] never sends it anywhere (receipts carry
    /// [`Gate::session_for`] their audience).
    pub fn session(&self) -> &SessionId {
        &self.session
    }

    pub fn ledger(&self) -> &DisclosureLedger {
        &self.ledger
    }

    /// Every comparison this session, all origins.
    pub fn log(&self) -> &ComparisonLog {
        &self.log
    }

    /// The requests in arrival order (`received_at`, then arrival sequence).
    pub fn requests(&self) -> impl Iterator<Item = &Request> {
        let mut all: Vec<&Request> = self.requests.values().collect();
        all.sort_by_key(|r| (r.received_at, r.arrival));
        all.into_iter()
    }

    /// The grants in grant order.
    pub fn grants(&self) -> impl Iterator<Item = &Grant> {
        let mut all: Vec<&Grant> = self.grants.values().collect();
        all.sort_by_key(|g| (g.granted_at, g.arrival));
        all.into_iter()
    }

    /// The proposals in drafting order (`created_at`, then arrival sequence).
    pub fn proposals(&self) -> impl Iterator<Item = &Proposal> {
        let mut all: Vec<&Proposal> = self.proposals.values().collect();
        all.sort_by_key(|p| (p.created_at, p.arrival));
        all.into_iter()
    }

    pub fn request(&self, id: &RequestId) -> Option<&Request> {
        self.requests.get(id)
    }

    pub fn proposal(&self, id: &ProposalId) -> Option<&Proposal> {
        self.proposals.get(id)
    }

    // ----- the person's side ----------------------------------------------------------------

    /// Unlocks with a profile the page decrypted. Grants from before a lock do not come back.
    pub fn unlock(&mut self, profile: Profile) {
        self.epoch += 1;
        self.profile = Some(profile);
    }

    /// Loads the credentials the page unsealed with the vault. They answer claims at ladder steps
    /// and age thresholds until the wallet is locked.
    pub fn set_credentials(&mut self, credentials: Credentials) {
        self.credentials = credentials;
    }

    /// The credentials held (for the page to seal and save, and to list).
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// The issuers whose credentials need a new batch at `now`: fewer than the refill mark
    /// left, counting as spent an age predicate the typed birth date says may have turned since
    /// its credential was issued. The page fetches for each.
    pub fn refills_due(&self, now: Timestamp) -> Vec<Origin> {
        self.credentials.refills_due(now, self.profile.as_ref())
    }

    /// The credentials held, to add a batch or remove an issuer.
    pub fn credentials_mut(&mut self) -> &mut Credentials {
        &mut self.credentials
    }

    /// Restores what earlier sessions revealed (the page keeps the ledger sealed beside the
    /// vault). Call before answering anything in this session.
    pub fn restore_ledger(&mut self, ledger: DisclosureLedger) {
        self.ledger = ledger;
    }

    /// Replaces the profile after the person edited it. Every grant is withdrawn (its answers
    /// were about the old facts). The disclosure memory is reset for each attribute whose fact
    /// changed, and only those (what it remembers about an unchanged fact stays true and stays
    /// revealed); the changed attributes are returned so the page can tell the person that
    /// answers about the old values remain known. Locked, nothing is reset.
    pub fn replace_profile(&mut self, profile: Profile) -> Vec<wallet_core::Attribute> {
        let changed = match &self.profile {
            Some(old) => self.ledger.reset_changed(old, &profile),
            None => Vec::new(),
        };
        let credentials = core::mem::take(&mut self.credentials);
        self.lock();
        self.unlock(profile);
        self.credentials = credentials;
        changed
    }

    /// Merges another copy of the disclosure memory in (another tab's, or the one stored with
    /// the vault): the gate then knows what both knew.
    pub fn merge_ledger(&mut self, other: &DisclosureLedger) {
        self.ledger.merge_from(other);
    }

    /// Forgets the profile and the credentials, and withdraws every claim tool.
    pub fn lock(&mut self) {
        self.epoch += 1;
        self.profile = None;
        self.credentials = Credentials::default();
        for grant in self.grants.values_mut() {
            grant.lock();
        }
    }

    /// Grants some claims of a held request (by index) for `lifetime`. Returns the new grants.
    pub fn grant(
        &mut self,
        request_id: &RequestId,
        chosen: &[usize],
        lifetime: Lifetime,
        now: Timestamp,
    ) -> Result<Vec<GrantId>, GateError> {
        if self.profile.is_none() {
            return Err(GateError::Locked);
        }
        let lease = lifetime.lease(now).map_err(|_| GateError::BadLifetime)?;
        let request = self
            .requests
            .get(request_id)
            .ok_or(GateError::UnknownRequest)?;
        if request.state != RequestState::Held {
            return Err(GateError::AlreadyDecided);
        }
        let mut unique = chosen.to_vec();
        unique.sort_unstable();
        unique.dedup();
        if unique.is_empty()
            || unique.len() != chosen.len()
            || unique.iter().any(|&i| i >= request.claims.len())
        {
            return Err(GateError::NoClaimChosen);
        }
        let request = request.clone();
        let mut ids = Vec::new();
        for index in unique {
            let id = self.next_grant_id();
            let arrival = self.next_arrival();
            let claim = (request.claims.get(index).cloned()).ok_or(GateError::NoClaimChosen)?;
            let grant = Grant::new(
                id.clone(),
                &request,
                claim,
                self.epoch,
                arrival,
                lease.clone(),
            );
            self.grants.insert(id.clone(), grant);
            ids.push(id);
        }
        if let Some(request) = self.requests.get_mut(request_id) {
            request.state = RequestState::Granted {
                grants: ids.clone(),
            };
        }
        self.prune_dead_grants();
        self.prune_decided();
        Ok(ids)
    }

    /// Denies a held request with a reason the agent will read.
    pub fn deny(&mut self, request_id: &RequestId, reason: &str) -> Result<(), GateError> {
        let reason = check_reason(reason)?;
        let request = self
            .requests
            .get_mut(request_id)
            .ok_or(GateError::UnknownRequest)?;
        if request.state != RequestState::Held {
            return Err(GateError::AlreadyDecided);
        }
        request.state = RequestState::Denied { reason };
        self.prune_decided();
        Ok(())
    }

    /// Denies, in one act of the person, every request `origin` has waiting, with `reason`;
    /// returns how many. Requests of other origins are untouched.
    pub fn deny_all_from(&mut self, origin: &Origin, reason: &str) -> Result<usize, GateError> {
        let reason = check_reason(reason)?;
        let mut denied = 0;
        for request in self.requests.values_mut() {
            if &request.origin == origin && request.state == RequestState::Held {
                request.state = RequestState::Denied {
                    reason: reason.clone(),
                };
                denied += 1;
            }
        }
        self.prune_decided();
        Ok(denied)
    }

    /// Revokes a grant; its tool is withdrawn at the next sync and any handle is refused.
    pub fn revoke(&mut self, grant: &GrantId) -> Result<(), GateError> {
        self.grants
            .get_mut(grant)
            .ok_or(GateError::UnknownGrant)?
            .revoke();
        self.prune_dead_grants();
        Ok(())
    }

    /// The earliest instant at which a live grant expires.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.grants
            .values()
            .map(Grant::lease)
            .filter(|lease| lease.is_live())
            .map(|lease| Timestamp::from_millis(lease.expires_at))
            .min()
    }

    /// Expires every grant whose deadline is at or before `now`. Returns whether anything changed.
    pub fn tick(&mut self, now: Timestamp) -> bool {
        let mut changed = false;
        for grant in self.grants.values_mut() {
            changed |= grant.expire(now);
        }
        self.prune_dead_grants();
        changed
    }

    /// Checks the site's signature on a request against `keys`, the document the page fetched
    /// from [`site_keys_url`] of the request's origin. On success the asker is `Verified`; on
    /// failure it stays `Unconfirmed` and the error says why.
    pub fn confirm_asker(
        &mut self,
        request_id: &RequestId,
        keys: &SiteKeys,
        now: Timestamp,
    ) -> Result<(), GateError> {
        let request = self
            .requests
            .get_mut(request_id)
            .ok_or(GateError::UnknownRequest)?;
        let attestation = request
            .attestation
            .as_ref()
            .ok_or(GateError::NoAttestation)?;
        let requirements = request.requirements();
        verify_requirements(keys, &requirements, attestation, now)
            .map_err(GateError::SiteNotConfirmed)?;
        let site_name = if requirements.site_name.trim().is_empty() {
            keys.site_name.clone()
        } else {
            requirements.site_name
        };
        request.asker = AskerStatus::Verified { site_name };
        Ok(())
    }

    /// Why the disclosure memory would decline claim `claim_index` of request `request_id`, in
    /// plain words for the consent card, or `None` when it would answer (from memory or by
    /// evaluating). Judged on the request's arrival day ([`Gate::would_decline_at`] for
    /// another). Reads the memory only, never the profile, so it can be shown before the person
    /// decides. A question in another currency is not a memory decline: see
    /// [`Gate::currency_note`].
    pub fn would_decline(&self, request_id: &RequestId, claim_index: usize) -> Option<String> {
        let at = self.requests.get(request_id)?.received_at;
        self.would_decline_at(request_id, claim_index, at)
    }

    /// [`Gate::would_decline`] judged on the day of `now`.
    pub fn would_decline_at(
        &self,
        request_id: &RequestId,
        claim_index: usize,
        now: Timestamp,
    ) -> Option<String> {
        let claim = self.requests.get(request_id)?.claims.get(claim_index)?;
        match self.ledger.assess(claim, now.date_utc()) {
            wallet_core::Assessment::Decline => Some(decline_reason(claim)),
            _ => None,
        }
    }

    /// For the consent card, beside a question: when a credential answers it (so the site is
    /// told the credential's answer) and what the person typed answers it the other way, a
    /// sentence that says so, naming the issuer ([`crate::words::disagreement_on_card`]); `None` when
    /// they agree, no credential answers it, or the wallet is locked. Judged at `now`.
    pub fn disagreement_on(
        &self,
        request_id: &RequestId,
        claim_index: usize,
        now: Timestamp,
    ) -> Option<String> {
        let claim = self.requests.get(request_id)?.claims.get(claim_index)?;
        let profile = self.profile.as_ref()?;
        let (_, issuer) = self.credentials.disagreement_on(claim, profile, now)?;
        let name = self.credentials.issuer_name(&issuer);
        Some(crate::words::disagreement_on_card(
            &crate::words::issuer_label(name, issuer.as_str()),
        ))
    }

    /// Every issuer whose credential answers one of its questions differently from what the
    /// person typed, at `now` ([`Credentials::disagreements`]); empty while locked.
    pub fn disagreements(&self, now: Timestamp) -> Vec<crate::credentials::Disagreement> {
        self.profile
            .as_ref()
            .map(|p| self.credentials.disagreements(p, now))
            .unwrap_or_default()
    }

    /// For the consent card: for an income question, a sentence about its currency when it
    /// matters (issue 30, item 6). Unlocked, only when the profile's income is in another
    /// currency, saying so; `None` when both are in the same one. Locked, the profile's
    /// currency is not known, so the same words for any profile. `None` for other claims.
    ///
    /// The card is drawn in the vault, the person's own page: in the paired layout no agent
    /// reads it (`docs/threat-model.md`). What an agent reads — tools, answers, refusals — is
    /// the same whatever the currency (`tests/applications.rs`).
    pub fn currency_note(&self, request_id: &RequestId, claim_index: usize) -> Option<String> {
        let claim = self.requests.get(request_id)?.claims.get(claim_index)?;
        let Claim::IncomeBelow { limit } = claim else {
            return None;
        };
        let asked = limit.currency.as_str();
        match self.profile.as_ref().map(|p| p.income().currency) {
            Some(mine) if mine == limit.currency => None,
            Some(mine) => Some(format!(
                "Asked in {asked}; your income is recorded in {mine}. Amounts are never \
                 converted, so the wallet declines this question, in the words it uses for any \
                 question it will not answer.",
                mine = mine.as_str(),
            )),
            None => Some(format!(
                "Asked in {asked}. Amounts are never converted: if your income is recorded in \
                 another currency, the wallet declines this question, in the words it uses for \
                 any question it will not answer."
            )),
        }
    }

    /// The name `origin` signed, checked, in a request the gate holds from it: how the person
    /// reads that site in dialogs, log lines and receipts ([`crate::words::site_label`]).
    /// `None` when no request from it was verified (a name only an agent gave is never used).
    pub fn verified_site_name(&self, origin: &Origin) -> Option<&str> {
        self.requests
            .values()
            .filter(|r| &r.origin == origin)
            .find_map(|r| match &r.asker {
                AskerStatus::Verified { site_name } if !site_name.trim().is_empty() => {
                    Some(site_name.as_str())
                }
                _ => None,
            })
    }

    /// Who asked for a proposal: `Verified` if a request from its audience carrying its nonce
    /// was confirmed, otherwise `Unconfirmed`.
    pub fn proposal_asker(&self, proposal_id: &ProposalId) -> Option<AskerStatus> {
        let proposal = self.proposals.get(proposal_id)?;
        Some(
            self.requests
                .values()
                .filter(|r| r.origin == proposal.audience && r.nonce == proposal.nonce)
                .map(|r| r.asker.clone())
                .find(AskerStatus::is_verified)
                .unwrap_or(AskerStatus::Unconfirmed),
        )
    }

    /// Releases a held proposal the person reviewed (see [`Gate::release_with_proofs`]); the
    /// proofs to sign stay available from [`Gate::proofs_to_sign`].
    pub fn release(
        &mut self,
        proposal_id: &ProposalId,
        shown_digest: &str,
        acknowledged: Acknowledgement,
        now: Timestamp,
    ) -> Result<ReceiptPayload, GateError> {
        self.release_with_proofs(proposal_id, shown_digest, acknowledged, now)
            .map(|released| released.payload)
    }

    /// Releases a held proposal the person reviewed. `shown_digest` is the digest of what the
    /// page displayed; if the proposal changed since, the approval is void. A proposal whose
    /// asker is not confirmed ([`Gate::proposal_asker`]) is released only with
    /// [`Acknowledgement::UnconfirmedSite`].
    ///
    /// For each issuer-backed item, one unused credential of its issuer is picked and **marked
    /// used at once**: the page must persist [`Gate::credentials`] before anything leaves, then
    /// sign each [`ProofToSign`] and call [`Gate::attach_presentations`]. If an item's issuer has
    /// no credential left, nothing is released ([`GateError::NoProofsLeft`]).
    ///
    /// Every item leaves; [`Gate::release_kept`] lets the person drop some first.
    pub fn release_with_proofs(
        &mut self,
        proposal_id: &ProposalId,
        shown_digest: &str,
        acknowledged: Acknowledgement,
        now: Timestamp,
    ) -> Result<Released, GateError> {
        let all: Vec<usize> = self
            .proposals
            .get(proposal_id)
            .map(|p| (0..p.items.len()).collect())
            .unwrap_or_default();
        self.release_kept(proposal_id, shown_digest, &all, acknowledged, now)
    }

    /// Releases the items `kept` (indices into [`Proposal::items`]) of a held proposal the
    /// person reviewed, as [`Gate::release_with_proofs`] does for all of them: only the kept
    /// answers leave, as the payload's entries (one per kept item, in item order, chained from
    /// genesis), and only kept issuer-backed items get a proof (and use a credential).
    /// `shown_digest` is the digest of the whole proposal the page displayed. `kept` must be
    /// non-empty, in range and without repeats ([`GateError::NoItemKept`]); nothing changes on
    /// any error.
    pub fn release_kept(
        &mut self,
        proposal_id: &ProposalId,
        shown_digest: &str,
        kept: &[usize],
        acknowledged: Acknowledgement,
        now: Timestamp,
    ) -> Result<Released, GateError> {
        let asker = self
            .proposal_asker(proposal_id)
            .ok_or(GateError::UnknownProposal)?;
        let proposal = self
            .proposals
            .get(proposal_id)
            .ok_or(GateError::UnknownProposal)?;
        match proposal.state {
            ProposalState::Held => {}
            ProposalState::Released { .. } => return Err(GateError::AlreadyReleased),
            ProposalState::Refused { .. } => return Err(GateError::AlreadyRefused),
        }
        if !proposal.digest_matches(shown_digest) {
            return Err(GateError::ApprovalVoid);
        }
        let mut kept_sorted = kept.to_vec();
        kept_sorted.sort_unstable();
        kept_sorted.dedup();
        if kept_sorted.is_empty()
            || kept_sorted.len() != kept.len()
            || kept_sorted
                .iter()
                .any(|&i| i >= proposal.items.len() || i >= proposal.entries.len())
        {
            return Err(GateError::NoItemKept);
        }
        if !asker.is_verified() && acknowledged != Acknowledgement::UnconfirmedSite {
            return Err(GateError::UnconfirmedAudience);
        }
        let kept_items: Vec<&ProposalItem> = kept_sorted
            .iter()
            .filter_map(|&i| proposal.items.get(i))
            .collect();
        if kept_items.iter().any(|i| i.is_issuer_backed()) && self.profile.is_none() {
            return Err(GateError::Locked);
        }
        let payload = ReceiptPayload::from_entries(
            self.session_for(&proposal.audience),
            proposal.audience.clone(),
            proposal.nonce.clone(),
            now,
            now.plus_millis(RECEIPT_TTL_MS),
            wallet_core::rechain(kept_sorted.iter().filter_map(|&i| proposal.entries.get(i))),
        )
        .map_err(GateError::Receipt)?;
        // Pick every credential on a copy: all of them, or none is marked used.
        let mut credentials = self.credentials.clone();
        let mut proofs = Vec::new();
        let mut key_sets = Vec::new();
        for item in kept_items {
            let Some(issuer) = &item.issuer else { continue };
            let taken = credentials.take_for_typed(
                issuer,
                &item.claim,
                item.satisfied,
                now,
                self.profile.as_ref(),
            );
            // As the person is shown the issuer anywhere: its name beside its address, cleaned
            // of look-alike characters (`words::issuer_label`).
            let name = || {
                crate::words::item_issuer(item, &credentials).unwrap_or_else(|| issuer.to_string())
            };
            let picked = match taken {
                Ok(picked) => picked,
                Err(TakeError::NoneLeft | TakeError::UnknownIssuer) => {
                    return Err(GateError::NoProofsLeft { issuer: name() });
                }
                Err(TakeError::Mismatch) => {
                    return Err(GateError::ProofMismatch { issuer: name() });
                }
            };
            key_sets.push(
                credentials
                    .jwks_of(issuer)
                    .cloned()
                    .ok_or_else(|| GateError::NoProofsLeft { issuer: name() })?,
            );
            proofs.push(ProofToSign {
                holder_key_id: picked.holder_key_id,
                signing_input: kb_jwt_signing_input(
                    proposal.audience.as_str(),
                    proposal.nonce.as_str(),
                    now,
                    &picked.without_kb,
                ),
                without_kb: picked.without_kb,
                claim: item.claim.clone(),
                issuer: issuer.clone(),
            });
        }
        self.credentials = credentials;
        if let Some(proposal) = self.proposals.get_mut(proposal_id) {
            proposal.state = ProposalState::Released {
                payload: Box::new(payload.clone()),
                signed: None,
            };
            proposal.kept = Some(kept_sorted);
        }
        if !proofs.is_empty() {
            self.proofs.insert(
                proposal_id.clone(),
                Proofs::Pending(proofs.clone(), key_sets),
            );
        }
        self.prune_decided();
        Ok(Released { payload, proofs })
    }

    /// The proofs a released proposal still waits to have signed (empty when none).
    pub fn proofs_to_sign(&self, proposal_id: &ProposalId) -> &[ProofToSign] {
        match self.proofs.get(proposal_id) {
            Some(Proofs::Pending(proofs, _)) => proofs,
            _ => &[],
        }
    }

    /// The finished presentations of a released proposal, once attached.
    pub fn presentations(&self, proposal_id: &ProposalId) -> Option<&[String]> {
        match self.proofs.get(proposal_id) {
            Some(Proofs::Attached(done)) => Some(done),
            _ => None,
        }
    }

    /// Why the proofs of a released proposal could not be finished, if the page said so.
    pub fn presentations_failure(&self, proposal_id: &ProposalId) -> Option<&str> {
        match self.proofs.get(proposal_id) {
            Some(Proofs::Failed(reason)) => Some(reason),
            _ => None,
        }
    }

    /// The page could not finish the proofs of a released proposal (a holder key is missing,
    /// WebCrypto refused): the agent is told, with `reason`, to start again instead of polling
    /// for ever. Their credentials stay used.
    pub fn fail_presentations(
        &mut self,
        proposal_id: &ProposalId,
        reason: &str,
    ) -> Result<(), GateError> {
        let reason = check_reason(reason)?;
        match self.proofs.get(proposal_id) {
            Some(Proofs::Pending(..)) => {
                self.proofs
                    .insert(proposal_id.clone(), Proofs::Failed(reason));
                Ok(())
            }
            _ if !self.proposals.contains_key(proposal_id) => Err(GateError::UnknownProposal),
            _ => Err(GateError::NoProofsPending),
        }
    }

    /// Whether a released proposal still waits for its proofs to be signed.
    pub fn awaits_presentations(&self, proposal_id: &ProposalId) -> bool {
        matches!(self.proofs.get(proposal_id), Some(Proofs::Pending(..)))
    }

    /// Finishes the presentations of a released proposal with the page's signatures (one 64-byte
    /// P1363 signature per [`ProofToSign`], in order). Each presentation is verified first as the
    /// site will (issuer key, holder key, audience, nonce, age at `now`); if any fails, nothing is
    /// attached.
    pub fn attach_presentations(
        &mut self,
        proposal_id: &ProposalId,
        signatures: Vec<[u8; 64]>,
        now: Timestamp,
    ) -> Result<(), GateError> {
        let proposal = self
            .proposals
            .get(proposal_id)
            .ok_or(GateError::UnknownProposal)?;
        let Some(Proofs::Pending(pending, key_sets)) = self.proofs.get(proposal_id) else {
            return Err(GateError::NoProofsPending);
        };
        if signatures.len() != pending.len() {
            return Err(GateError::SignatureCount {
                expected: pending.len(),
                got: signatures.len(),
            });
        }
        let mut done = Vec::with_capacity(pending.len());
        for (index, ((proof, jwks), signature)) in
            pending.iter().zip(key_sets).zip(&signatures).enumerate()
        {
            let text =
                sd_jwt::finish_presentation(&proof.without_kb, &proof.signing_input, signature);
            let unverified = |error: SdJwtError| GateError::PresentationUnverified {
                index,
                code: error.code(),
            };
            let trusted = [TrustedIssuer {
                iss: proof.issuer.as_str().to_owned(),
                jwks: jwks.clone(),
            }];
            sd_jwt::verify_presentation(
                &text,
                &trusted,
                proposal.audience.as_str(),
                proposal.nonce.as_str(),
                now,
                DEFAULT_MAX_KB_AGE_MS,
            )
            .map_err(unverified)?;
            done.push(text);
        }
        self.proofs
            .insert(proposal_id.clone(), Proofs::Attached(done));
        Ok(())
    }

    /// Refuses a held proposal with a reason the agent will read.
    pub fn refuse(&mut self, proposal_id: &ProposalId, reason: &str) -> Result<(), GateError> {
        let reason = check_reason(reason)?;
        let proposal = self
            .proposals
            .get_mut(proposal_id)
            .ok_or(GateError::UnknownProposal)?;
        match proposal.state {
            ProposalState::Held => {
                proposal.state = ProposalState::Refused { reason };
                self.prune_decided();
                Ok(())
            }
            ProposalState::Released { .. } => Err(GateError::AlreadyReleased),
            ProposalState::Refused { .. } => Err(GateError::AlreadyRefused),
        }
    }

    /// The session's receipts, one per audience that got answers, for the person's own record
    /// when they end the session: each holds every answer (satisfied or not; never a declined
    /// or invalid call) given to that audience this session, chained from genesis, under the
    /// audience's own session id ([`Gate::session_for`]), and carries the nonce of the
    /// audience's latest request.
    pub fn session_receipts(&self, now: Timestamp) -> Vec<ReceiptPayload> {
        let audiences: BTreeSet<&Origin> = self
            .log
            .entries()
            .iter()
            .filter(|e| is_answer(e))
            .map(|e| &e.origin)
            .collect();
        audiences
            .into_iter()
            .filter_map(|audience| {
                let nonce = self
                    .requests()
                    .filter(|r| &r.origin == audience)
                    .last()?
                    .nonce
                    .clone();
                let entries = wallet_core::rechain(
                    self.log
                        .entries()
                        .iter()
                        .filter(|e| &e.origin == audience && is_answer(e)),
                );
                ReceiptPayload::from_entries(
                    self.session_for(audience),
                    audience.clone(),
                    nonce,
                    now,
                    now.plus_millis(RECEIPT_TTL_MS),
                    entries,
                )
                .ok()
            })
            .collect()
    }

    /// The answers a draft for `audience` and `nonce` may carry, in log order: those given by
    /// claim tools of grants of the requests from that origin with that nonce (satisfied or not;
    /// declined and invalid calls stay in the local log only).
    pub fn answers_for(&self, audience: &Origin, nonce: &Nonce) -> Vec<LogEntry> {
        let grants: BTreeSet<&GrantId> = self
            .grants
            .values()
            .filter(|g| &g.origin == audience && &g.nonce == nonce)
            .map(|g| &g.id)
            .collect();
        self.log
            .entries()
            .iter()
            .filter(|e| &e.origin == audience && grants.contains(&e.grant_id) && is_answer(e))
            .cloned()
            .collect()
    }

    /// Attaches the signer's answer to a released proposal, for `check_proposal`, only if it
    /// passes [`check_signed`] against `keys` (the pinned signer's published keys) at `now`.
    /// Otherwise nothing changes: the proposal stays released and unsigned.
    pub fn attach_signed(
        &mut self,
        proposal_id: &ProposalId,
        signed: SignedReceipt,
        keys: &KeySet,
        now: Timestamp,
    ) -> Result<(), GateError> {
        let proposal = self
            .proposals
            .get_mut(proposal_id)
            .ok_or(GateError::UnknownProposal)?;
        match &mut proposal.state {
            ProposalState::Released {
                payload,
                signed: slot,
            } => {
                check_signed(payload, &signed, keys, now)?;
                *slot = Some(Box::new(signed));
                Ok(())
            }
            _ => Err(GateError::UnknownProposal),
        }
    }

    fn prune_decided(&mut self) {
        let mut decided: Vec<(Timestamp, u64, RequestId)> = self
            .requests
            .values()
            .filter(|r| r.state != RequestState::Held)
            .map(|r| (r.received_at, r.arrival, r.id.clone()))
            .collect();
        decided.sort();
        let excess = decided.len().saturating_sub(MAX_DECIDED);
        for (_, _, id) in decided.into_iter().take(excess) {
            self.requests.remove(&id);
        }
        let mut decided: Vec<(Timestamp, u64, ProposalId)> = self
            .proposals
            .values()
            .filter(|p| p.state != ProposalState::Held)
            .map(|p| (p.created_at, p.arrival, p.id.clone()))
            .collect();
        decided.sort();
        let excess = decided.len().saturating_sub(MAX_DECIDED);
        for (_, _, id) in decided.into_iter().take(excess) {
            self.proposals.remove(&id);
            self.proofs.remove(&id);
        }
    }

    fn prune_dead_grants(&mut self) {
        let dead: Vec<GrantId> = self
            .grants
            .values()
            .filter(|g| g.state != GrantState::Live)
            .map(|g| g.id.clone())
            .collect();
        let excess = dead.len().saturating_sub(MAX_DEAD_GRANTS);
        // Oldest first: by grant time, then grant order (ids are pseudo-random).
        let mut by_age: Vec<(Timestamp, u64, GrantId)> = dead
            .into_iter()
            .filter_map(|id| self.grants.get(&id).map(|g| (g.granted_at, g.arrival, id)))
            .collect();
        by_age.sort();
        for (_, _, id) in by_age.into_iter().take(excess) {
            self.grants.remove(&id);
        }
    }

    // ----- the agent's side -----------------------------------------------------------------

    /// Executes a tool in one step: `finish(begin(..))`.
    pub fn execute(&mut self, handler: &Handler, input: &Value, now: Timestamp) -> Value {
        let pending = self.begin(handler, input, now);
        self.finish(pending, now)
    }

    /// [`Gate::begin`] for a host that read the agent's input itself: `Err` is the sentence of
    /// the reader's refusal (e.g. input nested too deep, from [`crate::input::from_text`]). The
    /// call is refused as `invalid_input` with that sentence, and a claim call is checked and
    /// logged as any malformed call is.
    pub fn begin_read(
        &mut self,
        handler: &Handler,
        input: Result<&Value, &str>,
        now: Timestamp,
    ) -> Pending {
        let unreadable = match input {
            Ok(input) => return self.begin(handler, input, now),
            Err(why) => Refusal::new(Code::InvalidInput, why),
        };
        let refusal = match handler {
            Handler::Claim { grant, epoch } => {
                match self.check_grant(grant, *epoch, now, Use::Check) {
                    Err(ended) => {
                        self.log_refusal(grant, Outcome::Declined, now);
                        ended
                    }
                    Ok(()) => {
                        self.log_refusal(grant, Outcome::Invalid, now);
                        unreadable
                    }
                }
            }
            _ => unreadable,
        };
        Pending(PendingKind::Done(Err(refusal)))
    }

    /// Validates the input and checks authority. Nothing about the profile is read yet.
    pub fn begin(&mut self, handler: &Handler, input: &Value, now: Timestamp) -> Pending {
        let reply = match handler {
            Handler::WalletStatus => crate::exec::wallet_status(self, input),
            Handler::RequestClaims => crate::exec::request_claims(self, input, now),
            Handler::CheckRequest => crate::exec::check_request(self, input),
            Handler::DraftApplication => crate::exec::draft_application(self, input, now),
            Handler::CheckProposal => crate::exec::check_proposal(self, input),
            Handler::Claim { grant, epoch } => {
                return match self.begin_claim(grant, *epoch, input, now) {
                    Ok(nonce) => Pending(PendingKind::Claim {
                        grant: grant.clone(),
                        epoch: *epoch,
                        nonce,
                    }),
                    Err(refusal) => Pending(PendingKind::Done(Err(refusal))),
                };
            }
        };
        Pending(PendingKind::Done(reply))
    }

    /// Completes a call. A claim call re-checks its grant before answering: a call in flight
    /// when its grant died gets a refusal, never an outcome.
    pub fn finish(&mut self, pending: Pending, now: Timestamp) -> Value {
        let reply = match pending.0 {
            PendingKind::Done(reply) => reply,
            PendingKind::Claim {
                grant,
                epoch,
                nonce,
            } => self.finish_claim(&grant, epoch, nonce, now),
        };
        envelope(&reply)
    }

    fn begin_claim(
        &mut self,
        grant_id: &GrantId,
        epoch: u64,
        input: &Value,
        now: Timestamp,
    ) -> Result<Option<String>, Refusal> {
        let validated = crate::contract::parse::<crate::contract::ClaimInput>(input)
            .map(|i| i.nonce.map(|n| n.into_string()));
        let authority = self.check_grant(grant_id, epoch, now, Use::Check);
        match (authority, validated) {
            (Err(refusal), _) => {
                self.log_refusal(grant_id, Outcome::Declined, now);
                Err(refusal)
            }
            (Ok(()), Err(refusal)) => {
                self.log_refusal(grant_id, Outcome::Invalid, now);
                Err(refusal)
            }
            (Ok(()), Ok(nonce)) => Ok(nonce),
        }
    }

    fn finish_claim(
        &mut self,
        grant_id: &GrantId,
        epoch: u64,
        nonce: Option<String>,
        now: Timestamp,
    ) -> Reply {
        // Checked again now, taking a use (the last one ends the grant).
        if let Err(refusal) = self.check_grant(grant_id, epoch, now, Use::Take) {
            self.log_refusal(grant_id, Outcome::Declined, now);
            return Err(refusal);
        }
        let (Some(grant), Some(profile)) = (self.grants.get(grant_id), self.profile.as_ref())
        else {
            return Err(Refusal::new(Code::GrantRevoked, REVOKED));
        };
        let claim = grant.claim.clone();
        let today = now.date_utc();
        // A claim at a ladder step or age threshold is answered by the issuer's credential; any
        // other from what the person typed. The ledger decides first either way.
        // An age predicate the typed birth date says may have turned since its credential was
        // issued is not answered from it (a refill is due: `Gate::refills_due`).
        let backed = self.credentials.answer_typed(&claim, now, Some(profile));
        let mut answer = self.ledger.answer_from(&claim, today, || match &backed {
            Some((satisfied, _)) => Outcome::from_bool(*satisfied),
            None => match wallet_core::evaluate(profile, &claim, today) {
                Ok(evaluation) => Outcome::from_bool(evaluation.satisfied),
                Err(_) => Outcome::Invalid,
            },
        });
        // A question a credential answers is answered by it, even where the memory already
        // knows an answer learned from what the person typed and the two disagree: otherwise
        // the label (and the proof a site then gets or not) would tell whether the typed fact
        // and the credential agree (issue 28 item 6). Only the memory's decline stands, decided
        // from history alone; the person is told of a disagreement beside the fact and on the
        // card (`Credentials::disagreements`, `Gate::disagreement_on`). A credential answers
        // only at ladder steps one income floor apart or age thresholds years apart, so its
        // answers alone never narrow a fact below a floor.
        let issuer = match backed {
            Some((satisfied, issuer)) if answer.outcome != Outcome::Declined => {
                answer.outcome = Outcome::from_bool(satisfied);
                Some(issuer)
            }
            _ => None,
        };
        // A question in another currency is the only claim that evaluates to `Invalid` (amounts
        // are never converted). To the agent, and in the log, it is the privacy-floor decline in
        // the same words: a code of its own would name the profile's currency by elimination.
        let logged = match answer.outcome {
            Outcome::Invalid => Outcome::Declined,
            outcome => outcome,
        };
        self.log_claim_with(grant_id, &claim, logged, now, issuer);
        match answer.outcome {
            Outcome::Satisfied | Outcome::NotSatisfied => {
                let mut result = json!({
                    "satisfied": answer.outcome == Outcome::Satisfied,
                    "claim": claim,
                });
                if let (Some(nonce), Value::Object(map)) = (nonce, &mut result) {
                    map.insert("nonce".into(), Value::String(nonce));
                }
                Ok(result)
            }
            Outcome::Declined | Outcome::Invalid => Err(Refusal::new(
                Code::DeclinedPrivacyFloor,
                DECLINED_PRIVACY_FLOOR,
            )),
        }
    }

    /// The grant's lease at `now` (live, not expired, a use left; `Use::Take` takes one) and
    /// the lock epoch the handle was made in.
    fn check_grant(
        &mut self,
        grant_id: &GrantId,
        epoch: u64,
        now: Timestamp,
        take: Use,
    ) -> Result<(), Refusal> {
        let current = self.epoch;
        let Some(grant) = self.grants.get_mut(grant_id) else {
            return Err(Refusal::new(Code::GrantRevoked, REVOKED));
        };
        grant.expire(now);
        if grant.epoch != epoch || (grant.state == GrantState::Live && epoch != current) {
            return Err(Refusal::new(Code::GrantRevoked, REVOKED));
        }
        let checked = match take {
            Use::Check => grant.check(now),
            Use::Take => grant.take_use(now),
        };
        checked.map_err(|ended| ended_refusal(ended, grant.state))
    }

    fn log_refusal(&mut self, grant_id: &GrantId, outcome: Outcome, now: Timestamp) {
        if let Some(claim) = self.grants.get(grant_id).map(|g| g.claim.clone()) {
            self.log_claim(grant_id, &claim, outcome, now);
        }
    }

    fn log_claim(&mut self, grant_id: &GrantId, claim: &Claim, outcome: Outcome, now: Timestamp) {
        self.log_claim_with(grant_id, claim, outcome, now, None);
    }

    fn log_claim_with(
        &mut self,
        grant_id: &GrantId,
        claim: &Claim,
        outcome: Outcome,
        now: Timestamp,
        issuer: Option<Origin>,
    ) {
        let Some(grant) = self.grants.get(grant_id) else {
            return;
        };
        let origin = grant.origin.clone();
        let Some(tool) = claim_tool(claim, &origin, grant_id, grant.epoch).map(|t| t.name) else {
            return;
        };
        self.log.append(
            now,
            origin,
            tool,
            claim.clone(),
            outcome,
            grant_id.clone(),
            issuer,
        );
    }
}

/// Whether a log entry is an answer (satisfied or not), the only kind a receipt carries.
fn is_answer(entry: &LogEntry) -> bool {
    matches!(entry.outcome, Outcome::Satisfied | Outcome::NotSatisfied)
}

/// `s-` and 18 hex digits of SHA-256(domain ‖ secret ‖ len ‖ label).
fn session_id_from(secret: &[u8; 32], label: &[u8]) -> SessionId {
    let mut h = Sha256::new();
    h.update(SESSION_ID_DOMAIN);
    h.update(secret);
    h.update((label.len() as u32).to_be_bytes());
    h.update(label);
    let digest = h.finalize();
    let mut bytes = [0u8; 9];
    bytes.copy_from_slice(&digest[..9]);
    SessionId::derive_from_bytes(&bytes)
}

/// Why the memory declines `claim`, for the person.
fn decline_reason(claim: &Claim) -> String {
    let what = claim.attribute().topic();
    format!(
        "Would be declined: with what has already been answered about {what}, either answer \
         could narrow it more than your privacy floor allows."
    )
}

/// What the agent is told when a granted claim is declined: answering would narrow the person's
/// facts below their floor, or (the same words, on purpose) the question is in another currency
/// than the profile's.
const DECLINED_PRIVACY_FLOOR: &str = "Declined: answering would narrow what is already known about \
     the person below their privacy floor. Asking again or with nearby thresholds will be declined \
     too.";

/// Whether a check takes a use.
#[derive(Debug, Clone, Copy)]
enum Use {
    Check,
    Take,
}

/// What a call on a grant whose lease ended gets: tool-gate's code, the wallet's sentence (which
/// tells the agent how to ask again).
fn ended_refusal(ended: Ended, state: GrantState) -> Refusal {
    let message = match (ended, state) {
        (_, GrantState::Locked) | (Ended::Revoked, _) => REVOKED,
        (Ended::Spent, _) => {
            "This one-time grant has been used. Ask the person again with request_claims."
        }
        (Ended::Expired, _) => {
            "The person's grant for this claim expired; the tool no longer exists. Ask again \
             with request_claims if you still need it."
        }
    };
    let code = if state == GrantState::Locked {
        Code::GrantRevoked
    } else {
        Code::from(ended)
    };
    Refusal::new(code, message)
}

const REVOKED: &str = "The person's grant for this claim was revoked or the wallet was locked; \
    the tool no longer exists. Do not retry; ask again with request_claims if still needed.";

fn check_reason(reason: &str) -> Result<String, GateError> {
    let trimmed = reason.trim();
    if trimmed.is_empty() || trimmed.chars().count() > 500 {
        return Err(GateError::BadReason);
    }
    Ok(trimmed.to_owned())
}

/// The persistent tools' view of the gate ([`crate::exec`]).
impl Book for Gate {
    fn is_unlocked(&self) -> bool {
        Gate::is_unlocked(self)
    }

    fn requests(&self) -> impl Iterator<Item = &Request> {
        Gate::requests(self)
    }

    fn grants(&self) -> impl Iterator<Item = &Grant> {
        Gate::grants(self)
    }

    fn proposals(&self) -> impl Iterator<Item = &Proposal> {
        Gate::proposals(self)
    }

    fn request(&self, id: &RequestId) -> Option<&Request> {
        Gate::request(self, id)
    }

    fn proposal(&self, id: &ProposalId) -> Option<&Proposal> {
        Gate::proposal(self, id)
    }

    fn answers_for(&self, audience: &Origin, nonce: &Nonce) -> Vec<LogEntry> {
        Gate::answers_for(self, audience, nonce)
    }

    fn issuer_name(&self, issuer: &Origin) -> Option<String> {
        self.credentials.issuer_name(issuer).map(str::to_owned)
    }

    fn presentations(&self, id: &ProposalId) -> Option<&[String]> {
        Gate::presentations(self, id)
    }

    fn presentations_failure(&self, id: &ProposalId) -> Option<&str> {
        Gate::presentations_failure(self, id)
    }

    fn awaits_presentations(&self, id: &ProposalId) -> bool {
        Gate::awaits_presentations(self, id)
    }

    /// A fresh request id and its arrival sequence number.
    fn next_request_id(&mut self) -> (RequestId, u64) {
        loop {
            let id = RequestId::made(&self.make_id_suffix(RequestId::PREFIX));
            if !self.requests.contains_key(&id) {
                return (id, self.next_arrival());
            }
        }
    }

    /// A fresh proposal id and its arrival sequence number.
    fn next_proposal_id(&mut self) -> (ProposalId, u64) {
        loop {
            let id = ProposalId::made(&self.make_id_suffix(ProposalId::PREFIX));
            if !self.proposals.contains_key(&id) {
                return (id, self.next_arrival());
            }
        }
    }

    fn hold_request(&mut self, request: Request) {
        self.requests.insert(request.id.clone(), request);
    }

    fn hold_proposal(&mut self, proposal: Proposal) {
        self.proposals.insert(proposal.id.clone(), proposal);
    }
}
