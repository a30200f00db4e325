//! Syntax and shape errors of a scanned document, located by byte offset and line.

use std::fmt;

/// What went wrong. Syntax kinds mean the bytes are not JSON; shape kinds
/// ([`ErrorKind::is_shape`]) mean valid-looking JSON that is not `squeue --json` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The document ended inside a value (truncated output).
    UnexpectedEnd,
    /// A byte that cannot start or continue the construct: `what` was expected.
    Expected { what: &'static str, found: u8 },
    /// `t`/`f`/`n` not followed by the rest of `true`/`false`/`null`.
    BadLiteral,
    /// A number not matching JSON's grammar (`01`, `1.`, `-`, `1e`).
    BadNumber,
    /// A string without its closing quote (offset: the opening quote).
    UnterminatedString,
    /// A raw control character (below 0x20) inside a string.
    ControlInString(u8),
    /// A backslash followed by a byte that is not a JSON escape.
    BadEscape(u8),
    /// `\u` not followed by four hex digits.
    BadUnicodeEscape,
    /// A UTF-16 surrogate escape without its other half.
    LoneSurrogate,
    /// An extracted string whose bytes are not UTF-8.
    InvalidUtf8,
    /// Containers nested deeper than [`crate::MAX_DEPTH`].
    TooDeep,
    /// Bytes after the top-level value.
    TrailingData,
    /// Shape: the top-level value is not an object.
    TopNotObject,
    /// Shape: the top-level object has no `jobs` member.
    NoJobs,
    /// Shape: `jobs` is not an array.
    JobsNotArray,
}

impl ErrorKind {
    /// True for errors about the document's shape rather than its JSON syntax.
    pub fn is_shape(self) -> bool {
        matches!(self, Self::TopNotObject | Self::NoJobs | Self::JobsNotArray)
    }
}

/// Shows a byte as `'x'` when printable ASCII, else as `0xNN`.
struct ShownByte(u8);

impl fmt::Display for ShownByte {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_ascii_graphic() {
            write!(f, "'{}'", self.0 as char)
        } else {
            write!(f, "0x{:02x}", self.0)
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::UnexpectedEnd => f.write_str("unexpected end of input"),
            Self::Expected { what, found } => {
                write!(f, "expected {what}, found {}", ShownByte(found))
            }
            Self::BadLiteral => f.write_str("invalid literal (not true, false or null)"),
            Self::BadNumber => f.write_str("invalid number"),
            Self::UnterminatedString => f.write_str("unterminated string"),
            Self::ControlInString(b) => {
                write!(f, "control character {} inside a string", ShownByte(b))
            }
            Self::BadEscape(b) => write!(f, "invalid escape \\{}", b as char),
            Self::BadUnicodeEscape => f.write_str("\\u not followed by four hex digits"),
            Self::LoneSurrogate => f.write_str("unpaired UTF-16 surrogate escape"),
            Self::InvalidUtf8 => f.write_str("string is not valid UTF-8"),
            Self::TooDeep => write!(f, "nested deeper than {} levels", crate::MAX_DEPTH),
            Self::TrailingData => f.write_str("extra data after the top-level value"),
            Self::TopNotObject => f.write_str("the top level is not an object"),
            Self::NoJobs => f.write_str("no top-level 'jobs' list"),
            Self::JobsNotArray => f.write_str("no top-level 'jobs' list ('jobs' is not a list)"),
        }
    }
}

/// A located error: `offset` is the byte index, `line` and `column` are 1-based (column in
/// bytes). Lines are counted only when an error is built, never while scanning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl Error {
    /// Locates `kind` at `offset` of `data` (offsets past the end are clamped).
    pub fn at(kind: ErrorKind, data: &[u8], offset: usize) -> Self {
        let offset = offset.min(data.len());
        let before = &data[..offset];
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        Self {
            kind,
            offset,
            line,
            column: offset - line_start + 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.kind.is_shape() {
            "not squeue --json output"
        } else {
            "not valid JSON"
        };
        write!(
            f,
            "line {}, column {} (byte {}): {what}: {}",
            self.line, self.column, self.offset, self.kind
        )
    }
}

impl std::error::Error for Error {}

/// An error before it is located: what and where (byte offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fault {
    pub kind: ErrorKind,
    pub offset: usize,
}

pub(crate) type Res<T> = Result<T, Fault>;

pub(crate) fn fault<T>(kind: ErrorKind, offset: usize) -> Res<T> {
    Err(Fault { kind, offset })
}
