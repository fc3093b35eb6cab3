//! `cargo xtask demo [--agent [--auto-approve]] [--pharmacy]`: builds the sites, then runs the
//! `tacit-demo` binary of the end-to-end crate, which starts the signer, the wallet, housing and
//! pharmacy on loopback, prints the URLs and the Chromium command line, and stops on Ctrl-C.

use crate::{build_web, cargo, run};

pub fn demo(args: &[String]) -> Result<(), String> {
    build_web::build_web(&[], false)?;
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
