//! Browser storage for the encrypted profile record: reads, writes and the cross-tab lock. Every
//! rule about records, generations, floors and memory lives in `capability_gate::wallet` and
//! `wallet_core::store`; this only carries out what they decide.

use std::cell::RefCell;
use std::rc::Rc;

use capability_gate::wallet::{ReadError, Snapshot};
use wallet_core::store::{MemoryFloors, StoredVault};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

const KEY: &str = capability_gate::wallet::RECORD_KEY;

/// Why browser storage could not be read or written; `Display` is the sentence the page shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    /// Reading failed (no storage, unreadable, or a record that does not decode).
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(
        "the profile could not be saved (storage full or blocked); your last saved copy is \
         unchanged"
    )]
    ProfileNotSaved,
    #[error("the disclosure memory could not be saved")]
    MemoryNotSaved,
    #[error("the profile could not be deleted")]
    ProfileNotDeleted,
    /// The credentials could not be sealed (the vault's own error).
    #[error("{0}")]
    Seal(String),
    #[error("your credentials could not be saved (storage full or blocked)")]
    CredentialsNotSaved,
    #[error("the stored credentials are damaged")]
    CredentialsDamaged,
    #[error("your credentials could not be deleted")]
    CredentialsNotDeleted,
}

fn local() -> Result<web_sys::Storage, StorageError> {
    web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .ok_or(StorageError::Read(ReadError::NoStorage))
}

/// [`local`] for a read.
fn readable() -> Result<web_sys::Storage, ReadError> {
    web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .ok_or(ReadError::NoStorage)
}

/// The stored record, if any. A record that does not parse is reported, never deleted.
pub fn load_record() -> Result<Option<StoredVault>, ReadError> {
    match readable()?.get_item(KEY) {
        Ok(Some(text)) => Ok(Some(StoredVault::decode(&text)?)),
        Ok(None) => Ok(None),
        Err(_) => Err(ReadError::Unreadable),
    }
}

/// Writes the record in one `setItem`: either the new record is stored whole or the old one
/// stays as it was.
pub fn save(record: &StoredVault) -> Result<(), StorageError> {
    local()?
        .set_item(KEY, &record.encode())
        .map_err(|_| StorageError::ProfileNotSaved)
}

pub const STORAGE_KEY: &str = KEY;

/// Where records of format 1 kept the sealed ledger beside the vault; read once to migrate.
const LEGACY_LEDGER_KEY: &str = "tacit.ledger.v1";
/// Per vault, the highest memory generation this browser wrote or read (rollback floor).
const FLOORS_KEY: &str = "tacit.memory-floors.v1";

/// The format-1 sealed ledger (hex), if one is still stored.
pub fn load_legacy_ledger() -> Option<Vec<u8>> {
    let text = local().ok()?.get_item(LEGACY_LEDGER_KEY).ok()??;
    hex::decode(text).ok()
}

/// Forgets the format-1 sealed ledger (migrated into the record, or another vault's).
pub fn forget_legacy_ledger() {
    if let Ok(storage) = local() {
        let _ = storage.remove_item(LEGACY_LEDGER_KEY);
    }
}

/// The memory floors. Missing is empty; unreadable is an error (never assumed empty).
pub fn load_floors() -> Result<MemoryFloors, ReadError> {
    match readable()?.get_item(FLOORS_KEY) {
        Ok(Some(text)) => Ok(MemoryFloors::decode(&text)?),
        Ok(None) => Ok(MemoryFloors::default()),
        Err(_) => Err(ReadError::Unreadable),
    }
}

/// Raises the floor of `vault_key` to `generation`.
pub fn raise_floor(vault_key: &str, generation: u64) -> Result<(), StorageError> {
    let mut floors = load_floors()?;
    floors.raise(vault_key, generation);
    save_floors(&floors)
}

fn save_floors(floors: &MemoryFloors) -> Result<(), StorageError> {
    local()?
        .set_item(FLOORS_KEY, &floors.encode())
        .map_err(|_| StorageError::MemoryNotSaved)
}

/// Deletes the stored record and any format-1 ledger.
pub fn delete_record() -> Result<(), StorageError> {
    let storage = local()?;
    storage
        .remove_item(KEY)
        .and_then(|()| storage.remove_item(LEGACY_LEDGER_KEY))
        .map_err(|_| StorageError::ProfileNotDeleted)
}

/// Forgets the floor of `vault_key`.
pub fn forget_floor(vault_key: &str) -> Result<(), StorageError> {
    let mut floors = load_floors()?;
    floors.forget(vault_key);
    save_floors(&floors)
}

/// What storage holds now, for the wallet core.
pub fn snapshot() -> Snapshot {
    Snapshot {
        record: load_record(),
        floors: load_floors(),
        legacy: load_legacy_ledger(),
    }
}

/// The cross-tab lock every read-merge-write of the record runs under.
const LOCK_NAME: &str = "tacit-vault";

