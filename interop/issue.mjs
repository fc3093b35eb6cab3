// Issues an SD-JWT VC and presents it with key binding, both with @sd-jwt/sd-jwt-vc, so Tacit's
// Rust verifier can be checked against credentials and presentations it did not make.
//
// stdin: one JSON object
//   { "issuer_private_jwk": {kty,crv,x,y,d}, "kid": "…",
//     "holder_private_jwk": {kty,crv,x,y,d},
//     "payload": { "iss": …, "vct": …, "iat": …, "exp": …, "currency": …, … },   // cnf is added
//     "disclosable": ["income_below_30000", …],   // top-level names made selectively disclosable
//     "present": ["income_below_30000"],           // names kept in the presentation
//     "aud": "…", "nonce": "…", "kb_iat": 1777714200 }
// stdout: { "credential": "<issuer-jwt>~<d>~…~", "presentation": "<issuer-jwt>~<d>~…~<kb-jwt>" }

import { SDJwtVcInstance } from "@sd-jwt/sd-jwt-vc";
import { ES256, digest, generateSalt } from "@sd-jwt/crypto-nodejs";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const publicOf = ({ kty, crv, x, y }) => ({ kty, crv, x, y });
const sdjwt = new SDJwtVcInstance({
  hasher: digest,
  hashAlg: "sha-256",
  saltGenerator: generateSalt,
  signer: await ES256.getSigner(input.issuer_private_jwk),
  signAlg: "ES256",
  kbSigner: await ES256.getSigner(input.holder_private_jwk),
  kbSignAlg: "ES256",
});

const payload = { ...input.payload, cnf: { jwk: publicOf(input.holder_private_jwk) } };
const credential = await sdjwt.issue(
  payload,
  { _sd: input.disclosable },
  { header: { kid: input.kid } },
);
const frame = Object.fromEntries(input.present.map((name) => [name, true]));
const presentation = await sdjwt.present(credential, frame, {
  kb: { payload: { aud: input.aud, nonce: input.nonce, iat: input.kb_iat } },
});
process.stdout.write(JSON.stringify({ credential, presentation }) + "\n");
