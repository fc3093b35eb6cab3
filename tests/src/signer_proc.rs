//! An in-process `tacit-signer` for end-to-end tests, on its own thread and loopback port, with
//! its enrolments in a SQLite file of its own (a real database, as in production).
//!
//! [`TestSigner::start`] serves [`signer::app`] (through [`signer::serve`]) with the given
//! [`KeyStore`], allowing the given wallet origins, with the rate limit off and the system clock.
//! Only enrolled wallet installs get a signature: [`TestSigner::enrolment_code`] makes a one-time
//! code as `tacit-signer enroll` does, and [`TestSigner::revoke_install`] revokes one as
//! `tacit-signer revoke-install` does. [`TestSigner::restart`] serves another key store on the same
//! port and the same database, as an operator would. Stopping is abrupt (the runtime and its open
//! connections are dropped), like a killed process.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::Duration;

use signer::{AppState, Config, KeyStore, SignerDb, SystemClock, system_now};
use tokio::sync::oneshot;

use crate::bind;
use wallet_core::Origin;

/// See the module docs. Stops when dropped.
#[derive(Debug)]
pub struct TestSigner {
    addr: SocketAddr,
    allowed: Vec<Origin>,
    dir: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

fn other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

impl TestSigner {
    /// Serves `keys` on `127.0.0.1` at a free port; `allowed_origins` are the wallet origins
    /// that may POST receipts (CORS); only enrolled installs are signed for.
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
            dir: tempfile::tempdir()?,
            stop: None,
            thread: None,
        };
        signer.spawn(keys)?;
        crate::server::allow_connect(&signer.url());
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

    /// The signer's SQLite database file.
    pub fn database_path(&self) -> PathBuf {
        self.dir.path().join("signer.db")
    }

    fn database_url(&self) -> String {
        tacit_store::sqlite_url(&self.database_path())
    }

    /// Runs `f` against the signer's database from the test's thread, as the CLI does while the
    /// server runs.
    fn with_db<T>(
        &self,
        f: impl AsyncFnOnce(&SignerDb) -> Result<T, signer::Error>,
    ) -> io::Result<T> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let url = self.database_url();
        runtime.block_on(async move {
            let db = SignerDb::open(&url).await.map_err(other)?;
            let out = f(&db).await.map_err(other);
            db.store().close().await;
            out
        })
    }

    /// A fresh one-time enrolment code (`XXXX-XXXX-XXXX-XXXX`), valid for an hour, as
    /// `tacit-signer enroll` prints it.
    pub fn enrolment_code(&self) -> io::Result<String> {
        self.with_db(async |db| {
            signer::enrol_code(db, "e2e", Duration::from_secs(3600), system_now())
                .await
                .map(|code| code.to_string())
        })
    }

    /// The enrolled installs' ids, as `tacit-signer installs` lists them (revoked ones too).
    pub fn installs(&self) -> io::Result<Vec<(String, bool)>> {
        self.with_db(async |db| {
            db.installs().await.map(|list| {
                list.into_iter()
                    .map(|r| (r.install_id, r.revoked_at.is_some()))
                    .collect()
            })
        })
    }

    /// Revokes an install, as `tacit-signer revoke-install` does. Whether it was enrolled.
    pub fn revoke_install(&self, id: &str) -> io::Result<bool> {
        let id = id.to_owned();
        self.with_db(async move |db| db.revoke_install(&id, system_now()).await)
    }

    /// Stops the server and starts it again on the same port and database with `keys`.
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
        let mut config = Config {
            listen: self.addr,
            allowed_origins: self.allowed.clone(),
            ..Config::default()
        };
        config.limit_flags.rate_limit_per_minute = 0;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let addr = self.addr;
        let url = self.database_url();
        let (bound_tx, bound_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("tacit-signer {addr}"))
            .spawn(move || {
                runtime.block_on(async move {
                    let db = match SignerDb::open(&url).await {
                        Ok(db) => db,
                        Err(e) => {
                            let _ = bound_tx.send(Err(other(e)));
                            return;
                        }
                    };
                    let listener = match bind(addr).await {
                        Ok(l) => l,
                        Err(e) => {
                            let _ = bound_tx.send(Err(e));
                            return;
                        }
                    };
                    let bound = listener.local_addr();
                    let mut config = config;
                    if let Ok(bound) = bound {
                        config.listen = bound;
                    }
                    let state = AppState::new(keys, db, &config, SystemClock);
                    let _ = bound_tx.send(bound);
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

impl Drop for TestSigner {
    fn drop(&mut self) {
        self.shut();
    }
}
