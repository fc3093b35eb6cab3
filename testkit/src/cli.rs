//! The shared command-line check (filled in by the kit work).
