//! OpenID4VCI 1.0 through the router, as a hostile wallet would try it: every grant (the
//! pre-authorized code with its transaction code, the access token, the `c_nonce`, the refresh
//! token) works once, for its own person; a refused request consumes nothing; a revoked person
//! gets nothing more. On a SQLite file and on a real PostgreSQL.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use common::*;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Value, json};
use tacit_issuer::{Attribute, Enrolment, MAX_BATCH, Person};
use tacit_protocol::oid4vci::{
    self, CredentialOffer, TokenRequest, finish_proof, proof_signing_input,
};
use tacit_protocol::sd_jwt::{Credential, IssuerMetadata};
use wallet_core::Timestamp;

type Answer = (StatusCode, HeaderMap, Value);

fn ben() -> Person {
    Person {
        person_id: "p-ben".to_owned(),
        name: "Ben Demo".to_owned(),
        income_minor: Some(4_100_000),
        currency: Some("EUR".to_owned()),
        birth_date: Some("2009-02-01".to_owned()),
    }
}

fn form(path: &str, body: String) -> Request<Body> {
    Request::post(path)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(body))
        .unwrap()
}

/// A key proof by `key` for `aud` over `nonce`, made at `iat`.
fn key_proof(key: &SigningKey, aud: &str, nonce: &str, iat: Timestamp) -> String {
    let input = proof_signing_input(&jwk(key), aud, nonce, iat);
    let signature: Signature = key.sign(input.as_bytes());
    finish_proof(&input, &signature.to_bytes().into())
}

/// Proofs by holder keys 1..=`n` for this issuer over `nonce`, made now.
fn proofs(issuer: &TestIssuer, n: u8, nonce: &str) -> Vec<String> {
    (1..=n)
        .map(|i| key_proof(&holder(i), ORIGIN, nonce, issuer.now()))
        .collect()
}

async fn token(issuer: &TestIssuer, request: &TokenRequest) -> Answer {
    let body = oid4vci::token_request_body(request);
    send(&issuer.app, form("/token", body)).await
}

fn pre_authorized(enrolment: &Enrolment) -> TokenRequest {
    TokenRequest::PreAuthorized {
        pre_authorized_code: enrolment.pre_authorized_code.clone(),
        tx_code: enrolment.code.clone(),
    }
}

/// `(access, refresh)` of a 200 token answer.
fn tokens(answer: &Answer) -> (String, String) {
    let (status, headers, json) = answer;
    assert_eq!(*status, StatusCode::OK, "{json}");
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(json["token_type"], "Bearer");
    assert_eq!(json["expires_in"], 300);
    (
        json["access_token"].as_str().unwrap().to_owned(),
        json["refresh_token"].as_str().unwrap().to_owned(),
    )
}

async fn c_nonce(issuer: &TestIssuer) -> String {
    let request = Request::post("/nonce").body(Body::empty()).unwrap();
    let (status, headers, json) = send(&issuer.app, request).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    assert_eq!(headers["cache-control"], "no-store");
    json["c_nonce"].as_str().unwrap().to_owned()
}

async fn credential(issuer: &TestIssuer, access: Option<&str>, body: Value) -> Answer {
    let mut request = Request::post("/credential").header("content-type", "application/json");
    if let Some(access) = access {
        request = request.header("authorization", format!("Bearer {access}"));
    }
    let request = request
        .body(Body::from(serde_json::to_vec(&body).unwrap()))
        .unwrap();
    send(&issuer.app, request).await
}

fn credential_body(proofs: &[String]) -> Value {
    serde_json::from_str(&oid4vci::credential_request_body("income", proofs)).unwrap()
}

/// Asserts an OAuth-style refusal: `status`, `error` = `code`, a sentence, nothing else.
fn assert_oauth(answer: &Answer, status: StatusCode, code: &str) {
    let (got, headers, json) = answer;
    assert_eq!(*got, status, "{json}");
    assert_eq!(json["error"], code, "{json}");
    assert!(
        json["error_description"]
            .as_str()
            .is_some_and(|d| d.len() > 10),
        "{json}"
    );
    assert_eq!(json.as_object().unwrap().len(), 2, "{json}");
    assert_eq!(headers["cache-control"], "no-store");
    if code == "invalid_token" {
        assert_eq!(
            headers["www-authenticate"],
            "Bearer error=\"invalid_token\""
        );
    }
}

