//! The site's configuration file (TOML). Trust lives here and nowhere else: the origin, the
//! policy, the signer keys the verdict counts, the issuers it will trust.
//!
//! ```toml
//! origin = "http://127.0.0.1:8081"        # optional: http://<listen address> when omitted
//! listen = "127.0.0.1:8081"
//! static_dir = "../../target/site/housing" # the built page (cargo xtask build-web)
//! data_dir = "../../target/site-data/housing" # nonces.db and site.key (0600, made on first start)
//! # database_url = "postgres://…"         # optional; the DATABASE_URL variable wins
//! # rate_limit_per_minute = 120           # per client on the API; 0 = off
//! # rate_limit_per_minute_per_48 = 600    # per IPv6 /48 (default 5 × the above); 0 = off
//! # rate_limit_per_minute_overall = 6000  # the whole site (default 50 × the above); 0 = off
//! # nonce_lifetime_ms = 3600000           # how long an issued nonce stays open (2 s to 1 day)
//! # Issuers whose SD-JWT credentials back answers (their presentations are checked here):
//! trusted_issuers = [
//!   { issuer = "http://127.0.0.1:8791", name = "Tax Office Nordstadt",
//!     keys_url = "http://127.0.0.1:8791/.well-known/jwt-vc-issuer",  # or pinned_keys = "file"
//!     vouches_for = "income", vct = "https://tacit.example/vct/income" },
//! ]
//!
//! [policy]
//! site_name = "City Housing Programme"
//! purpose = "…"
//! submission = "application"
//! accepted_text = "…"
//! requirements_tool = "housing_requirements"
//! submit_tool = "housing_submit_application"
//! claims = [
//!   { kind = "income_below", limit = { amount_minor = 3000000, currency = "EUR" } },
//! ]
//!
//! [signer]
//! keys_url = "http://127.0.0.1:8787/v1/keys"  # or: pinned_keys = "signer-keys.json"
//! ```
//!
//! The rules an entry must meet live in pure code: [`tacit_protocol::trust`] (key sources,
//! trusted issuers) and [`crate::nonce::check_lifetime_ms`]; this module reads the file and
//! calls them. Relative paths are taken from the configuration file's directory. Unknown keys are refused,
//! so a misspelt setting cannot silently fall back to a default.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use tacit_protocol::rate_limit::Budgets;
use tacit_protocol::trust::{self, IssuerEntry, IssuerEntryError, KeySource};
use wallet_core::Origin;

use super::ServerError;
use crate::nonce::check_lifetime_ms;
use crate::policy::Policy;

/// Largest configuration file read.
const MAX_CONFIG_BYTES: u64 = 256 * 1024;

/// A site server's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The site's origin, as browsers see it: the receipts' audience and the requirements'
    /// origin. When omitted, `http://<bound address>` (handy for tests on port 0).
    #[serde(default)]
    pub origin: Option<Origin>,
    /// Where to listen.
    pub listen: SocketAddr,
    /// The built page (`target/site/<name>`), served with the security headers.
    pub static_dir: PathBuf,
    /// Holds `nonces.db` (the SQLite default) and `site.key`.
    pub data_dir: PathBuf,
    /// A database URL (`sqlite://…` or `postgres://…`); the `DATABASE_URL` variable wins; when
    /// neither is set, `<data_dir>/nonces.db`.
    #[serde(default)]
    pub database_url: Option<String>,
    /// What the site asks for and how its tools are named.
    pub policy: Policy,
    /// Which signer keys a receipt must verify against.
    pub signer: SignerConfig,
    /// Issuers whose credentials the site trusts: an issuer-backed answer counts only with a
    /// presentation from one of these. Empty: every issuer-backed answer is refused
    /// `untrusted_issuer`.
    #[serde(default)]
    pub trusted_issuers: Vec<TrustedIssuer>,
    /// Requests per minute each client may make to `/api/requirements` and
    /// `/api/applications` together (burst of this many, refilled evenly); 0 turns the limit
    /// off. Default [`super::DEFAULT_RATE_LIMIT_PER_MINUTE`].
    #[serde(default = "default_rate_limit_per_minute")]
    pub rate_limit_per_minute: u32,
    /// Requests per minute every client inside one IPv6 /48 may make together (one host can
    /// mint a fresh /64, so a fresh client bucket, per request); 0 turns this tier off. Default
    /// [`tacit_protocol::rate_limit::PER_48_FACTOR`] times `rate_limit_per_minute`.
    #[serde(default)]
    pub rate_limit_per_minute_per_48: Option<u32>,
    /// Requests per minute the whole site takes on those routes, from every client together; 0
    /// turns this tier off. Default [`tacit_protocol::rate_limit::OVERALL_FACTOR`] times
    /// `rate_limit_per_minute`.
    #[serde(default)]
    pub rate_limit_per_minute_overall: Option<u32>,
    /// How long an issued nonce stays open, in milliseconds, from
    /// [`crate::nonce::MIN_NONCE_LIFETIME_MS`] to [`crate::nonce::MAX_NONCE_LIFETIME_MS`]. Default [`crate::nonce::NONCE_LIFETIME_MS`] (an hour); tests of
    /// the page's submit tool (which leaves when the nonce lapses) set a few seconds.
    #[serde(default = "default_nonce_lifetime_ms")]
    pub nonce_lifetime_ms: i64,
}

