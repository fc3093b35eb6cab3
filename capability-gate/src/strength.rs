//! A hint about how hard a new passphrase is to guess, shown under the field while the person
//! creates a profile. It is a hint, not a rule: the wallet core only refuses passphrases shorter
//! than 8 characters (`wallet_core::Passphrase::typed`).
//!
//! The estimate is small and pure (no dictionary download, no I/O): it counts the character
//! kinds used, gives repeated and consecutive characters (`aaaa`, `1234`, `abcd`) almost no
//! weight, scores a phrase of several words by its words (each counts for at most the guessing
//! work of a common word, about 13 bits), caps a single short word, and calls a well-known
//! password weak. Thresholds: under 36 bits weak, under 50 fair, else strong (four unrelated
//! words reach strong; with the wallet's Argon2id at 64 MiB per guess that is years of work).

/// How hard a passphrase is to guess, as the hint says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Strength {
    Empty,
    TooShort,
    Weak,
    Fair,
    Strong,
}

/// Passwords that are tried first, lower-case (with trailing digits and `!` removed before the
/// comparison, so `password123!` is among them).
const COMMON: &[&str] = &[
    "password",
    "passwort",
    "passphrase",
    "qwerty",
    "qwertz",
    "qwertyuiop",
    "azerty",
    "letmein",
    "welcome",
    "iloveyou",
    "admin",
    "administrator",
    "monkey",
    "dragon",
    "football",
    "baseball",
    "sunshine",
    "princess",
    "master",
    "shadow",
    "superman",
    "trustno",
    "starwars",
    "whatever",
    "hallo",
    "hello",
    "geheim",
    "secret",
    "changeme",
    "abc",
    "abcdef",
    "abcdefgh",
    "asdfghjkl",
    "asdf",
    "zxcvbnm",
    "tacit",
    "tacitwallet",
    "wallet",
    "correcthorsebatterystaple",
    "correct horse battery staple",
];

/// At least this many characters: the wallet core's own minimum.
pub const MIN_CHARS: usize = wallet_core::vault::MIN_PASSPHRASE_CHARS;

/// The estimated guessing work in bits (see the module documentation).
pub fn bits(pass: &str) -> f64 {
    let tokens: Vec<&str> = pass
        .split(|c: char| c.is_whitespace() || matches!(c, '-' | '_' | '.' | ',' | '+' | '/'))
        .filter(|t| !t.is_empty())
        .collect();
    if tokens.len() >= 2 {
        // A phrase: each word is at most a common word's worth, and a word used twice counts once.
        let mut seen: Vec<String> = Vec::new();
        let mut total = 0.0;
        for token in tokens {
            let lower = token.to_lowercase();
            if seen.contains(&lower) {
                continue;
            }
            total += char_bits(token).min(13.0);
            seen.push(lower);
        }
        total
    } else {
        let single = char_bits(pass);
        if pass.chars().count() <= 12 {
            // One short word, however decorated, is among the first million guesses' patterns.
            single.min(45.0)
        } else {
            single
        }
    }
}

/// Characters times the bits of the alphabet they come from, with repeats and runs of
/// consecutive characters counting a quarter.
fn char_bits(text: &str) -> f64 {
    let (mut lower, mut upper, mut digit, mut symbol, mut other) =
        (false, false, false, false, false);
    let mut effective = 0.0;
    let mut previous: Option<char> = None;
    for c in text.chars() {
        if c.is_ascii_lowercase() {
            lower = true;
        } else if c.is_ascii_uppercase() {
            upper = true;
        } else if c.is_ascii_digit() {
            digit = true;
        } else if c.is_ascii() {
            symbol = true;
        } else {
            other = true;
        }
        let predictable = previous.is_some_and(|p| {
            let (p, c) = (u32::from(p), u32::from(c));
            p == c || p + 1 == c || c + 1 == p
        });
        effective += if predictable { 0.25 } else { 1.0 };
        previous = Some(c);
    }
    let pool = [
        (lower, 26.0),
        (upper, 26.0),
        (digit, 10.0),
        (symbol, 33.0),
        (other, 100.0),
    ]
    .iter()
    .filter(|(used, _)| *used)
    .map(|(_, size)| size)
    .sum::<f64>()
    .max(2.0);
    effective * f64::log2(pool)
}

