//! The chunk layout of OTF2 definition and event files (OTF2 source: OTF2_Buffer.c,
//! `otf2_buffer_write_header` / `otf2_buffer_read_header`, `OTF2_Buffer_ReadGetNextChunk`).
//!
//! A file is a sequence of chunks of the archive's chunk size (the last one may be
//! shorter). Each chunk opens with a header: the byte OTF2_BUFFER_CHUNK_HEADER (3), the
//! byte order marker, and the numbers of the chunk's first and last event (8 bytes
//! each; 18 bytes in all, OTF2_CHUNK_HEADER_SIZE). Records never cross a chunk's end:
//! OTF2_BUFFER_END_OF_CHUNK (0) says the records go on in the next chunk, and
//! OTF2_BUFFER_END_OF_FILE (2) ends the file.

use super::cursor::{ByteOrder, Cursor};
use super::error::Otf2Error;

const CHUNK_HEADER: u8 = 3;
const END_OF_CHUNK: u8 = 0;
const END_OF_FILE: u8 = 2;

/// The records of one chunked file, a record type at a time.
pub struct Chunks<'a> {
    pub cursor: Cursor<'a>,
    chunk_size: usize,
    chunk: usize,
    len: usize,
}

impl<'a> Chunks<'a> {
    /// Opens `bytes` (the file `file`) at its first chunk's header.
    pub fn open(
        file: &'a str,
        bytes: &'a [u8],
        chunk_size: usize,
    ) -> Result<Chunks<'a>, Otf2Error> {
        let mut chunks = Chunks {
            cursor: Cursor::new(file, bytes),
            chunk_size,
            chunk: 0,
            len: bytes.len(),
        };
        chunks.enter_chunk()?;
        Ok(chunks)
    }

    /// Positions the cursor on chunk `self.chunk`, limited to its bytes, past its header.
    fn enter_chunk(&mut self) -> Result<(), Otf2Error> {
        let start = self.chunk * self.chunk_size;
        let end = self.len.min(start.saturating_add(self.chunk_size));
        self.cursor.seek(start, end)?;
        let marker = self.cursor.u8("chunk header")?;
        if marker != CHUNK_HEADER {
            return Err(self.cursor.error_at(
                start,
                format!("expected a chunk header (byte {CHUNK_HEADER}), found {marker}"),
            ));
        }
        let order = self.cursor.u8("chunk byte order")?;
        self.cursor.order = ByteOrder::from_marker(order).ok_or_else(|| {
            self.cursor.error_at(
                start + 1,
                format!("unknown byte order marker {order:#04x} (expected 0x42 or 0x23)"),
            )
        })?;
        self.cursor.u64_full("chunk's first event number")?;
        self.cursor.u64_full("chunk's last event number")?;
        Ok(())
    }

    /// The next record's type byte (the cursor then stands on the record's data), or
    /// None at the end of the file. Each end of a chunk moves to the next chunk, so the
    /// loop ends within the file's chunks.
    pub fn next_type(&mut self) -> Result<Option<u8>, Otf2Error> {
        loop {
            match self.cursor.u8("record type")? {
                END_OF_FILE => return Ok(None),
                END_OF_CHUNK => {
                    self.chunk += 1;
                    if self.chunk.saturating_mul(self.chunk_size) >= self.len {
                        return Err(self
                            .cursor
                            .error("end of chunk, but the file has no further chunk"));
                    }
                    self.enter_chunk()?;
                }
                other => return Ok(Some(other)),
            }
        }
    }
}
