//! What the services' command lines share: `main` (parse, log, exit code), the exit code and
//! error line, a runtime for one
//! command, the `keygen`/`rotate` reports, and times printed as RFC 3339.

use std::fmt::Display;
use std::future::Future;
use std::path::Path;
use std::process::ExitCode;

pub use tracing::Level;
use wallet_core::Timestamp;

use crate::error::Operational;
use crate::keyfile::{self, KeyFileStore};

/// Success, or `<program>: <error>` on stderr and failure.
pub fn exit_code<E: Display>(program: &str, result: Result<(), E>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{program}: {error}");
            ExitCode::FAILURE
        }
    }
}

/// A service binary's `main`: parses the command line `C`, starts logging at the level
/// `log_level` reads from it, runs `run` and ends as [`exit_code`] says.
pub fn main<C: clap::Parser, E: Display>(
    program: &str,
    log_level: impl FnOnce(&C) -> tracing::Level,
    run: impl FnOnce(C) -> Result<(), E>,
) -> ExitCode {
    let cli = C::parse();
    crate::logging::init(log_level(&cli));
    exit_code(program, run(cli))
}

/// Runs `work` on a fresh multi-threaded runtime; a runtime that cannot start is an
/// [`Operational::Config`] error.
pub fn block_on<T, E: From<Operational>>(work: impl Future<Output = Result<T, E>>) -> Result<T, E> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Operational::Config(format!("cannot start the runtime: {e}")))?
        .block_on(work)
}

/// `keygen`: a new key file (replacing one only if `force`), then says what it wrote.
pub fn keygen_command<K: KeyFileStore>(
    path: &Path,
    now: Timestamp,
    force: bool,
) -> Result<(), K::Error>
where
    K::Id: Display,
{
    let id = keyfile::keygen::<K>(path, now, force)?;
    println!("wrote {} (mode 0600) with active key {id}", path.display());
    Ok(())
}

/// `rotate`: a fresh active key, the old one still published, then says so and what to do
/// next (`then`: how the running server starts signing with the new key).
pub fn rotate_command<K: KeyFileStore>(
    path: &Path,
    now: Timestamp,
    then: &str,
) -> Result<(), K::Error>
where
    K::Id: Display,
{
    let (old, new) = keyfile::rotate_file::<K>(path, now)?;
    println!(
        "rotated {}: key {old} retired (still published), key {new} active; {then}",
        path.display()
    );
    Ok(())
}

/// What a service's settings ([`Cli::config`]) tell its command line: the program's name and
/// about line, the log level and the key file. [`crate::service_settings!`] writes it.
pub trait ServiceSettings: clap::Args {
    /// The program, as `--help`, `--version` and error lines name it.
    const NAME: &'static str;
    /// The one-line description `--help` starts with.
    const ABOUT: &'static str;
    fn log_level(&self) -> Level;
    fn key_file(&self) -> &Path;
}

/// `service_settings!(Config, "tacit-signer", "about line", "tacit-signer.db")`: a service's
/// settings, with the fields `log_level`, `key_file`, `database` and `limit_flags` (a
/// [`crate::config::LimitFlags`]), as [`ServiceSettings`] for the program named, and their
/// `limits()` and `database_url()` (`--database`/`DATABASE_URL`, a path meaning a SQLite file,
/// else the named SQLite file beside the key file).
#[macro_export]
macro_rules! service_settings {
    ($config:ty, $name:literal, $about:literal, $database_file:expr) => {
        impl $crate::cli::ServiceSettings for $config {
            const NAME: &'static str = $name;
            const ABOUT: &'static str = $about;

            fn log_level(&self) -> $crate::cli::Level {
                self.log_level
            }

            fn key_file(&self) -> &::std::path::Path {
                &self.key_file
            }
        }

        impl $config {
            /// The rate limit and time limits these settings give.
            pub fn limits(&self) -> $crate::middleware::Limits {
                self.limit_flags.limits()
            }

            /// The database URL: `--database`/`DATABASE_URL` (a path means a SQLite file), else
            /// the service's SQLite file beside the key file.
            pub fn database_url(&self) -> ::std::string::String {
                $crate::config::database_url(
                    self.database.as_deref(),
                    &self.key_file,
                    $database_file,
                )
            }
        }
    };
}

