//! `tacit-relay [--listen 127.0.0.1:8795]`: carries paired bridges' and vaults' encrypted frames
//! (see the `tacit_relay` crate docs).

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Parser;

/// Carries a paired bridge's and vault's encrypted frames over WebSockets, in memory.
#[derive(Debug, Parser)]
#[command(name = "tacit-relay", version)]
struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8795", env = "TACIT_RELAY_LISTEN")]
    listen: SocketAddr,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tacit_service::logging::init(tracing::Level::INFO);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tacit-relay: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(async {
        let listener = tacit_service::serve::bind(
            cli.listen,
            "the relay carries only ciphertext, but put it behind TLS",
        )
        .await
        .map_err(|e| e.to_string())?;
        tracing::info!(listen = %cli.listen, "tacit-relay serving");
        tacit_relay::serve(listener, tacit_relay::RelayState::system())
            .await
            .map_err(|e| e.to_string())
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tacit-relay: {e}");
            ExitCode::FAILURE
        }
    }
}
