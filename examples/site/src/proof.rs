//! Issuer-backed claims: the SD-JWT presentations beside a receipt, checked against the issuers
//! the site's configuration trusts. Pure: time, keys and texts come in as arguments.
//!
//! A receipt's **items** are the latest entry for each claim it answers ([`items`]). An item
//! whose entry names an issuer (`issuer: Some(iss)`) is issuer-backed: the wallet says `iss`'s
//! credential answered it. For each such item with a yes/no outcome, exactly one presentation
//! must
//! - verify ([`verify_presentation`]): issued by `iss`, which this site trusts (its pinned or
//!   fetched keys, never a key named inside the token), not expired, bound to the holder key,
//!   key-bound to this site's origin (`aud`) and the receipt's nonce, the key binding at most
//!   [`MAX_KB_AGE_MS`] old;
//! - disclose exactly one claim: the one that proves the item's claim
//!   ([`predicates::disclosure_for`], the income ladder in the credential's plain `currency`),
//!   with the item's boolean as its value (`true` for satisfied, `false` for not satisfied).
//!
//! A presentation left over (no item to prove, or a second one for an item) is refused too: the
//! site takes exactly what the receipt calls for. [`check_presentations`] answers the proven
//! items or the first refusal; [`crate::submit::decide`] reads that answer after the nonce.

use serde::Serialize;
use serde_json::Value;
use tacit_protocol::predicates;
use tacit_protocol::sd_jwt::{
    Credential, Jwks, SdJwtError, TrustedIssuer, VerifiedPresentation, verify_presentation,
};
use tacit_protocol::status_list::{STATUS_PATH, StatusListToken, VALID};
use wallet_core::{Attribute, Claim, Currency, Origin, Outcome, Timestamp, VerifiedReceipt};

use crate::policy::describe;
use crate::submit::{Code, Refusal};

/// The oldest key binding accepted: five minutes.
pub const MAX_KB_AGE_MS: i64 = tacit_protocol::sd_jwt::DEFAULT_MAX_KB_AGE_MS;

/// Most presentations one submission may carry (one per issuer-backed item; the wallet's
/// `request_claims` takes at most eight claims).
pub const MAX_PRESENTATIONS: usize = 8;

/// One issuer the site's configuration trusts, with the keys it has for it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issuer {
    /// Its identifier: the `iss` of its credentials and the `issuer` of receipt entries.
    pub issuer: Origin,
    /// How the site names it to people ("Tax Office Nordstadt").
    pub name: String,
    /// The attribute the site trusts it for (its configuration must name one).
    pub vouches_for: Attribute,
    /// The credential type (`vct`) the site takes from it: a presentation of another type is
    /// refused (`proof_invalid`).
    pub vct: String,
    /// Its keys, or `None` while they could not be fetched.
    pub jwks: Option<Jwks>,
    /// Its Token Status List as last read and verified, while fresh (`None`: not read yet, or
    /// older than its `ttl`). A presentation whose credential names an entry is refused while
    /// this is `None`, and refused `credential_revoked` when its entry is set.
    pub status: Option<StatusListToken>,
}

/// Every issuer the site trusts (from its configuration; nothing a request carries adds one).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Trust {
    pub issuers: Vec<Issuer>,
}

impl Trust {
    /// The configured issuer `iss`, if this site trusts it.
    pub fn issuer(&self, iss: &str) -> Option<&Issuer> {
        self.issuers.iter().find(|i| i.issuer.as_str() == iss)
    }

    fn with_keys(&self) -> Vec<TrustedIssuer> {
        self.issuers
            .iter()
            .filter_map(|i| {
                i.jwks.as_ref().map(|jwks| TrustedIssuer {
                    iss: i.issuer.as_str().to_owned(),
                    jwks: jwks.clone(),
                })
            })
            .collect()
    }
}

/// A receipt item: the latest answer to one claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub claim: Claim,
    pub outcome: Outcome,
    /// The issuer whose credential answered it; `None`: the person's own word.
    pub issuer: Option<Origin>,
}

impl Item {
    /// The boolean a presentation must disclose for it: `None` for an outcome that is not a
    /// yes or a no (declined, invalid), which no presentation proves.
    pub fn boolean(&self) -> Option<bool> {
        match self.outcome {
            Outcome::Satisfied => Some(true),
            Outcome::NotSatisfied => Some(false),
            Outcome::Declined | Outcome::Invalid => None,
        }
    }
}

