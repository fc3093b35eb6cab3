//! HTTP clients of the signer's tools: fetching a key set for `tacit-verify` (with `ureq` over
//! rustls; plain http only to loopback) and a keep-alive load connection for `signer-bench`
//! (which talks only to the signer it started, and reads heads with the shared parser).

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use tacit_service::fetch::FetchFailure;
use wallet_core::{KeySet, PublishedKeys};

use crate::Error;

pub use tacit_service::http1::{Conn, Head, MAX_HEAD_BYTES, parse_head};

/// How long fetching a key set may take in all.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Fetches a signer's published keys (with its revoked receipts) with `ureq` (rustls): over `https://` from anywhere, over plain `http://`
/// only from a loopback address (a signer on this machine). Redirects are not followed, so an
/// https URL cannot be turned into a plain-http fetch; the body is read up to
/// `KeySet::MAX_BYTES`.
pub fn fetch_key_set(url: &str) -> Result<PublishedKeys, Error> {
    let fail = |what: &str| Error::Keys(format!("{what} ({url})"));
    let uri: ureq::http::Uri = url.parse().map_err(|_| fail("not a URL"))?;
    let host = uri
        .host()
        .map(|h| h.trim_start_matches('[').trim_end_matches(']'))
        .filter(|h| !h.is_empty())
        .ok_or_else(|| fail("the keys URL has no host"))?;
    match uri.scheme_str() {
        Some("https") => {}
        Some("http") => {
            let port = uri.port_u16().unwrap_or(80);
            let addrs: Vec<SocketAddr> = (host, port)
                .to_socket_addrs()
                .map_err(|_| fail("cannot resolve the host"))?
                .collect();
            if addrs.is_empty() || !addrs.iter().all(|a| a.ip().is_loopback()) {
                return Err(fail(
                    "plain http is only used for loopback addresses; use an https URL",
                ));
            }
        }
        _ => return Err(fail("the keys URL must start with https:// or http://")),
    }
    let body = tacit_service::fetch::get_json(url, FETCH_TIMEOUT, KeySet::MAX_BYTES).map_err(
        |e| match e {
            FetchFailure::Status(status) => fail(&format!("the server answered HTTP {status}")),
            FetchFailure::Timeout => fail("the server did not answer in time"),
            FetchFailure::Unreachable => fail("cannot connect"),
            FetchFailure::Unreadable => fail("cannot read the response"),
        },
    )?;
    PublishedKeys::parse(&body).map_err(|_| fail("the response is not a key set"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_other_schemes_and_hostless_urls() {
        for url in [
            "ftp://x/keys",
            "http://:80/",
            "file:///etc/passwd",
            "not a url",
        ] {
            assert!(fetch_key_set(url).is_err(), "{url}");
        }
    }

    #[test]
    fn tries_https_instead_of_refusing_it() {
        // Nothing listens on port 1: the fetch is attempted (over TLS) and cannot connect.
        let err = fetch_key_set("https://127.0.0.1:1/v1/keys").unwrap_err();
        assert!(err.to_string().contains("cannot connect"), "{err}");
    }

    #[test]
    fn refuses_plain_http_beyond_loopback() {
        let err = fetch_key_set("http://192.0.2.1:8787/v1/keys").unwrap_err();
        assert!(err.to_string().contains("only used for loopback"), "{err}");
    }
}
