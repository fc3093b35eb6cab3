//! The site's JSON bodies and its tools' inputs as types: the server writes and reads them, its
//! OpenAPI document (`server::openapi`, native) and the tools' `inputSchema` ([`input_schema`])
//! are generated from them, so none can drift. Every answer of
//! the two API routes is an envelope: `{ok: true, result}` or `{ok: false, error}`.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use tacit_protocol::sd_jwt::MAX_SD_JWT_LEN;
use tacit_protocol::site_auth::{Attestation, Requirements};
use wallet_core::receipt::MAX_RECEIPT_BYTES;
use wallet_core::{Claim, KeyId, Nonce, Origin, SessionId, SignedReceipt};

use crate::proof::{MAX_PRESENTATIONS, Proven};

/// `{ok: true, result: T}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(schemars::JsonSchema),
    schemars(rename = "Answer_{T}")
)]
#[serde(deny_unknown_fields)]
pub struct Answer<T> {
    /// Always `true`.
    pub ok: bool,
    pub result: T,
}

impl<T> Answer<T> {
    pub fn new(result: T) -> Self {
        Self { ok: true, result }
    }
}

/// `{ok: false, isError: true, error: {code, message[, claim]}}`: a refusal, on any status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RefusalEnvelope {
    /// Always `false`.
    pub ok: bool,
    /// Always `true`: generic clients look for `isError` to tell a refusal from an answer.
    #[serde(rename = "isError")]
    pub is_error: bool,
    pub error: RefusalError,
}

/// What was refused and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RefusalError {
    /// A stable code, e.g. `claim_not_satisfied`, `replayed_nonce`, `proof_missing`.
    pub code: String,
    /// A sentence for the agent to pass on.
    pub message: String,
    /// For `claim_not_satisfied`: the claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<Claim>,
}

/// The result of `GET /api/requirements`: exactly the wallet's `request_claims` input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct AttestedRequirements {
    #[serde(flatten)]
    pub requirements: Requirements,
    /// The site's signature over the requirements, expiring with the nonce.
    pub attestation: Attestation,
}

/// The result of an accepted `POST /api/applications`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AcceptedResult {
    /// Always `true`.
    pub accepted: bool,
    pub site_name: String,
    pub audience: Origin,
    pub nonce: Nonce,
    pub session_id: SessionId,
    pub key_id: KeyId,
    pub issued_at_ms: i64,
    pub expires_at_ms: i64,
    /// The claims the policy required, all satisfied.
    pub claims: Vec<Claim>,
    /// The issuer-backed ones and who proved them.
    pub proven: Vec<Proven>,
    /// A sentence for the agent to pass on.
    pub message: String,
}

/// The requirements tool's input: nothing (`{}`, or no argument at all).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RequirementsInput {}

/// The submit tool's input and the body of `POST /api/applications`: one type, so the tool's
/// published `inputSchema`, the OpenAPI document and the validation ([`crate::submit::parse`])
/// cannot drift. Each field's deserialiser carries its limits and says what is wrong in a
/// sentence an agent can act on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SubmissionBody {
    /// The signed receipt object from the wallet's check_proposal (payload, key_id, signature,
    /// signed_at), unchanged.
    #[serde(deserialize_with = "receipt_field")]
    pub receipt: SignedReceipt,
    /// The `presentations` array from the wallet's check_proposal, unchanged: one SD-JWT (with
    /// key binding) per answer an issuer vouches for. Omit it, or pass [], when check_proposal
    /// returned none.
    #[serde(default, skip_serializing_if = "Presentations::is_empty")]
    pub presentations: Presentations,
    /// Optional: the nonce the site's requirements tool gave you; the receipt must carry it
    /// (the receipt's own nonce if absent).
    #[serde(
        default,
        deserialize_with = "nonce_field",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(not(target_arch = "wasm32"), schemars(with = "Nonce"))]
    pub nonce: Option<Nonce>,
}