/// Runs `f` while this tab holds the `tacit-vault` lock (`navigator.locks`), so that no other
/// tab reads or writes the record between its read and its write. Resolves to what `f`
/// returned, or `None` if the lock could not be taken. Where the browser has no
/// `navigator.locks`, `f` runs at once (one tab's writes are still whole records).
pub async fn locked<R: 'static>(f: impl FnOnce() -> R + 'static) -> Option<R> {
    // `navigator.locks.request(name, callback)`, through `Reflect` (web-sys marks the Web Locks
    // API unstable).
    let request = web_sys::window().and_then(|w| {
        let locks = js_sys::Reflect::get(&w.navigator(), &"locks".into()).ok()?;
        let request = js_sys::Reflect::get(&locks, &"request".into()).ok()?;
        let request = request.dyn_into::<js_sys::Function>().ok()?;
        Some((locks, request))
    });
    let Some((locks, request)) = request else {
        return Some(f());
    };
    let out: Rc<RefCell<Option<R>>> = Rc::new(RefCell::new(None));
    let slot = out.clone();
    let callback = Closure::once_into_js(move |_lock: JsValue| -> JsValue {
        *slot.borrow_mut() = Some(f());
        JsValue::UNDEFINED
    });
    let promise = request
        .call2(&locks, &JsValue::from_str(LOCK_NAME), &callback)
        .ok()?
        .dyn_into::<js_sys::Promise>()
        .ok()?;
    wasm_bindgen_futures::JsFuture::from(promise).await.ok()?;
    out.borrow_mut().take()
}

/// [`locked`], without waiting for the result.
pub fn locked_then(f: impl FnOnce() + 'static) {
    wasm_bindgen_futures::spawn_local(async move {
        let _ = locked(f).await;
    });
}

/// Where the wallet's credentials live: sealed with the vault's data key (AES-256-GCM,
/// `Vault::seal_aux` with [`CREDENTIALS_LABEL`]) beside the vault record, bound to the vault by
/// its id (the key opens nothing of another vault anyway). wallet-core's `StoredVault` has no
/// slot for them, so they are a record of their own; deleting the profile deletes it.
pub const CREDENTIALS_KEY: &str = "tacit.credentials.v1";
/// The seal label (names nothing secret).
const CREDENTIALS_LABEL: &str = "tacit.credentials.v1";

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SealedCredentials {
    /// The vault's id, lowercase hex.
    vault_id: String,
    /// `Vault::seal_aux` output, lowercase hex.
    sealed: String,
}

/// Seals `credentials` (as JSON) with `vault` and stores them in one `setItem`.
pub fn save_credentials<T: serde::Serialize>(
    vault: &wallet_core::Vault,
    credentials: &T,
) -> Result<(), StorageError> {
    let storage = local()?;
    let plaintext =
        serde_json::to_vec(credentials).map_err(|e| StorageError::Seal(e.to_string()))?;
    let mut rng = rand_core::UnwrapErr(getrandom::SysRng);
    let sealed = vault
        .seal_aux(CREDENTIALS_LABEL, &plaintext, &mut rng)
        .map_err(|e| StorageError::Seal(e.to_string()))?;
    let record = SealedCredentials {
        vault_id: hex::encode(vault.envelope().vault_id()),
        sealed: hex::encode(sealed),
    };
    let text = serde_json::to_string(&record).map_err(|e| StorageError::Seal(e.to_string()))?;
    storage
        .set_item(CREDENTIALS_KEY, &text)
        .map_err(|_| StorageError::CredentialsNotSaved)
}

/// The stored credentials of `vault`: `None` when there are none, or when the stored ones are
/// another vault's (a profile imported over this one). A record of this vault that does not
/// open or parse is an error (never silently dropped).
pub fn load_credentials<T: serde::de::DeserializeOwned>(
    vault: &wallet_core::Vault,
) -> Result<Option<T>, StorageError> {
    let text = match local()?.get_item(CREDENTIALS_KEY) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(_) => return Err(ReadError::Unreadable.into()),
    };
    let damaged = || StorageError::CredentialsDamaged;
    let record: SealedCredentials = serde_json::from_str(&text).map_err(|_| damaged())?;
    if record.vault_id != hex::encode(vault.envelope().vault_id()) {
        return Ok(None);
    }
    let sealed = hex::decode(&record.sealed).map_err(|_| damaged())?;
    let plaintext = vault
        .open_aux(CREDENTIALS_LABEL, &sealed)
        .map_err(|_| damaged())?;
    serde_json::from_slice(&plaintext)
        .map(Some)
        .map_err(|_| damaged())
}

/// Deletes the stored credentials.
pub fn delete_credentials() -> Result<(), StorageError> {
    local()?
        .remove_item(CREDENTIALS_KEY)
        .map_err(|_| StorageError::CredentialsNotDeleted)
}
