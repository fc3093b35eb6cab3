//! `tacit-issuer [serve] | keygen [--force] | rotate | seed [--count 3] [--valid-for 30d] |
//! codes [--valid-for 30d]` —
//! see `tacit_issuer::Cli` for flags.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use tacit_issuer::{
    Cli, Command, Config, Error, fresh_codes, keygen, open_database, rotate_file, run_server, seed,
    system_now,
};

fn main() -> ExitCode {
    let cli = Cli::parse();
    tacit_service::logging::init(cli.config.log_level);
    let config = &cli.config;
    let result = match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => block_on(run_server(config)),
        Command::Keygen { force } => keygen(&config.key_file, system_now(), force).map(|kid| {
            println!(
                "wrote {} (mode 0600) with active key {kid}",
                config.key_file.display()
            );
        }),
        Command::Rotate => rotate_file(&config.key_file, system_now()).map(|(old, new)| {
            println!(
                "rotated {}: key {old} retired (still published), key {new} active; \
                 restart the issuer to sign with it",
                config.key_file.display()
            );
        }),
        Command::Seed { count, valid_for } => block_on(run_seed(config, Some(count), valid_for)),
        Command::Codes { valid_for } => block_on(run_seed(config, None, valid_for)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tacit-issuer: {error}");
            ExitCode::FAILURE
        }
    }
}

fn block_on<F: Future<Output = Result<(), Error>>>(work: F) -> Result<(), Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Config(format!("cannot start the runtime: {e}")))?
        .block_on(work)
}

async fn run_seed(config: &Config, count: Option<u16>, valid_for: Duration) -> Result<(), Error> {
    let db = open_database(config).await?;
    let millis = i64::try_from(valid_for.as_millis()).unwrap_or(i64::MAX);
    let people = match count {
        Some(count) => seed(&db, usize::from(count), millis, system_now()).await?,
        None => fresh_codes(&db, millis, system_now()).await?,
    };
    eprintln!(
        "{} ({}, {}): one one-time enrolment code per person; type it into the wallet's \
         \"Add a credential\" with issuer {}",
        config.name,
        config.attribute.as_str(),
        config.vct(),
        config.issuer_origin(),
    );
    for (person, code) in people {
        println!("{}\t{}", code, person.name);
    }
    db.store().close().await;
    Ok(())
}