/// The credentials of a 200 answer, each verified with the issuer's published keys and bound
/// to holder key `i + 1`.
async fn verified(issuer: &TestIssuer, answer: &Answer) -> Vec<Credential> {
    let (status, headers, json) = answer;
    assert_eq!(*status, StatusCode::OK, "{json}");
    assert_eq!(headers["cache-control"], "no-store");
    let (_, _, bytes) = send_raw(&issuer.app, get("/.well-known/jwt-vc-issuer")).await;
    let meta = IssuerMetadata::parse(&bytes).unwrap();
    let texts = oid4vci::parse_credential_response(&serde_json::to_vec(json).unwrap()).unwrap();
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let credential = Credential::parse(text).unwrap();
            credential.verify_issuer(&meta.jwks, issuer.now()).unwrap();
            let n = u8::try_from(i + 1).unwrap();
            assert_eq!(credential.holder_jwk(), &jwk(&holder(n)));
            credential
        })
        .collect()
}

/// The metadata names this issuer's endpoints, its one `dc+sd-jwt` configuration and its batch
/// size, and the authorization server only the two grants it serves.
async fn metadata_describes_the_flow(url: String) {
    let issuer = issuer_on(Some(url), Attribute::Income).await;
    let (status, headers, meta) = send(&issuer.app, get(oid4vci::METADATA_PATH)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(meta["credential_issuer"], ORIGIN);
    assert_eq!(meta["credential_endpoint"], format!("{ORIGIN}/credential"));
    assert_eq!(meta["nonce_endpoint"], format!("{ORIGIN}/nonce"));
    assert_eq!(meta["batch_credential_issuance"]["batch_size"], MAX_BATCH);
    let configuration = &meta["credential_configurations_supported"]["income"];
    assert_eq!(configuration["format"], "dc+sd-jwt");
    assert_eq!(configuration["vct"], "https://tacit.example/vct/income");
    let claims = configuration["credential_metadata"]["claims"].to_string();
    assert!(claims.contains("income_below_30000"), "{claims}");
    assert!(!claims.contains("income_minor"), "{claims}");

    let (status, _, server) = send(&issuer.app, get(oid4vci::AS_METADATA_PATH)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(server["issuer"], ORIGIN);
    assert_eq!(server["token_endpoint"], format!("{ORIGIN}/token"));
    assert_eq!(
        server["grant_types_supported"],
        json!([oid4vci::PRE_AUTHORIZED_GRANT, "refresh_token"])
    );
}

/// Offer → token → nonce → a batch of three → refresh → another batch; the credentials verify
/// and each is bound to its own proof's key. Every grant of the way is then spent.
async fn offer_token_nonce_batch_refresh(url: String) {
    let issuer = issuer_on(Some(url), Attribute::Income).await;
    let enrolment = issuer.enrolment_for(&ana()).await;
    let offer = tacit_issuer::oid4vci::credential_offer(ORIGIN, Attribute::Income, &enrolment);
    let offer = CredentialOffer::parse(&offer.to_uri()).unwrap();
    assert_eq!(offer.pre_authorized_code, enrolment.pre_authorized_code);

    let first = token(&issuer, &pre_authorized(&enrolment)).await;
    let (access, refresh) = tokens(&first);
    let nonce = c_nonce(&issuer).await;
    let body = credential_body(&proofs(&issuer, 3, &nonce));
    let batch = credential(&issuer, Some(&access), body.clone()).await;
    let credentials = verified(&issuer, &batch).await;
    assert_eq!(credentials.len(), 3);
    for credential in &credentials {
        assert_eq!(
            credential.disclosure("income_below_30000").unwrap().value,
            json!(true)
        );
    }
    // The answer carries no refresh token of the old kind: refresh is the token endpoint's.
    assert!(batch.2.get("refresh_token").is_none(), "{}", batch.2);

    // Each grant worked once.
    let again = token(&issuer, &pre_authorized(&enrolment)).await;
    assert_oauth(&again, StatusCode::BAD_REQUEST, "invalid_grant");
    let replay = credential(&issuer, Some(&access), body).await;
    assert_oauth(&replay, StatusCode::BAD_REQUEST, "invalid_nonce");
    let fresh = c_nonce(&issuer).await;
    let replay = credential(
        &issuer,
        Some(&access),
        credential_body(&proofs(&issuer, 1, &fresh)),
    )
    .await;
    assert_oauth(&replay, StatusCode::UNAUTHORIZED, "invalid_token");

    // Refresh: a new access token and a new refresh token; the old refresh token is spent.
    let (access, next_refresh) = tokens(
        &token(
            &issuer,
            &TokenRequest::Refresh {
                refresh_token: refresh.clone(),
            },
        )
        .await,
    );
    assert_ne!(next_refresh, refresh);
    let nonce = c_nonce(&issuer).await;
    let batch = credential(
        &issuer,
        Some(&access),
        credential_body(&proofs(&issuer, 2, &nonce)),
    )
    .await;
    assert_eq!(verified(&issuer, &batch).await.len(), 2);
    let old = token(
        &issuer,
        &TokenRequest::Refresh {
            refresh_token: refresh,
        },
    )
    .await;
    assert_oauth(&old, StatusCode::BAD_REQUEST, "invalid_grant");
    assert_eq!(issuer.db.issued_count().await.unwrap(), 2);
}

/// The token endpoint refuses a wrong transaction code, another person's, a mangled
/// pre-authorized code, an unknown grant and a JSON body, and none of it spends the offer.
async fn token_refusals_spend_nothing(url: String) {
    let issuer = issuer_on(Some(url), Attribute::Income).await;
    let ana = issuer.enrolment_for(&ana()).await;
    let ben = issuer.enrolment_for(&ben()).await;
    let refused = [
        // Ana's offer with Ben's code; Ben's offer with Ana's code.
        TokenRequest::PreAuthorized {
            pre_authorized_code: ana.pre_authorized_code.clone(),
            tx_code: ben.code.clone(),
        },
        TokenRequest::PreAuthorized {
            pre_authorized_code: ben.pre_authorized_code.clone(),
            tx_code: ana.code.clone(),
        },
        // A pre-authorized code one character off.
        TokenRequest::PreAuthorized {
            pre_authorized_code: flip_last(&ana.pre_authorized_code),
            tx_code: ana.code.clone(),
        },
        // The refresh grant given a pre-authorized code.
        TokenRequest::Refresh {
            refresh_token: ana.pre_authorized_code.clone(),
        },
    ];
    for request in &refused {
        let answer = token(&issuer, request).await;
        assert_oauth(&answer, StatusCode::BAD_REQUEST, "invalid_grant");
    }
    let cases = [
        (
            "grant_type=authorization_code&code=abc",
            "unsupported_grant_type",
        ),
        ("pre-authorized_code=abc", "invalid_request"),
        (
            "grant_type=refresh_token&refresh_token=a&refresh_token=b",
            "invalid_request",
        ),
        (
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Apre-authorized_code&pre-authorized_code=x",
            "invalid_request",
        ),
    ];
    for (body, code) in cases {
        let answer = send(&issuer.app, form("/token", body.to_owned())).await;
        assert_oauth(&answer, StatusCode::BAD_REQUEST, code);
    }
    // The same form as JSON is not a token request.
    let json_body = Request::post("/token")
        .header("content-type", "application/json")
        .body(Body::from(oid4vci::token_request_body(&pre_authorized(
            &ana,
        ))))
        .unwrap();
    let (status, _, _) = send(&issuer.app, json_body).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    // Both offers still work, each for its own person, once.
    for (enrolment, name) in [(&ana, "Ana Demo"), (&ben, "Ben Demo")] {
        let (access, _) = tokens(&token(&issuer, &pre_authorized(enrolment)).await);
        let nonce = c_nonce(&issuer).await;
        let batch = credential(
            &issuer,
            Some(&access),
            credential_body(&proofs(&issuer, 1, &nonce)),
        )
        .await;
        let credential = &verified(&issuer, &batch).await[0];
        let expected = json!(name == "Ana Demo");
        assert_eq!(
            credential.disclosure("income_below_30000").unwrap().value,
            expected
        );
    }
}

fn flip_last(text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let last = chars.last_mut().unwrap();
    *last = if *last == 'A' { 'B' } else { 'A' };
    chars.into_iter().collect()
}

/// The credential endpoint refuses each bad request without spending its access token or its
/// nonce: no token, a forged token, a proof for another issuer, a stale or future proof, a
/// proof by another key than its header's, mixed nonces, one key twice, too many proofs,
/// another configuration, unknown members. Then the same token and nonce still work.
async fn credential_refusals_spend_nothing(url: String) {
    let issuer = issuer_on(Some(url), Attribute::Income).await;
    let enrolment = issuer.enrolment_for(&ana()).await;
    let (access, _) = tokens(&token(&issuer, &pre_authorized(&enrolment)).await);
    let nonce = c_nonce(&issuer).await;
    let other_nonce = c_nonce(&issuer).await;
    let now = issuer.now();
    let good = key_proof(&holder(1), ORIGIN, &nonce, now);

    let missing = credential(&issuer, None, credential_body(std::slice::from_ref(&good))).await;
    assert_oauth(&missing, StatusCode::UNAUTHORIZED, "invalid_token");
    let forged = credential(
        &issuer,
        Some(&flip_last(&access)),
        credential_body(std::slice::from_ref(&good)),
    )
    .await;
    assert_oauth(&forged, StatusCode::UNAUTHORIZED, "invalid_token");

    // A proof whose header names key 1 but which key 2 signed.
    let swapped = {
        let input = proof_signing_input(&jwk(&holder(1)), ORIGIN, &nonce, now);
        let signature: Signature = holder(2).sign(input.as_bytes());
        finish_proof(&input, &signature.to_bytes().into())
    };
    let bad_proofs: Vec<(Vec<String>, &str)> = vec![
        (
            vec![key_proof(&holder(1), "http://127.0.0.1:9999", &nonce, now)],
            "invalid_proof",
        ),
        (
            vec![key_proof(
                &holder(1),
                ORIGIN,
                &nonce,
                now.plus_millis(-10 * MINUTE),
            )],
            "invalid_proof",
        ),
        (
            vec![key_proof(
                &holder(1),
                ORIGIN,
                &nonce,
                now.plus_millis(2 * MINUTE),
            )],
            "invalid_proof",
        ),
        (vec![swapped], "invalid_proof"),
        (
            vec![
                good.clone(),
                key_proof(&holder(2), ORIGIN, &other_nonce, now),
            ],
            "invalid_nonce",
        ),
        (
            vec![good.clone(), key_proof(&holder(1), ORIGIN, &nonce, now)],
            "invalid_credential_request",
        ),
        (
            (1..=u8::try_from(MAX_BATCH + 1).unwrap())
                .map(|i| key_proof(&holder(i), ORIGIN, &nonce, now))
                .collect(),
            "invalid_credential_request",
        ),
        (vec![], "invalid_credential_request"),
    ];
    for (list, code) in bad_proofs {
        let answer = credential(&issuer, Some(&access), credential_body(&list)).await;
        assert_oauth(&answer, StatusCode::BAD_REQUEST, code);
    }
    let other_configuration = json!({
        "credential_configuration_id": "birth_date",
        "proofs": { "jwt": [good.clone()] },
    });
    let answer = credential(&issuer, Some(&access), other_configuration).await;
    assert_oauth(
        &answer,
        StatusCode::BAD_REQUEST,
        "unknown_credential_configuration",
    );
    let extra = json!({
        "credential_configuration_id": "income",
        "proofs": { "jwt": [good.clone()] },
        "holder_keys": [],
    });
    let answer = credential(&issuer, Some(&access), extra).await;
    assert_oauth(
        &answer,
        StatusCode::BAD_REQUEST,
        "invalid_credential_request",
    );
    // A nonce the issuer never made, in a well-made proof.
    let unknown = key_proof(&holder(1), ORIGIN, &flip_last(&nonce), now);
    let answer = credential(&issuer, Some(&access), credential_body(&[unknown])).await;
    assert_oauth(&answer, StatusCode::BAD_REQUEST, "invalid_nonce");
    assert_eq!(issuer.db.issued_count().await.unwrap(), 0);

    // Nothing was spent: the same token and nonce give the batch.
    let batch = credential(
        &issuer,
        Some(&access),
        credential_body(std::slice::from_ref(&good)),
    )
    .await;
    assert_eq!(verified(&issuer, &batch).await.len(), 1);
    // And now the nonce is spent, for a fresh token too.
    let (_, refresh) = tokens(
        &token(
            &issuer,
            &pre_authorized(&issuer.enrolment_for(&ana()).await),
        )
        .await,
    );
    let (fresh, _) = tokens(
        &token(
            &issuer,
            &TokenRequest::Refresh {
                refresh_token: refresh,
            },
        )
        .await,
    );
    let reused = credential(&issuer, Some(&fresh), credential_body(&[good])).await;
    assert_oauth(&reused, StatusCode::BAD_REQUEST, "invalid_nonce");
}

/// An access token lives five minutes; a revoked person's access token, refresh token and
/// unused offer are all refused.
async fn expiry_and_revocation(url: String) {
    let issuer = issuer_on(Some(url), Attribute::Income).await;
    let (stale, _) = tokens(
        &token(
            &issuer,
            &pre_authorized(&issuer.enrolment_for(&ana()).await),
        )
        .await,
    );
    issuer.set_time(NOW + 5 * MINUTE + 1_000);
    let nonce = c_nonce(&issuer).await;
    let late = credential(
        &issuer,
        Some(&stale),
        credential_body(&proofs(&issuer, 1, &nonce)),
    )
    .await;
    assert_oauth(&late, StatusCode::UNAUTHORIZED, "invalid_token");

    let (access, refresh) = tokens(
        &token(
            &issuer,
            &pre_authorized(&issuer.enrolment_for(&ana()).await),
        )
        .await,
    );
    let unused = issuer.enrolment_for(&ana()).await;
    let ended = issuer.db.revoke("p-ana", issuer.now()).await.unwrap();
    assert_eq!(
        ended, 4,
        "one unused code, two refresh tokens and one access token were live"
    );
    let answer = credential(
        &issuer,
        Some(&access),
        credential_body(&proofs(&issuer, 1, &nonce)),
    )
    .await;
    assert_oauth(&answer, StatusCode::UNAUTHORIZED, "invalid_token");
    let answer = token(
        &issuer,
        &TokenRequest::Refresh {
            refresh_token: refresh,
        },
    )
    .await;
    assert_oauth(&answer, StatusCode::BAD_REQUEST, "invalid_grant");
    let answer = token(&issuer, &pre_authorized(&unused)).await;
    assert_oauth(&answer, StatusCode::BAD_REQUEST, "invalid_grant");
    assert_eq!(issuer.db.issued_count().await.unwrap(), 0);
}

/// Sends all `requests` at once; returns the answers in order.
async fn all_at_once(issuer: &TestIssuer, requests: Vec<Request<Body>>) -> Vec<Answer> {
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(requests.len()));
    let tasks: Vec<_> = requests
        .into_iter()
        .map(|request| {
            let app = issuer.app.clone();
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                send(&app, request).await
            })
        })
        .collect();
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.unwrap());
    }
    out
}

