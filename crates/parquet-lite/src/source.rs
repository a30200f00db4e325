//! The file as the parquet crate's readers see it (`ChunkReader`), read with `pread`: its
//! own `File` implementation duplicates the descriptor, seeks and fills an 8 KiB buffer for
//! every page header and body, and a replay holds hundreds of column readers (ranks x
//! columns) on one file.

use std::fs::File;
use std::io::{BufReader, Read};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use bytes::Bytes;
use parquet::errors::{ParquetError, Result};
use parquet::file::reader::{ChunkReader, Length};

/// Bytes buffered for a page header: headers are tens of bytes, more with statistics.
const HEADER_BUFFER: usize = 512;

pub(crate) struct Source {
    file: Arc<File>,
    len: u64,
}

impl Source {
    /// The file, of `len` bytes.
    pub(crate) fn new(file: File, len: u64) -> Self {
        Self {
            file: Arc::new(file),
            len,
        }
    }
}

impl Length for Source {
    fn len(&self) -> u64 {
        self.len
    }
}

/// Reads on from a position of the file.
pub(crate) struct At {
    file: Arc<File>,
    pos: u64,
}

impl Read for At {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl ChunkReader for Source {
    type T = BufReader<At>;

    fn get_read(&self, start: u64) -> Result<Self::T> {
        let at = At {
            file: Arc::clone(&self.file),
            pos: start,
        };
        Ok(BufReader::with_capacity(HEADER_BUFFER, at))
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes> {
        if start.saturating_add(length as u64) > self.len {
            return Err(ParquetError::EOF(format!(
                "{length} bytes at byte {start} run past the end of the {}-byte file",
                self.len
            )));
        }
        let mut buf = vec![0u8; length];
        self.file.read_exact_at(&mut buf, start)?;
        Ok(buf.into())
    }
}
