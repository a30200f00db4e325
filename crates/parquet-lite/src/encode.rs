//! Encoders of Parquet Encodings.md, the inverses of rle.rs and delta.rs: the RLE /
//! bit-packing hybrid (levels, dictionary indices) and DELTA_BINARY_PACKED.

use crate::thrift_write::{uleb, zigzag};

/// Bits needed for values up to `max`.
pub(crate) fn width_of(max: u64) -> u32 {
    u64::BITS - max.leading_zeros()
}

/// Appends `values` bit-packed little-endian at `width` bits each (a whole number of bytes:
/// `values.len() * width` must be a multiple of 8).
fn pack(out: &mut Vec<u8>, mut values: &[u64], width: u32) {
    if width <= 8 {
        // Eight values of up to 8 bits fill `width` bytes of one u64 (levels and most
        // dictionary indices): a shift and an or a value, where u128 shifts cost several.
        let mut groups = values.chunks_exact(8);
        for group in &mut groups {
            let mut acc = 0u64;
            for (k, &v) in group.iter().enumerate() {
                acc |= v << (k as u32 * width);
            }
            // All 8 bytes and a cut: a fixed-size copy is one store, a `width`-byte one a
            // memcpy call.
            out.extend_from_slice(&acc.to_le_bytes());
            out.truncate(out.len() - (8 - width as usize));
        }
        values = groups.remainder();
    } else if width <= 16 {
        // Eight values of up to 16 bits fill `width` bytes of one u128.
        let mut groups = values.chunks_exact(8);
        for group in &mut groups {
            let mut acc: u128 = 0;
            for (k, &v) in group.iter().enumerate() {
                acc |= u128::from(v) << (k as u32 * width);
            }
            out.extend_from_slice(&acc.to_le_bytes()[..width as usize]);
        }
        values = groups.remainder();
    }
    // Wider values (delta-encoded times) go out 8 bytes at a time: a byte at a time cost
    // ~10 instructions a byte, 4.6 % of a TiT conversion.
    let mut acc: u128 = 0;
    let mut bits = 0u32;
    for &v in values {
        acc |= u128::from(v) << bits;
        bits += width;
        if bits >= 64 {
            out.extend_from_slice(&(acc as u64).to_le_bytes());
            acc >>= 64;
            bits -= 64;
        }
    }
    debug_assert_eq!(bits % 8, 0, "packed runs are whole bytes");
    out.extend_from_slice(&acc.to_le_bytes()[..(bits / 8) as usize]);
}

/// The RLE / bit-packing hybrid of `values` at `width` bits: runs of 8 or more equal values
/// as RLE runs, the rest bit-packed in groups of 8 (the last group padded with zeros; a
/// reader takes only as many values as it was told).
pub(crate) fn rle_hybrid(out: &mut Vec<u8>, values: &[u64], width: u32) {
    let bytes = width.div_ceil(8) as usize;
    // The values from `literal` to `i` are bit-packed, a contiguous slice of `values`: no
    // copying of short runs (levels and dictionary indices are mostly short runs).
    let (mut literal, mut i) = (0, 0);
    while i < values.len() {
        let v = values[i];
        // A run worth a header has 8 values or more: one comparison rejects most
        // positions. Stepping one value into a shorter run encodes the same: a run entered
        // k values in is k shorter and needs at most k fewer values to fill the groups
        // before it, so it qualifies only if it did from its start.
        if values.get(i + 7) != Some(&v) {
            // Nor does one start in the next 7 values unless the values 7 and 8 on are
            // equal (such a run covers both): most positions of short runs skip 8.
            let next = values.get(i + 8);
            i += if next.is_some_and(|w| w != &values[i + 7]) {
                8
            } else {
                1
            };
            continue;
        }
        let run = values[i..].iter().take_while(|&&x| x == v).count();
        // A run is worth an RLE header from 8 values, once the literal groups before it
        // are whole (padding them would insert values): they are filled from the run first.
        let fill = (8 - (i - literal) % 8) % 8;
        if run >= fill + 8 {
            bit_packed(out, &values[literal..i + fill], width);
            uleb(out, ((run - fill) as u64) << 1);
            out.extend_from_slice(&v.to_le_bytes()[..bytes]);
            literal = i + run;
        }
        i += run;
    }
    bit_packed(out, &values[literal..], width);
}

/// A bit-packed run of `values` (none for no values), its last group padded with zeros.
fn bit_packed(out: &mut Vec<u8>, values: &[u64], width: u32) {
    if values.is_empty() {
        return;
    }
    uleb(out, (values.len().div_ceil(8) as u64) << 1 | 1);
    let whole = values.len() / 8 * 8;
    pack(out, &values[..whole], width);
    if whole < values.len() {
        let mut last = [0u64; 8];
        last[..values.len() - whole].copy_from_slice(&values[whole..]);
        pack(out, &last, width);
    }
}

