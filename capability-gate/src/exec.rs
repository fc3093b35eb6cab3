//! The persistent tools. None reads the profile; each validates its input strictly.
//!
//! They see the gate only through [`Book`], the narrow view the gate implements: this module
//! does not import the gate, so the dependency goes one way (`gate` → `exec`).

use serde_json::{Value, json};
use wallet_core::{Claim, ClaimKind, LogEntry, Nonce, Origin, Timestamp};

use crate::contract::MAX_CLAIMS;
use crate::contract::{
    self, CheckProposalInput, CheckRequestInput, DraftApplicationInput, RequestClaimsInput,
    WalletStatusInput,
};
use crate::envelope::{Code, Refusal, Reply};
use crate::ids::{ProposalId, RequestId};
use crate::state::{
    AskerStatus, Grant, GrantState, Proposal, ProposalState, Request, RequestState,
};
use crate::tool::tool_name_of;

/// How many requests, and how many proposals, may wait for the person at once.
pub const MAX_PENDING: usize = 64;

/// How many requests one asking origin may have waiting for the person at once: one agent
/// flooding in a site's name fills its own share, not the wallet ([`MAX_PENDING`]), and the
/// person clears an origin's requests in one act (`Gate::deny_all_from`).
pub const MAX_PENDING_PER_ORIGIN: usize = 8;

/// What the persistent tools read and change of the gate.
pub(crate) trait Book {
    fn is_unlocked(&self) -> bool;
    fn requests(&self) -> impl Iterator<Item = &Request>;
    fn grants(&self) -> impl Iterator<Item = &Grant>;
    fn proposals(&self) -> impl Iterator<Item = &Proposal>;
    fn request(&self, id: &RequestId) -> Option<&Request>;
    fn proposal(&self, id: &ProposalId) -> Option<&Proposal>;
    /// The answers given to the request from `audience` with `nonce`.
    fn answers_for(&self, audience: &Origin, nonce: &Nonce) -> Vec<LogEntry>;
    /// An issuer's display name, as the person's credentials know it.
    fn issuer_name(&self, issuer: &Origin) -> Option<String>;
    fn presentations(&self, id: &ProposalId) -> Option<&[String]>;
    fn presentations_failure(&self, id: &ProposalId) -> Option<&str>;
    fn awaits_presentations(&self, id: &ProposalId) -> bool;
    /// A fresh request id and its arrival sequence number.
    fn next_request_id(&mut self) -> (RequestId, u64);
    /// A fresh proposal id and its arrival sequence number.
    fn next_proposal_id(&mut self) -> (ProposalId, u64);
    /// Holds a new request for the person.
    fn hold_request(&mut self, request: Request);
    /// Holds a new proposal for the person.
    fn hold_proposal(&mut self, proposal: Proposal);
}

const HELD_REQUEST: &str = "Nothing has been granted. The request is held for the person, who \
    decides in the Tacit wallet page; this can take minutes. Do not call request_claims again \
    for this policy. Poll check_request with this request_id every few seconds.";

const HELD_PROPOSAL: &str = "Nothing has been disclosed yet. The proposal is held for the \
    person to release or refuse in the Tacit wallet page. Do not draft it again; poll \
    check_proposal with this proposal_id every few seconds.";

pub(crate) fn wallet_status(gate: &impl Book, input: &Value) -> Reply {
    let WalletStatusInput {} = contract::parse(input)?;
    let kinds: Vec<&str> = if gate.is_unlocked() {
        ClaimKind::ALL.iter().map(|k| k.name()).collect()
    } else {
        vec![]
    };
    let pending_requests: Vec<&str> = gate
        .requests()
        .filter(|r| r.state == RequestState::Held)
        .map(|r| r.id.as_str())
        .collect();
    let pending_proposals: Vec<&str> = gate
        .proposals()
        .filter(|p| p.state == ProposalState::Held)
        .map(|p| p.id.as_str())
        .collect();
    let live_tools: Vec<String> = gate
        .grants()
        .filter(|g| g.state == GrantState::Live)
        .filter_map(|g| tool_name_of(g).map(|n| n.as_str().to_owned()))
        .collect();
    Ok(json!({
        "locked": !gate.is_unlocked(),
        "claim_kinds": kinds,
        "pending_requests": pending_requests,
        "pending_proposals": pending_proposals,
        "claim_tools": live_tools,
    }))
}

