//! Pages of one column chunk, read one at a time from the file (parquet.thrift `PageHeader`)
//! and decompressed: memory holds one page, not the chunk.

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::codecs::Decompressor;
use crate::error::{corrupt, Error, Result};
use crate::metadata::Codec;
use crate::thrift::Reader;

/// Larger pages are refused as damaged (a writer's pages are kilobytes to a megabyte; a
/// corrupt header must not make the reader allocate gigabytes).
const MAX_PAGE_BYTES: usize = 256 << 20;

/// Encodings (parquet.thrift `Encoding`) this reader decodes.
pub(crate) const PLAIN: i32 = 0;
pub(crate) const PLAIN_DICTIONARY: i32 = 2;
pub(crate) const DELTA_BINARY_PACKED: i32 = 5;
pub(crate) const DELTA_LENGTH_BYTE_ARRAY: i32 = 6;
pub(crate) const DELTA_BYTE_ARRAY: i32 = 7;
pub(crate) const RLE_DICTIONARY: i32 = 8;
pub(crate) const BYTE_STREAM_SPLIT: i32 = 9;

#[derive(Debug)]
pub(crate) enum PageKind {
    Dictionary {
        values: usize,
    },
    Data {
        /// Level slots in the page (rows of a flat column, entries of a list column).
        values: usize,
        encoding: i32,
        /// v2: byte lengths of the (uncompressed, unprefixed) rep and def levels.
        v2_levels: Option<(usize, usize)>,
    },
}

#[derive(Debug)]
pub(crate) struct Page {
    pub(crate) kind: PageKind,
    /// The decompressed body (for v2: levels, then decompressed values).
    pub(crate) body: Vec<u8>,
}

#[derive(Default)]
struct Header {
    kind: i32,
    uncompressed: usize,
    compressed: usize,
    values: usize,
    encoding: i32,
    v2: Option<(usize, usize, bool)>,
}

fn size(v: i32, what: &str) -> Result<usize> {
    usize::try_from(v).or_else(|_| corrupt(format!("negative {what}")))
}

fn parse_header(r: &mut Reader<'_>) -> Result<Header> {
    let mut h = Header::default();
    r.read_struct(|r, id, kind| {
        match id {
            1 => h.kind = r.i32()?,
            2 => h.uncompressed = size(r.i32()?, "page size")?,
            3 => h.compressed = size(r.i32()?, "page size")?,
            5 | 7 => r.read_struct(|r, id, kind| {
                match id {
                    1 => h.values = size(r.i32()?, "value count")?,
                    2 => h.encoding = r.i32()?,
                    _ => r.skip(kind)?,
                }
                Ok(())
            })?,
            8 => {
                let (mut def, mut rep, mut compressed) = (0, 0, true);
                r.read_struct(|r, id, kind| {
                    match id {
                        1 => h.values = size(r.i32()?, "value count")?,
                        4 => h.encoding = r.i32()?,
                        5 => def = size(r.i32()?, "level length")?,
                        6 => rep = size(r.i32()?, "level length")?,
                        7 => compressed = Reader::bool_of(kind),
                        _ => r.skip(kind)?,
                    }
                    Ok(())
                })?;
                h.v2 = Some((rep, def, compressed));
            }
            _ => r.skip(kind)?,
        }
        Ok(())
    })?;
    Ok(h)
}

/// The pages of one column chunk: `[start, start + len)` of the file.
pub(crate) struct Pages {
    pos: u64,
    end: u64,
    codec: Codec,
    decompressor: Decompressor,
}

impl Pages {
    pub(crate) fn new(start: u64, len: u64, codec: Codec) -> Self {
        Self {
            pos: start,
            end: start.saturating_add(len),
            codec,
            decompressor: Decompressor::default(),
        }
    }

    fn read_at(file: &File, at: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        file.read_exact_at(&mut buf, at).map_err(|err| {
            if err.kind() == std::io::ErrorKind::UnexpectedEof {
                Error::Corrupt(format!("page at byte {at} runs past the end of the file"))
            } else {
                Error::Io(err)
            }
        })?;
        Ok(buf)
    }

    /// The next page's kind and level slots (index pages passed over), without reading
    /// its body; None at the end of the chunk.
    pub(crate) fn peek(&mut self, file: &File) -> Result<Option<(bool, usize)>> {
        while self.pos < self.end {
            let (header, header_len) = self.header(file)?;
            if matches!(header.kind, 0 | 2 | 3) {
                return Ok(Some((header.kind != 2, header.values)));
            }
            self.pos += header_len as u64 + header.compressed as u64; // an index page
        }
        Ok(None)
    }

    /// Passes over the next page unread.
    pub(crate) fn skip(&mut self, file: &File) -> Result<()> {
        let (header, header_len) = self.header(file)?;
        let next = self.pos + header_len as u64 + header.compressed as u64;
        if next > self.end {
            return corrupt(format!(
                "page at byte {} overruns its column chunk",
                self.pos
            ));
        }
        self.pos = next;
        Ok(())
    }

    /// The next page, or None at the end of the chunk. Index pages are skipped.
    pub(crate) fn next_page(&mut self, file: &File) -> Result<Option<Page>> {
        loop {
            if self.pos >= self.end {
                return Ok(None);
            }
            let (header, header_len) = self.header(file)?;
            let body_at = self.pos + header_len as u64;
            self.pos = body_at + header.compressed as u64;
            if self.pos > self.end {
                return corrupt(format!("page at byte {body_at} overruns its column chunk"));
            }
            if header.uncompressed > MAX_PAGE_BYTES {
                return corrupt(format!(
                    "page at byte {body_at} claims {} bytes",
                    header.uncompressed
                ));
            }
            let kind = match header.kind {
                0 | 3 => PageKind::Data {
                    values: header.values,
                    encoding: header.encoding,
                    v2_levels: header.v2.map(|(rep, def, _)| (rep, def)),
                },
                2 => PageKind::Dictionary {
                    values: header.values,
                },
                _ => continue, // index pages
            };
            let raw = Self::read_at(file, body_at, header.compressed)?;
            let body = match header.v2 {
                Some((rep, def, compressed)) => {
                    let levels = rep + def;
                    if levels > raw.len() || levels > header.uncompressed {
                        return corrupt(format!("page at byte {body_at}: level lengths"));
                    }
                    let mut body = raw[..levels].to_vec();
                    let values = &raw[levels..];
                    if compressed {
                        body.extend(self.decompressor.decompress(
                            self.codec,
                            values,
                            header.uncompressed - levels,
                        )?);
                    } else {
                        body.extend_from_slice(values);
                    }
                    body
                }
                None => self
                    .decompressor
                    .decompress(self.codec, &raw, header.uncompressed)?,
            };
            return Ok(Some(Page { kind, body }));
        }
    }

    /// Reads and parses a page header (read in growing pieces: headers carry statistics).
    fn header(&self, file: &File) -> Result<(Header, usize)> {
        let mut want = 256usize;
        loop {
            let avail = (self.end - self.pos).min(want as u64) as usize;
            let bytes = Self::read_at(file, self.pos, avail)?;
            let mut r = Reader::new(&bytes);
            match parse_header(&mut r) {
                Ok(h) => return Ok((h, r.pos)),
                Err(_) if avail == want => want *= 4,
                Err(err) => return Err(err),
            }
        }
    }
}
