//! The page's own gate over its submit tool, with [`tool_gate`] (pure, tested natively; the wasm
//! page only carries out what it decides).
//!
//! The requirements tool exists for as long as the page lives. The submit tool **exists only
//! while a requirements nonce this page obtained is open**: when the requirements tool's answer
//! carries a nonce, the submit tool is granted with a lease to that nonce's expiry (the
//! attestation's `expires_at_ms`, which the server sets to the nonce's); an accepted submission
//! spends its nonce; a lapsed nonce ends with its lease. With several nonces open the lease runs
//! to the latest of them, and the tool leaves when the last one is spent or lapses. A call
//! through a handle kept past that gets tool-gate's refusal (`grant_revoked`, `grant_expired`)
//! without reaching the server.
//!
//! This is the page's hygiene, not trust: the server still judges every submission and its
//! nonce, whatever the page believes. A page clock that is off only moves when the tool leaves.

use std::collections::BTreeMap;

use serde_json::Value;
use tool_gate::{Change, Lease, MAX_LEASE_MS, MIN_LEASE_MS, Named, ToolGate};

use crate::api::{AcceptedResult, Answer, AttestedRequirements};

/// A tool as the page registers it: its name and its `registerTool` fields (no `execute`).
#[derive(Debug, Clone, PartialEq)]
pub struct SiteTool {
    pub name: String,
    pub def: Value,
}

impl SiteTool {
    /// From a `registerTool` definition; `None` without a string `name`.
    pub fn from_def(def: Value) -> Option<Self> {
        let name = def.get("name")?.as_str()?.to_owned();
        Some(Self { name, def })
    }
}

