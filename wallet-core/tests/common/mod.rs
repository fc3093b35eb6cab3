//! The shared fixtures live in `tacit-testkit`; this module only names them for `mod common;`.
#![allow(unused_imports)]

pub use tacit_testkit::fixtures::*;
