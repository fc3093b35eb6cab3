//! The site's OpenAPI 3.1 document (`GET /api/openapi.json`), built from the types its handlers
//! write (`crate::api`) and read, through `tacit_service::openapi`.

use tacit_protocol::site_auth::SiteKeys;
use tacit_service::openapi::Document;

use crate::api::{
    AcceptedResult, Answer, AttestedRequirements, RefusalEnvelope, SiteInfo, SubmissionBody,
};
use crate::policy::Policy;

/// The document, as served (it names the site and its submission).
pub fn document(policy: &Policy, keys_path: &str) -> serde_json::Value {
    let mut doc = Document::new(
        &format!("tacit-site: {}", policy.site_name),
        &format!(
            "A relying site: it hands out signed requirements with a fresh nonce and decides \
             each {} on its server against the signer and issuers it pins. Every answer of \
             the API routes is an envelope, {{ok: true, result}} or {{ok: false, error}}.",
            policy.submission
        ),
    );
    let replies = vec![doc.reply::<SiteInfo>(200, "The page's words, tools and trusted issuers.")];
    doc.get("/api/site", "About this site", replies);
    let replies = vec![
        doc.reply::<Answer<AttestedRequirements>>(
            200,
            "The requirements with a fresh nonce and the site's attestation: the wallet's \
             request_claims input.",
        ),
        doc.reply::<RefusalEnvelope>(429, "Rate limited (Retry-After)."),
        doc.reply::<RefusalEnvelope>(503, "The nonce database is unreachable; retry."),
    ];
    doc.get(
        "/api/requirements",
        "Requirements and a fresh nonce",
        replies,
    );
    let body = doc.schema::<SubmissionBody>();
    let refused = doc.schema::<RefusalEnvelope>();
    let replies = vec![
        doc.reply::<Answer<AcceptedResult>>(200, "Accepted (or, with ok: false, refused)."),
        Document::reply_with(400, "Not a submission.", refused.clone()),
        Document::reply_with(413, "Larger than 64 KiB.", refused.clone()),
        Document::reply_with(415, "Not application/json.", refused.clone()),
        Document::reply_with(429, "Rate limited (Retry-After).", refused.clone()),
        Document::reply_with(503, "Nothing was decided; retry.", refused),
    ];
    doc.operation(
        "POST",
        "/api/applications",
        "Submit a signed receipt for the verdict",
        Some(body),
        vec![],
        replies,
    );
    let replies = vec![doc.reply::<SiteKeys>(200, "The site's public keys.")];
    doc.get(keys_path, "The site's keys", replies);
    doc.this_document("/api/openapi.json");
    doc.finish(env!("CARGO_PKG_VERSION"))
}
