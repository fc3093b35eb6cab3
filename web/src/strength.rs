//! The hint under "New passphrase", through `js/strength.js`: the page's strength module
//! (`web/strength`, zxcvbn) is fetched when the person first types a new passphrase. What the
//! hint says is `capability_gate::strength`'s.

use capability_gate::strength::{self, Rating, Strength};
use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::dom;

#[wasm_bindgen(module = "/js/strength.js")]
extern "C" {
    #[wasm_bindgen(js_name = rateStrength, catch)]
    fn rate_strength(pass: &str) -> Result<Promise, JsValue>;
}

/// The new passphrase changed: its hint follows it. Empty and too short are said at once;
/// otherwise the estimate is asked for, and drawn if the field still holds what was rated.
pub fn on_new_passphrase(_: web_sys::Event) {
    let pass = dom::value("new-pass");
    if let Some(now) = strength::before_estimate(&pass) {
        show(Strength::code(now), now.words());
        return;
    }
    if hint_code().is_none_or(|code| {
        [Strength::Empty, Strength::TooShort, Strength::Unavailable]
            .iter()
            .any(|s| s.code() == code)
    }) {
        show(Strength::Checking.code(), Strength::Checking.words());
    }
    wasm_bindgen_futures::spawn_local(async move {
        let rated = match rate_strength(&pass) {
            Ok(promise) => JsFuture::from(promise).await.ok(),
            Err(_) => None,
        };
        if dom::value("new-pass") != pass {
            return; // a later keystroke's estimate draws
        }
        let pair = rated
            .map(|v| Array::from(&v))
            .filter(|a| a.length() == 2)
            .and_then(|a| Some((a.get(0).as_string()?, a.get(1).as_string()?)));
        match pair {
            Some((code, words)) => show(&code, &words),
            None => {
                let failed = Rating::of(Strength::Unavailable);
                show(failed.strength.code(), &failed.words());
            }
        }
    });
}

fn hint_code() -> Option<String> {
    dom::by_id("pass-strength").and_then(|hint| hint.get_attribute("data-strength"))
}

fn show(code: &str, words: &str) {
    if let Some(hint) = dom::by_id("pass-strength") {
        dom::set_text_of(&hint, words);
        dom::attr(&hint, "data-strength", code);
    }
}
