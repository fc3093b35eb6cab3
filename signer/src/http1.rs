//! HTTP clients of the signer's tools: fetching a key set for `tacit-verify` (with `ureq` over
//! rustls; plain http only to loopback) and a keep-alive load connection for `signer-bench`
//! (which talks only to the signer it started, and reads heads with the shared parser).

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wallet_core::KeySet;
use wallet_core::receipt::MAX_RECEIPT_BYTES;

use crate::Error;

pub use tacit_service::http1::{Head, MAX_HEAD_BYTES, parse_head};

/// How long fetching a key set may take in all.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Fetches a key set with `ureq` (rustls): over `https://` from anywhere, over plain `http://`
/// only from a loopback address (a signer on this machine). Redirects are not followed, so an
/// https URL cannot be turned into a plain-http fetch; the body is read up to
/// `MAX_RECEIPT_BYTES`.
pub fn fetch_key_set(url: &str) -> Result<KeySet, Error> {
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
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(FETCH_TIMEOUT))
        .max_redirects(0)
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .get(url)
        .header("accept", "application/json")
        .call()
        .map_err(|e| match e {
            ureq::Error::Timeout(_) => fail("the server did not answer in time"),
            _ => fail("cannot connect"),
        })?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(fail(&format!("the server answered HTTP {status}")));
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_RECEIPT_BYTES as u64)
        .read_to_vec()
        .map_err(|_| fail("cannot read the response"))?;
    KeySet::parse(&body).map_err(|_| fail("the response is not a key set"))
}

/// One keep-alive connection that sends a fixed request and reads answers with a length.
#[derive(Debug)]
pub struct Conn {
    stream: tokio::net::TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    pub async fn connect(addr: SocketAddr) -> std::io::Result<Self> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            buf: Vec::with_capacity(8 * 1024),
        })
    }

    /// Writes `request` (a complete HTTP/1.1 request) and returns the response's status once its
    /// body has been read in full.
    pub async fn round_trip(&mut self, request: &[u8]) -> std::io::Result<u16> {
        let invalid = |e: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_owned());
        self.stream.write_all(request).await?;
        let head = loop {
            if let Some(head) = parse_head(&self.buf).map_err(invalid)? {
                break head;
            }
            self.fill().await?;
        };
        let body_len = head
            .content_length
            .ok_or_else(|| invalid("response without content-length"))?;
        while self.buf.len() < head.len + body_len {
            self.fill().await?;
        }
        self.buf.drain(..head.len + body_len);
        Ok(head.status)
    }

    async fn fill(&mut self) -> std::io::Result<()> {
        let mut chunk = [0u8; 8 * 1024];
        let n = self.stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_head_with_length() {
        let raw =
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        let head = parse_head(raw).unwrap().unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(head.content_length, Some(2));
        assert_eq!(&raw[head.len..], b"{}");
        assert_eq!(parse_head(&raw[..20]), Ok(None));
        assert!(parse_head(b"SMTP hello\r\n\r\n").is_err());
    }

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
