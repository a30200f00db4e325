//! Multiply-rotate hashing in the style of rustc's FxHash (one multiply by an odd 64-bit
//! constant per word), for the writer's own tables: dictionary keys and recently compressed
//! pages. The keys come from the data, not an adversary, and SipHash costs several times
//! more per value.

use std::hash::Hasher;

const K: u64 = 0x517c_c1b7_2722_0a95;

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    /// Eight bytes at a time, then the rest one by one.
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.write_u64(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        for &b in words.remainder() {
            self.write_u64(u64::from(b));
        }
    }

    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(K);
    }
}
