//! `cargo run --release -p signer --bin signer-bench -- [--seconds 20] [--connections 64]`

use std::process::ExitCode;

use clap::Parser;
use signer::bench::{BenchArgs, run};

fn main() -> ExitCode {
    let args = BenchArgs::parse();
    tacit_service::bench::main("signer-bench", async move {
        run(args).await.map(|report| report.markdown())
    })
}
