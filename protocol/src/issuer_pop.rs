//! Proof of possession of a holder key for an issuer (`tacit-issuer`'s `POST /v1/credentials`).
//!
//! For every holder key in `POST /v1/credentials` the wallet signs, with that key (a
//! non-extractable WebCrypto P-256 key: `crypto.subtle.sign({name: "ECDSA", hash: "SHA-256"},
//! key, bytes)`), the UTF-8 bytes of
//!
//! ```text
//! tacit-issuer-pop-v1\n<issuer origin>\n<nonce>
//! ```
//!
//! ([`pop_signing_input`]; no trailing newline) and sends the 64-byte IEEE P1363 `r||s`
//! signature as base64url without padding. [`verify_pop`] checks it. The issuer origin binds the
//! proof to this issuer; the nonce (fresh from `GET /v1/nonce`, single-use, five minutes) binds
//! it to this request. High-S and low-S signatures are both accepted, as WebCrypto produces
//! either.

use crate::request_auth::{InstallKey, Jwk};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};

/// The first line of every [`pop_signing_input`].
pub const POP_DOMAIN: &str = "tacit-issuer-pop-v1";

/// Why a proof of possession was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PopError {
    /// The holder key is not a P-256 JWK.
    #[error("the holder key is not a P-256 JWK")]
    BadKey,
    /// The proof is not base64url of 64 bytes.
    #[error("the proof is not base64url of a 64-byte signature")]
    Malformed,
    /// The proof does not verify with the holder key.
    #[error("the proof does not verify with the holder key")]
    BadSignature,
}

/// The bytes a holder key signs to prove possession to `issuer_origin` for `nonce`.
pub fn pop_signing_input(issuer_origin: &str, nonce: &str) -> String {
    format!("{POP_DOMAIN}\n{issuer_origin}\n{nonce}")
}

/// Checks `proof` (base64url, no padding, of P1363 `r||s`) by `jwk` over
/// [`pop_signing_input`]`(issuer_origin, nonce)`; returns the checked key.
pub fn verify_pop(
    jwk: &Jwk,
    proof: &str,
    issuer_origin: &str,
    nonce: &str,
) -> Result<InstallKey, PopError> {
    let key = InstallKey::from_jwk(jwk).map_err(|_| PopError::BadKey)?;
    if proof.len() != 86 {
        return Err(PopError::Malformed);
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(proof)
        .map_err(|_| PopError::Malformed)?;
    let signature = Signature::from_slice(&bytes).map_err(|_| PopError::Malformed)?;
    let verifying: VerifyingKey = crate::sd_jwt::jwk_to_key(jwk).map_err(|_| PopError::BadKey)?;
    verifying
        .verify(
            pop_signing_input(issuer_origin, nonce).as_bytes(),
            &signature,
        )
        .map_err(|_| PopError::BadSignature)?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use p256::ecdsa::SigningKey;
    use p256::ecdsa::signature::Signer;

    const ORIGIN: &str = "http://127.0.0.1:8091";

    fn key(seed: u8) -> SigningKey {
        SigningKey::from_slice(&[seed; 32]).unwrap()
    }

    fn jwk(key: &SigningKey) -> Jwk {
        InstallKey::from_verifying_key(*key.verifying_key()).to_jwk()
    }

    fn prove(key: &SigningKey, origin: &str, nonce: &str) -> String {
        let signature: Signature = key.sign(pop_signing_input(origin, nonce).as_bytes());
        URL_SAFE_NO_PAD.encode(signature.to_bytes())
    }

    #[test]
    fn the_signing_input_is_fixed() {
        assert_eq!(
            pop_signing_input(ORIGIN, "abc"),
            "tacit-issuer-pop-v1\nhttp://127.0.0.1:8091\nabc"
        );
    }

    #[test]
    fn a_proof_verifies_and_every_change_is_refused() {
        let holder = key(7);
        let proof = prove(&holder, ORIGIN, "n1");
        let checked = verify_pop(&jwk(&holder), &proof, ORIGIN, "n1").unwrap();
        assert_eq!(checked.to_jwk(), jwk(&holder));
        assert_eq!(
            verify_pop(&jwk(&holder), &proof, ORIGIN, "n2"),
            Err(PopError::BadSignature)
        );
        assert_eq!(
            verify_pop(&jwk(&holder), &proof, "http://evil.example", "n1"),
            Err(PopError::BadSignature)
        );
        assert_eq!(
            verify_pop(&jwk(&key(8)), &proof, ORIGIN, "n1"),
            Err(PopError::BadSignature)
        );
        assert_eq!(
            verify_pop(&jwk(&holder), &proof[..85], ORIGIN, "n1"),
            Err(PopError::Malformed)
        );
        assert_eq!(
            verify_pop(&jwk(&holder), &format!("{}=", &proof[..85]), ORIGIN, "n1"),
            Err(PopError::Malformed)
        );
        let mut bad = jwk(&holder);
        bad.crv = "P-384".to_owned();
        assert_eq!(
            verify_pop(&bad, &proof, ORIGIN, "n1"),
            Err(PopError::BadKey)
        );
    }

    #[test]
    fn high_s_is_accepted() {
        let holder = key(9);
        let signature: Signature = holder.sign(pop_signing_input(ORIGIN, "n").as_bytes());
        let (r, s) = signature.split_scalars();
        let high = Signature::from_scalars(r.to_bytes(), (-*s).to_bytes()).unwrap();
        let proof = URL_SAFE_NO_PAD.encode(high.to_bytes());
        assert!(verify_pop(&jwk(&holder), &proof, ORIGIN, "n").is_ok());
    }
}
