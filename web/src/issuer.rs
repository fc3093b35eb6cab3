//! Credentials from an issuer (`tacit-issuer`'s HTTP contract, `issuer/README.md`), as the page
//! fetches them: the issuer's description and metadata, a nonce, a batch of fresh holder keys
//! (stored in IndexedDB before anything is sent), their proofs of possession
//! (`tacit_protocol::issuer_pop`), and `POST /v1/credentials`. Whether the answer is a batch the
//! wallet keeps is decided by `capability_gate::credentials`; this module only carries it.

use capability_gate::credentials::{
    self, BatchGrant, CredentialError, IssuerInfo, Jwks, jwks_from_metadata, pop_input,
    request_body,
};
use tacit_protocol::sd_jwt::WELL_KNOWN_PATH;
use wallet_core::Origin;

use crate::keystore::{self, HolderKey, KeyStoreError};
use crate::net::{self, FetchError, Reply};

const ISSUER_PATH: &str = "/v1/issuer";
const NONCE_PATH: &str = "/v1/nonce";
const CREDENTIALS_PATH: &str = "/v1/credentials";

/// What the person (or the stored refresh token) offers the issuer.
#[derive(Debug, Clone)]
pub enum Grant {
    /// The one-time enrolment code the issuer gave the person.
    Code(String),
    /// The refresh token from the previous batch (single-use too).
    Refresh(String),
}

/// A batch answer, not yet accepted: the issuer as it described itself (checked against the
/// address asked), its key set, the answer's text, and the holder keys sent, in request order
/// (all stored in IndexedDB).
#[derive(Debug)]
pub struct Fetched {
    pub info: IssuerInfo,
    pub jwks: Jwks,
    pub response: String,
    pub holder: Vec<HolderKey>,
}

/// Why a credential was not fetched from an issuer; `Display` is the sentence the page shows.
#[derive(Debug, thiserror::Error)]
pub enum IssuerError {
    #[error(
        "This is not an office address. Type only the start of the address the office gave you, \
         for example https://tax-office.example, without anything after the host or port."
    )]
    BadAddress,
    #[error("Type the one-time code the office gave you: letters and digits, in groups of four.")]
    BadCode,
    #[error(
        "The office at {origin} could not be reached. Check the address and your connection, then \
         try again; nothing was stored."
    )]
    Unreachable { origin: Origin, cause: FetchError },
    /// An answer that is not an issuer's (`what`: its status and path, or the part unread).
    #[error(
        "{origin} did not answer as an office that gives credentials. Check the address; nothing \
         was stored."
    )]
    NotAnIssuer { origin: Origin, what: String },
    #[error("{origin} is not an issuer this wallet can use: {cause}. Nothing was stored.")]
    Unusable {
        origin: Origin,
        cause: CredentialError,
    },
    #[error("{origin} sent an answer this wallet cannot use. Try again; nothing was stored.")]
    BadNonce { origin: Origin },
    #[error(
        "This browser could not make the keys for the proofs ({0}). Try again; nothing was sent."
    )]
    NoProofKeys(KeyStoreError),
    #[error("This browser could not sign with a proof key ({0}); nothing was sent.")]
    CannotSign(KeyStoreError),
    /// The issuer refused the batch request: the sentence for its error code ([`refused`]).
    #[error("{0}")]
    Refused(String),
}

/// An issuer address as the person typed it: an origin (a trailing `/` is forgiven).
pub fn parse_issuer(text: &str) -> Result<Origin, IssuerError> {
    net::parse_origin(text).ok_or(IssuerError::BadAddress)
}

/// The code as typed: trimmed, non-empty, short (the issuer checks it).
pub fn parse_code(text: &str) -> Result<String, IssuerError> {
    let code = text.trim();
    if code.is_empty() || code.len() > 64 || !code.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(IssuerError::BadCode);
    }
    Ok(code.to_owned())
}

fn unreachable(origin: &Origin) -> impl FnOnce(FetchError) -> IssuerError {
    let origin = origin.clone();
    move |cause| IssuerError::Unreachable { origin, cause }
}

async fn get(origin: &Origin, path: &str) -> Result<Reply, IssuerError> {
    let reply = net::fetch("GET", &format!("{origin}{path}"), &[], None)
        .await
        .map_err(unreachable(origin))?;
    if !reply.ok() {
        return Err(IssuerError::NotAnIssuer {
            origin: origin.clone(),
            what: format!("{} on {path}", reply.describe()),
        });
    }
    Ok(reply)
}

