//! Errors of reading a Parquet file: what is wrong and where (the footer, a column).

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use parquet::errors::ParquetError;

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

impl From<ParquetError> for Error {
    fn from(err: ParquetError) -> Self {
        match err {
            ParquetError::NYI(what) => Error::Unsupported(what),
            ParquetError::External(inner) => match inner.downcast::<std::io::Error>() {
                Ok(io) => Error::Io(*io),
                Err(other) => Error::Corrupt(other.to_string()),
            },
            ParquetError::General(what) | ParquetError::EOF(what) => Error::Corrupt(what),
            other => Error::Corrupt(other.to_string()),
        }
    }
}

impl Error {
    /// The error with where it happened in front (`footer`, `column seq`).
    pub(crate) fn context(self, at: &str) -> Self {
        match self {
            Error::Corrupt(what) => Error::Corrupt(format!("{at}: {what}")),
            Error::Unsupported(what) => Error::Unsupported(format!("{at}: {what}")),
            Error::Io(err) => Error::Io(std::io::Error::new(err.kind(), format!("{at}: {err}"))),
        }
    }
}

/// Runs a call into the parquet crate: its errors become ours, and a panic on damaged
/// input (its decoders assert on some impossible values) becomes a `Corrupt` error
/// instead of unwinding through the Python binding.
pub(crate) fn guarded<T>(call: impl FnOnce() -> parquet::errors::Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(result) => result.map_err(Error::from),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("the decoder stopped");
            Err(Error::Corrupt(what.to_string()))
        }
    }
}
