//! Shared fixtures (filled in by the catalogue work).
