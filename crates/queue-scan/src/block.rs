//! Classifies 16 bytes at once: which bytes end a string's plain run, which are not JSON
//! whitespace. One bit per byte (bit i = byte i). SSE2 on x86_64 (always present there);
//! elsewhere the same masks from SWAR arithmetic on two u64 words.

/// Bytes per block.
pub(crate) const BLOCK: usize = 16;

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod imp {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };

    // SAFETY (every unsafe block below): these SSE2 intrinsics only need the sse2 target
    // feature, which this module is compiled with (cfg above); the one load reads exactly
    // the 16 bytes of a `&[u8; 16]`, unaligned loads being allowed.

    #[inline(always)]
    fn load(block: &[u8; super::BLOCK]) -> __m128i {
        unsafe { _mm_loadu_si128(block.as_ptr().cast()) }
    }

    #[inline(always)]
    fn eq(v: __m128i, byte: u8) -> __m128i {
        unsafe { _mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8)) }
    }

    /// `"`, `\` or a control character (< 0x20).
    #[inline(always)]
    pub(crate) fn string_stops(block: &[u8; super::BLOCK]) -> u32 {
        let v = load(block);
        unsafe {
            let control = eq(_mm_max_epu8(v, _mm_set1_epi8(0x1f)), 0x1f);
            let special = _mm_or_si128(_mm_or_si128(eq(v, b'"'), eq(v, b'\\')), control);
            _mm_movemask_epi8(special) as u32
        }
    }

    /// Anything but space, newline, carriage return and tab.
    #[inline(always)]
    pub(crate) fn non_blank(block: &[u8; super::BLOCK]) -> u32 {
        let v = load(block);
        let (space, newline, cr, tab) = (eq(v, b' '), eq(v, b'\n'), eq(v, b'\r'), eq(v, b'\t'));
        unsafe {
            let blank = _mm_or_si128(_mm_or_si128(space, newline), _mm_or_si128(cr, tab));
            !(_mm_movemask_epi8(blank) as u32) & 0xffff
        }
    }
}

#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
mod swar {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;

    /// High bit set in exactly the bytes of `w` equal to `byte` (no borrow across bytes).
    fn eq(w: u64, byte: u8) -> u64 {
        let x = w ^ (ONES * u64::from(byte));
        !(((x & !HIGHS) + !HIGHS) | x) & HIGHS
    }

    /// High bit set in exactly the bytes of `w` below 0x20.
    fn control(w: u64) -> u64 {
        !(((w & !HIGHS) + (ONES * 0x60)) | w) & HIGHS
    }

    /// The eight high bits of `m` gathered into the low byte.
    fn gather(m: u64) -> u32 {
        ((m >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
    }

    fn both(block: &[u8; super::BLOCK], f: impl Fn(u64) -> u64) -> u32 {
        let (lo, hi) = block.split_at(8);
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        gather(f(word(lo))) | gather(f(word(hi))) << 8
    }

    pub(crate) fn string_stops(block: &[u8; super::BLOCK]) -> u32 {
        both(block, |w| eq(w, b'"') | eq(w, b'\\') | control(w))
    }

    pub(crate) fn non_blank(block: &[u8; super::BLOCK]) -> u32 {
        both(block, |w| {
            !(eq(w, b' ') | eq(w, b'\n') | eq(w, b'\r') | eq(w, b'\t')) & HIGHS
        })
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub(crate) use imp::{non_blank, string_stops};
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
pub(crate) use swar::{non_blank, string_stops};

#[cfg(test)]
mod tests {
    use super::*;

    fn block(s: &[u8]) -> [u8; BLOCK] {
        let mut b = [b'a'; BLOCK];
        b[..s.len()].copy_from_slice(s);
        b
    }

    #[test]
    fn masks_mark_exactly_the_right_bytes() {
        let b = block(b"x\"y\\\x1f\x20\x7f\xff\xc3\xa9\n\t\r !");
        assert_eq!(string_stops(&b), 0b1_1010 | 1 << 10 | 1 << 11 | 1 << 12);
        assert_eq!(
            non_blank(&b) & !(0xffff << 15),
            0b100_0011_1101_1111 & !(1 << 5)
        );
        assert_eq!(non_blank(&[b' '; BLOCK]), 0);
        assert_eq!(string_stops(&[b'a'; BLOCK]), 0);
    }

    #[test]
    fn portable_and_simd_masks_agree() {
        // Every byte value at every position, next to every interesting neighbour.
        for value in 0..=255u8 {
            for next in [b' ', b'"', b'\\', b'\n', 0x1f, 0x21, b'a', 0xff] {
                for at in 0..BLOCK - 1 {
                    let mut b = [b'x'; BLOCK];
                    (b[at], b[at + 1]) = (value, next);
                    assert_eq!(swar::string_stops(&b), string_stops(&b), "{b:?}");
                    assert_eq!(swar::non_blank(&b), non_blank(&b), "{b:?}");
                }
            }
        }
    }

    #[test]
    fn bytes_next_to_matches_are_not_matched() {
        // Borrow-prone neighbours: 0x21 after a space, 0x0b after a newline, 0x20 after 0x1f.
        let b = block(b" !\n\x0b\x1f ");
        assert_eq!(non_blank(&b) & 0x3f, 0b1_1010);
        assert_eq!(string_stops(&b) & 0x3f, 0b1_1100);
    }
}
