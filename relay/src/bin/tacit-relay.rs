//! `tacit-relay [--listen 127.0.0.1:8795] [--database postgres://…]`: carries paired bridges'
//! and vaults' encrypted frames (see the `tacit_relay` crate docs).

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Parser;

/// Carries a paired bridge's and vault's encrypted frames over WebSockets.
#[derive(Debug, Parser)]
#[command(
    name = "tacit-relay",
    version,
    long_about = "Carries a paired bridge's and vault's encrypted frames over WebSockets \
(GET /v1/relay/{route}/{bridge|vault}). It has no key: it sees only ciphertext, and its logs \
never carry a route, a frame or its length.

Without --database: one process, in memory. A frame for an offline side waits in its mailbox \
(64 frames, 1 MiB, 10 minutes) and is lost if the relay stops.

With --database postgres://...: several instances share routing through that PostgreSQL \
(LISTEN/NOTIFY on channel tacit_relay; tables relay_instances, relay_presence, relay_frames, \
migrated at start). A bridge may connect to one instance and its vault to another. Every frame \
is stored in relay_frames (its bytes as sent and an expiry, nothing else) and the instance \
holding the other side delivers it in order and deletes it; the notification carries only which \
side has news, never the frame. The mailbox keeps the same bounds. One connection per side \
across all instances (a second is refused 'busy'). The rate limit (1,200 frames a minute per \
side) is counted per instance. If the database drops, the instance closes its connections with \
'unavailable', refuses joins and frames with 'unavailable', and reconnects its listener, saying \
so in its log."
)]
struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8795", env = "TACIT_RELAY_LISTEN")]
    listen: SocketAddr,
    /// PostgreSQL shared with the relay's other instances (postgres://…). Without it the relay
    /// is one process, in memory.
    #[arg(long, env = "TACIT_RELAY_DATABASE", hide_env_values = true)]
    database: Option<String>,
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
        let state = match &cli.database {
            Some(url) => tacit_relay::RelayState::shared_system(url)
                .await
                .map_err(|e| e.to_string())?,
            None => tacit_relay::RelayState::system(),
        };
        let listener = tacit_service::serve::bind(
            cli.listen,
            "the relay carries only ciphertext, but put it behind TLS",
        )
        .await
        .map_err(|e| e.to_string())?;
        let shared = if cli.database.is_some() {
            "shared through PostgreSQL"
        } else {
            "one instance, in memory"
        };
        tracing::info!(listen = %cli.listen, mode = shared, "tacit-relay serving");
        tacit_relay::serve(listener, state)
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
