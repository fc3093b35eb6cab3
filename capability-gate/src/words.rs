//! What the page says to the person, in plain words and in the person's voice: each claim as a
//! question ("Is your yearly income below 30,000 €?"), what answering would reveal, the consent
//! card's heading and buttons, a grant that ended without the person's click, and the log's
//! lines.
//!
//! Built from a claim's public parameters only (a limit, an age, catalogue names), never from
//! the profile. Amounts come from a formatter the caller passes (the page uses the browser's
//! `Intl.NumberFormat`; tests a plain one), so no minor-unit number ("3000000") and no catalogue
//! code ("altstadt") reaches a person. No tool name, nonce, digest or epoch time is produced here.

use wallet_core::catalogue::{CONDITIONS, DISTRICTS, label};
use wallet_core::{Assessment, Attribute, Claim, Floors, LogEntry, Outcome, Preview};

pub use wallet_core::MoneyWords;
pub use wallet_core::catalogue::{list_and, list_or};

use crate::credentials::Credentials;
use crate::state::{GrantState, Lifetime, ProposalItem};

/// A district's display name ("Altstadt"); an unknown code is shown as given.
pub fn district_name(code: &str) -> &str {
    label(DISTRICTS, code)
}

/// A condition's display name in lower case, for the middle of a sentence ("liver disease").
pub fn condition_name(code: &str) -> String {
    label(CONDITIONS, code).to_lowercase()
}

/// The claim as a question to the person: "Is your yearly income below 30,000 €?", "Are you
/// at least 18?", "Do you live in Altstadt, Nordhafen or Westend?", "Do you have none of:
/// anticoagulant therapy, liver disease, pregnancy?" (the claim catalogue's
/// [`Claim::wording`]).
pub fn question(claim: &Claim, money: MoneyWords<'_>) -> String {
    claim.wording(money).question
}

/// The claim after "whether": "your yearly income is below 30,000 €", "you are at least 18".
pub fn whether(claim: &Claim, money: MoneyWords<'_>) -> String {
    claim.wording(money).whether
}

/// What answering tells the site, in words: "Tells the site whether your yearly income is below
/// 30,000 €. With every answer so far, your income stays in a band at least 5,000 € wide."
/// An answer that follows from earlier ones says it tells nothing new.
pub fn reveals(
    claim: &Claim,
    assessment: Assessment,
    floors: &Floors,
    money: MoneyWords<'_>,
) -> String {
    if let Assessment::Known(_) = assessment {
        return "You have already told this, in effect: answering tells the site nothing new."
            .to_owned();
    }
    format!(
        "Tells the site whether {}. {}",
        whether(claim, money),
        claim.narrowing(floors, money)
    )
}

/// The bits, for a details line only: "Up to 15.0 bits about your income (0.0 so far)."
pub fn bits_detail(attribute: Attribute, preview: &Preview) -> String {
    format!(
        "Up to {:.1} bits about {} ({:.1} so far).",
        preview.bits_if_satisfied.max(preview.bits_if_not_satisfied),
        attribute.topic(),
        preview.bits_now
    )
}

/// Why a claim stays unticked: the memory would decline it, said so the person knows it is
/// not their choice to make.
pub fn declined(attribute: Attribute) -> String {
    format!(
        "Can't be answered: the wallet would decline it, because after what you have already \
         answered about {}, either answer would narrow it more than your privacy settings \
         allow. It stays unticked.",
        attribute.topic()
    )
}

/// A site, for the person: the name it signed (checked) with its address beside it ("City
/// Housing Programme (127.0.0.1:8081)"), else its address without the scheme
/// ("127.0.0.1:8081"). Dialogs, log lines, receipts and the history all name sites this way.
pub fn site_label(verified_name: Option<&str>, origin: &str) -> String {
    match verified_name.map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => format!("{name} ({})", host_of(origin)),
        None => host_of(origin).to_owned(),
    }
}

/// An origin without its scheme and trailing slash.
pub fn host_of(origin: &str) -> &str {
    origin
        .split_once("://")
        .map_or(origin, |(_, rest)| rest)
        .trim_end_matches('/')
}

/// The longest issuer name shown, in characters; a longer one is cut and ends in "…".
pub const ISSUER_NAME_MAX: usize = 48;

