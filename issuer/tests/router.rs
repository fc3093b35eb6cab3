//! Every endpoint and every refusal, through the router with `tower::ServiceExt::oneshot`, on a
//! SQLite file.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::*;
use serde_json::{Value, json};
use tacit_issuer::predicates::CREDENTIAL_VALIDITY_MS;

/// 2026-12-01T00:00:00Z: the `iat` of everything issued on the day of `NOW`.
const TODAY: i64 = NOW - 10 * 60 * MINUTE;
use tacit_issuer::{AppState, Attribute, Config, KeyStore, MAX_BODY_BYTES, Person, key_id};
use tacit_protocol::sd_jwt::{
    Credential, DEFAULT_MAX_KB_AGE_MS, IssuerMetadata, TrustedIssuer, present, verify_presentation,
};
use wallet_core::Timestamp;

async fn metadata(issuer: &TestIssuer) -> IssuerMetadata {
    let (status, headers, bytes) = send_raw(&issuer.app, get("/.well-known/jwt-vc-issuer")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/json");
    IssuerMetadata::parse(&bytes).unwrap()
}

fn disclosed(credential: &Credential, name: &str) -> Value {
    credential.disclosure(name).unwrap().value.clone()
}

#[tokio::test]
async fn a_batch_is_issued_verifies_and_carries_the_income_ladder() {
    let issuer = income_issuer().await;
    let code = issuer.code_for(&ana()).await;
    let nonce = issuer.nonce().await;
    let response = issuer.redeem(&code, &nonce, 10).await;
    let (status, headers, body) = &response;
    assert_eq!(*status, StatusCode::OK, "{body}");
    assert_eq!(headers["cache-control"], "no-store");
    let mut fields: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "credentials",
            "expires_at",
            "issuer",
            "issuer_name",
            "refresh_token",
            "vct"
        ]
    );
    assert_eq!(body["issuer"], ORIGIN);
    assert_eq!(body["issuer_name"], "Tax Office Nordstadt");
    assert_eq!(body["vct"], "https://tacit.example/vct/income");
    assert_eq!(body["expires_at"], TODAY + CREDENTIAL_VALIDITY_MS);
    let meta = metadata(&issuer).await;
    assert_eq!(meta.issuer, ORIGIN);
    let credentials = body["credentials"].as_array().unwrap();
    assert_eq!(credentials.len(), 10);
    let mut seen_salts = std::collections::HashSet::new();
    for (i, text) in credentials.iter().enumerate() {
        let credential = Credential::parse(text.as_str().unwrap()).unwrap();
        credential
            .verify_issuer(&meta.jwks, Timestamp::from_millis(NOW + MINUTE))
            .unwrap();
        assert_eq!(credential.iss(), ORIGIN);
        assert_eq!(credential.vct(), "https://tacit.example/vct/income");
        assert_eq!(credential.kid(), key_id(&issuer_key()));
        assert_eq!(
            credential.holder_jwk(),
            &jwk(&holder(u8::try_from(i + 1).unwrap()))
        );
        // On the day's grid: midnight UTC, 30 days.
        assert_eq!(credential.iat().millis(), TODAY);
        assert_eq!(credential.exp().millis(), TODAY + CREDENTIAL_VALIDITY_MS);
        assert_eq!(credential.plain().get("currency"), Some(&json!("EUR")));
        assert_eq!(credential.disclosures().len(), 39);
        // 28,500.00: below 30,000 and above, not below, 25,000.
        assert_eq!(disclosed(&credential, "income_below_10000"), json!(false));
        assert_eq!(disclosed(&credential, "income_below_25000"), json!(false));
        assert_eq!(disclosed(&credential, "income_below_30000"), json!(true));
        assert_eq!(disclosed(&credential, "income_below_200000"), json!(true));
        for d in credential.disclosures() {
            assert!(seen_salts.insert(d.salt.clone()), "a salt repeats");
        }
        // A holder presents one predicate; any SD-JWT verifier accepts it.
        let presentation = present(
            &credential,
            &["income_below_30000"],
            &holder(u8::try_from(i + 1).unwrap()),
            "https://housing.example",
            "site-nonce-1",
            Timestamp::from_millis(NOW + 2 * MINUTE),
        )
        .unwrap();
        let verified = verify_presentation(
            &presentation,
            &[TrustedIssuer {
                iss: ORIGIN.to_owned(),
                jwks: meta.jwks.clone(),
            }],
            "https://housing.example",
            "site-nonce-1",
            Timestamp::from_millis(NOW + 3 * MINUTE),
            DEFAULT_MAX_KB_AGE_MS,
        )
        .unwrap();
        assert_eq!(verified.disclosed.len(), 1);
        assert_eq!(verified.disclosed["income_below_30000"], json!(true));
    }
    assert_eq!(issuer.db.issued_count().await.unwrap(), 1);
}

