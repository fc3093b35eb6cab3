//! `tacit-verify RECEIPT.json --keys KEYS.json|URL [--audience ORIGIN] [--nonce N] [--now MS]`
//!
//! Runs wallet-core's [`PublishedKeys::verify`] (every check of `wallet_core::receipt::verify`,
//! then the signer's revoked receipts) and prints who attested what to whom and when; on failure
//! it names the reason and exits with that reason's code (see [`exit`]).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clap::Parser;
use tacit_service::error::Operational;
use wallet_core::receipt::MAX_RECEIPT_BYTES;
use wallet_core::{Nonce, Origin, PublishedKeys, SignedReceipt, Timestamp, VerifiedReceipt};

use crate::{Error, http1, system_now};

/// Exit codes: one per failure reason, so scripts can tell them apart.
pub mod exit {
    pub const OK: u8 = 0;
    /// Bad arguments or an unreadable receipt file (clap also exits 2 on usage errors).
    pub const USAGE: u8 = 2;
    /// The key set could not be loaded.
    pub const KEYS_UNAVAILABLE: u8 = 3;
    pub const BAD_SIGNATURE: u8 = 10;
    pub const UNKNOWN_KEY: u8 = 11;
    pub const EXPIRED: u8 = 12;
    pub const NOT_YET_VALID: u8 = 13;
    pub const AUDIENCE_MISMATCH: u8 = 14;
    pub const NONCE_MISMATCH: u8 = 15;
    pub const BROKEN_CHAIN: u8 = 16;
    pub const MALFORMED_RECEIPT: u8 = 17;
    /// The key set lists the receipt as revoked (its install was revoked).
    pub const REVOKED: u8 = 18;
}

/// Verify a signed Tacit receipt offline.
#[derive(Debug, Parser)]
#[command(
    name = "tacit-verify",
    version,
    about = "Verifies a signed Tacit receipt offline and says who attested what to whom and when"
)]
pub struct VerifyArgs {
    /// The signed receipt (JSON, as the signer returned it).
    pub receipt: PathBuf,
    /// The signer's key set: a file (the body of GET /v1/keys), an https:// URL, or an http://
    /// URL of a signer on this machine (loopback only).
    #[arg(long)]
    pub keys: String,
    /// The site the receipt must be for; defaults to the receipt's own audience (said so).
    #[arg(long)]
    pub audience: Option<String>,
    /// The nonce the site issued; defaults to the receipt's own nonce (said so).
    #[arg(long)]
    pub nonce: Option<String>,
    /// Verify as of this time, in Unix milliseconds, instead of now.
    #[arg(long, allow_negative_numbers = true)]
    pub now: Option<i64>,
    /// Print one JSON object on stdout instead of the text report, on success
    /// (`"verified": true`) and on failure (`"verified": false`, `reason`, `message`); the exit
    /// codes are the same.
    #[arg(long)]
    pub json: bool,
}

/// The short name of a verification failure and its exit code.
pub fn reason(error: &wallet_core::VerifyError) -> (&'static str, u8) {
    use wallet_core::VerifyError as E;
    match error {
        E::BadSignature => ("bad signature", exit::BAD_SIGNATURE),
        E::UnknownKey => ("unknown key", exit::UNKNOWN_KEY),
        E::Expired => ("expired", exit::EXPIRED),
        E::NotYetValid => ("not yet valid", exit::NOT_YET_VALID),
        E::AudienceMismatch => ("audience mismatch", exit::AUDIENCE_MISMATCH),
        E::NonceMismatch => ("nonce mismatch", exit::NONCE_MISMATCH),
        E::ChainBroken(_) => ("broken chain", exit::BROKEN_CHAIN),
        E::Malformed(_) => ("malformed receipt", exit::MALFORMED_RECEIPT),
        E::Revoked => ("revoked", exit::REVOKED),
    }
}

/// Runs the verifier, writing the report to `out` and failures to `err`. Returns the exit code.
pub fn run(args: &VerifyArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    if args.json {
        let (value, code) = match check(args) {
            Ok((verified, notes)) => (report_json(&verified, &notes), exit::OK),
            Err(error) => {
                let (reason, code) = match &error {
                    Error::Verify(e) => reason(e),
                    Error::Keys(_) => ("keys unavailable", exit::KEYS_UNAVAILABLE),
                    _ => ("usage", exit::USAGE),
                };
                let message = match &error {
                    Error::Verify(e) => e.to_string(),
                    other => other.to_string(),
                };
                let failed = serde_json::json!({
                    "verified": false, "reason": reason, "message": message,
                });
                (failed, code)
            }
        };
        let _ = writeln!(out, "{value}");
        return code;
    }
    match check(args) {
        Ok((verified, notes)) => {
            let _ = report(out, &verified, &notes, args.now);
            exit::OK
        }
        Err(Error::Verify(error)) => {
            let (name, code) = reason(&error);
            let _ = writeln!(err, "tacit-verify: FAILED ({name}): {error}");
            code
        }
        Err(error @ Error::Keys(_)) => {
            let _ = writeln!(err, "tacit-verify: FAILED (keys unavailable): {error}");
            exit::KEYS_UNAVAILABLE
        }
        Err(error) => {
            let _ = writeln!(err, "tacit-verify: {error}");
            exit::USAGE
        }
    }
}

