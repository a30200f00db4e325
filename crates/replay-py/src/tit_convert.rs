//! `tailcast._core.TitConverter`: a SimGrid TiT trace straight to a Parquet trace file
//! (crates/parquet-lite's writer), no Python objects per row. Per-rank files stream: each
//! row group holds rows of one rank (at most `group_rows`), written as soon as it is full;
//! a single file holding every rank is parsed whole, then written rank by rank (its rows
//! must be sorted by rank). The layout (group and page rows, delta columns) comes from
//! tailcast.traces.layout.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use parquet_lite::{ColumnData, ColumnSpec, Encoding, ValueKind, WriteOptions, Writer};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::tit_lines::{for_lines, LinesError};
use crate::tit_parse::{Lists, Nullable, Rows, TitParser, OP_NAMES};

fn write_error(err: parquet_lite::Error) -> PyErr {
    PyValueError::new_err(err.to_string())
}

fn line_error(path: &Path, line: u64, message: String) -> PyErr {
    PyValueError::new_err((path.to_path_buf(), line, message))
}

/// Calls `each(line number, text)` for every line of `path` (tit_lines), errors as
/// ValueError((path, line, message)).
fn lines_of(path: &Path, each: impl FnMut(u64, &str) -> PyResult<()>) -> PyResult<()> {
    for_lines(path, each).map_err(|err| match err {
        LinesError::Io(err) => err.into(),
        LinesError::NotText { line } => {
            line_error(path, line, "not a text TiT trace (invalid UTF-8)".into())
        }
        LinesError::Each(err) => err,
    })
}

/// Per column of the file: its spec and how to take it from parsed rows.
fn spec(name: &str, ranks: usize, delta: &[String]) -> PyResult<ColumnSpec> {
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
        other => return Err(PyValueError::new_err(format!("no TiT column {other}"))),
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

/// Converts a TiT trace; see tailcast/_core.pyi.
#[pyclass(unsendable, module = "tailcast._core")]
pub struct TitConverter {
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

impl TitConverter {
    /// Writes `rows` (sorted by rank) as row groups cut at rank changes and `group_rows`.
    fn write(&mut self, rows: &Rows, progress: Option<&PyObject>) -> PyResult<()> {
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
                .ok_or_else(|| PyValueError::new_err("converter finished"))?;
            writer
                .write_row_group(end - start, &columns)
                .map_err(write_error)?;
            self.rows += (end - start) as u64;
            if let Some(callback) = progress {
                Python::with_gil(|py| callback.call1(py, (end - start,)))?;
            }
            start = end;
        }
        Ok(())
    }

    /// Writes the rows parsed so far (in file order) and clears them, keeping the parser's
    /// buffers for the next rows: no allocation and page faulting per row group.
    fn write_parsed(&mut self, progress: Option<&PyObject>) -> PyResult<()> {
        let rows = std::mem::take(&mut self.parser.rows);
        let written = self.write(&rows, progress);
        self.parser.rows = rows;
        self.parser.rows.clear();
        written
    }
}

#[pymethods]
impl TitConverter {
    #[new]
    #[pyo3(signature = (files, per_rank, ranks, flops_per_s, dst, columns, delta_columns,
                        group_rows, page_rows))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        files: Vec<PathBuf>,
        per_rank: bool,
        ranks: usize,
        flops_per_s: f64,
        dst: PathBuf,
        columns: Vec<String>,
        delta_columns: Vec<String>,
        group_rows: usize,
        page_rows: usize,
    ) -> PyResult<Self> {
        if flops_per_s.is_nan() || flops_per_s <= 0.0 {
            return Err(PyValueError::new_err("flops_per_s must be positive"));
        }
        let specs = columns
            .iter()
            .map(|n| spec(n, ranks, &delta_columns))
            .collect::<PyResult<Vec<_>>>()?;
        let options = WriteOptions {
            page_rows,
            zstd: true,
        };
        let writer = Writer::create(&dst, specs, options).map_err(write_error)?;
        let mut parser = TitParser::new(ranks, flops_per_s);
        parser.rows.skip_absent(&columns);
        Ok(Self {
            parser,
            writer: Some(writer),
            files,
            per_rank,
            group_rows: group_rows.max(1),
            rows: 0,
            zeros: Vec::new(),
            names: columns,
        })
    }

    /// Parses every file and writes its rows; `progress(rows)` after each row group.
    /// ValueError((path, line, message)) for a line that cannot be read.
    #[pyo3(signature = (progress = None))]
    fn run(&mut self, progress: Option<PyObject>) -> PyResult<u64> {
        let files = self.files.clone();
        for (index, path) in files.iter().enumerate() {
            let expect = self.per_rank.then_some(index);
            lines_of(path, |line, text| {
                self.parser
                    .line(text, line, expect)
                    .map_err(|e| line_error(path, e.line, e.message))?;
                if self.per_rank && self.parser.rows.op.len() >= self.group_rows {
                    self.write_parsed(progress.as_ref())?;
                }
                Ok(())
            })?;
            if self.per_rank {
                self.write_parsed(progress.as_ref())?;
            }
        }
        if !self.per_rank {
            // One file with every rank: rows by rank, in file order within a rank.
            let rows = std::mem::take(&mut self.parser.rows);
            let mut order: Vec<usize> = (0..rows.op.len()).collect();
            order.sort_by_key(|&i| rows.rank[i]);
            self.write(&rows.permuted(&order), progress.as_ref())?;
        }
        Ok(self.rows)
    }

    /// Actions not mapped, by name.
    fn unsupported(&self) -> HashMap<String, u64> {
        self.parser.unsupported.clone()
    }

    /// Writes the footer with `metadata` and closes the file.
    fn finish(&mut self, metadata: HashMap<String, String>) -> PyResult<()> {
        let mut writer = self
            .writer
            .take()
            .ok_or_else(|| PyValueError::new_err("converter finished"))?;
        let mut keys: Vec<_> = metadata.into_iter().collect();
        keys.sort();
        for (k, v) in keys {
            writer.set_key_value(&k, &v);
        }
        writer.finish().map_err(write_error)
    }
}
