//! A page body decompressed by its column chunk's codec (parquet-format Compression.md),
//! with pure-Rust decoders: snappy (snap), gzip (flate2 on miniz_oxide), brotli
//! (brotli-decompressor), LZ4 (lz4_flex), zstd (ruzstd). LZO, which no current writer
//! offers, is refused by name. Every decoder stops at the size the page header declares,
//! so a damaged page cannot make the reader allocate more.

use std::io::Read;

use crate::error::{corrupt, Error, Result};
use crate::metadata::Codec;

/// One per column chunk reader: zstd's frame decoder is kept from page to page.
#[derive(Default)]
pub(crate) struct Decompressor {
    zstd: Option<ruzstd::decoding::FrameDecoder>,
}

/// `out` when it has the `uncompressed` bytes the page header declares.
fn sized(out: Vec<u8>, uncompressed: usize) -> Result<Vec<u8>> {
    if out.len() != uncompressed {
        return corrupt(format!(
            "page decompressed to {} bytes, header says {uncompressed}",
            out.len()
        ));
    }
    Ok(out)
}

/// Reads `reader` to its end, refusing more than `uncompressed` bytes.
fn read_all(mut reader: impl Read, uncompressed: usize, codec: &str) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(uncompressed);
    reader
        .by_ref()
        .take(uncompressed as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|err| Error::Corrupt(format!("{codec} data: {err}")))?;
    sized(out, uncompressed)
}

/// A bare LZ4 block of `uncompressed` bytes.
fn lz4_block(data: &[u8], uncompressed: usize) -> Result<Vec<u8>> {
    let mut out = vec![0u8; uncompressed];
    let n = lz4_flex::block::decompress_into(data, &mut out)
        .map_err(|err| Error::Corrupt(format!("lz4 data: {err}")))?;
    out.truncate(n);
    sized(out, uncompressed)
}

/// LZ4 as Hadoop frames it (codec LZ4): blocks each behind its decompressed and compressed
/// sizes (32-bit big-endian), or None when `data` is not framed so.
fn lz4_hadoop(data: &[u8], uncompressed: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(uncompressed);
    let mut rest = data;
    while !rest.is_empty() {
        let size = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize;
        let head = rest.get(..8)?;
        let (raw, packed) = (size(&head[..4]), size(&head[4..]));
        let block = rest.get(8..8 + packed)?;
        if out.len() + raw > uncompressed {
            return None;
        }
        let at = out.len();
        out.resize(at + raw, 0);
        let n = lz4_flex::block::decompress_into(block, &mut out[at..]).ok()?;
        if n != raw {
            return None;
        }
        rest = &rest[8 + packed..];
    }
    (out.len() == uncompressed).then_some(out)
}

impl Decompressor {
    /// `data` decompressed by `codec` to the `uncompressed` bytes its header declares.
    pub(crate) fn decompress(
        &mut self,
        codec: Codec,
        data: &[u8],
        uncompressed: usize,
    ) -> Result<Vec<u8>> {
        match codec {
            Codec::Uncompressed => Ok(data.to_vec()),
            Codec::Snappy => {
                let out = snap::raw::Decoder::new()
                    .decompress_vec(data)
                    .map_err(|err| Error::Corrupt(format!("snappy data: {err}")))?;
                sized(out, uncompressed)
            }
            Codec::Gzip => read_all(
                flate2::read::MultiGzDecoder::new(data),
                uncompressed,
                "gzip",
            ),
            Codec::Brotli => read_all(
                brotli_decompressor::Decompressor::new(data, 4096),
                uncompressed,
                "brotli",
            ),
            Codec::Lz4Raw => lz4_block(data, uncompressed),
            // Writers before the Hadoop framing was specified wrote a bare block (the
            // fallback parquet-cpp and arrow-rs read too).
            Codec::Lz4Hadoop => match lz4_hadoop(data, uncompressed) {
                Some(out) => Ok(out),
                None => lz4_block(data, uncompressed),
            },
            Codec::Zstd => {
                let mut out = Vec::with_capacity(uncompressed);
                let decoder = self
                    .zstd
                    .get_or_insert_with(ruzstd::decoding::FrameDecoder::new);
                decoder
                    .decode_all_to_vec(data, &mut out)
                    .map_err(|err| Error::Corrupt(format!("zstd data: {err}")))?;
                sized(out, uncompressed)
            }
            Codec::Other(3) => Err(Error::Unsupported("compression codec 3 (LZO)".into())),
            Codec::Other(c) => Err(Error::Unsupported(format!("compression codec {c}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lz4_reads_hadoop_frames_and_bare_blocks() {
        let text: Vec<u8> = (0..5000u32).map(|i| (i % 7) as u8).collect();
        let block = lz4_flex::block::compress(&text);
        let mut d = Decompressor::default();
        assert_eq!(
            d.decompress(Codec::Lz4Raw, &block, text.len()).unwrap(),
            text
        );
        assert_eq!(
            d.decompress(Codec::Lz4Hadoop, &block, text.len()).unwrap(),
            text
        );
        // Two Hadoop frames of halves.
        let mut framed = Vec::new();
        for half in text.chunks(2500) {
            let packed = lz4_flex::block::compress(half);
            framed.extend_from_slice(&(half.len() as u32).to_be_bytes());
            framed.extend_from_slice(&(packed.len() as u32).to_be_bytes());
            framed.extend_from_slice(&packed);
        }
        assert_eq!(
            d.decompress(Codec::Lz4Hadoop, &framed, text.len()).unwrap(),
            text
        );
        assert!(d.decompress(Codec::Lz4Raw, &block, text.len() + 1).is_err());
        assert!(d.decompress(Codec::Other(3), &block, 1).is_err());
    }
}
