//! Item 11 (issue 10): a presentation built in the page. The wallet is enrolled with an
//! in-process signer and holds a batch of income credentials from an in-process tax office
//! (`TestIssuer`, added through Settings → Credentials like a person does). Each round the agent
//! requests "income below 30,000.00 EUR" (a ladder step: answered from the credential), is
//! granted, calls the claim tool and drafts; then the Release button gets a real click (confirmed
//! by the tab's virtual authenticator) and, timed inside the page from that click,
//! `check_proposal` is polled through `document.modelContext.executeTool` until the receipt
//! is signed and the presentation attached (release → `Gate::release` → the holder key signs the
//! KB-JWT with WebCrypto → `attach_presentations`, plus the receipt's round trip to the signer).
//! The same flow for "income below 30,001.00 EUR" (off the ladder: the person's word, no
//! presentation) alternates with it, so the difference is what the presentation costs.
//! The baseline is a raw WebCrypto ECDSA P-256 signature (non-extractable key, a KB-JWT-sized
//! input) timed in the same page. Every `crypto.subtle.sign` during a release is also timed.

use serde_json::{Value, json};
use signer::{KeyStore, system_now};
use tacit_e2e::StaticServer;
use tacit_e2e::issuer_proc::TestIssuer;
use tacit_e2e::signer_proc::TestSigner;
use tacit_e2e::wallet::Wallet;

use crate::Res;
use crate::stats::{Samples, ms, ratio};

/// The audiences of the bench's applications, one port per release so that each draft holds
/// only its own answer (no site needs to run: nothing is submitted).
const AUDIENCE_PORT: u16 = 9100;

/// Arms the measurement for `proposal`: from the person's (real, trusted) click on its Release
/// button, `check_proposal` is polled until the receipt is signed; `window.__releaseBench`
/// resolves with the time from the click, the presentation count and every
/// `crypto.subtle.sign` timed meanwhile. The click itself comes from DevTools input (the page
/// acts on trusted clicks only), and the time includes the person's confirmation (the tab's
/// virtual authenticator).
const RELEASE_ARM_JS: &str = r#"
((proposal) => {
  const selector = '[data-action=release][data-id="' + proposal + '"]';
  if (!document.querySelector(selector)) throw new Error('no Release button for ' + proposal);
  window.__releaseBench = new Promise((resolve, reject) => {
    const stamp = (e) => {
      if (!e.isTrusted || !e.target.closest || !e.target.closest(selector)) return;
      window.removeEventListener('click', stamp, true);
      const t0 = performance.now();
      const subtle = crypto.subtle;
      const original = subtle.sign;
      const signs = [];
      subtle.sign = function (...args) {
        const t = performance.now();
        return original.apply(subtle, args).finally(() => signs.push(performance.now() - t));
      };
      (async () => {
        const mc = document.modelContext;
        const check = (await mc.getTools()).find((t) => t.name === 'check_proposal');
        if (!check) throw new Error('check_proposal is not registered');
        for (;;) {
          const out = JSON.parse(await mc.executeTool(check, { proposal_id: proposal }));
          if (out.result && out.result.signed === true) {
            return { ms: performance.now() - t0, presentations: (out.result.presentations || []).length, signs };
          }
          if (performance.now() - t0 > 30000) throw new Error('never signed: ' + JSON.stringify(out));
          await new Promise((r) => setTimeout(r, 2));
        }
      })().then(resolve, reject).finally(() => {
        delete subtle.sign;
        if (subtle.sign !== original) subtle.sign = original;
      });
    };
    window.addEventListener('click', stamp, true);
  });
  return true;
})
"#;

/// Raw WebCrypto ECDSA P-256 signatures with a non-extractable key over `bytes` bytes: `n`
/// rounds of `k` awaited signatures each (the page's clock ticks in 0.1 ms), per signature.
const RAW_SIGN_JS: &str = r#"
(async (n, k, bytes) => {
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
  const data = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) data[i] = 97 + (i % 26);
  const alg = { name: 'ECDSA', hash: 'SHA-256' };
  const out = [];
  for (let i = 0; i < n + 1; i++) {
    const t0 = performance.now();
    for (let j = 0; j < k; j++) {
      const sig = await crypto.subtle.sign(alg, pair.privateKey, data);
      if (sig.byteLength !== 64) throw new Error('signature of ' + sig.byteLength + ' bytes');
    }
    const took = (performance.now() - t0) / k;
    if (i >= 1) out.push(took);
  }
  return out;
})
"#;

