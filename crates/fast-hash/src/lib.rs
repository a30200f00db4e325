//! A fast, deterministic hasher for keys that come from traces and data files, not from an
//! adversary: the engine's small integer keys (request ids, channel keys, schedule keys),
//! the Parquet writer's dictionary keys and page bytes, the TiT reader's line cache. std's
//! SipHash is DoS-resistant but several times slower. Multiply-rotate mixing in the style
//! of rustc's FxHash (one multiply by an odd 64-bit constant per word).
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

const K: u64 = 0x517c_c1b7_2722_0a95;

#[derive(Debug, Clone, Copy, Default)]
pub struct FastHasher {
    hash: u64,
}

impl FastHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.mix(u64::from(b));
        }
    }

    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.mix(u64::from(v));
    }

    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.mix(u64::from(v));
    }

    #[inline]
    fn write_i32(&mut self, v: i32) {
        self.mix(v as u32 as u64);
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.mix(v);
    }

    #[inline]
    fn write_i64(&mut self, v: i64) {
        self.mix(v as u64);
    }

    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.mix(v as u64);
    }
}

/// A HashMap with the fast hasher (iteration order is deterministic for equal insertions).
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_works_and_hashes_differ() {
        let mut m: FastMap<(u32, u32, i32), u32> = FastMap::default();
        for i in 0..1000u32 {
            m.insert((i, i / 3, -(i as i32)), i);
        }
        assert_eq!(m.len(), 1000);
        assert_eq!(m[&(999, 333, -999)], 999);
        let h = |v: u64| {
            let mut s = FastHasher::default();
            s.write_u64(v);
            s.finish()
        };
        assert_ne!(h(1), h(2));
    }
}
