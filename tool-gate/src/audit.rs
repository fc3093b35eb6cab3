//! The absence audit: compares the tools the browser lists with the tools that were granted,
//! and names any forbidden tool (a raw-value getter) that is live.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Audit {
    /// Forbidden names that are live.
    pub forbidden_live: Vec<String>,
    /// Live tools nobody granted (someone else registered them on this page).
    pub unexpected: Vec<String>,
    /// Granted tools the live registry lacks.
    pub missing: Vec<String>,
}

impl Audit {
    /// True when no forbidden tool is live and the registry holds exactly what was granted.
    pub fn clean(&self) -> bool {
        self.forbidden_live.is_empty() && self.unexpected.is_empty() && self.missing.is_empty()
    }
}

/// Audits `live` (what the browser lists) against `granted` and the `forbidden` names.
pub fn audit(granted: &[String], live: &[String], forbidden: &[&str]) -> Audit {
    Audit {
        forbidden_live: forbidden
            .iter()
            .filter(|f| live.iter().any(|n| n == *f))
            .map(|f| (*f).to_owned())
            .collect(),
        unexpected: live
            .iter()
            .filter(|n| !granted.contains(n))
            .cloned()
            .collect(),
        missing: granted
            .iter()
            .filter(|n| !live.contains(n))
            .cloned()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_forbidden_unexpected_and_missing() {
        let granted = vec!["claim.a".to_owned(), "claim.b".to_owned()];
        let live = vec!["claim.a".to_owned(), "get_income".to_owned()];
        let a = audit(&granted, &live, &["get_income", "get_district"]);
        assert_eq!(a.forbidden_live, ["get_income"]);
        assert_eq!(a.unexpected, ["get_income"]);
        assert_eq!(a.missing, ["claim.b"]);
        assert!(!a.clean());
        assert!(audit(&granted, &granted, &["get_income"]).clean());
    }
}
