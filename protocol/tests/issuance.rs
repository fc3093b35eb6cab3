//! An issuer's credential-request checks (`tacit_protocol::issuance::check_request`): each rule,
//! its order, and the lifetimes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use sha2::{Digest, Sha256};
use tacit_protocol::issuance::*;
use tacit_protocol::issuer_pop::pop_signing_input;
use tacit_protocol::request_auth::{EnrolmentCode, InstallKey, Jwk};

const ISSUER: &str = "http://127.0.0.1:8791";
const NONCE: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const REFRESH: &str = "r-r-r-r-r-r-r-r-r-r-r-r-r-r-r-r-r-r-r-r-r_r";
const CODE: &str = "ABCD-EFGH-JKMN-PQRS";

fn key(n: u8) -> SigningKey {
    SigningKey::from_slice(&Sha256::digest([b'k', n])).unwrap()
}

fn jwk(key: &SigningKey) -> Jwk {
    InstallKey::from_verifying_key(*key.verifying_key()).to_jwk()
}

fn proof(key: &SigningKey, issuer: &str, nonce: &str) -> String {
    let sig: Signature = key.sign(pop_signing_input(issuer, nonce).as_bytes());
    URL_SAFE_NO_PAD.encode(sig.to_bytes())
}

/// `n` distinct keys with good proofs for ISSUER and NONCE.
fn holders(n: u8) -> Vec<(Jwk, String)> {
    (0..n)
        .map(|i| (jwk(&key(i)), proof(&key(i), ISSUER, NONCE)))
        .collect()
}

fn check<'a>(
    code: Option<&str>,
    refresh: Option<&'a str>,
    nonce: &str,
    keys: &[(Jwk, String)],
) -> Result<CheckedRequest<'a>, RequestError> {
    let holders: Vec<Holder<'_>> = keys
        .iter()
        .map(|(jwk, proof)| Holder { jwk, proof })
        .collect();
    check_request(code, refresh, nonce, &holders, ISSUER)
}

#[test]
fn a_good_request_passes_with_its_keys_in_order() {
    assert_eq!(REFRESH.len(), TOKEN_LEN);
    let keys = holders(3);
    let checked = check(Some(CODE), None, NONCE, &keys).unwrap();
    assert_eq!(
        checked.grant,
        CheckedGrant::Code(EnrolmentCode::parse(CODE).unwrap())
    );
    let expected: Vec<Jwk> = keys.iter().map(|(jwk, _)| jwk.clone()).collect();
    assert_eq!(checked.holder_jwks, expected);
    let refreshed = check(None, Some(REFRESH), NONCE, &keys).unwrap();
    assert_eq!(refreshed.grant, CheckedGrant::RefreshToken(REFRESH));
    // The largest batch.
    assert!(check(Some(CODE), None, NONCE, &holders(MAX_BATCH as u8)).is_ok());
}

#[test]
fn one_to_max_batch_keys() {
    assert_eq!(
        check(Some(CODE), None, NONCE, &[]),
        Err(RequestError::BatchSize)
    );
    assert_eq!(
        check(Some(CODE), None, NONCE, &holders(MAX_BATCH as u8 + 1)),
        Err(RequestError::BatchSize)
    );
}

