// Checks Tacit's OpenAPI documents and real responses with independent implementations:
// @seriousme/openapi-schema-validator validates the document against the OpenAPI 3.1 schema,
// and Ajv (JSON Schema draft 2020-12) validates each sample body against the component the
// document names for it.
//
// stdin: { "document": { …OpenAPI 3.1… },
//          "samples": [ { "id": "label", "schema": "SignedReceipt", "value": … }, … ] }
// stdout: { "document": { "valid": bool, "errors": [ … ] },
//           "samples": [ { "id": …, "valid": bool, "errors": [ … ] }, … ] }
// Exit status: 0 when everything was judged (whatever the verdicts), 2 on unreadable input.

import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
let input;
try {
  input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
} catch (e) {
  console.error("unreadable input: " + e);
  process.exit(2);
}

const validator = new Validator();
const checked = await validator.validate(structuredClone(input.document));
const document = { valid: checked.valid, errors: checked.valid ? [] : checked.errors };

// The components as one schema resource, so `#/components/schemas/X` refs resolve.
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat("int64", { type: "number", validate: Number.isInteger });
ajv.addSchema({ $id: "tacit:doc", components: input.document.components ?? {} });
const samples = (input.samples ?? []).map(({ id, schema, value }) => {
  const validate = ajv.getSchema("tacit:doc#/components/schemas/" + schema);
  if (!validate) return { id, valid: false, errors: ["no component " + schema] };
  const valid = validate(value);
  return { id, valid, errors: valid ? [] : validate.errors };
});

process.stdout.write(JSON.stringify({ document, samples }));
