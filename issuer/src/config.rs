//! Configuration by flags and environment variables, with loopback defaults. One process is one
//! issuer: its name, origin, the attribute it vouches for, its key file and its database.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use tacit_protocol::request_auth::parse_code_validity;
pub use tacit_service::config::{
    DEFAULT_HEADER_READ_TIMEOUT_SECS, DEFAULT_RATE_LIMIT_PER_MINUTE, DEFAULT_REQUEST_TIMEOUT_SECS,
};
use tacit_service::config::{LimitFlags, parse_origin};
use wallet_core::Origin;

use crate::credential::Attribute;

/// Default listen address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8791";
/// Default key file, relative to the working directory.
pub const DEFAULT_KEY_FILE: &str = "tacit-issuer.key";
/// The SQLite file used when neither `--database` nor `DATABASE_URL` is given, next to the key
/// file.
pub const DEFAULT_DATABASE_FILE: &str = "tacit-issuer.db";

/// `tacit-issuer`: issues SD-JWT VC credentials carrying predicates about one attribute.
pub type Cli = tacit_service::cli::Cli<IssuerCommand, Config>;

/// `serve` (the default), `keygen`, `rotate`, or one of the [`IssuerCommand`]s.
pub type Command = tacit_service::cli::Command<IssuerCommand>;

/// The issuer's own commands.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum IssuerCommand {
    /// Print a fresh one-time enrolment code for everyone on record (seeding the three demo
    /// people first if there is nobody yet).
    Codes {
        /// How long the codes stay valid: a whole number and s, m, h or d, at most 30 days.
        #[arg(long, default_value = "30d", value_parser = parse_code_validity)]
        valid_for: Duration,
    },
    /// End a person's refresh chain: every refresh token and enrolment code handed out to them
    /// so far is refused (`revoked`) from now on. A code made later (`codes`) enrols them anew.
    Revoke {
        /// The person: their id, or their name if nobody else has it.
        person: String,
    },
    /// Add demo people and print one one-time enrolment code each.
    Seed {
        /// How many people.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=100))]
        count: u16,
        /// How long the codes stay valid: a whole number and s, m, h or d, at most 30 days.
        #[arg(long, default_value = "30d", value_parser = parse_code_validity)]
        valid_for: Duration,
    },
}

/// The service's settings. Every flag also reads an environment variable.
#[derive(Debug, Clone, Args)]
pub struct Config {
    /// The issuer's name as shown to people ("Tax Office Nordstadt").
    #[arg(
        long,
        env = "TACIT_ISSUER_NAME",
        default_value = "Demo Issuer",
        global = true
    )]
    pub name: String,

    /// The issuer's origin: the `iss` of every credential and where wallets reach it. Default:
    /// `http://` and the listen address.
    #[arg(long, env = "TACIT_ISSUER_ORIGIN", value_parser = parse_origin, global = true)]
    pub origin: Option<Origin>,

    /// What this issuer vouches for.
    #[arg(
        long,
        env = "TACIT_ISSUER_ATTRIBUTE",
        value_enum,
        default_value = "income",
        global = true
    )]
    pub attribute: Attribute,

    /// The credential type (`vct`). Default: `https://tacit.example/vct/income` or
    /// `https://tacit.example/vct/age`.
    #[arg(long, env = "TACIT_ISSUER_VCT", global = true)]
    pub vct: Option<String>,

    /// Address to listen on.
    #[arg(long, env = "TACIT_ISSUER_LISTEN", default_value = DEFAULT_LISTEN, global = true)]
    pub listen: SocketAddr,

    /// The key file written by `tacit-issuer keygen`.
    #[arg(long, env = "TACIT_ISSUER_KEY_FILE", default_value = DEFAULT_KEY_FILE, global = true)]
    pub key_file: PathBuf,

    /// The database: `sqlite://PATH`, `postgres://…`, or a file path. Default: a SQLite file
    /// `tacit-issuer.db` next to the key file.
    #[arg(long, env = "DATABASE_URL", global = true)]
    pub database: Option<String>,

    // --rate-limit-per-minute, --request-timeout-secs, --header-read-timeout-secs
    #[command(flatten)]
    pub limit_flags: LimitFlags<IssuerEnv>,

    /// Log level: error, warn, info, debug or trace.
    #[arg(long, env = "TACIT_ISSUER_LOG", default_value = "info", global = true)]
    pub log_level: tracing::Level,
}

