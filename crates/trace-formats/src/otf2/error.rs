//! The reader's one error: which file, at which byte, what was expected there.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Otf2Error {
    pub file: String,
    pub offset: usize,
    pub what: String,
}

impl Otf2Error {
    pub fn new(file: &str, offset: usize, what: impl Into<String>) -> Otf2Error {
        Otf2Error {
            file: file.to_string(),
            offset,
            what: what.into(),
        }
    }
}

impl fmt::Display for Otf2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} byte {}: {}", self.file, self.offset, self.what)
    }
}
