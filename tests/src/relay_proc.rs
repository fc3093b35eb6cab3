//! A `tacit-relay` for tests, in this process on its own runtime thread and loopback port. Pages
//! served from then on may connect to it (`ws://` and `http://` at its port,
//! [`crate::server::allow_connect`]). [`TestRelay::seen`] is every frame it carried.

use std::sync::{Arc, Mutex};

use tacit_relay::RelayState;
use tokio::sync::mpsc;

/// See the module docs.
pub struct TestRelay {
    port: u16,
    seen: Arc<Mutex<Vec<Vec<u8>>>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for TestRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestRelay")
            .field("port", &self.port)
            .finish()
    }
}

impl TestRelay {
    /// A relay on a free loopback port.
    pub fn start() -> std::io::Result<Self> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (port, runtime) = Self::run(0, seen.clone())?;
        crate::server::allow_connect(&format!("ws://127.0.0.1:{port}"));
        crate::server::allow_connect(&format!("http://127.0.0.1:{port}"));
        Ok(Self {
            port,
            seen,
            runtime: Some(runtime),
        })
    }

    /// Stops the relay (every connection drops, as when a relay goes down) and starts a fresh
    /// one, with an empty table, on the same port; what it carries is still [`TestRelay::seen`].
    pub fn restart(&mut self) -> std::io::Result<()> {
        if let Some(old) = self.runtime.take() {
            old.shutdown_timeout(std::time::Duration::from_secs(2));
        }
        let mut attempt = 0;
        let (_, fresh) = loop {
            match Self::run(self.port, self.seen.clone()) {
                Ok(started) => break started,
                // The old listener may take a moment to let go of the port.
                Err(e) if attempt < 50 && e.kind() == std::io::ErrorKind::AddrInUse => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(e) => return Err(e),
            }
        };
        self.runtime = Some(fresh);
        Ok(())
    }

    fn run(
        port: u16,
        seen: Arc<Mutex<Vec<Vec<u8>>>>,
    ) -> std::io::Result<(u16, tokio::runtime::Runtime)> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        runtime.spawn(async move {
            while let Some(frame) = rx.recv().await {
                if let Ok(mut all) = seen.lock() {
                    all.push(frame);
                }
            }
        });
        let listener = runtime.block_on(tokio::net::TcpListener::bind(("127.0.0.1", port)))?;
        let port = listener.local_addr()?.port();
        runtime.spawn(tacit_relay::serve(
            listener,
            RelayState::system().observed(tx),
        ));
        Ok((port, runtime))
    }

    /// `http://127.0.0.1:<port>`: what a page's `?relay=` names.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every frame the relay carried so far.
    pub fn seen(&self) -> Vec<Vec<u8>> {
        self.seen.lock().map(|all| all.clone()).unwrap_or_default()
    }
}
