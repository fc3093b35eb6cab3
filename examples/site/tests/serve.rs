//! The real server on a socket: a half-sent request head is dropped after the read-header
//! timeout, shutdown frees the port for a restart, and the restarted server keeps its key.

#![cfg(not(target_arch = "wasm32"))] // the server and its tests are native
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;
use tacit_site::server::{Config, HEADER_READ_TIMEOUT, spawn};

fn config(root: &std::path::Path) -> Config {
    let mut config = pinned_config(root, None);
    config.origin = None;
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_sent_head_is_dropped() {
    let root = tempfile::tempdir().unwrap();
    let site = spawn(&config(root.path())).await.unwrap();
    let addr = site.addr();
    let elapsed = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(HEADER_READ_TIMEOUT * 3))
            .unwrap();
        stream.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
        let start = Instant::now();
        let mut buf = Vec::new();
        // The server answers 408 or just closes; either way the read ends.
        let _ = stream.read_to_end(&mut buf);
        start.elapsed()
    })
    .await
    .unwrap();
    assert!(elapsed < HEADER_READ_TIMEOUT * 2, "{elapsed:?}");
    assert!(
        elapsed >= HEADER_READ_TIMEOUT - Duration::from_millis(500),
        "{elapsed:?}"
    );
    site.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_frees_the_port_and_a_restart_keeps_the_site_key() {
    let root = tempfile::tempdir().unwrap();
    let mut config = config(root.path());
    let first = spawn(&config).await.unwrap();
    let kid = first.state().site_key().kid().to_owned();
    let addr = first.addr();
    // A keep-alive connection left open does not hold the shutdown.
    let idle = TcpStream::connect(addr).unwrap();
    first.shutdown().await.unwrap();
    drop(idle);
    config.listen = addr;
    let second = spawn(&config).await.unwrap();
    assert_eq!(second.addr(), addr);
    assert_eq!(second.origin().as_str(), format!("http://{addr}"));
    assert_eq!(second.state().site_key().kid(), kid);
    second.shutdown().await.unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let key = root.path().join("data/site.key");
        assert_eq!(
            std::fs::metadata(key).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}
