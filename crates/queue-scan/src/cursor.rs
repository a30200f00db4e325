//! A validating JSON cursor over bytes: whitespace, strings, numbers and literals, and a
//! fast skip of whole values (no recursion, no allocation). Strings and whitespace are
//! scanned 16 bytes at a time (see `block`).

use crate::block::{non_blank, string_stops, BLOCK};
use crate::error::{fault, ErrorKind, Res};
use crate::escape::decode_escape;
use crate::MAX_DEPTH;

/// A number's grammar facts that the field readers need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NumberInfo {
    /// No fraction and no exponent.
    pub integer: bool,
    /// Every mantissa digit is 0 (the value is zero, so falsy).
    pub zero: bool,
}

/// Open containers of a skipped value, one bit each (1 = object), without allocating.
struct Nesting {
    bits: [u64; MAX_DEPTH / 64],
    depth: usize,
}

impl Nesting {
    fn push(&mut self, object: bool, offset: usize) -> Res<()> {
        if self.depth == MAX_DEPTH {
            return fault(ErrorKind::TooDeep, offset);
        }
        let (word, bit) = (self.depth / 64, self.depth % 64);
        self.bits[word] = (self.bits[word] & !(1 << bit)) | (u64::from(object) << bit);
        self.depth += 1;
        Ok(())
    }

    fn top_is_object(&self) -> bool {
        let d = self.depth - 1;
        self.bits[d / 64] >> (d % 64) & 1 == 1
    }
}

