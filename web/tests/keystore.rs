//! Glue tests of the key store in real Chromium (WebCrypto and IndexedDB through
//! `js/keystore.js`): what WebCrypto signs is exactly what `tacit_protocol::request_auth` and
//! `tacit_protocol::issuer_pop` verify, no private key (install or holder) can be exported, a
//! stored key survives a round trip through IndexedDB still able to sign, holder keys are stored
//! under their thumbprint and deleted exactly, and a version-1 database upgrades to version 2
//! keeping the install enrolment.

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

/// Asserts `pair` signs `{}` now so that `key` verifies it (the same key as `key`'s).
async fn assert_signs_for(pair: &KeyPair, key: &InstallKey) {
    let ts = js_sys::Date::now() as i64;
    let auth = signed_headers(pair, key, ts, b"{}").await;
    auth.verify(
        key,
        "POST",
        "/v1/receipts",
        b"{}",
        Timestamp::from_millis(ts),
    )
    .unwrap();
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
    assert_signs_for(&stored.key_pair, &key).await;
    keystore::delete().await.unwrap();
    assert!(
        keystore::load().await.unwrap().is_none(),
        "key and pin gone"
    );
}

// --- Holder keys (store `holder`, database version 2) ---------------------------------------

#[wasm_bindgen(inline_js = r#"
export function makeV1Database(signerOrigin, installId) {
  return new Promise((resolve, reject) => {
    const del = indexedDB.deleteDatabase('tacit-wallet');
    del.onerror = () => reject(del.error);
    del.onblocked = () => reject(new Error('delete blocked'));
    del.onsuccess = async () => {
      const keyPair = await crypto.subtle.generateKey(
        { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
      const open = indexedDB.open('tacit-wallet', 1);
      open.onupgradeneeded = () => open.result.createObjectStore('install');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const db = open.result;
        const tx = db.transaction('install', 'readwrite');
        tx.objectStore('install').put(
          { keyPair, signer_origin: signerOrigin, install_id: installId }, 'current');
        tx.oncomplete = () => { db.close(); resolve(keyPair); };
        tx.onerror = () => reject(tx.error);
      };
    };
  });
}

export function databaseShape() {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open('tacit-wallet');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const shape = { version: db.version, stores: Array.from(db.objectStoreNames).sort() };
      db.close();
      resolve(shape);
    };
  });
}

export function storedHolderPair(id) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open('tacit-wallet');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const request = db.transaction('holder', 'readonly').objectStore('holder').get(id);
      request.onsuccess = () => { db.close(); resolve(request.result); };
      request.onerror = () => { db.close(); reject(request.error); };
    };
  });
}

export async function exportErrorName(key, format) {
  try {
    await crypto.subtle.exportKey(format, key);
    return 'exported';
  } catch (error) {
    return error.name;
  }
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = makeV1Database)]
    fn make_v1_database(signer_origin: &str, install_id: &str) -> Promise;
    #[wasm_bindgen(js_name = databaseShape)]
    fn database_shape() -> Promise;
    #[wasm_bindgen(js_name = storedHolderPair)]
    fn stored_holder_pair(id: &str) -> Promise;
    #[wasm_bindgen(js_name = exportErrorName)]
    fn export_error_name(key: &JsValue, format: &str) -> Promise;
}

async fn shape() -> (f64, Vec<String>) {
    let shape = JsFuture::from(database_shape()).await.unwrap();
    let version = Reflect::get(&shape, &"version".into())
        .unwrap()
        .as_f64()
        .unwrap();
    let stores = js_sys::Array::from(&Reflect::get(&shape, &"stores".into()).unwrap())
        .iter()
        .map(|s| s.as_string().unwrap())
        .collect();
    (version, stores)
}

fn proof(signature: &[u8; 64]) -> String {
    URL_SAFE_NO_PAD.encode(signature)
}

const ISSUER: &str = "http://127.0.0.1:8791";

