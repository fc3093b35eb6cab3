//! `cargo run --release -p signer --bin signer-bench -- [--seconds 20] [--connections 64]`

use std::process::ExitCode;

use clap::Parser;
use signer::bench::{BenchArgs, run};

fn main() -> ExitCode {
    let args = BenchArgs::parse();
    let report = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| signer::Error::Config(format!("cannot start the runtime: {e}")))
        .and_then(|runtime| runtime.block_on(run(args)));
    match report {
        Ok(report) => {
            print!("{}", report.markdown());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("signer-bench: {error}");
            ExitCode::FAILURE
        }
    }
}
