//! `tacit-signer [serve] | keygen [--force] | rotate` — see `signer::Cli` for flags.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use signer::{Cli, Command, Error, keygen, rotate_file, run_server, system_now};

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_max_level(cli.config.log_level)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
    let result = match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(&cli.config),
        Command::Keygen { force } => keygen(&cli.config.key_file, system_now(), force).map(|id| {
            println!(
                "wrote {} (mode 0600) with active key {id}",
                cli.config.key_file.display()
            );
        }),
        Command::Rotate => rotate_file(&cli.config.key_file, system_now()).map(|(old, new)| {
            println!(
                "rotated {}: key {old} retired (still published), key {new} active; \
                 restart the signer to sign with it",
                cli.config.key_file.display()
            );
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tacit-signer: {error}");
            ExitCode::FAILURE
        }
    }
}

fn serve(config: &signer::Config) -> Result<(), Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Config(format!("cannot start the runtime: {e}")))?
        .block_on(run_server(config))
}
