//! The host trait and the registry that keeps a host's registrations equal to what is granted.
//!
//! A host carries tools to an agent: `document.modelContext` in a page, an in-memory table in
//! tests, an MCP server. Hosts decide nothing: the gate says which tools exist.

use std::collections::BTreeMap;

/// A tool definition with a name (the key a host registers it under).
pub trait Named {
    fn name(&self) -> &str;
}

/// Why a host refused a registration or an execution.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    #[error("a tool named {0} is already registered")]
    Duplicate(String),
    #[error("no tool named {0} is registered")]
    UnknownTool(String),
    #[error("the host refused the registration: {0}")]
    Refused(String),
}

/// A place tools of kind `D` can be registered. Dropping a `Registration` withdraws its tool,
/// synchronously.
pub trait Host<D> {
    type Registration;

    /// Registers one tool; refuses a duplicate name.
    fn register(&mut self, tool: &D) -> Result<Self::Registration, HostError>;

    /// The names the host currently exposes, as the agent would see them.
    fn list(&self) -> Vec<String>;
}

/// Keeps a host's registrations equal to the wanted tools: one registration per tool.
#[derive(Debug)]
pub struct Registry<H: Host<D>, D> {
    host: H,
    live: BTreeMap<String, (D, H::Registration)>,
}

impl<H: Host<D>, D: Named + PartialEq> Registry<H, D> {
    pub fn new(host: H) -> Self {
        Self {
            host,
            live: BTreeMap::new(),
        }
    }

    pub fn host(&self) -> &H {
        &self.host
    }

    pub fn host_mut(&mut self) -> &mut H {
        &mut self.host
    }

    /// Withdraws what is no longer wanted (or wanted with another definition), then registers
    /// what is missing. Returns the registrations the host refused (the rest are applied).
    pub fn sync(&mut self, wanted: impl IntoIterator<Item = D>) -> Vec<(String, HostError)> {
        let wanted: BTreeMap<String, D> = wanted
            .into_iter()
            .map(|d| (d.name().to_owned(), d))
            .collect();
        // Dropping the registration withdraws the tool.
        self.live
            .retain(|name, (def, _)| wanted.get(name) == Some(def));
        let mut refused = Vec::new();
        for (name, def) in wanted {
            if self.live.contains_key(&name) {
                continue;
            }
            match self.host.register(&def) {
                Ok(registration) => {
                    self.live.insert(name, (def, registration));
                }
                Err(e) => refused.push((name, e)),
            }
        }
        refused
    }

    /// Withdraws every tool (the page is going away).
    pub fn clear(&mut self) {
        self.live.clear();
    }

    /// The definition registered under `name`.
    pub fn get(&self, name: &str) -> Option<&D> {
        self.live.get(name).map(|(def, _)| def)
    }

    /// The definitions currently registered.
    pub fn registered(&self) -> impl Iterator<Item = &D> {
        self.live.values().map(|(def, _)| def)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Def(&'static str, u8);
    impl Named for Def {
        fn name(&self) -> &str {
            self.0
        }
    }

    #[derive(Debug, Default, Clone)]
    struct Table(Rc<RefCell<Vec<String>>>);
    #[derive(Debug)]
    struct Reg(Table, String);
    impl Drop for Reg {
        fn drop(&mut self) {
            self.0.0.borrow_mut().retain(|n| n != &self.1);
        }
    }
    impl Host<Def> for Table {
        type Registration = Reg;
        fn register(&mut self, tool: &Def) -> Result<Reg, HostError> {
            if self.0.borrow().iter().any(|n| n == tool.0) {
                return Err(HostError::Duplicate(tool.0.into()));
            }
            self.0.borrow_mut().push(tool.0.into());
            Ok(Reg(self.clone(), tool.0.into()))
        }
        fn list(&self) -> Vec<String> {
            self.0.borrow().clone()
        }
    }

    #[test]
    fn sync_withdraws_changed_and_gone_tools_and_registers_new_ones() {
        let mut registry = Registry::new(Table::default());
        assert!(registry.sync([Def("a", 1), Def("b", 1)]).is_empty());
        assert_eq!(registry.host().list(), ["a", "b"]);
        assert!(registry.sync([Def("b", 2), Def("c", 1)]).is_empty());
        let mut listed = registry.host().list();
        listed.sort();
        assert_eq!(listed, ["b", "c"]);
        assert_eq!(registry.get("b"), Some(&Def("b", 2)));
        registry.clear();
        assert!(registry.host().list().is_empty());
    }
}
