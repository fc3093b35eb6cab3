//! The site server on a real PostgreSQL (a throw-away cluster this test starts): two instances
//! of one site on one database, real sockets, 100 concurrent submissions of one receipt — one
//! is accepted, 99 are `replayed_nonce`; and a replay after a restart is refused.
//!
//! Fails (never skips) without PostgreSQL: install it with `apt-get install -y postgresql`.

#![cfg(not(target_arch = "wasm32"))] // the server and its tests are native
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::path::Path;
use std::sync::Barrier;

use common::*;
use serde_json::Value;
use tacit_site::server::{Config, RunningSite, spawn, system_now};
use tacit_store::testing::PgCluster;

fn cluster() -> PgCluster {
    PgCluster::start().unwrap_or_else(|e| panic!("{e}"))
}

/// The housing configuration on `database_url`, listening on a free port, pinning the test's
/// signer key in a file, keeping the site key in `root` (shared, as two instances would).
fn config(database_url: &str, root: &Path) -> Config {
    pinned_config(root, Some(database_url))
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

fn get_json(url: &str) -> Value {
    let mut response = agent().get(url).call().unwrap();
    serde_json::from_slice(&response.body_mut().read_to_vec().unwrap()).unwrap()
}

fn post_json(agent: &ureq::Agent, url: &str, body: &Value) -> Value {
    let mut response = agent
        .post(url)
        .header("content-type", "application/json")
        .send(body.to_string().as_bytes())
        .unwrap();
    serde_json::from_slice(&response.body_mut().read_to_vec().unwrap()).unwrap()
}

fn url(site: &RunningSite, path: &str) -> String {
    format!("http://{}{path}", site.addr())
}

/// Requirements from `site` and a good receipt for them, issued now.
async fn good_receipt(site: &RunningSite) -> Value {
    let req_url = url(site, "/api/requirements");
    let req = tokio::task::spawn_blocking(move || get_json(&req_url))
        .await
        .unwrap();
    assert_eq!(req["ok"], true, "{req}");
    let nonce = nonce_of(&req["result"]);
    receipt(
        &housing_origin(),
        &nonce,
        &all_satisfied(),
        system_now(),
        &signer_key(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_on_one_database_accept_a_receipt_once_under_100_concurrent_submissions() {
    let pg = cluster();
    let database = pg.create_database("housing_two").await.unwrap();
    let root = tempfile::tempdir().unwrap();
    let config = config(&database, root.path());
    let (a, b) = (spawn(&config).await.unwrap(), spawn(&config).await.unwrap());
    assert_ne!(a.addr(), b.addr());
    // Both speak as the same site, with the same key.
    assert_eq!(a.origin(), b.origin());
    assert_eq!(a.state().site_key().kid(), b.state().site_key().kid());

    let receipt = good_receipt(&a).await;
    let body = submission(&receipt);
    let targets = [url(&a, "/api/applications"), url(&b, "/api/applications")];
    let answers: Vec<Value> = tokio::task::spawn_blocking(move || {
        let start = Barrier::new(100);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..100)
                .map(|i| {
                    let (start, body, target) = (&start, &body, &targets[i % 2]);
                    scope.spawn(move || {
                        let agent = agent();
                        start.wait();
                        post_json(&agent, target, body)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    })
    .await
    .unwrap();

    let accepted = answers.iter().filter(|a| a["ok"] == true).count();
    let replayed = answers
        .iter()
        .filter(|a| a["ok"] == false && a["error"]["code"] == "replayed_nonce")
        .count();
    assert_eq!(
        (accepted, replayed),
        (1, 99),
        "other answers: {:?}",
        answers
            .iter()
            .filter(|a| a["ok"] != true && a["error"]["code"] != "replayed_nonce")
            .take(3)
            .collect::<Vec<_>>()
    );
    // Requirements from b are b's nonce, and a accepts them: one store.
    let receipt = good_receipt(&b).await;
    let target = url(&a, "/api/applications");
    let answer =
        tokio::task::spawn_blocking(move || post_json(&agent(), &target, &submission(&receipt)))
            .await
            .unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receipt_replayed_after_a_restart_is_refused_on_postgres() {
    let pg = cluster();
    let database = pg.create_database("housing_restart").await.unwrap();
    let root = tempfile::tempdir().unwrap();
    let config = config(&database, root.path());

    let first = spawn(&config).await.unwrap();
    let receipt = good_receipt(&first).await;
    let target = url(&first, "/api/applications");
    let body = submission(&receipt);
    let answer = tokio::task::spawn_blocking(move || post_json(&agent(), &target, &body))
        .await
        .unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    first.state().nonces().db().close().await;
    first.shutdown().await.unwrap();

    let restarted = spawn(&config).await.unwrap();
    let target = url(&restarted, "/api/applications");
    let body = submission(&receipt);
    let answer = tokio::task::spawn_blocking(move || post_json(&agent(), &target, &body))
        .await
        .unwrap();
    assert_eq!(answer["ok"], false, "{answer}");
    assert_eq!(answer["error"]["code"], "replayed_nonce");
    restarted.shutdown().await.unwrap();
}
