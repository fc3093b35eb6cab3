//! What the services' configurations share: where the database is when none is named, the
//! origin a service is reached at when none is configured, how an origin flag is read, and the
//! rate-limit and time-limit flags ([`LimitFlags`]).

use std::marker::PhantomData;
use std::net::SocketAddr;
use std::path::Path;

use wallet_core::Origin;

use crate::middleware::Limits;

/// Default requests per minute per client on a service's rate-limited routes.
pub const DEFAULT_RATE_LIMIT_PER_MINUTE: u32 = 60;
/// Default time a request may take, body included.
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 10;
/// Default time a client has to send a complete request head.
pub const DEFAULT_HEADER_READ_TIMEOUT_SECS: u64 = 5;

/// What makes [`LimitFlags`] one service's flags: the environment variables they also read, and
/// the rate limit's help, which names the routes it applies to.
pub trait LimitEnv {
    /// The help of `--rate-limit-per-minute`.
    const RATE_LIMIT_HELP: &'static str;
    /// The variable `--rate-limit-per-minute` reads.
    const RATE_LIMIT_ENV: &'static str;
    /// The variable `--request-timeout-secs` reads.
    const REQUEST_TIMEOUT_ENV: &'static str;
    /// The variable `--header-read-timeout-secs` reads.
    const HEADER_READ_TIMEOUT_ENV: &'static str;
}

/// Declares `$name`, the [`LimitEnv`] whose variables are `<$prefix>_RATE_LIMIT_PER_MINUTE`,
/// `<$prefix>_REQUEST_TIMEOUT_SECS` and `<$prefix>_HEADER_READ_TIMEOUT_SECS`, with `$help` as
/// the rate limit's help.
#[macro_export]
macro_rules! limit_env {
    ($(#[$meta:meta])* $vis:vis $name:ident, $prefix:literal, $help:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        $vis struct $name;

        impl $crate::config::LimitEnv for $name {
            const RATE_LIMIT_HELP: &'static str = $help;
            const RATE_LIMIT_ENV: &'static str = concat!($prefix, "_RATE_LIMIT_PER_MINUTE");
            const REQUEST_TIMEOUT_ENV: &'static str = concat!($prefix, "_REQUEST_TIMEOUT_SECS");
            const HEADER_READ_TIMEOUT_ENV: &'static str =
                concat!($prefix, "_HEADER_READ_TIMEOUT_SECS");
        }
    };
}

/// The rate limit and the time limits as flags, each also read from the variable `E` names;
/// flattened (`#[command(flatten)]`) into the signer's and the issuer's settings.
#[derive(Debug, Clone, clap::Args)]
pub struct LimitFlags<E: LimitEnv + Send + Sync + 'static> {
    #[arg(
        long,
        env = E::RATE_LIMIT_ENV,
        help = E::RATE_LIMIT_HELP,
        default_value_t = DEFAULT_RATE_LIMIT_PER_MINUTE,
        global = true
    )]
    pub rate_limit_per_minute: u32,

    /// Seconds a request may take, reading its body included.
    #[arg(
        long,
        env = E::REQUEST_TIMEOUT_ENV,
        default_value_t = DEFAULT_REQUEST_TIMEOUT_SECS,
        value_parser = clap::value_parser!(u64).range(1..=300),
        global = true
    )]
    pub request_timeout_secs: u64,

    /// Seconds a client has to send a complete request head; a half-sent head is dropped.
    #[arg(
        long,
        env = E::HEADER_READ_TIMEOUT_ENV,
        default_value_t = DEFAULT_HEADER_READ_TIMEOUT_SECS,
        value_parser = clap::value_parser!(u64).range(1..=60),
        global = true
    )]
    pub header_read_timeout_secs: u64,

    #[arg(skip)]
    env: PhantomData<E>,
}

impl<E: LimitEnv + Send + Sync + 'static> LimitFlags<E> {
    /// The rate limit and time limits these flags give.
    pub fn limits(&self) -> Limits {
        Limits::new(
            self.rate_limit_per_minute,
            self.request_timeout_secs,
            self.header_read_timeout_secs,
        )
    }
}