/// What a credential says, as text: its header and payload without the random parts (`_sd`
/// digests, the holder key), and each disclosure's name and value (without its salt). Random
/// base64url text (salts, digests, keys, signatures, tokens) may spell any short string by
/// chance, so the canary reads the meaning, not the bytes.
fn decoded_pieces(credential: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    for part in credential
        .split('~')
        .next()
        .unwrap_or_default()
        .split('.')
        .take(2)
    {
        let mut json: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap();
        if let Some(object) = json.as_object_mut() {
            object.remove("_sd");
            object.remove("cnf");
            object.remove("kid");
        }
        pieces.push(json.to_string());
    }
    for disclosure in credential.split('~').skip(1).filter(|p| !p.is_empty()) {
        let array: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(disclosure).unwrap()).unwrap();
        pieces.push(format!("{} {}", array[1], array[2]));
    }
    pieces
}

#[tokio::test]
async fn no_raw_value_appears_anywhere_in_the_answer() {
    for attribute in [Attribute::Income, Attribute::BirthDate] {
        let issuer = issuer_on(None, attribute).await;
        let person = Person {
            person_id: "p-canary-7f3a".to_owned(),
            name: "Zed Canary".to_owned(),
            income_minor: Some(4_123_456),
            currency: Some("EUR".to_owned()),
            birth_date: Some("1987-03-19".to_owned()),
        };
        let code = issuer.code_for(&person).await;
        let nonce = issuer.nonce().await;
        let (status, _, bytes) =
            send_raw(&issuer.app, post_json(&code_request(&code, &nonce, 3))).await;
        assert_eq!(status, StatusCode::OK);
        let text = String::from_utf8(bytes).unwrap();
        let body: Value = serde_json::from_str(&text).unwrap();
        // The answer without its random tokens (the credentials are read below).
        let mut bare = body.clone();
        bare["credentials"] = json!([]);
        bare["refresh_token"] = json!("");
        let mut haystacks = vec![bare.to_string()];
        for credential in body["credentials"].as_array().unwrap() {
            haystacks.extend(decoded_pieces(credential.as_str().unwrap()));
        }
        // 3 credentials, each a header, a payload and at least 4 disclosures.
        assert!(haystacks.len() > 3 * 6, "the credentials were decoded");
        for hay in &haystacks {
            for canary in [
                "4123456", "41234", "41,234", "1987", "03-19", "p-canary", "Zed", "Canary",
            ] {
                assert!(
                    !hay.contains(canary),
                    "{canary} leaked in {attribute:?}: {hay}"
                );
            }
        }
    }
}

