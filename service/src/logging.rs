//! One logging set-up for every service: `RUST_LOG` (an `EnvFilter` directive such as
//! `info,tacit_site=debug`) wins when it is set; otherwise the service's own `--log-level`.
//! Logs go to stderr, coloured only on a terminal.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

/// What filter [`init`] uses for a given `RUST_LOG` value and `--log-level`: the `RUST_LOG`
/// directive when it is set and valid, else the level; a `RUST_LOG` that does not parse is
/// reported in the returned warning and ignored.
pub fn filter(rust_log: Option<&str>, level: tracing::Level) -> (EnvFilter, Option<String>) {
    let fallback = || EnvFilter::default().add_directive(LevelFilter::from_level(level).into());
    match rust_log.map(str::trim).filter(|s| !s.is_empty()) {
        None => (fallback(), None),
        Some(directive) => match EnvFilter::try_new(directive) {
            Ok(filter) => (filter, None),
            Err(e) => (
                fallback(),
                Some(format!(
                    "RUST_LOG={directive:?} is not a valid filter ({e}); using --log-level {level}"
                )),
            ),
        },
    }
}

/// Installs the global subscriber (once, at the start of `main`).
pub fn init(level: tracing::Level) {
    let rust_log = std::env::var("RUST_LOG").ok();
    let (filter, warning) = filter(rust_log.as_deref(), level);
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(rust_log.is_some())
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
    if let Some(warning) = warning {
        tracing::warn!("{warning}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_log_wins_when_valid_and_falls_back_when_not() {
        let (f, warning) = filter(Some("warn,tacit_site=debug"), tracing::Level::INFO);
        assert_eq!(f.to_string(), "tacit_site=debug,warn");
        assert!(warning.is_none());
        let (f, warning) = filter(None, tracing::Level::DEBUG);
        assert_eq!(f.to_string(), "debug");
        assert!(warning.is_none());
        let (f, _) = filter(Some("  "), tracing::Level::ERROR);
        assert_eq!(f.to_string(), "error");
        let (f, warning) = filter(Some("tacit_site=loud"), tracing::Level::INFO);
        assert_eq!(f.to_string(), "info");
        assert!(warning.is_some_and(|w| w.contains("not a valid filter")));
    }
}
