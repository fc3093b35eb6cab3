//! How hard a passphrase is to guess: the wallet core's floor ([`refuse_weak`]), a rule, and the
//! hint under "New passphrase", a guide.
//!
//! **The floor** is decided here, never by the page: [`refuse_weak`] refuses a passphrase
//! shorter than 8 characters, one character repeated, or one of the most common passwords
//! (compiled in: every entry of at least 8 characters among the first 10,000 of zxcvbn's
//! password frequency list, 3,395 entries, compared without case and without spaces). Creating
//! a profile and changing the passphrase go through it (`wallet::Wallet::create`,
//! `wallet::Wallet::change_passphrase`). The page may refuse more (the estimate below rates a
//! passphrase weak), never less.
//!
//! **The estimate** is zxcvbn's (the `zxcvbn` crate, in the page's strength module
//! `web/strength`, which the page loads only when the person types a new passphrase: its
//! dictionaries are large). This module is what the estimate means to the person: zxcvbn's
//! score 0–4 as a [`Strength`], and its advice, as one sentence. Score 4 (at least 10¹⁰
//! guesses) is strong; 3 fair; below that weak. With the wallet's Argon2id at 64 MiB per guess,
//! 10¹⁰ guesses is years of work.

use wallet_core::Typed;

/// Why the wallet refuses a passphrase as too easy to guess. `Display` is the sentence the page
/// shows; it never includes the passphrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TooWeak {
    #[error("This passphrase is too short: use at least 8 characters.")]
    Short,
    #[error(
        "This passphrase is one character repeated, which is among the first guesses. Four or \
         more unrelated words are easy to remember and hard to guess."
    )]
    Repeated,
    #[error(
        "This passphrase is one of the most common passwords, which are the first guesses. Four \
         or more unrelated words are easy to remember and hard to guess."
    )]
    Common,
}

/// The most common passwords of at least 8 characters, lower case, one a line.
const COMMON: &str = include_str!("common_passwords.txt");

/// The wallet's floor: `Ok` if `pass` may protect a profile, else why not. Counted and compared
/// in its NFC form; case and spaces do not make a common password uncommon.
pub fn refuse_weak(pass: &(impl Typed + ?Sized)) -> Result<(), TooWeak> {
    let nfc = pass.nfc();
    if nfc.chars().count() < MIN_CHARS {
        return Err(TooWeak::Short);
    }
    let folded: String = nfc
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    let mut chars = folded.chars();
    if let Some(first) = chars.next()
        && chars.all(|c| c == first)
    {
        return Err(TooWeak::Repeated);
    }
    if COMMON.lines().any(|common| common == folded) {
        return Err(TooWeak::Common);
    }
    Ok(())
}

/// How hard a passphrase is to guess, as the hint says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strength {
    Empty,
    TooShort,
    /// The estimate is being loaded.
    Checking,
    /// The estimate could not be loaded (the hint still says what makes a good passphrase).
    Unavailable,
    Weak,
    Fair,
    Strong,
}

/// At least this many characters: the wallet core's own minimum.
pub const MIN_CHARS: usize = wallet_core::vault::MIN_PASSPHRASE_CHARS;

/// What to say without an estimate: empty or too short. `None`: only the estimator can tell.
pub fn before_estimate(pass: &str) -> Option<Strength> {
    match pass.chars().count() {
        0 => Some(Strength::Empty),
        n if n < MIN_CHARS => Some(Strength::TooShort),
        _ => None,
    }
}

/// The hint: a strength and, for a weak or fair passphrase, the estimator's advice (one
/// sentence of it: why it is guessable, else what would help).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rating {
    pub strength: Strength,
    pub advice: Option<String>,
}

impl Rating {
    /// A rating without advice.
    pub fn of(strength: Strength) -> Self {
        Rating {
            strength,
            advice: None,
        }
    }

    /// zxcvbn's `score` (0–4) with its advice.
    pub fn from_score(score: u8, advice: Option<String>) -> Self {
        let strength = match score {
            0..=2 => Strength::Weak,
            3 => Strength::Fair,
            _ => Strength::Strong,
        };
        let advice = match strength {
            Strength::Weak | Strength::Fair => advice
                .map(|a| a.trim().to_owned())
                .filter(|a| !a.is_empty()),
            _ => None,
        };
        Rating { strength, advice }
    }

    /// The hint under the field, in words.
    pub fn words(&self) -> String {
        match &self.advice {
            Some(advice) => format!("{} {advice}", self.strength.headline()),
            None => self.strength.words().to_owned(),
        }
    }
}

