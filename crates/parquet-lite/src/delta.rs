//! DELTA_BINARY_PACKED (Parquet Encodings.md): blocks of miniblocks of bit-packed deltas
//! from a per-block minimum. The decoder keeps its place in the page buffer, like the RLE
//! decoder, and wraps in the physical width (INT32 arithmetic wraps at 32 bits, and a
//! UINT_32 column's values are those 32 bits read unsigned).

use crate::error::{corrupt, Result};
use crate::rle::{uleb, unpack_run};

/// The width and signedness decoded values wrap to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wrap {
    Int64,
    Int32,
    UInt32,
}

impl Wrap {
    fn apply(self, v: i64) -> i64 {
        match self {
            Self::Int64 => v,
            Self::Int32 => i64::from(v as i32),
            Self::UInt32 => i64::from(v as u32),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct DeltaDecoder {
    pos: usize,
    end: usize,
    miniblocks: usize,
    per_miniblock: usize,
    /// Values not yet returned (the header's count).
    remaining: usize,
    /// The header's first value, not yet returned.
    first: Option<i64>,
    last: i64,
    min_delta: i64,
    widths: Vec<u8>,
    /// Index of the current miniblock in its block, its base byte and next value index.
    miniblock: usize,
    mini_base: usize,
    mini_next: usize,
    wrap: Wrap,
}

fn zigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

impl DeltaDecoder {
    /// Reads the header at `buf[start..]`; values wrap as `wrap` says.
    pub(crate) fn new(buf: &[u8], start: usize, end: usize, wrap: Wrap) -> Result<Self> {
        let buf = &buf[..end.min(buf.len())];
        let mut pos = start;
        let block_size = uleb(buf, &mut pos)? as usize;
        let miniblocks = uleb(buf, &mut pos)? as usize;
        let count = uleb(buf, &mut pos)? as usize;
        let first = wrap.apply(zigzag(uleb(buf, &mut pos)?));
        if miniblocks == 0 || block_size == 0 || !block_size.is_multiple_of(miniblocks) {
            return corrupt(format!(
                "delta block {block_size} / {miniblocks} miniblocks"
            ));
        }
        let per_miniblock = block_size / miniblocks;
        if !per_miniblock.is_multiple_of(32) {
            return corrupt(format!("delta miniblock of {per_miniblock} values"));
        }
        Ok(Self {
            pos,
            end,
            miniblocks,
            per_miniblock,
            remaining: count,
            first: (count > 0).then_some(first),
            last: first,
            min_delta: 0,
            widths: Vec::new(),
            miniblock: miniblocks, // forces a block header before the first delta
            mini_base: 0,
            mini_next: per_miniblock,
            wrap,
        })
    }

    fn next_miniblock(&mut self, buf: &[u8]) -> Result<()> {
        let buf = &buf[..self.end.min(buf.len())];
        if self.miniblock + 1 >= self.miniblocks {
            // A new block: min delta, then one width byte per miniblock.
            self.min_delta = zigzag(uleb(buf, &mut self.pos)?);
            if self.pos + self.miniblocks > buf.len() {
                return corrupt("delta block header runs past the page");
            }
            self.widths.clear();
            self.widths
                .extend_from_slice(&buf[self.pos..self.pos + self.miniblocks]);
            self.pos += self.miniblocks;
            self.miniblock = 0;
        } else {
            self.miniblock += 1;
        }
        let width = u32::from(self.widths[self.miniblock]);
        if width > 64 {
            return corrupt(format!("delta bit width {width}"));
        }
        self.mini_base = self.pos;
        self.mini_next = 0;
        self.pos += self.per_miniblock * width as usize / 8;
        Ok(())
    }

    /// Values not yet taken.
    pub(crate) fn remaining(&self) -> usize {
        self.remaining
    }

    /// Where the encoded values end, once all are taken (DELTA_LENGTH_BYTE_ARRAY's data
    /// follows them).
    pub(crate) fn end_of_values(&self) -> usize {
        self.pos
    }

    /// Appends the next `n` values (an error if fewer are left).
    pub(crate) fn take(&mut self, buf: &[u8], n: usize, out: &mut Vec<i64>) -> Result<()> {
        if n > self.remaining {
            return corrupt("delta-encoded values end early");
        }
        out.reserve(n);
        let mut need = n;
        if need > 0 {
            if let Some(first) = self.first.take() {
                out.push(first);
                need -= 1;
                self.remaining -= 1;
            }
        }
        while need > 0 {
            if self.mini_next == self.per_miniblock {
                self.next_miniblock(buf)?;
            }
            let width = u32::from(self.widths[self.miniblock]);
            let k = need.min(self.per_miniblock - self.mini_next);
            let bytes = ((self.mini_next + k) * width as usize).div_ceil(8);
            if self.mini_base + bytes > buf.len().min(self.end) {
                return corrupt("delta miniblock runs past the page");
            }
            let (min_delta, wrap, mut last) = (self.min_delta, self.wrap, self.last);
            unpack_run(buf, self.mini_base, width, self.mini_next, k, out, |d| {
                let next = last.wrapping_add(min_delta.wrapping_add(d as i64));
                last = wrap.apply(next);
                last
            });
            self.last = last;
            self.mini_next += k;
            need -= k;
            self.remaining -= k;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example_decodes() {
        // Encodings.md example 1: 1, 2, 3, 4, 5 → block 128, 4 miniblocks, count 5, first 1,
        // min delta 1, widths 0 0 0 0 (no miniblock bytes).
        let buf = [0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0];
        let mut d = DeltaDecoder::new(&buf, 0, buf.len(), Wrap::Int64).unwrap();
        let mut out = Vec::new();
        d.take(&buf, 2, &mut out).unwrap();
        d.take(&buf, 3, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3, 4, 5]);
        assert!(d.take(&buf, 1, &mut out).is_err());
    }

    #[test]
    fn spec_example_two() {
        // 7, 5, 3, 1, 2, 3, 4, 5: deltas -2 -2 -2 1 1 1 1, min -2, packed 0 0 0 3 3 3 3 at
        // width 2 → bytes 0b11000000, 0b00111111.
        let mut buf = vec![0x80, 0x01, 0x04, 0x08, 0x0e, 0x03, 2, 0, 0, 0];
        buf.extend_from_slice(&[0xc0, 0x3f]);
        buf.extend(std::iter::repeat_n(0, 6)); // the rest of the 32-value miniblock
        let mut d = DeltaDecoder::new(&buf, 0, buf.len(), Wrap::Int64).unwrap();
        let mut out = Vec::new();
        d.take(&buf, 8, &mut out).unwrap();
        assert_eq!(out, [7, 5, 3, 1, 2, 3, 4, 5]);
    }
}
