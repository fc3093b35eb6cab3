//! The hint under "New passphrase": how hard the passphrase is to guess, in words. It is a hint,
//! not a rule: the wallet core only refuses passphrases shorter than 8 characters
//! (`wallet_core::Passphrase::typed`).
//!
//! The estimate is zxcvbn's (the `zxcvbn` crate, in the page's strength module
//! `web/strength`, which the page loads only when the person types a new passphrase: its
//! dictionaries are large). This module is what the estimate means to the person: zxcvbn's
//! score 0–4 as a [`Strength`], and its advice, as one sentence. Score 4 (at least 10¹⁰
//! guesses) is strong; 3 fair; below that weak. With the wallet's Argon2id at 64 MiB per guess,
//! 10¹⁰ guesses is years of work.

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
