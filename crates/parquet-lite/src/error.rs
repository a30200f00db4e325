//! Errors of reading a Parquet file: what is wrong and where (the footer, a column).

use std::cell::Cell;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

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

thread_local! {
    /// Whether this thread is inside `guarded` (its panics are errors, not reports).
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Installs, once, a panic hook that stays quiet inside `guarded` and hands every other
/// panic to the hook that was there before.
fn quiet_inside_guarded() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Runs a call into the parquet crate: its errors become ours, and a panic on damaged
/// input (its decoders assert on some impossible values, e.g. a data page's dictionary
/// indices without a dictionary page) becomes a `Corrupt` error, without the panic's
/// report on stderr, instead of unwinding through the Python binding.
pub(crate) fn guarded<T>(call: impl FnOnce() -> parquet::errors::Result<T>) -> Result<T> {
    quiet_inside_guarded();
    let outer = GUARDED.with(|g| g.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(call));
    GUARDED.with(|g| g.set(outer));
    match result {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_inside_guarded_is_a_corrupt_error_and_outside_still_a_panic() {
        let got = guarded(|| -> parquet::errors::Result<()> { panic!("bad index {}", 7) });
        assert!(matches!(got, Err(Error::Corrupt(what)) if what == "bad index 7"));
        let nyi = guarded(|| -> parquet::errors::Result<()> {
            Err(ParquetError::NYI("codec LZO".into()))
        });
        assert!(matches!(nyi, Err(Error::Unsupported(what)) if what == "codec LZO"));
        assert!(!GUARDED.with(Cell::get));
        assert!(std::panic::catch_unwind(|| panic!("outside")).is_err());
    }
}
