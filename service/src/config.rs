//! What the services' configurations share: where the database is when none is named, the
//! origin a service is reached at when none is configured, and how an origin flag is read.

use std::net::SocketAddr;
use std::path::Path;

use wallet_core::Origin;

/// The database URL: `database` (the `--database` flag or `DATABASE_URL`) when it is a URL, a
/// SQLite file when it is a path, else a SQLite file `default_file` beside the key file.
pub fn database_url(database: Option<&str>, key_file: &Path, default_file: &str) -> String {
    match database.map(str::trim) {
        Some(url) if url.contains("://") => url.to_owned(),
        Some(path) if !path.is_empty() => tacit_store::sqlite_url(Path::new(path)),
        _ => tacit_store::sqlite_url(&key_file.with_file_name(default_file)),
    }
}

/// The origin a service is reached at: the configured one, else `http://` and the listen
/// address.
pub fn origin_or_listen(origin: Option<&Origin>, listen: SocketAddr) -> String {
    origin.map_or_else(|| format!("http://{listen}"), |o| o.as_str().to_owned())
}

/// An origin flag's value (clap `value_parser`): surrounding white space ignored.
pub fn parse_origin(text: &str) -> Result<Origin, String> {
    Origin::parse(text.trim()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_url_is_kept_a_path_is_sqlite_and_nothing_is_beside_the_key() {
        let key = Path::new("/srv/tacit/x.key");
        assert_eq!(
            database_url(Some(" postgres://db/tacit "), key, "x.db"),
            "postgres://db/tacit"
        );
        assert_eq!(
            database_url(Some("/tmp/a b.db"), key, "x.db"),
            "sqlite:///tmp/a%20b.db"
        );
        assert_eq!(database_url(None, key, "x.db"), "sqlite:///srv/tacit/x.db");
        assert_eq!(
            database_url(Some("  "), key, "x.db"),
            "sqlite:///srv/tacit/x.db"
        );
    }

    #[test]
    fn the_origin_defaults_to_the_listen_address() {
        let listen = SocketAddr::from(([127, 0, 0, 1], 8787));
        assert_eq!(origin_or_listen(None, listen), "http://127.0.0.1:8787");
        let origin = parse_origin(" https://signer.example ").unwrap();
        assert_eq!(
            origin_or_listen(Some(&origin), listen),
            "https://signer.example"
        );
        assert!(parse_origin("https://signer.example/path").is_err());
    }
}
