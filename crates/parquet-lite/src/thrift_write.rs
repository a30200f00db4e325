//! Writing the Thrift compact protocol (the footer and page headers): structs as fields in
//! increasing id order, each with a one-byte header carrying the id delta and the type.

pub(crate) const BOOL_TRUE: u8 = 1;
pub(crate) const I32: u8 = 5;
pub(crate) const I64: u8 = 6;
pub(crate) const BINARY: u8 = 8;
pub(crate) const LIST: u8 = 9;
pub(crate) const STRUCT: u8 = 12;

pub(crate) fn uleb(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// One struct being written (nested structs get their own `Struct`).
pub(crate) struct Struct<'a> {
    out: &'a mut Vec<u8>,
    last: i16,
}

impl<'a> Struct<'a> {
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        Self { out, last: 0 }
    }

    fn header(&mut self, id: i16, kind: u8) {
        let delta = id - self.last;
        if (1..=15).contains(&delta) {
            self.out.push(((delta as u8) << 4) | kind);
        } else {
            self.out.push(kind);
            uleb(self.out, zigzag(i64::from(id)));
        }
        self.last = id;
    }

    pub(crate) fn i32(&mut self, id: i16, v: i32) -> &mut Self {
        self.header(id, I32);
        uleb(self.out, zigzag(i64::from(v)));
        self
    }

    pub(crate) fn i64(&mut self, id: i16, v: i64) -> &mut Self {
        self.header(id, I64);
        uleb(self.out, zigzag(v));
        self
    }

    pub(crate) fn binary(&mut self, id: i16, v: &[u8]) -> &mut Self {
        self.header(id, BINARY);
        uleb(self.out, v.len() as u64);
        self.out.extend_from_slice(v);
        self
    }

    pub(crate) fn byte(&mut self, id: i16, v: i8) -> &mut Self {
        self.header(id, 3);
        self.out.push(v as u8);
        self
    }

    pub(crate) fn boolean(&mut self, id: i16, v: bool) -> &mut Self {
        self.header(id, if v { BOOL_TRUE } else { 2 });
        self
    }

    /// A nested struct written by `f`.
    pub(crate) fn structure(&mut self, id: i16, f: impl FnOnce(&mut Struct<'_>)) -> &mut Self {
        self.header(id, STRUCT);
        let mut inner = Struct::new(self.out);
        f(&mut inner);
        inner.end();
        self
    }

    /// A list of `n` elements of `kind`, each written by `each(out, i)`.
    pub(crate) fn list(
        &mut self,
        id: i16,
        kind: u8,
        n: usize,
        mut each: impl FnMut(&mut Vec<u8>, usize),
    ) -> &mut Self {
        self.header(id, LIST);
        if n < 15 {
            self.out.push(((n as u8) << 4) | kind);
        } else {
            self.out.push(0xf0 | kind);
            uleb(self.out, n as u64);
        }
        for i in 0..n {
            each(self.out, i);
        }
        self
    }

    pub(crate) fn end(self) {
        self.out.push(0);
    }
}

/// A list element that is a struct written by `f`.
pub(crate) fn element(out: &mut Vec<u8>, f: impl FnOnce(&mut Struct<'_>)) {
    let mut s = Struct::new(out);
    f(&mut s);
    s.end();
}
