//! `cargo xtask build-gate-js`: the `tool-gate-js` package and its example page.
//!
//! Builds `tool-gate-js` for `wasm32-unknown-unknown` with the wallet's profile
//! (`wasm-release`), runs wasm-bindgen (the `wasm-bindgen-cli-support` library at exactly the
//! locked `wasm-bindgen` version, as `build-web` does) with `--target web --typescript` into
//! `target/site/gate-example/pkg/`, copies `examples/gate-page/*` next to it, and prints the
//! package's size, raw and gzip.
//!
//! `wasm-opt` is not run: `build_web`'s `optimise` (with its binaryen 108 externref fix) is
//! private to that module; the sizes printed are wasm-bindgen's output.

use std::fs;

use crate::build_web::{Size, bindgen_web, copy_dir, kib, wasm_bindgen_version};
use crate::{cargo, run, target_dir, workspace_root};

/// The site directory under `target/site/`.
pub const SITE: &str = "gate-example";
const PACKAGE: &str = "tool-gate-js";
const LIB: &str = "tool_gate_js";
const PAGE_DIR: &str = "examples/gate-page";
const WASM_TARGET: &str = "wasm32-unknown-unknown";
const PROFILE: &str = "wasm-release";

/// `cargo xtask build-gate-js [--locked]`.
pub fn build_gate_js(args: &[String]) -> Result<(), String> {
    match args {
        [] => build(false),
        [flag] if flag == "--locked" => build(true),
        other => Err(format!(
            "build-gate-js takes no arguments but `--locked`, not {other:?}"
        )),
    }
}

/// Builds the package and lays out `target/site/gate-example/`; `locked` adds `--locked` to
/// cargo. (What `build-web` calls, so that `ci` and `demo` build it too.)
pub fn build(locked: bool) -> Result<(), String> {
    let version = wasm_bindgen_version()?;
    println!("wasm-bindgen {version} (Cargo.lock and wasm-bindgen-cli-support agree)");
    let mut cargo_args = vec![
        "build",
        "--target",
        WASM_TARGET,
        "--profile",
        PROFILE,
        "--package",
        PACKAGE,
    ];
    if locked {
        cargo_args.push("--locked");
    }
    // As `build-web`: strip only debug info, so wasm-bindgen still reads `target_features`;
    // the same flags, so the two builds share their dependencies' artefacts.
    let env = [
        ("CARGO_PROFILE_WASM_RELEASE_STRIP", "debuginfo"),
        (
            "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS",
            crate::build_web::WASM_RUSTFLAGS,
        ),
    ];
    run("cargo build (tool-gate-js)", &cargo(), &cargo_args, &env)?;
    lay_out()
}

fn lay_out() -> Result<(), String> {
    let input = target_dir()
        .join(WASM_TARGET)
        .join(PROFILE)
        .join(format!("{LIB}.wasm"));
    let out = target_dir().join("site").join(SITE);
    let pkg = out.join("pkg");
    let page = workspace_root().join(PAGE_DIR);
    if !page.join("index.html").is_file() {
        return Err(format!("{} has no index.html", page.display()));
    }
    if out.exists() {
        fs::remove_dir_all(&out).map_err(|e| format!("clearing {}: {e}", out.display()))?;
    }
    copy_dir(&page, &out)?;

    bindgen_web(&input, LIB, true, &pkg)?;

    let optimised = match crate::build_web::find_wasm_opt() {
        Some(tool) => {
            crate::build_web::optimise(&tool, &pkg.join(format!("{LIB}_bg.wasm")))?;
            true
        }
        None => false,
    };
    let dts = pkg.join(format!("{LIB}.d.ts"));
    let typings = fs::read_to_string(&dts).map_err(|e| format!("{}: {e}", dts.display()))?;
    if !typings.contains("export interface GrantOptions") {
        return Err(format!(
            "{} lacks the package's typings (GrantOptions)",
            dts.display()
        ));
    }
    let mut total = (0, 0);
    for file in [format!("{LIB}_bg.wasm"), format!("{LIB}.js")] {
        let Size { raw, gzip } = Size::of(&pkg.join(&file))?;
        println!(
            "{SITE}: pkg/{file} {} raw, {} gzip{}",
            kib(raw),
            kib(gzip),
            if optimised || !file.ends_with(".wasm") {
                ""
            } else {
                " (wasm-opt not found: not optimised)"
            }
        );
        total = (total.0 + raw, total.1 + gzip);
    }
    println!(
        "{SITE}: the package (wasm + glue) is {} raw, {} gzip; typings pkg/{LIB}.d.ts",
        kib(total.0),
        kib(total.1)
    );
    println!("{SITE}: {}", out.display());
    Ok(())
}
