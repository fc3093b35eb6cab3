//! The signer, as the wallet talks to it: enrolment of this browser's install key, and signed
//! requests to the one signer it is enrolled with. The request format is
//! `tacit_protocol::request_auth`'s; whether an answer counts as signed is decided by
//! capability-gate (`Gate::attach_signed`, `check_signed`).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use tacit_protocol::request_auth::{
    EnrolmentCode, EnrolmentRequest, EnrolmentResponse, HEADER_INSTALL, HEADER_SIGNATURE,
    HEADER_TIMESTAMP, InstallId, InstallKey, Jwk, signing_input,
};
use wallet_core::receipt::KeySet;
use wallet_core::{Origin, ReceiptPayload, SignedReceipt};

use crate::clock::now;
use crate::keystore::{self, KeyPair, KeyStoreError};
use crate::net::{self, FetchError, Reply};

/// The signer offered until the person chooses another.
pub const DEFAULT_SIGNER: &str = "http://127.0.0.1:8787";

/// Shown instead of sending anything when this browser is not enrolled.
pub const NOT_ENROLLED: &str = "Enrol this browser with a signer first (Settings → Signer). \
    Nothing was sent.";

/// Shown when the signer's answer fails verification against its published keys.
pub const NOT_VERIFIED: &str = "The signer's answer did not verify; nothing was released.";

const RECEIPTS_PATH: &str = "/v1/receipts";
const INSTALLS_PATH: &str = "/v1/installs";
const KEYS_PATH: &str = "/v1/keys";

/// This browser's enrolment: the signer it is pinned to, its install id, and its key.
#[derive(Debug, Clone)]
pub struct Pin {
    pub signer: Origin,
    pub install_id: InstallId,
    pub key_pair: KeyPair,
}

impl Pin {
    /// `Enrolled with the signer at <signer>`: the install id is for developers, not the person.
    pub fn describe(&self) -> String {
        format!("Enrolled with the signer at {}", self.signer)
    }
}

/// Where the page stands with its signer.
#[derive(Debug, Clone)]
pub enum Enrolment {
    /// The key store has not answered yet.
    Loading,
    NotEnrolled,
    Enrolled(Pin),
}

impl Enrolment {
    pub fn pin(&self) -> Option<&Pin> {
        match self {
            Enrolment::Enrolled(pin) => Some(pin),
            _ => None,
        }
    }
}

/// Why a receipt was not signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignError {
    NotEnrolled,
    /// No answer, or the signer refused (the person can try again).
    Unreachable(String),
    /// An answer came, but it is not a receipt that verifies.
    NotVerified,
}

impl SignError {
    pub fn note(&self) -> String {
        match self {
            SignError::NotEnrolled => NOT_ENROLLED.to_owned(),
            // `why` (a status or the browser's error) is for developers, not the person.
            SignError::Unreachable(_) => "The signer did not sign this receipt: it did not \
                answer, or refused. The unsigned receipt is kept. Try again in a moment."
                .to_owned(),
            SignError::NotVerified => NOT_VERIFIED.to_owned(),
        }
    }
}

/// Why this browser was not enrolled with a signer; `Display` is the sentence the page shows.
#[derive(Debug, thiserror::Error)]
pub enum EnrolError {
    #[error(
        "This is not a signer address. Type only the start of the address, for example \
         https://signer.example, without anything after the host or port."
    )]
    BadAddress,
    #[error(
        "Type the enrolment code you were given: 16 letters and digits, in four groups of four."
    )]
    BadCode,
    /// The key could not be made or read (`0`: the browser's or the key rules' words).
    #[error("This browser could not make a signing key ({0}).")]
    NoKey(String),
    #[error(
        "The signer at {signer} did not answer. Check the address and your connection, then try \
         again."
    )]
    Unreachable {
        signer: Origin,
        cause: SignedPostError,
    },
    /// The signer answered with another status than `201` (`status`: `HTTP 409 code`, and
    /// `detail` its message: both for developers, never shown to the person).
    #[error("{}", refused_words(status))]
    Refused { status: String, detail: String },
    #[error(
        "The signer's answer could not be read, so this browser is not enrolled. Try again; if \
         it happens again, tell whoever runs the signer."
    )]
    Unreadable,
    #[error(
        "The signer answered for another browser, so this one is not enrolled. Try again; if it \
         happens again, tell whoever runs the signer."
    )]
    OtherKey,
    #[error("This browser could not keep the enrolment ({0}). Try again.")]
    NotStored(KeyStoreError),
}

/// The person's words for a signer that refused an enrolment: what to do, from the status (`HTTP
/// 403 enrolment_refused`: the code was refused), never the status itself.
fn refused_words(status: &str) -> &'static str {
    if status.contains("enrolment_refused") || status.starts_with("HTTP 403") {
        "The signer did not accept this enrolment code: it may be mistyped, already used or \
         expired. Type it again, or ask whoever runs the signer for a new code."
    } else if status.starts_with("HTTP 429") {
        "The signer is busy. Wait a minute, then try again."
    } else {
        "The signer did not enrol this browser. Try again later; if it happens again, ask \
         whoever runs the signer."
    }
}