fn check(args: &VerifyArgs) -> Result<(VerifiedReceipt, Vec<String>), Error> {
    let bytes = read_limited(&args.receipt)?;
    let signed = SignedReceipt::parse(&bytes).map_err(|e| Error::Verify(e.into()))?;
    let keys = load_keys(&args.keys)?;
    let mut notes = Vec::new();
    let audience = match &args.audience {
        Some(text) => Origin::parse(text).map_err(|_| {
            Operational::Config(
                "--audience must be an origin such as https://site.example".to_owned(),
            )
        })?,
        None => {
            notes.push(
                "no --audience given: checked against the receipt's own audience, which only \
                 shows the receipt is consistent, not that it was meant for you"
                    .to_owned(),
            );
            signed.payload.audience.clone()
        }
    };
    let nonce = match &args.nonce {
        Some(text) => Nonce::parse(text).map_err(|_| {
            Operational::Config("--nonce must match [A-Za-z0-9_.~-]{1,128}".to_owned())
        })?,
        None => {
            notes.push(
                "no --nonce given: checked against the receipt's own nonce, so replay is not \
                 ruled out"
                    .to_owned(),
            );
            signed.payload.nonce.clone()
        }
    };
    let now = args.now.map_or_else(system_now, Timestamp::from_millis);
    let verified = keys
        .verify(&signed, &audience, &nonce, now)
        .map_err(Error::Verify)?;
    Ok((verified, notes))
}

fn read_limited(path: &Path) -> Result<Vec<u8>, Error> {
    let io = |action, source| Operational::Io {
        action,
        path: path.display().to_string(),
        source,
    };
    let file = std::fs::File::open(path).map_err(|e| io("open", e))?;
    let mut bytes = Vec::new();
    file.take(MAX_RECEIPT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io("read", e))?;
    Ok(bytes)
}

fn load_keys(source: &str) -> Result<PublishedKeys, Error> {
    if source.starts_with("http://") || source.starts_with("https://") {
        return http1::fetch_key_set(source);
    }
    let bytes = read_limited(Path::new(source)).map_err(|e| Error::Keys(e.to_string()))?;
    PublishedKeys::parse(&bytes).map_err(|_| Error::Keys(format!("{source} is not a key set")))
}

fn report(
    out: &mut dyn Write,
    v: &VerifiedReceipt,
    notes: &[String],
    now: Option<i64>,
) -> std::io::Result<()> {
    writeln!(out, "tacit-verify: receipt verified")?;
    let source = match v.provenance() {
        wallet_core::Provenance::SelfAsserted => "answers from the person's own wallet entries",
        wallet_core::Provenance::IssuerBacked => {
            "answers, some from issuers' credentials (the site checks one SD-JWT presentation \
             per issuer-backed claim; this receipt alone proves none)"
        }
    };
    writeln!(
        out,
        "who:     signer key {}, attesting {source} ({})",
        v.key_id(),
        v.provenance().as_str()
    )?;
    writeln!(
        out,
        "what:    {} answer(s) in session {} (log head {}):",
        v.answers().len(),
        v.session_id(),
        v.log_head()
    )?;
    for ((claim, outcome), issuer) in v.answers().iter().zip(v.issuers()) {
        let from = match issuer {
            Some(issuer) => format!("issuer-backed by {issuer}"),
            None => "self-asserted".to_owned(),
        };
        writeln!(
            out,
            "           {}: {} ({from})",
            claim.canonical(),
            outcome.as_str()
        )?;
    }
    writeln!(out, "to whom: {} (nonce {})", v.audience(), v.nonce())?;
    writeln!(
        out,
        "when:    issued {}, valid until {}, signed {}",
        iso(v.issued_at()),
        iso(v.expires_at()),
        iso(v.signed_at())
    )?;
    if let Some(ms) = now {
        writeln!(
            out,
            "checked as of {} (--now)",
            iso(Timestamp::from_millis(ms))
        )?;
    }
    for note in notes {
        writeln!(out, "note:    {note}")?;
    }
    Ok(())
}

/// The `--json` report: the same facts as the text report, as one object.
fn report_json(v: &VerifiedReceipt, notes: &[String]) -> serde_json::Value {
    let time = |at: Timestamp| serde_json::json!({ "ms": at.millis(), "utc": iso(at) });
    let answers: Vec<serde_json::Value> = v
        .answers()
        .iter()
        .zip(v.issuers())
        .map(|((claim, outcome), issuer)| {
            serde_json::json!({
                "claim": serde_json::to_value(claim).unwrap_or(serde_json::Value::Null),
                "canonical": claim.canonical(),
                "outcome": outcome.as_str(),
                "issuer": issuer.as_ref().map(ToString::to_string),
            })
        })
        .collect();
    serde_json::json!({
        "verified": true,
        "key_id": v.key_id().to_string(),
        "provenance": v.provenance().as_str(),
        "session_id": v.session_id().to_string(),
        "log_head": v.log_head().to_string(),
        "answers": answers,
        "audience": v.audience().to_string(),
        "nonce": v.nonce().to_string(),
        "issued_at": time(v.issued_at()),
        "expires_at": time(v.expires_at()),
        "signed_at": time(v.signed_at()),
        "notes": notes,
    })
}

/// RFC 3339 in UTC, or the raw milliseconds if out of range.
fn iso(at: Timestamp) -> String {
    tacit_service::cli::rfc3339(at).unwrap_or_else(|| format!("{} ms", at.millis()))
}
