//! Signed site requirements. (Being written.)
