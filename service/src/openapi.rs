//! OpenAPI 3.1 documents for the services, built from the Rust types: every request and response
//! body is a `schemars` schema of the type the handler reads or writes, collected under
//! `components/schemas`, so the document cannot drift from the code. Each service lists its
//! operations next to its router and serves the document at `GET /v1/openapi.json`.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

/// An OpenAPI 3.1 document under construction.
#[derive(Debug)]
pub struct Document {
    title: String,
    description: String,
    generator: SchemaGenerator,
    paths: Map<String, Value>,
}

/// A response of an operation: status, description and, if it has a JSON body, its schema.
#[derive(Debug)]
pub struct Reply {
    status: u16,
    description: &'static str,
    body: Option<Value>,
}

impl Document {
    /// A document for the service `title` (the crate's version is the API version).
    pub fn new(title: &str, description: &str) -> Self {
        let generator = SchemaSettings::draft2020_12()
            .with(|s| s.definitions_path = "/components/schemas".into())
            .into_generator();
        Self {
            title: title.to_owned(),
            description: description.to_owned(),
            generator,
            paths: Map::new(),
        }
    }

    /// A `$ref` to `T`'s schema (added to the components once).
    pub fn schema<T: JsonSchema>(&mut self) -> Value {
        self.generator.subschema_for::<T>().to_value()
    }

    /// A JSON response with `T` as its body.
    pub fn reply<T: JsonSchema>(&mut self, status: u16, description: &'static str) -> Reply {
        let body = Some(self.schema::<T>());
        Reply {
            status,
            description,
            body,
        }
    }

    /// A response with a JSON body of the given schema.
    pub fn reply_with(status: u16, description: &'static str, schema: Value) -> Reply {
        Reply {
            status,
            description,
            body: Some(schema),
        }
    }

    /// A response without a JSON body.
    pub fn bare(status: u16, description: &'static str) -> Reply {
        Reply {
            status,
            description,
            body: None,
        }
    }

    /// Adds `method path` with a summary, an optional JSON request body, extra parameters
    /// (OpenAPI parameter objects, e.g. required headers) and its responses.
    pub fn operation(
        &mut self,
        method: &str,
        path: &str,
        summary: &str,
        request: Option<Value>,
        parameters: Vec<Value>,
        replies: Vec<Reply>,
    ) {
        let mut responses = Map::new();
        for reply in replies {
            let mut response = json!({ "description": reply.description });
            if let Some(schema) = reply.body {
                response["content"] = json!({ "application/json": { "schema": schema } });
            }
            responses.insert(reply.status.to_string(), response);
        }
        let mut operation = json!({ "summary": summary, "responses": responses });
        if let Some(schema) = request {
            operation["requestBody"] = json!({
                "required": true,
                "content": { "application/json": { "schema": schema } },
            });
        }
        if !parameters.is_empty() {
            operation["parameters"] = Value::Array(parameters);
        }
        let item = self
            .paths
            .entry(path.to_owned())
            .or_insert_with(|| json!({}));
        item[method.to_ascii_lowercase()] = operation;
    }

    /// Adds `GET path` with a summary and its responses (no request body, no parameters).
    pub fn get(&mut self, path: &str, summary: &str, replies: Vec<Reply>) {
        self.operation("GET", path, summary, None, vec![], replies);
    }

    /// Adds `GET path`, where the service serves this document.
    pub fn this_document(&mut self, path: &str) {
        let this = vec![Document::bare(200, "The OpenAPI 3.1 document.")];
        self.get(path, "This document", this);
    }

    /// Adds `GET /healthz`, the liveness check, answering 200 described as `up`.
    pub fn liveness(&mut self, up: &'static str) {
        self.get("/healthz", "Liveness", vec![Document::bare(200, up)]);
    }

    /// The finished document.
    pub fn finish(mut self, version: &str) -> Value {
        let schemas = self.generator.take_definitions(true);
        json!({
            "openapi": "3.1.0",
            "info": { "title": self.title, "version": version, "description": self.description,
                      "license": { "name": "Apache-2.0", "identifier": "Apache-2.0" } },
            "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
            "paths": self.paths,
            "components": { "schemas": schemas },
        })
    }
}

/// A required request header parameter.
pub fn header(name: &str, description: &str) -> Value {
    json!({ "name": name, "in": "header", "required": true, "description": description,
            "schema": { "type": "string" } })
}

/// The error body every Tacit service answers with: `{"error": code, "message": text}`.
#[derive(Debug, JsonSchema)]
#[allow(dead_code)] // only its schema is used
pub struct ErrorBody {
    /// A stable code, e.g. `unknown_install`.
    pub error: String,
    /// A sentence for people.
    pub message: String,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Thing {
        name: String,
    }

    #[test]
    fn collects_components_and_refers_to_them() {
        let mut doc = Document::new("Example", "An example.");
        let thing = doc.schema::<Thing>();
        let reply = doc.reply::<ErrorBody>(400, "bad");
        doc.operation(
            "POST",
            "/v1/things",
            "Make a thing",
            Some(thing),
            vec![header("x-sig", "a signature")],
            vec![reply, Document::bare(204, "made")],
        );
        doc.this_document("/v1/openapi.json");
        doc.liveness("Up.");
        let value = doc.finish("1.2.3");
        assert_eq!(value["openapi"], "3.1.0");
        let op = &value["paths"]["/v1/things"]["post"];
        assert_eq!(
            op["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Thing"
        );
        assert_eq!(
            op["responses"]["400"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ErrorBody"
        );
        assert_eq!(op["responses"]["204"]["description"], "made");
        assert_eq!(op["parameters"][0]["name"], "x-sig");
        assert!(value["components"]["schemas"]["Thing"]["properties"]["name"].is_object());
        let this = &value["paths"]["/v1/openapi.json"]["get"];
        assert_eq!(this["summary"], "This document");
        assert_eq!(
            this["responses"]["200"]["description"],
            "The OpenAPI 3.1 document."
        );
        assert!(this.get("requestBody").is_none() && this.get("parameters").is_none());
        let health = &value["paths"]["/healthz"]["get"];
        assert_eq!(health["summary"], "Liveness");
        assert_eq!(health["responses"]["200"]["description"], "Up.");
    }
}
