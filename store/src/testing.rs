//! A throw-away PostgreSQL cluster for tests: `initdb` + `pg_ctl` in a temp dir, listening on a
//! free loopback port, stopped and deleted on drop. Never a mock, never a skip: without
//! PostgreSQL, [`PgCluster::start`] fails with the install command.
//!
//! A watchdog process (a shell in its own process group, reading a pipe the test process holds)
//! stops the server and deletes its directory when the test process ends for any reason, so a
//! cluster kept in a `static` (never dropped) or a test killed mid-way leaves nothing running:
//!
//! ```no_run
//! use std::sync::OnceLock;
//! use tacit_store::testing::PgCluster;
//!
//! fn cluster() -> &'static PgCluster {
//!     static CLUSTER: OnceLock<PgCluster> = OnceLock::new();
//!     CLUSTER.get_or_init(|| PgCluster::start().unwrap_or_else(|e| panic!("{e}")))
//! }
//! ```

use std::ffi::OsStr;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use crate::{Db, StoreError};

/// How many free ports are tried before giving up (another process may take one first).
const PORT_ATTEMPTS: usize = 5;

/// The account PostgreSQL runs as when the tests run as root (it refuses to run as root).
const POSTGRES_USER: &str = "postgres";

/// A running PostgreSQL cluster owned by the test; dropping it stops the server and deletes it.
#[derive(Debug)]
pub struct PgCluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    as_postgres: bool,
    watchdog: Option<Child>,
}

/// The watchdog: waits for end of input (the test process closed the pipe or died), then stops
/// the server and removes the directory. Arguments: runuser-or-not, pg_ctl, data dir, temp dir.
const WATCHDOG: &str = r#"cat >/dev/null
if [ "$1" = root ]; then runuser -u postgres -- "$2" stop -m immediate -w -D "$3"
else "$2" stop -m immediate -w -D "$3"; fi >/dev/null 2>&1
rm -rf "$4""#;

/// The directory holding both `initdb` and `pg_ctl`: the first in `PATH`, else the newest
/// `/usr/lib/postgresql/<major>/bin`.
fn find_bin_dir() -> Option<PathBuf> {
    find_bin_dir_in(std::env::var_os("PATH"), Path::new("/usr/lib/postgresql"))
}

