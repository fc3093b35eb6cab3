//! Presentation verification, native: `verify_presentation` of a one-disclosure presentation
//! against one raw ES256 verification, interleaved in the same run (see `workload/mod.rs`).
//!
//! `cargo bench -p tacit-protocol --bench presentation [-- --rounds N --round-ms MS]`
//!
//! Prints one `tacit-bench presentation-verify native …` line (read by `cargo xtask bench`).
//! Figures only: nothing asserts on a time.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod workload;

use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let mut rounds = 15usize;
    let mut round_ms = 200.0f64;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--rounds" => match args.next().and_then(|v| v.parse().ok()).filter(|n| *n >= 1) {
                Some(n) => rounds = n,
                None => return usage("--rounds takes a count ≥ 1"),
            },
            "--round-ms" => match args
                .next()
                .and_then(|v| v.parse().ok())
                .filter(|n| *n > 0.0)
            {
                Some(ms) => round_ms = ms,
                None => return usage("--round-ms takes a positive number"),
            },
            // `cargo bench` passes `--bench`; ignore it and any filter.
            _ => {}
        }
    }
    if cfg!(debug_assertions) {
        eprintln!("presentation bench: WARNING: a debug build (use `cargo bench`)");
    }
    let workload = match workload::Workload::new() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("presentation bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let started = Instant::now();
    let mut clock = || started.elapsed().as_secs_f64() * 1000.0;
    match workload::measure(&workload, &mut clock, rounds, round_ms) {
        Ok(figures) => {
            println!(
                "{}",
                workload::line("native", &workload, &figures, round_ms)
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("presentation bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("presentation bench: {message}\nusage: presentation [--rounds N] [--round-ms MS]");
    ExitCode::FAILURE
}
