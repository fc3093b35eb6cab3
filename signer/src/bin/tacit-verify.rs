//! `tacit-verify RECEIPT.json --keys KEYS.json|URL [--audience ORIGIN] [--nonce N] [--now MS]`

use std::process::ExitCode;

use clap::Parser;
use signer::verify_cli::{VerifyArgs, run};

fn main() -> ExitCode {
    let args = VerifyArgs::parse();
    ExitCode::from(run(&args, &mut std::io::stdout(), &mut std::io::stderr()))
}
