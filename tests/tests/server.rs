//! The static server: security headers on every response, pinned MIME types, loopback only.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use tacit_e2e::StaticServer;
use tacit_e2e::server::{
    CONTENT_SECURITY_POLICY, allow_connect, app, content_security_policy, serve_dir,
};
use tower::ServiceExt;

fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "<!doctype html><p>hi</p>").unwrap();
    std::fs::write(dir.path().join("boot.js"), "export {};").unwrap();
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    std::fs::write(dir.path().join("pkg/tacit_web_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(dir.path().join("pkg/tacit_web.js"), "export default 1;").unwrap();
    std::fs::write(dir.path().join("size.json"), "{}").unwrap();
    dir
}

async fn get(dir: &std::path::Path, path: &str) -> axum::response::Response {
    app(dir)
        .oneshot(Request::get(path).body(Body::empty()).unwrap())
        .await
        .unwrap()
}

fn assert_security_headers(response: &axum::response::Response) {
    let headers = response.headers();
    assert_eq!(headers["origin-agent-cluster"], "?1");
    // The connect list may grow while tests run in parallel: the fixed parts are checked.
    let csp = headers["content-security-policy"].to_str().unwrap();
    for directive in [
        "script-src 'self' 'wasm-unsafe-eval';",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["x-frame-options"], "DENY");
    assert_eq!(headers["permissions-policy"], "tools=(self)");
    assert_eq!(headers["cache-control"], "no-store");
}

#[test]
fn the_page_may_connect_only_to_itself_and_the_services_it_is_told_of_and_never_be_framed() {
    let csp = |directive: &str| {
        content_security_policy()
            .split(';')
            .map(str::trim)
            .find(|d| d.starts_with(directive))
            .map(str::to_owned)
    };
    assert_eq!(
        csp("frame-ancestors").as_deref(),
        Some("frame-ancestors 'none'")
    );
    allow_connect("http://127.0.0.1:8787");
    allow_connect("http://127.0.0.1:8791/");
    // Not an origin: never let into the policy.
    allow_connect("http://127.0.0.1:* 'unsafe-inline'");
    allow_connect("*");
    let connect = csp("connect-src").unwrap();
    assert_eq!(
        connect,
        "connect-src 'self' http://127.0.0.1:8787 http://127.0.0.1:8791"
    );
    assert!(!content_security_policy().contains('*'));
    assert!(!content_security_policy().contains("unsafe-inline"));
}

#[test]
fn script_src_is_exactly_self_and_wasm_unsafe_eval() {
    let directives: Vec<&str> = CONTENT_SECURITY_POLICY.split(';').map(str::trim).collect();
    assert!(
        directives.contains(&"script-src 'self' 'wasm-unsafe-eval'"),
        "{directives:?}"
    );
    assert!(directives.contains(&"default-src 'self'"));
    assert!(!CONTENT_SECURITY_POLICY.contains("unsafe-inline"));
    assert!(!CONTENT_SECURITY_POLICY.contains("'unsafe-eval'"));
}

#[tokio::test]
async fn files_carry_headers_and_pinned_mime_types() {
    let dir = site();
    let cases = [
        ("/", "text/html"),
        ("/index.html", "text/html"),
        ("/boot.js", "text/javascript"),
        ("/pkg/tacit_web.js", "text/javascript"),
        ("/pkg/tacit_web_bg.wasm", "application/wasm"),
        ("/size.json", "application/json"),
    ];
    for (path, mime) in cases {
        let response = get(dir.path(), path).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        assert_security_headers(&response);
        let content_type = response.headers()["content-type"].to_str().unwrap();
        if mime == "text/html" {
            assert!(content_type.starts_with(mime), "{path}: {content_type}");
        } else {
            assert_eq!(content_type, mime, "{path}");
        }
    }
    let wasm = get(dir.path(), "/pkg/tacit_web_bg.wasm").await;
    let body = axum::body::to_bytes(wasm.into_body(), 1024).await.unwrap();
    assert_eq!(&body[..], b"\0asm\x01\0\0\0");
}

#[tokio::test]
async fn missing_files_are_404_with_headers_too() {
    let dir = site();
    let response = get(dir.path(), "/nope.js").await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_security_headers(&response);
    let escape = get(dir.path(), "/../../etc/passwd").await;
    assert_ne!(escape.status(), StatusCode::OK);
}

#[tokio::test]
async fn refuses_non_loopback_addresses() {
    let dir = site();
    let any: SocketAddr = "0.0.0.0:0".parse().unwrap();
    let err = serve_dir(dir.path(), any).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(StaticServer::start_on(dir.path(), any).is_err());
}

#[tokio::test]
async fn serve_dir_binds_and_shuts_down() {
    let dir = site();
    let (addr, handle) = serve_dir(dir.path(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    assert!(addr.ip().is_loopback() && addr.port() != 0);
    handle.shutdown().await.unwrap();
}

#[test]
fn real_socket_round_trip() {
    let dir = site();
    let server = StaticServer::start(dir.path()).unwrap();
    // Addressed as localhost (WebAuthn needs a domain), listening on 127.0.0.1 only.
    assert_eq!(
        server.url("/boot.js"),
        format!("http://localhost:{}/boot.js", server.addr().port())
    );
    assert!(server.addr().ip().is_loopback());
    assert_eq!(server.ip_origin(), format!("http://{}", server.addr()));
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    write!(
        stream,
        "GET /pkg/tacit_web_bg.wasm HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    let reply = String::from_utf8_lossy(&bytes);
    let head = reply.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{reply}");
    assert!(head.contains("content-type: application/wasm"), "{reply}");
    assert!(head.contains("origin-agent-cluster: ?1"), "{reply}");
    let addr = server.addr();
    drop(server);
    assert!(
        TcpStream::connect(addr).is_err(),
        "still listening after drop"
    );
}

#[test]
fn a_missing_site_names_the_build_command() {
    let err = tacit_e2e::site_dir("no-such-site").unwrap_err().to_string();
    assert!(err.contains("run `cargo xtask build-web` first"), "{err}");
}
