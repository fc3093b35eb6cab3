//! `cargo run --release -p tacit-site --bin site-bench -- [--seconds 10] [--connections 64]`
//!
//! See `src/bench.rs`: POST /api/applications throughput and latency against raw receipt
//! verification, and nonce consumes per second on SQLite and PostgreSQL.

#[cfg(not(target_arch = "wasm32"))]
use std::process::ExitCode;

#[cfg(not(target_arch = "wasm32"))]
use clap::Parser;

#[cfg(not(target_arch = "wasm32"))]
#[path = "../bench.rs"]
mod bench;

#[cfg(not(target_arch = "wasm32"))]
use bench::{BenchArgs, run};

// The bench drives the native server; on wasm32 there is nothing to run.
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> ExitCode {
    let args = BenchArgs::parse();
    tacit_service::bench::main("site-bench", async move {
        run(args).await.map(|report| report.markdown())
    })
}
