//! A bounds-checked reader over the bytes of one OTF2 file, decoding OTF2's basic
//! encodings (OTF2 source: src/OTF2_Buffer.h, OTF2_Buffer.c, the `OTF2_Buffer_Read*`
//! functions): fixed-size integers in the file's byte order, the compressed integers
//! (a length byte, then that many low-order bytes; the length byte 0xFF alone means
//! "undefined", all bits set), NUL-terminated strings and record lengths. Every read
//! checks the bytes it needs; none allocates.

use super::error::Otf2Error;

/// The byte order a chunk header declares (OTF2_Buffer.h, `OTF2_EndiannessMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    Little,
    Big,
}

impl ByteOrder {
    /// 0x42 little endian, 0x23 big endian (OTF2_Buffer.h).
    pub fn from_marker(marker: u8) -> Option<ByteOrder> {
        match marker {
            0x42 => Some(ByteOrder::Little),
            0x23 => Some(ByteOrder::Big),
            _ => None,
        }
    }
}

/// A position in one file's bytes. `end` may stop short of the file's end: a record's
/// fields are read by a cursor ending where the record does.
#[derive(Debug)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    end: usize,
    pub order: ByteOrder,
    file: &'a str,
}

impl<'a> Cursor<'a> {
    pub fn new(file: &'a str, bytes: &'a [u8]) -> Cursor<'a> {
        Cursor {
            bytes,
            pos: 0,
            end: bytes.len(),
            order: ByteOrder::Little,
            file,
        }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.end - self.pos
    }

    /// The error at the current position.
    pub fn error(&self, what: impl Into<String>) -> Otf2Error {
        self.error_at(self.pos, what)
    }

    pub fn error_at(&self, offset: usize, what: impl Into<String>) -> Otf2Error {
        Otf2Error::new(self.file, offset, what)
    }

    /// Moves to `pos` of the file, with reading limited to `end`; both within the file.
    pub fn seek(&mut self, pos: usize, end: usize) -> Result<(), Otf2Error> {
        if pos > end || end > self.bytes.len() {
            return Err(self.error(format!(
                "position {pos} beyond the file's {} bytes",
                self.bytes.len()
            )));
        }
        self.pos = pos;
        self.end = end;
        Ok(())
    }

    /// A cursor over the next `len` bytes, which this cursor skips.
    pub fn sub(&mut self, len: u64, what: &str) -> Result<Cursor<'a>, Otf2Error> {
        let len = self.need(len, what)?;
        let sub = Cursor {
            bytes: self.bytes,
            pos: self.pos,
            end: self.pos + len,
            order: self.order,
            file: self.file,
        };
        self.pos += len;
        Ok(sub)
    }

    /// `len` as usize once that many bytes remain.
    fn need(&self, len: u64, what: &str) -> Result<usize, Otf2Error> {
        match usize::try_from(len) {
            Ok(n) if n <= self.remaining() => Ok(n),
            _ => Err(self.error(format!(
                "{what}: needs {len} bytes, {} left",
                self.remaining()
            ))),
        }
    }

    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8], Otf2Error> {
        let n = self.need(len as u64, what)?;
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn u8(&mut self, what: &str) -> Result<u8, Otf2Error> {
        Ok(self.take(1, what)?[0])
    }

    /// A value of `bytes.len()` bytes in the file's order.
    fn assemble(&self, bytes: &[u8]) -> u64 {
        let fold = |acc: u64, b: &u8| (acc << 8) | u64::from(*b);
        match self.order {
            ByteOrder::Little => bytes.iter().rev().fold(0, fold),
            ByteOrder::Big => bytes.iter().fold(0, fold),
        }
    }

    /// An uncompressed ("Full") 32-bit integer.
    pub fn u32_full(&mut self, what: &str) -> Result<u32, Otf2Error> {
        let b = self.take(4, what)?;
        Ok(self.assemble(b) as u32)
    }

    /// An uncompressed ("Full") 64-bit integer: timestamps, chunk header counters.
    pub fn u64_full(&mut self, what: &str) -> Result<u64, Otf2Error> {
        let b = self.take(8, what)?;
        Ok(self.assemble(b))
    }

    /// A compressed integer of at most `width` bytes (OTF2_Buffer_ReadUint32/64): the
    /// length byte, 0xFF meaning all bits set, more than `width` an error. The bytes
    /// kept are the value's low-order ones, in the file's order.
    fn compressed(&mut self, width: u8, what: &str) -> Result<u64, Otf2Error> {
        let at = self.pos;
        let len = self.u8(what)?;
        if len == 0xFF {
            return Ok(if width == 4 {
                u64::from(u32::MAX)
            } else {
                u64::MAX
            });
        }
        if len > width {
            return Err(self.error_at(
                at,
                format!("{what}: compressed length {len} exceeds {width} bytes"),
            ));
        }
        let b = self.take(usize::from(len), what)?;
        Ok(self.assemble(b))
    }

    pub fn u32(&mut self, what: &str) -> Result<u32, Otf2Error> {
        Ok(self.compressed(4, what)? as u32)
    }

    pub fn u64(&mut self, what: &str) -> Result<u64, Otf2Error> {
        self.compressed(8, what)
    }

    /// A compressed signed 64-bit integer (OTF2_Buffer_ReadInt64): negative values are
    /// always written in full 8 bytes, so the bytes read are the two's complement.
    pub fn i64(&mut self, what: &str) -> Result<i64, Otf2Error> {
        let at = self.pos;
        let len = self.u8(what)?;
        if len > 8 {
            return Err(self.error_at(
                at,
                format!("{what}: compressed length {len} exceeds 8 bytes"),
            ));
        }
        let b = self.take(usize::from(len), what)?;
        Ok(self.assemble(b) as i64)
    }

    /// A NUL-terminated string (OTF2_Buffer_ReadString); invalid UTF-8 is replaced.
    pub fn string(&mut self, what: &str) -> Result<String, Otf2Error> {
        let rest = &self.bytes[self.pos..self.end];
        let Some(nul) = rest.iter().position(|&b| b == 0) else {
            return Err(self.error(format!("{what}: string without its terminating NUL")));
        };
        self.pos += nul + 1;
        Ok(String::from_utf8_lossy(&rest[..nul]).into_owned())
    }

    /// A record's length (OTF2_Buffer_GuaranteeRecord): one byte, or 0xFF and the length
    /// in the following 8 bytes; the record's bytes must follow in full.
    pub fn record(&mut self, what: &str) -> Result<Cursor<'a>, Otf2Error> {
        let len = match self.u8(what)? {
            0xFF => self.u64_full(what)?,
            n => u64::from(n),
        };
        self.sub(len, what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_integers_follow_otf2s_encoding() {
        // 0; 0xFF alone = undefined; 1 byte 0x07; 4 bytes 1e9 (little endian).
        let bytes = [0x00, 0xFF, 0x01, 0x07, 0x04, 0x00, 0xCA, 0x9A, 0x3B];
        let mut c = Cursor::new("f", &bytes);
        assert_eq!(c.u32("a").unwrap(), 0);
        assert_eq!(c.u32("b").unwrap(), u32::MAX);
        assert_eq!(c.u64("c").unwrap(), 7);
        assert_eq!(c.u64("d").unwrap(), 1_000_000_000);
        assert_eq!(c.remaining(), 0);
    }

    #[test]
    fn big_endian_keeps_the_low_order_bytes_last() {
        let bytes = [0x02, 0x01, 0x02];
        let mut c = Cursor::new("f", &bytes);
        c.order = ByteOrder::Big;
        assert_eq!(c.u32("v").unwrap(), 0x0102);
    }

    #[test]
    fn damaged_lengths_are_errors_with_their_offset() {
        let mut c = Cursor::new("f", &[0x05, 0, 0, 0, 0, 0]);
        let e = c.u32("region").unwrap_err();
        assert_eq!(
            (e.offset, e.what.as_str()),
            (0, "region: compressed length 5 exceeds 4 bytes")
        );
        let mut c = Cursor::new("f", &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]);
        assert!(c.record("record").unwrap_err().what.contains("needs"));
        let mut c = Cursor::new("f", b"no nul");
        assert!(c.string("s").is_err());
    }
}
