//! `cargo xtask demo [--agent [--auto-approve]] [--pharmacy]`: installs binaryen (`wasm-opt`)
//! when missing, builds the sites, then runs the
//! `tacit-demo` binary of the end-to-end crate, which starts the signer, the wallet, housing and
//! pharmacy on loopback, prints the URLs and the Chromium command line, and stops on Ctrl-C.

use crate::build_web::{self, WasmOpt};
use crate::{cargo, ci, run};

pub fn demo(args: &[String]) -> Result<(), String> {
    ci::ensure_wasm_opt()?;
    build_web::build_web(&[], false, WasmOpt::Required)?;
    let cargo = cargo();
    let mut command = vec![
        "run",
        "--quiet",
        "--package",
        "tacit-e2e",
        "--bin",
        "tacit-demo",
        "--",
    ];
    command.extend(args.iter().map(String::as_str));
    run("demo", &cargo, &command, &[])
}
