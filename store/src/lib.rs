//! The database under Tacit services. (Being written.)
