//! Configuration by flags and environment variables, with loopback defaults.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
pub use tacit_service::config::{
    DEFAULT_HEADER_READ_TIMEOUT_SECS, DEFAULT_RATE_LIMIT_PER_MINUTE, DEFAULT_REQUEST_TIMEOUT_SECS,
};
use tacit_service::config::{LimitFlags, parse_origin};
use wallet_core::Origin;

/// Default listen address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";
/// Default key file, relative to the working directory.
pub const DEFAULT_KEY_FILE: &str = "tacit-signer.key";
/// Default wallet origin allowed to POST: the wallet page served on loopback and addressed as
/// `localhost` (WebAuthn, which confirms the person's acts, needs a domain, not an IP address).
pub const DEFAULT_WALLET_ORIGIN: &str = "http://localhost:8080";
/// The wallet origins allowed by default: [`DEFAULT_WALLET_ORIGIN`] and the same page by
/// address, `http://127.0.0.1:8080` (where the wallet confirms with the passphrase only).
pub const DEFAULT_WALLET_ORIGINS: [&str; 2] = [DEFAULT_WALLET_ORIGIN, "http://127.0.0.1:8080"];
/// The SQLite file used when neither `--database` nor `DATABASE_URL` is given, next to the key
/// file.
pub const DEFAULT_DATABASE_FILE: &str = "tacit-signer.db";

/// `tacit-signer`: signs Tacit session receipts.
pub type Cli = tacit_service::cli::Cli<SignerCommand, Config>;

/// `serve` (the default), `keygen`, `rotate`, or one of the [`SignerCommand`]s.
pub type Command = tacit_service::cli::Command<SignerCommand>;

/// The signer's own commands.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum SignerCommand {
    /// Print a one-time enrolment code for a wallet install (the person types it into the
    /// wallet's settings). Works while a server runs on the same database.
    Enroll {
        /// A note for `installs` (whose wallet this is); not secret, not shown to the wallet.
        #[arg(long, default_value = "")]
        label: String,
        /// How long the code stays valid: a whole number and s, m, h or d, at most 30 days.
        #[arg(long, default_value = "24h", value_parser = tacit_protocol::request_auth::parse_code_validity)]
        valid_for: Duration,
    },
    /// List enrolled wallet installs: id, label, enrolled, revoked.
    Installs,
    /// Revoke an enrolled install: its next request is refused.
    RevokeInstall {
        /// The install id, as `installs` lists it.
        install_id: String,
    },
}

/// The service's settings. Every flag also reads an environment variable.
#[derive(Debug, Clone, Args)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "TACIT_SIGNER_LISTEN", default_value = DEFAULT_LISTEN, global = true)]
    pub listen: SocketAddr,

    /// The key file written by `tacit-signer keygen`.
    #[arg(long, env = "TACIT_SIGNER_KEY_FILE", default_value = DEFAULT_KEY_FILE, global = true)]
    pub key_file: PathBuf,

    /// Wallet origin allowed to POST receipts (repeat, or comma-separate in the variable).
    #[arg(
        long = "allowed-origin",
        env = "TACIT_SIGNER_ALLOWED_ORIGINS",
        value_delimiter = ',',
        default_values = DEFAULT_WALLET_ORIGINS,
        value_parser = parse_origin,
        global = true
    )]
    pub allowed_origins: Vec<Origin>,

    // --rate-limit-per-minute, --request-timeout-secs, --header-read-timeout-secs
    #[command(flatten)]
    pub limit_flags: LimitFlags<SignerEnv>,

    /// The database: `sqlite://PATH`, `postgres://…`, or a file path. Default: a SQLite file
    /// `tacit-signer.db` next to the key file.
    #[arg(long, env = "DATABASE_URL", global = true)]
    pub database: Option<String>,

    /// The origin wallets reach this signer at, returned at enrolment. Default: `http://` and
    /// the listen address.
    #[arg(long, env = "TACIT_SIGNER_PUBLIC_ORIGIN", value_parser = parse_origin, global = true)]
    pub public_origin: Option<Origin>,

    /// Log level: error, warn, info, debug or trace.
    #[arg(long, env = "TACIT_SIGNER_LOG", default_value = "info", global = true)]
    pub log_level: tracing::Level,
}

tacit_service::limit_env!(
    /// The signer's environment variables for [`LimitFlags`].
    pub SignerEnv,
    "TACIT_SIGNER",
    "Requests per minute per client IP for `POST /v1/receipts`; 0 turns the limit off"
);

tacit_service::service_settings!(
    Config,
    "tacit-signer",
    "Signs Tacit session receipts (POST /v1/receipts) and publishes its keys (GET /v1/keys)",
    DEFAULT_DATABASE_FILE
);

