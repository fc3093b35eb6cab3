//! The wallet's private keys, through `js/keystore.js`: non-extractable WebCrypto P-256 key
//! pairs kept in IndexedDB (`tacit-wallet` version 2). The install key (store `install`) signs
//! requests to the signer; holder keys (store `holder`, one per credential, under their RFC 7638
//! JWK thumbprint) sign one presentation each. This module only carries handles and bytes; what
//! an enrolment is, a key's id, and what gets signed are decided in `tacit_protocol`.

use js_sys::{Array, Promise, Reflect, Uint8Array};
use tacit_protocol::request_auth::{InstallKey, Jwk};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/js/keystore.js")]
extern "C" {
    #[wasm_bindgen(js_name = generateInstallKey, catch)]
    fn generate_install_key() -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = exportPublicJwk, catch)]
    fn export_public_jwk(key_pair: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = signWithInstallKey, catch)]
    fn sign_with_install_key(key_pair: &JsValue, bytes: &Uint8Array) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = saveEnrolment, catch)]
    fn save_enrolment(
        key_pair: &JsValue,
        signer_origin: &str,
        install_id: &str,
    ) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = loadEnrolment, catch)]
    fn load_enrolment() -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = deleteEnrolment, catch)]
    fn delete_enrolment() -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = generateHolderKeys, catch)]
    fn generate_holder_keys(n: u32) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = saveHolderKeys, catch)]
    fn save_holder_keys(ids: &Array, pairs: &Array) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = signWithHolderKey, catch)]
    fn sign_with_holder_key(id: &str, bytes: &Uint8Array) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = signOnceWithHolderKey, catch)]
    fn sign_once_with_holder_key(id: &str, bytes: &Uint8Array) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = holderKeyIds, catch)]
    fn holder_key_ids_js() -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = deleteHolderKeys, catch)]
    fn delete_holder_keys_js(ids: &Array) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = deleteAllHolderKeys, catch)]
    fn delete_all_holder_keys_js() -> Result<Promise, JsValue>;
}

/// A `CryptoKeyPair` handle. Its private key cannot be exported; only WebCrypto can use it.
#[derive(Clone)]
pub struct KeyPair(JsValue);

impl KeyPair {
    /// The `CryptoKeyPair` object (handles only; its private key is not extractable).
    pub fn as_js(&self) -> &JsValue {
        &self.0
    }

    /// Wraps a `CryptoKeyPair` made elsewhere (tests of stored records).
    pub fn from_js(pair: JsValue) -> Self {
        Self(pair)
    }
}

impl core::fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("KeyPair(…)")
    }
}

/// What IndexedDB holds: the key pair and the pin, as stored (checked by the caller).
#[derive(Debug)]
pub struct StoredEnrolment {
    pub key_pair: KeyPair,
    pub signer_origin: String,
    pub install_id: String,
}

/// Why a key could not be made, stored, read or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyStoreError {
    /// The browser's error (WebCrypto, IndexedDB), as `name: message`.
    #[error("{0}")]
    Browser(String),
    #[error("the public key could not be read")]
    PublicKeyUnreadable,
    #[error("the public key is not a P-256 JWK")]
    NotP256,
    /// The public key is a JWK the install-key rules refuse.
    #[error("{0}")]
    BadKey(String),
    #[error("between 1 and {MAX_HOLDER_KEYS} holder keys at once")]
    HolderKeyCount,
    #[error("the browser made the wrong number of keys")]
    WrongKeyCount,
    #[error("the browser's signature is not 64 bytes")]
    SignatureLength,
}

async fn settle(promise: Result<Promise, JsValue>) -> Result<JsValue, KeyStoreError> {
    let browser = |e: JsValue| KeyStoreError::Browser(crate::host::error_text(&e));
    JsFuture::from(promise.map_err(browser)?)
        .await
        .map_err(browser)
}

/// A fresh non-extractable key pair (not stored yet).
pub async fn generate() -> Result<KeyPair, KeyStoreError> {
    settle(generate_install_key()).await.map(KeyPair)
}

/// The public key as JWK JSON text (with WebCrypto's `ext` and `key_ops` members).
pub async fn public_jwk_json(key_pair: &KeyPair) -> Result<String, KeyStoreError> {
    let jwk = settle(export_public_jwk(&key_pair.0)).await?;
    js_sys::JSON::stringify(&jwk)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or(KeyStoreError::PublicKeyUnreadable)
}

/// ES256 over `bytes`: 64 bytes `r||s`.
pub async fn sign(key_pair: &KeyPair, bytes: &[u8]) -> Result<Vec<u8>, KeyStoreError> {
    let signature = settle(sign_with_install_key(&key_pair.0, &Uint8Array::from(bytes))).await?;
    Ok(Uint8Array::new(&signature).to_vec())
}

