//! The install key, through `js/keystore.js`: a non-extractable WebCrypto P-256 key pair kept in
//! IndexedDB. This module only carries handles and bytes; what an enrolment is, and what gets
//! signed, is decided in `tacit_protocol::request_auth`.

use js_sys::{Promise, Reflect, Uint8Array};
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
}

/// A `CryptoKeyPair` handle. Its private key cannot be exported; only WebCrypto can use it.
#[derive(Clone)]
pub struct KeyPair(JsValue);

impl KeyPair {
    /// The `CryptoKeyPair` object (handles only; its private key is not extractable).
    pub fn as_js(&self) -> &JsValue {
        &self.0
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

async fn settle(promise: Result<Promise, JsValue>) -> Result<JsValue, String> {
    let promise = promise.map_err(|e| crate::host::error_text(&e))?;
    JsFuture::from(promise)
        .await
        .map_err(|e| crate::host::error_text(&e))
}

/// A fresh non-extractable key pair (not stored yet).
pub async fn generate() -> Result<KeyPair, String> {
    settle(generate_install_key()).await.map(KeyPair)
}

/// The public key as JWK JSON text (with WebCrypto's `ext` and `key_ops` members).
pub async fn public_jwk_json(key_pair: &KeyPair) -> Result<String, String> {
    let jwk = settle(export_public_jwk(&key_pair.0)).await?;
    js_sys::JSON::stringify(&jwk)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| "the public key could not be read".to_owned())
}

/// ES256 over `bytes`: 64 bytes `r||s`.
pub async fn sign(key_pair: &KeyPair, bytes: &[u8]) -> Result<Vec<u8>, String> {
    let signature = settle(sign_with_install_key(&key_pair.0, &Uint8Array::from(bytes))).await?;
    Ok(Uint8Array::new(&signature).to_vec())
}

/// Stores the key pair with its pin, replacing any earlier enrolment.
pub async fn save(key_pair: &KeyPair, signer_origin: &str, install_id: &str) -> Result<(), String> {
    settle(save_enrolment(&key_pair.0, signer_origin, install_id))
        .await
        .map(|_| ())
}

/// The stored enrolment, if any. A record missing a field reads as none.
pub async fn load() -> Result<Option<StoredEnrolment>, String> {
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
pub async fn delete() -> Result<(), String> {
    settle(delete_enrolment()).await.map(|_| ())
}
