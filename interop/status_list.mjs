// Reads Tacit's Token Status List tokens with an independent implementation
// (@sd-jwt/jwt-status-list, draft-ietf-oauth-status-list) and writes a list with it for Tacit
// to read back.
//
// stdin: { "token": "<statuslist+jwt>",
//          "issuer_jwk": { "kty":"EC","crv":"P-256","x":…,"y":… },   // the issuer's key
//          "credentials": [ "<issuer-jwt of an SD-JWT VC>", … ],       // each names its entry
//          "make": { "bits": 1, "statuses": [0, 1, …] } }               // optional
// stdout: { "signature": true|false,      // node:crypto ES256 check of the token with the key
//           "header": {…}, "sub": …, "ttl": …, "bits": …,
//           "entries": [ { "idx": …, "uri": …, "status": … }, … ],     // per credential, in order
//           "made": { "bits": …, "lst": "…" } }                        // the library's encoding
//
// The library decodes the token and the credentials' `status` claims (getListFromStatusListJWT,
// getStatusListFromJWT) and inflates the list; this script checks the signature itself (the
// library leaves that to its caller) and that the list is the one each credential names.

import { createPublicKey, verify } from "node:crypto";
import {
  StatusList,
  getListFromStatusListJWT,
  getStatusListFromJWT,
} from "@sd-jwt/jwt-status-list";

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function part(text) {
  return JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
}

const input = JSON.parse(await readStdin());
const [header, payload, signature] = input.token.split(".");
const key = createPublicKey({ key: input.issuer_jwk, format: "jwk" });
const signed = verify(
  "sha256",
  Buffer.from(`${header}.${payload}`),
  { key, dsaEncoding: "ieee-p1363" },
  Buffer.from(signature, "base64url"),
);
const body = part(payload);
const list = getListFromStatusListJWT(input.token);
const entries = (input.credentials || []).map((jwt) => {
  const entry = getStatusListFromJWT(jwt);
  if (entry.uri !== body.sub) throw new Error(`credential names ${entry.uri}, token is ${body.sub}`);
  return { idx: entry.idx, uri: entry.uri, status: list.getStatus(entry.idx) };
});
let made = null;
if (input.make) {
  const ours = new StatusList(input.make.statuses, input.make.bits);
  made = { bits: input.make.bits, lst: ours.compressStatusList() };
}
process.stdout.write(
  JSON.stringify({
    signature: signed,
    header: part(header),
    sub: body.sub,
    ttl: body.ttl,
    bits: list.getBitsPerStatus(),
    entries,
    made,
  }),
);
