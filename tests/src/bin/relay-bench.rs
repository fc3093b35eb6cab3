//! `relay-bench`: the real `tacit-relay` binary under load from a native client on loopback,
//! against a forward-only WebSocket server measured in the same run (issue 29).
//!
//! ```text
//! cargo build --release -p tacit-relay
//! cargo run --release -p tacit-e2e --bin relay-bench -- [--relay target/release/tacit-relay]
//!     [--sessions 1000] [--seconds 5] [--size 200] [--rates 2.5,5,10,19] [--out FILE]
//! ```
//!
//! For each server in turn (the relay started as `tacit-relay --listen 127.0.0.1:PORT`, then the
//! baseline: this binary started again as `--serve-forward`, an axum WebSocket server with the
//! relay's path and connection design, one bounded outgoing queue per connection, that forwards
//! each binary message to the other side of its route and keeps no rules: no rate limit, no
//! mailbox, no route table limits), both child processes so their memory is read from
//! `/proc/<pid>/status`:
//!
//! 1. `VmRSS` after start, then `--sessions` routes are joined with both sides connected (two
//!    WebSocket connections each), left idle for 2 s and `VmRSS` read again: the difference over
//!    the sessions is the memory of one idle session (both its connections and its route).
//! 2. Load steps: at each rate of `--rates` (frames a second, per side of each route) every side
//!    sends `--size`-byte frames to its peer for `--seconds`, paced by its own timer (phases
//!    spread over the period), then 1 s for the last frames to arrive. Each frame carries the
//!    time it was sent (this process's monotonic clock); the receiving side computes its latency
//!    into a histogram of 10 µs buckets (percentiles are the bucket's upper edge, nearest rank).
//!    Frames sent, delivered and refused are counted, and the server's and this process's CPU
//!    time (`/proc/<pid>/stat`) over each step.
//!
//! The relay lets each side send `FRAMES_PER_MINUTE` (1,200) frames a minute, 20 a second
//! (`tacit_pairing::relay`): every rate here must stay below that, so the rate limit is never
//! what is measured; a refused frame is counted and shown. Load generator and server share this
//! machine's cores. Prints markdown (and writes it to `--out`). Nothing here asserts a time.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use tacit_pairing::relay::FRAMES_PER_MINUTE;
use tokio::time::{Instant, MissedTickBehavior};
use tokio_tungstenite::tungstenite::Message;

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// What to run, from the command line.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "relay-bench",
    version,
    about = "Loads the tacit-relay binary with paired sessions on loopback, against a \
             forward-only WebSocket server in the same run"
)]
struct Args {
    /// The `tacit-relay` binary [default: <target>/release/tacit-relay].
    #[arg(long)]
    relay: Option<PathBuf>,
    /// Routes, each with both sides connected.
    #[arg(long, default_value_t = 1000)]
    sessions: usize,
    /// Seconds of load per step.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Bytes per frame (at least 16: the send time and the step are in it).
    #[arg(long, default_value_t = 200)]
    size: usize,
    /// Frames a second each side sends, one load step per rate (each below the relay's limit).
    #[arg(long, value_delimiter = ',', default_values_t = [2.5, 5.0, 10.0, 19.0])]
    rates: Vec<f64>,
    /// Also write the markdown here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Internal: serve the forward-only baseline on this address and print its port.
    #[arg(long, hide = true)]
    serve_forward: Option<SocketAddr>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let outcome = match args.serve_forward {
        Some(addr) => forward::serve(addr),
        None => run(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("relay-bench: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The relay's per-side limit, frames a second.
fn limit_per_second() -> f64 {
    f64::from(FRAMES_PER_MINUTE) / 60.0
}

fn run(args: &Args) -> Res<()> {
    if cfg!(debug_assertions) {
        eprintln!("relay-bench: WARNING: a debug build of the load generator. Run with --release.");
    }
    if args.size < 16 || args.size > tacit_pairing::relay::MAX_RELAYED_FRAME {
        return Err(format!(
            "--size {} is not between 16 and {} bytes",
            args.size,
            tacit_pairing::relay::MAX_RELAYED_FRAME
        )
        .into());
    }
    if args.sessions == 0 || args.rates.is_empty() || args.seconds.is_nan() || args.seconds <= 0.0 {
        return Err("--sessions, --rates and --seconds must be positive".into());
    }
    for rate in &args.rates {
        if rate.is_nan() || *rate <= 0.0 || *rate >= limit_per_second() {
            return Err(format!(
                "--rates {rate}: each side may send {} frames a second at the relay \
                 (FRAMES_PER_MINUTE = {FRAMES_PER_MINUTE}); a rate at or above it would measure \
                 the rate limit",
                limit_per_second()
            )
            .into());
        }
    }
    let relay = match &args.relay {
        Some(path) => path.clone(),
        None => tacit_e2e::target_dir().join("release").join("tacit-relay"),
    };
    if !relay.is_file() {
        return Err(format!(
            "no relay binary at {}: run `cargo build --release -p tacit-relay` first",
            relay.display()
        )
        .into());
    }
    let me = std::env::current_exe()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;

    let port = free_port()?;
    let relay_server = Server::start(
        "tacit-relay",
        Command::new(&relay).args(["--listen", &format!("127.0.0.1:{port}")]),
        port,
    )?;
    println!(
        "relay-bench: tacit-relay (pid {}) on 127.0.0.1:{port}",
        relay_server.pid()
    );
    let relay_run = runtime.block_on(measure(&relay_server, args))?;
    drop(relay_server);

    let port = free_port()?;
    let baseline_server = Server::start(
        "forward-only baseline",
        Command::new(&me).args(["--serve-forward", &format!("127.0.0.1:{port}")]),
        port,
    )?;
    println!(
        "relay-bench: forward-only baseline (pid {}) on 127.0.0.1:{port}",
        baseline_server.pid()
    );
    let baseline_run = runtime.block_on(measure(&baseline_server, args))?;
    drop(baseline_server);

    let md = markdown(args, &relay_run, &baseline_run);
    print!("{md}");
    if let Some(out) = &args.out {
        if let Some(dir) = out.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(out, &md)?;
        eprintln!("relay-bench: wrote {}", out.display());
    }
    Ok(())
}

/// A loopback port nobody listens on now.
fn free_port() -> Res<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// A server child process, killed (by its pid, through [`Child::kill`]) when dropped.
struct Server {
    child: Child,
}

impl Server {
    fn start(name: &str, command: &mut Command, port: u16) -> Res<Self> {
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting {name}: {e}"))?;
        let mut server = Self { child };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = server.child.try_wait()? {
                return Err(format!("{name} exited at start ({status})").into());
            }
            if std::time::Instant::now() > deadline {
                return Err(format!("{name} never listened on 127.0.0.1:{port}").into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `VmRSS` in bytes.
    fn rss(&self) -> Res<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))?;
        let kb = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or("no VmRSS in /proc/<pid>/status")?;
        Ok(kb * 1024)
    }

    /// CPU seconds (user + system) the server has used.
    fn cpu(&self) -> Res<f64> {
        cpu_seconds(&format!("/proc/{}/stat", self.pid()))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Clock ticks a second (`getconf CLK_TCK`; 100 if it cannot be read).
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|t| *t > 0.0)
        .unwrap_or(100.0)
}

/// utime + stime of a `/proc/<pid>/stat`, in seconds.
fn cpu_seconds(path: &str) -> Res<f64> {
    let stat = std::fs::read_to_string(path)?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .ok_or("unreadable stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of stat; `rest` starts at field 3.
    let ticks = |i: usize| -> Res<f64> {
        Ok(fields
            .get(i)
            .ok_or("short stat")?
            .parse::<f64>()
            .map_err(|e| format!("stat field: {e}"))?)
    };
    Ok((ticks(11)? + ticks(12)?) / clock_ticks())
}

/// Busy CPU seconds of the whole machine (all cores, every process; `/proc/stat`).
fn machine_busy() -> Res<f64> {
    let stat = std::fs::read_to_string("/proc/stat")?;
    let line = stat
        .lines()
        .find(|l| l.starts_with("cpu "))
        .ok_or("no cpu line in /proc/stat")?;
    let ticks: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal …: busy is all but idle and iowait.
    let total: f64 = ticks.iter().take(8).sum();
    let idle = ticks.get(3).copied().unwrap_or(0.0) + ticks.get(4).copied().unwrap_or(0.0);
    Ok((total - idle) / clock_ticks())
}

/// Histogram buckets of 10 µs, up to 2 s (the last one holds everything slower).
const BUCKET_US: u64 = 10;
const BUCKETS: usize = 200_000;

/// Counters of one load step, shared by every connection.
struct Step {
    sent: AtomicU64,
    received: AtomicU64,
    max_us: AtomicU64,
    hist: Vec<AtomicU64>,
}

impl Step {
    fn new() -> Self {
        Self {
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
            max_us: AtomicU64::new(0),
            hist: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn record(&self, us: u64) {
        let bucket = usize::try_from(us / BUCKET_US)
            .unwrap_or(BUCKETS)
            .min(BUCKETS - 1);
        self.hist[bucket].fetch_add(1, Ordering::Relaxed);
        self.max_us.fetch_max(us, Ordering::Relaxed);
        self.received.fetch_add(1, Ordering::Relaxed);
    }

    /// Nearest-rank percentile `q` in ms (the bucket's upper edge; the maximum for the last).
    fn pct(&self, q: f64) -> f64 {
        let counts: Vec<u64> = self
            .hist
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return f64::NAN;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (i, c) in counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                if i == BUCKETS - 1 {
                    break;
                }
                return ((i as u64 + 1) * BUCKET_US) as f64 / 1000.0;
            }
        }
        self.max_us.load(Ordering::Relaxed) as f64 / 1000.0
    }
}

/// Everything every connection shares.
struct Shared {
    base: Instant,
    steps: Vec<Step>,
    refused: AtomicU64,
    dropped_connections: AtomicU64,
    peer_notices: AtomicU64,
}

/// One load step's figures.
#[derive(Debug, Clone)]
struct StepFigures {
    rate_per_side: f64,
    sent_per_s: f64,
    delivered_per_s: f64,
    lost: u64,
    p50: f64,
    p99: f64,
    max: f64,
    server_cores: f64,
    server_us_per_frame: f64,
    client_cores: f64,
    /// Cores busy with other processes of the machine over the step.
    others_cores: f64,
}

/// One server's figures.
#[derive(Debug, Clone)]
struct RunFigures {
    rss_start: u64,
    rss_idle: u64,
    join_seconds: f64,
    steps: Vec<StepFigures>,
    refused: u64,
    dropped_connections: u64,
}

type Sink = futures_util::stream::SplitSink<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    Message,
>;

async fn measure(server: &Server, args: &Args) -> Res<RunFigures> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_start = server.rss()?;
    let shared = Arc::new(Shared {
        base: Instant::now(),
        steps: args.rates.iter().map(|_| Step::new()).collect(),
        refused: AtomicU64::new(0),
        dropped_connections: AtomicU64::new(0),
        peer_notices: AtomicU64::new(0),
    });
    let port = server_port(server)?;

    // Join the sessions, 50 at a time.
    let joined = Instant::now();
    let mut sinks: Vec<Sink> = Vec::with_capacity(args.sessions * 2);
    let mut readers = Vec::with_capacity(args.sessions * 2);
    let mut next = 0;
    while next < args.sessions {
        let batch: Vec<usize> = (next..(next + 50).min(args.sessions)).collect();
        next += batch.len();
        let mut joins = Vec::new();
        for i in batch {
            joins.push(tokio::spawn(join_session(port, i)));
        }
        for join in joins {
            for ws in join.await?? {
                let (sink, stream) = ws.split();
                sinks.push(sink);
                readers.push(tokio::spawn(read_loop(stream, shared.clone())));
            }
        }
    }
    let join_seconds = joined.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_idle = server.rss()?;
    println!(
        "relay-bench: {} sessions joined in {join_seconds:.1} s; RSS {:.1} → {:.1} MiB",
        args.sessions,
        rss_start as f64 / 1048576.0,
        rss_idle as f64 / 1048576.0
    );

    // The load: every side paced by its own timer, phases spread over the period.
    let step_len = Duration::from_secs_f64(args.seconds);
    let drain = Duration::from_secs(1);
    let t0 = Instant::now() + Duration::from_millis(500);
    let starts: Vec<Instant> = (0..args.rates.len())
        .map(|k| t0 + (step_len + drain) * u32::try_from(k).unwrap_or(u32::MAX))
        .collect();
    let plan = Arc::new((starts.clone(), step_len, args.rates.clone(), args.size));
    let count = sinks.len();
    let mut senders = Vec::with_capacity(count);
    for (i, sink) in sinks.into_iter().enumerate() {
        // Golden-ratio phases: spread evenly, no two sides of a route together.
        let phase = (i as f64 * 0.618_033_988_75).fract();
        senders.push(tokio::spawn(send_loop(
            sink,
            plan.clone(),
            phase,
            shared.clone(),
        )));
    }
    let me = "/proc/self/stat";
    let mut steps = Vec::new();
    for (k, start) in starts.iter().enumerate() {
        tokio::time::sleep_until(*start).await;
        let (server0, client0, all0) = (server.cpu()?, cpu_seconds(me)?, machine_busy()?);
        tokio::time::sleep_until(*start + step_len).await;
        let (server1, client1, all1) = (server.cpu()?, cpu_seconds(me)?, machine_busy()?);
        tokio::time::sleep_until(*start + step_len + drain).await;
        let step = &shared.steps[k];
        let sent = step.sent.load(Ordering::Relaxed);
        let received = step.received.load(Ordering::Relaxed);
        let seconds = step_len.as_secs_f64();
        let server_cpu = server1 - server0;
        let figures = StepFigures {
            rate_per_side: args.rates[k],
            sent_per_s: sent as f64 / seconds,
            delivered_per_s: received as f64 / seconds,
            lost: sent.saturating_sub(received),
            p50: step.pct(0.50),
            p99: step.pct(0.99),
            max: step.max_us.load(Ordering::Relaxed) as f64 / 1000.0,
            server_cores: server_cpu / seconds,
            server_us_per_frame: if received == 0 {
                f64::NAN
            } else {
                server_cpu * 1e6 / received as f64
            },
            client_cores: (client1 - client0) / seconds,
            others_cores: ((all1 - all0) - server_cpu - (client1 - client0)).max(0.0) / seconds,
        };
        println!(
            "relay-bench: {:.1}/s per side: sent {:.0}/s, delivered {:.0}/s, p50 {:.2} ms, \
             p99 {:.2} ms, server {:.2} cores, other processes {:.2} cores",
            figures.rate_per_side,
            figures.sent_per_s,
            figures.delivered_per_s,
            figures.p50,
            figures.p99,
            figures.server_cores,
            figures.others_cores
        );
        steps.push(figures);
    }
    let dropped_connections = shared.dropped_connections.load(Ordering::Relaxed);
    for sender in senders {
        if let Ok(Ok(mut sink)) = sender.await {
            let _ = sink.close().await;
        }
    }
    for reader in readers {
        reader.abort();
    }
    Ok(RunFigures {
        rss_start,
        rss_idle,
        join_seconds,
        steps,
        refused: shared.refused.load(Ordering::Relaxed),
        dropped_connections,
    })
}

/// The port a server child listens on, from its command line.
fn server_port(server: &Server) -> Res<u16> {
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", server.pid()))?;
    cmdline
        .split(|b| *b == 0)
        .filter_map(|a| std::str::from_utf8(a).ok())
        .find_map(|a| a.strip_prefix("127.0.0.1:"))
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| "no 127.0.0.1:PORT on the server's command line".into())
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Route `i`'s two sides, connected: bridge, then vault.
async fn join_session(port: u16, i: usize) -> Res<[Ws; 2]> {
    let route = format!("{:032x}", 0x7ac1_u128 << 112 | i as u128);
    let url = |side: &str| format!("ws://127.0.0.1:{port}/v1/relay/{route}/{side}");
    // TCP_NODELAY, as browsers set on their WebSockets.
    let (bridge, _) =
        tokio_tungstenite::connect_async_with_config(url("bridge"), None, true).await?;
    let (vault, _) = tokio_tungstenite::connect_async_with_config(url("vault"), None, true).await?;
    Ok([bridge, vault])
}

async fn read_loop(mut stream: futures_util::stream::SplitStream<Ws>, shared: Arc<Shared>) {
    while let Some(message) = stream.next().await {
        match message {
            Ok(Message::Binary(frame)) if frame.len() >= 16 => {
                let at = shared.base.elapsed().as_nanos();
                let mut sent = [0u8; 8];
                sent.copy_from_slice(&frame[..8]);
                let mut step = [0u8; 4];
                step.copy_from_slice(&frame[8..12]);
                let sent = u128::from(u64::from_le_bytes(sent));
                let step = u32::from_le_bytes(step) as usize;
                if let Some(step) = shared.steps.get(step) {
                    let us = u64::try_from(at.saturating_sub(sent) / 1000).unwrap_or(u64::MAX);
                    step.record(us);
                }
            }
            Ok(Message::Text(text)) => {
                if text.contains("\"refused\"") {
                    shared.refused.fetch_add(1, Ordering::Relaxed);
                } else {
                    shared.peer_notices.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => {}
        }
    }
    shared.dropped_connections.fetch_add(1, Ordering::Relaxed);
}

async fn send_loop(
    mut sink: Sink,
    plan: Arc<(Vec<Instant>, Duration, Vec<f64>, usize)>,
    phase: f64,
    shared: Arc<Shared>,
) -> Result<Sink, String> {
    let (starts, step_len, rates, size) = &*plan;
    let mut frame = vec![0x5a_u8; *size];
    for (k, (start, rate)) in starts.iter().zip(rates).enumerate() {
        let period = Duration::from_secs_f64(1.0 / rate);
        let end = *start + *step_len;
        let mut tick = tokio::time::interval_at(*start + period.mul_f64(phase), period);
        tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
        let tag = u32::try_from(k).unwrap_or(u32::MAX).to_le_bytes();
        loop {
            tick.tick().await;
            if Instant::now() >= end {
                break;
            }
            let now = u64::try_from(shared.base.elapsed().as_nanos()).unwrap_or(u64::MAX);
            frame[..8].copy_from_slice(&now.to_le_bytes());
            frame[8..12].copy_from_slice(&tag);
            if sink
                .send(Message::Binary(frame.clone().into()))
                .await
                .is_err()
            {
                return Err("a connection closed under load".to_owned());
            }
            shared.steps[k].sent.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(sink)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1048576.0)
}

fn per_session(run: &RunFigures, sessions: usize) -> f64 {
    (run.rss_idle as f64 - run.rss_start as f64) / sessions as f64
}

fn ratio(a: f64, b: f64) -> String {
    if a.is_finite() && b.is_finite() && b != 0.0 {
        format!("{:.2}×", a / b)
    } else {
        "–".to_owned()
    }
}

fn markdown(args: &Args, relay: &RunFigures, baseline: &RunFigures) -> String {
    let n = args.sessions;
    let mut r = format!(
        "relay-bench: {n} sessions ({} WebSocket connections) on loopback, {}-byte frames, \
         {} s per load step, {} CPU core(s) shared by the load generator and the server.\n\n\
         | Measure | `tacit-relay` | forward-only baseline | relay / baseline |\n\
         |---|---|---|---|\n",
        n * 2,
        args.size,
        args.seconds,
        std::thread::available_parallelism().map_or(1, |c| c.get()),
    );
    r.push_str(&format!(
        "| RSS after start | {} | {} | |\n| RSS with {n} idle sessions | {} | {} | |\n",
        mib(relay.rss_start),
        mib(baseline.rss_start),
        mib(relay.rss_idle),
        mib(baseline.rss_idle),
    ));
    let (rp, bp) = (per_session(relay, n), per_session(baseline, n));
    r.push_str(&format!(
        "| memory per idle session (its route and both connections) | {:.1} KiB | {:.1} KiB | {} |\n",
        rp / 1024.0,
        bp / 1024.0,
        ratio(rp, bp)
    ));
    r.push_str(&format!(
        "| time to join {n} sessions (50 at a time) | {:.2} s | {:.2} s | {} |\n\n",
        relay.join_seconds,
        baseline.join_seconds,
        ratio(relay.join_seconds, baseline.join_seconds)
    ));
    r.push_str(
        "| Offered, per side (all sides) | Server | Sent frames/s | Delivered frames/s | \
         Latency p50 | p99 | max | Lost | Server CPU (cores) | Server CPU per frame | Load \
         generator CPU (cores) | Other processes' CPU (cores) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (a, b) in relay.steps.iter().zip(&baseline.steps) {
        for (name, s) in [("`tacit-relay`", a), ("baseline", b)] {
            r.push_str(&format!(
                "| {:.1}/s ({:.0}/s) | {name} | {:.0} | {:.0} | {:.2} ms | {:.2} ms | {:.1} ms | \
                 {} | {:.2} | {:.1} µs | {:.2} | {:.2} |\n",
                s.rate_per_side,
                s.rate_per_side * (n * 2) as f64,
                s.sent_per_s,
                s.delivered_per_s,
                s.p50,
                s.p99,
                s.max,
                s.lost,
                s.server_cores,
                s.server_us_per_frame,
                s.client_cores,
                s.others_cores,
            ));
        }
        r.push_str(&format!(
            "| | relay / baseline | | {} | {} | {} | | | | {} | | |\n",
            ratio(a.delivered_per_s, b.delivered_per_s),
            ratio(a.p50, b.p50),
            ratio(a.p99, b.p99),
            ratio(a.server_us_per_frame, b.server_us_per_frame),
        ));
    }
    let met = relay
        .steps
        .iter()
        .filter(|s| s.delivered_per_s >= 10_000.0 && s.p99 <= 10.0 && s.lost == 0)
        .max_by(|a, b| a.delivered_per_s.total_cmp(&b.delivered_per_s));
    r.push_str(&format!(
        "\nIssue 29's goal, {n} paired sessions, ≥ 10,000 frames/s delivered with p99 ≤ 10 ms: \
         **{}**.\n",
        match met {
            Some(s) => format!(
                "met (at most, here: {:.0} frames/s delivered at {:.1}/s per side, p99 {:.2} ms)",
                s.delivered_per_s, s.rate_per_side, s.p99
            ),
            None => "not met in this run".to_owned(),
        }
    ));
    r.push_str(&format!(
        "\nFrames the relay refused: {} (rate limit, mailbox or other; the baseline refuses \
         none by design); connections that closed under load: {} relay, {} baseline. Each side \
         sent at most {:.1} frames a second, below the relay's {} (FRAMES_PER_MINUTE = \
         {FRAMES_PER_MINUTE}), so the rate limit is not what these steps measure. A frame is \
         lost if sent in a step and not delivered within 1 s after it. Server CPU is the \
         child's utime + stime over the step; CPU per frame divides it by the frames \
         delivered. Other processes' CPU is the machine's busy time (`/proc/stat`) less the \
         server's and the load generator's: the machine is shared, and a step whose sides \
         could not send at the offered rate (sent < offered) or whose latency jumps while \
         other processes were busy measured the machine's load, not the server. Latency \
         percentiles are the upper edge of their 10 µs bucket (2 s and over: the maximum).\n",
        relay.refused,
        relay.dropped_connections,
        baseline.dropped_connections,
        args.rates.iter().copied().fold(0.0, f64::max),
        limit_per_second(),
    ));
    r
}

/// The baseline: the relay's path and connection design without its rules.
mod forward {
    use super::*;

    use axum::Router;
    use axum::extract::ws::{Message as AxumMessage, WebSocket, WebSocketUpgrade};
    use axum::extract::{Path as AxumPath, State};
    use axum::response::Response;
    use axum::routing::get;
    use tokio::sync::mpsc;

    /// Per route, each side's connection id and queue.
    type Table = Arc<Mutex<HashMap<(String, bool), (u64, mpsc::Sender<Vec<u8>>)>>>;

    #[derive(Clone, Default)]
    struct Forward {
        table: Table,
        next: Arc<AtomicU64>,
    }

    /// Serves on `addr` until killed. The tokio runtime has as many workers as the relay's.
    pub fn serve(addr: SocketAddr) -> Res<()> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let app = Router::new()
                .route(tacit_relay::RELAY_PATH, get(upgrade))
                .with_state(Forward::default());
            axum::serve(listener, app).await?;
            Ok(())
        })
    }

    async fn upgrade(
        State(state): State<Forward>,
        AxumPath((route, side)): AxumPath<(String, String)>,
        ws: WebSocketUpgrade,
    ) -> Response {
        let bridge = side == "bridge";
        ws.max_message_size(tacit_pairing::relay::MAX_RELAYED_FRAME)
            .on_upgrade(move |socket| connection(state, route, bridge, socket))
    }

    async fn connection(state: Forward, route: String, bridge: bool, socket: WebSocket) {
        let id = state.next.fetch_add(1, Ordering::Relaxed);
        let (mut sink, mut stream) = socket.split();
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(tacit_relay::OUTGOING_QUEUE);
        let table = || state.table.lock().unwrap_or_else(PoisonError::into_inner);
        table().insert((route.clone(), bridge), (id, tx));
        loop {
            tokio::select! {
                outgoing = rx.recv() => match outgoing {
                    Some(frame) => {
                        if sink.send(AxumMessage::Binary(frame.into())).await.is_err() {
                            break;
                        }
                    }
                    None => break,
                },
                incoming = stream.next() => match incoming {
                    Some(Ok(AxumMessage::Binary(frame))) => {
                        let peer = table().get(&(route.clone(), !bridge)).map(|(_, s)| s.clone());
                        if let Some(peer) = peer {
                            let _ = peer.try_send(frame.to_vec());
                        }
                    }
                    Some(Ok(AxumMessage::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => {}
                },
            }
        }
        let mut table = table();
        if table
            .get(&(route.clone(), bridge))
            .is_some_and(|(c, _)| *c == id)
        {
            table.remove(&(route, bridge));
        }
    }
}