fn is_common(pass: &str) -> bool {
    let lower = pass.trim().to_lowercase();
    let stripped = lower.trim_end_matches(|c: char| c.is_ascii_digit() || c == '!');
    let leading = lower.trim_start_matches(|c: char| c.is_ascii_digit());
    lower.chars().all(|c| c.is_ascii_digit())
        || COMMON.contains(&lower.as_str())
        || COMMON.contains(&stripped)
        || COMMON.contains(&leading)
}

/// How strong `pass` is.
pub fn estimate(pass: &str) -> Strength {
    let chars = pass.chars().count();
    if chars == 0 {
        return Strength::Empty;
    }
    if chars < MIN_CHARS {
        return Strength::TooShort;
    }
    if is_common(pass) {
        return Strength::Weak;
    }
    match bits(pass) {
        b if b < 36.0 => Strength::Weak,
        b if b < 50.0 => Strength::Fair,
        _ => Strength::Strong,
    }
}

impl Strength {
    /// The hint under the field, in words.
    pub fn words(self) -> &'static str {
        match self {
            Self::Empty => {
                "At least 8 characters. Four or more unrelated words are easy to remember and \
                 hard to guess."
            }
            Self::TooShort => "Too short: use at least 8 characters.",
            Self::Weak => "Weak: easy to guess. Add a few unrelated words.",
            Self::Fair => {
                "Fair. One or two more unrelated words would make it much harder to guess."
            }
            Self::Strong => "Strong: hard to guess. Make sure you will remember it.",
        }
    }

    /// The field hint's `data-strength` (for the colour and for tests).
    pub fn code(self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::TooShort => "short",
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
    fn empty_and_short() {
        assert_eq!(estimate(""), Strength::Empty);
        assert_eq!(estimate("aB3$xY9"), Strength::TooShort);
        // Characters, not bytes: seven letters with accents are still too short.
        assert_eq!(estimate("äöüßéèê"), Strength::TooShort);
    }

    #[test]
    fn well_known_passwords_are_weak() {
        for pass in [
            "password",
            "Password123",
            "password123!",
            "qwertyuiop",
            "12345678",
            "00000000000",
            "letmein2024",
            "correct horse battery staple",
            "CorrectHorseBatteryStaple",
        ] {
            assert_eq!(estimate(pass), Strength::Weak, "{pass}");
        }
    }

    #[test]
    fn repeats_and_runs_are_weak() {
        for pass in [
            "aaaaaaaaaaaa",
            "abcdefghijklmnop",
            "1234567890123",
            "aaaa bbbb cccc dddd",
            "word word word word",
        ] {
            assert_eq!(estimate(pass), Strength::Weak, "{pass}");
        }
    }

    #[test]
    fn a_single_short_word_is_at_most_fair() {
        assert!(estimate("Tr0ub4dor&3") <= Strength::Fair);
        assert!(estimate("Sommer2024!") <= Strength::Fair);
    }

    #[test]
    fn unrelated_words_are_strong() {
        for pass in [
            "purple tractor whistles gently",
            "Kanal-Lampe-Biber-Wolke-Sand",
            "river maple quantum oyster",
        ] {
            assert_eq!(estimate(pass), Strength::Strong, "{pass}");
        }
    }

    #[test]
    fn two_words_are_not_strong() {
        assert!(estimate("purple tractor") < Strength::Strong);
    }

    #[test]
    fn more_words_never_make_it_weaker() {
        let mut phrase = String::from("lantern");
        let mut last = estimate(&phrase);
        for word in ["orbit", "cabbage", "velvet", "harbour", "gravel"] {
            phrase.push(' ');
            phrase.push_str(word);
            let now = estimate(&phrase);
            assert!(now >= last, "{phrase}: {now:?} < {last:?}");
            last = now;
        }
        assert_eq!(last, Strength::Strong);
    }

    #[test]
    fn every_strength_has_words_and_a_code() {
        for s in [
            Strength::Empty,
            Strength::TooShort,
            Strength::Weak,
            Strength::Fair,
            Strength::Strong,
        ] {
            assert!(!s.words().is_empty());
            assert!(!s.code().is_empty());
        }
    }
}
