//! Browser storage for the encrypted profile record. The rule about generations lives in
//! wallet-core (`store::next_generation`); this only reads and writes.

use wallet_core::store::{MemoryFloors, StoredVault};

const KEY: &str = "tacit.vault.v1";

fn local() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The stored record, if any. A record that does not parse is reported, never deleted.
pub fn load() -> Result<Option<StoredVault>, String> {
    let Some(storage) = local() else {
        return Err("this browser offers no local storage".into());
    };
    match storage.get_item(KEY) {
        Ok(Some(text)) => StoredVault::decode(&text)
            .map(Some)
            .map_err(|e| e.to_string()),
        Ok(None) => Ok(None),
        Err(_) => Err("local storage could not be read".into()),
    }
}

/// Writes the record in one `setItem`: either the new record is stored whole or the old one
/// stays as it was.
pub fn save(record: &StoredVault) -> Result<(), String> {
    let Some(storage) = local() else {
        return Err("this browser offers no local storage".into());
    };
    storage
        .set_item(KEY, &record.encode())
        .map_err(|_| "the profile could not be saved (storage full or blocked); your last saved copy is unchanged".into())
}

pub const STORAGE_KEY: &str = KEY;

/// Where records of format 1 kept the sealed ledger beside the vault; read once to migrate.
const LEGACY_LEDGER_KEY: &str = "tacit.ledger.v1";
/// Per vault, the highest memory generation this browser wrote or read (rollback floor).
const FLOORS_KEY: &str = "tacit.memory-floors.v1";

/// The format-1 sealed ledger (hex), if one is still stored.
pub fn load_legacy_ledger() -> Option<Vec<u8>> {
    let text = local()?.get_item(LEGACY_LEDGER_KEY).ok()??;
    hex::decode(text).ok()
}

/// Forgets the format-1 sealed ledger (migrated into the record, or another vault's).
pub fn forget_legacy_ledger() {
    if let Some(storage) = local() {
        let _ = storage.remove_item(LEGACY_LEDGER_KEY);
    }
}

/// The memory floors. Missing is empty; unreadable is an error (never assumed empty).
pub fn load_floors() -> Result<MemoryFloors, String> {
    let Some(storage) = local() else {
        return Err("this browser offers no local storage".into());
    };
    match storage.get_item(FLOORS_KEY) {
        Ok(Some(text)) => MemoryFloors::decode(&text).map_err(|e| e.to_string()),
        Ok(None) => Ok(MemoryFloors::default()),
        Err(_) => Err("local storage could not be read".into()),
    }
}

/// Raises the floor of `vault_key` to `generation`.
pub fn raise_floor(vault_key: &str, generation: u64) -> Result<(), String> {
    let mut floors = load_floors()?;
    floors.raise(vault_key, generation);
    save_floors(&floors)
}

fn save_floors(floors: &MemoryFloors) -> Result<(), String> {
    let Some(storage) = local() else {
        return Err("this browser offers no local storage".into());
    };
    storage
        .set_item(FLOORS_KEY, &floors.encode())
        .map_err(|_| "the disclosure memory could not be saved".into())
}

/// Deletes the encrypted profile with its memory (and any format-1 ledger), and forgets its
/// floor so that the person can import the backup again.
pub fn delete_profile() -> Result<(), String> {
    let Some(storage) = local() else {
        return Err("this browser offers no local storage".into());
    };
    let vault_key = load().ok().flatten().and_then(|r| r.vault_key().ok());
    storage
        .remove_item(KEY)
        .and_then(|()| storage.remove_item(LEGACY_LEDGER_KEY))
        .map_err(|_| "the profile could not be deleted".to_owned())?;
    if let (Some(key), Ok(mut floors)) = (vault_key, load_floors()) {
        floors.forget(&key);
        save_floors(&floors)?;
    }
    Ok(())
}
