//! The tools' inputs, one Rust type each: their published `inputSchema` is the static JSON in
//! `capability-gate/schemas/<tool>.json` ([`ToolInput::SCHEMA`], read by [`schema_of`]), which
//! is generated from the type with schemars under the `schema` feature ([`generated_schema_of`];
//! `tests/contract.rs` holds every file equal to it, and rewrites them on request). The page's
//! wasm carries the JSON, not schemars. Validation is the type's deserialisation ([`parse`]) plus
//! the limits of the newtypes it holds (`Origin::MAX_LEN`, `Nonce::MAX_LEN`, [`Text`]'s bound, the
//! claim catalogue). No tool states a field, a length or a shape anywhere else.

use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use tacit_protocol::site_auth::{Attestation, MAX_KID_LEN};
use wallet_core::{Claim, Nonce, Origin};

#[cfg(feature = "schema")]
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use crate::envelope::{Code, Refusal};
use crate::ids::{ProposalId, RequestId};

pub use crate::input::MAX_STRING;

/// Most claims one policy may ask for.
pub const MAX_CLAIMS: usize = 8;

/// Longest attestation signature accepted: 64 bytes are 86 base64url characters.
pub const MAX_SIGNATURE_CHARS: usize = 88;

/// Longest site name the wallet shows.
pub const MAX_SITE_NAME: usize = 120;

/// A string of at most `MAX` characters: longer text fails to deserialise, and the schema
/// says `maxLength: MAX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<const MAX: usize>(pub String);

impl<const MAX: usize> Text<MAX> {
    pub fn into_string(self) -> String {
        self.0
    }
}

impl<'de, const MAX: usize> Deserialize<'de> for Text<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text.chars().count() > MAX {
            return Err(serde::de::Error::custom(format_args!(
                "a string longer than {MAX} characters"
            )));
        }
        Ok(Self(text))
    }
}

#[cfg(feature = "schema")]
impl<const MAX: usize> JsonSchema for Text<MAX> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Text{MAX}").into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "maxLength": MAX })
    }
    fn inline_schema() -> bool {
        true
    }
}

/// An optional field that, when present, must be a `T`: absent is `None`, `null` is refused
/// (an agent's `null` is a mistake to say, not an absence to guess).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// `wallet_status`: no input.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WalletStatusInput {}

/// Every claim tool: the question is fixed by the grant; only an optional echo.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClaimInput {
    /// Optional opaque value echoed back, for your own bookkeeping.
    #[serde(default, deserialize_with = "present")]
    #[cfg_attr(feature = "schema", schemars(with = "Text<{ Nonce::MAX_LEN }>"))]
    pub nonce: Option<Text<{ Nonce::MAX_LEN }>>,
}

/// The site's attestation as `request_claims` takes it: [`Attestation`] with bounded strings.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AttestationInput {
    pub kid: Text<MAX_KID_LEN>,
    pub expires_at_ms: i64,
    pub signature: Text<MAX_SIGNATURE_CHARS>,
}

impl From<AttestationInput> for Attestation {
    fn from(a: AttestationInput) -> Self {
        Attestation {
            kid: a.kid.into_string(),
            expires_at_ms: a.expires_at_ms,
            signature: a.signature.into_string(),
        }
    }
}

/// `request_claims`: a site's policy, passed on by the agent.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RequestClaimsInput {
    /// The asking site's origin, e.g. https://housing.example
    pub origin: Origin,
    /// The site's fresh nonce.
    pub nonce: Nonce,
    #[serde(default, deserialize_with = "present")]
    #[cfg_attr(feature = "schema", schemars(with = "Text<MAX_SITE_NAME>"))]
    pub site_name: Option<Text<MAX_SITE_NAME>>,
    #[serde(default, deserialize_with = "present")]
    #[cfg_attr(feature = "schema", schemars(with = "Text<MAX_STRING>"))]
    pub purpose: Option<Text<MAX_STRING>>,
    /// The claims the site needs, one to eight, none repeated.
    #[cfg_attr(feature = "schema", schemars(schema_with = "claims_schema"))]
    pub claims: Vec<Claim>,
    /// The site's signature over these requirements, exactly as the site gave it. Pass it on
    /// unchanged; the wallet checks it against the keys the origin publishes.
    #[serde(default, deserialize_with = "present")]
    #[cfg_attr(feature = "schema", schemars(with = "AttestationInput"))]
    pub attestation: Option<AttestationInput>,
}

