//! zstd compression of a writer's pages, with what makes it cheap:
//! - one compressor for the whole file, with its own matcher (`PageMatcher`): ruzstd's
//!   builds and zeroes a 128 KiB window and a hash table for every frame (~15 µs a page,
//!   ~60 µs with a fresh compressor: a third of a TiT conversion's CPU went to zstd);
//! - a page with the same bytes as one compressed recently reuses its frame (`Seen`);
//! - a column chunk whose pages total fewer than `SMALL_CHUNK` bytes is not compressed
//!   (the codec is per chunk): zstd saves a few bytes there, or adds some.

use std::cell::Cell;
use std::hash::Hasher;
use std::io::Cursor;
use std::rc::Rc;

use ruzstd::encoding::{CompressionLevel, FrameCompressor, Matcher, Sequence};

use fast_hash::FastHasher;

/// Column chunks with fewer encoded bytes than this are stored uncompressed.
pub(crate) const SMALL_CHUNK: usize = 256;

type Zstd = FrameCompressor<Cursor<Vec<u8>>, Vec<u8>, PageMatcher>;

/// Slots of the table of compressed pages: 2^SEEN_BITS (64 slots kept a sixth of a TiT
/// conversion's frames, 256 most of them).
const SEEN_BITS: u32 = 8;
/// Larger pages are not kept: the table stays under ~16 MB whatever the pages.
const SEEN_MAX_PAGE: usize = 32 * 1024;

/// Pages compressed before, (body, frame) in a slot chosen by a hash of the body; a new page
/// replaces what its slot held. A frame depends on its page's bytes alone (the matcher stays
/// within the page, ruzstd carries no table from frame to frame), and trace columns repeat
/// pages: every rank's calls in the same pattern give the same dictionary indices, calls
/// that take no time equal start and end times. An empty frame marks an empty slot.
type Seen = Vec<(Vec<u8>, Vec<u8>)>;

pub(crate) struct Compressor {
    zstd: Zstd,
    /// The size of the page being compressed, for the matcher's buffer.
    page_len: Rc<Cell<usize>>,
    seen: Seen,
    /// The frame of the last page too large to keep.
    frame: Vec<u8>,
}

/// The slot of `Seen` for a page of `bytes`.
fn slot_of(bytes: &[u8]) -> usize {
    let mut h = FastHasher::default();
    h.write_usize(bytes.len());
    h.write(bytes);
    (h.finish() >> (64 - SEEN_BITS)) as usize
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
            seen: vec![Default::default(); 1 << SEEN_BITS],
            frame: Vec::new(),
        }
    }

    /// `body` as one zstd frame.
    pub(crate) fn compress(&mut self, body: &[u8]) -> &[u8] {
        if body.len() > SEEN_MAX_PAGE {
            let out = std::mem::take(&mut self.frame);
            self.frame = self.frame_of(body, out);
            return &self.frame;
        }
        let slot = slot_of(body);
        let (kept, frame) = &mut self.seen[slot];
        if frame.is_empty() || kept.as_slice() != body {
            kept.clear();
            kept.extend_from_slice(body);
            let out = std::mem::take(frame);
            self.seen[slot].1 = self.frame_of(body, out);
        }
        &self.seen[slot].1
    }

    /// `body` compressed into `out` (what it held is dropped).
    fn frame_of(&mut self, body: &[u8], mut out: Vec<u8>) -> Vec<u8> {
        let zstd = &mut self.zstd;
        let mut source = zstd.take_source().map_or_else(Vec::new, Cursor::into_inner);
        source.clear();
        source.extend_from_slice(body);
        self.page_len.set(body.len());
        zstd.set_source(Cursor::new(source));
        out.clear();
        zstd.set_drain(out);
        zstd.compress();
        zstd.take_drain().unwrap_or_default()
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
            let packed = c.compress(&body).to_vec();
            assert_eq!(unzstd(&packed), body, "case {case}");
            // Again after another page: the same frame, from the table or compressed anew.
            c.compress(&[case as u8; 300]);
            assert_eq!(c.compress(&body), packed, "case {case}");
            if case % 3 == 0 && n >= 100 {
                assert!(packed.len() * 4 < n, "case {case}: {} of {n}", packed.len());
            }
        }
    }
}
