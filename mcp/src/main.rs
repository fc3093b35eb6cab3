//! `tacit-mcp --vault-relay http://127.0.0.1:8795` (the person's wallet, paired directly) and/or
//! `tacit-mcp --devtools-port 9222 --origin http://localhost:8080` (pages' tools mirrored from a
//! Chromium): see the crate docs and `mcp/README.md`.

use clap::Parser;
use rmcp::ServiceExt;
use tacit_mcp::origin::{Scope, checked};

/// A stdio MCP server (stdout is MCP; the door talks to you on stderr). With --vault-relay it
/// pairs with your Tacit wallet itself and offers the wallet's tools as `wallet.<tool>`, with no
/// browser needed. With --origin / --page it mirrors the WebMCP tools of the pages of the
/// origins you name, open in a Chromium started with `--remote-debugging-port=<port>
/// --enable-blink-features=WebMCP`. Both may be given.
#[derive(Debug, Parser)]
#[command(name = "tacit-mcp", version)]
struct Args {
    /// Pair with your wallet (the vault) through the tacit-relay at this origin,
    /// `http://host:port` (the relay your wallet uses): the door prints a code on stderr to
    /// type into the wallet's Settings → Pair a bridge, then offers the wallet's tools as
    /// `wallet.<tool>`. No DevTools port is needed for them.
    #[arg(long, value_name = "RELAY_ORIGIN")]
    vault_relay: Option<String>,
    /// Where the pairing with your wallet is kept (mode 0600), so a restart reconnects without
    /// pairing again [default: $XDG_STATE_HOME/tacit/mcp-pairing.json, else
    /// ~/.local/state/tacit/mcp-pairing.json]. Delete it to pair again.
    #[arg(long, value_name = "PATH", requires = "vault_relay")]
    pairing_file: Option<std::path::PathBuf>,
    /// The Chromium's DevTools port (its `--remote-debugging-port`).
    #[arg(long, default_value_t = 9222)]
    devtools_port: u16,
    /// Mirror the tools of pages of this origin, `scheme://host[:port]` (repeatable). Each
    /// origin's tools are listed as `<host>_<port>.<tool>`. With no --origin and no --page the
    /// door refuses to start: it mirrors only what you name.
    #[arg(long = "origin", value_name = "ORIGIN")]
    origins: Vec<String>,
    /// Mirror only pages whose URL starts with this prefix, on exactly its origin (repeatable;
    /// the prefix's origin counts as named).
    #[arg(long = "page", value_name = "URL_PREFIX")]
    pages: Vec<String>,
}

fn scopes(args: &Args) -> Result<Vec<Scope>, tacit_mcp::origin::BadOrigin> {
    let mut scopes = Vec::new();
    for origin in &args.origins {
        scopes.push(Scope::origin(origin)?);
    }
    for page in &args.pages {
        scopes.push(Scope::page(page)?);
    }
    checked(scopes)
}

/// The relay and the pairing file, if the door is to pair with the vault.
fn vault_setup(args: &Args) -> Result<Option<(String, std::path::PathBuf)>, String> {
    let Some(relay) = &args.vault_relay else {
        return Ok(None);
    };
    let relay = tacit_mcp::vault::relay_origin(relay).map_err(|e| e.to_string())?;
    let file = match &args.pairing_file {
        Some(file) => file.clone(),
        None => tacit_mcp::vault::default_pairing_file().map_err(|e| e.to_string())?,
    };
    Ok(Some((relay, file)))
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let vault = match vault_setup(&args) {
        Ok(vault) => vault,
        Err(e) => {
            eprintln!("tacit-mcp: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let mirrored = !(args.origins.is_empty() && args.pages.is_empty());
    let scopes = if vault.is_some() && !mirrored {
        None
    } else {
        match scopes(&args) {
            Ok(scopes) => Some(scopes),
            Err(e) => {
                eprintln!("tacit-mcp: {e} (or pair with your wallet: --vault-relay <relay>)");
                return std::process::ExitCode::from(2);
            }
        }
    };
    let browser = match scopes.map(|s| tacit_mcp::browser::start(args.devtools_port, s)) {
        None => None,
        Some(Ok(browser)) => Some(browser),
        Some(Err(e)) => {
            eprintln!("tacit-mcp: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tacit-mcp: cannot start the runtime: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    let mut stopped = browser.as_ref().map(|b| b.stopped.clone());
    runtime.block_on(async move {
        let vault = vault.map(|(relay, file)| tacit_mcp::vault::start(relay, file));
        let door = tacit_mcp::server::Door::with(browser, vault);
        // stdin → the screen (answers unreadable requests) → rmcp; rmcp → stdout.
        // (Non-blocking pipes when the client spawned the door, so no read outlives the door.)
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        let (screened, from_screen) = tokio::io::duplex(64 * 1024);
        let screen = tokio::spawn(tacit_mcp::screen::run(
            tokio::io::BufReader::new(stdin),
            screened,
        ));
        let service = match door.serve((from_screen, stdout)).await {
            Ok(service) => service,
            Err(e) => {
                eprintln!("tacit-mcp: the MCP client did not initialise: {e}");
                return std::process::ExitCode::from(1);
            }
        };
        let code = tokio::select! {
            _ = service.waiting() => std::process::ExitCode::SUCCESS,
            reason = browser_stopped(stopped.as_mut()) => {
                eprintln!("tacit-mcp: the browser connection ended: {reason}");
                std::process::ExitCode::from(1)
            }
        };
        screen.abort();
        code
    })
}

/// Resolves with the reason when the browser worker stops; never without one.
async fn browser_stopped(
    stopped: Option<&mut tokio::sync::watch::Receiver<Option<String>>>,
) -> String {
    match stopped {
        Some(stopped) => stopped
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|r| r.clone())
            .unwrap_or_default(),
        None => std::future::pending().await,
    }
}
