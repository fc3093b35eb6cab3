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

const LEDGER_KEY: &str = "tacit.ledger.v1";

/// The sealed disclosure ledger (hex), if stored.
pub fn load_ledger() -> Option<Vec<u8>> {
    let text = local()?.get_item(LEDGER_KEY).ok()??;
    hex::decode(text).ok()
}

/// Stores the sealed disclosure ledger in one `setItem`.
pub fn save_ledger(sealed: &[u8]) -> Result<(), String> {
    let Some(storage) = local() else {
        return Err("this browser offers no local storage".into());
    };
    storage
        .set_item(LEDGER_KEY, &hex::encode(sealed))
        .map_err(|_| "the disclosure memory could not be saved".into())
}

/// Forgets the sealed ledger (it belonged to a profile that was replaced by an import).
pub fn forget_ledger() {
    if let Some(storage) = local() {
        let _ = storage.remove_item(LEDGER_KEY);
    }
}

/// Deletes the encrypted profile and the sealed ledger from this browser.
pub fn delete_profile() -> Result<(), String> {
    let Some(storage) = local() else {
        return Err("this browser offers no local storage".into());
    };
    storage
        .remove_item(KEY)
        .and_then(|()| storage.remove_item(LEDGER_KEY))
        .map_err(|_| "the profile could not be deleted".into())
}
