//! What the services' load generators share (`signer-bench`, `issuer-bench`, `site-bench`): the
//! `main` (a multi-threaded runtime, the benchmark, its Markdown report on stdout, and an exit
//! code); [`per_sec`] and [`ratio`], the rates every report prints; [`repeat_for`], the
//! single-thread baselines' loop; and [`load`], prepared HTTP/1.1 requests fired over keep-alive
//! connections until a deadline, each sent once, with the latencies' nearest-rank percentiles.

use std::fmt::Display;
use std::future::Future;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::http1::Conn;

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

/// Runs `work` in batches of 64 for `duration`; returns the count and the time taken.
pub fn repeat_for(duration: Duration, mut work: impl FnMut()) -> (u64, Duration) {
    let started = Instant::now();
    let mut n = 0u64;
    while started.elapsed() < duration {
        for _ in 0..64 {
            work();
        }
        n += 64;
    }
    (n, started.elapsed())
}

/// A `POST {path}` request to `addr` with a JSON `body`; `headers` are extra header lines, each
/// ending in `\r\n`.
pub fn post_request(addr: SocketAddr, path: &str, headers: &str, body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         {headers}Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

/// How a load went: the requests answered 200 with an accepted body, the others, and the
/// latencies of the accepted ones.
#[derive(Debug, Clone)]
pub struct Load {
    pub accepted: u64,
    pub failures: u64,
    pub elapsed: Duration,
    pub p50: Duration,
    pub p99: Duration,
    /// Whether the prepared requests ran out before the time did.
    pub pool_exhausted: bool,
}

impl Load {
    /// Accepted requests per second.
    pub fn per_sec(&self) -> f64 {
        per_sec(self.accepted, self.elapsed)
    }

    /// The load's three Markdown table rows: `| {what} | N req/s (A {accepted}, F failed…) |`,
    /// then the p50 and p99 latencies. `spent` is said when the prepared requests ran out.
    pub fn rows(&self, what: &str, accepted: &str, spent: &str) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        format!(
            "| {what} | {:.0} req/s ({} {accepted}, {} failed{}) |\n\
             | latency p50 | {:.3} ms |\n| latency p99 | {:.3} ms |\n",
            self.per_sec(),
            self.accepted,
            self.failures,
            if self.pool_exhausted {
                format!("; {spent}")
            } else {
                String::new()
            },
            ms(self.p50),
            ms(self.p99),
        )
    }
}

/// The build a report was measured on, in words, and the CPUs this process may use.
pub fn build_words(release: bool) -> (&'static str, usize) {
    (
        if release {
            "release"
        } else {
            "DEBUG (figures meaningless)"
        },
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    )
}

/// Fires the prepared `requests` at `addr` over `connections` keep-alive connections until
/// `duration` has passed or every request was sent once. A request counts as accepted when it
/// is answered 200 and `accept` holds of its body. Fails only when a load task panicked.
pub async fn load(
    addr: SocketAddr,
    requests: Vec<Vec<u8>>,
    connections: u64,
    duration: Duration,
    accept: fn(&[u8]) -> bool,
) -> Result<Load, tokio::task::JoinError> {
    load_across(&[addr], requests, connections, duration, accept).await
}

/// [`load`] against several instances of one service: connection `i` goes to
/// `addrs[i % addrs.len()]` (an empty list is loopback port 9, where nothing listens).
pub async fn load_across(
    addrs: &[SocketAddr],
    requests: Vec<Vec<u8>>,
    connections: u64,
    duration: Duration,
    accept: fn(&[u8]) -> bool,
) -> Result<Load, tokio::task::JoinError> {
    let fallback = [SocketAddr::from(([127, 0, 0, 1], 9))];
    let addrs = if addrs.is_empty() {
        &fallback[..]
    } else {
        addrs
    };
    let pool = Arc::new(requests);
    let next = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + duration;
    let started = Instant::now();
    let tasks: Vec<_> = (0..connections.max(1))
        .map(|i| {
            let addr = addrs[usize::try_from(i).unwrap_or(0) % addrs.len()];
            tokio::spawn(drive(addr, pool.clone(), next.clone(), deadline, accept))
        })
        .collect();
    let mut latencies = Vec::new();
    let mut failures = 0;
    for task in tasks {
        let (lat, failed) = task.await?;
        latencies.extend(lat);
        failures += failed;
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    Ok(Load {
        accepted: latencies.len() as u64,
        failures,
        elapsed,
        p50: nearest_rank(&latencies, 0.50),
        p99: nearest_rank(&latencies, 0.99),
        pool_exhausted: next.load(Ordering::Relaxed) >= pool.len(),
    })
}

/// The `q` quantile of sorted `values` by nearest rank (zero when there are none).
fn nearest_rank(sorted: &[Duration], q: f64) -> Duration {
    let rank = ((sorted.len() as f64) * q).ceil() as usize;
    sorted
        .get(rank.saturating_sub(1))
        .copied()
        .unwrap_or_default()
}

/// One connection's loop: takes the next prepared request until the deadline or the pool's end;
/// returns the latencies of accepted requests and the failure count.
async fn drive(
    addr: SocketAddr,
    pool: Arc<Vec<Vec<u8>>>,
    next: Arc<AtomicUsize>,
    deadline: Instant,
    accept: fn(&[u8]) -> bool,
) -> (Vec<Duration>, u64) {
    let mut latencies = Vec::new();
    let mut failures = 0;
    let mut conn = None;
    while Instant::now() < deadline {
        if conn.is_none() {
            conn = Conn::connect(addr).await.ok();
            if conn.is_none() {
                failures += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        }
        let Some(c) = conn.as_mut() else { continue };
        let Some(request) = pool.get(next.fetch_add(1, Ordering::Relaxed)) else {
            break;
        };
        let sent = Instant::now();
        match c.round_trip_with(request, accept).await {
            Ok((200, true)) => latencies.push(sent.elapsed()),
            Ok(_) => failures += 1,
            Err(_) => {
                failures += 1;
                conn = None;
            }
        }
    }
    (latencies, failures)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rates_and_ratios_stay_finite() {
        assert_eq!(per_sec(30, Duration::from_millis(1500)), 20.0);
        assert!(per_sec(1, Duration::ZERO).is_finite());
        assert_eq!(ratio(10.0, 4.0), 2.5);
        assert!(ratio(1.0, 0.0).is_finite());
    }

    #[test]
    fn percentiles_are_by_nearest_rank() {
        let ms = Duration::from_millis;
        let sorted: Vec<Duration> = (1..=100).map(ms).collect();
        assert_eq!(nearest_rank(&sorted, 0.50), ms(50));
        assert_eq!(nearest_rank(&sorted, 0.99), ms(99));
        assert_eq!(nearest_rank(&[ms(7)], 0.99), ms(7));
        assert_eq!(nearest_rank(&[], 0.5), Duration::ZERO);
    }

    #[test]
    fn a_post_request_is_one_http1_message() {
        let addr = SocketAddr::from(([127, 0, 0, 1], 8787));
        let request = post_request(addr, "/v1/receipts", "X-A: 1\r\n", b"{}");
        assert_eq!(
            String::from_utf8(request).unwrap(),
            "POST /v1/receipts HTTP/1.1\r\nHost: 127.0.0.1:8787\r\nContent-Type: \
             application/json\r\nX-A: 1\r\nContent-Length: 2\r\n\r\n{}"
        );
    }
}
