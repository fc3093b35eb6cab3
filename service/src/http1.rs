//! The HTTP/1.1 response-head parser the services' load generators share (`signer-bench`,
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
}
