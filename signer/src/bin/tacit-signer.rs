//! `tacit-signer [serve] | keygen [--force] | rotate | enroll [--label L] [--valid-for 24h] |
//! installs | revoke-install ID` — see `signer::Cli` for flags.

use std::process::ExitCode;
use std::time::Duration;

use signer::{
    Config, Error, KeyStore, SignerCommand, enrol_code, open_database, run_server, system_now,
};
use tacit_service::cli;
use tacit_service::error::Operational;
use wallet_core::Timestamp;

fn main() -> ExitCode {
    cli::service_main::<SignerCommand, Config, KeyStore, Error>(
        "send the running signer SIGHUP (kill -HUP <pid>) to sign with it, or restart it",
        |config| cli::block_on(run_server(config)),
        |command, config| match command {
            SignerCommand::Enroll { label, valid_for } => {
                cli::block_on(enroll(config, &label, valid_for))
            }
            SignerCommand::Installs => cli::block_on(installs(config)),
            SignerCommand::RevokeInstall { install_id } => {
                cli::block_on(revoke(config, &install_id))
            }
        },
    )
}

fn when(at: Timestamp) -> String {
    cli::rfc3339(at).unwrap_or_else(|| at.millis().to_string())
}

async fn enroll(config: &Config, label: &str, valid_for: Duration) -> Result<(), Error> {
    let db = open_database(config).await?;
    let now = system_now();
    let code = enrol_code(&db, label, valid_for, now).await?;
    let until = tacit_protocol::request_auth::code_expiry(now, valid_for)
        .map_err(|e| Operational::Config(e.to_string()))?;
    println!("{code}");
    eprintln!(
        "one-time enrolment code{}, valid until {}: type it into the wallet's settings \
         (signer: {}); it works once",
        if label.is_empty() {
            String::new()
        } else {
            format!(" for {label:?}")
        },
        when(until),
        config.signer_origin(),
    );
    db.store().close().await;
    Ok(())
}

async fn installs(config: &Config) -> Result<(), Error> {
    let db = open_database(config).await?;
    let list = db.installs().await?;
    if list.is_empty() {
        eprintln!("no wallet installs are enrolled; make a code with `tacit-signer enroll`");
    } else {
        println!(
            "{:<43}  {:<24}  {:<24}  label",
            "install id", "enrolled", "revoked"
        );
        for install in list {
            println!(
                "{:<43}  {:<24}  {:<24}  {}",
                install.install_id,
                when(install.created_at),
                install.revoked_at.map_or_else(|| "-".to_owned(), when),
                install.label,
            );
        }
    }
    db.store().close().await;
    Ok(())
}

async fn revoke(config: &Config, install_id: &str) -> Result<(), Error> {
    let db = open_database(config).await?;
    let revoked = db.revoke_install(install_id.trim(), system_now()).await?;
    db.store().close().await;
    if revoked {
        println!(
            "revoked install {}; its next request is refused, and the receipts it holds are \
             listed as revoked at GET /v1/keys until they expire",
            install_id.trim()
        );
        Ok(())
    } else {
        Err(Operational::Config(
            "no enrolled, unrevoked install has that id; `tacit-signer installs` lists them"
                .to_owned(),
        )
        .into())
    }
}