#[test]
fn exactly_one_well_formed_grant_and_a_token_shaped_nonce() {
    use RequestError::*;
    let keys = holders(1);
    let long = format!("{REFRESH}A");
    // (code, refresh token, nonce, answer)
    let cases: &[(Option<&str>, Option<&str>, &str, RequestError)] = &[
        (None, None, NONCE, CodeOrRefreshToken),
        (Some(CODE), Some(REFRESH), NONCE, CodeOrRefreshToken),
        (Some(""), None, NONCE, CodeRefused),
        (Some("ABCD-EFGH-JKMN-PQR"), None, NONCE, CodeRefused),
        (Some("ABCD-EFGH-JKMN-PQRSU"), None, NONCE, CodeRefused),
        (Some("ABCD-EFGH-JKMN-PQR!"), None, NONCE, CodeRefused),
        (None, Some(""), NONCE, RefreshRefused),
        (None, Some(&REFRESH[1..]), NONCE, RefreshRefused),
        (None, Some(&long), NONCE, RefreshRefused),
        (
            None,
            Some("r-r-r-r-r-r-r-r-r-r-r-r-r-r-r-r-r-r-r-r-r+r"),
            NONCE,
            RefreshRefused,
        ),
        (Some(CODE), None, "", NonceRefused),
        (Some(CODE), None, "short", NonceRefused),
        (Some(CODE), None, &NONCE[1..], NonceRefused),
        (
            None,
            Some(REFRESH),
            "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
            NonceRefused,
        ),
        (
            Some(CODE),
            None,
            "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            NonceRefused,
        ),
    ];
    for (code, refresh, nonce, answer) in cases {
        assert_eq!(
            check(*code, *refresh, nonce, &keys),
            Err(*answer),
            "{code:?} {refresh:?} {nonce}"
        );
    }
    assert!(token_shaped(NONCE) && token_shaped(REFRESH));
}

#[test]
fn keys_are_p256_and_distinct_and_proven() {
    let mut keys = holders(3);
    // A duplicate, even with its own good proof.
    let dup = vec![keys[0].clone(), keys[1].clone(), keys[0].clone()];
    assert_eq!(
        check(Some(CODE), None, NONCE, &dup),
        Err(RequestError::DuplicateHolderKey)
    );
    // A key that is not a P-256 point, named by its index.
    let mut bad_key = keys.clone();
    bad_key[2].0.x = bad_key[2].0.y.clone();
    assert_eq!(
        check(Some(CODE), None, NONCE, &bad_key),
        Err(RequestError::BadHolderKey { index: 2 })
    );
    // A proof over another issuer, another nonce, or by another key: refused at its index.
    keys[1].1 = proof(&key(1), "http://127.0.0.1:8792", NONCE);
    assert_eq!(
        check(Some(CODE), None, NONCE, &keys),
        Err(RequestError::BadProof { index: 1 })
    );
    let other_nonce = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";
    keys[1].1 = proof(&key(1), ISSUER, other_nonce);
    assert_eq!(
        check(Some(CODE), None, NONCE, &keys),
        Err(RequestError::BadProof { index: 1 })
    );
    keys[1].1 = proof(&key(7), ISSUER, NONCE);
    assert_eq!(
        check(Some(CODE), None, NONCE, &keys),
        Err(RequestError::BadProof { index: 1 })
    );
    keys[1].1 = "x".repeat(86);
    assert_eq!(
        check(Some(CODE), None, NONCE, &keys),
        Err(RequestError::BadProof { index: 1 })
    );
}

#[test]
fn the_first_broken_rule_answers() {
    let mut keys = holders(2);
    keys[0].1 = "bad".into();
    // Grant before batch size before nonce before keys.
    assert_eq!(
        check(None, None, "bad", &[]),
        Err(RequestError::CodeOrRefreshToken)
    );
    assert_eq!(
        check(Some(CODE), None, "bad", &[]),
        Err(RequestError::BatchSize)
    );
    assert_eq!(
        check(Some(CODE), None, "bad", &keys),
        Err(RequestError::NonceRefused)
    );
    // Every key is parsed (and duplicates found) before any proof is checked.
    let mut dup = keys.clone();
    dup.push(keys[1].clone());
    assert_eq!(
        check(Some(CODE), None, NONCE, &dup),
        Err(RequestError::DuplicateHolderKey)
    );
}

#[test]
fn lifetimes() {
    assert_eq!(NONCE_VALIDITY_MS, 300_000);
    assert_eq!(REFRESH_VALIDITY_MS, 180 * 86_400_000);
    assert_eq!(DEFAULT_CODE_VALIDITY_MS, 30 * 86_400_000);
    assert_eq!(
        DEFAULT_CODE_VALIDITY_MS as u128,
        tacit_protocol::request_auth::MAX_CODE_VALIDITY.as_millis()
    );
}
