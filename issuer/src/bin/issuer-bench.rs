//! `cargo run --release -p tacit-issuer --bin issuer-bench -- [--seconds 3] [--batch 10]`

use std::process::ExitCode;

use clap::Parser;
use tacit_issuer::bench::{BenchArgs, run};

fn main() -> ExitCode {
    let args = BenchArgs::parse();
    let report = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| tacit_issuer::Error::Config(format!("cannot start the runtime: {e}")))
        .and_then(|runtime| runtime.block_on(run(args)));
    match report {
        Ok(report) => {
            print!("{}", report.markdown());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("issuer-bench: {error}");
            ExitCode::FAILURE
        }
    }
}