/// A service's command line: a [`Command`] (`serve` when none is given) and its settings.
#[derive(Debug, clap::Parser)]
#[command(name = S::NAME, version, about = S::ABOUT)]
pub struct Cli<Own: clap::Subcommand, S: ServiceSettings> {
    #[command(subcommand)]
    pub command: Option<Command<Own>>,
    #[command(flatten)]
    pub config: S,
}

/// A service binary's `main`: parses its [`Cli`], starts logging at the settings' level, runs
/// `serve` (no command, or `serve`), a key-file command on the settings' key file
/// (`after_rotate` says how the running server starts signing with a new key), or `own`; ends
/// as [`exit_code`] says.
pub fn service_main<Own, S, K, E>(
    after_rotate: &str,
    serve: impl FnOnce(&S) -> Result<(), E>,
    own: impl FnOnce(Own, &S) -> Result<(), E>,
) -> ExitCode
where
    Own: clap::Subcommand,
    S: ServiceSettings,
    K: KeyFileStore,
    K::Id: Display,
    E: Display + From<K::Error>,
{
    main(
        S::NAME,
        |cli: &Cli<Own, S>| cli.config.log_level(),
        |Cli { command, config }| {
            Command::dispatch::<K, E>(
                command,
                config.key_file(),
                crate::serve::system_now(),
                after_rotate,
                || serve(&config),
                |command| own(command, &config),
            )
        },
    )
}

/// A service's command: `serve` (also when none is given), the key file's, or one of the
/// service's `Own` commands.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum Command<Own: clap::Subcommand> {
    /// Run the HTTP service (the default).
    Serve,
    #[command(flatten)]
    Keys(KeyCommand),
    #[command(flatten)]
    Own(Own),
}

impl<Own: clap::Subcommand> Command<Own> {
    /// Runs `command` (`serve` when `None`): `serve`, a key-file command on `key_file` at `now`
    /// (`after_rotate` says how the running server starts signing with a new key), or `own`.
    pub fn dispatch<K: KeyFileStore, E: From<K::Error>>(
        command: Option<Self>,
        key_file: &Path,
        now: Timestamp,
        after_rotate: &str,
        serve: impl FnOnce() -> Result<(), E>,
        own: impl FnOnce(Own) -> Result<(), E>,
    ) -> Result<(), E>
    where
        K::Id: Display,
    {
        match command.unwrap_or(Command::Serve) {
            Command::Serve => serve(),
            Command::Keys(keys) => Ok(keys.run::<K>(key_file, now, after_rotate)?),
            Command::Own(command) => own(command),
        }
    }
}

/// The key-file subcommands the signer and the issuer share, part of every [`Command`].
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum KeyCommand {
    /// Write a new key file (mode 0600) with a fresh signing key.
    Keygen {
        /// Replace an existing key file, discarding its keys.
        #[arg(long)]
        force: bool,
    },
    /// Make a new active key; the old public key stays published as retired, so what it signed
    /// keeps verifying. The command then says how the running server starts signing with it.
    Rotate,
}

impl KeyCommand {
    /// [`keygen_command`] or [`rotate_command`] on `key_file` at `now`; `after_rotate` says how
    /// the running server starts signing with the new key.
    pub fn run<K: KeyFileStore>(
        self,
        key_file: &Path,
        now: Timestamp,
        after_rotate: &str,
    ) -> Result<(), K::Error>
    where
        K::Id: Display,
    {
        match self {
            KeyCommand::Keygen { force } => keygen_command::<K>(key_file, now, force),
            KeyCommand::Rotate => rotate_command::<K>(key_file, now, after_rotate),
        }
    }
}

/// `at` as RFC 3339 in UTC, or `None` when it is out of range.
pub fn rfc3339(at: Timestamp) -> Option<String> {
    let nanos = i128::from(at.millis()) * 1_000_000;
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_in_utc_and_none_out_of_range() {
        assert_eq!(
            rfc3339(Timestamp::from_millis(1_777_627_800_000)).as_deref(),
            Some("2026-05-01T09:30:00Z")
        );
        assert_eq!(rfc3339(Timestamp::from_millis(i64::MAX)), None);
    }

    #[test]
    fn block_on_words_the_work_and_exit_code_follows_it() {
        assert!(matches!(block_on(async { Ok::<_, Operational>(7) }), Ok(7)));
        assert!(matches!(
            block_on(async { Err::<(), _>(Operational::Random) }),
            Err(Operational::Random)
        ));
        assert_eq!(exit_code::<String>("t", Ok(())), ExitCode::SUCCESS);
        assert_eq!(exit_code("t", Err("no")), ExitCode::FAILURE);
    }
}
