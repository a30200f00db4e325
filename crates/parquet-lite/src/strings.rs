//! Strings as keys: every distinct string a cursor meets gets the next key, and a row's
//! string is its key (`Values::Strings`), so a column of a few distinct op names costs an
//! integer per row downstream.

use std::hash::Hasher;

use fast_hash::{FastHasher, FastMap};
use parquet::data_type::ByteArray;

/// Slots of the cache of recent values by address: 2^CACHE_BITS.
const CACHE_BITS: u32 = 6;

#[derive(Default)]
pub(crate) struct Strings {
    /// The string of each key.
    pub(crate) dictionary: Vec<Vec<u8>>,
    by_text: FastMap<Vec<u8>, u32>,
    /// Recent values and their keys, by address. The decoder hands out a dictionary-encoded
    /// page's values as slices of its dictionary page, so a column of few distinct strings
    /// meets the same few addresses again and again: the address is looked up, not the text
    /// hashed and compared. A slot keeps its value (a reference to the page's buffer), so
    /// the address cannot be reused by other bytes while it is cached; a slot is replaced by
    /// the next value landing on it, so the cache keeps at most CACHE_BITS^2 buffers alive
    /// (in practice the dictionary page, or the last page of a PLAIN column).
    recent: Vec<Option<(ByteArray, u32)>>,
}

fn slot_of(text: &[u8]) -> usize {
    let mut h = FastHasher::default();
    h.write_usize(text.as_ptr() as usize);
    h.write_usize(text.len());
    (h.finish() >> (64 - CACHE_BITS)) as usize
}

impl Strings {
    /// The key of `value` (its text added at its first sight).
    #[inline]
    pub(crate) fn key(&mut self, value: &ByteArray) -> u32 {
        let text = value.data();
        let slot = slot_of(text);
        if self.recent.is_empty() {
            self.recent.resize(1 << CACHE_BITS, None);
        }
        if let Some((cached, key)) = &self.recent[slot] {
            let same = cached.data();
            if same.as_ptr() == text.as_ptr() && same.len() == text.len() {
                return *key;
            }
        }
        let key = match self.by_text.get(text) {
            Some(&key) => key,
            None => {
                let key = self.dictionary.len() as u32;
                self.dictionary.push(text.to_vec());
                self.by_text.insert(text.to_vec(), key);
                key
            }
        };
        self.recent[slot] = Some((value.clone(), key));
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_at_other_addresses_share_a_key() {
        let page = bytes::Bytes::from_static(b"isendirecvisend");
        let at = |r: std::ops::Range<usize>| ByteArray::from(page.slice(r));
        let mut s = Strings::default();
        let isend = s.key(&at(0..5));
        assert_eq!(s.key(&at(5..10)), 1);
        assert_eq!(s.key(&at(10..15)), isend); // other address, same text
        assert_eq!(s.key(&at(0..5)), isend); // the cached address
        let copy = ByteArray::from(b"irecv".to_vec());
        assert_eq!(s.key(&copy), 1);
        assert_eq!(s.dictionary, [b"isend".to_vec(), b"irecv".to_vec()]);
    }
}