fn default_nonce_lifetime_ms() -> i64 {
    crate::nonce::NONCE_LIFETIME_MS
}

fn default_rate_limit_per_minute() -> u32 {
    super::DEFAULT_RATE_LIMIT_PER_MINUTE
}

/// The signer's keys: fetched from a URL (refreshed) or pinned in a file. Exactly one.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignerConfig {
    /// `GET` this for the signer's `KeySet` at start, every few minutes, and once (rate-limited)
    /// when a receipt names a key the cached set lacks.
    #[serde(default)]
    pub keys_url: Option<String>,
    /// A file holding the signer's `KeySet` JSON, read at start.
    #[serde(default)]
    pub pinned_keys: Option<PathBuf>,
}

/// A trusted credential issuer. Exactly one of `keys_url` and `pinned_keys`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustedIssuer {
    /// The issuer's identifier: its origin, the `iss` of its credentials and the `issuer` a
    /// receipt entry names.
    pub issuer: Origin,
    /// How people read it ("Tax Office Nordstadt"): in the accepted message and refusals.
    pub name: String,
    /// Its SD-JWT VC issuer metadata (`<issuer>/.well-known/jwt-vc-issuer`), fetched at start
    /// and refreshed; its `issuer` must equal `issuer`.
    #[serde(default)]
    pub keys_url: Option<String>,
    /// A file holding that metadata JSON (same rule) or a bare JWK set, read at start.
    #[serde(default)]
    pub pinned_keys: Option<PathBuf>,
    /// What the site trusts it for: `income` or `age`, required. A proof this issuer signs for
    /// any other attribute is refused (`untrusted_issuer`).
    #[serde(default)]
    pub vouches_for: Option<wallet_core::Attribute>,
    /// The credential type (`vct`) the site takes from it, required: a credential of another
    /// type is refused (`proof_invalid`), whatever it discloses.
    #[serde(default)]
    pub vct: Option<String>,
}

impl TrustedIssuer {
    /// This entry as [`tacit_protocol::trust`] checks it.
    fn entry(&self) -> IssuerEntry<'_> {
        IssuerEntry {
            issuer: &self.issuer,
            name: &self.name,
            vouches_for: self.vouches_for,
            vct: self.vct.as_deref(),
            keys_url: self.keys_url.as_deref(),
            pinned: self.pinned_keys.is_some(),
        }
    }
}

/// Where the signer's keys come from, once the configuration is checked.
pub type SignerSource = KeySource<PathBuf>;

