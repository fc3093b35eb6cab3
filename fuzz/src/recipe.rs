//! What the recipe-driven targets (`credential_batch`, `presentation_verify`) share: their
//! input read one byte at a time.

/// Reads the recipe bytes, `0` past the end.
pub struct Recipe<'a>(pub &'a [u8]);

impl Recipe<'_> {
    /// The next byte, or `0` once the recipe is used up.
    pub fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
}
