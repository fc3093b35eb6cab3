//! `tacit-issuer [serve] | keygen [--force] | rotate | seed [--count 3] [--valid-for 30d] |
//! codes [--valid-for 30d] | revoke <person>` —
//! see `tacit_issuer::Cli` for flags.

use std::process::ExitCode;
use std::time::Duration;

use tacit_issuer::{
    Config, Error, IssuerCommand, KeyStore, fresh_codes, oid4vci::credential_offer, open_database,
    revoke, run_server, seed, system_now,
};
use tacit_service::cli;

fn main() -> ExitCode {
    cli::service_main::<IssuerCommand, Config, KeyStore, Error>(
        "restart the issuer to sign with it",
        |config| cli::block_on(run_server(config)),
        |command, config| match command {
            IssuerCommand::Seed { count, valid_for } => {
                cli::block_on(run_seed(config, Some(count), valid_for))
            }
            IssuerCommand::Codes { valid_for } => cli::block_on(run_seed(config, None, valid_for)),
            IssuerCommand::Revoke { person } => cli::block_on(run_revoke(config, &person)),
        },
    )
}

async fn run_seed(config: &Config, count: Option<u16>, valid_for: Duration) -> Result<(), Error> {
    let db = open_database(config).await?;
    let millis = i64::try_from(valid_for.as_millis()).unwrap_or(i64::MAX);
    let people = match count {
        Some(count) => seed(&db, usize::from(count), millis, system_now()).await?,
        None => fresh_codes(&db, millis, system_now()).await?,
    };
    eprintln!(
        "{} ({}, {}): per person, a one-time enrolment code, their name, and their OpenID4VCI \
         credential offer from issuer {} (the code is its transaction code); paste the offer \
         into the wallet's \"Add a credential\" and type the code",
        config.name,
        config.attribute.as_str(),
        config.vct(),
        config.issuer_origin(),
    );
    let issuer = config.issuer_origin();
    for (person, enrolment) in people {
        let offer = credential_offer(&issuer, config.attribute, &enrolment);
        println!("{}\t{}\t{}", enrolment.code, person.name, offer.to_uri());
    }
    db.store().close().await;
    Ok(())
}

async fn run_revoke(config: &Config, who: &str) -> Result<(), Error> {
    let db = open_database(config).await?;
    let outcome = revoke(&db, who, system_now()).await;
    db.store().close().await;
    let (person, ended) = outcome?;
    println!(
        "revoked the refresh chain of {} ({}): {ended} refresh token(s) and code(s) still usable \
         now refused as `revoked`; `tacit-issuer codes` gives a new code to enrol again",
        person.name, person.person_id
    );
    Ok(())
}