fn find_bin_dir_in(path: Option<std::ffi::OsString>, lib: &Path) -> Option<PathBuf> {
    let has_tools = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    if let Some(dir) = path.and_then(|p| std::env::split_paths(&p).find(|d| has_tools(d))) {
        return Some(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(lib)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            has_tools(&bin).then_some((major, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.trim_ascii() == b"0")
}

fn free_port() -> Result<u16, StoreError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| StoreError::Cluster(format!("no free loopback port: {e}")))
}

fn describe(what: &str, output: &Output) -> StoreError {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    StoreError::Cluster(format!(
        "{what} failed ({}): {} {}",
        output.status,
        stderr.trim(),
        stdout.trim()
    ))
}

impl PgCluster {
    /// Initialises and starts a cluster (trust authentication, UTF8, superuser `postgres`) on a
    /// free port of 127.0.0.1, with its socket inside its own temp dir. Blocking (a second or two).
    ///
    /// When running as root, the tools run as the `postgres` user (`runuser`), which then owns
    /// the temp dir. Without PostgreSQL: [`StoreError::PostgresMissing`], whose message is the
    /// install command.
    pub fn start() -> Result<PgCluster, StoreError> {
        let bin = find_bin_dir().ok_or(StoreError::PostgresMissing)?;
        let as_postgres = is_root();
        let dir = tempfile::Builder::new()
            .prefix("tacit-pg-")
            .tempdir()
            .map_err(|e| StoreError::Cluster(format!("temp dir: {e}")))?;
        let mut cluster = PgCluster {
            bin,
            dir,
            port: 0,
            as_postgres,
            watchdog: None,
        };
        if as_postgres {
            let out = Command::new("chown")
                .arg(format!("{POSTGRES_USER}:"))
                .arg(cluster.dir.path())
                .output()
                .map_err(|e| StoreError::Cluster(format!("chown: {e}")))?;
            if !out.status.success() {
                return Err(describe("chown of the temp dir to postgres", &out));
            }
        }
        let data = cluster.data_dir();
        let out = cluster.tool(
            "initdb",
            [
                OsStr::new("-D"),
                data.as_os_str(),
                OsStr::new("-U"),
                OsStr::new("postgres"),
                OsStr::new("-A"),
                OsStr::new("trust"),
                OsStr::new("-E"),
                OsStr::new("UTF8"),
                OsStr::new("--no-locale"),
                OsStr::new("--no-sync"),
            ],
        )?;
        if !out.status.success() {
            return Err(describe("initdb", &out));
        }
        let mut last = None;
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port()?;
            match cluster.pg_ctl_start(port) {
                Ok(()) => {
                    cluster.port = port;
                    cluster.watchdog = Some(cluster.spawn_watchdog()?);
                    return Ok(cluster);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| StoreError::Cluster("pg_ctl start failed".to_owned())))
    }

    fn spawn_watchdog(&self) -> Result<Child, StoreError> {
        Command::new("sh")
            .arg("-c")
            .arg(WATCHDOG)
            .arg("tacit-pg-watchdog")
            .arg(if self.as_postgres { "root" } else { "user" })
            .arg(self.bin.join("pg_ctl"))
            .arg(self.data_dir())
            .arg(self.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .current_dir("/")
            // Its own process group: a Ctrl-C to the test does not kill it before it cleans up.
            .process_group(0)
            .spawn()
            .map_err(|e| StoreError::Cluster(format!("could not start the watchdog: {e}")))
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs one of the cluster's tools, as `postgres` when we are root.
    fn tool<I, S>(&self, name: &str, args: I) -> Result<Output, StoreError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let program = self.bin.join(name);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", POSTGRES_USER, "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        command
            .args(args)
            .current_dir(self.dir.path())
            .env_remove("PGDATA")
            .env_remove("PGPORT")
            .env_remove("PGHOST")
            .output()
            .map_err(|e| StoreError::Cluster(format!("could not run {name}: {e}")))
    }

    fn pg_ctl_start(&self, port: u16) -> Result<(), StoreError> {
        let data = self.data_dir();
        let log = self.dir.path().join("postgres.log");
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -k {} -c max_connections=200",
            self.dir.path().display()
        );
        let out = self.tool(
            "pg_ctl",
            [
                OsStr::new("start"),
                OsStr::new("-w"),
                OsStr::new("-t"),
                OsStr::new("60"),
                OsStr::new("-D"),
                data.as_os_str(),
                OsStr::new("-l"),
                log.as_os_str(),
                OsStr::new("-o"),
                OsStr::new(&options),
            ],
        )?;
        if out.status.success() {
            return Ok(());
        }
        let tail = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = tail.lines().rev().take(5).collect();
        Err(StoreError::Cluster(format!(
            "pg_ctl start on port {port} failed ({}); log: {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        )))
    }

    /// The temp dir holding the data directory, the socket and the server log.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `postgres://postgres@127.0.0.1:<port>/postgres` (the default database).
    pub fn url(&self) -> String {
        self.url_for("postgres")
    }

    fn url_for(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Creates database `name` (1-63 characters of `a-z`, `0-9`, `_`, not starting with a
    /// digit) and returns its URL. One database per test keeps tests on one cluster apart.
    pub async fn create_database(&self, name: &str) -> Result<String, StoreError> {
        let valid = !name.is_empty()
            && name.len() <= 63
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !valid {
            return Err(StoreError::Cluster(
                "database names are 1-63 characters of a-z, 0-9 and _, not starting with a digit"
                    .to_owned(),
            ));
        }
        let admin = Db::open(&self.url()).await?;
        // The name was checked above; identifiers cannot be bound as parameters.
        let sql = format!("CREATE DATABASE {name}");
        let result = sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(admin.pool())
            .await;
        admin.close().await;
        result?;
        Ok(self.url_for(name))
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        if let Some(mut watchdog) = self.watchdog.take() {
            // Closing its input makes the watchdog stop the server and remove the directory.
            drop(watchdog.stdin.take());
            let _ = watchdog.wait();
            return;
        }
        // Start failed before the watchdog ran: stop whatever may have started (best effort;
        // the temp dir is removed after this either way).
        let data = self.data_dir();
        let _ = self.tool(
            "pg_ctl",
            [
                OsStr::new("stop"),
                OsStr::new("-m"),
                OsStr::new("immediate"),
                OsStr::new("-w"),
                OsStr::new("-D"),
                data.as_os_str(),
            ],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_postgres_names_the_install_command() {
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(
            find_bin_dir_in(Some(empty.path().into()), &empty.path().join("none")),
            None
        );
        let message = StoreError::PostgresMissing.to_string();
        assert!(
            message.ends_with("apt-get install -y postgresql"),
            "{message}"
        );
    }

    #[test]
    fn the_newest_installed_major_wins_when_path_has_none() {
        let root = tempfile::tempdir().unwrap();
        for major in ["9", "15", "17", "notaversion"] {
            let bin = root.path().join(major).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            std::fs::write(bin.join("initdb"), "").unwrap();
            std::fs::write(bin.join("pg_ctl"), "").unwrap();
        }
        // 18 has only initdb: not a candidate.
        let partial = root.path().join("18/bin");
        std::fs::create_dir_all(&partial).unwrap();
        std::fs::write(partial.join("initdb"), "").unwrap();
        assert_eq!(
            find_bin_dir_in(None, root.path()),
            Some(root.path().join("17/bin"))
        );
        // PATH comes first.
        let on_path = root.path().join("9/bin");
        assert_eq!(
            find_bin_dir_in(Some(on_path.clone().into()), root.path()),
            Some(on_path)
        );
    }
}
