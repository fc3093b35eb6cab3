//! The page's clock: the one place the wallet reads the time (`Date.now()`), as the pure crates
//! take it ([`Timestamp`]).

use wallet_core::Timestamp;

/// Now, to the millisecond.
pub fn now() -> Timestamp {
    Timestamp::from_millis(js_sys::Date::now() as i64)
}
