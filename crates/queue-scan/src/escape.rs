//! JSON string escapes: `\" \\ \/ \b \f \n \r \t` and `\uXXXX`, with UTF-16 surrogate
//! pairs joined into one code point; unpaired surrogates are errors (they are not text).

use crate::error::{fault, ErrorKind, Res};

fn hex4(data: &[u8], at: usize) -> Res<u32> {
    let Some(digits) = data.get(at..at + 4) else {
        return fault(ErrorKind::UnexpectedEnd, data.len());
    };
    let mut value = 0;
    for &d in digits {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return fault(ErrorKind::BadUnicodeEscape, at - 2),
        };
        value = value << 4 | u32::from(v);
    }
    Ok(value)
}

/// Decodes the escape whose backslash is at `at`: returns the code point it stands for and
/// the offset just after it (after both halves of a surrogate pair).
pub(crate) fn decode_escape(data: &[u8], at: usize) -> Res<(char, usize)> {
    let Some(&kind) = data.get(at + 1) else {
        return fault(ErrorKind::UnexpectedEnd, data.len());
    };
    let simple = match kind {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => return decode_unicode(data, at),
        other => return fault(ErrorKind::BadEscape(other), at),
    };
    Ok((simple, at + 2))
}

fn decode_unicode(data: &[u8], at: usize) -> Res<(char, usize)> {
    let first = hex4(data, at + 2)?;
    let (code, end) = match first {
        0xD800..=0xDBFF => {
            // A high surrogate must be followed at once by `\u` and a low surrogate.
            match data.get(at + 6..at + 8) {
                Some(b"\\u") => {}
                None if data.len() < at + 8 => return fault(ErrorKind::UnexpectedEnd, data.len()),
                _ => return fault(ErrorKind::LoneSurrogate, at),
            }
            let second = hex4(data, at + 8)?;
            if !(0xDC00..=0xDFFF).contains(&second) {
                return fault(ErrorKind::LoneSurrogate, at);
            }
            (
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00),
                at + 12,
            )
        }
        0xDC00..=0xDFFF => return fault(ErrorKind::LoneSurrogate, at),
        _ => (first, at + 6),
    };
    match char::from_u32(code) {
        Some(c) => Ok((c, end)),
        None => fault(ErrorKind::LoneSurrogate, at),
    }
}

fn utf8(bytes: &[u8], offset: usize) -> Res<&str> {
    std::str::from_utf8(bytes).or_else(|e| fault(ErrorKind::InvalidUtf8, offset + e.valid_up_to()))
}

/// The text of the string whose contents (between the quotes, already validated by
/// `Cursor::skip_string`) are `data[start..end]`.
pub(crate) fn unescape(data: &[u8], start: usize, end: usize) -> Res<String> {
    let mut out = String::with_capacity(end - start);
    let mut pos = start;
    while pos < end {
        let run_end = data[pos..end]
            .iter()
            .position(|&b| b == b'\\')
            .map_or(end, |p| pos + p);
        out.push_str(utf8(&data[pos..run_end], pos)?);
        if run_end == end {
            break;
        }
        let (c, next) = decode_escape(data, run_end)?;
        out.push(c);
        pos = next;
    }
    Ok(out)
}

/// The contents `data[start..end]` of a string without escapes, checked as UTF-8.
pub(crate) fn plain(data: &[u8], start: usize, end: usize) -> Res<&str> {
    utf8(&data[start..end], start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Res<String> {
        unescape(s.as_bytes(), 0, s.len())
    }

    #[test]
    fn simple_escapes_and_slash() {
        assert_eq!(
            text(r#"\/tmp\/a\"b\\c\n\t\r\b\f"#).unwrap(),
            "/tmp/a\"b\\c\n\t\r\u{8}\u{c}"
        );
    }

    #[test]
    fn unicode_escapes_and_surrogate_pairs() {
        assert_eq!(text(r"\u0041\u00e9\u20AC").unwrap(), "Aé€");
        assert_eq!(text(r"x\ud83d\ude00y").unwrap(), "x😀y");
        assert_eq!(text("é\\u00e9").unwrap(), "éé");
    }

    #[test]
    fn bad_escapes_are_located() {
        let kind = |s: &str| text(s).unwrap_err();
        assert_eq!(kind(r"ab\x").kind, ErrorKind::BadEscape(b'x'));
        assert_eq!(kind(r"ab\x").offset, 2);
        assert_eq!(kind(r"\u12g4").kind, ErrorKind::BadUnicodeEscape);
        assert_eq!(kind(r"\ud800").kind, ErrorKind::UnexpectedEnd);
        assert_eq!(kind(r"\ud800abcdef").kind, ErrorKind::LoneSurrogate);
        assert_eq!(kind(r"\ud800\u0041").kind, ErrorKind::LoneSurrogate);
        assert_eq!(kind(r"\udc00").kind, ErrorKind::LoneSurrogate);
        assert_eq!(kind(r"\u12").kind, ErrorKind::UnexpectedEnd);
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let err = unescape(b"ab\xff", 0, 3).unwrap_err();
        assert_eq!((err.kind, err.offset), (ErrorKind::InvalidUtf8, 2));
    }
}