/// Stores the key pair with its pin, replacing any earlier enrolment.
pub async fn save(
    key_pair: &KeyPair,
    signer_origin: &str,
    install_id: &str,
) -> Result<(), KeyStoreError> {
    settle(save_enrolment(&key_pair.0, signer_origin, install_id))
        .await
        .map(|_| ())
}

/// The stored enrolment, if any. A record missing a field reads as none.
pub async fn load() -> Result<Option<StoredEnrolment>, KeyStoreError> {
    let record = settle(load_enrolment()).await?;
    if record.is_null() || record.is_undefined() {
        return Ok(None);
    }
    let field = |name: &str| Reflect::get(&record, &name.into()).unwrap_or(JsValue::UNDEFINED);
    let key_pair = field("keyPair");
    let (Some(signer_origin), Some(install_id)) = (
        field("signer_origin").as_string(),
        field("install_id").as_string(),
    ) else {
        return Ok(None);
    };
    if key_pair.is_undefined() || key_pair.is_null() {
        return Ok(None);
    }
    Ok(Some(StoredEnrolment {
        key_pair: KeyPair(key_pair),
        signer_origin,
        install_id,
    }))
}

/// Deletes the key pair and the pin.
pub async fn delete() -> Result<(), KeyStoreError> {
    settle(delete_enrolment()).await.map(|_| ())
}

/// The most holder keys made at once: the protocol's batch limit, which issuers enforce.
pub const MAX_HOLDER_KEYS: u32 = tacit_protocol::limits::MAX_BATCH as u32;

/// A holder key just made and stored: its id (the RFC 7638 thumbprint of its public JWK, as
/// `tacit_protocol::request_auth` computes it) and its public JWK. The private key stays in
/// IndexedDB; sign with [`sign_with_holder`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HolderKey {
    pub id: String,
    pub jwk: Jwk,
}

/// Makes `n` (1..=[`MAX_HOLDER_KEYS`]) non-extractable holder keys and stores them in IndexedDB
/// under their thumbprints, in one transaction, before returning their public halves.
pub async fn new_holder_keys(n: u32) -> Result<Vec<HolderKey>, KeyStoreError> {
    if n == 0 || n > MAX_HOLDER_KEYS {
        return Err(KeyStoreError::HolderKeyCount);
    }
    let pairs = Array::from(&settle(generate_holder_keys(n)).await?);
    if pairs.length() != n {
        return Err(KeyStoreError::WrongKeyCount);
    }
    let mut keys = Vec::with_capacity(n as usize);
    let ids = Array::new();
    for pair in pairs.iter() {
        let json = public_jwk_json(&KeyPair(pair)).await?;
        let jwk: Jwk = serde_json::from_str(&json).map_err(|_| KeyStoreError::NotP256)?;
        let id = InstallKey::from_jwk(&jwk)
            .map_err(|e| KeyStoreError::BadKey(e.to_string()))?
            .id()
            .as_str()
            .to_owned();
        ids.push(&JsValue::from_str(&id));
        keys.push(HolderKey { id, jwk });
    }
    settle(save_holder_keys(&ids, &pairs)).await?;
    Ok(keys)
}

/// ES256 over `bytes` with the stored holder key `id`: 64 bytes `r||s`. Fails when this browser
/// holds no such key (deleted after its one use, or never stored here).
pub async fn sign_with_holder(id: &str, bytes: &[u8]) -> Result<[u8; 64], KeyStoreError> {
    let signature = settle(sign_with_holder_key(id, &Uint8Array::from(bytes))).await?;
    Uint8Array::new(&signature)
        .to_vec()
        .try_into()
        .map_err(|_| KeyStoreError::SignatureLength)
}

/// Takes the stored holder key `id` out of IndexedDB and signs `bytes` with it: 64 bytes
/// `r||s`. The key is deleted in the same transaction that reads it, so it signs once, in one
/// tab, whatever else happens (another tab, a rolled-back copy of the credentials).
pub async fn sign_once_with_holder(id: &str, bytes: &[u8]) -> Result<[u8; 64], KeyStoreError> {
    let signature = settle(sign_once_with_holder_key(id, &Uint8Array::from(bytes))).await?;
    Uint8Array::new(&signature)
        .to_vec()
        .try_into()
        .map_err(|_| KeyStoreError::SignatureLength)
}

/// The ids of every stored holder key.
pub async fn holder_key_ids() -> Result<Vec<String>, KeyStoreError> {
    let ids = Array::from(&settle(holder_key_ids_js()).await?);
    Ok(ids.iter().filter_map(|id| id.as_string()).collect())
}

/// Deletes the holder keys `ids` (ids not stored are ignored).
pub async fn delete_holder_keys(ids: &[String]) -> Result<(), KeyStoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    let array: Array = ids.iter().map(|id| JsValue::from_str(id)).collect();
    settle(delete_holder_keys_js(&array)).await.map(|_| ())
}

/// Deletes every holder key.
pub async fn delete_all_holder_keys() -> Result<(), KeyStoreError> {
    settle(delete_all_holder_keys_js()).await.map(|_| ())
}
