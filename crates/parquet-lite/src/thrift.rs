//! The Thrift compact protocol (github.com/apache/thrift, doc/specs/thrift-compact-protocol.md),
//! read-only: what Parquet's footer and page headers are encoded in. Structs are read field
//! by field; a caller handles the fields it knows and skips the others.

use crate::error::{corrupt, Result};

/// Compact-protocol type ids.
pub(crate) const BOOL_TRUE: u8 = 1;
pub(crate) const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;

/// Nesting deeper than this is not Parquet metadata: refuse instead of recursing on.
const MAX_DEPTH: u32 = 64;

pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    pub(crate) fn byte(&mut self) -> Result<u8> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => corrupt("Thrift data ends early"),
        }
    }

    pub(crate) fn varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift.min(63);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        corrupt("Thrift varint longer than 10 bytes")
    }

    pub(crate) fn i64(&mut self) -> Result<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    pub(crate) fn i32(&mut self) -> Result<i32> {
        let v = self.i64()?;
        i32::try_from(v).or_else(|_| corrupt(format!("Thrift i32 out of range: {v}")))
    }

    pub(crate) fn binary(&mut self) -> Result<&'a [u8]> {
        let len = self.varint()? as usize;
        let end = self.pos.checked_add(len).filter(|&e| e <= self.data.len());
        let Some(end) = end else {
            return corrupt("Thrift string runs past the end");
        };
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    pub(crate) fn string(&mut self) -> Result<String> {
        Ok(String::from_utf8_lossy(self.binary()?).into_owned())
    }

    /// A list header: (element type, count).
    pub(crate) fn list_header(&mut self) -> Result<(u8, usize)> {
        let head = self.byte()?;
        let mut size = usize::from(head >> 4);
        if size == 15 {
            size = self.varint()? as usize;
        }
        if size > self.data.len() {
            return corrupt(format!(
                "Thrift list of {size} elements in a smaller buffer"
            ));
        }
        Ok((head & 0x0f, size))
    }

    /// Reads a struct: calls `field(reader, id, type)` for every field; the callback reads
    /// the value or calls `skip`.
    pub(crate) fn read_struct(
        &mut self,
        mut field: impl FnMut(&mut Self, i16, u8) -> Result<()>,
    ) -> Result<()> {
        let mut last: i16 = 0;
        loop {
            let head = self.byte()?;
            if head == 0 {
                return Ok(());
            }
            let kind = head & 0x0f;
            let delta = head >> 4;
            let id = if delta == 0 {
                i16::try_from(self.i64()?).or_else(|_| corrupt("Thrift field id"))?
            } else {
                last.wrapping_add(i16::from(delta))
            };
            last = id;
            field(self, id, kind)?;
        }
    }

    /// A bool field's value is in its type id.
    pub(crate) fn bool_of(kind: u8) -> bool {
        kind == BOOL_TRUE
    }

    /// Skips a value of compact type `kind`.
    pub(crate) fn skip(&mut self, kind: u8) -> Result<()> {
        self.skip_at(kind, 0)
    }

    fn skip_at(&mut self, kind: u8, depth: u32) -> Result<()> {
        if depth > MAX_DEPTH {
            return corrupt("Thrift nesting too deep");
        }
        match kind {
            BOOL_TRUE | BOOL_FALSE => {}
            BYTE => {
                self.byte()?;
            }
            I16 | I32 | I64 => {
                self.varint()?;
            }
            DOUBLE => {
                if self.pos + 8 > self.data.len() {
                    return corrupt("Thrift double runs past the end");
                }
                self.pos += 8;
            }
            BINARY => {
                self.binary()?;
            }
            LIST | SET => {
                let (elem, n) = self.list_header()?;
                for _ in 0..n {
                    if elem == BOOL_TRUE || elem == BOOL_FALSE {
                        self.byte()?; // list booleans take a byte each
                    } else {
                        self.skip_at(elem, depth + 1)?;
                    }
                }
            }
            MAP => {
                let n = self.varint()? as usize;
                if n > 0 {
                    let types = self.byte()?;
                    for _ in 0..n {
                        self.skip_at(types >> 4, depth + 1)?;
                        self.skip_at(types & 0x0f, depth + 1)?;
                    }
                }
            }
            STRUCT => {
                let mut last: i16 = 0;
                loop {
                    let head = self.byte()?;
                    if head == 0 {
                        break;
                    }
                    if head >> 4 == 0 {
                        last = i16::try_from(self.i64()?).or_else(|_| corrupt("field id"))?;
                    } else {
                        last = last.wrapping_add(i16::from(head >> 4));
                    }
                    let _ = last;
                    self.skip_at(head & 0x0f, depth + 1)?;
                }
            }
            other => return corrupt(format!("unknown Thrift type {other}")),
        }
        Ok(())
    }

    /// Reads a list of structs with `each` per element.
    pub(crate) fn read_list<T>(
        &mut self,
        mut each: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let (_, n) = self.list_header()?;
        let mut out = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            out.push(each(self)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_varints_and_field_deltas() {
        // struct { 1: i32 = -3, 3: binary = "ab", 20: i64 = 300 } STOP
        let data = [
            0x15, 0x05, // field 1, i32, zigzag(-3) = 5
            0x28, 0x02, b'a', b'b', // delta 2 → field 3, binary len 2
            0x06, 0x22, 0xd8, 0x04, // delta 0, i64, id zigzag 34 → 17?, value
            0x00,
        ];
        let mut r = Reader::new(&data);
        let mut seen = Vec::new();
        r.read_struct(|r, id, kind| {
            match (id, kind) {
                (1, I32) => seen.push(format!("1={}", r.i32()?)),
                (3, BINARY) => seen.push(format!("3={}", r.string()?)),
                (17, I64) => seen.push(format!("17={}", r.i64()?)),
                _ => r.skip(kind)?,
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, ["1=-3", "3=ab", "17=300"]);
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        let data = [0x15];
        let mut r = Reader::new(&data);
        assert!(r.read_struct(|r, _, k| r.skip(k)).is_err());
        let mut r = Reader::new(&[0x19, 0xf9]); // list of huge size
        assert!(r.read_struct(|r, _, k| r.skip(k)).is_err());
    }
}
