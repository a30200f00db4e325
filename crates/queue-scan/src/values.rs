//! Readers of single values at the cursor, with the loose typing of squeue's fields: plain
//! numbers or newer Slurm's `{"set", "infinite", "number"}` objects, strings or lists of
//! strings. Values of an unexpected type are reported (as their JSON text), not errors.

use std::borrow::Cow;

use crate::cursor::Cursor;
use crate::error::{fault, ErrorKind, Res};
use crate::escape::{plain, unescape};

/// Longest JSON text quoted in a problem report.
const SHOWN_CHARS: usize = 60;

/// The JSON text of `data[start..end]` for messages, shortened.
pub(crate) fn shown(data: &[u8], start: usize, end: usize) -> String {
    let text = String::from_utf8_lossy(&data[start..end]);
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.into_owned(),
    }
}

/// A number field: Slurm's integer, or "no value" (null, a boolean, an unset or infinite
/// number object), or something else (`Bad`: its JSON text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Num {
    Unset,
    Int(i64),
    Bad(String),
}

/// A scalar read as text: strings, with null and falsy values told apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scalar {
    Str(String),
    Null,
    /// `false`, a zero number, `[]`, `{}`.
    Falsy,
    /// `true`, a non-zero number, a non-empty container: its JSON text.
    Other(String),
}

/// Visits the members of the object at the cursor (at `{`): `member` gets each key and
/// must consume its value.
pub(crate) fn object<'a, F>(c: &mut Cursor<'a>, mut member: F) -> Res<()>
where
    F: FnMut(&mut Cursor<'a>, &[u8]) -> Res<()>,
{
    c.pos += 1;
    if c.next_token()? == b'}' {
        c.pos += 1;
        return Ok(());
    }
    loop {
        c.at_key()?;
        let key = key(c)?;
        c.expect(b':', "':'")?;
        member(c, &key)?;
        match c.next_token()? {
            b',' => c.pos += 1,
            b'}' => {
                c.pos += 1;
                return Ok(());
            }
            found => {
                return fault(
                    ErrorKind::Expected {
                        what: "',' or '}'",
                        found,
                    },
                    c.pos,
                )
            }
        }
    }
}

/// Visits the elements of the array at the cursor (at `[`); `element` must consume each.
pub(crate) fn array<'a, F>(c: &mut Cursor<'a>, mut element: F) -> Res<()>
where
    F: FnMut(&mut Cursor<'a>, usize) -> Res<()>,
{
    c.pos += 1;
    if c.next_token()? == b']' {
        c.pos += 1;
        return Ok(());
    }
    let mut index = 0;
    loop {
        element(c, index)?;
        index += 1;
        match c.next_token()? {
            b',' => c.pos += 1,
            b']' => {
                c.pos += 1;
                return Ok(());
            }
            found => {
                return fault(
                    ErrorKind::Expected {
                        what: "',' or ']'",
                        found,
                    },
                    c.pos,
                )
            }
        }
    }
}

/// The key at the cursor (at its quote), as bytes; unescaped only when it holds escapes.
fn key<'a>(c: &mut Cursor<'a>) -> Res<Cow<'a, [u8]>> {
    let start = c.pos;
    let escaped = c.skip_string()?;
    let (from, to) = (start + 1, c.pos - 1);
    Ok(if escaped {
        Cow::Owned(unescape(c.data, from, to)?.into_bytes())
    } else {
        Cow::Borrowed(&c.data[from..to])
    })
}

/// The string at the cursor (at its quote), unescaped.
pub(crate) fn string(c: &mut Cursor<'_>) -> Res<String> {
    let start = c.pos;
    let escaped = c.skip_string()?;
    let (from, to) = (start + 1, c.pos - 1);
    if escaped {
        unescape(c.data, from, to)
    } else {
        plain(c.data, from, to).map(str::to_owned)
    }
}

/// Skips the value at the cursor; returns its first byte and its span.
fn skip(c: &mut Cursor<'_>) -> Res<(u8, usize, usize)> {
    let first = c.next_token()?;
    let start = c.pos;
    c.skip_value()?;
    Ok((first, start, c.pos))
}

/// Python's truth value of the JSON value `data[start..end]` that begins with `first`.
fn truthy(data: &[u8], first: u8, start: usize, end: usize) -> bool {
    let inner = || {
        data[start + 1..end - 1]
            .iter()
            .any(|b| !b.is_ascii_whitespace())
    };
    match first {
        b't' => true,
        b'f' | b'n' => false,
        b'"' => end - start > 2,
        b'[' | b'{' => inner(),
        _ => data[start..end]
            .iter()
            .take_while(|&&b| !matches!(b, b'e' | b'E'))
            .any(|b| b.is_ascii_digit() && *b != b'0'),
    }
}