pub(crate) struct Cursor<'a> {
    pub data: &'a [u8],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    #[inline(always)]
    pub fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    #[inline(always)]
    fn block(&self, at: usize) -> Option<&'a [u8; BLOCK]> {
        self.data.get(at..at + BLOCK)?.try_into().ok()
    }

    /// Skips whitespace. Pretty-printed output has a newline and an indent before every
    /// member: whitespace runs are skipped a word at a time, and a non-blank next byte (the
    /// most common case) returns at once.
    #[inline(always)]
    pub fn ws(&mut self) {
        match self.peek() {
            Some(b) if b > b' ' => {}
            Some(_) => self.ws_run(),
            None => {}
        }
    }

    fn ws_run(&mut self) {
        while let Some(block) = self.block(self.pos) {
            let other = non_blank(block);
            if other != 0 {
                self.pos += other.trailing_zeros() as usize;
                return;
            }
            self.pos += BLOCK;
        }
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.pos += 1;
        }
    }

    /// Whitespace, then the next byte (which is not consumed); the end is an error.
    #[inline(always)]
    pub fn next_token(&mut self) -> Res<u8> {
        self.ws();
        match self.peek() {
            Some(b) => Ok(b),
            None => fault(ErrorKind::UnexpectedEnd, self.pos),
        }
    }

    /// Whitespace, then `byte` (consumed) or an error saying `what` was expected.
    #[inline(always)]
    pub fn expect(&mut self, byte: u8, what: &'static str) -> Res<()> {
        let found = self.next_token()?;
        if found != byte {
            return fault(ErrorKind::Expected { what, found }, self.pos);
        }
        self.pos += 1;
        Ok(())
    }

    /// Skips the string at the cursor (which is at its opening quote); validates escapes.
    /// Returns whether it held any escape.
    #[inline(always)]
    pub fn skip_string(&mut self) -> Res<bool> {
        let start = self.pos;
        self.pos += 1;
        let mut escaped = false;
        loop {
            while let Some(block) = self.block(self.pos) {
                let stops = string_stops(block);
                if stops != 0 {
                    self.pos += stops.trailing_zeros() as usize;
                    break;
                }
                self.pos += BLOCK;
            }
            match self.peek() {
                None => return fault(ErrorKind::UnterminatedString, start),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(escaped);
                }
                Some(b'\\') => {
                    escaped = true;
                    self.pos = decode_escape(self.data, self.pos)?.1;
                }
                Some(b) if b < 0x20 => return fault(ErrorKind::ControlInString(b), self.pos),
                Some(_) => self.pos += 1,
            }
        }
    }

    /// Consumes `word` (`true`, `false` or `null`) at the cursor.
    pub fn literal(&mut self, word: &[u8]) -> Res<()> {
        let rest = &self.data[self.pos..];
        if rest.starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else if word.starts_with(rest) {
            fault(ErrorKind::UnexpectedEnd, self.data.len())
        } else {
            fault(ErrorKind::BadLiteral, self.pos)
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    /// Consumes a number at the cursor: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    pub fn number(&mut self) -> Res<NumberInfo> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        let int_digits = self.digits();
        let bad = |c: &Self| {
            let kind = if c.pos == c.data.len() {
                ErrorKind::UnexpectedEnd
            } else {
                ErrorKind::BadNumber
            };
            fault(kind, start)
        };
        if int_digits == 0 || (int_digits > 1 && self.data[int_start] == b'0') {
            return bad(self);
        }
        let mut zero = self.data[int_start..self.pos].iter().all(|&b| b == b'0');
        let mut integer = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            let frac_start = self.pos;
            if self.digits() == 0 {
                return bad(self);
            }
            zero &= self.data[frac_start..self.pos].iter().all(|&b| b == b'0');
            integer = false;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return bad(self);
            }
            integer = false;
        }
        Ok(NumberInfo { integer, zero })
    }

    /// Checks that an object key starts at the cursor (after optional whitespace).
    #[inline(always)]
    pub(crate) fn at_key(&mut self) -> Res<()> {
        match self.next_token()? {
            b'"' => Ok(()),
            found => fault(
                ErrorKind::Expected {
                    what: "a string key",
                    found,
                },
                self.pos,
            ),
        }
    }

    /// Consumes `"key"` then `:`, with whitespace around; the cursor is before the key.
    #[inline(always)]
    fn key_colon(&mut self) -> Res<()> {
        self.at_key()?;
        self.skip_string()?;
        self.expect(b':', "':'")
    }

    /// Skips one whole value at the cursor (after optional whitespace), validating it.
    #[inline(always)]
    pub fn skip_value(&mut self) -> Res<()> {
        match self.next_token()? {
            b'"' => self.skip_string().map(|_| ()),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number().map(|_| ()),
            b'{' | b'[' => self.skip_container(),
            found => fault(
                ErrorKind::Expected {
                    what: "a value",
                    found,
                },
                self.pos,
            ),
        }
    }

    /// Skips the object or array at the cursor, tracking open containers in a bit stack.
    #[inline(never)]
    fn skip_container(&mut self) -> Res<()> {
        let mut open = Nesting {
            bits: [0; MAX_DEPTH / 64],
            depth: 0,
        };
        'value: loop {
            match self.next_token()? {
                b'"' => {
                    self.skip_string()?;
                }
                b'{' => {
                    self.pos += 1;
                    if self.next_token()? == b'}' {
                        self.pos += 1;
                    } else {
                        open.push(true, self.pos)?;
                        self.key_colon()?;
                        continue 'value;
                    }
                }
                b'[' => {
                    self.pos += 1;
                    if self.next_token()? == b']' {
                        self.pos += 1;
                    } else {
                        open.push(false, self.pos)?;
                        continue 'value;
                    }
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                b'-' | b'0'..=b'9' => {
                    self.number()?;
                }
                found => {
                    return fault(
                        ErrorKind::Expected {
                            what: "a value",
                            found,
                        },
                        self.pos,
                    )
                }
            }
            // A value is complete: close containers until one continues or none is open.
            while open.depth > 0 {
                let object = open.top_is_object();
                match self.next_token()? {
                    b',' => {
                        self.pos += 1;
                        if object {
                            self.key_colon()?;
                        }
                        continue 'value;
                    }
                    b'}' if object => {}
                    b']' if !object => {}
                    found => {
                        let what = if object { "',' or '}'" } else { "',' or ']'" };
                        return fault(ErrorKind::Expected { what, found }, self.pos);
                    }
                }
                self.pos += 1;
                open.depth -= 1;
            }
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_the_grammar() {
        let info = |s: &str| Cursor::new(s.as_bytes()).number();
        assert_eq!(
            info("0").unwrap(),
            NumberInfo {
                integer: true,
                zero: true
            }
        );
        assert_eq!(
            info("-0.00e7").unwrap(),
            NumberInfo {
                integer: false,
                zero: true
            }
        );
        assert_eq!(
            info("120").unwrap(),
            NumberInfo {
                integer: true,
                zero: false
            }
        );
        for bad in ["01", "1.", "-", "1e", "1e+", ".5", "-x"] {
            assert!(info(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn skip_stops_after_one_value() {
        let mut c = Cursor::new(br#" {"a": [1, {"b": "x\"y"}, [], {}], "c": null} ,"#);
        c.skip_value().unwrap();
        assert_eq!(&c.data[c.pos..], b" ,");
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "[".repeat(MAX_DEPTH + 2);
        let err = Cursor::new(deep.as_bytes()).skip_value().unwrap_err();
        assert_eq!(err.kind, ErrorKind::TooDeep);
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        Cursor::new(ok.as_bytes()).skip_value().unwrap();
    }
}