/// Exactly one answer is 200; every other is refused with `code`.
fn exactly_one_ok(answers: &[Answer], status: StatusCode, code: &str) {
    let ok = answers.iter().filter(|a| a.0 == StatusCode::OK).count();
    assert_eq!(ok, 1, "{answers:?}");
    for answer in answers.iter().filter(|a| a.0 != StatusCode::OK) {
        assert_oauth(answer, status, code);
    }
}

/// One offer redeemed by 20 token requests at once gives one access token; one access token
/// used by 20 credential requests at once (each with its own nonce) gives one batch.
async fn races_give_one(url: String) {
    let issuer = issuer_on(Some(url), Attribute::Income).await;
    let enrolment = issuer.enrolment_for(&ana()).await;
    let body = oid4vci::token_request_body(&pre_authorized(&enrolment));
    let requests = (0..20).map(|_| form("/token", body.clone())).collect();
    let answers = all_at_once(&issuer, requests).await;
    exactly_one_ok(&answers, StatusCode::BAD_REQUEST, "invalid_grant");
    let winner = answers.iter().find(|a| a.0 == StatusCode::OK).unwrap();
    let (access, _) = tokens(winner);

    let mut requests = Vec::new();
    for i in 0..20u8 {
        let nonce = c_nonce(&issuer).await;
        let proof = key_proof(&holder(i + 1), ORIGIN, &nonce, issuer.now());
        let body = credential_body(&[proof]);
        requests.push(
            Request::post("/credential")
                .header("content-type", "application/json")
                .header("authorization", format!("Bearer {access}"))
                .body(Body::from(serde_json::to_vec(&body).unwrap()))
                .unwrap(),
        );
    }
    let answers = all_at_once(&issuer, requests).await;
    exactly_one_ok(&answers, StatusCode::UNAUTHORIZED, "invalid_token");
    assert_eq!(issuer.db.issued_count().await.unwrap(), 1);
}

tacit_testkit::on_both_backends!(
    worker_threads = 4,
    sqlite_file = "issuer.db";
    metadata_describes_the_flow,
    offer_token_nonce_batch_refresh,
    token_refusals_spend_nothing,
    credential_refusals_spend_nothing,
    expiry_and_revocation,
    races_give_one,
);