const BLOCK: usize = 128;
const MINIBLOCKS: usize = 4;
const PER_MINIBLOCK: usize = BLOCK / MINIBLOCKS;

/// DELTA_BINARY_PACKED of `values`; `bits32` for INT32 columns (deltas wrap at 32 bits, as
/// readers reconstruct them).
pub(crate) fn delta(out: &mut Vec<u8>, values: &[i64], bits32: bool) {
    uleb(out, BLOCK as u64);
    uleb(out, MINIBLOCKS as u64);
    uleb(out, values.len() as u64);
    uleb(out, zigzag(values.first().copied().unwrap_or(0)));
    let wrap = |d: i64| if bits32 { i64::from(d as i32) } else { d };
    let deltas: Vec<i64> = values
        .windows(2)
        .map(|w| wrap(w[1].wrapping_sub(w[0])))
        .collect();
    let mut packed = [0u64; PER_MINIBLOCK];
    for block in deltas.chunks(BLOCK) {
        let min = block.iter().copied().min().unwrap_or(0);
        uleb(out, zigzag(min));
        let rel = |d: i64| {
            let r = d.wrapping_sub(min) as u64;
            if bits32 {
                r & 0xffff_ffff
            } else {
                r
            }
        };
        let mut widths = [0u32; MINIBLOCKS]; // (0 for miniblocks past the values)
        for (w, mb) in widths.iter_mut().zip(block.chunks(PER_MINIBLOCK)) {
            *w = width_of(mb.iter().map(|&d| rel(d)).max().unwrap_or(0));
        }
        out.extend(widths.iter().map(|&w| w as u8));
        for (m, mb) in block.chunks(PER_MINIBLOCK).enumerate() {
            packed.fill(0);
            for (k, &d) in mb.iter().enumerate() {
                packed[k] = rel(d);
            }
            pack(out, &packed, widths[m]); // padded to a full miniblock
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta::{DeltaDecoder, Wrap};
    use crate::rle::RleDecoder;

    fn xorshift(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn rle_hybrid_round_trips() {
        let mut seed = 7u64;
        for case in 0..300 {
            let n = (xorshift(&mut seed) % 300) as usize;
            let width = (case % 20) as u32 + 1;
            let mask = if width == 64 {
                u64::MAX
            } else {
                (1 << width) - 1
            };
            let mut values = Vec::new();
            while values.len() < n {
                let v = xorshift(&mut seed) & mask;
                let run = 1 + (xorshift(&mut seed) % 20) as usize;
                values.extend(std::iter::repeat_n(v, run.min(n - values.len())));
            }
            let mut buf = Vec::new();
            rle_hybrid(&mut buf, &values, width);
            let mut d = RleDecoder::new(0, buf.len(), width).unwrap();
            let mut back = Vec::new();
            d.take(&buf, n, &mut back, |v| v).unwrap();
            assert_eq!(back, values, "case {case}");
        }
    }

    #[test]
    fn uint32_values_read_back_unsigned() {
        // A UINT_32 column is INT32 on disk: 2^31 and 2^32 - 1 are stored as -2^31 and -1.
        let values: Vec<u32> = (0..70).map(|i| [1 << 31, 1, u32::MAX, 5][i % 4]).collect();
        let stored: Vec<i64> = values.iter().map(|&v| i64::from(v as i32)).collect();
        let mut buf = Vec::new();
        delta(&mut buf, &stored, true);
        let mut d = DeltaDecoder::new(&buf, 0, buf.len(), Wrap::UInt32).unwrap();
        let mut out = Vec::new();
        d.take(&buf, values.len(), &mut out).unwrap();
        assert_eq!(
            out,
            values.iter().map(|&v| i64::from(v)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn delta_round_trips_in_both_widths() {
        let mut seed = 11u64;
        for case in 0..200 {
            let n = (xorshift(&mut seed) % 700) as usize;
            let bits32 = case % 2 == 0;
            let values: Vec<i64> = (0..n)
                .map(|i| {
                    let v = match case % 4 {
                        0 => i as i64 * 3,
                        1 => xorshift(&mut seed) as i64,
                        _ => (xorshift(&mut seed) % 1000) as i64 - 500,
                    };
                    if bits32 {
                        i64::from(v as i32)
                    } else {
                        v
                    }
                })
                .collect();
            let mut buf = Vec::new();
            delta(&mut buf, &values, bits32);
            let wrap = if bits32 { Wrap::Int32 } else { Wrap::Int64 };
            let mut d = DeltaDecoder::new(&buf, 0, buf.len(), wrap).unwrap();
            let mut back = Vec::new();
            d.take(&buf, n, &mut back).unwrap();
            assert_eq!(back, values, "case {case}");
        }
    }
}
