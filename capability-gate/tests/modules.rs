//! The crate's modules depend on each other one way only: no module reaches, through `crate::`
//! paths in its code (comments aside), a module that reaches it back. `gate` → `exec` was a
//! cycle (exec wrote the gate's fields); exec now sees the gate through `exec::Book`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module of `src/` and the modules its code names with `crate::<module>`.
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|m| m != "lib")
        .collect();
    let mut edges = BTreeMap::new();
    for module in &modules {
        let text = std::fs::read_to_string(src.join(format!("{module}.rs"))).unwrap();
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut to = BTreeSet::new();
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if modules.contains(&name) && &name != module {
                to.insert(name);
            }
        }
        // `use crate::{a, b::c}` groups.
        for (at, _) in code.match_indices("crate::{") {
            let group = &code[at + "crate::{".len()..];
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for part in group.split([',', '{']) {
                let name = part.trim().split("::").next().unwrap_or("").trim();
                if modules.contains(name) && name != module {
                    to.insert(name.to_owned());
                }
            }
        }
        edges.insert(module.clone(), to);
    }
    edges
}

fn reaches(edges: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_owned()];
    while let Some(m) = stack.pop() {
        for next in edges.get(&m).into_iter().flatten() {
            if next == to {
                return true;
            }
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    false
}

#[test]
fn no_module_reaches_itself() {
    let edges = edges();
    assert!(edges.len() > 10, "{edges:?}");
    // The scan sees the edges that exist.
    assert!(edges["gate"].contains("exec"), "{:?}", edges["gate"]);
    assert!(edges["words"].contains("state"), "{:?}", edges["words"]);
    let cycles: Vec<&String> = edges.keys().filter(|m| reaches(&edges, m, m)).collect();
    assert!(
        cycles.is_empty(),
        "modules in a cycle: {cycles:?}\n{edges:#?}"
    );
}
