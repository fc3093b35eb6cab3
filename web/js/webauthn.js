// The person's act through a platform authenticator: navigator.credentials.create / get with
// the options the wallet chose, and the answer's parts as bytes. Nothing is decided here: a page
// script can replace navigator.credentials, so every answer is verified in Rust
// (tacit_protocol::webauthn) against the challenge the wallet made and the public key sealed
// with the vault.

const bytes = (buffer) => (buffer ? new Uint8Array(buffer) : new Uint8Array(0));

function available() {
  return typeof window.PublicKeyCredential === 'function' && !!navigator.credentials;
}

// Registers a platform credential: ES256 only, user verification required, no attestation.
export async function createCredential(challenge, rpId, userId, userName) {
  if (!available()) {
    throw new Error('this browser offers no WebAuthn');
  }
  const credential = await navigator.credentials.create({
    publicKey: {
      challenge,
      rp: { id: rpId, name: 'Tacit wallet' },
      user: { id: userId, name: userName, displayName: userName },
      pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
      authenticatorSelection: {
        authenticatorAttachment: 'platform',
        userVerification: 'required',
        residentKey: 'discouraged',
      },
      attestation: 'none',
      timeout: 120000,
    },
  });
  if (!credential) {
    throw new Error('no credential was made');
  }
  const response = credential.response;
  return {
    rawId: bytes(credential.rawId),
    clientDataJSON: bytes(response.clientDataJSON),
    authenticatorData:
      typeof response.getAuthenticatorData === 'function'
        ? bytes(response.getAuthenticatorData())
        : new Uint8Array(0),
    publicKey:
      typeof response.getPublicKey === 'function' ? bytes(response.getPublicKey()) : new Uint8Array(0),
    algorithm:
      typeof response.getPublicKeyAlgorithm === 'function' ? response.getPublicKeyAlgorithm() : 0,
  };
}

// Asks the registered credential for a user-verifying assertion over `challenge`.
export async function getAssertion(challenge, rpId, credentialId) {
  if (!available()) {
    throw new Error('this browser offers no WebAuthn');
  }
  const credential = await navigator.credentials.get({
    publicKey: {
      challenge,
      rpId,
      allowCredentials: [{ type: 'public-key', id: credentialId }],
      userVerification: 'required',
      timeout: 120000,
    },
  });
  if (!credential) {
    throw new Error('no assertion was made');
  }
  const response = credential.response;
  return {
    rawId: bytes(credential.rawId),
    clientDataJSON: bytes(response.clientDataJSON),
    authenticatorData: bytes(response.authenticatorData),
    signature: bytes(response.signature),
  };
}