pub(crate) fn request_claims(gate: &mut impl Book, input: &Value, now: Timestamp) -> Reply {
    let RequestClaimsInput {
        origin,
        nonce,
        site_name,
        purpose,
        claims: items,
        attestation,
    } = contract::parse(input)?;
    if items.is_empty() {
        return Err(Refusal::new(
            Code::InvalidInput,
            "Field \"claims\" must list at least one claim.",
        ));
    }
    if items.len() > MAX_CLAIMS {
        return Err(Refusal::new(
            Code::InvalidInput,
            format!("Field \"claims\" has more than {MAX_CLAIMS} items."),
        ));
    }
    let mut claims: Vec<Claim> = Vec::with_capacity(items.len());
    for (i, claim) in items.into_iter().enumerate() {
        if claims.contains(&claim) {
            return Err(Refusal::new(
                Code::InvalidInput,
                format!("Field \"claims[{i}]\" repeats an earlier claim."),
            ));
        }
        claims.push(claim);
    }
    let site_name = site_name.map(|t| t.into_string());
    let purpose = purpose.map(|t| t.into_string());
    let attestation = attestation.map(Into::into);
    let held: Vec<&Request> = gate
        .requests()
        .filter(|r| r.state == RequestState::Held)
        .collect();
    if held.iter().filter(|r| r.origin == origin).count() >= MAX_PENDING_PER_ORIGIN {
        return Err(Refusal::new(
            Code::TooManyPending,
            format!(
                "{MAX_PENDING_PER_ORIGIN} requests for this origin are already waiting for the \
                 person. Wait for them to be decided before asking again."
            ),
        ));
    }
    if held.len() >= MAX_PENDING {
        return Err(Refusal::new(
            Code::TooManyPending,
            "Too many requests are already waiting for the person. Wait for them to be decided.",
        ));
    }
    let (id, arrival) = gate.next_request_id();
    gate.hold_request(Request {
        id: id.clone(),
        origin,
        nonce,
        site_name,
        purpose,
        claims,
        attestation,
        asker: AskerStatus::Unconfirmed,
        received_at: now,
        arrival,
        state: RequestState::Held,
    });
    Ok(json!({ "request_id": id, "status": "held", "message": HELD_REQUEST }))
}

pub(crate) fn check_request(gate: &impl Book, input: &Value) -> Reply {
    let CheckRequestInput { request_id } = contract::parse(input)?;
    let id = request_id.0.as_str();
    // A text that is no id (bad characters) names no request, as an unknown id does.
    let request = RequestId::parse(id)
        .ok()
        .and_then(|id| gate.request(&id))
        .ok_or_else(|| {
            Refusal::new(
                Code::UnknownRequest,
                "No request has this id. Use the id request_claims returned.",
            )
        })?;
    let mut result = json!({
        "request_id": request.id,
        "origin": request.origin,
        "nonce": request.nonce,
        "site_name": request.site_name,
        "purpose": request.purpose,
        "claims": request.claims,
        "asker": request.asker.as_str(),
    });
    let extra = match &request.state {
        RequestState::Held => json!({ "status": "held", "message": HELD_REQUEST }),
        RequestState::Denied { reason } => json!({
            "status": "denied",
            "reason": reason,
            "message": "The person denied this request. Do not ask again unless the person says so.",
        }),
        RequestState::Granted { grants } => {
            let tools: Vec<Value> = grants
                .iter()
                .filter_map(|id| gate.grants().find(|g| &g.id == id))
                .map(|g| {
                    json!({
                        "tool": tool_name_of(g).map(|n| n.as_str().to_owned()),
                        "claim": g.claim,
                        "state": g.state,
                        "expires_at_ms": g.expires_at.millis(),
                        "uses_left": g.uses_left,
                    })
                })
                .collect();
            json!({
                "status": "granted",
                "tools": tools,
                "message": "Granted. Call each live claim tool by name; each answers true or false. \
                    Then call draft_application with the site's origin and nonce.",
            })
        }
    };
    if let (Value::Object(map), Value::Object(more)) = (&mut result, extra) {
        map.extend(more);
    }
    Ok(result)
}

