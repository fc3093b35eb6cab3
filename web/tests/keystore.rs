//! Glue tests of the install key in real Chromium (WebCrypto and IndexedDB through
//! `js/keystore.js`): what WebCrypto signs is exactly what `tacit_protocol::request_auth`
//! verifies, the private key cannot be exported, and the stored key survives a round trip
//! through IndexedDB still able to sign.

#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use js_sys::{Function, Promise, Reflect};
use tacit_protocol::request_auth::{AuthError, InstallKey, Jwk, RequestAuth, signing_input};
use tacit_web::keystore::{self, KeyPair};
use wallet_core::Timestamp;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

async fn public_key(pair: &KeyPair) -> InstallKey {
    let json = keystore::public_jwk_json(pair).await.unwrap();
    let jwk: Jwk = serde_json::from_str(&json).expect("WebCrypto's JWK is accepted");
    InstallKey::from_jwk(&jwk).unwrap()
}

/// Signs a request body the way the wallet does and returns the parsed headers.
async fn signed_headers(pair: &KeyPair, key: &InstallKey, ts: i64, body: &[u8]) -> RequestAuth {
    let input = signing_input("POST", "/v1/receipts", ts, body);
    let signature = keystore::sign(pair, input.as_bytes()).await.unwrap();
    assert_eq!(signature.len(), 64, "IEEE P1363 r||s");
    RequestAuth::parse(
        Some(key.id().as_str()),
        Some(&ts.to_string()),
        Some(&URL_SAFE_NO_PAD.encode(signature)),
    )
    .unwrap()
}

#[wasm_bindgen_test]
async fn webcrypto_signatures_verify_with_the_protocol_and_attacks_fail() {
    let pair = keystore::generate().await.unwrap();
    let key = public_key(&pair).await;
    assert_eq!(key.id().as_str().len(), 43);
    let ts = js_sys::Date::now() as i64;
    let now = Timestamp::from_millis(ts);
    let body = br#"{"payload":1}"#;
    let auth = signed_headers(&pair, &key, ts, body).await;
    auth.verify(&key, "POST", "/v1/receipts", body, now)
        .expect("WebCrypto's signature verifies");
    // Another body, path or method: the signature covers them.
    let bad = |r: Result<(), AuthError>| assert_eq!(r, Err(AuthError::BadSignature));
    bad(auth.verify(&key, "POST", "/v1/receipts", br#"{"payload":2}"#, now));
    bad(auth.verify(&key, "POST", "/v1/installs", body, now));
    bad(auth.verify(&key, "PUT", "/v1/receipts", body, now));
    // Another install's key.
    let other = public_key(&keystore::generate().await.unwrap()).await;
    assert_ne!(other.id(), key.id(), "fresh keys differ");
    assert_eq!(
        auth.verify(&other, "POST", "/v1/receipts", body, now),
        Err(AuthError::WrongKey)
    );
    // Stale.
    assert_eq!(
        auth.verify(
            &key,
            "POST",
            "/v1/receipts",
            body,
            now.plus_millis(tacit_protocol::request_auth::MAX_CLOCK_SKEW_MS + 1)
        ),
        Err(AuthError::Stale)
    );
}

#[wasm_bindgen_test]
async fn the_private_key_cannot_be_exported() {
    let pair = keystore::generate().await.unwrap();
    let private = Reflect::get(pair.as_js(), &"privateKey".into()).unwrap();
    assert_eq!(
        Reflect::get(&private, &"extractable".into()).unwrap(),
        JsValue::FALSE
    );
    let crypto = Reflect::get(&js_sys::global(), &"crypto".into()).unwrap();
    let subtle = Reflect::get(&crypto, &"subtle".into()).unwrap();
    let export: Function = Reflect::get(&subtle, &"exportKey".into())
        .unwrap()
        .dyn_into()
        .unwrap();
    for format in ["jwk", "pkcs8"] {
        let refused = match export.call2(&subtle, &format.into(), &private) {
            Ok(promise) => JsFuture::from(Promise::resolve(&promise)).await.is_err(),
            Err(_) => true,
        };
        assert!(refused, "exportKey({format}) of the private key must fail");
    }
}

#[wasm_bindgen_test]
async fn the_enrolment_round_trips_through_indexeddb_and_is_deleted() {
    keystore::delete().await.unwrap();
    assert!(keystore::load().await.unwrap().is_none());
    let pair = keystore::generate().await.unwrap();
    let key = public_key(&pair).await;
    keystore::save(&pair, "http://127.0.0.1:8787", key.id().as_str())
        .await
        .unwrap();
    let stored = keystore::load().await.unwrap().expect("stored");
    assert_eq!(stored.signer_origin, "http://127.0.0.1:8787");
    assert_eq!(stored.install_id, key.id().as_str());
    // The structured clone is the same key: it signs what the original public key verifies.
    let ts = js_sys::Date::now() as i64;
    let auth = signed_headers(&stored.key_pair, &key, ts, b"{}").await;
    auth.verify(
        &key,
        "POST",
        "/v1/receipts",
        b"{}",
        Timestamp::from_millis(ts),
    )
    .unwrap();
    keystore::delete().await.unwrap();
    assert!(
        keystore::load().await.unwrap().is_none(),
        "key and pin gone"
    );
}
