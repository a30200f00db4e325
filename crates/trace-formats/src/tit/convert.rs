//! A SimGrid TiT trace straight to a Parquet trace file (crates/parquet-lite's writer), no
//! per-row objects. Per-rank files stream: each row group holds rows of one rank (at most
//! `group_rows`), written as soon as it is full; a single file holding every rank is parsed
//! whole, then written rank by rank (its rows must be sorted by rank). The layout (group and
//! page rows, delta columns) comes from tailcast.traces.layout.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use parquet_lite::{ColumnData, ColumnSpec, Encoding, ValueKind, WriteOptions, Writer};

use super::lines::{for_lines, LinesError};
use super::parse::{TitParser, OP_NAMES};
use crate::columns::{Lists, Nullable, Rows};

/// Why a conversion stopped.
#[derive(Debug)]
pub enum ConvertError {
    /// A file could not be read.
    Io(std::io::Error),
    /// A line could not be read or parsed.
    Line {
        path: PathBuf,
        line: u64,
        message: String,
    },
    /// The Parquet file could not be written.
    Write(parquet_lite::Error),
    /// A bad argument (a column TiT has no values for, a non-positive speed) or a converter
    /// already finished.
    Invalid(String),
    /// The progress callback asked to stop.
    Stopped,
}

/// How the trace file is laid out (tailcast.traces.layout decides).
pub struct Layout {
    /// The columns written, in order.
    pub columns: Vec<String>,
    /// Those written DELTA_BINARY_PACKED (the others dictionary-encoded).
    pub delta_columns: Vec<String>,
    pub group_rows: usize,
    pub page_rows: usize,
}

/// Calls `each(line number, text)` for every line of `path` (lines.rs), errors naming the
/// file and line.
/// A line's error, built out of line: the closure called per line stays small enough to be
/// inlined into the line loop (built in place it cost ~30 instructions a line, ~2 % of a
/// conversion).
#[cold]
#[inline(never)]
fn line_error(path: &Path, line: u64, message: String) -> ConvertError {
    ConvertError::Line {
        path: path.to_path_buf(),
        line,
        message,
    }
}

fn lines_of(
    path: &Path,
    each: impl FnMut(u64, &str) -> Result<(), ConvertError>,
) -> Result<(), ConvertError> {
    for_lines(path, each).map_err(|err| match err {
        LinesError::Io(err) => ConvertError::Io(err),
        LinesError::NotText { line } => {
            line_error(path, line, "not a text TiT trace (invalid UTF-8)".into())
        }
        LinesError::Each(err) => err,
    })
}

/// Per column of the file: its spec and how to take it from parsed rows.
fn spec(name: &str, ranks: usize, delta: &[String]) -> Result<ColumnSpec, ConvertError> {
    let rank_bits = [8u8, 16, 32]
        .into_iter()
        .find(|&b| (ranks as u64) <= 1u64 << (b - 1))
        .unwrap_or(32);
    let (kind, nullable) = match name {
        "rank" => (ValueKind::Int { bits: rank_bits }, false),
        "seq" => (ValueKind::Int { bits: 64 }, false),
        "op" => (ValueKind::String, false),
        "comm" => (ValueKind::Int { bits: 8 }, true),
        "peer" | "root" | "tag" | "dtype_bytes" => (ValueKind::Int { bits: 32 }, true),
        "send_bytes" | "recv_bytes" | "request" | "t_start_ns" | "t_end_ns" => {
            (ValueKind::Int { bits: 64 }, true)
        }
        "requests" | "send_counts" | "recv_counts" => (ValueKind::IntList { bits: 64 }, true),
        other => return Err(ConvertError::Invalid(format!("no TiT column {other}"))),
    };
    let encoding = if delta.iter().any(|d| d == name) {
        Encoding::Delta
    } else {
        Encoding::Dictionary
    };
    Ok(ColumnSpec {
        name: name.to_string(),
        kind,
        nullable,
        encoding,
    })
}

/// Column `name` of `rows[range]` as the writer takes it: slices of the parsed columns,
/// no copy (list offsets index the whole values vector). `zeros`: at least as many zeros as
/// rows (the `comm` column: TiT has one communicator).
fn column<'a>(name: &str, rows: &'a Rows, range: Range<usize>, zeros: &'a [i64]) -> ColumnData<'a> {
    let r = range.clone();
    let ints = |values: &'a [i64]| ColumnData::Ints {
        values: &values[r.clone()],
        valid: None,
    };
    let nullable = |n: &'a Nullable<i64>| ColumnData::Ints {
        values: &n.values[r.clone()],
        valid: Some(&n.valid[r.clone()]),
    };
    let lists = |l: &'a Lists| ColumnData::Lists {
        offsets: &l.offsets[r.start..=r.end],
        values: &l.values,
        valid: Some(&l.valid[r.clone()]),
    };
    match name {
        "rank" => ints(&rows.rank),
        "seq" => ints(&rows.seq),
        "op" => ColumnData::Strings {
            keys: &rows.op[range],
            dict: &OP_NAMES,
            valid: None,
        },
        "comm" => ColumnData::Ints {
            values: &zeros[..range.len()],
            valid: None,
        },
        "t_start_ns" | "t_end_ns" => ints(&rows.time_ns),
        "peer" => nullable(&rows.peer),
        "root" => nullable(&rows.root),
        "tag" => nullable(&rows.tag),
        "send_bytes" => nullable(&rows.send_bytes),
        "recv_bytes" => nullable(&rows.recv_bytes),
        "request" => nullable(&rows.request),
        "dtype_bytes" => nullable(&rows.dtype_bytes),
        "requests" => lists(&rows.requests),
        "send_counts" => lists(&rows.send_counts),
        _ => lists(&rows.recv_counts),
    }
}

