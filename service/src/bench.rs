//! The `main` the services' load generators share (`signer-bench`, `issuer-bench`,
//! `site-bench`): a multi-threaded runtime, the benchmark, its Markdown report on stdout, and an
//! exit code; and [`per_sec`], the rate every report prints.

use std::fmt::Display;
use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

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

/// `count` events in `elapsed` as a rate per second (an elapsed time of zero counts as a
/// nanosecond, so the rate is finite).
pub fn per_sec(count: u64, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64().max(1e-9)
}

/// `a / b` for two rates, `b` floored at a billionth so the ratio is finite.
pub fn ratio(a: f64, b: f64) -> f64 {
    a / b.max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_ratios_stay_finite() {
        assert_eq!(per_sec(30, Duration::from_millis(1500)), 20.0);
        assert!(per_sec(1, Duration::ZERO).is_finite());
        assert_eq!(ratio(10.0, 4.0), 2.5);
        assert!(ratio(1.0, 0.0).is_finite());
    }
}