#[wasm_bindgen_test]
async fn holder_keys_are_stored_under_their_thumbprint_and_sign_what_the_protocol_verifies() {
    keystore::delete_all_holder_keys().await.unwrap();
    let keys = keystore::new_holder_keys(10).await.unwrap();
    assert_eq!(keys.len(), 10);
    let mut ids: Vec<&str> = keys.iter().map(|k| k.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 10, "ten distinct keys");
    let mut stored = keystore::holder_key_ids().await.unwrap();
    stored.sort_unstable();
    assert_eq!(stored, ids, "all ten stored, under their ids");
    for key in &keys {
        // The id is the RFC 7638 thumbprint of the public JWK.
        assert_eq!(
            InstallKey::from_jwk(&key.jwk).unwrap().id().as_str(),
            key.id
        );
        let nonce = "pq0-nonce-for-this-test";
        let input = tacit_protocol::issuer_pop::pop_signing_input(ISSUER, nonce);
        let signature = keystore::sign_with_holder(&key.id, input.as_bytes())
            .await
            .unwrap();
        tacit_protocol::issuer_pop::verify_pop(&key.jwk, &proof(&signature), ISSUER, nonce)
            .expect("the stored holder key signs what its JWK verifies");
        // Bound to the origin and nonce it signed.
        assert!(
            tacit_protocol::issuer_pop::verify_pop(
                &key.jwk,
                &proof(&signature),
                "http://127.0.0.1:8792",
                nonce
            )
            .is_err()
        );
    }
    // Another key's JWK does not verify this key's signature.
    let input = tacit_protocol::issuer_pop::pop_signing_input(ISSUER, "n");
    let signature = keystore::sign_with_holder(&keys[0].id, input.as_bytes())
        .await
        .unwrap();
    assert!(
        tacit_protocol::issuer_pop::verify_pop(&keys[1].jwk, &proof(&signature), ISSUER, "n")
            .is_err()
    );
    keystore::delete_all_holder_keys().await.unwrap();
    assert!(keystore::holder_key_ids().await.unwrap().is_empty());
}

#[wasm_bindgen_test]
async fn holder_private_keys_cannot_be_exported_even_from_indexeddb() {
    keystore::delete_all_holder_keys().await.unwrap();
    let keys = keystore::new_holder_keys(2).await.unwrap();
    for key in &keys {
        let pair = JsFuture::from(stored_holder_pair(&key.id)).await.unwrap();
        let private = Reflect::get(&pair, &"privateKey".into()).unwrap();
        assert_eq!(
            Reflect::get(&private, &"extractable".into()).unwrap(),
            JsValue::FALSE
        );
        for format in ["jwk", "pkcs8"] {
            let name = JsFuture::from(export_error_name(&private, format))
                .await
                .unwrap()
                .as_string()
                .unwrap();
            assert_eq!(
                name, "InvalidAccessError",
                "exportKey({format}) of a stored holder private key must fail"
            );
        }
        // The public half is exportable (that is how the issuer learns it).
        let public = Reflect::get(&pair, &"publicKey".into()).unwrap();
        let name = JsFuture::from(export_error_name(&public, "jwk"))
            .await
            .unwrap()
            .as_string()
            .unwrap();
        assert_eq!(name, "exported");
    }
    keystore::delete_all_holder_keys().await.unwrap();
}

