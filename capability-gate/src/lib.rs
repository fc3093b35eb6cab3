//! capability-gate: claim tools that exist only while consent holds.
//!
//! Not built yet: issue 3 fills this crate. It will stay pure (no browser types, no clock, no I/O).