/// How an issuer is named to the person: the name it calls itself, always beside its address,
/// because an issuer elsewhere can take any name ("Tax Office Nordstadt (tax.example)"); the
/// address alone when there is no other name to show (none, empty, or the address itself).
///
/// The name is cleaned first so that it cannot hide or fake the address beside it: control and
/// invisible formatting characters (bidi overrides, zero-width, soft hyphen) and brackets are
/// dropped, runs of white space become one space, and it is cut at [`ISSUER_NAME_MAX`]. The
/// address is the origin's host, which the URL parser keeps in ASCII (an internationalised name
/// is shown in punycode), so a look-alike name never matches it.
pub fn issuer_label(name: Option<&str>, issuer: &str) -> String {
    let host = host_of(issuer);
    let name = name.map(clean_name).unwrap_or_default();
    if name.is_empty() || name.eq_ignore_ascii_case(host) || name.eq_ignore_ascii_case(issuer) {
        host.to_owned()
    } else {
        format!("{name} ({host})")
    }
}

/// How the person is shown the issuer behind a proposal's answer ([`issuer_label`]): the name
/// it had when the proposal was drafted, else the name `credentials` knows now, always beside
/// its address. `None` when the answer is the person's own word.
pub fn item_issuer(item: &ProposalItem, credentials: &Credentials) -> Option<String> {
    let issuer = item.issuer.as_ref()?;
    let name = item
        .issuer_name
        .as_deref()
        .or_else(|| credentials.issuer_name(issuer));
    Some(issuer_label(name, issuer.as_str()))
}

fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{34f}'
                | '\u{61c}'
                | '\u{115f}'
                | '\u{1160}'
                | '\u{17b4}'
                | '\u{17b5}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{3164}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff0}'..='\u{fffb}'
        )
}

fn clean_name(name: &str) -> String {
    let kept: String = name
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .filter(|&c| !invisible(c) && !matches!(c, '(' | ')' | '[' | ']' | '<' | '>'))
        .collect();
    let words: Vec<&str> = kept.split_whitespace().collect();
    let joined = words.join(" ");
    if joined.chars().count() <= ISSUER_NAME_MAX {
        return joined;
    }
    let cut: String = joined.chars().take(ISSUER_NAME_MAX - 1).collect();
    format!("{}\u{2026}", cut.trim_end())
}

/// Beside a question on the consent card when a credential and what the person typed answer it
/// differently ([`crate::Gate::disagreement_on`]): which answer the site is told, without
/// either answer (the card is in the page, which a page agent can read).
pub fn disagreement_on_card(issuer: &str) -> String {
    format!(
        "What you typed and {issuer} answer this differently. The site is told {issuer}'s \
         answer. If what you typed is out of date, correct it; if the credential is wrong, ask \
         the issuer to correct its record."
    )
}

/// Beside the fact in the profile, when an issuer's credential answers one of its questions
/// differently from what the person typed ([`crate::credentials::Credentials::disagreements`]):
/// "Tax Office Nordstadt (127.0.0.1:8791) answers "Is your yearly income below 30,000 €?"
/// with yes; what you typed answers no. …"
pub fn disagreement_beside_fact(
    issuer: &str,
    claim: &Claim,
    credential_says: bool,
    money: MoneyWords<'_>,
) -> String {
    format!(
        "{issuer} answers \u{201c}{question}\u{201d} with {says}; what you typed answers {typed}. \
         Sites that ask its questions are told {issuer}'s answers. If what you typed is out of \
         date, correct it; if the credential is wrong, ask the issuer to correct its record.",
        question = question(claim, money),
        says = yes_no(credential_says),
        typed = yes_no(!credential_says),
    )
}

/// The consent card's heading: "Housing Programme asks".
pub fn heading(site: &str) -> String {
    format!("{site} asks")
}

/// A piece of a card's text, and whose words it is. The page draws the wallet's own words as
/// they are, and words only an agent or a site gave inside a quotation, marked as theirs, so
/// that no text an agent sends ("… (verified)") can stand where the wallet speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// The wallet's own words.
    Wallet(String),
    /// Words only the agent gave, unchecked: an unconfirmed request's origin, name or purpose.
    Agent(String),
    /// Words the site signed, its signature checked: a verified request's name or purpose.
    Site(String),
}

impl Said {
    /// The text, whoever said it.
    pub fn text(&self) -> &str {
        match self {
            Said::Wallet(t) | Said::Agent(t) | Said::Site(t) => t,
        }
    }
}

/// How an unconfirmed asker's card begins, in the wallet's words.
pub const UNCONFIRMED: &str = "Unconfirmed: an agent says this is for";