#[derive(Debug, Default)]
pub struct Proofs {
    pub issuer: String,
    pub rounds: usize,
    /// Release → signed with one presentation attached (issuer-backed item).
    pub proven: Samples,
    /// Release → signed, self-asserted item (no presentation).
    pub self_asserted: Samples,
    /// Every `crypto.subtle.sign` during the proven releases.
    pub proven_signs: Samples,
    /// Signatures per proven release.
    pub signs_per_release: Vec<usize>,
    /// Raw WebCrypto ECDSA P-256 sign.
    pub raw_sign: Samples,
    pub kb_input_bytes: usize,
    pub credentials_left: usize,
}

/// Runs `rounds` proven and `rounds` self-asserted releases, interleaved, then the baseline.
pub fn run(wallet: &mut Wallet<'_>, server: &StaticServer, rounds: usize) -> Res<Proofs> {
    let signer = TestSigner::start(
        KeyStore::make(system_now().plus_millis(-3_600_000))?,
        &[&server.origin()],
    )?;
    let tax = TestIssuer::tax_office()?;
    wallet.enrol(&signer.url(), &signer.enrolment_code()?);
    let origin = tax.origin();
    // Ana: 28,500.00 EUR; income below 30,000 is true.
    wallet.add_credential(&origin, &tax.code_for("Ana")?);
    let batch = wallet.proofs_left(&origin);
    if batch < rounds {
        return Err(format!(
            "the tax office's batch has {batch} proofs, fewer than --proofs {rounds}"
        )
        .into());
    }

    let mut result = Proofs {
        issuer: tax.name().to_owned(),
        rounds,
        ..Proofs::default()
    };
    // One warm-up of each, then the rounds; the order alternates.
    for round in 0..=rounds {
        let order = if round % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for proven in order {
            if round == 0 && proven {
                // The warm-up spends no credential: measure only the self-asserted path.
                continue;
            }
            let limit = if proven { 3_000_000 } else { 3_000_100 };
            let nonce = format!("bench-proof-{round}-{}", u8::from(proven));
            let audience = format!(
                "http://127.0.0.1:{}",
                AUDIENCE_PORT + 2 * round as u16 + u16::from(proven)
            );
            let out = release_once(wallet, &audience, limit, &nonce, proven)?;
            if round == 0 {
                continue;
            }
            let took = out["ms"].as_f64().ok_or("release gave no time")?;
            let signs: Vec<f64> = out["signs"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            if proven {
                result.proven.push(took);
                result.signs_per_release.push(signs.len());
                for s in signs {
                    result.proven_signs.push(s);
                }
            } else {
                result.self_asserted.push(took);
            }
        }
    }
    result.credentials_left = wallet.proofs_left(&origin);

    // A KB-JWT signing input is about this long (header, aud, iat, nonce, sd_hash).
    result.kb_input_bytes = 220;
    let raw = wallet
        .page
        .eval(&format!("{RAW_SIGN_JS}(15, 20, {})", result.kb_input_bytes))?;
    for v in raw.as_array().ok_or("the raw sign gave no samples")? {
        result
            .raw_sign
            .push(v.as_f64().ok_or("a raw sign sample is not a number")?);
    }
    drop(signer);
    drop(tax);
    Ok(result)
}

/// request → grant → claim tool → draft, then the timed release. Checks that the approval
/// card says what is measured (issuer-backed or the person's word) and that exactly the
/// expected number of presentations came back.
fn release_once(
    wallet: &mut Wallet<'_>,
    audience: &str,
    limit: u64,
    nonce: &str,
    proven: bool,
) -> Res<Value> {
    let id = wallet.request(json!({
        "origin": audience,
        "nonce": nonce,
        "claims": [{ "kind": "income_below", "limit": { "amount_minor": limit, "currency": "EUR" } }],
    }));
    let tools = wallet.grant(&id, "600000", 1);
    let tool = tools.first().ok_or("the grant made no tool")?;
    let answer = wallet.call(tool, json!({}));
    if answer["ok"] != true {
        return Err(format!("{tool} answered {answer}").into());
    }
    let proposal = wallet.draft(audience, nonce);
    let items = wallet.approval_items(&proposal);
    let want = if proven { "issuer" } else { "self" };
    if items.len() != 1 || items[0].0 != want {
        return Err(format!("approval card for a {want} item shows {items:?}").into());
    }
    wallet.page.eval(&format!(
        "{RELEASE_ARM_JS}({})",
        serde_json::to_string(&proposal)?
    ))?;
    wallet.release(&proposal, true);
    let out = wallet.page.eval("window.__releaseBench")?;
    let presentations = out["presentations"].as_u64().unwrap_or(u64::MAX);
    if presentations != u64::from(proven) {
        return Err(format!("a {want} release came back with {out}").into());
    }
    Ok(out)
}

impl Proofs {
    pub fn markdown(&self) -> String {
        let mut r = String::from("## 11. A presentation built in the page\n\n");
        r.push_str(&format!(
            "The wallet page enrolled with an in-process signer and holding a batch of income \
             credentials from an in-process {} (`TestIssuer`, added through Settings → \
             Credentials). Each round: the agent requests *income below 30,000.00 EUR* (a ladder \
             step, answered from the credential), the person grants, the agent calls the claim \
             tool and drafts; then Release gets a real click, confirmed by a WebAuthn assertion \
             (DevTools virtual authenticator), and, timed inside the page from that click, \
             `check_proposal` is polled through `document.modelContext.executeTool` (2 ms apart) \
             until the receipt is signed and one presentation is attached: `Gate::release`, the \
             holder key's WebCrypto signature over the KB-JWT, `attach_presentations`, and the \
             receipt's round trip to the signer. The same flow for *income below 30,001.00 EUR* \
             (off the ladder: the person's word, no presentation) alternates with it ({} rounds \
             each after one self-asserted warm-up). The baseline is a raw WebCrypto ECDSA P-256 \
             signature with a non-extractable key over {} bytes (about a KB-JWT signing input), \
             timed in the same page as 15 rounds of 20 awaited signatures (per signature; the \
             page's clock ticks in 0.1 ms) after a warm-up round. Every `crypto.subtle.sign` during a proven \
             release was timed too (the holder key's and the install key's).\n\n",
            self.issuer, self.rounds, self.kb_input_bytes
        ));
        r.push_str(
            "| measurement | median | p90 | min | max | / raw WebCrypto sign |\n\
             |---|---:|---:|---:|---:|---:|\n",
        );
        let raw = self.raw_sign.median();
        for (label, s) in [
            (
                "Release → signed, **one presentation attached** (issuer-backed)",
                &self.proven,
            ),
            (
                "Release → signed, self-asserted (no presentation)",
                &self.self_asserted,
            ),
            (
                "each `crypto.subtle.sign` inside a proven release",
                &self.proven_signs,
            ),
            ("raw WebCrypto ECDSA P-256 sign (baseline)", &self.raw_sign),
        ] {
            r.push_str(&format!(
                "| {label} | {} | {} | {} | {} | {} |\n",
                ms(s.median()),
                ms(s.pct(0.90)),
                ms(s.min()),
                ms(s.max()),
                ratio(s.median(), raw)
            ));
        }
        r.push_str(&format!(
            "| proven − self-asserted (medians): what the presentation adds | {} | | | | {} |\n",
            ms(self.proven.median() - self.self_asserted.median()),
            ratio(self.proven.median() - self.self_asserted.median(), raw)
        ));
        let signs: Vec<String> = self
            .signs_per_release
            .iter()
            .map(ToString::to_string)
            .collect();
        r.push_str(&format!(
            "\nWebCrypto signatures per proven release: {}; proofs left afterwards: {}.\n\n",
            signs.join(", "),
            self.credentials_left
        ));
        r
    }

    pub fn json(&self) -> Value {
        json!({
            "issuer": self.issuer,
            "rounds": self.rounds,
            "proven_release": self.proven.json(),
            "self_asserted_release": self.self_asserted.json(),
            "signs_in_proven_release": self.proven_signs.json(),
            "signs_per_release": self.signs_per_release,
            "raw_webcrypto_sign": self.raw_sign.json(),
            "kb_input_bytes": self.kb_input_bytes,
            "credentials_left": self.credentials_left,
        })
    }
}
