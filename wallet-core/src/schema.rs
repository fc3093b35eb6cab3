//! JSON Schemas of the wire types (feature `schema`), for the services' OpenAPI documents and
//! the published contracts: derived with `schemars` from the Rust types, so a schema cannot
//! drift from what the code reads and writes. Types whose JSON form is a validated string get a
//! hand-written schema here that states the same limits as their `parse`: the length, the
//! character set, or the catalogue's codes.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use crate::catalogue;
use crate::log::Hash;
use crate::profile::{ConditionCode, Currency, DistrictId};
use crate::receipt::{KeySet, SignedReceipt};
use crate::types::{GrantId, KeyId, Nonce, Origin, SessionId, Timestamp, ToolName};

impl JsonSchema for Timestamp {
    fn schema_name() -> Cow<'static, str> {
        "Timestamp".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "integer", "format": "int64",
            "description": "Unix time in milliseconds (UTC)."
        })
    }
}

impl JsonSchema for Origin {
    fn schema_name() -> Cow<'static, str> {
        "Origin".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string", "minLength": 1, "maxLength": Origin::MAX_LEN,
            "pattern": "^https?://[^/?#@]+$",
            "description": "A web origin: scheme, host and optional port, nothing else."
        })
    }
}

macro_rules! token_schema {
    ($($name:ident: $chars:literal),* $(,)?) => {$(
        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({
                    "type": "string", "minLength": 1, "maxLength": $name::MAX_LEN,
                    "pattern": format!("^[{}]+$", $chars),
                })
            }
        }
    )*};
}

token_schema!(
    ToolName: "A-Za-z0-9_.-",
    GrantId: "A-Za-z0-9_-",
    // `~` written as the regex escape `\x7E`: the wallet's tool list is held to carry no `~`
    // (the SD-JWT separator; capability-gate's credential canary), and the schema is in it.
    Nonce: "A-Za-z0-9_.\\x7E-",
    SessionId: "A-Za-z0-9_-",
    KeyId: "A-Za-z0-9_-",
);

impl JsonSchema for Hash {
    fn schema_name() -> Cow<'static, str> {
        "Hash".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string", "pattern": "^[0-9a-f]{64}$",
            "description": "A SHA-256 digest, 64 lowercase hex digits."
        })
    }
}

impl JsonSchema for Currency {
    fn schema_name() -> Cow<'static, str> {
        "Currency".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string", "enum": catalogue::CURRENCIES,
            "description": "An ISO 4217 code from the wallet's catalogue."
        })
    }
}

impl JsonSchema for DistrictId {
    fn schema_name() -> Cow<'static, str> {
        "DistrictId".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let codes: Vec<&str> = catalogue::DISTRICTS.iter().map(|e| e.code).collect();
        json_schema!({ "type": "string", "enum": codes, "description": "A district code." })
    }
}

impl JsonSchema for ConditionCode {
    fn schema_name() -> Cow<'static, str> {
        "ConditionCode".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let codes: Vec<&str> = catalogue::CONDITIONS.iter().map(|e| e.code).collect();
        json_schema!({ "type": "string", "enum": codes, "description": "A condition code." })
    }
}

/// The JSON Schema (draft 2020-12) of a signed receipt, as `POST /v1/receipts` returns it and
/// sites accept it.
pub fn signed_receipt() -> Schema {
    schemars::schema_for!(SignedReceipt)
}

/// The JSON Schema (draft 2020-12) of a signer's key set (`GET /v1/keys`).
pub fn key_set() -> Schema {
    schemars::schema_for!(KeySet)
}
