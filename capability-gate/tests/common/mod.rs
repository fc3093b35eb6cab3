//! A wallet on a `MemoryHost` with a fake clock, and a scripted agent. The fixtures it starts
//! from (profiles, policies, the clock) are `tacit-testkit`'s, named here for `use common::*`.
#![allow(dead_code, unused_imports)]

pub use tacit_testkit::fixtures::*;

use capability_gate::{
    Acknowledgement, Gate, GateError, Host, Lifetime, MemoryHost, ProposalId, Registry,
};
use serde_json::{Value, json};
use wallet_core::{DisclosureLedger, Profile, ReceiptPayload, SessionId, Timestamp};

pub struct World {
    pub gate: Gate,
    pub registry: Registry<MemoryHost>,
    pub now: Timestamp,
}

impl World {
    pub fn new() -> Self {
        let mut world = Self {
            gate: Gate::new(
                SessionId::parse("s-test").unwrap(),
                DisclosureLedger::default(),
            ),
            registry: Registry::new(MemoryHost::default()),
            now: Timestamp::from_millis(T0),
        };
        world.sync();
        world
    }

    /// A locked world whose gate is made with [`Gate::with_secret`] (what the page runs).
    pub fn with_secret(secret: [u8; 32]) -> Self {
        let mut world = Self {
            gate: Gate::with_secret(secret, DisclosureLedger::default()),
            registry: Registry::new(MemoryHost::default()),
            now: Timestamp::from_millis(T0),
        };
        world.sync();
        world
    }

    /// [`World::with_secret`], unlocked with `profile`.
    pub fn with_secret_unlocked(secret: [u8; 32], profile: Profile) -> Self {
        let mut world = Self::with_secret(secret);
        world.gate.unlock(profile);
        world.sync();
        world
    }

    pub fn unlocked() -> Self {
        let mut world = Self::new();
        world.gate.unlock(profile());
        world.sync();
        world
    }

    pub fn host(&self) -> &MemoryHost {
        self.registry.host()
    }

    pub fn sync(&mut self) {
        let refused = self.registry.sync(&self.gate);
        assert!(refused.is_empty(), "host refused {refused:?}");
    }

    pub fn advance(&mut self, ms: i64) {
        self.now = self.now.plus_millis(ms);
        if self.gate.tick(self.now) {
            self.sync();
        }
    }

    /// The agent calls a tool by name; the host must have it. Then the wallet syncs.
    pub fn call(&mut self, name: &str, input: Value) -> Value {
        let host = self.registry.host().clone();
        let out = host
            .execute(&mut self.gate, name, &input, self.now)
            .unwrap_or_else(|e| panic!("{e}"));
        self.sync();
        out
    }

    pub fn tools(&self) -> Vec<String> {
        self.host().list()
    }

    pub fn claim_tools(&self) -> Vec<String> {
        self.tools()
            .into_iter()
            .filter(|n| n.starts_with("claim."))
            .collect()
    }

    /// request_claims → the request id.
    pub fn request(&mut self, policy: Value) -> capability_gate::RequestId {
        let out = self.call("request_claims", policy);
        assert_eq!(out["ok"], true, "{out}");
        capability_gate::RequestId::parse(out["result"]["request_id"].as_str().unwrap()).unwrap()
    }

    /// The person grants every claim of a request.
    pub fn grant_all(
        &mut self,
        request_id: &capability_gate::RequestId,
        lifetime: Lifetime,
    ) -> Vec<String> {
        let n = self.gate.request(request_id).unwrap().claims.len();
        let all: Vec<usize> = (0..n).collect();
        self.gate
            .grant(request_id, &all, lifetime, self.now)
            .unwrap();
        self.sync();
        self.tools_of(request_id)
    }

    /// Requests housing's policy (nonce "n-h") and pharmacy's ("n-p") and grants both for an
    /// hour: the two request ids and every claim tool granted, housing's first.
    pub fn grant_housing_and_pharmacy(
        &mut self,
    ) -> (
        capability_gate::RequestId,
        capability_gate::RequestId,
        Vec<String>,
    ) {
        let housing = self.request(housing_policy("n-h"));
        let pharmacy = self.request(pharmacy_policy("n-p"));
        let mut tools = self.grant_all(&housing, Lifetime::ONE_HOUR);
        tools.extend(self.grant_all(&pharmacy, Lifetime::ONE_HOUR));
        (housing, pharmacy, tools)
    }

    /// Every text an agent can read besides tool outputs: each registered tool's definition.
    pub fn definition_texts(&self) -> impl Iterator<Item = String> + '_ {
        self.registry
            .registered()
            .map(|d| d.to_webmcp_json().to_string())
    }

    /// The proposals still held (neither released nor refused), in the gate's order.
    pub fn held_proposals(&self) -> Vec<capability_gate::ProposalId> {
        self.gate
            .proposals()
            .filter(|p| p.state == capability_gate::ProposalState::Held)
            .map(|p| p.id.clone())
            .collect()
    }

    /// The agent calls draft_application for (`audience`, `nonce`).
    pub fn draft(&mut self, audience: &str, nonce: &str) -> Value {
        self.call(
            "draft_application",
            json!({ "audience": audience, "nonce": nonce }),
        )
    }

    /// [`World::draft`], which must succeed: the new proposal's id.
    pub fn draft_id(&mut self, audience: &str, nonce: &str) -> ProposalId {
        let out = self.draft(audience, nonce);
        assert_eq!(out["ok"], true, "{out}");
        proposal_id_of(&out)
    }

    /// Grants every claim of `request_id` for ten minutes, answers each (they must succeed) and
    /// drafts for (`audience`, `nonce`): the held proposal's id.
    pub fn answer_and_draft(
        &mut self,
        request_id: &capability_gate::RequestId,
        audience: &str,
        nonce: &str,
    ) -> ProposalId {
        for tool in self.grant_all(request_id, Lifetime::TEN_MINUTES) {
            assert_eq!(self.call(&tool, json!({}))["ok"], true);
        }
        let out = self.draft(audience, nonce);
        assert_eq!(out["result"]["status"], "held", "{out}");
        proposal_id_of(&out)
    }

    /// The approval digest of a proposal the gate holds.
    pub fn digest(&self, proposal_id: &ProposalId) -> String {
        self.gate.proposal(proposal_id).unwrap().digest().to_owned()
    }

    /// The person releases `proposal_id`, approving `digest`, now.
    pub fn release(
        &mut self,
        proposal_id: &ProposalId,
        digest: &str,
        ack: Acknowledgement,
    ) -> Result<ReceiptPayload, GateError> {
        let now = self.now;
        self.gate.release(proposal_id, digest, ack, now)
    }

    pub fn tools_of(&self, request_id: &capability_gate::RequestId) -> Vec<String> {
        let mut names: Vec<String> = self
            .gate
            .grants()
            .filter(|g| g.request_id == *request_id)
            .filter_map(|g| capability_gate::gate::tool_name_of(g).map(|n| n.as_str().to_owned()))
            .collect();
        names.sort();
        names
    }
}

/// The proposal id in a draft_application answer.
pub fn proposal_id_of(out: &Value) -> ProposalId {
    ProposalId::parse(out["result"]["proposal_id"].as_str().unwrap()).unwrap()
}

pub fn error_code(out: &Value) -> &str {
    assert_eq!(out["ok"], false, "expected a refusal, got {out}");
    out["error"]["code"].as_str().unwrap()
}
