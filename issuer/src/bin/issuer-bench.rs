//! `cargo run --release -p tacit-issuer --bin issuer-bench -- [--seconds 3] [--batch 10]`

use std::process::ExitCode;

use clap::Parser;
use tacit_issuer::bench::{BenchArgs, run};

fn main() -> ExitCode {
    let args = BenchArgs::parse();
    tacit_service::bench::main("issuer-bench", async move {
        run(args).await.map(|report| report.markdown())
    })
}
