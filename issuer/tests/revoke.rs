//! Issue 28, item 13 (the issuer's half): `tacit-issuer revoke <person>` ends the person's
//! refresh chain. Later requests with a refresh token (or an enrolment code) of that chain are
//! refused as `revoked` (403) and consume nothing; a code made afterwards starts a new chain.
//! Through the router (on SQLite and on a real PostgreSQL) and through the binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use axum::http::StatusCode;
use common::*;
use serde_json::{Value, json};
use tacit_issuer::{Attribute, Error, Grant, IssuerDb, Person};
use tacit_protocol::request_auth::EnrolmentCode;
use wallet_core::Timestamp;

fn refresh_request(token: &str, nonce: &str, holder_key: u8) -> Value {
    json!({ "refresh_token": token, "nonce": nonce, "holder_keys": [entry(&holder(holder_key), nonce)] })
}

async fn a_revoked_chain_is_refused_as_revoked_and_spends_nothing(url: String) {
    let issuer = issuer_on(Some(url), Attribute::Income).await;
    let (_, refresh) = issuer.first_batch().await;
    // Ben, another person, keeps his chain.
    let ben = Person {
        person_id: "p-ben".to_owned(),
        name: "Ben Demo".to_owned(),
        ..ana()
    };
    let ben_code = issuer.code_for(&ben).await;
    let nonce = issuer.nonce().await;
    let (status, _, ben_batch) = issuer.redeem(&ben_code, &nonce, 1).await;
    assert_eq!(status, StatusCode::OK, "{ben_batch}");
    // A code for Ana made before the revocation, not used yet.
    let spare = issuer.code_for(&ana()).await;

    let (person, ended) = tacit_issuer::revoke(&issuer.db, "p-ana", issuer.now())
        .await
        .unwrap();
    assert_eq!(person.name, "Ana Demo");
    assert_eq!(ended, 2, "the refresh token and the spare code");

    // The refresh token: refused with its own code and words; the nonce is not spent.
    let nonce = issuer.nonce().await;
    let refused = issuer.post(&refresh_request(&refresh, &nonce, 5)).await;
    assert_refused(&refused, StatusCode::FORBIDDEN, "revoked");
    assert!(
        refused.2["message"]
            .as_str()
            .unwrap()
            .contains("revoked this person's credentials"),
        "{}",
        refused.2
    );
    // The spare code of the ended chain too.
    let by_code = issuer.redeem(&spare, &nonce, 1).await;
    assert_refused(&by_code, StatusCode::FORBIDDEN, "revoked");
    // Again: still revoked (refusals consume nothing, so nothing changes).
    let again = issuer.post(&refresh_request(&refresh, &nonce, 6)).await;
    assert_refused(&again, StatusCode::FORBIDDEN, "revoked");
    // An unknown token is still just refused.
    let unknown = issuer
        .post(&refresh_request(&"Q".repeat(43), &nonce, 6))
        .await;
    assert_refused(&unknown, StatusCode::FORBIDDEN, "refresh_refused");
    assert_eq!(issuer.db.issued_count().await.unwrap(), 2);

    // Ben's chain is untouched; the nonce the refusals left unspent works for him.
    let ben_refresh = ben_batch["refresh_token"].as_str().unwrap();
    let (status, _, body) = issuer.post(&refresh_request(ben_refresh, &nonce, 7)).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // A code made after the revocation enrols Ana anew, and its chain refreshes.
    let fresh = issuer.code_for(&ana()).await;
    let nonce = issuer.nonce().await;
    let (status, _, body) = issuer.redeem(&fresh, &nonce, 1).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let nonce = issuer.nonce().await;
    let next = body["refresh_token"].as_str().unwrap();
    let (status, _, body) = issuer.post(&refresh_request(next, &nonce, 8)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The old token stays dead.
    let nonce = issuer.nonce().await;
    let old = issuer.post(&refresh_request(&refresh, &nonce, 9)).await;
    assert_refused(&old, StatusCode::FORBIDDEN, "revoked");
}

/// A batch being signed while the operator revokes: the refresh token it hands out belongs to
/// the ended chain, so it is refused too.
async fn a_token_handed_out_by_a_batch_in_flight_is_revoked_too(url: String) {
    let issuer = issuer_on(Some(url), Attribute::Income).await;
    let (_, refresh) = issuer.first_batch().await;
    let now = issuer.now();
    let (nonce, _) = issuer.db.make_nonce(now).await.unwrap();
    let in_flight = issuer
        .db
        .redeem(&nonce, Grant::RefreshToken(&refresh), now)
        .await
        .unwrap();
    let db = issuer.db.clone();
    let revoking = tokio::spawn(async move { db.revoke("p-ana", now).await });
    let handed_out = in_flight
        .commit(now, 1, now.plus_millis(60_000))
        .await
        .unwrap()
        .unwrap();
    revoking.await.unwrap().unwrap();
    let nonce = issuer.nonce().await;
    let refused = issuer.post(&refresh_request(&handed_out, &nonce, 3)).await;
    assert_refused(&refused, StatusCode::FORBIDDEN, "revoked");
}

tacit_testkit::on_both_backends!(
    worker_threads = 4,
    sqlite_file = "issuer.db";
    a_revoked_chain_is_refused_as_revoked_and_spends_nothing,
    a_token_handed_out_by_a_batch_in_flight_is_revoked_too,
);

#[tokio::test]
async fn revoking_names_one_person() {
    let issuer = income_issuer().await;
    let now = issuer.now();
    assert!(matches!(
        tacit_issuer::revoke(&issuer.db, "nobody", now).await,
        Err(Error::UnknownPerson)
    ));
    assert!(matches!(
        issuer.db.revoke("p-nobody", now).await,
        Err(Error::UnknownPerson)
    ));
    issuer.code_for(&ana()).await;
    let twin = Person {
        person_id: "p-ana-2".to_owned(),
        ..ana()
    };
    issuer.code_for(&twin).await;
    assert!(matches!(
        tacit_issuer::revoke(&issuer.db, "Ana Demo", now).await,
        Err(Error::AmbiguousPerson)
    ));
    // By id, either works.
    let (person, _) = tacit_issuer::revoke(&issuer.db, "p-ana-2", now)
        .await
        .unwrap();
    assert_eq!(person.person_id, "p-ana-2");
    // A code cannot be made for someone not on record.
    assert!(matches!(
        issuer
            .db
            .make_code("p-nobody", now, now.plus_millis(60_000))
            .await,
        Err(Error::UnknownPerson)
    ));
}

// ----- through the binary ------------------------------------------------------------------------

fn binary(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tacit-issuer"))
        .args(args)
        .arg("--key-file")
        .arg(dir.join("issuer.key"))
        .arg("--database")
        .arg(dir.join("issuer.db"))
        .env_remove("DATABASE_URL")
        .env("TACIT_ISSUER_LOG", "warn")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn codes_of(out: &Output) -> Vec<(EnrolmentCode, String)> {
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|line| {
            let (code, name) = line.split_once('\t').unwrap();
            (EnrolmentCode::parse(code).unwrap(), name.to_owned())
        })
        .collect()
}

async fn open(dir: &Path) -> IssuerDb {
    IssuerDb::open(&tacit_store::sqlite_url(&dir.join("issuer.db")))
        .await
        .unwrap()
}

/// Redeems `grant` with a fresh nonce and commits a batch: the refresh token it hands out.
async fn batch(db: &IssuerDb, grant: Grant<'_>, now: Timestamp) -> Result<String, Error> {
    let (nonce, _) = db.make_nonce(now).await?;
    let redemption = db.redeem(&nonce, grant, now).await?;
    Ok(redemption
        .commit(now, 1, now.plus_millis(60_000))
        .await?
        .expect("a code or refresh token's batch hands out a refresh token"))
}

#[test]
fn the_revoke_command_ends_a_persons_chain() {
    let dir = tempfile::tempdir().unwrap();
    let seeded = codes_of(&binary(dir.path(), &["seed"]));
    assert_eq!(seeded.len(), 3);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let now = tacit_issuer::system_now();
    // Ana and Ben each fetch a batch and hold a refresh token.
    let tokens: Vec<String> = rt.block_on(async {
        let db = open(dir.path()).await;
        let mut tokens = Vec::new();
        for (code, _) in &seeded[..2] {
            tokens.push(batch(&db, Grant::Code(code), now).await.unwrap());
        }
        db.store().close().await;
        tokens
    });

    let out = binary(dir.path(), &["revoke", "Ana Demo"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("revoked the refresh chain of Ana Demo") && said.contains("1 refresh"),
        "{said}"
    );

    rt.block_on(async {
        let db = open(dir.path()).await;
        assert!(matches!(
            batch(&db, Grant::RefreshToken(&tokens[0]), now).await,
            Err(Error::Revoked)
        ));
        // Ben's chain goes on.
        batch(&db, Grant::RefreshToken(&tokens[1]), now)
            .await
            .unwrap();
        db.store().close().await;
    });

    // `codes` enrols Ana again with a new chain.
    let fresh = codes_of(&binary(dir.path(), &["codes"]));
    rt.block_on(async {
        let db = open(dir.path()).await;
        let token = batch(&db, Grant::Code(&fresh[0].0), now).await.unwrap();
        batch(&db, Grant::RefreshToken(&token), now).await.unwrap();
        db.store().close().await;
    });

    // Unknown and ambiguous names fail with a sentence, and change nothing.
    let out = binary(dir.path(), &["revoke", "Zed Nobody"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("nobody on record has this id or name"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        binary(dir.path(), &["seed", "--count", "1"])
            .status
            .success()
    ); // a second Ana
    let out = binary(dir.path(), &["revoke", "Ana Demo"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("give the person's id"),
        "{}",
        text(&out.stderr)
    );
    let out = binary(dir.path(), &["revoke"]);
    assert!(!out.status.success(), "a person must be named");
}
