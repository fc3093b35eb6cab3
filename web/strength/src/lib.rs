//! The passphrase strength estimate behind the hint under "New passphrase": Dropbox's zxcvbn
//! (the `zxcvbn` crate), with its dictionaries of common passwords, names and words, keyboard
//! patterns, dates and repeats.
//!
//! Its dictionaries make it large, so the wallet page fetches this module only when the person
//! types a new passphrase (creating a profile, changing the passphrase), never on an ordinary
//! visit: the app's `web/js/strength.js` imports it on first use. What the rating means in
//! words is `capability_gate::strength`'s, a pure function of zxcvbn's score.

use capability_gate::strength::Rating;
#[cfg(test)]
use capability_gate::strength::Strength;

/// Rates `pass`; `context` holds words the person's own page shows (the wallet's name), which
/// zxcvbn treats as guessable.
pub fn rate(pass: &str, context: &[&str]) -> Rating {
    if let Some(strength) = capability_gate::strength::before_estimate(pass) {
        return Rating::of(strength);
    }
    let entropy = zxcvbn::zxcvbn(pass, context);
    let advice = entropy.feedback().and_then(|f| {
        f.warning()
            .map(|w| w.to_string())
            .or_else(|| f.suggestions().first().map(ToString::to_string))
    });
    Rating::from_score(u8::from(entropy.score()), advice)
}

/// Words zxcvbn counts as guessable on this page.
pub const CONTEXT: [&str; 3] = ["tacit", "wallet", "privacy"];

#[cfg(target_arch = "wasm32")]
mod js {
    use wasm_bindgen::prelude::*;

    /// `[code, words]` for the hint: `code` is `data-strength` (`empty`, `short`, `weak`, `fair`,
    /// `strong`), `words` its sentence.
    #[wasm_bindgen]
    pub fn estimate(pass: &str) -> Vec<String> {
        let rating = super::rate(pass, &super::CONTEXT);
        vec![rating.strength.code().to_owned(), rating.words()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_and_patterned_passphrases_are_weak() {
        for pass in [
            "password1",
            "Password123!",
            "qwertyuiop",
            "aaaaaaaaaaaa",
            "12345678910",
            "tacitwallet",
            "iloveyou2024",
        ] {
            assert_eq!(rate(pass, &CONTEXT).strength, Strength::Weak, "{pass}");
        }
    }

    #[test]
    fn unrelated_words_are_strong() {
        for pass in [
            "purple tractor whistles gently",
            "lantern ostrich quietly balcony",
            "Gv7#qLz!9mWp2$",
        ] {
            assert_eq!(rate(pass, &CONTEXT).strength, Strength::Strong, "{pass}");
        }
    }

    #[test]
    fn empty_and_short_are_said_before_any_estimate() {
        assert_eq!(rate("", &CONTEXT).strength, Strength::Empty);
        assert_eq!(rate("abc1234", &CONTEXT).strength, Strength::TooShort);
    }

    #[test]
    fn a_weak_rating_says_why_in_words() {
        let rating = rate("password1", &CONTEXT);
        let words = rating.words();
        assert!(words.starts_with("Weak"), "{words}");
        assert!(words.len() > "Weak.".len() + 10, "no advice: {words}");
    }
}