tacit_service::limit_env!(
    /// The issuer's environment variables for [`LimitFlags`].
    pub IssuerEnv,
    "TACIT_ISSUER",
    "Requests per minute per client IP for the nonce and credential routes; 0 turns it off"
);

tacit_service::service_settings!(
    Config,
    "tacit-issuer",
    "Issues SD-JWT VCs with income or age predicates (POST /v1/credentials) and publishes its keys (GET /.well-known/jwt-vc-issuer)",
    DEFAULT_DATABASE_FILE
);

impl Config {
    /// The issuer's origin (`iss`).
    pub fn issuer_origin(&self) -> String {
        tacit_service::config::origin_or_listen(self.origin.as_ref(), self.listen)
    }

    /// The credential type.
    pub fn vct(&self) -> String {
        self.vct
            .clone()
            .unwrap_or_else(|| self.attribute.default_vct().to_owned())
    }
}

impl Default for Config {
    /// The same values as the flags' defaults, without reading the environment.
    fn default() -> Self {
        Self {
            name: "Demo Issuer".to_owned(),
            origin: None,
            attribute: Attribute::Income,
            vct: None,
            listen: SocketAddr::from(([127, 0, 0, 1], 8791)),
            key_file: PathBuf::from(DEFAULT_KEY_FILE),
            database: None,
            limit_flags: LimitFlags::default(),
            log_level: tracing::Level::INFO,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use clap::Parser;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("tacit-issuer").chain(args.iter().copied()))
    }

    #[test]
    fn an_issuer_is_configured_by_flags() {
        let cli = parse(&[
            "--name",
            "Civil Registry",
            "--attribute",
            "birth_date",
            "--origin",
            "http://127.0.0.1:8792",
            "--database",
            "/tmp/x.db",
            "seed",
            "--count",
            "2",
        ])
        .unwrap();
        assert_eq!(cli.config.attribute, Attribute::BirthDate);
        assert_eq!(cli.config.vct(), "https://tacit.example/vct/age");
        assert_eq!(cli.config.issuer_origin(), "http://127.0.0.1:8792");
        assert_eq!(cli.config.database_url(), "sqlite:///tmp/x.db");
        match cli.command {
            Some(Command::Own(IssuerCommand::Seed { count, valid_for })) => {
                assert_eq!(count, 2);
                assert_eq!(valid_for, Duration::from_secs(30 * 86_400));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn revoke_takes_one_person() {
        match parse(&["revoke", "Ana Demo"]).unwrap().command {
            Some(Command::Own(IssuerCommand::Revoke { person })) => assert_eq!(person, "Ana Demo"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(parse(&["--attribute", "districts"]).is_err());
        assert!(parse(&["--origin", "http://a.example/path"]).is_err());
        assert!(parse(&["seed", "--count", "0"]).is_err());
        assert!(parse(&["seed", "--valid-for", "0s"]).is_err());
        assert!(parse(&["seed", "--valid-for", "31d"]).is_err());
        assert!(parse(&["codes", "--valid-for", "30d"]).is_ok());
        assert!(parse(&["revoke"]).is_err(), "revoke names a person");
        assert!(parse(&["revoke", "a", "b"]).is_err());
        assert!(parse(&["--request-timeout-secs", "0"]).is_err());
    }

    #[test]
    fn the_database_defaults_to_a_file_beside_the_key_file() {
        let config = Config {
            key_file: PathBuf::from("/srv/tacit/issuer.key"),
            ..Config::default()
        };
        assert_eq!(config.database_url(), "sqlite:///srv/tacit/tacit-issuer.db");
        assert_eq!(config.issuer_origin(), "http://127.0.0.1:8791");
        assert_eq!(config.vct(), "https://tacit.example/vct/income");
    }
}
