//! zstd compression of a writer's pages, with what makes it cheap (ruzstd's fastest level
//! costs ~15 µs a call even for a few bytes, ~60 µs with a fresh compressor, and ~8 ns a
//! byte):
//! - compressors kept for the whole file: a fresh one allocates and zeroes its 128 KiB
//!   window and hash table for every page. One per power-of-two class of page sizes, as a
//!   reused compressor keeps the hash table sized for its first page (one sized for a
//!   small page compressed 20 KB pages ~10 % larger);
//! - a page identical to the same page of the column written just before reuses its
//!   compressed bytes (trace files hold equal columns, e.g. start and end times of calls
//!   that take no time);
//! - a column chunk whose pages total fewer than `SMALL_CHUNK` bytes is not compressed
//!   (the codec is per chunk): zstd saves a few bytes there, or adds some, at ~15 µs a
//!   page.

use std::io::Cursor;

use ruzstd::encoding::{CompressionLevel, FrameCompressor, MatchGeneratorDriver};

/// Column chunks with fewer encoded bytes than this are stored uncompressed.
pub(crate) const SMALL_CHUNK: usize = 256;

type Zstd = FrameCompressor<Cursor<Vec<u8>>, Vec<u8>, MatchGeneratorDriver>;

pub(crate) struct Compressor {
    /// By page size class: the bits of the size.
    zstd: Vec<Option<Zstd>>,
    /// (body, compressed) of each page of the previous compressed chunk, and of the current
    /// one's first `used` pages (the vectors are reused from chunk to chunk).
    previous: Vec<(Vec<u8>, Vec<u8>)>,
    current: Vec<(Vec<u8>, Vec<u8>)>,
    used: usize,
}

impl Compressor {
    pub(crate) fn new() -> Self {
        Self {
            zstd: Vec::new(),
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
                let class = (usize::BITS - body.len().leading_zeros()) as usize;
                if self.zstd.len() <= class {
                    self.zstd.resize_with(class + 1, || None);
                }
                let zstd = self.zstd[class]
                    .get_or_insert_with(|| FrameCompressor::new(CompressionLevel::Fastest));
                let mut source = zstd.take_source().map_or_else(Vec::new, Cursor::into_inner);
                source.clear();
                source.extend_from_slice(body);
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