impl Config {
    /// The origin returned at enrolment.
    pub fn signer_origin(&self) -> String {
        tacit_service::config::origin_or_listen(self.public_origin.as_ref(), self.listen)
    }
}

impl Default for Config {
    /// The same values as the flags' defaults, without reading the environment.
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            key_file: PathBuf::from(DEFAULT_KEY_FILE),
            allowed_origins: DEFAULT_WALLET_ORIGINS
                .iter()
                .filter_map(|o| Origin::parse(o).ok())
                .collect(),
            limit_flags: LimitFlags::default(),
            database: None,
            public_origin: None,
            log_level: tracing::Level::INFO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("tacit-signer").chain(args.iter().copied()))
    }

    #[test]
    fn flags_default_to_loopback_like_config_default() {
        // Only meaningful when no TACIT_SIGNER_* variable is set in the test environment.
        if std::env::vars().any(|(k, _)| k.starts_with("TACIT_SIGNER_")) {
            return;
        }
        let cli = parse(&[]).unwrap();
        let default = Config::default();
        assert!(cli.command.is_none());
        assert_eq!(cli.config.listen, default.listen);
        assert!(cli.config.listen.ip().is_loopback());
        assert_eq!(cli.config.key_file, default.key_file);
        assert_eq!(cli.config.allowed_origins, default.allowed_origins);
        assert_eq!(
            cli.config.limit_flags.rate_limit_per_minute,
            default.limit_flags.rate_limit_per_minute
        );
        assert_eq!(
            cli.config.limit_flags.request_timeout_secs,
            default.limit_flags.request_timeout_secs
        );
        assert_eq!(
            cli.config.limit_flags.header_read_timeout_secs,
            default.limit_flags.header_read_timeout_secs
        );
    }

    #[test]
    fn flags_go_before_or_after_the_subcommand() {
        let cli = parse(&[
            "--key-file",
            "/tmp/k",
            "rotate",
            "--allowed-origin",
            "https://a.example",
            "--allowed-origin",
            "https://b.example,https://c.example",
            "--rate-limit-per-minute",
            "0",
        ])
        .unwrap();
        assert!(matches!(
            cli.command,
            Some(Command::Keys(tacit_service::cli::KeyCommand::Rotate))
        ));
        assert_eq!(cli.config.key_file, PathBuf::from("/tmp/k"));
        let origins: Vec<&str> = cli
            .config
            .allowed_origins
            .iter()
            .map(Origin::as_str)
            .collect();
        assert_eq!(
            origins,
            [
                "https://a.example",
                "https://b.example",
                "https://c.example"
            ]
        );
        assert_eq!(cli.config.limit_flags.rate_limit_per_minute, 0);
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(parse(&["--allowed-origin", "https://a.example/path"]).is_err());
        assert!(parse(&["--listen", "not-an-address"]).is_err());
        assert!(parse(&["--request-timeout-secs", "0"]).is_err());
        assert!(parse(&["keygen", "--force", "--bogus"]).is_err());
        assert!(parse(&["enroll", "--valid-for", "24"]).is_err());
        assert!(parse(&["revoke-install"]).is_err());
        assert!(parse(&["--header-read-timeout-secs", "0"]).is_err());
    }

    #[test]
    fn enrolment_commands_parse() {
        let cli = parse(&["enroll", "--label", "Ana's laptop", "--valid-for", "2h"]).unwrap();
        match cli.command {
            Some(Command::Own(SignerCommand::Enroll { label, valid_for })) => {
                assert_eq!(label, "Ana's laptop");
                assert_eq!(valid_for, Duration::from_secs(7200));
            }
            other => panic!("{other:?}"),
        }
        let cli = parse(&["revoke-install", "abc", "--database", "/tmp/x.db"]).unwrap();
        assert!(
            matches!(cli.command, Some(Command::Own(SignerCommand::RevokeInstall { install_id })) if install_id == "abc")
        );
        assert_eq!(cli.config.database_url(), "sqlite:///tmp/x.db");
    }

    #[test]
    fn the_database_defaults_to_a_file_beside_the_key_file() {
        let config = Config {
            key_file: PathBuf::from("/srv/tacit/signer.key"),
            ..Config::default()
        };
        assert_eq!(config.database_url(), "sqlite:///srv/tacit/tacit-signer.db");
        let config = Config {
            database: Some("postgres://u@127.0.0.1:5432/signer".to_owned()),
            ..config
        };
        assert_eq!(config.database_url(), "postgres://u@127.0.0.1:5432/signer");
        assert_eq!(config.signer_origin(), "http://127.0.0.1:8787");
    }
}