#[wasm_bindgen_test]
async fn deleting_holder_keys_deletes_exactly_those_and_they_no_longer_sign() {
    keystore::delete().await.unwrap();
    keystore::delete_all_holder_keys().await.unwrap();
    let install = keystore::generate().await.unwrap();
    let install_key = public_key(&install).await;
    keystore::save(&install, "http://127.0.0.1:8787", install_key.id().as_str())
        .await
        .unwrap();
    let keys = keystore::new_holder_keys(3).await.unwrap();
    keystore::delete_holder_keys(&[keys[1].id.clone(), "not-a-stored-id".to_owned()])
        .await
        .unwrap();
    let mut left = keystore::holder_key_ids().await.unwrap();
    left.sort_unstable();
    let mut expected = vec![keys[0].id.clone(), keys[2].id.clone()];
    expected.sort_unstable();
    assert_eq!(left, expected);
    let err = keystore::sign_with_holder(&keys[1].id, b"x")
        .await
        .unwrap_err();
    // The browser's own refusal, carried as it is (not one of the wallet's own sentences).
    assert!(
        matches!(&err, keystore::KeyStoreError::Browser(text) if text.contains("no holder key")),
        "{err:?}"
    );
    assert!(keystore::sign_with_holder(&keys[0].id, b"x").await.is_ok());
    // Deleting every holder key leaves the install enrolment alone.
    keystore::delete_all_holder_keys().await.unwrap();
    assert!(keystore::holder_key_ids().await.unwrap().is_empty());
    assert!(keystore::sign_with_holder(&keys[0].id, b"x").await.is_err());
    let stored = keystore::load()
        .await
        .unwrap()
        .expect("the install key is kept");
    assert_eq!(stored.install_id, install_key.id().as_str());
    keystore::delete().await.unwrap();
    // Out of range counts are refused before anything is made.
    assert!(keystore::new_holder_keys(0).await.is_err());
    assert!(
        keystore::new_holder_keys(keystore::MAX_HOLDER_KEYS + 1)
            .await
            .is_err()
    );
    assert!(keystore::holder_key_ids().await.unwrap().is_empty());
}

#[wasm_bindgen_test]
async fn a_version_1_database_upgrades_to_version_2_keeping_the_install_record() {
    let id = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    let old_pair = JsFuture::from(make_v1_database("http://127.0.0.1:8787", id))
        .await
        .unwrap();
    assert_eq!(shape().await, (1.0, vec!["install".to_owned()]));
    // The first open by this page's key store upgrades it.
    let stored = keystore::load()
        .await
        .unwrap()
        .expect("the v1 record survives");
    assert_eq!(
        shape().await,
        (2.0, vec!["holder".to_owned(), "install".to_owned()])
    );
    assert_eq!(stored.signer_origin, "http://127.0.0.1:8787");
    assert_eq!(stored.install_id, id);
    // Still the same key: what it signs verifies under the old pair's public key.
    let old_key = public_key(&KeyPair::from_js(old_pair)).await;
    assert_signs_for(&stored.key_pair, &old_key).await;
    // And the new store works.
    let keys = keystore::new_holder_keys(1).await.unwrap();
    assert_eq!(
        keystore::holder_key_ids().await.unwrap(),
        vec![keys[0].id.clone()]
    );
    keystore::delete_all_holder_keys().await.unwrap();
    keystore::delete().await.unwrap();
}

#[wasm_bindgen_test]
async fn a_holder_key_signs_once_then_is_gone() {
    keystore::delete_all_holder_keys().await.unwrap();
    let keys = keystore::new_holder_keys(2).await.unwrap();
    let input = tacit_protocol::issuer_pop::pop_signing_input(ISSUER, "once");
    let signature = keystore::sign_once_with_holder(&keys[0].id, input.as_bytes())
        .await
        .unwrap();
    tacit_protocol::issuer_pop::verify_pop(&keys[0].jwk, &proof(&signature), ISSUER, "once")
        .expect("the one signature is the key's");
    assert_eq!(
        keystore::holder_key_ids().await.unwrap(),
        vec![keys[1].id.clone()],
        "taken out of the store as it signed"
    );
    let again = keystore::sign_once_with_holder(&keys[0].id, input.as_bytes()).await;
    assert!(again.is_err(), "a key signs once");
    assert!(
        keystore::sign_with_holder(&keys[0].id, input.as_bytes())
            .await
            .is_err()
    );
    // Two takes of one key at the same time: exactly one signs.
    let id = keys[1].id.clone();
    let take = |bytes: &'static [u8]| {
        let id = id.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            let signed = keystore::sign_once_with_holder(&id, bytes).await.is_ok();
            Ok(JsValue::from_bool(signed))
        })
    };
    let both = js_sys::Array::of2(&take(b"a"), &take(b"b"));
    let outcomes = JsFuture::from(Promise::all(&both)).await.unwrap();
    let signed = js_sys::Array::from(&outcomes)
        .iter()
        .filter(|v| v.as_bool() == Some(true))
        .count();
    assert_eq!(signed, 1, "of two concurrent takes, one gets the key");
    assert!(keystore::holder_key_ids().await.unwrap().is_empty());
}
