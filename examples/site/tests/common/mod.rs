//! Shared fixtures: a housing site on a database of the test's choosing, signer keys the test
//! knows (pinned, as the configuration would pin them), receipts signed with them, and requests
//! through the router.

#![allow(dead_code, unused_imports)] // each test file uses its own part

pub mod issuer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use ed25519_dalek::SigningKey;
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use tacit_site::server::config::SignerConfig;
use tacit_site::server::{
    Config, IssuerKeys, ManualClock, Nonces, SignerKeys, SiteKey, SiteParts, SiteState, app,
    system_now,
};
use tower::ServiceExt as _;
use wallet_core::receipt::sign;
use wallet_core::{Claim, KeySet, Nonce, Origin, Outcome, Timestamp};

pub const NOW: Timestamp = Timestamp::from_millis(1_800_000_000_000);
pub use tacit_testkit::fixtures::{
    HOUR, MINUTE, REQUEST_CLAIMS_KEYS, key_set, payload, sorted_keys,
};

/// The signer's key, known to the test so it can sign whatever it likes.
pub fn signer_key() -> SigningKey {
    SigningKey::from_bytes(&[1; 32])
}

/// An attacker's key: never published by the signer.
pub fn attacker_key() -> SigningKey {
    SigningKey::from_bytes(&[66; 32])
}

/// The workspace's `examples/housing/site.toml`, taking the person's word for every claim: the
/// shipped file's `require_proof` is dropped, since these tests are about receipts and their
/// proofs (`shipped.rs` checks the file as it is; `proofs.rs::a_policy_may_require_proof` sets
/// it again).
pub fn housing_config() -> Config {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../housing/site.toml");
    let mut config = Config::load(&path).unwrap();
    config.policy.require_proof.clear();
    config
}

/// The shipped housing configuration made to run in a test: listening on a free port, its data
/// and static page under `root`, pinning the test's signer key (written to a file in `root`,
/// valid from a day before now) and storing its nonces in `database_url` (SQLite in `root`'s
/// data directory when `None`).
pub fn pinned_config(root: &Path, database_url: Option<&str>) -> Config {
    let mut config = housing_config();
    config.listen = "127.0.0.1:0".parse().unwrap();
    config.data_dir = root.join("data");
    config.static_dir = static_dir(root);
    let keys = root.join("signer-keys.json");
    std::fs::write(
        &keys,
        serde_json::to_vec(&key_set(&[&signer_key()], system_now())).unwrap(),
    )
    .unwrap();
    config.signer = SignerConfig {
        keys_url: None,
        pinned_keys: Some(keys),
    };
    config.database_url = Some(database_url.map_or_else(
        || tacit_store::sqlite_url(&root.join("data/nonces.db")),
        str::to_owned,
    ));
    config
}

pub fn housing_origin() -> Origin {
    Origin::parse("http://127.0.0.1:8081").unwrap()
}

pub fn pharmacy_origin() -> Origin {
    Origin::parse("http://127.0.0.1:8082").unwrap()
}

/// A site key for tests (fixed, so two instances of one site share it as they would).
pub fn site_key() -> SiteKey {
    SiteKey::from_bytes(&[9; 32])
}

/// A static directory with a page in it.
pub fn static_dir(root: &Path) -> PathBuf {
    let dir = root.join("static");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.html"), "<!doctype html><title>site</title>").unwrap();
    std::fs::write(dir.join("boot.js"), "export {};").unwrap();
    dir
}

/// A housing site on `database_url`, pinning `keys`, reading `clock`.
pub async fn housing_site(
    database_url: &str,
    root: &Path,
    keys: KeySet,
    clock: Arc<ManualClock>,
) -> SiteState {
    SiteState::new(SiteParts {
        policy: housing_config().policy,
        origin: housing_origin(),
        site_key: site_key(),
        nonces: Nonces::open(database_url).await.unwrap(),
        signer: SignerKeys::pinned(keys),
        issuers: IssuerKeys::none(),
        static_dir: static_dir(root),
        clock: Box::new(clock),
    })
    .unwrap()
}

/// The answers that satisfy the housing policy.
pub fn all_satisfied() -> Vec<(Claim, Outcome)> {
    housing_config()
        .policy
        .claims
        .into_iter()
        .map(|c| (c, Outcome::Satisfied))
        .collect()
}

/// A signed receipt, as the JSON check_proposal returns.
pub fn receipt(
    audience: &Origin,
    nonce: &Nonce,
    answers: &[(Claim, Outcome)],
    issued: Timestamp,
    key: &SigningKey,
) -> Value {
    serde_json::to_value(sign(payload(audience, nonce, answers, issued), key, issued)).unwrap()
}

/// `GET path` → (status, JSON body, headers).
pub async fn get(router: &Router, path: &str) -> (StatusCode, Value, HeaderMap) {
    let request = Request::get(path)
        .header("origin", "http://127.0.0.1:9999")
        .body(Body::empty())
        .unwrap();
    send(router, request).await
}

/// `POST path` with a JSON body → (status, JSON body, headers).
pub async fn post(router: &Router, path: &str, body: &Value) -> (StatusCode, Value, HeaderMap) {
    let request = Request::post(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    send(router, request).await
}

pub async fn send(router: &Router, request: Request<Body>) -> (StatusCode, Value, HeaderMap) {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, body, headers)
}

/// `GET /api/requirements` → its `result` (the wallet's request_claims input).
pub async fn requirements(router: &Router) -> Value {
    let (status, body, _) = get(router, "/api/requirements").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["ok"], true, "{body}");
    body["result"].clone()
}

pub fn nonce_of(requirements: &Value) -> Nonce {
    Nonce::parse(requirements["nonce"].as_str().unwrap()).unwrap()
}

/// The refusal code of an envelope.
pub fn code(body: &Value) -> &str {
    assert_eq!(body["ok"], false, "expected a refusal: {body}");
    body["error"]["code"].as_str().unwrap()
}

pub fn router(state: &SiteState) -> Router {
    app(state.clone())
}

pub fn submission(receipt: &Value) -> Value {
    json!({ "receipt": receipt })
}
