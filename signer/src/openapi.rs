//! The signer's OpenAPI 3.1 document (`GET /v1/openapi.json`), built from the types its handlers
//! read and write (`tacit_service::openapi`).

use tacit_protocol::request_auth::{
    EnrolmentRequest, EnrolmentResponse, HEADER_INSTALL, HEADER_SIGNATURE, HEADER_TIMESTAMP,
};
use tacit_service::openapi::{Document, ErrorBody, header};
use wallet_core::{PublishedKeys, ReceiptPayload, SignedReceipt};

/// The document, as served.
pub fn document() -> serde_json::Value {
    let mut doc = Document::new(
        "tacit-signer",
        "Signs session receipts for enrolled wallet installs and publishes its keys. Both POST \
         routes need the install's ES256 request signature in three headers.",
    );
    let signed_headers = || {
        vec![
            header(
                HEADER_INSTALL,
                "The install id (RFC 7638 thumbprint of its key).",
            ),
            header(
                HEADER_TIMESTAMP,
                "Unix milliseconds when the request was signed.",
            ),
            header(
                HEADER_SIGNATURE,
                "ES256 over method, path, timestamp and the body's SHA-256 (base64url).",
            ),
        ]
    };
    let payload = doc.schema::<ReceiptPayload>();
    let replies = vec![
        doc.reply::<SignedReceipt>(200, "The signed receipt."),
        doc.reply::<ErrorBody>(401, "Not an enrolled install, or a bad request signature."),
        doc.reply::<ErrorBody>(403, "A browser origin that is not a wallet's."),
        doc.reply::<ErrorBody>(422, "A payload the signer will not sign."),
        doc.reply::<ErrorBody>(429, "Rate limited (Retry-After)."),
    ];
    doc.operation(
        "POST",
        "/v1/receipts",
        "Sign a session receipt",
        Some(payload),
        signed_headers(),
        replies,
    );
    let enrolment = doc.schema::<EnrolmentRequest>();
    let replies = vec![
        doc.reply::<EnrolmentResponse>(201, "Enrolled."),
        doc.reply::<ErrorBody>(403, "The code was refused."),
        doc.reply::<ErrorBody>(409, "This key is already enrolled."),
        doc.reply::<ErrorBody>(422, "Not an enrolment request."),
    ];
    doc.operation(
        "POST",
        "/v1/installs",
        "Enrol a wallet install with a one-time code",
        Some(enrolment),
        signed_headers(),
        replies,
    );
    let replies = vec![doc.reply::<PublishedKeys>(
        200,
        "The signer's public keys, and the digests of the unexpired receipts of revoked installs.",
    )];
    doc.get("/v1/keys", "The signer's keys", replies);
    doc.this_document("/v1/openapi.json");
    doc.liveness("The signer is up.");
    doc.finish(env!("CARGO_PKG_VERSION"))
}
