//! `tacit-site [serve] --config site.toml | keygen --config site.toml`
//!
//! `serve` (the default) runs the site server the configuration describes; `keygen` makes the
//! site's signing key (`<data_dir>/site.key`, mode 0600) and prints its id. `serve` makes the
//! key on first start too.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use std::net::SocketAddr;
    use std::path::PathBuf;
    use std::process::ExitCode;

    use clap::{Parser, Subcommand};
    use tacit_site::server::{Config, ServerError, SiteKey, run};

    /// A Tacit relying site: its page, its requirements and its server-side verdict.
    #[derive(Debug, Parser)]
    #[command(name = "tacit-site", version)]
    struct Cli {
        /// The site's configuration file (TOML).
        #[arg(long, short, env = "TACIT_SITE_CONFIG", global = true)]
        config: Option<PathBuf>,
        /// Listen here instead of the configured address.
        #[arg(long, global = true)]
        listen: Option<SocketAddr>,
        /// Serve the page from here instead of the configured static_dir.
        #[arg(long, global = true)]
        static_dir: Option<PathBuf>,
        /// Keep the key and the SQLite file here instead of the configured data_dir.
        #[arg(long, global = true)]
        data_dir: Option<PathBuf>,
        /// Log level: error, warn, info, debug, trace.
        #[arg(long, default_value = "info", global = true)]
        log_level: tracing::Level,
        #[command(subcommand)]
        command: Option<Command>,
    }

    #[derive(Debug, Subcommand)]
    enum Command {
        /// Serve the site (the default).
        Serve,
        /// Make the site's signing key and print its id.
        Keygen,
    }

    pub fn main() -> ExitCode {
        tacit_service::cli::main("tacit-site", |cli: &Cli| cli.log_level, execute)
    }

    fn execute(cli: Cli) -> Result<(), ServerError> {
        let Some(path) = cli.config else {
            return Err(ServerError::Config {
                path: "(none)".into(),
                reason: "pass --config site.toml (or set TACIT_SITE_CONFIG)".into(),
            });
        };
        let mut config = Config::load(&path)?;
        if let Some(listen) = cli.listen {
            config.listen = listen;
        }
        if let Some(dir) = cli.static_dir {
            config.static_dir = dir;
        }
        if let Some(dir) = cli.data_dir {
            config.data_dir = dir;
        }
        match cli.command.unwrap_or(Command::Serve) {
            Command::Serve => tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .map_err(|e| ServerError::io("start", std::path::Path::new("the runtime"), e))?
                .block_on(run(&config)),
            Command::Keygen => {
                let key_path = config.site_key_path();
                let key = SiteKey::make()?;
                key.write_new(&key_path)?;
                println!(
                    "wrote {} (mode 0600) with site key {}",
                    key_path.display(),
                    key.kid()
                );
                Ok(())
            }
        }
    }
}
