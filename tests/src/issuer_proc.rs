//! An in-process `tacit-issuer` for end-to-end tests and the demo, on its own thread and
//! loopback port, with a fresh key and its people in a SQLite file of its own (a real database,
//! as in production).
//!
//! [`TestIssuer::start`] makes a key, seeds the three demo people (Ana: 28,500.00 EUR, born
//! 1990-04-12; Ben: 72,000.00 EUR, born 2008-09-01; Chloe: 15,000.00 EUR, born 1958-06-30) with a
//! one-time enrolment code each, and serves [`tacit_issuer::app`] (through
//! [`tacit_issuer::serve`]) on `127.0.0.1` at a free port, with the rate limit off and the system
//! clock. The issuer's origin (its `iss`) is `http://127.0.0.1:<port>`.
//! [`TestIssuer::start_with`] takes an [`IssuerSetup`] for a fixed address and a key file and
//! database that outlive the process (the demo). Stopping is abrupt (the runtime and its open
//! connections are dropped), like a killed process.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

use tacit_issuer::{
    AppState, Attribute, Config, DEFAULT_CODE_VALIDITY_MS, IssuerDb, KeyStore, Person, SystemClock,
    system_now,
};
use tokio::sync::oneshot;

use crate::bind;

/// The issuer name tests give the tax office.
pub const TAX_OFFICE: &str = "Tax Office Nordstadt";
/// The issuer name tests give the civil registry.
pub const CIVIL_REGISTRY: &str = "Civil Registry Nordstadt";

fn other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

fn invalid(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e.to_string())
}

/// `income` or `birth_date`, as the `--attribute` flag reads it.
pub fn parse_attribute(attribute: &str) -> io::Result<Attribute> {
    match attribute {
        "income" => Ok(Attribute::Income),
        "birth_date" => Ok(Attribute::BirthDate),
        other => Err(invalid(format!(
            "unknown attribute `{other}` (income or birth_date)"
        ))),
    }
}

/// Where and how an issuer runs.
#[derive(Debug, Clone)]
pub struct IssuerSetup {
    /// `income` or `birth_date`.
    pub attribute: Attribute,
    /// The name people see ("Tax Office Nordstadt").
    pub name: String,
    /// The address to listen on; port 0 picks a free one. The origin follows the bound address.
    pub listen: SocketAddr,
    /// The key file: loaded if it exists, else made (mode 0600). `None`: a fresh key in memory.
    pub key_file: Option<PathBuf>,
    /// The SQLite file. `None`: `issuer.db` in a temporary directory removed on drop.
    pub database: Option<PathBuf>,
}

impl IssuerSetup {
    /// A fresh issuer on a free loopback port with a key and database of its own.
    pub fn ephemeral(attribute: Attribute, name: &str) -> Self {
        Self {
            attribute,
            name: name.to_owned(),
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            key_file: None,
            database: None,
        }
    }
}

