//! The WebMCP host glue shared by the wallet page, the relying sites and the gate's JS package.
