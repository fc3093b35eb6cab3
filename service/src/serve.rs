//! The serve loop the signer, the issuer and the site server share, and their clock.
//!
//! HTTP/1.1 through hyper's connection builder rather than `axum::serve`, for the read-header
//! timeout: a client that has not sent a complete request head in time is disconnected (this
//! also closes keep-alive connections idle that long). Each request carries its peer address as
//! `ConnectInfo<SocketAddr>` (the rate limit's client key). When `shutdown` completes the loop
//! stops accepting connections and waits for in-flight requests (idle keep-alive connections are
//! closed).

use std::future::Future;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tower::ServiceExt;
use wallet_core::Timestamp;

/// Where a service reads the time. Tests pass a closure; the servers use [`SystemClock`].
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Timestamp;
}

impl<F: Fn() -> Timestamp + Send + Sync + 'static> Clock for F {
    fn now(&self) -> Timestamp {
        self()
    }
}

/// The operating system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        system_now()
    }
}

/// The wall clock as a [`Timestamp`] (before 1970 reads as negative milliseconds).
pub fn system_now() -> Timestamp {
    let millis = match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_millis()).unwrap_or(i64::MAX),
    };
    Timestamp::from_millis(millis)
}

/// Serves `router` on `listener` until `shutdown` completes, then drains (see the module doc).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    header_read_timeout: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            router.clone().oneshot(request)
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// A socket that could not be bound or served on.
#[derive(Debug, thiserror::Error)]
#[error("could not {action} {addr}: {source}")]
pub struct SocketError {
    pub action: &'static str,
    pub addr: SocketAddr,
    #[source]
    pub source: std::io::Error,
}

/// Binds `addr`, warning when it is beyond loopback (`beyond_loopback`: what to put in front).
pub async fn bind(addr: SocketAddr, beyond_loopback: &str) -> Result<TcpListener, SocketError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| SocketError {
            action: "listen on",
            addr,
            source,
        })?;
    if !addr.ip().is_loopback() {
        tracing::warn!("listening beyond loopback; {beyond_loopback}");
    }
    Ok(listener)
}

/// [`serve`] until SIGINT/SIGTERM, then drains for at most `grace` before giving up on the
/// requests still open.
pub async fn serve_until_signal(
    listener: TcpListener,
    router: Router,
    header_read_timeout: Duration,
    grace: Duration,
) -> Result<(), SocketError> {
    let addr = listener
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let stopping = std::sync::Arc::new(tokio::sync::Notify::new());
    let signal = {
        let stopping = stopping.clone();
        async move {
            shutdown_signal().await;
            tracing::info!("shutting down: finishing in-flight requests");
            stopping.notify_one();
        }
    };
    let server = serve(listener, router, header_read_timeout, signal);
    tokio::select! {
        served = server => served.map_err(|source| SocketError { action: "serve on", addr, source }),
        () = async { stopping.notified().await; tokio::time::sleep(grace).await } => {
            tracing::warn!("requests still open after the grace period; exiting");
            Ok(())
        }
    }
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn answers_with_the_peer_address_then_drains_on_shutdown() {
        let router = Router::new().route(
            "/",
            axum::routing::get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move {
                peer.ip().to_string()
            }),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(
            listener,
            router,
            Duration::from_secs(5),
            async move {
                let _ = stopped.await;
            },
        ));
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("127.0.0.1"), "{answer}");
        stop.send(()).unwrap();
        server.await.unwrap().unwrap();
        assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    }

    #[tokio::test]
    async fn a_half_sent_head_is_dropped_after_the_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let timeout = Duration::from_millis(200);
        let server = tokio::spawn(serve(
            listener,
            Router::new(),
            timeout,
            std::future::pending(),
        ));
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.write_all(b"GET / HTTP/1.1\r\nhost").await.unwrap();
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest));
        assert!(read.await.is_ok(), "the connection stayed open");
        server.abort();
    }

    #[test]
    fn the_system_clock_is_past_2020() {
        assert!(SystemClock.now().millis() > 1_577_836_800_000);
        let fixed = || Timestamp::from_millis(5);
        assert_eq!(Clock::now(&fixed).millis(), 5);
    }
}
