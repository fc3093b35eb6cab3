//! The absence proof: for each raw profile field, the tool that would read it, and whether any
//! such tool is live. The page feeds this the browser's own `getTools()` list. The comparison
//! (unexpected, missing, forbidden live) is tool-gate's [`tool_gate::audit()`]; the fields and
//! their getters are the wallet's.

use serde::Serialize;

use wallet_core::Attribute;

use crate::gate::Gate;

/// For each raw profile field, the getter name a raw-value tool would plausibly have: one per
/// attribute of the claim catalogue ([`Attribute::raw_field`], [`Attribute::raw_getter`]).
pub fn raw_getters() -> Vec<(&'static str, &'static str)> {
    Attribute::ALL
        .iter()
        .map(|a| (a.raw_field().name(), a.raw_getter()))
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldAudit {
    pub field: &'static str,
    pub getter: &'static str,
    pub absent: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Audit {
    pub fields: Vec<FieldAudit>,
    /// Live tools the gate did not issue (someone else registered them on this page).
    pub unexpected: Vec<String>,
    /// Tools the gate issued that the live registry lacks.
    pub missing: Vec<String>,
}

impl Audit {
    /// True when no raw getter is live and the registry holds exactly what the gate issued.
    pub fn clean(&self) -> bool {
        self.fields.iter().all(|f| f.absent)
            && self.unexpected.is_empty()
            && self.missing.is_empty()
    }
}

/// Compares the live registry with what the gate issued, with [`tool_gate::audit()`] (the raw
/// getters are its forbidden names), and gives the wallet's per-field view.
pub fn audit_registry(gate: &Gate, live_tool_names: &[String]) -> Audit {
    let issued: Vec<String> = gate
        .tools()
        .into_iter()
        .map(|t| t.name.as_str().to_owned())
        .collect();
    let raw = raw_getters();
    let getters: Vec<&str> = raw.iter().map(|(_, getter)| *getter).collect();
    let generic = tool_gate::audit(&issued, live_tool_names, &getters);
    // A field is exposed if its getter is live, or if a tool the gate did not issue names it.
    // The gate's own claim tools (`claim.income_below.g1`) answer booleans only.
    let fields = raw
        .into_iter()
        .map(|(field, getter)| FieldAudit {
            field,
            getter,
            absent: !generic.forbidden_live.iter().any(|n| n == getter)
                && !generic.unexpected.iter().any(|n| n.contains(field)),
        })
        .collect();
    Audit {
        fields,
        unexpected: generic.unexpected,
        missing: generic.missing,
    }
}
