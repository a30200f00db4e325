//! zstd compression of a writer's pages, with what makes it cheap:
//! - one compressor for the whole file, with its own matcher (`PageMatcher`): ruzstd's
//!   builds and zeroes a 128 KiB window and a hash table for every frame (~15 µs a page,
//!   ~60 µs with a fresh compressor: a third of a TiT conversion's CPU went to zstd);
//! - a page identical to the same page of the column written just before reuses its
//!   compressed bytes (trace files hold equal columns, e.g. start and end times of calls
//!   that take no time);
//! - a column chunk whose pages total fewer than `SMALL_CHUNK` bytes is not compressed
//!   (the codec is per chunk): zstd saves a few bytes there, or adds some.

use std::cell::Cell;
use std::io::Cursor;
use std::rc::Rc;

use ruzstd::encoding::{CompressionLevel, FrameCompressor, Matcher, Sequence};

/// Column chunks with fewer encoded bytes than this are stored uncompressed.
pub(crate) const SMALL_CHUNK: usize = 256;

type Zstd = FrameCompressor<Cursor<Vec<u8>>, Vec<u8>, PageMatcher>;

pub(crate) struct Compressor {
    zstd: Zstd,
    /// The size of the page being compressed, for the matcher's buffer.
    page_len: Rc<Cell<usize>>,
    /// (body, compressed) of each page of the previous compressed chunk, and of the current
    /// one's first `used` pages (the vectors are reused from chunk to chunk).
    previous: Vec<(Vec<u8>, Vec<u8>)>,
    current: Vec<(Vec<u8>, Vec<u8>)>,
    used: usize,
}

impl Compressor {
    pub(crate) fn new() -> Self {
        let page_len = Rc::new(Cell::new(0));
        let matcher = PageMatcher {
            block: Vec::new(),
            spare: Vec::new(),
            table: vec![0; 1 << HASH_BITS],
            base: 0,
            page_len: Rc::clone(&page_len),
        };
        Self {
            zstd: FrameCompressor::new_with_matcher(matcher, CompressionLevel::Fastest),
            page_len,
            previous: Vec::new(),
            current: Vec::new(),
            used: 0,
        }
    }

    /// Starts a new column chunk.
    pub(crate) fn next_chunk(&mut self) {
        if self.used > 0 {
            std::mem::swap(&mut self.previous, &mut self.current);
            self.previous.truncate(self.used);
            self.used = 0;
        }
    }

    /// `body` as one zstd frame (page `index` of the current chunk).
    pub(crate) fn compress(&mut self, index: usize, body: &[u8]) -> &[u8] {
        if self.used == self.current.len() {
            self.current.push(Default::default());
        }
        let (mut kept, mut packed) = std::mem::take(&mut self.current[self.used]);
        kept.clear();
        kept.extend_from_slice(body);
        packed.clear();
        match self.previous.get(index) {
            Some((b, p)) if b == body => packed.extend_from_slice(p),
            _ => {
                let zstd = &mut self.zstd;
                let mut source = zstd.take_source().map_or_else(Vec::new, Cursor::into_inner);
                source.clear();
                source.extend_from_slice(body);
                self.page_len.set(body.len());
                zstd.set_source(Cursor::new(source));
                zstd.set_drain(packed);
                zstd.compress();
                packed = zstd.take_drain().unwrap_or_default();
            }
        }
        self.current[self.used] = (kept, packed);
        self.used += 1;
        &self.current[self.used - 1].1
    }
}

/// zstd's largest block.
const MAX_BLOCK: usize = 128 * 1024;
const HASH_BITS: u32 = 13;

/// A greedy LZ matcher (LZ4's scheme) over one zstd block: every 4-byte sequence is hashed
/// to the last position it was seen at, and a position whose 4 bytes match starts a match.
/// Positions count on from block to block (`base`), so an entry of an earlier block is
/// stale by its value and a new block needs no clearing. Matches stay within their block
/// (a page is one block unless it exceeds 128 KiB).
struct PageMatcher {
    /// The block being matched, and the buffer the next one is read into.
    block: Vec<u8>,
    spare: Vec<u8>,
    /// Position + 1 (counted from the first block) of the last 4-byte sequence per hash.
    table: Vec<u64>,
    /// The position of `block[0]`.
    base: u64,
    page_len: Rc<Cell<usize>>,
}

impl Matcher for PageMatcher {
    fn get_next_space(&mut self) -> Vec<u8> {
        // The compressor reads until the space is full: one byte more than the page ends
        // it in one block without zeroing a 128 KiB space per page.
        let mut space = std::mem::take(&mut self.spare);
        space.resize((self.page_len.get() + 1).min(MAX_BLOCK), 0);
        space
    }

    fn get_last_space(&mut self) -> &[u8] {
        &self.block
    }

    fn commit_space(&mut self, space: Vec<u8>) {
        self.base += self.block.len() as u64;
        self.spare = std::mem::replace(&mut self.block, space);
    }

    fn skip_matching(&mut self) {}

    fn start_matching(&mut self, mut handle_sequence: impl for<'a> FnMut(Sequence<'a>)) {
        let data = &self.block;
        let word = |i: usize| u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
        let (mut anchor, mut i) = (0, 0);
        while i + 4 <= data.len() {
            let w = word(i);
            let slot = (w.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize;
            let seen = std::mem::replace(&mut self.table[slot], self.base + i as u64 + 1);
            if seen > self.base {
                let at = (seen - 1 - self.base) as usize;
                if word(at) == w {
                    let extra = data[i + 4..]
                        .iter()
                        .zip(&data[at + 4..])
                        .take_while(|(a, b)| a == b)
                        .count();
                    handle_sequence(Sequence::Triple {
                        literals: &data[anchor..i],
                        offset: i - at,
                        match_len: 4 + extra,
                    });
                    i += 4 + extra;
                    anchor = i;
                    continue;
                }
            }
            i += 1;
        }
        if anchor < data.len() {
            handle_sequence(Sequence::Literals {
                literals: &data[anchor..],
            });
        }
    }

    fn reset(&mut self, _level: CompressionLevel) {
        self.base += self.block.len() as u64;
        self.block.clear();
    }

    fn window_size(&self) -> u64 {
        MAX_BLOCK as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unzstd(frame: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut d = ruzstd::decoding::StreamingDecoder::new(frame).unwrap();
        std::io::Read::read_to_end(&mut d, &mut out).unwrap();
        out
    }

    #[test]
    fn pages_round_trip_and_shrink() {
        let mut c = Compressor::new();
        let mut seed = 5u64;
        for case in 0..60usize {
            let n = [0, 1, 3, 4, 9, 100, 5000, 20_000, 200_000][case % 9];
            let body: Vec<u8> = (0..n)
                .map(|i| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                    match case % 3 {
                        0 => (i % 7) as u8,
                        1 => (seed >> 60) as u8,
                        _ => (seed >> 56) as u8,
                    }
                })
                .collect();
            c.next_chunk();
            let packed = c.compress(0, &body).to_vec();
            assert_eq!(unzstd(&packed), body, "case {case}");
            if case % 3 == 0 && n >= 100 {
                assert!(packed.len() * 4 < n, "case {case}: {} of {n}", packed.len());
            }
        }
    }
}