/// Why a signed request got no HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignedPostError {
    #[error(transparent)]
    Key(#[from] KeyStoreError),
    #[error(transparent)]
    Fetch(#[from] FetchError),
}

/// A signer origin as the person typed it (a trailing `/` is forgiven).
pub fn parse_signer(text: &str) -> Result<Origin, EnrolError> {
    net::parse_origin(text).ok_or(EnrolError::BadAddress)
}

/// Reads the stored enrolment. A record whose pin does not parse counts as not enrolled.
pub async fn load() -> Result<Enrolment, KeyStoreError> {
    let Some(stored) = keystore::load().await? else {
        return Ok(Enrolment::NotEnrolled);
    };
    let signer = Origin::parse(&stored.signer_origin);
    let install_id = InstallId::parse(&stored.install_id);
    Ok(match (signer, install_id) {
        (Ok(signer), Ok(install_id)) => Enrolment::Enrolled(Pin {
            signer,
            install_id,
            key_pair: stored.key_pair,
        }),
        _ => Enrolment::NotEnrolled,
    })
}

/// A POST signed by the install key: the three `tacit-*` headers over method, path, time and
/// body.
async fn signed_post(
    signer: &Origin,
    install_id: &InstallId,
    key_pair: &KeyPair,
    path: &str,
    body: &str,
) -> Result<Reply, SignedPostError> {
    let timestamp = now().millis();
    let input = signing_input("POST", path, timestamp, body.as_bytes());
    let signature = keystore::sign(key_pair, input.as_bytes()).await?;
    let signature = URL_SAFE_NO_PAD.encode(signature);
    let timestamp = timestamp.to_string();
    Ok(net::fetch(
        "POST",
        &format!("{signer}{path}"),
        &[
            ("content-type", "application/json"),
            (HEADER_INSTALL, install_id.as_str()),
            (HEADER_TIMESTAMP, &timestamp),
            (HEADER_SIGNATURE, &signature),
        ],
        Some(body),
    )
    .await?)
}

/// Enrols this browser with the signer at `signer_text` using the one-time `code_text`: a new
/// non-extractable key, its public JWK registered with a request signed by that very key. Only a
/// `201` naming this key's thumbprint stores the key and the pin (replacing any earlier ones).
pub async fn enrol(signer_text: &str, code_text: &str) -> Result<Pin, EnrolError> {
    let signer = parse_signer(signer_text)?;
    let code = EnrolmentCode::parse(code_text).map_err(|_| EnrolError::BadCode)?;
    let unavailable = |e: &dyn std::fmt::Display| EnrolError::NoKey(e.to_string());
    let key_pair = keystore::generate().await.map_err(|e| unavailable(&e))?;
    let jwk_json = keystore::public_jwk_json(&key_pair)
        .await
        .map_err(|e| unavailable(&e))?;
    let public_key: Jwk =
        serde_json::from_str(&jwk_json).map_err(|_| unavailable(&KeyStoreError::NotP256))?;
    let install_id = InstallKey::from_jwk(&public_key)
        .map_err(|e| unavailable(&e))?
        .id();
    let body = serde_json::to_string(&EnrolmentRequest {
        code: code.to_string(),
        public_key,
    })
    .map_err(|e| unavailable(&e))?;
    let reply = signed_post(&signer, &install_id, &key_pair, INSTALLS_PATH, &body)
        .await
        .map_err(|cause| EnrolError::Unreachable {
            signer: signer.clone(),
            cause,
        })?;
    if reply.status != 201 {
        return Err(EnrolError::Refused {
            status: reply.describe(),
            detail: reply.message().unwrap_or_default(),
        });
    }
    let answer: EnrolmentResponse =
        serde_json::from_str(&reply.text).map_err(|_| EnrolError::Unreadable)?;
    if answer.install_id != install_id {
        return Err(EnrolError::OtherKey);
    }
    keystore::save(&key_pair, signer.as_str(), install_id.as_str())
        .await
        .map_err(EnrolError::NotStored)?;
    Ok(Pin {
        signer,
        install_id,
        key_pair,
    })
}

/// Asks the pinned signer to sign `payload`, then fetches the pinned signer's published keys.
/// The caller decides with capability-gate whether the answer verifies.
pub async fn request_signature(
    pin: Option<Pin>,
    payload: &ReceiptPayload,
) -> Result<(SignedReceipt, KeySet), SignError> {
    let pin = pin.ok_or(SignError::NotEnrolled)?;
    let body = serde_json::to_string(payload).map_err(|_| SignError::NotVerified)?;
    let reply = signed_post(
        &pin.signer,
        &pin.install_id,
        &pin.key_pair,
        RECEIPTS_PATH,
        &body,
    )
    .await
    .map_err(|e| SignError::Unreachable(e.to_string()))?;
    if !reply.ok() {
        return Err(SignError::Unreachable(reply.describe()));
    }
    let signed = SignedReceipt::parse(reply.text.as_bytes()).map_err(|_| SignError::NotVerified)?;
    let keys = net::fetch("GET", &format!("{}{KEYS_PATH}", pin.signer), &[], None)
        .await
        .map_err(|e| SignError::Unreachable(format!("its keys: {e}")))?;
    if !keys.ok() {
        return Err(SignError::Unreachable(format!(
            "its keys: {}",
            keys.describe()
        )));
    }
    let keys = KeySet::parse(keys.text.as_bytes()).map_err(|_| SignError::NotVerified)?;
    Ok((signed, keys))
}
