//! Reads Parquet files of the kind tailcast, pyarrow, polars and DuckDB write: the footer
//! (schema, row groups, key-value metadata) and flat integer / string columns and lists of
//! integers, decoded a few rows at a time (`ColumnCursor`). Encodings: PLAIN, dictionary
//! (RLE_DICTIONARY, PLAIN_DICTIONARY), DELTA_BINARY_PACKED, BYTE_STREAM_SPLIT (integers),
//! DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY (strings); data pages v1 and v2; every codec
//! but LZO (codecs.rs). Anything else is an `Error::Unsupported` naming it.
//! Writes such files too (`Writer`): tailcast's trace layout, without pyarrow.
//!
//! Format: github.com/apache/parquet-format (parquet.thrift, Encodings.md).

mod codecs;
mod column;
mod column_write;
mod compress;
mod cursor;
mod delta;
mod encode;
mod error;
mod metadata;
mod page;
mod rle;
mod schema;
mod spec;
mod thrift;
mod thrift_write;
mod writer;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

pub use column::{Column, Values};
pub use cursor::ColumnCursor;
pub use error::{Error, Result};
pub use metadata::{ColumnChunk, FileMetaData, Physical, RowGroup};
pub use schema::{Leaf, Schema, Shape};
pub use spec::{ColumnData, ColumnSpec, Encoding, ValueKind, WriteOptions};
pub use writer::Writer;

const MAGIC: &[u8; 4] = b"PAR1";

/// An open Parquet file and its parsed footer.
pub struct ParquetFile {
    file: File,
    pub meta: FileMetaData,
    pub schema: Schema,
    /// First row of each row group, and the total at the end.
    group_starts: Vec<u64>,
}

impl ParquetFile {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path)?;
        let size = file.metadata()?.len();
        if size < 12 {
            return error::corrupt(format!("{size} bytes is too short for Parquet"));
        }
        let mut tail = [0u8; 8];
        file.read_exact_at(&mut tail, size - 8)?;
        let mut head = [0u8; 4];
        file.read_exact_at(&mut head, 0)?;
        if &tail[4..] != MAGIC || &head != MAGIC {
            return error::corrupt("no PAR1 magic: not a Parquet file");
        }
        let footer_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
        if footer_len + 12 > size {
            return error::corrupt(format!(
                "footer of {footer_len} bytes in a {size}-byte file"
            ));
        }
        let mut footer = vec![0u8; footer_len as usize];
        file.read_exact_at(&mut footer, size - 8 - footer_len)?;
        let meta = FileMetaData::parse(&footer)?;
        let schema = Schema::new(&meta.schema)?;
        let mut group_starts = vec![0u64];
        for g in &meta.row_groups {
            if g.num_rows < 0 {
                return error::corrupt("negative row count");
            }
            for c in &g.columns {
                let (start, len) = c.byte_range()?;
                if start.saturating_add(len) > size {
                    return error::corrupt(format!("column chunk at byte {start} past the end"));
                }
            }
            if g.columns.len() != schema.leaves.len() {
                return error::corrupt(format!(
                    "row group has {} column chunks, the schema {} leaves",
                    g.columns.len(),
                    schema.leaves.len()
                ));
            }
            group_starts.push(group_starts.last().copied().unwrap_or(0) + g.num_rows as u64);
        }
        Ok(Self {
            file,
            meta,
            schema,
            group_starts,
        })
    }

    pub fn num_rows(&self) -> u64 {
        self.group_starts.last().copied().unwrap_or(0)
    }

    pub fn num_row_groups(&self) -> usize {
        self.meta.row_groups.len()
    }

    /// First row of each row group, then the number of rows.
    pub fn group_starts(&self) -> &[u64] {
        &self.group_starts
    }

    pub(crate) fn chunk(&self, group: usize, leaf: usize) -> Result<&ColumnChunk> {
        self.meta
            .row_groups
            .get(group)
            .and_then(|g| g.columns.get(leaf))
            .ok_or_else(|| Error::Corrupt(format!("no column chunk {leaf} in row group {group}")))
    }

    /// A cursor over top-level column `name` from row `first_row` to the end of row group
    /// `end_group - 1` (None: the column is absent).
    pub fn cursor(
        self: &Arc<Self>,
        name: &str,
        first_row: u64,
        end_group: usize,
    ) -> Result<Option<ColumnCursor>> {
        let Some(leaf) = self.schema.leaf(name) else {
            return Ok(None);
        };
        let group = self.group_of(first_row);
        let leaf = leaf.clone();
        let mut cursor = ColumnCursor::new(Arc::clone(self), &leaf, group..end_group.max(group))?;
        let skip = first_row - self.group_starts[group.min(self.num_row_groups())];
        if skip > 0 {
            cursor.skip(skip as usize)?;
        }
        Ok(Some(cursor))
    }

    /// The row group holding `row` (the group count when `row` is past the end).
    pub fn group_of(&self, row: u64) -> usize {
        self.group_starts
            .partition_point(|&s| s <= row)
            .saturating_sub(1)
            .min(self.num_row_groups())
    }

    /// The key-value metadata entry `key`.
    pub fn key_value(&self, key: &str) -> Option<&str> {
        self.meta
            .key_value
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.as_deref())
    }
}