/// `GET /v1/issuer` and its metadata, read by `capability_gate::credentials`: both must name
/// exactly the origin asked, and it must vouch for something the wallet uses.
pub async fn describe(origin: &Origin) -> Result<(IssuerInfo, Jwks), IssuerError> {
    let refused = |cause: CredentialError| IssuerError::Unusable {
        origin: origin.clone(),
        cause,
    };
    let doc = get(origin, ISSUER_PATH).await?;
    let info = IssuerInfo::parse(origin, doc.text.as_bytes()).map_err(refused)?;
    let metadata = get(origin, WELL_KNOWN_PATH).await?;
    let jwks = jwks_from_metadata(origin, metadata.text.as_bytes()).map_err(refused)?;
    Ok((info, jwks))
}

/// `GET /v1/nonce`.
async fn nonce(origin: &Origin) -> Result<String, IssuerError> {
    #[derive(serde::Deserialize)]
    struct NonceDoc {
        nonce: String,
    }
    let reply = get(origin, NONCE_PATH).await?;
    let doc: NonceDoc =
        serde_json::from_str(&reply.text).map_err(|_| IssuerError::NotAnIssuer {
            origin: origin.clone(),
            what: "its nonce".to_owned(),
        })?;
    if doc.nonce.is_empty() || doc.nonce.len() > 128 {
        return Err(IssuerError::BadNonce {
            origin: origin.clone(),
        });
    }
    Ok(doc.nonce)
}

/// A refusal of `POST /v1/credentials` in plain words.
fn refused(info: &IssuerInfo, reply: &Reply) -> String {
    let code = serde_json::from_str::<serde_json::Value>(&reply.text)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let name = &info.name;
    match code.as_str() {
        "code_refused" => format!(
            "{name} refused the code: it is unknown, already used or expired. Check it, or ask \
             {name} for a new one. Nothing was stored."
        ),
        "refresh_refused" => format!(
            "{name} no longer accepts this wallet's refresh token. Add the credential again with \
             a new code from {name}."
        ),
        "no_record" => format!(
            "{name} has no record of your {}; nothing was stored.",
            info.attribute.name()
        ),
        "rate_limited" => {
            format!(
                "{name} is busy (too many requests). Try again in a minute; nothing was stored."
            )
        }
        "nonce_refused" => {
            format!("{name} asked for a fresh request. Try again; nothing was stored.")
        }
        // The status, the code and the issuer's own message are for developers.
        _ => format!(
            "{name} did not give the credential. Try again later; if it happens again, ask \
             {name}. Nothing was stored."
        ),
    }
}

/// Fetches one batch: new holder keys (stored first), proofs, `POST /v1/credentials`. On any
/// failure the holder keys made for it are deleted again.
pub async fn fetch_batch(origin: &Origin, grant: &Grant) -> Result<Fetched, IssuerError> {
    let (info, jwks) = describe(origin).await?;
    let nonce = nonce(origin).await?;
    let count = u32::try_from(credentials::DEFAULT_BATCH).unwrap_or(10);
    let holder = keystore::new_holder_keys(count)
        .await
        .map_err(IssuerError::NoProofKeys)?;
    match send(&info, grant, &nonce, &holder).await {
        Ok(response) => Ok(Fetched {
            info,
            jwks,
            response,
            holder,
        }),
        Err(e) => {
            forget_keys(&holder).await;
            Err(e)
        }
    }
}

/// Deletes holder keys that will not be used (best effort: a leftover key signs nothing).
pub async fn forget_keys(keys: &[HolderKey]) {
    let ids: Vec<String> = keys.iter().map(|k| k.id.clone()).collect();
    let _ = keystore::delete_holder_keys(&ids).await;
}

async fn send(
    info: &IssuerInfo,
    grant: &Grant,
    nonce: &str,
    holder: &[HolderKey],
) -> Result<String, IssuerError> {
    let input = pop_input(&info.origin, nonce);
    let mut proofs = Vec::with_capacity(holder.len());
    for key in holder {
        let signature = keystore::sign_with_holder(&key.id, input.as_bytes())
            .await
            .map_err(IssuerError::CannotSign)?;
        proofs.push((key.jwk.clone(), signature));
    }
    let grant = match grant {
        Grant::Code(code) => BatchGrant::Code(code),
        Grant::Refresh(token) => BatchGrant::RefreshToken(token),
    };
    let body = request_body(grant, nonce, &proofs);
    let reply = net::fetch(
        "POST",
        &format!("{}{CREDENTIALS_PATH}", info.origin),
        &[("content-type", "application/json")],
        Some(&body),
    )
    .await
    .map_err(unreachable(&info.origin))?;
    if reply.status != 200 {
        return Err(IssuerError::Refused(refused(info, &reply)));
    }
    Ok(reply.text)
}
