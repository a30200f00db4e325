//! Reads the Parquet files users give tailcast, a few rows at a time (`ColumnCursor`): flat
//! integer and string columns and lists of integers, whatever wrote them (pyarrow, polars,
//! DuckDB, tailcast) with whatever codec, encoding and page version. The decoding is the
//! parquet crate's (arrow-rs, its column readers without arrow); this crate turns its
//! levels and values into the rows the trace converters read, and names what it cannot.
//! Writes tailcast's trace layout too (`Writer`), without pyarrow.
//!
//! Format: github.com/apache/parquet-format (parquet.thrift, Encodings.md).

mod column;
mod column_write;
mod compress;
mod cursor;
mod encode;
mod error;
mod schema;
mod source;
mod spec;
mod strings;
mod thrift_write;
mod writer;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use parquet::column::page::PageReader;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use parquet::file::serialized_reader::SerializedPageReader;

pub use column::{Column, Values};
pub use cursor::ColumnCursor;
pub use error::{Error, Result};
pub use schema::{Kind, Leaf, Schema, Shape};
pub use spec::{ColumnData, ColumnSpec, Encoding, ValueKind, WriteOptions};
pub use writer::Writer;

use source::Source;

const MAGIC: &[u8; 4] = b"PAR1";

/// An open Parquet file and its parsed footer.
pub struct ParquetFile {
    source: Arc<Source>,
    meta: ParquetMetaData,
    pub schema: Schema,
    /// First row of each row group, and the total at the end.
    group_starts: Vec<u64>,
}

impl ParquetFile {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path)?;
        // The magic checked here: the parquet crate says "corrupt footer" of any file.
        let size = file.metadata()?.len();
        if size < 12 {
            return Err(Error::Corrupt(format!(
                "{size} bytes is too short for Parquet"
            )));
        }
        let (mut head, mut tail) = ([0u8; 4], [0u8; 4]);
        file.read_exact_at(&mut head, 0)?;
        file.read_exact_at(&mut tail, size - 4)?;
        if &head != MAGIC || &tail != MAGIC {
            return Err(Error::Corrupt("no PAR1 magic: not a Parquet file".into()));
        }
        let source = Source::new(file, size);
        let meta = error::guarded(|| ParquetMetaDataReader::new().parse_and_finish(&source))
            .map_err(|err| err.context("footer"))?;
        let schema = Schema::new(meta.file_metadata().schema_descr());
        let mut group_starts = vec![0u64];
        for g in meta.row_groups() {
            let rows = u64::try_from(g.num_rows())
                .map_err(|_| Error::Corrupt("negative row count".into()))?;
            for c in g.columns() {
                // (the parquet crate asserts these when it reads the chunk)
                let start = c.dictionary_page_offset().unwrap_or(c.data_page_offset());
                let len = c.compressed_size();
                if start < 0 || len < 0 || start.saturating_add(len) as u64 > size {
                    return Err(Error::Corrupt(format!(
                        "column chunk of {len} bytes at byte {start} outside the file"
                    )));
                }
            }
            group_starts.push(group_starts.last().copied().unwrap_or(0) + rows);
        }
        Ok(Self {
            source: Arc::new(source),
            meta,
            schema,
            group_starts,
        })
    }

    pub fn num_rows(&self) -> u64 {
        self.group_starts.last().copied().unwrap_or(0)
    }

    pub fn num_row_groups(&self) -> usize {
        self.meta.num_row_groups()
    }

    /// First row of each row group, then the number of rows.
    pub fn group_starts(&self) -> &[u64] {
        &self.group_starts
    }

    /// The pages of `leaf`'s column chunk in row group `group`.
    pub(crate) fn pages(&self, group: usize, leaf: &Leaf) -> Result<Box<dyn PageReader>> {
        let missing = || {
            Error::Corrupt(format!(
                "no column chunk {} in row group {group}",
                leaf.index
            ))
        };
        let g = self.meta.row_groups().get(group).ok_or_else(missing)?;
        let chunk = g.columns().get(leaf.index).ok_or_else(missing)?;
        let rows = usize::try_from(g.num_rows()).unwrap_or(0);
        let pages = error::guarded(|| {
            SerializedPageReader::new(Arc::clone(&self.source), chunk, rows, None)
        })
        .map_err(|err| err.context(&format!("column {}", leaf.name)))?;
        Ok(Box::new(pages))
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

    /// The footer's key-value metadata (entries without a value left out).
    pub fn key_values(&self) -> impl Iterator<Item = (&str, &str)> {
        let kv = self.meta.file_metadata().key_value_metadata();
        kv.into_iter()
            .flatten()
            .filter_map(|e| Some((e.key.as_str(), e.value.as_deref()?)))
    }

    /// The key-value metadata entry `key`.
    pub fn key_value(&self, key: &str) -> Option<&str> {
        self.key_values().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}
