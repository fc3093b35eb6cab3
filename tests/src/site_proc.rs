//! A relying site's server (`tacit-site`) in process for end-to-end tests: the real server with
//! the real configuration file (`examples/<name>/site.toml`), on a free loopback port, serving the
//! built page (`target/site/<name>`), with its nonce table in a SQLite file of its own (or the
//! PostgreSQL database a test names) and the test signer's keys URL.
//!
//! The issuers a site trusts for issuer-backed claims come from the test, never from the
//! file: [`TestSite::start`] trusts none (and then takes the person's word for every claim,
//! dropping the file's `require_proof`), [`TestSite::start_trusting`] trusts the given
//! [`Trust`]s (a [`crate::issuer_proc::TestIssuer`] by its metadata URL, or its keys pinned in a
//! file) and keeps the file's `require_proof`.
//!
//! [`TestSite::restart`] stops the server and starts a fresh one on the same port, data directory
//! and database, as an operator restarting the process would: everything the site remembers
//! must come back from the database.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tacit_site::server::{Config, RunningSite, spawn};

use crate::issuer_proc::TestIssuer;
use crate::{site_dir, workspace_root};

/// One issuer a site trusts: its origin, its name, and where its keys come from.
#[derive(Debug, Clone)]
pub struct Trust {
    /// The issuer's origin (the credentials' `iss`).
    pub issuer: String,
    /// Its name as the site shows it ("Tax Office Nordstadt").
    pub name: String,
    /// Its metadata URL (`/.well-known/jwt-vc-issuer`), fetched by the site.
    pub keys_url: Option<String>,
    /// Or its metadata JSON, written to a file the site pins.
    pub pinned_json: Option<String>,
    /// What the site trusts it for (`income` or `age`).
    pub vouches_for: wallet_core::Attribute,
    /// The credential type the site takes from it.
    pub vct: String,
}

impl Trust {
    /// Trust `issuer` under its own name, fetching its keys from its metadata URL.
    pub fn keys_url(issuer: &TestIssuer) -> Self {
        Self {
            issuer: issuer.origin(),
            name: issuer.name().to_owned(),
            keys_url: Some(issuer.keys_url()),
            pinned_json: None,
            vouches_for: vouches_for(issuer),
            vct: issuer.attribute().default_vct().to_owned(),
        }
    }

    /// Trust `issuer` under its own name with its current keys pinned in a file.
    pub fn pinned(issuer: &TestIssuer) -> Self {
        Self {
            issuer: issuer.origin(),
            name: issuer.name().to_owned(),
            keys_url: None,
            pinned_json: Some(issuer.metadata_json().to_owned()),
            vouches_for: vouches_for(issuer),
            vct: issuer.attribute().default_vct().to_owned(),
        }
    }
}

/// The wallet's attribute an issuer's credentials speak for.
fn vouches_for(issuer: &TestIssuer) -> wallet_core::Attribute {
    match issuer.attribute() {
        tacit_issuer::Attribute::Income => wallet_core::Attribute::Income,
        tacit_issuer::Attribute::BirthDate => wallet_core::Attribute::Age,
    }
}

/// See the module docs. Stops when dropped.
#[derive(Debug)]
pub struct TestSite {
    name: String,
    config: Config,
    runtime: tokio::runtime::Runtime,
    running: Option<RunningSite>,
    _data: tempfile::TempDir,
    /// The placeholder page of [`TestSite::start_api_only`], when the built one is missing.
    _page: Option<tempfile::TempDir>,
}

fn other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

impl TestSite {
    /// Starts site `name` (`housing` or `pharmacy`) trusting the signer whose keys are at
    /// `signer_keys_url`, with its nonces in SQLite.
    pub fn start(name: &str, signer_keys_url: &str) -> io::Result<Self> {
        Self::start_with(name, signer_keys_url, None)
    }

    /// As [`TestSite::start`], with the nonce table at `database_url` (`postgres://…`) if given.
    pub fn start_with(
        name: &str,
        signer_keys_url: &str,
        database_url: Option<&str>,
    ) -> io::Result<Self> {
        Self::start_full(name, signer_keys_url, database_url, &[])
    }

    /// As [`TestSite::start`], trusting the credentials of `issuers`.
    pub fn start_trusting(
        name: &str,
        signer_keys_url: &str,
        issuers: &[Trust],
    ) -> io::Result<Self> {
        Self::start_full(name, signer_keys_url, None, issuers)
    }

    /// As [`TestSite::start_with`], trusting the credentials of `issuers` (and no others: the
    /// `trusted_issuers` of `site.toml` are replaced).
    pub fn start_full(
        name: &str,
        signer_keys_url: &str,
        database_url: Option<&str>,
        issuers: &[Trust],
    ) -> io::Result<Self> {
        Self::start_configured(name, signer_keys_url, database_url, issuers, |_| {})
    }

    /// As [`TestSite::start`], for tests that speak only to the site's JSON API: when the page
    /// is not built (`cargo xtask build-web`), a placeholder page is served instead.
    pub fn start_api_only(name: &str, signer_keys_url: &str) -> io::Result<Self> {
        Self::start_configured(name, signer_keys_url, None, &[], |_| {})
            .or_else(|_| Self::start_placeholder(name, signer_keys_url))
    }

