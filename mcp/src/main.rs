//! `tacit-mcp --devtools-port 9222 --origin http://localhost:8080`: see the crate docs and
//! `mcp/README.md`.

use clap::Parser;
use rmcp::ServiceExt;
use tacit_mcp::origin::{Scope, checked};

/// A stdio MCP server mirroring the WebMCP tools of the pages of the origins you name, open in a
/// Chromium started with `--remote-debugging-port=<port> --enable-blink-features=WebMCP`.
#[derive(Debug, Parser)]
#[command(name = "tacit-mcp", version)]
struct Args {
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

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let scopes = match scopes(&args) {
        Ok(scopes) => scopes,
        Err(e) => {
            eprintln!("tacit-mcp: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let browser = match tacit_mcp::browser::start(args.devtools_port, scopes) {
        Ok(browser) => browser,
        Err(e) => {
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
    let mut stopped = browser.stopped.clone();
    let door = tacit_mcp::server::Door::new(browser);
    runtime.block_on(async move {
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
            reason = stopped.wait_for(Option::is_some) => {
                let reason = reason.ok().and_then(|r| r.clone()).unwrap_or_default();
                eprintln!("tacit-mcp: the browser connection ended: {reason}");
                std::process::ExitCode::from(1)
            }
        };
        screen.abort();
        code
    })
}