impl Named for SiteTool {
    fn name(&self) -> &str {
        &self.name
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct PageGate {
    requirements: SiteTool,
    submit: SiteTool,
    gate: ToolGate<()>,
    /// Nonces this page obtained and has not seen spent, with their expiry (ms since the epoch).
    open: BTreeMap<String, i64>,
}

impl PageGate {
    pub fn new(requirements: SiteTool, submit: SiteTool) -> Self {
        Self {
            requirements,
            submit,
            gate: ToolGate::new(),
            open: BTreeMap::new(),
        }
    }

    /// The submit tool's name.
    pub fn submit_name(&self) -> &str {
        &self.submit.name
    }

    /// The tools that should be registered now: the requirements tool, and the submit tool
    /// while its lease lives.
    pub fn wanted(&self) -> Vec<SiteTool> {
        let mut tools = vec![self.requirements.clone()];
        if self.gate.live().next().is_some() {
            tools.push(self.submit.clone());
        }
        tools
    }

    /// The requirements tool answered `envelope` at `now`: a nonce in it opens (or extends) the
    /// submit tool's lease to the latest open nonce's expiry. Anything else changes nothing.
    pub fn on_requirements(&mut self, envelope: &Value, now: i64) -> Vec<Change> {
        let Ok(answer) = serde_json::from_value::<Answer<AttestedRequirements>>(envelope.clone())
        else {
            return Vec::new();
        };
        if !answer.ok {
            return Vec::new();
        }
        let nonce = answer.result.requirements.nonce.as_str().to_owned();
        self.open
            .insert(nonce, answer.result.attestation.expires_at_ms);
        self.lease_to_latest(now)
    }

    /// The server answered a submission with `envelope` at `now`: an accepted one spent its
    /// nonce. A refusal leaves the nonces open (a corrected receipt may still use them).
    pub fn on_submit_answer(&mut self, envelope: &Value, now: i64) -> Vec<Change> {
        let Ok(answer) = serde_json::from_value::<Answer<AcceptedResult>>(envelope.clone()) else {
            return Vec::new();
        };
        if !(answer.ok && answer.result.accepted) {
            return Vec::new();
        }
        self.open.remove(answer.result.nonce.as_str());
        self.lease_to_latest(now)
    }

    /// The check every submit call goes through when it begins: the tool's lease must be live
    /// at `now`. `Err` is the refusal envelope for the agent, and whatever change the check
    /// found (an expiry not yet ticked).
    pub fn begin_submit(&mut self, now: i64) -> Result<(), (Value, Vec<Change>)> {
        let name = self.submit.name.clone();
        match self.gate.begin_use(&name, now) {
            Ok((_, change)) => {
                debug_assert!(change.is_none(), "the submit lease has no use count");
                Ok(())
            }
            Err((refusal, change)) => Err((
                tool_gate::envelope(&Err(refusal)),
                change.into_iter().collect(),
            )),
        }
    }

    /// Ends what is past its time at `now`.
    pub fn tick(&mut self, now: i64) -> Vec<Change> {
        self.open.retain(|_, expires| *expires > now);
        self.gate.tick(now)
    }

    /// When the page should call [`PageGate::tick`] next.
    pub fn next_deadline(&self) -> Option<i64> {
        self.gate.next_deadline()
    }

    /// The submit tool's lease, if it was ever granted.
    pub fn submit_lease(&self) -> Option<&Lease> {
        self.gate.lease(&self.submit.name)
    }

    /// Grants the submit tool until the latest open nonce's expiry, or revokes it when none is
    /// open (or the latest is less than tool-gate's shortest lease away).
    fn lease_to_latest(&mut self, now: i64) -> Vec<Change> {
        self.open.retain(|_, expires| *expires > now);
        let latest = self.open.values().max().copied();
        let lease = latest.and_then(|expires| {
            let ms = expires.saturating_sub(now).min(MAX_LEASE_MS);
            (ms >= MIN_LEASE_MS)
                .then(|| Lease::new(now, ms, None).ok())
                .flatten()
        });
        let name = self.submit.name.clone();
        match lease {
            Some(lease) => self.gate.grant(name, (), lease),
            None => self.gate.revoke(&name).into_iter().collect(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
mod tests {
    use serde_json::json;
    use tool_gate::Ended;

    use super::*;

    const T0: i64 = 1_795_953_600_000;
    const HOUR: i64 = 3_600_000;

    fn gate() -> PageGate {
        let tool = |name: &str| SiteTool::from_def(json!({ "name": name })).unwrap();
        PageGate::new(tool("housing_requirements"), tool("housing_submit"))
    }

    fn names(gate: &PageGate) -> Vec<String> {
        gate.wanted().into_iter().map(|t| t.name).collect()
    }

    /// The requirements tool's answer as the server writes it (`api::AttestedRequirements`).
    fn requirements(nonce: &str, expires_at_ms: i64) -> Value {
        json!({ "ok": true, "result": {
            "origin": "http://127.0.0.1:8081",
            "nonce": nonce,
            "site_name": "Housing",
            "purpose": "p",
            "claims": [{ "kind": "age_at_least", "years": 18 }],
            "attestation": { "kid": "k1", "expires_at_ms": expires_at_ms, "signature": "c2ln" },
        }})
    }

    fn accepted(nonce: &str) -> Value {
        json!({ "ok": true, "result": {
            "accepted": true, "site_name": "Housing", "audience": "http://127.0.0.1:8081",
            "nonce": nonce, "session_id": "s-1", "key_id": "3dddad40e862c500",
            "issued_at_ms": T0, "expires_at_ms": T0 + HOUR, "claims": [], "proven": [],
            "message": "m",
        }})
    }

    fn refused(code: &str) -> Value {
        json!({ "ok": false, "isError": true, "error": { "code": code, "message": "m" } })
    }

    fn submit_name() -> String {
        "housing_submit".to_owned()
    }

    #[test]
    fn the_submit_tool_is_absent_until_a_nonce_is_obtained() {
        let mut gate = gate();
        assert_eq!(names(&gate), ["housing_requirements"]);
        let (out, _) = gate.begin_submit(T0).unwrap_err();
        assert_eq!(out["isError"], true);
        assert_eq!(out["error"]["code"], "unknown_tool");
        // A refusal, or an answer that is not the server's requirements, grants nothing.
        for answer in [
            refused("busy"),
            json!({ "ok": true, "result": { "nonce": "n" } }),
            json!("nonsense"),
        ] {
            assert!(gate.on_requirements(&answer, T0).is_empty());
            assert_eq!(names(&gate), ["housing_requirements"]);
        }
    }

    #[test]
    fn a_nonce_grants_the_submit_tool_until_its_expiry() {
        let mut gate = gate();
        assert_eq!(
            gate.on_requirements(&requirements("aa", T0 + HOUR), T0),
            [Change::Added(submit_name())]
        );
        assert_eq!(names(&gate), ["housing_requirements", "housing_submit"]);
        assert_eq!(gate.next_deadline(), Some(T0 + HOUR));
        assert!(gate.begin_submit(T0 + HOUR - 1).is_ok());
        assert!(gate.tick(T0 + HOUR - 1).is_empty());
        assert_eq!(
            gate.tick(T0 + HOUR),
            [Change::Removed(submit_name(), Ended::Expired)]
        );
        assert_eq!(names(&gate), ["housing_requirements"]);
        let (out, _) = gate.begin_submit(T0 + HOUR + 1).unwrap_err();
        assert_eq!(out["error"]["code"], "grant_expired");
        assert!(tool_gate::envelope::is_refusal(&out));
    }

    #[test]
    fn an_accepted_submission_revokes_it_and_a_refused_one_does_not() {
        let mut gate = gate();
        gate.on_requirements(&requirements("aa", T0 + HOUR), T0);
        assert!(
            gate.on_submit_answer(&refused("claim_not_satisfied"), T0 + 1)
                .is_empty()
        );
        assert!(gate.begin_submit(T0 + 2).is_ok());
        // Accepted for another nonce than this page's: nothing of ours was spent.
        assert!(gate.on_submit_answer(&accepted("bb"), T0 + 3).is_empty());
        assert_eq!(
            gate.on_submit_answer(&accepted("aa"), T0 + 4),
            [Change::Removed(submit_name(), Ended::Revoked)]
        );
        assert_eq!(names(&gate), ["housing_requirements"]);
        let (out, _) = gate.begin_submit(T0 + 5).unwrap_err();
        assert_eq!(out["error"]["code"], "grant_revoked");
        assert_eq!(gate.next_deadline(), None);
        // A new nonce brings it back.
        assert_eq!(
            gate.on_requirements(&requirements("cc", T0 + HOUR), T0 + 6),
            [Change::Added(submit_name())]
        );
        assert!(gate.begin_submit(T0 + 7).is_ok());
    }

    #[test]
    fn with_two_nonces_open_the_tool_stays_until_the_last_is_spent_or_lapses() {
        let mut gate = gate();
        gate.on_requirements(&requirements("aa", T0 + HOUR), T0);
        assert!(
            gate.on_requirements(&requirements("bb", T0 + 2 * HOUR), T0 + 1_000)
                .is_empty(),
            "renewed in place"
        );
        assert_eq!(gate.next_deadline(), Some(T0 + 2 * HOUR));
        // The later one is spent: the tool now lives to the earlier one's expiry.
        assert!(
            gate.on_submit_answer(&accepted("bb"), T0 + 2_000)
                .is_empty()
        );
        assert_eq!(gate.next_deadline(), Some(T0 + HOUR));
        assert_eq!(
            gate.tick(T0 + HOUR),
            [Change::Removed(submit_name(), Ended::Expired)]
        );
        // A late accepted answer for the lapsed nonce changes nothing.
        assert!(
            gate.on_submit_answer(&accepted("aa"), T0 + HOUR + 1)
                .is_empty()
        );
    }

    #[test]
    fn an_expiry_nobody_ticked_is_found_at_use() {
        let mut gate = gate();
        gate.on_requirements(&requirements("aa", T0 + 5_000), T0);
        let (out, changes) = gate.begin_submit(T0 + 5_000).unwrap_err();
        assert_eq!(out["error"]["code"], "grant_expired");
        assert_eq!(changes, [Change::Removed(submit_name(), Ended::Expired)]);
        assert_eq!(names(&gate), ["housing_requirements"]);
    }

    #[test]
    fn a_nonce_about_to_lapse_or_already_lapsed_grants_nothing() {
        let mut gate = gate();
        assert!(
            gate.on_requirements(&requirements("aa", T0 + MIN_LEASE_MS - 1), T0)
                .is_empty()
        );
        assert!(
            gate.on_requirements(&requirements("bb", T0 - 1), T0)
                .is_empty()
        );
        assert_eq!(names(&gate), ["housing_requirements"]);
        // A nonce a clock far behind would call days away gets at most tool-gate's longest lease.
        gate.on_requirements(&requirements("cc", T0 + 30 * 24 * HOUR), T0);
        assert_eq!(gate.next_deadline(), Some(T0 + MAX_LEASE_MS));
    }
}
