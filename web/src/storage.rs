//! Browser storage for the encrypted profile record. The rule about generations lives in
//! wallet-core (`store::next_generation`); this only reads and writes.

use wallet_core::store::StoredVault;

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
