//! An issuer reads OpenID4VCI requests and a wallet reads an issuer's answers
//! (`tacit_protocol::oid4vci`), on any bytes.
//!
//! - `CredentialOffer::parse`: an accepted offer re-encodes (as a URI and as JSON) to itself.
//! - `parse_token_request`: an accepted request re-encodes to a form that reads back the same.
//! - `check_credential_request` and `verify_proof` for a fixed issuer at a fixed time: never a
//!   panic; an accepted request has 1 to `MAX_BATCH` distinct holder keys.
//! - `TokenResponse::parse`, `parse_credential_response`, `bearer_token`: never a panic; what
//!   they accept stays in their bounds.
//! - Input shaped as a nonce: a proof the harness signs over it verifies and names it, and the
//!   same proof for another issuer does not.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use tacit_protocol::limits::MAX_BATCH;
use tacit_protocol::oid4vci::{
    CredentialOffer, TokenResponse, bearer_token, check_credential_request, finish_proof,
    parse_credential_response, parse_token_request, proof_signing_input, token_request_body,
    verify_proof,
};
use tacit_protocol::request_auth::InstallKey;
use wallet_core::Timestamp;

const ISSUER: &str = "https://issuer.example";
const NOW: i64 = 1_796_119_200_000;

fn key() -> &'static SigningKey {
    static KEY: OnceLock<SigningKey> = OnceLock::new();
    KEY.get_or_init(|| SigningKey::from_slice(&[9; 32]).expect("a valid scalar"))
}

fuzz_target!(|data: &[u8]| {
    let now = Timestamp::from_millis(NOW);
    if let Ok(request) = parse_token_request(data) {
        let again = parse_token_request(token_request_body(&request).as_bytes());
        assert_eq!(again, Ok(request), "a token request changed through encoding");
    }
    if let Ok(checked) = check_credential_request(data, ISSUER, "income", now) {
        let n = checked.holder_jwks.len();
        assert!((1..=MAX_BATCH).contains(&n));
        for (i, a) in checked.holder_jwks.iter().enumerate() {
            assert!(!checked.holder_jwks[i + 1..].contains(a), "one key twice");
        }
    }
    if let Some(response) = TokenResponse::parse(data) {
        assert!(response.token_type.eq_ignore_ascii_case("bearer"));
    }
    if let Some(list) = parse_credential_response(data) {
        assert!((1..=MAX_BATCH).contains(&list.len()));
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = bearer_token(Some(text));
    if let Ok(proof) = verify_proof(text, ISSUER, now) {
        assert!(!proof.nonce.is_empty());
    }
    if let Ok(offer) = CredentialOffer::parse(text) {
        assert_eq!(CredentialOffer::parse(&offer.to_uri()), Ok(offer.clone()));
        assert_eq!(CredentialOffer::parse(&offer.to_json()), Ok(offer));
    }
    if tacit_protocol::issuance::token_shaped(text) {
        let jwk = InstallKey::from_verifying_key(*key().verifying_key()).to_jwk();
        let input = proof_signing_input(&jwk, ISSUER, text, now);
        let signature: Signature = key().sign(input.as_bytes());
        let proof = finish_proof(&input, &signature.to_bytes().into());
        let checked = verify_proof(&proof, ISSUER, now).expect("a proof the harness signed");
        assert_eq!(checked.nonce, text);
        assert!(verify_proof(&proof, "https://other.example", now).is_err());
    }
});
