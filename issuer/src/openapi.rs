//! The issuer's OpenAPI 3.1 document (`GET /v1/openapi.json`), built from the types its handlers
//! read and write (`tacit_service::openapi`).

use tacit_protocol::sd_jwt::{IssuerMetadata, WELL_KNOWN_PATH};
use tacit_service::openapi::{Document, ErrorBody};

use crate::AppState;
use crate::routes::{CredentialRequest, CredentialResponse, IssuerInfo, NonceResponse};

/// The document, as served (it names the issuer it describes).
pub fn document(state: &AppState) -> serde_json::Value {
    let mut doc = Document::new(
        &format!("tacit-issuer: {}", state.name()),
        "Issues batches of SD-JWT VCs (one per holder key, each proving predicates about one \
         attribute) to a wallet holding a one-time code or a refresh token.",
    );
    let replies = vec![doc.reply::<IssuerMetadata>(200, "SD-JWT VC issuer metadata.")];
    doc.get(WELL_KNOWN_PATH, "Issuer metadata and keys", replies);
    let replies = vec![doc.reply::<IssuerInfo>(200, "What this issuer vouches for.")];
    doc.get("/v1/issuer", "About this issuer", replies);
    let replies = vec![
        doc.reply::<NonceResponse>(200, "A fresh single-use nonce, valid five minutes."),
        doc.reply::<ErrorBody>(429, "Rate limited (Retry-After)."),
    ];
    doc.get("/v1/nonce", "A nonce for the proofs", replies);
    let request = doc.schema::<CredentialRequest>();
    let replies = vec![
        doc.reply::<CredentialResponse>(200, "The batch, in holder-key order."),
        doc.reply::<ErrorBody>(400, "An unreadable body."),
        doc.reply::<ErrorBody>(
            401,
            "A bad proof (the message names its index), or a nonce refused.",
        ),
        doc.reply::<ErrorBody>(
            403,
            "The code or refresh token was refused (`code_refused`, `refresh_refused`), or its \
             chain was revoked by the issuer (`revoked`).",
        ),
        doc.reply::<ErrorBody>(
            409,
            "The issuer holds no record of the attribute for this person.",
        ),
        doc.reply::<ErrorBody>(
            422,
            "Not a credential request: its shape, batch size or a holder key.",
        ),
        doc.reply::<ErrorBody>(429, "Rate limited (Retry-After)."),
    ];
    doc.operation(
        "POST",
        "/v1/credentials",
        "Issue a batch of credentials",
        Some(request),
        vec![],
        replies,
    );
    let list = vec![Document::bare(
        200,
        "The Token Status List the credentials name (`application/statuslist+jwt`, a JWT \
         signed with the issuer's key): one bit per credential, set when revoked.",
    )];
    doc.get(
        tacit_protocol::status_list::STATUS_PATH,
        "The status list",
        list,
    );
    doc.this_document("/v1/openapi.json");
    doc.liveness("The issuer is up.");
    doc.finish(env!("CARGO_PKG_VERSION"))
}