/// The longest agent or site text a card shows, in characters; a longer one is cut and ends in
/// "…".
pub const QUOTED_MAX: usize = 300;

/// An agent's or a site's text as a card quotes it: control and invisible formatting characters
/// (bidi overrides, zero-width) dropped, white space runs made one space, cut at [`QUOTED_MAX`].
pub fn quoted(text: &str) -> String {
    let kept: String = text
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .filter(|&c| !invisible(c))
        .collect();
    let joined = kept.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= QUOTED_MAX {
        return joined;
    }
    let cut: String = joined.chars().take(QUOTED_MAX - 1).collect();
    format!("{}\u{2026}", cut.trim_end())
}

fn theirs(verified: bool, text: &str) -> Said {
    if verified {
        Said::Site(quoted(text))
    } else {
        Said::Agent(quoted(text))
    }
}

/// The consent card's heading. A site whose signature checked: its signed name, then "asks"
/// ("Housing Programme asks"). Otherwise the wallet's words first, [`UNCONFIRMED`], then the
/// address the agent gave, quoted as the agent's.
pub fn card_heading(verified_name: Option<&str>, origin: &str) -> Vec<Said> {
    match verified_name.map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => vec![Said::Site(quoted(name)), Said::Wallet(" asks".to_owned())],
        None => vec![
            Said::Wallet(format!("{UNCONFIRMED} ")),
            Said::Agent(quoted(host_of(origin))),
        ],
    }
}

/// The line with the name the request gives its site: "The site calls itself" with the signed
/// name, or "The agent says the site calls itself" with the agent's text. `None` without a name.
pub fn card_site_name(verified: bool, name: Option<&str>) -> Option<Vec<Said>> {
    let name = name.map(str::trim).filter(|n| !n.is_empty())?;
    let lead = if verified {
        "The site calls itself "
    } else {
        "The agent says the site calls itself "
    };
    Some(vec![Said::Wallet(lead.to_owned()), theirs(verified, name)])
}

/// The line with what the request is for, in the site's signed words or the agent's, or that
/// none was given.
pub fn card_purpose(verified: bool, purpose: Option<&str>) -> Vec<Said> {
    match (purpose.map(str::trim).filter(|p| !p.is_empty()), verified) {
        (Some(p), true) => vec![
            Said::Wallet("What for, in the site's words: ".to_owned()),
            theirs(true, p),
        ],
        (Some(p), false) => vec![
            Said::Wallet("What for, in the agent's words: ".to_owned()),
            theirs(false, p),
        ],
        (None, true) => vec![Said::Wallet(
            "The site did not say what this is for.".to_owned(),
        )],
        (None, false) => vec![Said::Wallet(
            "The agent did not say what this is for.".to_owned(),
        )],
    }
}

/// What the wallet page says beside its WebMCP pill when it runs on the polyfill: who can see
/// its tools and who cannot.
pub const POLYFILL_REACH: &str = "WebMCP: polyfilled \u{2014} tools are visible to scripts in \
                                  this page only, not to browser agents over DevTools or to \
                                  tacit-mcp.";

/// The grant button, following the duration choice: "Allow for 10 minutes", "Allow for one use".
pub fn allow(lifetime: &Lifetime) -> String {
    format!("Allow {}", lifetime.words())
}

/// The allow button while the wallet is locked: one passphrase unlocks it and grants.
pub fn unlock_and_allow(lifetime: &Lifetime) -> String {
    format!("Unlock and allow {}", lifetime.words())
}

/// Said on a request's card while the wallet is locked.
pub const UNLOCK_TO_ANSWER: &str = "Unlock to answer: your wallet is locked. Allowing asks for \
    your passphrase once; it unlocks the wallet and grants what you ticked.";

/// The deny button.
pub const DONT_ALLOW: &str = "Don't allow";

/// The button that denies, in one act, every request the card's asking origin has waiting
/// (shown while it has more than one).
pub const DONT_ALLOW_ANY_FROM_HERE: &str = "Don't allow any request from this address";

/// The reason an agent is told for the requests denied together.
pub const DENIED_ALL_FROM_HERE: &str =
    "The person declined every request waiting from this address.";

/// The label of the duration choice.
pub const DURATION_LABEL: &str = "Allow for how long";

/// "yes" / "no" for an answer.
pub fn yes_no(satisfied: bool) -> &'static str {
    if satisfied { "yes" } else { "no" }
}