/// Issue 28, item 2: an age credential's `exp` used to be midnight of the next birthday that
/// flips one of its answers (born 2008-12-11, asked 2026-12-01: `exp` 2026-12-11), telling any
/// site the date of birth. Now `iat` and `exp` are the day's grid, whatever the birth date.
#[tokio::test]
async fn the_age_issuer_carries_flat_age_predicates_and_the_days_lifetime() {
    let mut config = config(Attribute::BirthDate);
    config.name = "Civil Registry".to_owned();
    let issuer = issuer_with(None, config).await;
    // Turns 18 on 2026-12-11, ten days after NOW; the other was born three years earlier.
    let soon = Person {
        birth_date: Some("2008-12-11".to_owned()),
        ..ana()
    };
    let far = Person {
        person_id: "p-far".to_owned(),
        birth_date: Some("2005-07-30".to_owned()),
        ..ana()
    };
    let mut lifetimes = Vec::new();
    for person in [&soon, &far] {
        let code = issuer.code_for(person).await;
        let nonce = issuer.nonce().await;
        let (status, _, body) = issuer.redeem(&code, &nonce, 2).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["vct"], "https://tacit.example/vct/age");
        assert_eq!(body["expires_at"], TODAY + CREDENTIAL_VALIDITY_MS);
        let credential = Credential::parse(body["credentials"][0].as_str().unwrap()).unwrap();
        lifetimes.push((credential.iat().millis(), credential.exp().millis()));
        if person.person_id == soon.person_id {
            assert!(credential.plain().is_empty(), "{:?}", credential.plain());
            let mut names: Vec<&str> = credential
                .disclosures()
                .iter()
                .map(|d| d.name.as_str())
                .collect();
            names.sort_unstable();
            assert_eq!(
                names,
                [
                    "age_equal_or_over_16",
                    "age_equal_or_over_18",
                    "age_equal_or_over_21",
                    "age_equal_or_over_65"
                ]
            );
            assert_eq!(disclosed(&credential, "age_equal_or_over_16"), json!(true));
            assert_eq!(disclosed(&credential, "age_equal_or_over_18"), json!(false));
            assert_eq!(disclosed(&credential, "age_equal_or_over_21"), json!(false));
            assert_eq!(disclosed(&credential, "age_equal_or_over_65"), json!(false));
        }
    }
    let birthday_ms = 1_796_947_200_000; // 2026-12-11T00:00:00Z
    assert_eq!(
        lifetimes,
        [(TODAY, TODAY + CREDENTIAL_VALIDITY_MS); 2],
        "one lifetime for both birth dates"
    );
    assert_ne!(lifetimes[0].1, birthday_ms);
}

#[tokio::test]
async fn a_refresh_token_fetches_the_next_batch_once() {
    let issuer = income_issuer().await;
    let (code, refresh) = issuer.first_batch().await;
    assert_eq!(refresh.len(), 43);
    // The code is spent.
    let nonce = issuer.nonce().await;
    let again = issuer.redeem(&code, &nonce, 1).await;
    assert_refused(&again, StatusCode::FORBIDDEN, "code_refused");
    // The refresh token works, with new keys, and hands out a new token.
    let nonce = issuer.nonce().await;
    let (status, _, second) = issuer
        .post(&json!({ "refresh_token": refresh, "nonce": nonce, "holder_keys": [entry(&holder(50), &nonce)] }))
        .await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let next = second["refresh_token"].as_str().unwrap();
    assert_ne!(next, refresh);
    // The old token is spent.
    let nonce = issuer.nonce().await;
    let reused = issuer
        .post(
            &json!({ "refresh_token": refresh, "nonce": nonce, "holder_keys": entries(1, &nonce) }),
        )
        .await;
    assert_refused(&reused, StatusCode::FORBIDDEN, "refresh_refused");
    // A made-up or malformed token too.
    for token in ["A".repeat(43), "short".to_owned(), "é".repeat(43)] {
        let nonce = issuer.nonce().await;
        let made_up = issuer
            .post(&json!({ "refresh_token": token, "nonce": nonce, "holder_keys": entries(1, &nonce) }))
            .await;
        assert_refused(&made_up, StatusCode::FORBIDDEN, "refresh_refused");
    }
    // An expired one.
    issuer.set_time(NOW + tacit_issuer::REFRESH_VALIDITY_MS + MINUTE);
    let nonce = issuer.nonce().await;
    let stale = issuer
        .post(&json!({ "refresh_token": next, "nonce": nonce, "holder_keys": entries(1, &nonce) }))
        .await;
    assert_refused(&stale, StatusCode::FORBIDDEN, "refresh_refused");
    assert_eq!(issuer.db.issued_count().await.unwrap(), 2);
}

