//! The reference JSON parser: recursive descent into a tree with byte spans, strict
//! (RFC 8259, unpaired surrogate escapes rejected), written for clarity not speed.

#[derive(Debug, Clone)]
pub enum V {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

#[derive(Debug, Clone)]
pub struct Node {
    pub v: V,
    pub start: usize,
    pub end: usize,
}

struct P<'a> {
    b: &'a [u8],
    i: usize,
}

type R<T> = Result<T, ()>;

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && b" \n\r\t".contains(&self.b[self.i]) {
            self.i += 1;
        }
    }

    fn at(&self, c: u8) -> bool {
        self.b.get(self.i) == Some(&c)
    }

    fn close(&mut self, close: u8) -> R<bool> {
        self.ws();
        match self.b.get(self.i) {
            Some(b',') => {
                self.i += 1;
                Ok(false)
            }
            Some(&c) if c == close => {
                self.i += 1;
                Ok(true)
            }
            _ => Err(()),
        }
    }

    fn value(&mut self) -> R<Node> {
        self.ws();
        let start = self.i;
        let v = match *self.b.get(self.i).ok_or(())? {
            b'{' => {
                self.i += 1;
                self.ws();
                let mut members = Vec::new();
                if self.at(b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        let key = self.string()?;
                        self.ws();
                        if !self.at(b':') {
                            return Err(());
                        }
                        self.i += 1;
                        members.push((key, self.value()?));
                        if self.close(b'}')? {
                            break;
                        }
                    }
                }
                V::Obj(members)
            }
            b'[' => {
                self.i += 1;
                self.ws();
                let mut items = Vec::new();
                if self.at(b']') {
                    self.i += 1;
                } else {
                    loop {
                        items.push(self.value()?);
                        if self.close(b']')? {
                            break;
                        }
                    }
                }
                V::Arr(items)
            }
            b'"' => V::Str(self.string()?),
            b't' => self.word("true", V::Bool(true))?,
            b'f' => self.word("false", V::Bool(false))?,
            b'n' => self.word("null", V::Null)?,
            _ => V::Num(self.number()?),
        };
        Ok(Node {
            v,
            start,
            end: self.i,
        })
    }

    fn word(&mut self, w: &str, v: V) -> R<V> {
        if self.b[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(())
        }
    }

    fn digits(&mut self) -> usize {
        let d = self.i;
        while self.i < self.b.len() && self.b[self.i].is_ascii_digit() {
            self.i += 1;
        }
        self.i - d
    }

    fn number(&mut self) -> R<String> {
        let s = self.i;
        if self.at(b'-') {
            self.i += 1;
        }
        let first = self.i;
        let n = self.digits();
        if n == 0 || (n > 1 && self.b[first] == b'0') {
            return Err(());
        }
        if self.at(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(());
            }
        }
        if self.at(b'e') || self.at(b'E') {
            self.i += 1;
            if self.at(b'+') || self.at(b'-') {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(());
            }
        }
        Ok(String::from_utf8(self.b[s..self.i].to_vec()).unwrap())
    }

    fn hex(&mut self) -> R<u32> {
        let h = self.b.get(self.i..self.i + 4).ok_or(())?;
        if !h.iter().all(|c| c.is_ascii_hexdigit()) {
            return Err(());
        }
        self.i += 4;
        u32::from_str_radix(std::str::from_utf8(h).unwrap(), 16).map_err(|_| ())
    }

    fn escape(&mut self) -> R<char> {
        let e = *self.b.get(self.i).ok_or(())?;
        self.i += 1;
        Ok(match e {
            b'"' | b'\\' | b'/' => e as char,
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex()?;
                let code = if (0xD800..0xDC00).contains(&hi) {
                    if self.b.get(self.i..self.i + 2) != Some(b"\\u") {
                        return Err(());
                    }
                    self.i += 2;
                    let lo = self.hex()?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return Err(());
                    }
                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                } else {
                    hi
                };
                char::from_u32(code).ok_or(())?
            }
            _ => return Err(()),
        })
    }

    fn string(&mut self) -> R<String> {
        if !self.at(b'"') {
            return Err(());
        }
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = *self.b.get(self.i).ok_or(())?;
            self.i += 1;
            match c {
                b'"' => return String::from_utf8(out).map_err(|_| ()),
                b'\\' => out.extend(self.escape()?.to_string().bytes()),
                0..=0x1f => return Err(()),
                _ => out.push(c),
            }
        }
    }
}

/// Parses a whole document strictly (no trailing data), or `Err`.
pub fn parse(b: &[u8]) -> R<Node> {
    let mut p = P { b, i: 0 };
    let v = p.value()?;
    p.ws();
    if p.i == b.len() {
        Ok(v)
    } else {
        Err(())
    }
}