/// The latest entry for each claim a verified receipt answers, in the order the claims were
/// first asked.
pub fn items(receipt: &VerifiedReceipt) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::new();
    for ((claim, outcome), issuer) in receipt.answers().iter().zip(receipt.issuers()) {
        let item = Item {
            claim: claim.clone(),
            outcome: *outcome,
            issuer: issuer.clone(),
        };
        match out.iter_mut().find(|i| &i.claim == claim) {
            Some(slot) => *slot = item,
            None => out.push(item),
        }
    }
    out
}

/// An item proven by an issuer's credential, as the accepted envelope lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Proven {
    pub claim: Claim,
    pub issuer: Origin,
    pub issuer_name: String,
}

/// What [`check_presentations`] found, for [`crate::submit::decide`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proofs {
    /// The receipt's items.
    pub items: Vec<Item>,
    /// The issuer-backed items, each proven by one presentation; or the first refusal.
    pub checked: Result<Vec<Proven>, Refusal>,
    /// An issuer whose keys were missing or lacked the presentation's key id: fetching them
    /// again (rate-limited) and checking again may change the answer.
    pub refetch: Option<Origin>,
    /// An issuer whose status list was not at hand (never read, or past its `ttl`): reading it
    /// and checking again may change the answer.
    pub status_fetch: Option<Origin>,
}

impl Proofs {
    /// Whether `claim`'s latest answer is issuer-backed and proven.
    pub fn proven(&self, claim: &Claim) -> Option<&Proven> {
        self.checked
            .as_ref()
            .ok()
            .and_then(|p| p.iter().find(|p| &p.claim == claim))
    }

    /// The latest item for `claim`.
    pub fn item(&self, claim: &Claim) -> Option<&Item> {
        self.items.iter().find(|i| &i.claim == claim)
    }
}

/// A presentation that verified, reduced to what matching needs.
struct Shown {
    index: usize,
    iss: String,
    name: String,
    value: Value,
    currency: Option<Currency>,
}

fn refusal(code: Code, claim: Option<&Claim>, message: String) -> Refusal {
    Refusal {
        code,
        message,
        claim: claim.cloned(),
    }
}

/// Refuses presentation `n` unless its credential's `entry` reads valid in `issuer`'s status
/// list as the site holds it; sets `status_fetch` when the list is not at hand.
fn revoked_or_unknown(
    n: usize,
    entry: &tacit_protocol::status_list::StatusRef,
    issuer: &Issuer,
    status_fetch: &mut Option<Origin>,
) -> Result<(), Refusal> {
    let own = format!(
        "{}{STATUS_PATH}",
        issuer.issuer.as_str().trim_end_matches('/')
    );
    if entry.uri != own {
        return Err(refusal(
            Code::ProofInvalid,
            None,
            format!(
                "Presentation {n} names a status list that is not {}'s own, so this site does \
                 not read it. {SUBMIT_AS_RETURNED}",
                issuer.name
            ),
        ));
    }
    let Some(list) = &issuer.status else {
        *status_fetch = Some(issuer.issuer.clone());
        return Err(refusal(
            Code::StatusUnavailable,
            None,
            format!(
                "This site could not read {}'s list of revoked credentials, so it cannot tell \
                 whether presentation {n} still holds. Nothing was spent; submit again in a \
                 moment.",
                issuer.name
            ),
        ));
    };
    match list.status_of(entry) {
        Ok(VALID) => Ok(()),
        Ok(_) => Err(refusal(
            Code::CredentialRevoked,
            None,
            format!(
                "{} has revoked the credential behind presentation {n}. Nothing was spent. The \
                 person's wallet can no longer prove this answer with it: ask them to add the \
                 credential again, or to answer in their own words where this site allows it.",
                issuer.name
            ),
        )),
        Err(_) => Err(refusal(
            Code::ProofInvalid,
            None,
            format!(
                "Presentation {n} names an entry outside {}'s status list. {SUBMIT_AS_RETURNED}",
                issuer.name
            ),
        )),
    }
}

const SUBMIT_AS_RETURNED: &str = "Submit the `presentations` array check_proposal returned \
     beside the receipt, unchanged and in full, within five minutes of the wallet's release.";

/// Checks `presentations` for the `receipt` [`crate::submit::check_receipt`] verified, at the
/// site `origin`, against `trust`, at `now`.
pub fn check_presentations(
    receipt: &VerifiedReceipt,
    presentations: &[String],
    trust: &Trust,
    origin: &Origin,
    now: Timestamp,
) -> Proofs {
    let items = items(receipt);
    let mut refetch = None;
    let mut status_fetch = None;
    let checked = check(
        &items,
        presentations,
        trust,
        origin,
        receipt.nonce().as_str(),
        now,
        (&mut refetch, &mut status_fetch),
    );
    Proofs {
        items,
        checked,
        refetch,
        status_fetch,
    }
}

