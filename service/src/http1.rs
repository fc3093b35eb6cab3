//! The HTTP/1.1 response-head parser and keep-alive connection the services' load generators share (`signer-bench`,
//! `site-bench`): enough to read a status and a `Content-Length` off a keep-alive connection to a
//! loopback server. No TLS, no redirects, no proxies; anything else should use a real client.

/// Longest response head the parser reads.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// A parsed response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub status: u16,
    /// Bytes up to and including the blank line.
    pub len: usize,
    pub content_length: Option<usize>,
    pub chunked: bool,
}

/// Parses the head at the start of `buf`; `Ok(None)` means more bytes are needed.
pub fn parse_head(buf: &[u8]) -> Result<Option<Head>, &'static str> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if buf.len() > MAX_HEAD_BYTES {
            Err("response head too long")
        } else {
            Ok(None)
        };
    };
    let text = core::str::from_utf8(&buf[..end]).map_err(|_| "response head is not text")?;
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| {
            line.strip_prefix("HTTP/1.1 ")
                .or(line.strip_prefix("HTTP/1.0 "))
        })
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or("not an HTTP/1.x response")?;
    let mut head = Head {
        status,
        len: end + 4,
        content_length: None,
        chunked: false,
    };
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err("malformed header line");
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            head.content_length = Some(value.parse().map_err(|_| "bad content-length")?);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            head.chunked = value.to_ascii_lowercase().contains("chunked");
        }
    }
    Ok(Some(head))
}

/// One keep-alive connection to a loopback server that sends complete requests and reads
/// answers with a `Content-Length` (what the services send).
#[derive(Debug)]
pub struct Conn {
    stream: tokio::net::TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    pub async fn connect(addr: std::net::SocketAddr) -> std::io::Result<Self> {
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
        self.round_trip_with(request, |_| ())
            .await
            .map(|(status, ())| status)
    }

    /// [`Conn::round_trip`], also returning what `inspect` makes of the body.
    pub async fn round_trip_with<T>(
        &mut self,
        request: &[u8],
        inspect: impl FnOnce(&[u8]) -> T,
    ) -> std::io::Result<(u16, T)> {
        use tokio::io::AsyncWriteExt;
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
        let seen = inspect(&self.buf[head.len..head.len + body_len]);
        self.buf.drain(..head.len + body_len);
        Ok((head.status, seen))
    }

    async fn fill(&mut self) -> std::io::Result<()> {
        use tokio::io::AsyncReadExt;
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
        assert!(!head.chunked);
        assert_eq!(&raw[head.len..], b"{}");
        assert_eq!(parse_head(&raw[..20]), Ok(None));
        assert!(parse_head(b"SMTP hello\r\n\r\n").is_err());
    }

    #[test]
    fn refuses_bad_heads() {
        let chunked = parse_head(b"HTTP/1.0 404 Not Found\r\nTransfer-Encoding: Chunked\r\n\r\n");
        let chunked = chunked.unwrap().unwrap();
        assert_eq!((chunked.status, chunked.chunked), (404, true));
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/2 200\r\n\r\n").is_err());
        // An endless head is refused once it passes the cap, not buffered for ever.
        let endless = vec![b'a'; MAX_HEAD_BYTES + 1];
        assert_eq!(parse_head(&endless), Err("response head too long"));
        assert_eq!(parse_head(&endless[..MAX_HEAD_BYTES]), Ok(None));
    }

    #[tokio::test]
    async fn a_connection_reads_answers_back_to_back() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 4];
            stream.read_exact(&mut request).await.unwrap();
            stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 404 N")
                .await
                .unwrap();
            stream.read_exact(&mut request).await.unwrap();
            stream
                .write_all(b"ot Found\r\ncontent-length: 4\r\n\r\nnope")
                .await
                .unwrap();
        });
        let mut conn = Conn::connect(addr).await.unwrap();
        let (status, body) = conn
            .round_trip_with(b"one\n", <[u8]>::to_vec)
            .await
            .unwrap();
        assert_eq!((status, body.as_slice()), (200, &b"ok"[..]));
        assert_eq!(conn.round_trip(b"two\n").await.unwrap(), 404);
        server.await.unwrap();
    }
}
