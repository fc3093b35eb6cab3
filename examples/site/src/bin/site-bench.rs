//! `cargo run --release -p tacit-site --bin site-bench -- [--seconds 10] [--connections 64]`
//!
//! See `src/bench.rs`: POST /api/applications throughput and latency against raw receipt
//! verification, and nonce consumes per second on SQLite and PostgreSQL.

use std::process::ExitCode;

use clap::Parser;

#[path = "../bench.rs"]
mod bench;

use bench::{BenchArgs, BenchError, run};

fn main() -> ExitCode {
    let args = BenchArgs::parse();
    let report = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| BenchError::Setup(format!("cannot start the runtime: {e}")))
        .and_then(|runtime| runtime.block_on(run(args)));
    match report {
        Ok(report) => {
            print!("{}", report.markdown());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("site-bench: {error}");
            ExitCode::FAILURE
        }
    }
}
