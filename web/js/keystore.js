// The wallet's private keys: non-extractable WebCrypto P-256 key pairs, kept in IndexedDB by
// structured clone. No private key ever exists as bytes in JavaScript or in wasm: this file only
// moves CryptoKey handles between WebCrypto and IndexedDB. Every rule lives in Rust (what gets
// signed, what a key's id is, when a key is deleted).
//
// IndexedDB database "tacit-wallet", version 2:
// - object store "install" (since version 1), one record under the key "current":
//   { keyPair: CryptoKeyPair, signer_origin: string, install_id: string } — the signer enrolment;
// - object store "holder" (since version 2): one CryptoKeyPair per credential holder key, under
//   its RFC 7638 JWK thumbprint (computed in Rust). One key signs one presentation, then it is
//   deleted.
// Opening an older database adds whichever store is missing and keeps what is stored.

const DB_NAME = 'tacit-wallet';
const DB_VERSION = 2;
const STORE = 'install';
const HOLDER = 'holder';
const RECORD = 'current';
const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256' };
const ES256 = { name: 'ECDSA', hash: 'SHA-256' };

function openDb() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, DB_VERSION);
    request.onupgradeneeded = () => {
      const db = request.result;
      for (const name of [STORE, HOLDER]) {
        if (!db.objectStoreNames.contains(name)) {
          db.createObjectStore(name);
        }
      }
    };
    request.onsuccess = () => {
      const db = request.result;
      // A newer page in another tab upgrades the database: let it.
      db.onversionchange = () => db.close();
      resolve(db);
    };
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error('the key store is open in another tab'));
  });
}

async function inStore(storeName, mode, operation) {
  const db = await openDb();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(storeName, mode);
      const request = operation(tx.objectStore(storeName));
      tx.oncomplete = () => resolve(request === undefined ? undefined : request.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error || new Error('the key store transaction was aborted'));
    });
  } finally {
    db.close();
  }
}

/** A fresh P-256 signing key pair whose private half cannot be exported. */
export async function generateInstallKey() {
  return crypto.subtle.generateKey(ECDSA_P256, false, ['sign']);
}

/** The public half as a JWK (public keys are always exportable). */
export async function exportPublicJwk(keyPair) {
  return crypto.subtle.exportKey('jwk', keyPair.publicKey);
}

/** ES256 over `bytes`: the 64-byte IEEE P1363 r||s signature. */
export async function signWithInstallKey(keyPair, bytes) {
  const signature = await crypto.subtle.sign(ES256, keyPair.privateKey, bytes);
  return new Uint8Array(signature);
}

/** Stores the enrolment (replacing any earlier one) in one transaction. */
export async function saveEnrolment(keyPair, signerOrigin, installId) {
  await inStore(STORE, 'readwrite', (store) =>
    store.put({ keyPair, signer_origin: signerOrigin, install_id: installId }, RECORD));
}

/** The stored enrolment record, or null. */
export async function loadEnrolment() {
  const record = await inStore(STORE, 'readonly', (store) => store.get(RECORD));
  return record === undefined ? null : record;
}

/** Deletes the key and the pin. */
export async function deleteEnrolment() {
  await inStore(STORE, 'readwrite', (store) => store.delete(RECORD));
}

/** `n` fresh non-extractable P-256 key pairs (not stored yet): holder keys for credentials. */
export async function generateHolderKeys(n) {
  const pairs = [];
  for (let i = 0; i < n; i += 1) {
    pairs.push(await crypto.subtle.generateKey(ECDSA_P256, false, ['sign']));
  }
  return pairs;
}

/** Stores holder key pairs under their ids (`ids[i]` for `pairs[i]`), all in one transaction. */
export async function saveHolderKeys(ids, pairs) {
  if (ids.length !== pairs.length) {
    throw new Error('one id per holder key');
  }
  await inStore(HOLDER, 'readwrite', (store) => {
    ids.forEach((id, i) => store.put(pairs[i], id));
  });
}

/** ES256 over `bytes` with the stored holder key `id`; fails if there is no such key. */
export async function signWithHolderKey(id, bytes) {
  const pair = await inStore(HOLDER, 'readonly', (store) => store.get(id));
  if (pair === undefined || pair === null || !pair.privateKey) {
    throw new Error('no holder key ' + String(id).slice(0, 8) + '… in this browser');
  }
  const signature = await crypto.subtle.sign(ES256, pair.privateKey, bytes);
  return new Uint8Array(signature);
}

/**
 * Takes the holder key `id` out of the store and signs `bytes` with it: one key, one signature.
 * Getting and deleting happen in one readwrite transaction, which IndexedDB runs one at a time
 * across tabs, so of two tabs taking the same key only one gets it.
 */
export async function signOnceWithHolderKey(id, bytes) {
  const pair = await inStore(HOLDER, 'readwrite', (store) => {
    const request = store.get(id);
    store.delete(id);
    return request;
  });
  if (pair === undefined || pair === null || !pair.privateKey) {
    throw new Error('no holder key ' + String(id).slice(0, 8) + '… in this browser (already used?)');
  }
  const signature = await crypto.subtle.sign(ES256, pair.privateKey, bytes);
  return new Uint8Array(signature);
}

/** The ids of every stored holder key. */
export async function holderKeyIds() {
  const keys = await inStore(HOLDER, 'readonly', (store) => store.getAllKeys());
  return keys.map(String);
}

/** Deletes the holder keys `ids` (ids not stored are ignored), in one transaction. */
export async function deleteHolderKeys(ids) {
  await inStore(HOLDER, 'readwrite', (store) => {
    ids.forEach((id) => store.delete(id));
  });
}

/** Deletes every holder key (the profile is being deleted). */
export async function deleteAllHolderKeys() {
  await inStore(HOLDER, 'readwrite', (store) => {
    store.clear();
  });
}
