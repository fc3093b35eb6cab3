// The install key's only home: a non-extractable WebCrypto P-256 key pair, kept in IndexedDB by
// structured clone. The private key never exists as bytes in JavaScript or in wasm: this file
// only moves CryptoKey handles between WebCrypto and IndexedDB. Every rule lives in Rust.
//
// IndexedDB database "tacit-wallet" (version 1), object store "install", one record under the
// key "current": { keyPair: CryptoKeyPair, signer_origin: string, install_id: string }.

const DB_NAME = 'tacit-wallet';
const STORE = 'install';
const RECORD = 'current';

function openDb() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error('the key store is open in another tab'));
  });
}

async function inStore(mode, operation) {
  const db = await openDb();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const request = operation(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(request.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error || new Error('the key store transaction was aborted'));
    });
  } finally {
    db.close();
  }
}

/** A fresh P-256 signing key pair whose private half cannot be exported. */
export async function generateInstallKey() {
  return crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
}

/** The public half as a JWK (public keys are always exportable). */
export async function exportPublicJwk(keyPair) {
  return crypto.subtle.exportKey('jwk', keyPair.publicKey);
}

/** ES256 over `bytes`: the 64-byte IEEE P1363 r||s signature. */
export async function signWithInstallKey(keyPair, bytes) {
  const signature = await crypto.subtle.sign(
    { name: 'ECDSA', hash: 'SHA-256' }, keyPair.privateKey, bytes);
  return new Uint8Array(signature);
}

/** Stores the enrolment (replacing any earlier one) in one transaction. */
export async function saveEnrolment(keyPair, signerOrigin, installId) {
  await inStore('readwrite', (store) =>
    store.put({ keyPair, signer_origin: signerOrigin, install_id: installId }, RECORD));
}

/** The stored enrolment record, or null. */
export async function loadEnrolment() {
  const record = await inStore('readonly', (store) => store.get(RECORD));
  return record === undefined ? null : record;
}

/** Deletes the key and the pin. */
export async function deleteEnrolment() {
  await inStore('readwrite', (store) => store.delete(RECORD));
}
