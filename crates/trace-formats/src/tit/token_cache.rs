//! Where the tokens of recently read TiT lines are. A trace comes from loops, so the same
//! line text recurs (`0 irecv 15 1 8192` once per iteration): the token boundaries of a
//! short line are kept by its bytes, and a line read again takes them instead of being
//! scanned byte by byte (the scan was a fifth of a TiT line's parse).

use std::hash::Hasher;

use fast_hash::FastHasher;

/// Longest line kept, in bytes (its bytes are the key, four words).
const KEY_BYTES: usize = 32;
/// Most tokens of a kept line (rank, action and up to 8 arguments).
pub(crate) const MAX_TOKENS: usize = 10;
/// Slots of the direct-mapped table: 2^SLOT_BITS.
const SLOT_BITS: u32 = 8;

/// A token's bytes in its line: start and end offsets.
pub(crate) type Span = (u8, u8);

#[derive(Clone, Copy)]
struct Slot {
    key: [u64; KEY_BYTES / 8],
    /// The line's length + 1; 0 for an empty slot.
    len: u8,
    tokens: u8,
    spans: [Span; MAX_TOKENS],
}

const EMPTY: Slot = Slot {
    key: [0; KEY_BYTES / 8],
    len: 0,
    tokens: 0,
    spans: [(0, 0); MAX_TOKENS],
};

/// The table; a line's slot is chosen by a hash of its bytes, and a new line replaces
/// whatever its slot held.
pub(crate) struct TokenCache {
    slots: Box<[Slot]>,
}

impl Default for TokenCache {
    fn default() -> Self {
        Self {
            slots: vec![EMPTY; 1 << SLOT_BITS].into_boxed_slice(),
        }
    }
}

/// `line`'s key (its bytes zero-padded to four words) and slot; None when it is too long.
fn key_of(line: &[u8]) -> Option<([u64; KEY_BYTES / 8], usize)> {
    if line.len() > KEY_BYTES {
        return None;
    }
    let mut bytes = [0u8; KEY_BYTES];
    bytes[..line.len()].copy_from_slice(line);
    let mut key = [0u64; KEY_BYTES / 8];
    let mut hash = FastHasher::default();
    hash.write_usize(line.len());
    for (k, word) in key.iter_mut().zip(bytes.chunks_exact(8)) {
        *k = u64::from_le_bytes(word.try_into().unwrap_or_default());
        hash.write_u64(*k);
    }
    Some((key, (hash.finish() >> (64 - SLOT_BITS)) as usize))
}

impl TokenCache {
    /// The token spans of `line` when it was stored.
    pub(crate) fn get(&self, line: &[u8]) -> Option<&[Span]> {
        let (key, at) = key_of(line)?;
        let slot = &self.slots[at];
        (usize::from(slot.len) == line.len() + 1 && slot.key == key)
            .then(|| &slot.spans[..usize::from(slot.tokens)])
    }

    /// Keeps the token spans of `line` (nothing when it is too long or has too many).
    pub(crate) fn put(&mut self, line: &[u8], spans: &[Span]) {
        let Some((key, at)) = key_of(line) else {
            return;
        };
        if spans.len() > MAX_TOKENS {
            return;
        }
        let slot = &mut self.slots[at];
        slot.key = key;
        slot.len = line.len() as u8 + 1;
        slot.tokens = spans.len() as u8;
        slot.spans[..spans.len()].copy_from_slice(spans);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_short_lines_by_their_bytes() {
        let mut cache = TokenCache::default();
        assert!(cache.get(b"0 init").is_none());
        cache.put(b"0 init", &[(0, 1), (2, 6)]);
        assert_eq!(cache.get(b"0 init"), Some(&[(0, 1), (2, 6)][..]));
        assert!(cache.get(b"0 init ").is_none()); // same bytes, another length
        assert!(cache.get(b"1 init").is_none());
        assert!(cache.get(b"").is_none());
        cache.put(b"", &[]);
        assert_eq!(cache.get(b""), Some(&[][..]));
        let long = [b'1'; KEY_BYTES + 1];
        cache.put(&long, &[(0, 33)]);
        assert!(cache.get(&long).is_none());
    }
}