#[tokio::test]
async fn nonces_are_single_use_fresh_and_ours() {
    let issuer = income_issuer().await;
    let (status, headers, body) = send(&issuer.app, get("/v1/nonce")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(body["expires_at"], NOW + tacit_issuer::NONCE_VALIDITY_MS);
    assert_eq!(body["nonce"].as_str().unwrap().len(), 43);
    assert_ne!(issuer.nonce().await, issuer.nonce().await);

    // Reused.
    let nonce = issuer.nonce().await;
    let code = issuer.code_for(&ana()).await;
    let ok = issuer.redeem(&code, &nonce, 1).await;
    assert_eq!(ok.0, StatusCode::OK);
    let code = issuer.code_for(&ana()).await;
    let reused = issuer.redeem(&code, &nonce, 1).await;
    assert_refused(&reused, StatusCode::UNAUTHORIZED, "nonce_refused");
    // Made up (well-formed and not).
    for made_up in ["B".repeat(43), "x".to_owned(), String::new()] {
        let r = issuer.redeem(&code, &made_up, 1).await;
        assert_refused(&r, StatusCode::UNAUTHORIZED, "nonce_refused");
    }
    // Expired: five minutes.
    let nonce = issuer.nonce().await;
    issuer.set_time(NOW + tacit_issuer::NONCE_VALIDITY_MS);
    let stale = issuer.redeem(&code, &nonce, 1).await;
    assert_refused(&stale, StatusCode::UNAUTHORIZED, "nonce_refused");
    // None of these spent the code.
    let nonce = issuer.nonce().await;
    let ok = issuer.redeem(&code, &nonce, 1).await;
    assert_eq!(ok.0, StatusCode::OK, "{}", ok.2);
}

#[tokio::test]
async fn codes_are_refused_when_unknown_used_expired_or_malformed_and_refusals_spend_nothing() {
    let issuer = income_issuer().await;
    let code = issuer.code_for(&ana()).await;
    let nonce = issuer.nonce().await;
    // Unknown (well-formed) code: refused, and the nonce is not spent.
    let unknown = tacit_protocol::request_auth::make_enrolment_code([9; 10]);
    let r = issuer.redeem(&unknown, &nonce, 1).await;
    assert_refused(&r, StatusCode::FORBIDDEN, "code_refused");
    for bad in [
        "",
        "not-a-code",
        "0000-0000-0000-000U",
        "ABCD-EFGH-JKMN-PQRS-TVWX",
    ] {
        let r = issuer
            .post(&json!({ "code": bad, "nonce": nonce, "holder_keys": entries(1, &nonce) }))
            .await;
        assert_refused(&r, StatusCode::FORBIDDEN, "code_refused");
    }
    // Lower case and without dashes is the same code.
    let typed = code.canonical().replace('-', "").to_ascii_lowercase();
    let ok = issuer
        .post(&json!({ "code": typed, "nonce": nonce, "holder_keys": entries(1, &nonce) }))
        .await;
    assert_eq!(ok.0, StatusCode::OK, "{}", ok.2);
    // Used.
    let nonce = issuer.nonce().await;
    let used = issuer.redeem(&code, &nonce, 1).await;
    assert_refused(&used, StatusCode::FORBIDDEN, "code_refused");
    // Expired (a day).
    let late = issuer.code_for(&ana()).await;
    issuer.set_time(NOW + 24 * 60 * MINUTE);
    let nonce = issuer.nonce().await;
    let expired = issuer.redeem(&late, &nonce, 1).await;
    assert_refused(&expired, StatusCode::FORBIDDEN, "code_refused");
}

#[tokio::test]
async fn a_person_without_the_attribute_gets_no_record_and_keeps_the_code() {
    let issuer = issuer_on(None, Attribute::BirthDate).await;
    let person = Person {
        birth_date: None,
        ..ana()
    };
    let code = issuer.code_for(&person).await;
    for _ in 0..2 {
        let nonce = issuer.nonce().await;
        let r = issuer.redeem(&code, &nonce, 1).await;
        assert_refused(&r, StatusCode::CONFLICT, "no_record");
    }
    assert_eq!(issuer.db.issued_count().await.unwrap(), 0);
}

#[tokio::test]
async fn holder_keys_need_valid_distinct_keys_and_proofs_over_this_issuer_and_nonce() {
    let issuer = income_issuer().await;
    let code = issuer.code_for(&ana()).await;
    let nonce = issuer.nonce().await;
    let body =
        |keys: Vec<Value>| json!({ "code": code.canonical(), "nonce": nonce, "holder_keys": keys });

    assert_refused(
        &issuer.post(&body(vec![])).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "batch_size",
    );
    let many: Vec<Value> = (1..=21).map(|i| entry(&holder(i), &nonce)).collect();
    assert_refused(
        &issuer.post(&body(many)).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "batch_size",
    );
    let twenty: Vec<Value> = (1..=20).map(|i| entry(&holder(i), &nonce)).collect();

    let dup = vec![
        entry(&holder(1), &nonce),
        entry(&holder(2), &nonce),
        entry(&holder(1), &nonce),
    ];
    assert_refused(
        &issuer.post(&body(dup)).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "duplicate_holder_key",
    );

    // Not a P-256 point / wrong curve.
    let mut off_curve = entry(&holder(2), &nonce);
    off_curve["jwk"]["y"] = off_curve["jwk"]["x"].clone();
    let r = issuer
        .post(&body(vec![entry(&holder(1), &nonce), off_curve]))
        .await;
    assert_refused(&r, StatusCode::UNPROCESSABLE_ENTITY, "bad_holder_key");
    assert!(r.2["message"].as_str().unwrap().contains("holder key 1"));
    let mut p384 = entry(&holder(1), &nonce);
    p384["jwk"]["crv"] = json!("P-384");
    assert_refused(
        &issuer.post(&body(vec![p384])).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "bad_holder_key",
    );

    // Proofs: over another nonce, another issuer, by another key, malformed.
    let other_nonce = issuer.nonce().await;
    let cases = [
        json!({ "jwk": jwk(&holder(1)), "proof": proof(&holder(1), ORIGIN, &other_nonce) }),
        json!({ "jwk": jwk(&holder(1)), "proof": proof(&holder(1), "http://evil.example", &nonce) }),
        json!({ "jwk": jwk(&holder(1)), "proof": proof(&holder(2), ORIGIN, &nonce) }),
        json!({ "jwk": jwk(&holder(1)), "proof": "AAAA" }),
        json!({ "jwk": jwk(&holder(1)), "proof": "" }),
    ];
    for case in cases {
        let r = issuer
            .post(&body(vec![entry(&holder(3), &nonce), case.clone()]))
            .await;
        assert_refused(&r, StatusCode::UNAUTHORIZED, "bad_proof");
        assert!(
            r.2["message"].as_str().unwrap().contains("holder key 1"),
            "{case}"
        );
    }
    // None of that spent the nonce or the code: a batch of 20 still works.
    let (status, _, ok) = issuer.post(&body(twenty)).await;
    assert_eq!(status, StatusCode::OK, "{ok}");
    assert_eq!(ok["credentials"].as_array().unwrap().len(), 20);
}

#[tokio::test]
async fn the_schema_is_strict() {
    let issuer = income_issuer().await;
    let code = issuer.code_for(&ana()).await;
    let nonce = issuer.nonce().await;
    let keys = entries(1, &nonce);
    let invalid = [
        json!({ "code": code.canonical(), "nonce": nonce, "holder_keys": keys, "income": 1 }),
        json!({ "code": code.canonical(), "holder_keys": keys }),
        json!({ "code": code.canonical(), "nonce": nonce }),
        json!({ "code": 7, "nonce": nonce, "holder_keys": keys }),
        json!({ "code": code.canonical(), "nonce": nonce, "holder_keys": [{ "jwk": jwk(&holder(1)) }] }),
        json!({ "code": code.canonical(), "nonce": nonce, "holder_keys": [{ "jwk": jwk(&holder(1)), "proof": "x", "kid": "k" }] }),
        json!({ "code": code.canonical(), "nonce": nonce, "holder_keys": [{ "jwk": { "kty": "EC", "crv": "P-256", "x": "a", "y": "b", "d": "secret" }, "proof": "x" }] }),
        json!([1, 2]),
        json!(null),
    ];
    for body in invalid {
        let r = issuer.post(&body).await;
        assert_refused(&r, StatusCode::UNPROCESSABLE_ENTITY, "invalid_request");
        assert!(!r.2["message"].as_str().unwrap().contains(code.canonical()));
    }
    // Duplicate members are refused too.
    let text = format!(
        r#"{{"code":"{}","code":"{}","nonce":"{nonce}","holder_keys":{}}}"#,
        code.canonical(),
        code.canonical(),
        serde_json::to_string(&keys).unwrap()
    );
    let r = send(
        &issuer.app,
        Request::post("/v1/credentials")
            .header("content-type", "application/json")
            .body(Body::from(text))
            .unwrap(),
    )
    .await;
    assert_refused(&r, StatusCode::UNPROCESSABLE_ENTITY, "invalid_request");
    // Both or neither grant.
    let both = json!({ "code": code.canonical(), "refresh_token": "A".repeat(43), "nonce": nonce, "holder_keys": keys });
    assert_refused(
        &issuer.post(&both).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "code_or_refresh_token",
    );
    let neither = json!({ "nonce": nonce, "holder_keys": keys });
    assert_refused(
        &issuer.post(&neither).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "code_or_refresh_token",
    );
    // Not JSON.
    let r = send(
        &issuer.app,
        Request::post("/v1/credentials")
            .header("content-type", "application/json")
            .body(Body::from("{not json"))
            .unwrap(),
    )
    .await;
    assert_refused(&r, StatusCode::UNPROCESSABLE_ENTITY, "invalid_request");
    // Content type.
    for ct in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let mut request = Request::post("/v1/credentials");
        if let Some(ct) = ct {
            request = request.header("content-type", ct);
        }
        let r = send(&issuer.app, request.body(Body::from("{}")).unwrap()).await;
        assert_refused(
            &r,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        );
    }
    // Too large.
    let big = format!(r#"{{"nonce":"{}"}}"#, "a".repeat(MAX_BODY_BYTES));
    let r = send(
        &issuer.app,
        Request::post("/v1/credentials")
            .header("content-type", "application/json")
            .body(Body::from(big))
            .unwrap(),
    )
    .await;
    assert_refused(&r, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    // And the code was never spent.
    let r = issuer
        .post(&json!({ "code": code.canonical(), "nonce": nonce, "holder_keys": keys }))
        .await;
    assert_eq!(r.0, StatusCode::OK, "{}", r.2);
}

#[tokio::test]
async fn metadata_is_public_and_names_every_key() {
    let issuer = income_issuer().await;
    let (status, headers, body) = send(
        &issuer.app,
        Request::get("/.well-known/jwt-vc-issuer")
            .header("origin", "https://any-site.example")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert_eq!(body["issuer"], ORIGIN);
    let keys = body["jwks"]["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["kid"], key_id(&issuer_key()));
    assert_eq!(keys[0]["crv"], "P-256");
    assert!(keys[0].get("d").is_none());
    // The secret never appears.
    let secret = hex::encode(issuer_key().to_bytes());
    assert!(!body.to_string().contains(&secret));
    // Preflight for the POST from a wallet page.
    let (status, headers, _) = send_raw(
        &issuer.app,
        Request::options("/v1/credentials")
            .header("origin", "http://127.0.0.1:8080")
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert!(status.is_success(), "{status}");
    assert_eq!(headers["access-control-allow-origin"], "*");
    // Info.
    let (status, _, info) = send(&issuer.app, get("/v1/issuer")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        info,
        json!({
            "issuer": ORIGIN,
            "name": "Tax Office Nordstadt",
            "attribute": "income",
            "vct": "https://tacit.example/vct/income",
            "metadata_url": "/.well-known/jwt-vc-issuer",
            "max_batch": 20,
            "default_batch": 10,
        })
    );
    let (status, _, health) = send(&issuer.app, get("/healthz")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(health["status"], "ok");
}

#[tokio::test]
async fn credentials_from_a_rotated_key_keep_verifying() {
    let issuer = income_issuer().await;
    let code = issuer.code_for(&ana()).await;
    let nonce = issuer.nonce().await;
    let (_, _, body) = issuer.redeem(&code, &nonce, 1).await;
    let old = Credential::parse(body["credentials"][0].as_str().unwrap()).unwrap();
    // Restart with the key rotated, on the same database.
    let mut keys = KeyStore::new(issuer_key(), Timestamp::from_millis(NOW - MINUTE));
    keys.rotate(Timestamp::from_millis(NOW)).unwrap();
    let new_kid = keys.active_kid().to_owned();
    let state = AppState::new(keys, issuer.db.clone(), &config(Attribute::Income), || {
        Timestamp::from_millis(NOW)
    })
    .unwrap();
    let app = tacit_issuer::app(state);
    let (_, _, bytes) = send_raw(&app, get("/.well-known/jwt-vc-issuer")).await;
    let meta = IssuerMetadata::parse(&bytes).unwrap();
    assert_eq!(meta.jwks.keys().len(), 2);
    old.verify_issuer(&meta.jwks, Timestamp::from_millis(NOW))
        .unwrap();
    // New credentials carry the new kid.
    let (_, _, nonce) = send(&app, get("/v1/nonce")).await;
    let nonce = nonce["nonce"].as_str().unwrap();
    let refresh = body["refresh_token"].as_str().unwrap();
    let (status, _, next) = send(
        &app,
        post_json(&json!({ "refresh_token": refresh, "nonce": nonce, "holder_keys": [entry(&holder(9), nonce)] })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{next}");
    let fresh = Credential::parse(next["credentials"][0].as_str().unwrap()).unwrap();
    assert_eq!(fresh.kid(), new_kid);
    fresh
        .verify_issuer(&meta.jwks, Timestamp::from_millis(NOW))
        .unwrap();
    // The old metadata alone does not know the new key.
    let old_meta = metadata(&issuer).await;
    assert!(
        fresh
            .verify_issuer(&old_meta.jwks, Timestamp::from_millis(NOW))
            .is_err()
    );
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_json() {
    let issuer = income_issuer().await;
    let r = send(&issuer.app, get("/v1/nothing")).await;
    assert_refused(&r, StatusCode::NOT_FOUND, "not_found");
    let r = send(&issuer.app, get("/v1/credentials")).await;
    assert_refused(&r, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
    assert_eq!(r.1["allow"], "POST");
    let r = send(
        &issuer.app,
        Request::post("/v1/nonce").body(Body::empty()).unwrap(),
    )
    .await;
    assert_refused(&r, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
}

#[tokio::test]
async fn the_rate_limit_answers_429_with_retry_after() {
    let mut config = Config {
        ..config(Attribute::Income)
    };
    config.limit_flags.rate_limit_per_minute = 2;
    let issuer = issuer_with(None, config).await;
    assert_eq!(send(&issuer.app, get("/v1/nonce")).await.0, StatusCode::OK);
    assert_eq!(send(&issuer.app, get("/v1/nonce")).await.0, StatusCode::OK);
    let r = send(&issuer.app, get("/v1/nonce")).await;
    assert_refused(&r, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    assert_eq!(r.1["retry-after"], "30");
    let r = issuer.post(&json!({})).await;
    assert_refused(&r, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    // The metadata is not limited.
    assert_eq!(
        send(&issuer.app, get("/.well-known/jwt-vc-issuer")).await.0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn every_answer_refuses_to_be_framed_or_to_load_anything() {
    let issuer = income_issuer().await;
    let mut answers = Vec::new();
    for path in [
        "/.well-known/jwt-vc-issuer",
        "/v1/issuer",
        "/v1/nonce",
        "/v1/openapi.json",
        "/healthz",
        "/nope",
    ] {
        answers.push(send_raw(&issuer.app, get(path)).await);
    }
    answers.push(send_raw(&issuer.app, post_json(&json!({ "junk": true }))).await);
    for (status, headers, _) in &answers {
        assert_eq!(
            headers["content-security-policy"], "default-src 'none'; frame-ancestors 'none'",
            "{status}"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff", "{status}");
        assert_eq!(headers["x-frame-options"], "DENY", "{status}");
    }
    let statuses: Vec<u16> = answers.iter().map(|(s, _, _)| s.as_u16()).collect();
    assert_eq!(statuses[..5], [200, 200, 200, 200, 200]);
    assert_eq!(statuses[5], 404);
    assert!((400..500).contains(&statuses[6]), "{statuses:?}");
}