/// Converts a TiT trace (its files, per-rank or one with every rank) to a Parquet trace.
pub struct Converter {
    parser: TitParser,
    writer: Option<Writer>,
    names: Vec<String>,
    files: Vec<PathBuf>,
    per_rank: bool,
    group_rows: usize,
    rows: u64,
    /// The `comm` column's values (column).
    zeros: Vec<i64>,
}

impl Converter {
    /// Creates `dst` for the rows of `files` (`per_rank`: file i holds rank i's lines; else
    /// one file holds every rank's) of a trace of `ranks` ranks whose `compute` amounts run
    /// at `flops_per_s`.
    pub fn new(
        files: Vec<PathBuf>,
        per_rank: bool,
        ranks: usize,
        flops_per_s: f64,
        dst: &Path,
        layout: Layout,
    ) -> Result<Self, ConvertError> {
        let mut parser = TitParser::new(ranks, flops_per_s).map_err(ConvertError::Invalid)?;
        let specs = layout
            .columns
            .iter()
            .map(|n| spec(n, ranks, &layout.delta_columns))
            .collect::<Result<Vec<_>, _>>()?;
        let options = WriteOptions {
            page_rows: layout.page_rows,
            zstd: true,
        };
        let writer = Writer::create(dst, specs, options).map_err(ConvertError::Write)?;
        parser.rows.skip_absent(&layout.columns);
        Ok(Self {
            parser,
            writer: Some(writer),
            files,
            per_rank,
            group_rows: layout.group_rows.max(1),
            rows: 0,
            zeros: Vec::new(),
            names: layout.columns,
        })
    }

    /// Writes `rows` (sorted by rank) as row groups cut at rank changes and `group_rows`;
    /// `progress(rows)` after each row group.
    fn write(
        &mut self,
        rows: &Rows,
        progress: &mut impl FnMut(usize) -> Result<(), ()>,
    ) -> Result<(), ConvertError> {
        let mut start = 0;
        while start < rows.rank.len() {
            let rank = rows.rank[start];
            let limit = rows.rank.len().min(start + self.group_rows);
            let end = start + rows.rank[start..limit].partition_point(|&r| r == rank);
            if self.zeros.len() < end - start {
                self.zeros.resize(end - start, 0);
            }
            let columns: Vec<ColumnData<'_>> = self
                .names
                .iter()
                .map(|name| column(name, rows, start..end, &self.zeros))
                .collect();
            let writer = self
                .writer
                .as_mut()
                .ok_or_else(|| ConvertError::Invalid("converter finished".into()))?;
            writer
                .write_row_group(end - start, &columns)
                .map_err(ConvertError::Write)?;
            self.rows += (end - start) as u64;
            progress(end - start).map_err(|()| ConvertError::Stopped)?;
            start = end;
        }
        Ok(())
    }

    /// Writes the rows parsed so far (in file order) and clears them, keeping the parser's
    /// buffers for the next rows: no allocation and page faulting per row group.
    fn write_parsed(
        &mut self,
        progress: &mut impl FnMut(usize) -> Result<(), ()>,
    ) -> Result<(), ConvertError> {
        let rows = std::mem::take(&mut self.parser.rows);
        let written = self.write(&rows, progress);
        self.parser.rows = rows;
        self.parser.rows.clear();
        written
    }

    /// Parses every file and writes its rows; returns the rows written. `progress(rows)`
    /// after each row group; its `Err(())` stops the conversion (`ConvertError::Stopped`).
    pub fn run(
        &mut self,
        mut progress: impl FnMut(usize) -> Result<(), ()>,
    ) -> Result<u64, ConvertError> {
        let files = self.files.clone();
        for (index, path) in files.iter().enumerate() {
            let expect = self.per_rank.then_some(index);
            lines_of(path, |line, text| {
                self.parser
                    .line(text, line, expect)
                    .map_err(|e| line_error(path, e.line, e.message))?;
                if self.per_rank && self.parser.rows.op.len() >= self.group_rows {
                    self.write_parsed(&mut progress)?;
                }
                Ok(())
            })?;
            if self.per_rank {
                self.write_parsed(&mut progress)?;
            }
        }
        if !self.per_rank {
            // One file with every rank: rows by rank, in file order within a rank.
            let rows = std::mem::take(&mut self.parser.rows);
            let mut order: Vec<usize> = (0..rows.op.len()).collect();
            order.sort_by_key(|&i| rows.rank[i]);
            self.write(&rows.permuted(&order), &mut progress)?;
        }
        Ok(self.rows)
    }

    /// Calls of actions not mapped, by name.
    pub fn unsupported(&self) -> &HashMap<String, u64> {
        &self.parser.unsupported
    }

    /// Writes the footer with `metadata` (key-value pairs, written sorted by key) and
    /// closes the file.
    pub fn finish(&mut self, metadata: HashMap<String, String>) -> Result<(), ConvertError> {
        let mut writer = self
            .writer
            .take()
            .ok_or_else(|| ConvertError::Invalid("converter finished".into()))?;
        let mut keys: Vec<_> = metadata.into_iter().collect();
        keys.sort();
        for (k, v) in keys {
            writer.set_key_value(&k, &v);
        }
        writer.finish().map_err(ConvertError::Write)
    }
}
