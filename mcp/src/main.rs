//! `tacit-mcp --devtools-port 9222`: see the crate docs and the README ("The MCP door").

use clap::Parser;
use rmcp::ServiceExt;

/// A stdio MCP server mirroring the WebMCP tools of the pages open in a Chromium started with
/// `--remote-debugging-port=<port> --enable-blink-features=WebMCP`.
#[derive(Debug, Parser)]
#[command(name = "tacit-mcp", version)]
struct Args {
    /// The Chromium's DevTools port (its `--remote-debugging-port`).
    #[arg(long, default_value_t = 9222)]
    devtools_port: u16,
    /// Mirror only pages whose URL starts with this (repeatable; default: every page).
    #[arg(long = "page", value_name = "URL_PREFIX")]
    pages: Vec<String>,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let browser = match tacit_mcp::browser::start(args.devtools_port, args.pages) {
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
        let service = match door.serve(rmcp::transport::stdio()).await {
            Ok(service) => service,
            Err(e) => {
                eprintln!("tacit-mcp: the MCP client did not initialise: {e}");
                return std::process::ExitCode::from(1);
            }
        };
        tokio::select! {
            _ = service.waiting() => std::process::ExitCode::SUCCESS,
            reason = stopped.wait_for(Option::is_some) => {
                let reason = reason.ok().and_then(|r| r.clone()).unwrap_or_default();
                eprintln!("tacit-mcp: the browser connection ended: {reason}");
                std::process::ExitCode::from(1)
            }
        }
    })
}
