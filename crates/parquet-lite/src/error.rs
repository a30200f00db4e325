//! Errors of reading a Parquet file: what is wrong and where (byte offset, column).

use std::fmt;

#[derive(Debug)]
pub enum Error {
    Io(std::io::Error),
    /// Not a Parquet file, or a damaged one: what was found and where.
    Corrupt(String),
    /// Valid Parquet this reader does not decode (a codec, an encoding, a nesting).
    Unsupported(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(err) => write!(f, "{err}"),
            Error::Corrupt(what) => write!(f, "corrupt Parquet data: {what}"),
            Error::Unsupported(what) => write!(f, "unsupported Parquet feature: {what}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Self {
        Error::Io(err)
    }
}

pub(crate) fn corrupt<T>(what: impl Into<String>) -> Result<T> {
    Err(Error::Corrupt(what.into()))
}