pub(crate) fn draft_application(gate: &mut impl Book, input: &Value, now: Timestamp) -> Reply {
    let DraftApplicationInput { audience, nonce } = contract::parse(input)?;
    if !gate
        .requests()
        .any(|r| r.origin == audience && r.nonce == nonce)
    {
        return Err(Refusal::new(
            Code::InvalidInput,
            "No request from this audience carried this nonce. Use the origin and nonce of the \
             policy you passed to request_claims.",
        ));
    }
    // Only the answers to this very request (its origin and nonce): never an earlier
    // request's, another nonce's, a refused call or a malformed one.
    let entries = gate.answers_for(&audience, &nonce);
    if entries.is_empty() {
        return Err(Refusal::new(
            Code::NothingToDraft,
            "No claim of this request has been answered yet. Call the granted claim tools of \
             this request first.",
        ));
    }
    let held = gate
        .proposals()
        .filter(|p| p.state == ProposalState::Held)
        .count();
    if held >= MAX_PENDING {
        return Err(Refusal::new(
            Code::TooManyPending,
            "Too many proposals are already waiting for the person. Wait for them to be decided.",
        ));
    }
    let (id, arrival) = gate.next_proposal_id();
    let mut proposal =
        Proposal::with_issuer_names(id.clone(), audience, nonce, entries, now, |o| {
            gate.issuer_name(o)
        });
    proposal.arrival = arrival;
    // Outcomes only: whether an answer is issuer-backed is not the agent's to know before the
    // person releases.
    let disclosed: Vec<Value> = proposal
        .items
        .iter()
        .map(|item| json!({ "claim": item.claim, "satisfied": item.satisfied }))
        .collect();
    let reply = json!({
        "proposal_id": id,
        "status": "held",
        "audience": proposal.audience,
        "nonce": proposal.nonce,
        "would_disclose": disclosed,
        "message": HELD_PROPOSAL,
    });
    gate.hold_proposal(proposal);
    Ok(reply)
}

pub(crate) fn check_proposal(gate: &impl Book, input: &Value) -> Reply {
    let CheckProposalInput { proposal_id } = contract::parse(input)?;
    let id = proposal_id.0.as_str();
    // A text that is no id (bad characters) names no proposal, as an unknown id does.
    let proposal = ProposalId::parse(id)
        .ok()
        .and_then(|id| gate.proposal(&id))
        .ok_or_else(|| {
            Refusal::new(
                Code::UnknownProposal,
                "No proposal has this id. Use the id draft_application returned.",
            )
        })?;
    let id = &proposal.id;
    Ok(match &proposal.state {
        ProposalState::Held => json!({
            "proposal_id": proposal.id, "status": "held", "message": HELD_PROPOSAL,
        }),
        ProposalState::Refused { reason } => json!({
            "proposal_id": proposal.id,
            "status": "refused",
            "reason": reason,
            "message": "The person refused this proposal. Tell the person's reason to whoever asked; \
                do not draft it again unless the person says so.",
        }),
        ProposalState::Released { .. } if gate.presentations_failure(id).is_some() => json!({
            "proposal_id": proposal.id,
            "status": "failed",
            "reason": gate.presentations_failure(id),
            "message": "The person released this proposal but the wallet could not finish the \
                proofs that must go with it, so nothing can be submitted. Do not poll again; \
                ask the site for a new nonce and start again with request_claims.",
        }),
        ProposalState::Released { payload, signed } => match signed {
            Some(_) if gate.awaits_presentations(id) => json!({
                "proposal_id": proposal.id,
                "status": "released",
                "signed": false,
                "message": "Released; the wallet is still finishing the proofs that go with the \
                    receipt. Poll again shortly.",
            }),
            Some(signed) => match gate.presentations(id) {
                Some(presentations) => json!({
                    "proposal_id": proposal.id,
                    "status": "released",
                    "signed": true,
                    "receipt": signed,
                    "presentations": presentations,
                    "message": "Released and signed. Submit this receipt to the audience's site \
                        together with these presentations: the site's submit tool takes them \
                        in its \"presentations\" field, beside \"receipt\", unchanged and all \
                        of them. Submit now: sites accept the presentations for five minutes \
                        after the person released them.",
                }),
                None => json!({
                    "proposal_id": proposal.id,
                    "status": "released",
                    "signed": true,
                    "receipt": signed,
                    "message": "Released and signed. Submit this receipt to the audience's site.",
                }),
            },
            None => json!({
                "proposal_id": proposal.id,
                "status": "released",
                "signed": false,
                "payload": payload,
                "message": "Released; the receipt is not signed yet. Poll again shortly.",
            }),
        },
    })
}
