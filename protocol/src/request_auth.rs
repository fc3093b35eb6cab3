//! Signed signer requests from enrolled installs. (Being written.)
