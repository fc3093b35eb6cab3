//! The crate's modules depend on each other one way only: no module reaches, through `crate::`
//! paths in its code (comments aside), a module that reaches it back. `gate` → `exec` was a
//! cycle (exec wrote the gate's fields); exec now sees the gate through `exec::Book`. The
//! scanner is `tacit_testkit::modules`, which `tests/tests/web_modules.rs` uses for the page.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::Path;

use tacit_testkit::modules::{assert_acyclic, scan};

#[test]
fn no_module_reaches_itself() {
    let edges = scan(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(edges.len() > 10, "{edges:?}");
    // The scan sees the edges that exist.
    assert!(edges["gate"].contains("exec"), "{:?}", edges["gate"]);
    assert!(edges["words"].contains("state"), "{:?}", edges["words"]);
    assert_acyclic(&edges);
}