impl<E: LimitEnv + Send + Sync + 'static> Default for LimitFlags<E> {
    /// The same values as the flags' defaults, without reading the environment.
    fn default() -> Self {
        Self {
            rate_limit_per_minute: DEFAULT_RATE_LIMIT_PER_MINUTE,
            request_timeout_secs: DEFAULT_REQUEST_TIMEOUT_SECS,
            header_read_timeout_secs: DEFAULT_HEADER_READ_TIMEOUT_SECS,
            env: PhantomData,
        }
    }
}

/// The database URL: `database` (the `--database` flag or `DATABASE_URL`) when it is a URL, a
/// SQLite file when it is a path, else a SQLite file `default_file` beside the key file.
pub fn database_url(database: Option<&str>, key_file: &Path, default_file: &str) -> String {
    match database.map(str::trim) {
        Some(url) if url.contains("://") => url.to_owned(),
        Some(path) if !path.is_empty() => tacit_store::sqlite_url(Path::new(path)),
        _ => tacit_store::sqlite_url(&key_file.with_file_name(default_file)),
    }
}

/// The origin a service is reached at: the configured one, else `http://` and the listen
/// address.
pub fn origin_or_listen(origin: Option<&Origin>, listen: SocketAddr) -> String {
    origin.map_or_else(|| format!("http://{listen}"), |o| o.as_str().to_owned())
}

/// An origin flag's value (clap `value_parser`): surrounding white space ignored.
pub fn parse_origin(text: &str) -> Result<Origin, String> {
    Origin::parse(text.trim()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use clap::Parser;

    use super::*;

    crate::limit_env!(
        Test,
        "TACIT_CONFIG_TEST",
        "Requests per minute per client IP"
    );

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        limits: LimitFlags<Test>,
    }

    #[test]
    fn limit_flags_default_like_default_and_refuse_out_of_range() {
        let parse =
            |args: &[&str]| Cli::try_parse_from(std::iter::once("t").chain(args.iter().copied()));
        let flags = parse(&[]).unwrap().limits;
        let default = LimitFlags::<Test>::default();
        assert_eq!(flags.rate_limit_per_minute, default.rate_limit_per_minute);
        assert_eq!(flags.request_timeout_secs, default.request_timeout_secs);
        assert_eq!(
            flags.header_read_timeout_secs,
            default.header_read_timeout_secs
        );
        let flags = parse(&[
            "--rate-limit-per-minute",
            "0",
            "--request-timeout-secs",
            "300",
        ])
        .unwrap()
        .limits;
        assert_eq!(
            (flags.rate_limit_per_minute, flags.request_timeout_secs),
            (0, 300)
        );
        assert!(parse(&["--request-timeout-secs", "0"]).is_err());
        assert!(parse(&["--request-timeout-secs", "301"]).is_err());
        assert!(parse(&["--header-read-timeout-secs", "61"]).is_err());
        let help = Cli::try_parse_from(["t", "--help"])
            .unwrap_err()
            .to_string();
        assert!(help.contains("Requests per minute per client IP"), "{help}");
        assert!(
            help.contains("TACIT_CONFIG_TEST_RATE_LIMIT_PER_MINUTE"),
            "{help}"
        );
    }

    #[test]
    fn a_url_is_kept_a_path_is_sqlite_and_nothing_is_beside_the_key() {
        let key = Path::new("/srv/tacit/x.key");
        assert_eq!(
            database_url(Some(" postgres://db/tacit "), key, "x.db"),
            "postgres://db/tacit"
        );
        assert_eq!(
            database_url(Some("/tmp/a b.db"), key, "x.db"),
            "sqlite:///tmp/a%20b.db"
        );
        assert_eq!(database_url(None, key, "x.db"), "sqlite:///srv/tacit/x.db");
        assert_eq!(
            database_url(Some("  "), key, "x.db"),
            "sqlite:///srv/tacit/x.db"
        );
    }

    #[test]
    fn the_origin_defaults_to_the_listen_address() {
        let listen = SocketAddr::from(([127, 0, 0, 1], 8787));
        assert_eq!(origin_or_listen(None, listen), "http://127.0.0.1:8787");
        let origin = parse_origin(" https://signer.example ").unwrap();
        assert_eq!(
            origin_or_listen(Some(&origin), listen),
            "https://signer.example"
        );
        assert!(parse_origin("https://signer.example/path").is_err());
    }
}