/// The sentence for a grant that ended without the person's click, for an announcement:
/// "The access you gave Housing Programme to your income ended: its time ran out." / "…was
/// used up." / "…was revoked." / "…ended because the wallet locked." `None` for a live grant.
///
/// `site` is [`site_label`]'s text.
pub fn grant_ended(site: &str, attribute: Attribute, state: GrantState) -> Option<String> {
    let access = format!("The access you gave {site} to {}", attribute.topic());
    let how = match state {
        GrantState::Live => return None,
        GrantState::Expired => "ended: its time ran out",
        GrantState::Spent => "was used up",
        GrantState::Revoked => "was revoked",
        GrantState::Locked => "ended because the wallet locked",
    };
    Some(format!("{access} {how}."))
}

/// A log entry in words, without its time: "127.0.0.1:8081 asked whether your yearly income is
/// below 30,000 €: yes", with the site's checked name first where it is known
/// (`verified_name`, see [`site_label`]). The tool name, grant id and hashes are for developers.
pub fn log_line(entry: &LogEntry, verified_name: Option<&str>, money: MoneyWords<'_>) -> String {
    let answer = match entry.outcome {
        Outcome::Satisfied => "yes",
        Outcome::NotSatisfied => "no",
        Outcome::Declined => "not answered (declined)",
        Outcome::Invalid => "not answered (could not be asked of your facts)",
    };
    let by = match &entry.issuer {
        Some(issuer) => format!(", proven by {}", host_of(issuer.as_str())),
        None => String::new(),
    };
    format!(
        "{} asked whether {}: {answer}{by}",
        site_label(verified_name, entry.origin.as_str()),
        whether(&entry.claim, money)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use wallet_core::{ConditionCode, Currency, DistrictId, Money};

    fn plain(m: &Money) -> String {
        format!("{} {}", m.amount_minor / 100, m.currency.as_str())
    }

    fn income(minor: u64) -> Claim {
        Claim::IncomeBelow {
            limit: Money {
                amount_minor: minor,
                currency: Currency::parse("EUR").unwrap(),
            },
        }
    }

    #[test]
    fn questions_in_the_persons_voice_with_names_not_codes() {
        assert_eq!(
            question(&income(3_000_000), &plain),
            "Is your yearly income below 30000 EUR?"
        );
        assert_eq!(
            question(&Claim::AgeAtLeast { years: 18 }, &plain),
            "Are you at least 18?"
        );
        let districts = ["altstadt", "nordhafen", "westend"]
            .iter()
            .map(|d| DistrictId::parse(d).unwrap())
            .collect();
        assert_eq!(
            question(&Claim::ResidesIn { districts }, &plain),
            "Do you live in Altstadt, Nordhafen or Westend?"
        );
        let conditions = ["anticoagulant-therapy", "liver-disease", "pregnancy"]
            .iter()
            .map(|c| ConditionCode::parse(c).unwrap())
            .collect();
        assert_eq!(
            question(&Claim::HasNoneOf { conditions }, &plain),
            "Do you have none of: anticoagulant therapy, liver disease, pregnancy?"
        );
    }

    #[test]
    fn reveals_in_words_with_the_floor_in_the_questions_currency() {
        let text = reveals(
            &income(3_000_000),
            Assessment::Evaluate,
            &Floors::default(),
            &plain,
        );
        assert!(text.contains("band at least 5000 EUR wide"), "{text}");
        assert!(!text.contains("500000") && !text.contains("bits"), "{text}");
        let known = reveals(
            &income(3_000_000),
            Assessment::Known(Outcome::Satisfied),
            &Floors::default(),
            &plain,
        );
        assert!(known.contains("nothing new"), "{known}");
        let age = reveals(
            &Claim::AgeAtLeast { years: 18 },
            Assessment::Evaluate,
            &Floors::default(),
            &plain,
        );
        assert!(age.contains("at least 18") && age.contains("Not your date of birth"));
        assert!(
            declined(Attribute::Income).contains("Can't be answered")
                && declined(Attribute::Income).contains("your income")
        );
    }

    #[test]
    fn allow_follows_the_duration_and_ended_grants_say_how() {
        assert_eq!(allow(&Lifetime::TEN_MINUTES), "Allow for 10 minutes");
        assert_eq!(allow(&Lifetime::ONE_USE), "Allow for one use");
        assert_eq!(grant_ended("X", Attribute::Income, GrantState::Live), None);
        assert_eq!(
            grant_ended("Housing", Attribute::Income, GrantState::Spent).unwrap(),
            "The access you gave Housing to your income was used up."
        );
        for state in [GrantState::Expired, GrantState::Revoked, GrantState::Locked] {
            let text = grant_ended("Housing", Attribute::Age, state).unwrap();
            assert!(text.starts_with("The access you gave Housing to your age "));
        }
        assert_eq!(site_label(None, "http://127.0.0.1:8081"), "127.0.0.1:8081");
        assert_eq!(site_label(Some(" "), "https://a.example/"), "a.example");
        assert_eq!(
            site_label(Some("Housing"), "https://a.example"),
            "Housing (a.example)"
        );
    }

    #[test]
    fn an_unconfirmed_card_starts_with_the_wallets_words_and_quotes_the_agent() {
        const NAME: &str = "www.bundesgesundheitsministerium.de (verified)";
        let heading = card_heading(None, "http://127.0.0.1:8081");
        assert_eq!(
            heading,
            vec![
                Said::Wallet(format!("{UNCONFIRMED} ")),
                Said::Agent("127.0.0.1:8081".to_owned()),
            ]
        );
        assert!(UNCONFIRMED.starts_with("Unconfirmed: an agent says this is for"));
        // A name only the agent gave never makes the heading, whatever it says.
        let texts: Vec<&str> = heading.iter().map(Said::text).collect();
        assert!(!texts.concat().contains("verified"), "{texts:?}");
        let name = card_site_name(false, Some(NAME)).unwrap();
        assert_eq!(name.len(), 2);
        assert!(matches!(&name[0], Said::Wallet(t) if t.starts_with("The agent says")));
        assert_eq!(name[1], Said::Agent(NAME.to_owned()));
        let purpose = card_purpose(false, Some("Checking eligibility"));
        assert!(matches!(&purpose[0], Said::Wallet(t) if t.contains("agent's words")));
        assert_eq!(purpose[1], Said::Agent("Checking eligibility".to_owned()));
        // Whatever the agent sends, only the agent's pieces carry it.
        for card in [name, purpose, heading] {
            for piece in &card {
                if let Said::Wallet(t) = piece {
                    assert!(!t.contains("bundes") && !t.contains("Checking"), "{t}");
                }
            }
        }
        assert_eq!(
            card_purpose(false, Some("  ")),
            vec![Said::Wallet(
                "The agent did not say what this is for.".to_owned()
            )]
        );
        assert_eq!(card_site_name(false, Some(" ")), None);
    }

    #[test]
    fn a_verified_card_names_the_signed_site_and_quotes_its_words() {
        assert_eq!(
            card_heading(Some("Housing Programme"), "https://a.example"),
            vec![
                Said::Site("Housing Programme".to_owned()),
                Said::Wallet(" asks".to_owned())
            ]
        );
        // An empty signed name falls back to the unconfirmed words.
        assert!(matches!(
            &card_heading(Some(" "), "https://a.example")[0],
            Said::Wallet(t) if t.starts_with(UNCONFIRMED)
        ));
        assert_eq!(
            card_purpose(true, Some("Housing"))[1],
            Said::Site("Housing".to_owned())
        );
        assert_eq!(
            card_site_name(true, Some("Housing")).unwrap()[0],
            Said::Wallet("The site calls itself ".to_owned())
        );
    }

    #[test]
    fn quoted_text_cannot_hide_or_reorder_and_is_cut() {
        assert_eq!(quoted("a\u{202e}b\u{200b}c\n\t d"), "abc d");
        let long = "x".repeat(QUOTED_MAX + 10);
        let shown = quoted(&long);
        assert_eq!(shown.chars().count(), QUOTED_MAX);
        assert!(shown.ends_with('\u{2026}'));
        assert!(POLYFILL_REACH.starts_with("WebMCP: polyfilled"));
        assert!(POLYFILL_REACH.contains("not to browser agents over DevTools or to tacit-mcp"));
    }

    #[test]
    fn an_issuer_is_named_beside_its_address_and_a_look_alike_name_cannot_pass_for_it() {
        const TAX: &str = "https://tax.example";
        let cases: &[(Option<&str>, &str)] = &[
            (
                Some("Tax Office Nordstadt"),
                "Tax Office Nordstadt (tax.example)",
            ),
            (None, "tax.example"),
            (Some(""), "tax.example"),
            (Some(" \u{200b}\t "), "tax.example"),
            (Some("tax.example"), "tax.example"),
            (Some("TAX.example"), "tax.example"),
            (Some("https://tax.example"), "tax.example"),
            // A name that looks like another issuer's address is still shown beside this one's.
            (Some("tax.example.gov"), "tax.example.gov (tax.example)"),
            (
                Some("tax\u{0435}.example"),
                "tax\u{0435}.example (tax.example)",
            ),
            // A name cannot fake the brackets with the address.
            (
                Some("Federal Tax (federal.example)"),
                "Federal Tax federal.example (tax.example)",
            ),
            (Some("Tax [gov.example]"), "Tax gov.example (tax.example)"),
            // Right-to-left override and zero-width characters cannot reorder or hide text.
            (
                Some("Tax\u{202e}elpmaxe.vog\u{202c}"),
                "Taxelpmaxe.vog (tax.example)",
            ),
            (
                Some("Ta\u{200d}x\u{feff} Office"),
                "Tax Office (tax.example)",
            ),
            (
                Some("Tax\nOffice\r\n  Nordstadt"),
                "Tax Office Nordstadt (tax.example)",
            ),
        ];
        for (name, shown) in cases {
            assert_eq!(issuer_label(*name, TAX), *shown, "{name:?}");
        }
        // A port is part of the address shown.
        assert_eq!(
            issuer_label(Some("Civil Registry"), "http://127.0.0.1:8093"),
            "Civil Registry (127.0.0.1:8093)"
        );
        // A long name is cut, so the address is never pushed out of sight.
        let long = "Ministry ".repeat(20);
        let shown = issuer_label(Some(&long), TAX);
        assert!(shown.ends_with("\u{2026} (tax.example)"), "{shown}");
        assert_eq!(
            shown.chars().count(),
            ISSUER_NAME_MAX + " (tax.example)".chars().count()
        );
    }

    #[test]
    fn a_proposal_item_names_its_issuer_as_drafted_beside_its_address() {
        let issuer = wallet_core::Origin::parse("https://tax.example").unwrap();
        let item = |name: Option<&str>| ProposalItem {
            claim: Claim::AgeAtLeast { years: 18 },
            satisfied: true,
            issuer: Some(issuer.clone()),
            issuer_name: name.map(str::to_owned),
        };
        let none = Credentials::default();
        assert_eq!(
            item_issuer(&item(Some("Tax Office")), &none).as_deref(),
            Some("Tax Office (tax.example)")
        );
        assert_eq!(
            item_issuer(&item(Some("gov.example")), &none).as_deref(),
            Some("gov.example (tax.example)")
        );
        assert_eq!(
            item_issuer(&item(None), &none).as_deref(),
            Some("tax.example")
        );
        let own_word = ProposalItem {
            issuer: None,
            ..item(Some("Tax Office"))
        };
        assert_eq!(item_issuer(&own_word, &none), None);
    }

    proptest::proptest! {
        #[test]
        fn whatever_an_issuer_calls_itself_its_address_ends_the_label(name in "\\PC{0,80}") {
            let shown = issuer_label(Some(&name), "https://tax.example");
            let name_part = shown.strip_suffix(" (tax.example)");
            proptest::prop_assert!(shown == "tax.example" || name_part.is_some(), "{shown:?}");
            if let Some(part) = name_part {
                proptest::prop_assert!(!part.is_empty());
                proptest::prop_assert!(
                    !part.chars().any(|c| super::invisible(c) || "()[]<>".contains(c)),
                    "{part:?}"
                );
                proptest::prop_assert!(part.chars().count() <= ISSUER_NAME_MAX);
            }
        }
    }

    #[test]
    fn every_claim_kind_has_a_question_without_codes() {
        for d in DISTRICTS {
            let claim = Claim::ResidesIn {
                districts: [DistrictId::parse(d.code).unwrap()].into_iter().collect(),
            };
            let q = question(&claim, &plain);
            assert!(q.contains(d.label), "{q}");
        }
        for c in CONDITIONS {
            let claim = Claim::HasNoneOf {
                conditions: [ConditionCode::parse(c.code).unwrap()]
                    .into_iter()
                    .collect(),
            };
            let q = question(&claim, &plain);
            // Codes with a hyphen never appear; the name does.
            assert!(
                !q.contains('-') && q.contains(&c.label.to_lowercase()),
                "{q}"
            );
        }
    }
}
