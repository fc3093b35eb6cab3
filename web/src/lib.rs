//! The wallet page (wasm-bindgen host for `document.modelContext`).
//!
//! Not built yet: issue 4 fills this crate.