impl Strength {
    /// The hint under the field, in words (without the estimator's advice).
    pub fn words(self) -> &'static str {
        match self {
            Self::Empty => {
                "At least 8 characters. Four or more unrelated words are easy to remember and \
                 hard to guess."
            }
            Self::TooShort => "Too short: use at least 8 characters.",
            Self::Checking => "Checking how hard it is to guess…",
            Self::Unavailable => {
                "The strength check could not load. Four or more unrelated words are easy to \
                 remember and hard to guess."
            }
            Self::Weak => "Weak: easy to guess. Add a few unrelated words.",
            Self::Fair => {
                "Fair. One or two more unrelated words would make it much harder to guess."
            }
            Self::Strong => "Strong: hard to guess. Make sure you will remember it.",
        }
    }

    /// The first words of the hint, before the estimator's advice.
    fn headline(self) -> &'static str {
        match self {
            Self::Weak => "Weak: easy to guess.",
            Self::Fair => "Fair: could be harder to guess.",
            other => other.words(),
        }
    }

    /// The field hint's `data-strength` (for the colour and for tests).
    pub fn code(self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::TooShort => "short",
            Self::Checking => "checking",
            Self::Unavailable => "unavailable",
            Self::Weak => "weak",
            Self::Fair => "fair",
            Self::Strong => "strong",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_refuses_short_repeated_and_common_passphrases() {
        assert_eq!(refuse_weak("aB3$xY9"), Err(TooWeak::Short));
        assert_eq!(refuse_weak("äöüßéèê"), Err(TooWeak::Short));
        for common in [
            "password",
            "PASSWORD",
            "Pass Word",
            "password1",
            "12345678",
            "iloveyou1",
            "trustno1",
            "qwertyuiop",
        ] {
            assert_eq!(refuse_weak(common), Err(TooWeak::Common), "{common}");
        }
        assert_eq!(refuse_weak("aaaaaaaaaaaa"), Err(TooWeak::Repeated));
        assert_eq!(refuse_weak("zz zz zz zz"), Err(TooWeak::Repeated));
        for fine in [
            "correct horse battery staple",
            "correct horse battery",
            "purple tractor whistles gently",
            "Cre\u{300}me bru\u{302}le\u{301}e a\u{300} Zu\u{308}rich",
        ] {
            assert_eq!(refuse_weak(fine), Ok(()), "{fine}");
        }
    }

    #[test]
    fn the_list_is_sorted_lower_case_and_at_least_8_characters() {
        let lines: Vec<&str> = COMMON.lines().collect();
        assert_eq!(lines.len(), 3395);
        assert!(lines.windows(2).all(|w| w[0] < w[1]));
        assert!(
            lines
                .iter()
                .all(|l| l.chars().count() >= MIN_CHARS && l.to_lowercase() == *l)
        );
        for reason in [TooWeak::Short, TooWeak::Repeated, TooWeak::Common] {
            assert!(!reason.to_string().contains("password1"));
        }
    }

    #[test]
    fn empty_and_short_are_told_before_any_estimate() {
        assert_eq!(before_estimate(""), Some(Strength::Empty));
        assert_eq!(before_estimate("aB3$xY9"), Some(Strength::TooShort));
        // Characters, not bytes: seven letters with accents are still too short.
        assert_eq!(before_estimate("äöüßéèê"), Some(Strength::TooShort));
        assert_eq!(before_estimate("aB3$xY9z"), None);
    }

    #[test]
    fn scores_map_to_strengths() {
        let s = |score| Rating::from_score(score, None).strength;
        assert_eq!(
            [s(0), s(1), s(2), s(3), s(4)],
            [
                Strength::Weak,
                Strength::Weak,
                Strength::Weak,
                Strength::Fair,
                Strength::Strong
            ]
        );
        assert_eq!(s(9), Strength::Strong);
    }

    #[test]
    fn advice_is_said_only_where_it_helps() {
        let weak = Rating::from_score(1, Some("This is a very common password.".into()));
        assert_eq!(
            weak.words(),
            "Weak: easy to guess. This is a very common password."
        );
        let strong = Rating::from_score(4, Some("Avoid dates.".into()));
        assert_eq!(strong.words(), Strength::Strong.words());
        let blank = Rating::from_score(0, Some("  ".into()));
        assert_eq!(blank.words(), Strength::Weak.words());
    }

    #[test]
    fn every_strength_has_words_and_a_distinct_code() {
        let all = [
            Strength::Empty,
            Strength::TooShort,
            Strength::Checking,
            Strength::Unavailable,
            Strength::Weak,
            Strength::Fair,
            Strength::Strong,
        ];
        let mut codes: Vec<&str> = all.iter().map(|s| s.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
        for s in all {
            assert!(!s.words().is_empty());
            assert!(!s.words().contains('_'));
        }
    }
}