fn check(
    items: &[Item],
    presentations: &[String],
    trust: &Trust,
    origin: &Origin,
    nonce: &str,
    now: Timestamp,
    (refetch, status_fetch): (&mut Option<Origin>, &mut Option<Origin>),
) -> Result<Vec<Proven>, Refusal> {
    // The items the receipt says an issuer answered, each issuer trusted here.
    let mut backed: Vec<(&Item, &Issuer, bool)> = Vec::new();
    for item in items {
        let (Some(iss), Some(value)) = (&item.issuer, item.boolean()) else {
            continue;
        };
        let Some(issuer) = trust.issuer(iss.as_str()) else {
            return Err(refusal(
                Code::UntrustedIssuer,
                Some(&item.claim),
                format!(
                    "The receipt says {iss} vouches for {} ({}), but this site does not trust \
                     that issuer. Ask the wallet to answer it from an issuer this site trusts \
                     ({}) or from the person's own word.",
                    item.claim.canonical(),
                    describe(&item.claim),
                    trusted_list(trust)
                ),
            ));
        };
        let attribute = issuer.vouches_for;
        if item.claim.attribute() != attribute {
            return Err(refusal(
                Code::UntrustedIssuer,
                Some(&item.claim),
                format!(
                    "The receipt says {} vouches for {} ({}), but this site trusts that issuer \
                     for {} only. Ask the wallet to answer it from the person's own word or \
                     from an issuer this site trusts for {}.",
                    issuer.name,
                    item.claim.canonical(),
                    describe(&item.claim),
                    attribute.name(),
                    item.claim.attribute().name()
                ),
            ));
        }
        backed.push((item, issuer, value));
    }

    // Every presentation must verify.
    let trusted = trust.with_keys();
    let mut shown: Vec<Shown> = Vec::with_capacity(presentations.len());
    for (index, text) in presentations.iter().enumerate() {
        let n = index + 1;
        let verified =
            verify_presentation(text, &trusted, origin.as_str(), nonce, now, MAX_KB_AGE_MS)
                .map_err(|e| presentation_refusal(n, text, e, trust, refetch))?;
        let VerifiedPresentation {
            iss,
            vct,
            disclosed,
            plain,
            status,
            ..
        } = verified;
        // Its entry in its issuer's status list (the issuer's own list, at its origin), which
        // must say valid: read before anything is spent, so a refusal spends nothing.
        if let (Some(entry), Some(issuer)) = (&status, trust.issuer(&iss)) {
            revoked_or_unknown(n, entry, issuer, status_fetch)?;
        }
        // The credential type is pinned per issuer: a credential of another type it signed
        // (another programme's, a test type) is not its word for this site.
        if let Some(issuer) = trust.issuer(&iss)
            && vct != issuer.vct
        {
            return Err(refusal(
                Code::ProofInvalid,
                None,
                format!(
                    "Presentation {n} is a credential of type \"{}\", but this site takes only \
                     \"{}\" from {}. {SUBMIT_AS_RETURNED}",
                    vct.chars().take(80).collect::<String>(),
                    issuer.vct,
                    issuer.name
                ),
            ));
        }
        if disclosed.len() != 1 {
            return Err(refusal(
                Code::ProofMismatch,
                None,
                format!(
                    "Presentation {n} discloses {} claims; each must disclose exactly the one \
                     claim that proves one receipt answer. {SUBMIT_AS_RETURNED}",
                    disclosed.len()
                ),
            ));
        }
        let Some((name, value)) = disclosed.into_iter().next() else {
            continue;
        };
        let currency = plain
            .get(predicates::CURRENCY_CLAIM)
            .and_then(Value::as_str)
            .and_then(|c| Currency::parse(c).ok());
        shown.push(Shown {
            index,
            iss,
            name,
            value,
            currency,
        });
    }

    if !backed.is_empty() && presentations.is_empty() {
        let (item, issuer, _) = backed[0];
        return Err(refusal(
            Code::ProofMissing,
            Some(&item.claim),
            format!(
                "The receipt says {} vouches for {} ({}), but the submission carries no \
                 presentations ({} expected, one per issuer-backed answer). {SUBMIT_AS_RETURNED}",
                issuer.name,
                item.claim.canonical(),
                describe(&item.claim),
                backed.len()
            ),
        ));
    }

    // Each backed item takes the one presentation from its issuer that proves its claim.
    let mut used = vec![false; shown.len()];
    let mut proven = Vec::with_capacity(backed.len());
    for (item, issuer, value) in backed {
        let proves = |s: &Shown| {
            s.iss == issuer.issuer.as_str()
                && predicates::disclosure_for(&item.claim, s.currency.as_ref()).as_ref()
                    == Some(&s.name)
        };
        let Some(found) = (0..shown.len()).find(|&k| !used[k] && proves(&shown[k])) else {
            let code = if used.iter().all(|u| *u) {
                Code::ProofMissing
            } else {
                Code::ProofMismatch
            };
            let found_else = if code == Code::ProofMissing {
                "no presentation is left for it".to_owned()
            } else {
                format!(
                    "no presentation from {} discloses the claim that proves it ({})",
                    issuer.name,
                    predicates::provable_thresholds(item.claim.attribute())
                )
            };
            return Err(refusal(
                code,
                Some(&item.claim),
                format!(
                    "The receipt says {} vouches for {} ({}), but {found_else}. \
                     {SUBMIT_AS_RETURNED}",
                    issuer.name,
                    item.claim.canonical(),
                    describe(&item.claim)
                ),
            ));
        };
        let s = &shown[found];
        used[found] = true;
        if s.value != Value::Bool(value) {
            return Err(refusal(
                Code::ProofMismatch,
                Some(&item.claim),
                format!(
                    "Presentation {} from {} says {} is {}, but the receipt answers {} {}. The \
                     receipt and the credential disagree; ask the wallet for a new application.",
                    s.index + 1,
                    issuer.name,
                    s.name,
                    s.value,
                    item.claim.canonical(),
                    item.outcome.as_str()
                ),
            ));
        }
        proven.push(Proven {
            claim: item.claim.clone(),
            issuer: issuer.issuer.clone(),
            issuer_name: issuer.name.clone(),
        });
    }
    if let Some(extra) = used.iter().position(|u| !u) {
        return Err(refusal(
            Code::ProofMismatch,
            None,
            format!(
                "Presentation {} ({} from {}) proves no issuer-backed answer of the receipt; a \
                 submission carries exactly one presentation per issuer-backed answer. \
                 {SUBMIT_AS_RETURNED}",
                extra + 1,
                shown[extra].name,
                shown[extra].iss.chars().take(80).collect::<String>()
            ),
        ));
    }
    Ok(proven)
}

