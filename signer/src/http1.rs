//! A minimal HTTP/1.1 client: enough to fetch a key set from a loopback signer (blocking, for
//! `tacit-verify`) and to drive keep-alive load (async, for `signer-bench`). No TLS, no
//! redirects, no proxies. Anything else should use a real client.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wallet_core::KeySet;
use wallet_core::receipt::MAX_RECEIPT_BYTES;

use crate::Error;

pub use tacit_service::http1::{Head, MAX_HEAD_BYTES, parse_head};

/// Decodes a complete chunked body; `Ok(None)` means more bytes are needed. Returns the body
/// and how many bytes of `buf` it used.
pub fn decode_chunked(buf: &[u8]) -> Result<Option<(Vec<u8>, usize)>, &'static str> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let Some(line_end) = buf[at..].windows(2).position(|w| w == b"\r\n") else {
            return Ok(None);
        };
        let size_text = core::str::from_utf8(&buf[at..at + line_end]).map_err(|_| "bad chunk")?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| "bad chunk size")?;
        at += line_end + 2;
        if size == 0 {
            // No trailers are expected: the last chunk is followed by one blank line.
            return Ok((buf.len() >= at + 2).then(|| (body, at + 2)));
        }
        if body.len() + size > MAX_RECEIPT_BYTES {
            return Err("response body too large");
        }
        if buf.len() < at + size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&buf[at..at + size]);
        at += size + 2;
    }
}

/// Splits `http://host[:port][/path]`. Refuses `https://` (no TLS here) and anything else.
pub fn split_http_url(url: &str) -> Result<(String, u16, String), Error> {
    if url.starts_with("https://") {
        return Err(Error::Keys(
            "https URLs are not supported by this small client (no TLS); download the key set \
             (for example with curl) and pass the file to --keys"
                .to_owned(),
        ));
    }
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| Error::Keys("the keys URL must start with http://".to_owned()))?;
    let (authority, path) = rest.find('/').map_or((rest, "/"), |i| rest.split_at(i));
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => {
            let port = port
                .parse()
                .map_err(|_| Error::Keys("the keys URL has an invalid port".to_owned()))?;
            (host, port)
        }
        _ => (authority, 80),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(Error::Keys("the keys URL has no host".to_owned()));
    }
    Ok((host.to_owned(), port, path.to_owned()))
}

/// Fetches a key set over plain HTTP from a loopback address (a signer on this machine).
/// Remote key sets travel over TLS: fetch them with a real client and pass the file.
pub fn fetch_key_set(url: &str) -> Result<KeySet, Error> {
    let (host, port, path) = split_http_url(url)?;
    let fail = |what: &str| Error::Keys(format!("{what} ({url})"));
    let addrs: Vec<SocketAddr> = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|_| fail("cannot resolve the host"))?
        .collect();
    if addrs.is_empty() || !addrs.iter().all(|a| a.ip().is_loopback()) {
        return Err(fail(
            "plain http is only used for loopback addresses; fetch remote keys over https \
             and pass the file",
        ));
    }
    let timeout = Duration::from_secs(10);
    let mut stream = addrs
        .iter()
        .find_map(|addr| TcpStream::connect_timeout(addr, timeout).ok())
        .ok_or_else(|| fail("cannot connect"))?;
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    let host_header = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {host_header}\r\nAccept: application/json\r\n\
         Connection: close\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|_| fail("cannot send the request"))?;
    let mut raw = Vec::new();
    stream
        .take((MAX_HEAD_BYTES + MAX_RECEIPT_BYTES + 1) as u64)
        .read_to_end(&mut raw)
        .map_err(|_| fail("cannot read the response"))?;
    let head = parse_head(&raw)
        .map_err(&fail)?
        .ok_or_else(|| fail("incomplete response"))?;
    if head.status != 200 {
        return Err(fail(&format!("the server answered HTTP {}", head.status)));
    }
    let rest = &raw[head.len..];
    let body = if head.chunked {
        decode_chunked(rest)
            .map_err(&fail)?
            .ok_or_else(|| fail("incomplete response"))?
            .0
    } else {
        let len = head.content_length.unwrap_or(rest.len());
        rest.get(..len)
            .ok_or_else(|| fail("incomplete response"))?
            .to_vec()
    };
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
    fn decodes_chunks() {
        let raw = b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\nrest";
        let (body, used) = decode_chunked(raw).unwrap().unwrap();
        assert_eq!(body, b"abcde");
        assert_eq!(&raw[used..], b"rest");
        assert_eq!(decode_chunked(&raw[..8]), Ok(None));
        assert!(decode_chunked(b"zz\r\n").is_err());
    }

    #[test]
    fn splits_urls_and_refuses_https() {
        let split = |u| split_http_url(u).unwrap();
        assert_eq!(
            split("http://127.0.0.1:8787/v1/keys"),
            ("127.0.0.1".to_owned(), 8787, "/v1/keys".to_owned())
        );
        assert_eq!(
            split("http://localhost"),
            ("localhost".to_owned(), 80, "/".to_owned())
        );
        assert_eq!(
            split("http://[::1]:9/k"),
            ("::1".to_owned(), 9, "/k".to_owned())
        );
        let https = split_http_url("https://signer.example/v1/keys").unwrap_err();
        assert!(https.to_string().contains("https URLs are not supported"));
        assert!(split_http_url("ftp://x").is_err());
        assert!(split_http_url("http://:80/").is_err());
    }

    #[test]
    fn refuses_plain_http_beyond_loopback() {
        let err = fetch_key_set("http://192.0.2.1:8787/v1/keys").unwrap_err();
        assert!(err.to_string().contains("only used for loopback"), "{err}");
    }
}
