//! `tool-gate` for any WebMCP page (skeleton; the package is built in the next commits).