fn trusted_list(trust: &Trust) -> String {
    if trust.issuers.is_empty() {
        return "none".to_owned();
    }
    let names: Vec<String> = trust
        .issuers
        .iter()
        .map(|i| format!("{} at {}", i.name, i.issuer))
        .collect();
    names.join("; ")
}

/// The refusal for presentation `n` that did not verify.
fn presentation_refusal(
    n: usize,
    text: &str,
    error: SdJwtError,
    trust: &Trust,
    refetch: &mut Option<Origin>,
) -> Refusal {
    // Which issuer it names (parsed without checking anything), for the message.
    let named = text
        .rfind('~')
        .and_then(|last| text.get(..=last))
        .and_then(|without_kb| Credential::parse(without_kb).ok())
        .map(|c| c.iss().to_owned());
    let configured = named.as_deref().and_then(|iss| trust.issuer(iss));
    match (error, configured) {
        (SdJwtError::UnknownIssuer, Some(issuer)) => {
            // Trusted, but its keys could not be fetched.
            *refetch = Some(issuer.issuer.clone());
            refusal(
                Code::ProofInvalid,
                None,
                format!(
                    "Presentation {n} cannot be checked yet (unknown_issuer): this site could not \
                     fetch the keys of {} ({}). Nothing was spent; submit again in a minute.",
                    issuer.name, issuer.issuer
                ),
            )
        }
        (SdJwtError::UnknownIssuer, None) => {
            let shown: String = named
                .as_deref()
                .unwrap_or("an unnamed issuer")
                .chars()
                .take(80)
                .collect();
            refusal(
                Code::UntrustedIssuer,
                None,
                format!(
                    "Presentation {n} is issued by {shown}, which this site does not trust \
                     (trusted: {}).",
                    trusted_list(trust)
                ),
            )
        }
        (error, configured) => {
            if error == SdJwtError::UnknownKey {
                *refetch = configured.map(|i| i.issuer.clone());
            }
            let hint = match error {
                SdJwtError::WrongAudience => "it was made for another site",
                SdJwtError::WrongNonce => {
                    "it answers another request (a presentation counts for \
                     the one nonce it was made for)"
                }
                SdJwtError::StaleKeyBinding => {
                    "its key binding is more than five minutes old; \
                     ask the wallet to release the application again"
                }
                SdJwtError::Expired => {
                    "the credential has expired; the person can refresh it \
                     in the wallet"
                }
                _ => "it was changed, truncated or made wrongly",
            };
            refusal(
                Code::ProofInvalid,
                None,
                format!(
                    "Presentation {n} does not verify ({}: {error}): {hint}. {SUBMIT_AS_RETURNED}",
                    error.code()
                ),
            )
        }
    }
}