/// The `claims` array: one to [`MAX_CLAIMS`] objects, each shape named by the claim catalogue.
/// The catalogue's district and condition codes are not enumerated here: the tool list is the
/// same for every wallet and carries no code a profile could hold (the canary test holds every
/// output to that).
#[cfg(feature = "schema")]
fn claims_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array", "minItems": 1, "maxItems": MAX_CLAIMS,
        "description": "The claims the site needs, one to eight, none repeated.",
        "items": { "type": "object", "description": wallet_core::ClaimKind::shapes_prose() }
    })
}

/// `check_request`.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CheckRequestInput {
    /// The id request_claims returned.
    pub request_id: Text<{ RequestId::MAX_LEN }>,
}

/// `draft_application`.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DraftApplicationInput {
    /// The site's origin.
    pub audience: Origin,
    /// The site's nonce.
    pub nonce: Nonce,
}

/// `check_proposal`.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CheckProposalInput {
    /// The id draft_application returned.
    pub proposal_id: Text<{ ProposalId::MAX_LEN }>,
}

/// A tool's input type and its published `inputSchema`: the JSON file
/// `capability-gate/schemas/<FILE>.json`, shipped with the crate.
pub trait ToolInput {
    /// The file's stem under `capability-gate/schemas/`.
    const FILE: &'static str;
    /// The published schema, as the file holds it.
    const SCHEMA: &'static str;
    /// The schema parsed, once per page.
    fn parsed() -> &'static OnceLock<Value>;
}

macro_rules! published {
    ($($ty:ty => $file:literal),* $(,)?) => {
        $(impl ToolInput for $ty {
            const FILE: &'static str = $file;
            const SCHEMA: &'static str = include_str!(concat!("../schemas/", $file, ".json"));
            fn parsed() -> &'static OnceLock<Value> {
                static PARSED: OnceLock<Value> = OnceLock::new();
                &PARSED
            }
        })*
        /// Every published schema, as (file stem, file text, generated schema): what
        /// `tests/contract.rs` holds equal and rewrites.
        #[cfg(feature = "schema")]
        pub fn published_and_generated() -> Vec<(&'static str, &'static str, Value)> {
            vec![$((<$ty>::FILE, <$ty>::SCHEMA, generated_schema_of::<$ty>())),*]
        }
    };
}

published! {
    WalletStatusInput => "wallet_status",
    RequestClaimsInput => "request_claims",
    CheckRequestInput => "check_request",
    DraftApplicationInput => "draft_application",
    CheckProposalInput => "check_proposal",
    ClaimInput => "claim",
}

/// The published `inputSchema` of a tool whose input is `T`: its static file, parsed once. (A
/// file that is not JSON would publish `null`; `tests/contract.rs` holds every file equal to
/// the generated schema.)
pub fn schema_of<T: ToolInput>() -> Value {
    T::parsed()
        .get_or_init(|| serde_json::from_str(T::SCHEMA).unwrap_or(Value::Null))
        .clone()
}

/// The schema generated from `T`, as its file must hold it: every subschema inline (agents get
/// one self-contained object), no `$schema`, `title` or `description` member, and always a
/// `properties` member.
#[cfg(feature = "schema")]
pub fn generated_schema_of<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("title");
        map.remove("description");
        // WebMCP hosts expect an object schema; an empty input has no properties member.
        map.entry("properties")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    schema
}

/// A schema as its file holds it: pretty JSON with a final newline.
#[cfg(feature = "schema")]
pub fn schema_file_text(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Reads a tool's input as `T`: `null` (no argument) is the empty object; anything else must
/// deserialise, which refuses unknown, missing, mistyped and over-long fields. The refusal is
/// `invalid_input` with serde's sentence (it names the field).
pub fn parse<T: DeserializeOwned>(input: &Value) -> Result<T, Refusal> {
    let value = match input {
        Value::Null => Value::Object(serde_json::Map::new()),
        Value::Object(_) => input.clone(),
        _ => {
            return Err(Refusal::new(
                Code::InvalidInput,
                "The input must be a JSON object.",
            ));
        }
    };
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        // serde quotes names with backticks; the wallet's messages quote with `"`.
        let mut why: String = e
            .inner()
            .to_string()
            .replace('`', "\"")
            .chars()
            .take(200)
            .collect();
        if why.chars().count() == 200 {
            why.push('…');
        }
        let message = if path == "." {
            format!("Invalid input: {why}.")
        } else {
            format!("Field \"{path}\" is not acceptable: {why}.")
        };
        Refusal::new(Code::InvalidInput, message)
    })
}
