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
    _runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for TestRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestRelay")
            .field("port", &self.port)
            .finish()
    }
}

impl TestRelay {
    pub fn start() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let keep = seen.clone();
        runtime.spawn(async move {
            while let Some(frame) = rx.recv().await {
                if let Ok(mut all) = keep.lock() {
                    all.push(frame);
                }
            }
        });
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
        let port = listener.local_addr()?.port();
        runtime.spawn(tacit_relay::serve(
            listener,
            RelayState::system().observed(tx),
        ));
        crate::server::allow_connect(&format!("ws://127.0.0.1:{port}"));
        crate::server::allow_connect(&format!("http://127.0.0.1:{port}"));
        Ok(Self {
            port,
            seen,
            _runtime: runtime,
        })
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
