//! An in-process `tacit-signer` for end-to-end tests, on its own thread and loopback port.
//!
//! [`TestSigner::start`] serves [`signer::app`] (through [`signer::serve`]) with the given
//! [`KeyStore`], allowing the given wallet origins to ask for signatures, with the rate limit
//! off and the system clock. The signer has no live key reload, so a rotation is a
//! [`TestSigner::restart`] with the rotated store on the same port, as an operator would do.
//! Stopping is abrupt (the runtime and its open connections are dropped), like a killed process.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use signer::{AppState, Config, KeyStore, SystemClock};
use tokio::sync::oneshot;
use wallet_core::Origin;

/// See the module docs. Stops when dropped.
#[derive(Debug)]
pub struct TestSigner {
    addr: SocketAddr,
    allowed: Vec<Origin>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TestSigner {
    /// Serves `keys` on `127.0.0.1` at a free port; `allowed_origins` are the wallet origins
    /// that may POST receipts.
    pub fn start(keys: KeyStore, allowed_origins: &[&str]) -> io::Result<Self> {
        let allowed = allowed_origins
            .iter()
            .map(|o| {
                Origin::parse(o)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))
            })
            .collect::<io::Result<Vec<_>>>()?;
        let mut signer = Self {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            allowed,
            stop: None,
            thread: None,
        };
        signer.spawn(keys)?;
        Ok(signer)
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the server and starts it again on the same port with `keys` (the signer reads
    /// its keys only at start).
    pub fn restart(&mut self, keys: KeyStore) -> io::Result<()> {
        self.shut();
        self.spawn(keys)
    }

    fn shut(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    fn spawn(&mut self, keys: KeyStore) -> io::Result<()> {
        let config = Config {
            listen: self.addr,
            allowed_origins: self.allowed.clone(),
            rate_limit_per_minute: 0,
            ..Config::default()
        };
        let state = AppState::new(keys, &config, SystemClock);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let addr = self.addr;
        let (bound_tx, bound_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("tacit-signer {addr}"))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match bind(addr).await {
                        Ok(l) => l,
                        Err(e) => {
                            let _ = bound_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = bound_tx.send(listener.local_addr());
                    let server = tokio::spawn(signer::serve(listener, state, async {
                        std::future::pending::<()>().await;
                    }));
                    let _ = stopped.await;
                    server.abort();
                });
                runtime.shutdown_timeout(Duration::from_secs(1));
            })?;
        let bound = bound_rx
            .recv()
            .map_err(|_| io::Error::other("signer thread ended before binding"))??;
        self.addr = bound;
        self.stop = Some(stop);
        self.thread = Some(thread);
        Ok(())
    }
}

/// Binds `addr`, retrying for a moment when a just-closed listener still holds the port.
async fn bind(addr: SocketAddr) -> io::Result<tokio::net::TcpListener> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(listener) => return Ok(listener),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

impl Drop for TestSigner {
    fn drop(&mut self) {
        self.shut();
    }
}