/// Skips the value at the cursor; returns its span and Python truth value.
pub(crate) fn raw(c: &mut Cursor<'_>) -> Res<(usize, usize, bool)> {
    let (first, start, end) = skip(c)?;
    Ok((start, end, truthy(c.data, first, start, end)))
}

fn int_text(text: &str) -> Option<i64> {
    text.parse().ok()
}

/// A plain JSON integer at the cursor, else None (anything else is skipped).
fn plain_int(c: &mut Cursor<'_>) -> Res<Option<i64>> {
    let first = c.next_token()?;
    let start = c.pos;
    if first == b'-' || first.is_ascii_digit() {
        let info = c.number()?;
        let text = plain(c.data, start, c.pos)?;
        return Ok(if info.integer { int_text(text) } else { None });
    }
    c.skip_value()?;
    Ok(None)
}

/// A number field (see [`Num`]). Strings of digits count as numbers, as old squeue printed.
pub(crate) fn number(c: &mut Cursor<'_>) -> Res<Num> {
    let first = c.next_token()?;
    let start = c.pos;
    let bad = |c: &Cursor<'_>| Num::Bad(shown(c.data, start, c.pos));
    match first {
        b'-' | b'0'..=b'9' => {
            let info = c.number()?;
            let value = info
                .integer
                .then(|| int_text(plain(c.data, start, c.pos).ok()?))
                .flatten();
            Ok(value.map_or_else(|| bad(c), Num::Int))
        }
        b'"' => {
            let text = string(c)?;
            let digits = text.trim_matches(|ch: char| ch.is_ascii_whitespace() || ch == '\x0b');
            let ok = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
            Ok(ok
                .then(|| int_text(digits))
                .flatten()
                .map_or_else(|| bad(c), Num::Int))
        }
        b'{' => number_object(c),
        b't' | b'f' | b'n' => {
            c.skip_value()?;
            Ok(Num::Unset)
        }
        _ => {
            c.skip_value()?;
            Ok(bad(c))
        }
    }
}

/// Newer Slurm's `{"set": bool, "infinite": bool, "number": int}` (last duplicate wins).
fn number_object(c: &mut Cursor<'_>) -> Res<Num> {
    let (mut unset, mut infinite, mut value) = (false, false, None);
    object(c, |c, key| {
        match key {
            b"set" => unset = skip(c).map(|(_, s, e)| &c.data[s..e] == b"false")?,
            b"infinite" => infinite = skip(c).map(|(f, s, e)| truthy(c.data, f, s, e))?,
            b"number" => value = plain_int(c)?,
            _ => c.skip_value()?,
        }
        Ok(())
    })?;
    Ok(match value {
        Some(v) if !unset && !infinite => Num::Int(v),
        _ => Num::Unset,
    })
}

/// `job_state`: a string (22.05) or a list of strings (newer), upper-cased; `Err` holds
/// the JSON text of anything else.
pub(crate) fn states(c: &mut Cursor<'_>) -> Res<Result<Vec<String>, String>> {
    let first = c.next_token()?;
    let start = c.pos;
    let mut all = Vec::new();
    let mut only_strings = true;
    match first {
        b'"' => all.push(string(c)?),
        b'[' => array(c, |c, _| {
            if c.next_token()? == b'"' {
                all.push(string(c)?);
            } else {
                only_strings = false;
                c.skip_value()?;
            }
            Ok(())
        })?,
        _ => {
            c.skip_value()?;
            only_strings = false;
        }
    }
    if !only_strings {
        return Ok(Err(shown(c.data, start, c.pos)));
    }
    all.retain(|s| !(s.is_empty() && first == b'"'));
    for state in &mut all {
        if state.is_ascii() {
            state.make_ascii_uppercase();
        } else {
            *state = state.to_uppercase();
        }
    }
    Ok(Ok(all))
}

/// A value read as text (see [`Scalar`]).
pub(crate) fn scalar(c: &mut Cursor<'_>) -> Res<Scalar> {
    if c.next_token()? == b'"' {
        return string(c).map(Scalar::Str);
    }
    let (first, start, end) = skip(c)?;
    Ok(if first == b'n' {
        Scalar::Null
    } else if truthy(c.data, first, start, end) {
        Scalar::Other(shown(c.data, start, end))
    } else {
        Scalar::Falsy
    })
}
