//! The wallet page's modules (`web/src`) depend on each other one way only (issue 15): no
//! top-level module reaches, through `crate::` paths in its code, a module that reaches it back.
//! `render/*` counts as `render`. The scanner is `tacit_testkit::modules`, which
//! `capability-gate/tests/modules.rs` uses too.
//!
//! `app` (the page's state) is below the features that read and change it (`asker`,
//! `credentials`, `person`): it reaches them only through `app::Features`, which `page`
//! implements. `actions` routes clicks; `person` asks for the person's act and hands it to
//! `decisions`; `receipts` asks the signer, for `decisions` and `credentials` alike.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::{Path, PathBuf};

use tacit_testkit::modules::{Edges, assert_acyclic, cycles, scan};

fn web_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("web/src")
}

fn has(edges: &Edges, from: &str, to: &str) -> bool {
    edges.get(from).is_some_and(|t| t.contains(to))
}

#[test]
fn the_page_has_no_module_cycle() {
    let edges = scan(&web_src());
    // The scan sees the page's modules and the edges that exist, also from nested files.
    assert!(edges.len() >= 20, "{edges:#?}");
    assert!(!edges.contains_key("lib"));
    assert!(!edges.keys().any(|m| m.contains('/')), "{edges:#?}");
    for (from, to) in [
        ("actions", "decisions"),
        ("render", "dom"),
        // Only render/grants.rs names `crate::told`, only render/log.rs `crate::intl`.
        ("render", "told"),
        ("render", "intl"),
        ("app", "render"),
        ("credentials", "app"),
    ] {
        assert!(has(&edges, from, to), "{from} → {to} not seen: {edges:#?}");
    }
    assert_acyclic(&edges);
}

/// A hostile edit: one `use` in a nested render file that reaches back to the app (which draws
/// through render) makes a cycle, and the check names it.
#[test]
fn a_back_edge_from_a_nested_file_is_a_cycle() {
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&web_src(), copy.path());
    let log = copy.path().join("render/log.rs");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str("\n#[allow(unused_imports)]\nuse crate::app::with_app;\n");
    std::fs::write(&log, text).unwrap();
    let edges = scan(copy.path());
    assert!(has(&edges, "render", "app"));
    let found = cycles(&edges);
    assert!(
        found
            .iter()
            .any(|c| c.first().is_some_and(|m| m == "render") && c.contains(&"app".to_owned())),
        "{found:?}"
    );
    let printed = std::panic::catch_unwind(|| assert_acyclic(&edges))
        .unwrap_err()
        .downcast::<String>()
        .unwrap();
    assert!(printed.contains("render → app → render"), "{printed}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}