/// `receipt`: an object (not its JSON text) of at most [`MAX_RECEIPT_BYTES`] that reads as a
/// [`SignedReceipt`].
fn receipt_field<'de, D: Deserializer<'de>>(d: D) -> Result<SignedReceipt, D::Error> {
    let value = Value::deserialize(d)?;
    match &value {
        Value::Object(_) => {}
        Value::String(_) => {
            return Err(D::Error::custom(
                "Field \"receipt\" must be the receipt object itself, not its JSON text.",
            ));
        }
        _ => return Err(D::Error::custom("Field \"receipt\" must be an object.")),
    }
    let bytes = serde_json::to_vec(&value).map_err(D::Error::custom)?;
    if bytes.len() > MAX_RECEIPT_BYTES {
        return Err(D::Error::custom("Field \"receipt\" is larger than 1 MiB."));
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        let detail: String = e.to_string().chars().take(160).collect();
        D::Error::custom(format_args!(
            "Field \"receipt\" is not a signed Tacit receipt ({detail}). Submit the `receipt` \
             object check_proposal returned, unchanged."
        ))
    })
}

/// `nonce`, when present: a string that is a [`Nonce`] (`null` is refused, not read as absent).
fn nonce_field<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Nonce>, D::Error> {
    match Value::deserialize(d)? {
        Value::String(text) => Nonce::parse(&text)
            .map(Some)
            .map_err(|_| D::Error::custom("Field \"nonce\" must match [A-Za-z0-9_.~-]{1,128}.")),
        _ => Err(D::Error::custom("Field \"nonce\" must be a string.")),
    }
}

/// The submission's SD-JWT presentations: at most [`MAX_PRESENTATIONS`], each 1 to
/// [`MAX_SD_JWT_LEN`] printable ASCII characters (base64url, `.` and `~`). Its deserialiser
/// checks exactly what its schema says.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct Presentations(pub Vec<String>);

impl Presentations {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'de> Deserialize<'de> for Presentations {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Value::Array(items) = Value::deserialize(d)? else {
            return Err(D::Error::custom(
                "Field \"presentations\" must be an array of strings: the `presentations` \
                 check_proposal returned beside the receipt.",
            ));
        };
        if items.len() > MAX_PRESENTATIONS {
            return Err(D::Error::custom(format_args!(
                "Field \"presentations\" holds {} items; at most {MAX_PRESENTATIONS}.",
                items.len()
            )));
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let n = i + 1;
            let Value::String(text) = item else {
                return Err(D::Error::custom(format_args!(
                    "Presentation {n} must be a string (an SD-JWT with key binding)."
                )));
            };
            if text.is_empty() {
                return Err(D::Error::custom(format_args!(
                    "Presentation {n} is empty; submit the presentations check_proposal \
                     returned, unchanged."
                )));
            }
            if text.len() > MAX_SD_JWT_LEN {
                return Err(D::Error::custom(format_args!(
                    "Presentation {n} is longer than {MAX_SD_JWT_LEN} bytes."
                )));
            }
            if !text.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(D::Error::custom(format_args!(
                    "Presentation {n} is not an SD-JWT (base64url, '.' and '~' only); submit \
                     it as check_proposal returned it."
                )));
            }
            out.push(text);
        }
        Ok(Self(out))
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl schemars::JsonSchema for Presentations {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Presentations".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "array",
            "maxItems": MAX_PRESENTATIONS,
            // Printable ASCII, as the deserialiser checks (`is_ascii_graphic`).
            "items": { "type": "string", "minLength": 1, "maxLength": MAX_SD_JWT_LEN, "pattern": "^[!-~]+$" }
        })
    }
}

/// The published `inputSchema` of a tool whose input is `T`, generated from `T`: one
/// self-contained object (every subschema inline), no `$schema`, no title, and a `properties`
/// member even when `T` has no fields (WebMCP hosts expect it).
#[cfg(not(target_arch = "wasm32"))]
pub fn input_schema<T: schemars::JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        (s.inline_subschemas, s.meta_schema) = (true, None);
    });
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Some(map) = schema.as_object_mut() {
        for generated in ["title", "description"] {
            map.remove(generated);
        }
        map.entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    schema
}

/// `GET /api/site`: the page's words, the two tools' definitions and the trusted issuers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SiteInfo {
    pub site_name: String,
    /// What the person submits ("application", "order").
    pub submission: String,
    pub accepted_text: String,
    /// Each required claim in words.
    pub needs: Vec<String>,
    /// The requirements tool and the submit tool, as `registerTool` takes them (no `execute`).
    pub tools: Vec<serde_json::Value>,
    /// Whose proofs count here.
    #[serde(default)]
    pub trusted_issuers: Vec<IssuerName>,
}

/// An issuer the site trusts, by origin and name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IssuerName {
    pub issuer: String,
    pub name: String,
}