    fn start_placeholder(name: &str, signer_keys_url: &str) -> io::Result<Self> {
        let page = tempfile::tempdir()?;
        std::fs::write(
            page.path().join("index.html"),
            "<!doctype html><title>api</title>",
        )?;
        let dir = page.path().to_path_buf();
        let mut site =
            Self::start_configured_at(name, signer_keys_url, None, &[], Some(dir), |_| {})?;
        site._page = Some(page);
        Ok(site)
    }

    /// As [`TestSite::start`], issuing nonces that stay open `lifetime_ms` (the configuration's
    /// `nonce_lifetime_ms`; at least 2 s), for tests of what happens when a nonce lapses.
    pub fn start_with_nonce_lifetime(
        name: &str,
        signer_keys_url: &str,
        lifetime_ms: i64,
    ) -> io::Result<Self> {
        Self::start_configured(name, signer_keys_url, None, &[], |config| {
            config.nonce_lifetime_ms = lifetime_ms;
        })
    }

    fn start_configured(
        name: &str,
        signer_keys_url: &str,
        database_url: Option<&str>,
        issuers: &[Trust],
        configure: impl FnOnce(&mut Config),
    ) -> io::Result<Self> {
        Self::start_configured_at(
            name,
            signer_keys_url,
            database_url,
            issuers,
            None,
            configure,
        )
    }

    /// [`TestSite::start_configured`] serving the page in `static_dir` (default: the built
    /// site).
    fn start_configured_at(
        name: &str,
        signer_keys_url: &str,
        database_url: Option<&str>,
        issuers: &[Trust],
        static_dir: Option<PathBuf>,
        configure: impl FnOnce(&mut Config),
    ) -> io::Result<Self> {
        let path = workspace_root()
            .join("examples")
            .join(name)
            .join("site.toml");
        let mut config = Config::load(&path).map_err(other)?;
        let data = tempfile::tempdir()?;
        config.origin = None;
        config.listen = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        config.static_dir = match static_dir {
            Some(dir) => dir,
            None => site_dir(name).map_err(other)?,
        };
        config.data_dir = data.path().to_path_buf();
        config.database_url = database_url.map(str::to_owned);
        config.signer.keys_url = Some(signer_keys_url.to_owned());
        config.signer.pinned_keys = None;
        // The shipped sites take income (housing) and age (pharmacy) only with an issuer's
        // proof. A test site that trusts no issuer could never be satisfied, so it takes the
        // person's word for everything, as a site configured so would.
        if issuers.is_empty() {
            config.policy.require_proof.clear();
        }
        config.trusted_issuers = issuers
            .iter()
            .enumerate()
            .map(|(i, trust)| {
                let mut entry = serde_json::json!({
                    "issuer": trust.issuer,
                    "name": trust.name,
                    "vouches_for": trust.vouches_for,
                    "vct": trust.vct,
                });
                if let Some(url) = &trust.keys_url {
                    entry["keys_url"] = url.as_str().into();
                }
                if let Some(json) = &trust.pinned_json {
                    let file = data.path().join(format!("issuer-{i}.json"));
                    std::fs::write(&file, json)?;
                    entry["pinned_keys"] = file.display().to_string().into();
                }
                serde_json::from_value(entry).map_err(|e| {
                    other(format!(
                        "site {name}: a trusted issuer the config refuses: {e}"
                    ))
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        configure(&mut config);
        config.check().map_err(other)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let mut site = Self {
            name: name.to_owned(),
            config,
            runtime,
            running: None,
            _data: data,
            _page: None,
        };
        site.spawn()?;
        crate::server::allow_connect(&site.origin());
        Ok(site)
    }

    fn spawn(&mut self) -> io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match self.runtime.block_on(spawn(&self.config)) {
                Ok(running) => {
                    // A restart keeps the port, so the origin (and every receipt's audience)
                    // stays the same.
                    self.config.listen = running.addr();
                    self.running = Some(running);
                    return Ok(());
                }
                Err(e) if Instant::now() < deadline && e.to_string().contains("listen") => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => return Err(other(format!("site {}: {e}", self.name))),
            }
        }
    }

    /// `http://127.0.0.1:<port>`: the site's origin and the receipts' audience.
    pub fn origin(&self) -> String {
        format!("http://{}", self.config.listen)
    }

    /// `<origin><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin())
    }

    /// The data directory (`nonces.db`, `site.key`).
    pub fn data_dir(&self) -> PathBuf {
        self.config.data_dir.clone()
    }

    /// Stops the server (finishing open requests) and starts a new one on the same port, data
    /// directory and database.
    pub fn restart(&mut self) -> io::Result<()> {
        if let Some(running) = self.running.take() {
            self.runtime.block_on(running.shutdown())?;
        }
        self.spawn()
    }
}

impl Drop for TestSite {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            let _ = self.runtime.block_on(running.shutdown());
        }
    }
}
