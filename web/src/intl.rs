//! Amounts and dates for people, in the browser's own locale (`Intl.NumberFormat`,
//! `Intl.DateTimeFormat`). Every amount or date that reaches a person goes through here: no
//! epoch milliseconds and no minor-unit amounts on the page.
//!
//! The wallet keeps every amount in hundredths of its currency (wallet-core's `Money`), for
//! every currency of its catalogue; `money` shows it in major units, without decimals when it is
//! whole ("€30,000" / "30.000 €"), with the currency's own decimals otherwise.

use std::cell::RefCell;
use std::collections::BTreeMap;

use js_sys::{Array, Function, Intl, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

thread_local! {
    /// Each formatter made once, by what it formats: making an `Intl` formatter costs far more
    /// than using one, and a redraw formats many dates and amounts. They keep the locale and
    /// time zone the browser had when they were made (a change shows after a reload).
    static FORMATTERS: RefCell<BTreeMap<String, (JsValue, Function)>> = RefCell::default();
}

/// Formats `value` with the formatter kept under `key`, made by `make` the first time.
fn formatted(
    key: String,
    make: impl FnOnce() -> (JsValue, Function),
    value: JsValue,
) -> Option<String> {
    let (this, format) =
        FORMATTERS.with(|f| f.borrow_mut().entry(key).or_insert_with(make).clone());
    call(&this, &format, value)
}

fn number_format(options: &Object) -> (JsValue, Function) {
    let format = Intl::NumberFormat::new(&Array::new(), options);
    let function = Intl::NumberFormat::format(&format);
    (format.into(), function)
}

/// `3_000_000, "EUR"` → "€30,000.00"-style text in the browser's locale ("30.000 €" in German).
/// A code that is not three ASCII letters (Intl would throw) is shown after a plain number.
pub fn money(amount_minor: i64, currency: &str) -> String {
    let major = amount_minor as f64 / 100.0;
    let whole = amount_minor % 100 == 0;
    if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_alphabetic()) {
        return format!("{} {currency}", plain(major, whole));
    }
    let code = currency.to_ascii_uppercase();
    let make = || {
        let options = Object::new();
        set(&options, "style", &"currency".into());
        set(&options, "currency", &code.as_str().into());
        if whole {
            set(&options, "minimumFractionDigits", &0.into());
            set(&options, "maximumFractionDigits", &0.into());
        }
        number_format(&options)
    };
    formatted(format!("money {code} {whole}"), make, major.into())
        .unwrap_or_else(|| format!("{} {currency}", plain(major, whole)))
}

/// [`money`] for wallet-core's `Money` (what `capability_gate::words` takes as its amount
/// formatter: `words::question(claim, &intl::money_of)`).
pub fn money_of(m: &wallet_core::Money) -> String {
    money(
        i64::try_from(m.amount_minor).unwrap_or(i64::MAX),
        m.currency.as_str(),
    )
}

/// A day in the browser's locale and time zone: "1 Dec 2026" / "Dec 1, 2026".
pub fn date(ms: i64) -> String {
    date_with(ms, &[("dateStyle", "medium")])
}

/// A day and time of day in the browser's locale and time zone: "Dec 1, 2026, 2:30 PM".
pub fn date_time(ms: i64) -> String {
    date_with(ms, &[("dateStyle", "medium"), ("timeStyle", "short")])
}

fn date_with(ms: i64, style: &[(&str, &str)]) -> String {
    let make = || {
        let options = Object::new();
        for (key, value) in style {
            set(&options, key, &(*value).into());
        }
        let format = Intl::DateTimeFormat::new(&Array::new(), &options);
        let function = Intl::DateTimeFormat::format(&format);
        (format.into(), function)
    };
    let date = js_sys::Date::new(&JsValue::from_f64(ms as f64));
    formatted(format!("date {style:?}"), make, date.clone().into()).unwrap_or_else(|| {
        // Not reached in a browser with Intl; a readable ISO-like day rather than a number.
        String::from(date.to_iso_string())
            .chars()
            .take(10)
            .collect()
    })
}

fn plain(value: f64, whole: bool) -> String {
    let make = || {
        let options = Object::new();
        if whole {
            set(&options, "maximumFractionDigits", &0.into());
        } else {
            set(&options, "minimumFractionDigits", &2.into());
            set(&options, "maximumFractionDigits", &2.into());
        }
        number_format(&options)
    };
    formatted(format!("plain {whole}"), make, value.into()).unwrap_or_else(|| format!("{value:.2}"))
}

fn set(options: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(options, &key.into(), value);
}

fn call(this: &JsValue, format: &Function, value: JsValue) -> Option<String> {
    format
        .call1(this, &value)
        .ok()?
        .dyn_into::<js_sys::JsString>()
        .ok()
        .map(String::from)
}
