//! From a person's record to a batch of SD-JWT VCs: the predicates of [`crate::predicates`],
//! signed by `tacit_protocol::sd_jwt::issue`, one credential per holder key, each with its own
//! fresh salts. No I/O; salts come from the caller.
//!
//! Every credential signed on one UTC day carries the same `iat` (that day's midnight UTC) and
//! `exp` ([`crate::predicates::credential_lifetime`]): for everyone, whatever their record, so
//! neither a batch's presentations nor two people's can be told apart by a timestamp.

use p256::ecdsa::SigningKey;
use serde_json::{Map, Value};
use tacit_protocol::request_auth::Jwk;
use tacit_protocol::sd_jwt::{IssuedClaims, issue_with_status};
use tacit_protocol::status_list::StatusRef;
use wallet_core::Timestamp;

use crate::Error;
use crate::db::Person;
use crate::predicates::{Claims, age_claims, credential_lifetime, income_claims, parse_birth_date};

/// What an issuer vouches for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Attribute {
    /// Annual income: the `income_below_<amount>` ladder and the currency.
    Income,
    /// Date of birth: `age_equal_or_over_16/18/21/65`.
    #[value(name = "birth_date")]
    BirthDate,
}

impl Attribute {
    /// The default credential type for this attribute.
    pub fn default_vct(self) -> &'static str {
        match self {
            Attribute::Income => "https://tacit.example/vct/income",
            Attribute::BirthDate => "https://tacit.example/vct/age",
        }
    }

    /// How it is written in flags and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Attribute::Income => "income",
            Attribute::BirthDate => "birth_date",
        }
    }
}

/// What every credential of one batch states.
#[derive(Debug, Clone, PartialEq)]
pub struct CredentialClaims {
    /// Always-visible claims (`currency`).
    pub plain: Map<String, Value>,
    /// Selectively disclosable claims (the predicates).
    pub disclosable: Claims,
    /// When they were issued: midnight UTC at the start of the day of issuance.
    pub iat: Timestamp,
    /// When the credentials expire: `iat` + [`crate::predicates::CREDENTIAL_VALIDITY_MS`].
    pub exp: Timestamp,
}

/// The claims of one person's credentials at `now`: the plain claims, the disclosable ones (as
/// they hold on the UTC day of `now`) and the day's `iat` and `exp`, which do not depend on the
/// person. [`Error::NoRecord`] when the record lacks this attribute.
pub fn claims_for(
    attribute: Attribute,
    person: &Person,
    now: Timestamp,
) -> Result<CredentialClaims, Error> {
    let (iat, exp) = credential_lifetime(now.millis())?;
    let (iat, exp) = (Timestamp::from_millis(iat), Timestamp::from_millis(exp));
    match attribute {
        Attribute::Income => {
            let (Some(income), Some(currency)) = (person.income_minor, person.currency.as_deref())
            else {
                return Err(Error::NoRecord);
            };
            let (plain, ladder) = income_claims(income, currency)?;
            Ok(CredentialClaims {
                plain: plain.into_iter().collect(),
                disclosable: ladder,
                iat,
                exp,
            })
        }
        Attribute::BirthDate => {
            let birth = parse_birth_date(person.birth_date.as_deref().ok_or(Error::NoRecord)?)?;
            let claims = age_claims(birth, now.millis())?;
            Ok(CredentialClaims {
                plain: Map::new(),
                disclosable: claims,
                iat,
                exp,
            })
        }
    }
}

/// The issuer's identity as it appears in every credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issuance<'a> {
    /// `iss`: the issuer's origin.
    pub iss: &'a str,
    /// `vct`.
    pub vct: &'a str,
    pub attribute: Attribute,
}

/// One credential per holder key for `person` at `now` (all with the day's `iat` and `exp`),
/// signed by `key` (`kid`), the `i`-th naming its status list entry `statuses[i]` (none when
/// `statuses` is empty; otherwise one per holder key). `salt` is called once per disclosure.
/// Returns the credentials (in holder-key order) and their expiry.
#[allow(clippy::too_many_arguments)]
pub fn issue_batch(
    key: &SigningKey,
    kid: &str,
    issuance: &Issuance<'_>,
    person: &Person,
    holder_keys: &[Jwk],
    statuses: &[StatusRef],
    now: Timestamp,
    mut salt: impl FnMut() -> Result<[u8; 16], Error>,
) -> Result<(Vec<String>, Timestamp), Error> {
    if !statuses.is_empty() && statuses.len() != holder_keys.len() {
        return Err(Error::Issue("status_entries_mismatch".to_owned()));
    }
    let CredentialClaims {
        plain,
        disclosable,
        iat,
        exp,
    } = claims_for(issuance.attribute, person, now)?;
    let mut out = Vec::with_capacity(holder_keys.len());
    for (i, holder) in holder_keys.iter().enumerate() {
        let claims = IssuedClaims {
            iss: issuance.iss.to_owned(),
            vct: issuance.vct.to_owned(),
            iat,
            exp,
            cnf_jwk: holder.clone(),
            plain: plain.clone(),
        };
        let salts = disclosable
            .iter()
            .map(|_| salt())
            .collect::<Result<Vec<_>, _>>()?;
        let credential =
            issue_with_status(key, kid, &claims, statuses.get(i), &disclosable, &salts)
                .map_err(|e| Error::Issue(e.code().to_owned()))?;
        out.push(credential);
    }
    Ok((out, exp))
}
