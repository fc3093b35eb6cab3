//! The `main` the services' load generators share (`signer-bench`, `issuer-bench`,
//! `site-bench`): a multi-threaded runtime, the benchmark, its Markdown report on stdout, and an
//! exit code.

use std::fmt::Display;
use std::future::Future;
use std::process::ExitCode;

/// Runs `bench` on a fresh multi-threaded runtime; prints its report (success) or
/// `<program>: <error>` on stderr (failure).
pub fn main<E: Display>(program: &str, bench: impl Future<Output = Result<String, E>>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("{program}: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(bench) {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{program}: {error}");
            ExitCode::FAILURE
        }
    }
}
