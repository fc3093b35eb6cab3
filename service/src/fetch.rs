//! The one way the services fetch a small JSON document from another party (a signer's key set,
//! an issuer's metadata or JWK set): `ureq` over rustls, `Accept: application/json`, no
//! redirects (an https URL cannot be turned into a plain-http fetch), one time limit for the
//! whole exchange, anything but 200 refused, the body read up to a limit. Blocking: async
//! callers run it on `spawn_blocking`. Each caller words a [`FetchFailure`] for its own party.

use std::time::Duration;

/// Why a document could not be fetched (no URL, no body: callers add what they may say).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FetchFailure {
    /// The server answered with another status than 200.
    #[error("the server answered HTTP {0}")]
    Status(u16),
    /// The exchange took longer than allowed.
    #[error("the server did not answer in time")]
    Timeout,
    /// No connection (refused, unresolvable, TLS failure, malformed URL).
    #[error("the server could not be reached")]
    Unreachable,
    /// The body could not be read, or is larger than allowed.
    #[error("the answer could not be read")]
    Unreadable,
}

/// `GET url` with `Accept: application/json`: the body of a 200 answer, at most `max_bytes`,
/// all within `timeout`.
pub fn get_json(url: &str, timeout: Duration, max_bytes: usize) -> Result<Vec<u8>, FetchFailure> {
    get_as(url, "application/json", timeout, max_bytes)
}

/// [`get_json`] asking for another media type (`accept`), e.g. a Token Status List's
/// `application/statuslist+jwt`.
pub fn get_as(
    url: &str,
    accept: &str,
    timeout: Duration,
    max_bytes: usize,
) -> Result<Vec<u8>, FetchFailure> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .max_redirects(0)
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .get(url)
        .header("accept", accept)
        .call()
        .map_err(|e| match e {
            ureq::Error::Timeout(_) => FetchFailure::Timeout,
            _ => FetchFailure::Unreachable,
        })?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(FetchFailure::Status(status));
    }
    response
        .body_mut()
        .with_config()
        .limit(u64::try_from(max_bytes).unwrap_or(u64::MAX))
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::Timeout(_) => FetchFailure::Timeout,
            _ => FetchFailure::Unreadable,
        })
}

/// [`get_json`] on tokio's blocking pool, for async callers (a task that cannot finish is
/// [`FetchFailure::Unreachable`]).
pub async fn get_json_async(
    url: String,
    timeout: Duration,
    max_bytes: usize,
) -> Result<Vec<u8>, FetchFailure> {
    tokio::task::spawn_blocking(move || get_json(&url, timeout, max_bytes))
        .await
        .unwrap_or(Err(FetchFailure::Unreachable))
}

/// [`get_as`] on tokio's blocking pool.
pub async fn get_as_async(
    url: String,
    accept: &'static str,
    timeout: Duration,
    max_bytes: usize,
) -> Result<Vec<u8>, FetchFailure> {
    tokio::task::spawn_blocking(move || get_as(&url, accept, timeout, max_bytes))
        .await
        .unwrap_or(Err(FetchFailure::Unreachable))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::io::{Read as _, Write as _};
    use std::net::TcpListener;

    use super::*;

    /// A one-connection server answering `response` (or holding the connection open when
    /// `None`); returns its URL.
    fn serve_once(response: Option<Vec<u8>>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/doc", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            assert!(
                String::from_utf8_lossy(&head)
                    .to_ascii_lowercase()
                    .contains("accept: application/json")
            );
            match response {
                Some(bytes) => {
                    let _ = stream.write_all(&bytes);
                }
                None => std::thread::sleep(Duration::from_secs(3)),
            }
        });
        url
    }

    fn answer(status: &str, extra: &str, body: &str) -> Option<Vec<u8>> {
        Some(
            format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: \
                 {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .into_bytes(),
        )
    }

    const T: Duration = Duration::from_secs(2);

    #[test]
    fn a_200_body_within_the_limit_is_returned() {
        let url = serve_once(answer("200 OK", "", r#"{"keys":[]}"#));
        assert_eq!(get_json(&url, T, 64).unwrap(), br#"{"keys":[]}"#);
    }

    #[tokio::test]
    async fn the_async_form_is_the_same_fetch() {
        let url = serve_once(answer("200 OK", "", "[1]"));
        assert_eq!(get_json_async(url, T, 64).await.unwrap(), b"[1]");
        let url = serve_once(answer("404 Not Found", "", "{}"));
        assert_eq!(
            get_json_async(url, T, 64).await,
            Err(FetchFailure::Status(404))
        );
    }

    #[test]
    fn other_statuses_and_redirects_are_refused() {
        let url = serve_once(answer("500 Internal Server Error", "", "{}"));
        assert_eq!(get_json(&url, T, 64), Err(FetchFailure::Status(500)));
        let url = serve_once(answer("302 Found", "location: http://192.0.2.1/\r\n", ""));
        assert_eq!(get_json(&url, T, 64), Err(FetchFailure::Status(302)));
    }

    #[test]
    fn a_body_over_the_limit_is_unreadable() {
        let url = serve_once(answer("200 OK", "", &"x".repeat(100)));
        assert_eq!(get_json(&url, T, 99), Err(FetchFailure::Unreadable));
    }

    #[test]
    fn silence_is_a_timeout_and_nobody_is_unreachable() {
        let url = serve_once(None);
        assert_eq!(
            get_json(&url, Duration::from_millis(200), 64),
            Err(FetchFailure::Timeout)
        );
        // Port 1 on loopback: nothing listens.
        assert_eq!(
            get_json("http://127.0.0.1:1/doc", T, 64),
            Err(FetchFailure::Unreachable)
        );
        assert_eq!(get_json("not a url", T, 64), Err(FetchFailure::Unreachable));
    }
}
