// Verifies SD-JWT VC presentations with an independent implementation (@sd-jwt/sd-jwt-vc) and
// prints one verdict per case.
//
// stdin: a JSON array of cases
//   { "id": "any label",
//     "presentation": "<issuer-jwt>~<disclosure>~…~<kb-jwt>",
//     "issuer_jwks": { "keys": [ { "kty":"EC","crv":"P-256","x":…,"y":…,"kid":… } ] },  // pinned
//     (or "issuer_jwk": { "kty":"EC","crv":"P-256","x":…,"y":… } — one pinned key, any kid)
//     "iss": "http://127.0.0.1:8091",            // optional: the expected issuer
//     "aud": "http://127.0.0.1:8081", "nonce": "…",
//     "now": 1777714200,                         // optional: seconds since the epoch (default: clock)
//     "max_kb_age_seconds": 300 }                // optional (default 300)
// stdout: a JSON array, one entry per case, in order:
//   { "id": …, "verdict": "accepted", "disclosed": { name: value, … }, "iss": …, "vct": … }
//   { "id": …, "verdict": "refused", "error": "<the library's or this script's message>" }
//
// What is checked and by whom: the library checks the issuer signature (with the key we hand it),
// `exp`/`iat` of the issuer JWT against `now`, the disclosures' digests, the KB-JWT's presence,
// shape, signature by `cnf.jwk`, its `nonce`, and `sd_hash`. The library only checks that the
// KB-JWT *has* an `aud` and an `iat`, so this script compares `aud` and the `iat` age itself (5
// minutes by default, 60 s of future skew), from the KB payload the library returns. The library
// also ignores a disclosure whose digest is not in the issuer-signed JWT (RFC 9901 §7.1 says
// reject), so the script refuses one. Refusals the script adds start with "script:". The issuer
// key is looked up by `kid` in the pinned JWKS only. The one fetch is the library's: a credential
// that names a Token Status List entry has its issuer's list fetched, verified with the pinned
// issuer key and read (a set entry is refused: "Status is not valid").
//
// Exit status: 0 when every case was judged (whatever the verdicts), 2 on unreadable input.

import { SDJwtVcInstance } from "@sd-jwt/sd-jwt-vc";
import { ES256, digest } from "@sd-jwt/crypto-nodejs";

const FUTURE_SKEW_SECONDS = 60;

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function pickKey(jwks, kid) {
  const keys = (jwks && Array.isArray(jwks.keys)) ? jwks.keys : [];
  const found = keys.find((k) => k && k.kid === kid);
  if (!found) return undefined;
  return { kty: found.kty, crv: found.crv, x: found.x, y: found.y };
}

async function judge(c) {
  const now = Number.isInteger(c.now) ? c.now : Math.floor(Date.now() / 1000);
  const maxAge = Number.isInteger(c.max_kb_age_seconds) ? c.max_kb_age_seconds : 300;

  // Decode first (no trust yet) to learn which pinned key the issuer JWT names.
  const decoder = new SDJwtVcInstance({ hasher: digest, hashAlg: "sha-256" });
  const decoded = await decoder.decode(c.presentation);
  const kid = decoded?.jwt?.header?.kid;
  const issuerJwk = c.issuer_jwk
    ? { kty: c.issuer_jwk.kty, crv: c.issuer_jwk.crv, x: c.issuer_jwk.x, y: c.issuer_jwk.y }
    : pickKey(c.issuer_jwks, kid);
  if (!issuerJwk) return { verdict: "refused", error: "script: unknown issuer key: kid not in the pinned JWKS" };
  if (c.iss !== undefined && decoded?.jwt?.payload?.iss !== c.iss) {
    return { verdict: "refused", error: "script: unknown issuer: iss differs from the pinned issuer" };
  }

  const issuerVerify = await ES256.getVerifier(issuerJwk);
  const sdjwt = new SDJwtVcInstance({
    hasher: digest,
    hashAlg: "sha-256",
    verifier: (data, sig) => issuerVerify(data, sig),
    kbVerifier: async (data, sig, payload) => {
      const jwk = payload?.cnf?.jwk;
      if (!jwk) throw new Error("no cnf.jwk in the credential");
      const holderVerify = await ES256.getVerifier(jwk);
      return holderVerify(data, sig);
    },
  });

  // The same 60 s of future skew Tacit's verifier allows an `iat` (MAX_FUTURE_SKEW_MS). It also
  // lets the library's own check of a credential's status list pass: the library fetches the
  // list the credential names (`status.status_list.uri`), verifies it with the issuer's key and
  // reads the entry, and that token is issued when fetched, a few seconds after the case's `now`.
  const result = await sdjwt.verify(c.presentation, {
    keyBindingNonce: c.nonce,
    currentDate: now,
    skewSeconds: FUTURE_SKEW_SECONDS,
  });
  if (!result.kb) return { verdict: "refused", error: "no key-binding JWT" };
  const kb = result.kb.payload;
  if (kb.aud !== c.aud) return { verdict: "refused", error: "script: KB-JWT aud differs" };
  if (!Number.isInteger(kb.iat)) return { verdict: "refused", error: "script: KB-JWT iat is not an integer" };
  if (kb.iat > now + FUTURE_SKEW_SECONDS) return { verdict: "refused", error: "script: KB-JWT iat is in the future" };
  if (now - kb.iat > maxAge) return { verdict: "refused", error: "script: KB-JWT is stale" };

  // RFC 9901 §7.1 step 3: a disclosure not referenced by a digest in the issuer-signed JWT
  // means the SD-JWT MUST be rejected. The library (0.19) ignores such a disclosure when it
  // resolves the claims, so the script compares every disclosure with the resolved claims.
  const presented = await sdjwt.decode(c.presentation);
  const claims = await presented.getClaims(digest);
  const disclosed = {};
  for (const d of presented.disclosures ?? []) {
    if (d.key === undefined) continue;
    if (!(d.key in claims) || JSON.stringify(claims[d.key]) !== JSON.stringify(d.value)) {
      return { verdict: "refused", error: "script: a disclosure is not referenced by the issuer-signed JWT (RFC 9901 7.1)" };
    }
    disclosed[d.key] = d.value;
  }
  return { verdict: "accepted", iss: claims.iss, vct: claims.vct, disclosed };
}

let cases;
try {
  cases = JSON.parse(await readStdin());
  if (!Array.isArray(cases)) throw new Error("expected a JSON array of cases");
} catch (e) {
  console.error(`verify.mjs: unreadable input: ${e.message}`);
  process.exit(2);
}

const out = [];
for (const c of cases) {
  try {
    out.push({ id: c.id, ...(await judge(c)) });
  } catch (e) {
    out.push({ id: c.id, verdict: "refused", error: String(e?.message ?? e) });
  }
}
process.stdout.write(JSON.stringify(out, null, 2) + "\n");
