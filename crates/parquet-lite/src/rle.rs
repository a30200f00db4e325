//! The RLE / bit-packing hybrid (Parquet Encodings.md): definition and repetition levels
//! and dictionary indices. A decoder keeps its place in a page buffer it does not own, so a
//! page can be consumed a few values at a time.

use crate::error::{corrupt, Result};

/// Reads unsigned LEB128.
pub(crate) fn uleb(buf: &[u8], pos: &mut usize) -> Result<u64> {
    let mut value = 0u64;
    for shift in (0..70).step_by(7) {
        let Some(&b) = buf.get(*pos) else {
            return corrupt("varint runs past the page");
        };
        *pos += 1;
        value |= u64::from(b & 0x7f) << shift.min(63);
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    corrupt("varint longer than 10 bytes")
}

/// Value `i` of a little-endian bit-packed run of `width`-bit values starting at `base`.
#[inline]
pub(crate) fn unpack(buf: &[u8], base: usize, width: u32, i: usize) -> u64 {
    if width == 0 {
        return 0;
    }
    let bit = i * width as usize;
    let start = base + bit / 8;
    let shift = (bit % 8) as u32;
    if width <= 56 {
        // One unaligned 8-byte load holds the value (shift + width <= 63).
        if let Some(bytes) = buf.get(start..start + 8) {
            let word = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
            return (word >> shift) & ((1u64 << width) - 1);
        }
    }
    // Up to 64 + 7 bits, or near the end of the buffer: byte by byte, zero past the end.
    let mut word = 0u128;
    for k in 0..((shift + width).div_ceil(8) as usize) {
        word |= u128::from(buf.get(start + k).copied().unwrap_or(0)) << (8 * k);
    }
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    (word >> shift) as u64 & mask
}

/// Values `first..first + k` of a bit-packed run (see `unpack`), each through `map`,
/// appended to `out`. Whole groups of 8 values (`width` bytes, aligned to a byte) are
/// unpacked together, for widths up to 8 (levels, most dictionary indices) from one load.
/// Gives exactly what `unpack` gives value by value.
#[inline]
pub(crate) fn unpack_run<T: Copy>(
    buf: &[u8],
    base: usize,
    width: u32,
    first: usize,
    k: usize,
    out: &mut Vec<T>,
    mut map: impl FnMut(u64) -> T,
) {
    let end = first + k;
    if width == 0 {
        out.extend((first..end).map(|_| map(0)));
        return;
    }
    let mut i = first;
    if width <= 56 {
        while i < end && !i.is_multiple_of(8) {
            out.push(map(unpack(buf, base, width, i)));
            i += 1;
        }
        let w = width as usize;
        let mask = (1u64 << width) - 1;
        while end - i >= 8 {
            let start = base + i / 8 * w;
            let values: [T; 8] = if w <= 8 {
                let Some(bytes) = buf.get(start..start + 8) else {
                    break; // near the end of the buffer: value by value below
                };
                let word = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
                std::array::from_fn(|j| map((word >> (j * w)) & mask))
            } else {
                // Value j is in the 8 bytes from bit j * w (the last ends before byte w + 7).
                let Some(bytes) = buf.get(start..start + w + 7) else {
                    break;
                };
                std::array::from_fn(|j| {
                    let (at, shift) = (j * w / 8, j * w % 8);
                    let word = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
                    map((word >> shift) & mask)
                })
            };
            out.extend_from_slice(&values);
            i += 8;
        }
    }
    out.extend((i..end).map(|i| map(unpack(buf, base, width, i))));
}

#[derive(Clone, Debug)]
pub(crate) struct RleDecoder {
    pos: usize,
    end: usize,
    width: u32,
    /// Values left in the current run, and for an RLE run its value; for a bit-packed run
    /// the byte where it starts and the index of its next value.
    left: usize,
    repeated: Option<u64>,
    packed_base: usize,
    packed_next: usize,
}

impl RleDecoder {
    /// A decoder of `buf[start..end]` with values of `width` bits.
    pub(crate) fn new(start: usize, end: usize, width: u32) -> Result<Self> {
        if width > 64 {
            return corrupt(format!("bit width {width}"));
        }
        Ok(Self {
            pos: start,
            end,
            width,
            left: 0,
            repeated: None,
            packed_base: 0,
            packed_next: 0,
        })
    }

    fn next_run(&mut self, buf: &[u8]) -> Result<()> {
        let buf = &buf[..self.end.min(buf.len())];
        if self.pos >= buf.len() {
            return corrupt("RLE data ends before its values");
        }
        let header = uleb(buf, &mut self.pos)?;
        if header & 1 == 0 {
            let bytes = self.width.div_ceil(8) as usize;
            if self.pos + bytes > buf.len() {
                return corrupt("RLE run value runs past the page");
            }
            let mut v = 0u64;
            for k in 0..bytes {
                v |= u64::from(buf[self.pos + k]) << (8 * k);
            }
            self.pos += bytes;
            self.left = (header >> 1) as usize;
            self.repeated = Some(v);
        } else {
            let groups = (header >> 1) as usize;
            let bytes = groups * self.width as usize;
            self.packed_base = self.pos;
            self.packed_next = 0;
            // A last run may be cut short by the page end (its padding values are unused).
            self.pos = (self.pos + bytes).min(buf.len());
            self.left = groups * 8;
            self.repeated = None;
        }
        Ok(())
    }

    /// Appends the next `n` values, each through `map`.
    pub(crate) fn take<T: Copy>(
        &mut self,
        buf: &[u8],
        n: usize,
        out: &mut Vec<T>,
        mut map: impl FnMut(u64) -> T,
    ) -> Result<()> {
        let mut need = n;
        out.reserve(n);
        while need > 0 {
            if self.left == 0 {
                self.next_run(buf)?;
                continue;
            }
            let k = need.min(self.left);
            match self.repeated {
                Some(v) => {
                    out.extend(std::iter::repeat_n(map(v), k));
                }
                None => {
                    let (base, first) = (self.packed_base, self.packed_next);
                    unpack_run(buf, base, self.width, first, k, out, &mut map);
                    self.packed_next += k;
                }
            }
            self.left -= k;
            need -= k;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rle_and_bit_packed_runs() {
        // width 3: RLE run of 4 x 5, then one bit-packed group of 8 values 0..7.
        // 0..7 at 3 bits, LSB first: 0b10001000, 0b11000110, 0b11111010.
        let buf = [0x08, 0x05, 0x03, 0x88, 0xc6, 0xfa];
        let mut d = RleDecoder::new(0, buf.len(), 3).unwrap();
        let mut out = Vec::new();
        d.take(&buf, 6, &mut out, |v| v).unwrap();
        d.take(&buf, 6, &mut out, |v| v).unwrap();
        assert_eq!(out, [5, 5, 5, 5, 0, 1, 2, 3, 4, 5, 6, 7]);
        assert!(d.take(&buf, 1, &mut out, |v| v).is_err());
    }

    #[test]
    fn unpack_run_matches_unpack() {
        let buf: Vec<u8> = (0..200).map(|i| (i * 73 + 5) as u8).collect();
        for width in [0u32, 1, 3, 8, 9, 17, 33, 56, 57, 64] {
            for (first, k) in [(0, 16), (3, 21), (8, 8), (5, 2), (0, 150)] {
                if (first + k) * width as usize > 8 * buf.len() + 64 {
                    continue;
                }
                let mut got = Vec::new();
                unpack_run(&buf, 7, width, first, k, &mut got, |v| v);
                let want: Vec<u64> = (first..first + k)
                    .map(|i| unpack(&buf, 7, width, i))
                    .collect();
                assert_eq!(got, want, "width {width} values {first}+{k}");
            }
        }
    }

    #[test]
    fn unpack_wide_values() {
        let buf: Vec<u8> = (0..40).map(|i| (i * 37 + 11) as u8).collect();
        for width in [1u32, 7, 13, 32, 33, 63, 64] {
            for i in 0..4 {
                let bit = i * width as usize;
                let mut expect = 0u64;
                for b in 0..width as usize {
                    let at = bit + b;
                    expect |= u64::from((buf[at / 8] >> (at % 8)) & 1) << b;
                }
                assert_eq!(unpack(&buf, 0, width, i), expect, "width {width} value {i}");
            }
        }
    }
}