/// See the module docs. Stops when dropped.
#[derive(Debug)]
pub struct TestIssuer {
    addr: SocketAddr,
    name: String,
    attribute: Attribute,
    metadata_json: String,
    database: PathBuf,
    codes: Vec<(String, Person)>,
    _dir: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TestIssuer {
    /// A fresh issuer vouching for `attribute` (`income` or `birth_date`) as `name`, on a free
    /// loopback port, with the three demo people seeded and one code each ([`TestIssuer::codes`]).
    pub fn start(attribute: &str, name: &str) -> io::Result<Self> {
        Self::start_with(IssuerSetup::ephemeral(parse_attribute(attribute)?, name))
    }

    /// The tax office (income), [`TAX_OFFICE`], on a free port.
    pub fn tax_office() -> io::Result<Self> {
        Self::start("income", TAX_OFFICE)
    }

    /// The civil registry (birth date), [`CIVIL_REGISTRY`], on a free port.
    pub fn civil_registry() -> io::Result<Self> {
        Self::start("birth_date", CIVIL_REGISTRY)
    }

    /// Starts an issuer as `setup` says. Everyone already on record gets a fresh one-time code
    /// (an empty database is seeded with the demo people first): see [`TestIssuer::codes`].
    pub fn start_with(setup: IssuerSetup) -> io::Result<Self> {
        let dir = tempfile::tempdir()?;
        let database = setup
            .database
            .clone()
            .unwrap_or_else(|| dir.path().join("issuer.db"));
        let keys = match &setup.key_file {
            Some(path) => load_or_make_key(path)?,
            None => KeyStore::make(system_now()).map_err(other)?,
        };
        let mut config = Config {
            name: setup.name.clone(),
            origin: None,
            attribute: setup.attribute,
            listen: setup.listen,
            database: Some(database.display().to_string()),
            ..Config::default()
        };
        config.limit_flags.rate_limit_per_minute = 0;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let url = tacit_store::sqlite_url(&database);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let listen = setup.listen;
        let thread = std::thread::Builder::new()
            .name(format!("tacit-issuer {}", setup.name))
            .spawn(move || {
                runtime.block_on(async move {
                    let ready = async {
                        let db = IssuerDb::open(&url).await.map_err(other)?;
                        let codes =
                            tacit_issuer::fresh_codes(&db, DEFAULT_CODE_VALIDITY_MS, system_now())
                                .await
                                .map_err(other)?;
                        let listener = bind(listen).await?;
                        let mut config = config;
                        config.listen = listener.local_addr()?;
                        let state = AppState::new(keys, db, &config, SystemClock).map_err(other)?;
                        let codes: Vec<(String, Person)> = codes
                            .into_iter()
                            .map(|(person, code)| (code.code.to_string(), person))
                            .collect();
                        io::Result::Ok((listener, state, codes))
                    };
                    let (listener, state, codes) = match ready.await {
                        Ok(ready) => ready,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let addr = listener.local_addr();
                    let metadata_json = state.metadata_json().to_owned();
                    let _ = ready_tx.send(addr.map(|a| (a, metadata_json, codes)));
                    let server = tokio::spawn(tacit_issuer::serve(listener, state, async {
                        std::future::pending::<()>().await;
                    }));
                    let _ = stopped.await;
                    server.abort();
                });
                runtime.shutdown_timeout(Duration::from_secs(1));
            })?;
        let (addr, metadata_json, codes) = ready_rx
            .recv()
            .map_err(|_| io::Error::other("issuer thread ended before binding"))??;
        crate::server::allow_connect(&format!("http://{addr}"));
        Ok(Self {
            addr,
            name: setup.name,
            attribute: setup.attribute,
            metadata_json,
            database,
            codes,
            _dir: dir,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:<port>`: the issuer's origin, its `iss`, and what the wallet types.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `<origin><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin())
    }

    /// The issuer metadata URL (`/.well-known/jwt-vc-issuer`): a site's `keys_url`.
    pub fn keys_url(&self) -> String {
        self.url("/.well-known/jwt-vc-issuer")
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The name people see.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it vouches for.
    pub fn attribute(&self) -> Attribute {
        self.attribute
    }

    /// The `/.well-known/jwt-vc-issuer` body: `{"issuer": origin, "jwks": {"keys": [...]}}`.
    pub fn metadata_json(&self) -> &str {
        &self.metadata_json
    }

    /// The issuer's key set alone (`{"keys": [...]}`), as a pinned key file may hold it.
    pub fn jwks_json(&self) -> String {
        serde_json::from_str::<serde_json::Value>(&self.metadata_json)
            .map(|m| m["jwks"].to_string())
            .unwrap_or_default()
    }

    /// The SQLite file.
    pub fn database_path(&self) -> &Path {
        &self.database
    }

    /// The one-time enrolment codes made at start, with their person's name (`Ana Demo`,
    /// `Ben Demo`, `Chloe Demo` on a fresh database), oldest person first. Each works once.
    pub fn codes(&self) -> Vec<(String, String)> {
        self.codes
            .iter()
            .map(|(code, person)| (code.clone(), person.name.clone()))
            .collect()
    }

    /// The people on record at start, with the code made for each.
    pub fn people(&self) -> &[(String, Person)] {
        &self.codes
    }

    /// The code made at start for the person whose name starts with `who` (`"Ana"`).
    pub fn code_for(&self, who: &str) -> io::Result<String> {
        self.codes
            .iter()
            .find(|(_, p)| p.name.starts_with(who))
            .map(|(code, _)| code.clone())
            .ok_or_else(|| invalid(format!("nobody called {who} at {}", self.name)))
    }

    /// How many batches the issuer has handed out (its `issued` table).
    pub fn issued_batches(&self) -> io::Result<i64> {
        self.with_db(async |db| db.issued_count().await)
    }

    /// Runs `f` against the issuer's database from the caller's thread, as the CLI does while
    /// the server runs.
    fn with_db<T>(
        &self,
        f: impl AsyncFnOnce(&IssuerDb) -> Result<T, tacit_issuer::Error>,
    ) -> io::Result<T> {
        let url = tacit_store::sqlite_url(&self.database);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async move {
            let db = IssuerDb::open(&url).await.map_err(other)?;
            let out = f(&db).await.map_err(other);
            db.store().close().await;
            out
        })
    }

    /// `tacit-issuer revoke` for the person named `who` (their full name), as an operator
    /// would run it while the issuer runs: their refresh chain ends and every credential
    /// issued to them is set in the status list. How many codes and tokens it ended.
    pub fn revoke(&self, who: &str) -> io::Result<u64> {
        let who = who.to_owned();
        self.with_db(async move |db| {
            tacit_issuer::revoke(db, &who, system_now())
                .await
                .map(|(_, ended)| ended)
        })
    }

    /// A further one-time code for the person whose name starts with `who`, valid an hour, as
    /// an operator would make it while the issuer runs.
    pub fn fresh_code(&self, who: &str) -> io::Result<String> {
        let person = self
            .codes
            .iter()
            .find(|(_, p)| p.name.starts_with(who))
            .map(|(_, p)| p.person_id.clone())
            .ok_or_else(|| invalid(format!("nobody called {who} at {}", self.name)))?;
        self.with_db(async move |db| {
            let now = system_now();
            db.make_code(&person, now, now.plus_millis(3_600_000))
                .await
                .map(|c| c.code.to_string())
        })
    }
}

/// Loads the key file at `path`, making it (mode 0600) first if it does not exist.
fn load_or_make_key(path: &Path) -> io::Result<KeyStore> {
    if !path.exists() {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        tacit_issuer::keygen(path, system_now(), false).map_err(other)?;
    }
    KeyStore::load(path).map_err(other)
}

impl Drop for TestIssuer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