impl Config {
    /// Reads and checks the file at `path`; relative paths in it become relative to its
    /// directory.
    pub fn load(path: &Path) -> Result<Self, ServerError> {
        let shown = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|e| ServerError::Config {
            path: shown.clone(),
            reason: format!("cannot read it: {e}"),
        })?;
        if meta.len() > MAX_CONFIG_BYTES {
            return Err(ServerError::Config {
                path: shown,
                reason: "larger than 256 KiB".into(),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|e| ServerError::Config {
            path: shown.clone(),
            reason: format!("cannot read it: {e}"),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::from_toml(&text, base).map_err(|reason| ServerError::Config {
            path: shown,
            reason,
        })
    }

    /// Parses and checks TOML text; relative paths are joined to `base`.
    pub fn from_toml(text: &str, base: &Path) -> Result<Self, String> {
        let mut config: Config = toml::from_str(text).map_err(|e| e.message().to_owned())?;
        config.check()?;
        for path in [&mut config.static_dir, &mut config.data_dir] {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        }
        if let Some(pinned) = &mut config.signer.pinned_keys
            && pinned.is_relative()
        {
            *pinned = base.join(&*pinned);
        }
        for issuer in &mut config.trusted_issuers {
            if let Some(pinned) = &mut issuer.pinned_keys
                && pinned.is_relative()
            {
                *pinned = base.join(&*pinned);
            }
        }
        Ok(config)
    }

    /// The checks [`Config::from_toml`] makes, for a configuration built in code.
    pub fn check(&self) -> Result<(), String> {
        self.policy.check().map_err(|e| format!("[policy]: {e}"))?;
        self.signer_source()?;
        check_lifetime_ms(self.nonce_lifetime_ms)?;
        self.rate_budgets()?;
        let entries: Vec<_> = self
            .trusted_issuers
            .iter()
            .map(TrustedIssuer::entry)
            .collect();
        trust::check_issuers(&entries).map_err(|(who, e)| match e {
            IssuerEntryError::ListedTwice => format!("trusted issuer {who} {e}"),
            _ => format!("trusted issuer {who}: {e}"),
        })
    }

    /// The API's rate limits: `rate_limit_per_minute` per client, and the per-/48 and overall
    /// budgets as set or by default scaled from it ([`Budgets::scaled`]); a wider tier may not
    /// have less than a narrower one ([`Budgets::check`]).
    pub fn rate_budgets(&self) -> Result<Budgets, String> {
        let scaled = Budgets::scaled(self.rate_limit_per_minute);
        Budgets {
            per_client: self.rate_limit_per_minute,
            per_48: self.rate_limit_per_minute_per_48.unwrap_or(scaled.per_48),
            overall: self.rate_limit_per_minute_overall.unwrap_or(scaled.overall),
        }
        .check()
        .map_err(|e| {
            format!(
                "rate_limit_per_minute, rate_limit_per_minute_per_48, \
                 rate_limit_per_minute_overall: {e}"
            )
        })
    }

    /// The signer keys' source: exactly one of `keys_url` and `pinned_keys`.
    pub fn signer_source(&self) -> Result<SignerSource, String> {
        trust::key_source(
            self.signer.keys_url.as_deref(),
            self.signer.pinned_keys.clone(),
        )
        .map_err(|e| format!("[signer] {e}"))
    }

    /// `<data_dir>/site.key`.
    pub fn site_key_path(&self) -> PathBuf {
        self.data_dir.join("site.key")
    }

    /// `<data_dir>/nonces.db`.
    pub fn sqlite_path(&self) -> PathBuf {
        self.data_dir.join("nonces.db")
    }

    /// The database URL: `DATABASE_URL`, else `database_url`, else the SQLite file.
    pub fn database_url(&self) -> String {
        match std::env::var("DATABASE_URL") {
            Ok(url) if !url.trim().is_empty() => url.trim().to_owned(),
            _ => self
                .database_url
                .clone()
                .unwrap_or_else(|| tacit_store::sqlite_url(&self.sqlite_path())),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const GOOD: &str = r#"
origin = "http://127.0.0.1:8081"
listen = "127.0.0.1:8081"
static_dir = "../../target/site/housing"
data_dir = "/var/lib/housing"
trusted_issuers = [
  { issuer = "http://127.0.0.1:8791", name = "Tax Office Nordstadt", keys_url = "http://127.0.0.1:8791/.well-known/jwt-vc-issuer", vouches_for = "income", vct = "https://tacit.example/vct/income" },
  { issuer = "http://127.0.0.1:8792", name = "Civil Registry Nordstadt", pinned_keys = "registry.json", vouches_for = "age", vct = "https://tacit.example/vct/age" },
]

[policy]
site_name = "City Housing Programme"
purpose = "Eligibility"
submission = "application"
accepted_text = "Eligible."
requirements_tool = "housing_requirements"
submit_tool = "housing_submit_application"
claims = [
  { kind = "income_below", limit = { amount_minor = 3000000, currency = "EUR" } },
  { kind = "resides_in", districts = ["altstadt", "nordhafen", "westend"] },
]

[signer]
keys_url = "http://127.0.0.1:8787/v1/keys"
"#;

    #[test]
    fn a_good_file_parses_and_paths_follow_it() {
        let c = Config::from_toml(GOOD, Path::new("/etc/site")).unwrap();
        assert_eq!(c.origin.as_ref().unwrap().as_str(), "http://127.0.0.1:8081");
        assert_eq!(
            c.static_dir,
            Path::new("/etc/site/../../target/site/housing")
        );
        assert_eq!(c.data_dir, Path::new("/var/lib/housing"));
        assert_eq!(c.policy.claims.len(), 2);
        assert_eq!(c.rate_limit_per_minute, 120);
        assert_eq!(c.nonce_lifetime_ms, crate::nonce::NONCE_LIFETIME_MS);
        let short = format!("nonce_lifetime_ms = 4000\n{GOOD}");
        assert_eq!(
            Config::from_toml(&short, Path::new("/"))
                .unwrap()
                .nonce_lifetime_ms,
            4_000
        );
        let off = format!("rate_limit_per_minute = 0\n{GOOD}");
        let off = Config::from_toml(&off, Path::new("/")).unwrap();
        assert_eq!(off.rate_limit_per_minute, 0);
        assert_eq!(off.rate_budgets(), Ok(Budgets::OFF));
        // The wider tiers default to 5 and 50 times the per-client budget.
        assert_eq!(
            c.rate_budgets(),
            Ok(Budgets {
                per_client: 120,
                per_48: 600,
                overall: 6_000
            })
        );
        let set = format!(
            "rate_limit_per_minute = 10\nrate_limit_per_minute_per_48 = 0\n\
             rate_limit_per_minute_overall = 1000\n{GOOD}"
        );
        assert_eq!(
            Config::from_toml(&set, Path::new("/"))
                .unwrap()
                .rate_budgets(),
            Ok(Budgets {
                per_client: 10,
                per_48: 0,
                overall: 1_000
            })
        );
        assert_eq!(
            c.signer_source().unwrap(),
            SignerSource::Url("http://127.0.0.1:8787/v1/keys".into())
        );
        assert_eq!(c.trusted_issuers.len(), 2);
        assert_eq!(c.trusted_issuers[0].name, "Tax Office Nordstadt");
        assert_eq!(
            c.trusted_issuers[1].pinned_keys.as_deref(),
            Some(Path::new("/etc/site/registry.json"))
        );
    }

    #[test]
    fn bad_files_are_refused_with_a_reason() {
        let cases = [
            (GOOD.replace("origin = ", "orign = "), "unknown field"),
            (
                GOOD.replace(
                    "keys_url = \"http://127.0.0.1:8787/v1/keys\"",
                    "keys_url = \"http://x\"\npinned_keys = \"k.json\"",
                ),
                "exactly one",
            ),
            (
                GOOD.replace("keys_url = \"http://127.0.0.1:8787/v1/keys\"", ""),
                "exactly one",
            ),
            (
                GOOD.replace("http://127.0.0.1:8787/v1/keys", "file:///etc/keys"),
                "http",
            ),
            (
                GOOD.replace(
                    "submit_tool = \"housing_submit_application\"",
                    "submit_tool = \"housing_requirements\"",
                ),
                "different names",
            ),
            (GOOD.replace("3000000", "-1"), ""),
            (GOOD.replace("\"http://127.0.0.1:8081\"", "\"ftp://x\""), ""),
            (
                GOOD.replace("[policy]", "[policy]\nsecret = 1"),
                "unknown field",
            ),
            (
                GOOD.replace(", pinned_keys = \"registry.json\"", ""),
                "exactly one of keys_url and pinned_keys",
            ),
            (
                GOOD.replace("http://127.0.0.1:8791/.well-known", "file:///well-known"),
                "keys_url must be an http",
            ),
            (GOOD.replace("8792\",", "8791\","), "listed twice"),
            // A /48 given less than one of its clients, the site less than one /48.
            (
                format!("rate_limit_per_minute_per_48 = 100\n{GOOD}"),
                "the per /48 rate limit (100 a minute) must be at least the per client one (120)",
            ),
            (
                format!("rate_limit_per_minute_overall = 500\n{GOOD}"),
                "rate_limit_per_minute_overall: the overall rate limit (500 a minute) must be at \
                 least the per /48 one (600)",
            ),
            // Plain http to another host, for the signer and for an issuer: refused at start,
            // naming the setting.
            (
                GOOD.replace(
                    "http://127.0.0.1:8787/v1/keys",
                    "http://signer.example/v1/keys",
                ),
                "[signer] keys_url over plain http:// must point at this machine",
            ),
            (
                GOOD.replace(
                    "http://127.0.0.1:8791/.well-known",
                    "http://192.0.2.1:8791/.well-known",
                ),
                "keys_url over plain http:// must point at this machine",
            ),
            // Every trusted issuer names what it vouches for and its credential type.
            (
                GOOD.replace(", vouches_for = \"income\"", ""),
                "trusted issuer http://127.0.0.1:8791: needs vouches_for",
            ),
            (
                GOOD.replace(", vct = \"https://tacit.example/vct/age\"", ""),
                "trusted issuer http://127.0.0.1:8792: needs vct",
            ),
            (
                format!("nonce_lifetime_ms = 1999\n{GOOD}"),
                "nonce_lifetime_ms must be 2000 to 86400000",
            ),
            (
                format!("nonce_lifetime_ms = 86400001\n{GOOD}"),
                "nonce_lifetime_ms must be",
            ),
            (
                GOOD.replace("\"Civil Registry Nordstadt\"", "\" \""),
                "name must be",
            ),
            (
                GOOD.replace("name = \"Tax Office Nordstadt\", ", ""),
                "missing field `name`",
            ),
            (
                GOOD.replace(
                    "issuer = \"http://127.0.0.1:8791\"",
                    "issuer = \"tax office\"",
                ),
                "",
            ),
        ];
        for (text, needle) in cases {
            let err = Config::from_toml(&text, Path::new("/")).unwrap_err();
            assert!(err.contains(needle), "{needle}: {err}");
        }
    }
}
