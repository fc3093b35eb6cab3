//! `ToolGate`: which tools exist, under which lease, and the check every call goes through.

use std::collections::BTreeMap;

use crate::envelope::Refusal;
use crate::lease::{Ended, Lease};

/// A change in which tools exist, for the host to apply and to tell the person about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The tool now exists (a new grant, or a grant renewed after it ended).
    Added(String),
    /// The tool no longer exists, and why.
    Removed(String, Ended),
}

/// What [`ToolGate::begin_use`] returns: the tool and the change its use caused, or the
/// refusal and the change the check found.
pub type Use<'a, T> = Result<(&'a T, Option<Change>), (Refusal, Option<Change>)>;

#[derive(Debug, Clone)]
struct Gated<T> {
    tool: T,
    lease: Lease,
}

/// Tools keyed by name, each with its lease. Ended leases are kept, so a stale handle is told
/// why its tool is gone (`grant_expired`, not "unknown tool").
#[derive(Debug, Clone)]
pub struct ToolGate<T> {
    tools: BTreeMap<String, Gated<T>>,
}

impl<T> Default for ToolGate<T> {
    fn default() -> Self {
        Self {
            tools: BTreeMap::new(),
        }
    }
}

impl<T> ToolGate<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Grants `tool` under `name` with `lease`, replacing any earlier grant of that name (a live
    /// one is renewed in place: the tool stays, with the new lease and definition).
    pub fn grant(&mut self, name: impl Into<String>, tool: T, lease: Lease) -> Vec<Change> {
        let name = name.into();
        let was_live = self.tools.get(&name).is_some_and(|g| g.lease.is_live());
        let live = lease.is_live();
        self.tools.insert(name.clone(), Gated { tool, lease });
        match (was_live, live) {
            (false, true) => vec![Change::Added(name)],
            _ => Vec::new(),
        }
    }

    /// Revokes `name`'s grant. `None` if it was not live.
    pub fn revoke(&mut self, name: &str) -> Option<Change> {
        let gated = self.tools.get_mut(name)?;
        gated
            .lease
            .revoke()
            .then(|| Change::Removed(name.to_owned(), Ended::Revoked))
    }

    /// Revokes every live grant (the page is locking or going away).
    pub fn revoke_all(&mut self) -> Vec<Change> {
        let names: Vec<String> = self.live().map(|(n, _, _)| n.to_owned()).collect();
        names.iter().filter_map(|n| self.revoke(n)).collect()
    }

    /// Ends every lease past its expiry at `now`.
    pub fn tick(&mut self, now: i64) -> Vec<Change> {
        self.tools
            .iter_mut()
            .filter_map(|(name, g)| {
                g.lease
                    .expire(now)
                    .then(|| Change::Removed(name.clone(), Ended::Expired))
            })
            .collect()
    }

    /// The check every call goes through, at the moment it runs: the tool must have a live,
    /// unexpired lease with a use left. Takes the use. On success, returns the tool and the
    /// change the use caused (its last use withdraws it); on refusal, the refusal and the change
    /// the check found (an expiry nobody had ticked yet).
    pub fn begin_use(&mut self, name: &str, now: i64) -> Use<'_, T> {
        let Some(gated) = self.tools.get_mut(name) else {
            return Err((Refusal::unknown_tool(name), None));
        };
        let was_live = gated.lease.is_live();
        match gated.lease.take_use(now) {
            Ok(()) => {
                let change = (!gated.lease.is_live())
                    .then(|| Change::Removed(name.to_owned(), Ended::Spent));
                Ok((&gated.tool, change))
            }
            Err(ended) => {
                let change = was_live.then(|| Change::Removed(name.to_owned(), ended));
                Err((Refusal::ended(ended), change))
            }
        }
    }

    /// The live tools: name, tool, lease.
    pub fn live(&self) -> impl Iterator<Item = (&str, &T, &Lease)> {
        self.tools
            .iter()
            .filter(|(_, g)| g.lease.is_live())
            .map(|(n, g)| (n.as_str(), &g.tool, &g.lease))
    }

    /// Every lease, live or ended.
    pub fn leases(&self) -> impl Iterator<Item = (&str, &Lease)> {
        self.tools.iter().map(|(n, g)| (n.as_str(), &g.lease))
    }

    pub fn lease(&self, name: &str) -> Option<&Lease> {
        self.tools.get(name).map(|g| &g.lease)
    }

    /// The earliest expiry of a live lease: when the host should call [`ToolGate::tick`].
    pub fn next_deadline(&self) -> Option<i64> {
        self.live().map(|(_, _, l)| l.expires_at).min()
    }

    /// Forgets ended leases (their stale handles then get `unknown_tool`).
    pub fn forget_ended(&mut self) {
        self.tools.retain(|_, g| g.lease.is_live());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(now: i64, ms: i64, uses: Option<u32>) -> Lease {
        Lease::new(now, ms, uses).unwrap()
    }

    #[test]
    fn a_tool_exists_only_while_its_lease_lives() {
        let mut gate = ToolGate::new();
        assert_eq!(
            gate.grant("checkout", 7, lease(0, 2_000, None)),
            vec![Change::Added("checkout".into())]
        );
        assert_eq!(gate.live().count(), 1);
        assert_eq!(gate.next_deadline(), Some(2_000));
        assert!(gate.tick(1_999).is_empty());
        assert_eq!(
            gate.tick(2_000),
            vec![Change::Removed("checkout".into(), Ended::Expired)]
        );
        assert_eq!(gate.live().count(), 0);
        assert_eq!(gate.next_deadline(), None);
        let (refusal, change) = gate.begin_use("checkout", 2_001).unwrap_err();
        assert_eq!(refusal.code, "grant_expired");
        assert_eq!(change, None);
    }

    #[test]
    fn a_stale_call_after_revoke_is_refused_and_an_unknown_tool_is_named() {
        let mut gate = ToolGate::new();
        gate.grant("t", (), lease(0, 60_000, None));
        assert!(gate.begin_use("t", 1).is_ok());
        assert_eq!(
            gate.revoke("t"),
            Some(Change::Removed("t".into(), Ended::Revoked))
        );
        assert_eq!(gate.revoke("t"), None);
        assert_eq!(gate.begin_use("t", 2).unwrap_err().0.code, "grant_revoked");
        assert_eq!(gate.begin_use("u", 2).unwrap_err().0.code, "unknown_tool");
    }

    #[test]
    fn the_last_use_withdraws_the_tool() {
        let mut gate = ToolGate::new();
        gate.grant("t", (), lease(0, 60_000, Some(2)));
        assert_eq!(gate.begin_use("t", 1).unwrap().1, None);
        assert_eq!(
            gate.begin_use("t", 2).unwrap().1,
            Some(Change::Removed("t".into(), Ended::Spent))
        );
        assert_eq!(gate.begin_use("t", 3).unwrap_err().0.code, "grant_spent");
    }

    #[test]
    fn an_unticked_expiry_is_found_at_use() {
        let mut gate = ToolGate::new();
        gate.grant("t", (), lease(0, 1_000, None));
        let (refusal, change) = gate.begin_use("t", 1_000).unwrap_err();
        assert_eq!(refusal.code, "grant_expired");
        assert_eq!(change, Some(Change::Removed("t".into(), Ended::Expired)));
        assert!(gate.tick(5_000).is_empty());
    }

    #[test]
    fn renewing_a_live_grant_keeps_the_tool() {
        let mut gate = ToolGate::new();
        gate.grant("t", 1, lease(0, 1_000, None));
        assert!(gate.grant("t", 2, lease(500, 60_000, None)).is_empty());
        assert_eq!(gate.begin_use("t", 2_000).unwrap().0, &2);
    }
}
