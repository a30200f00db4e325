//! `tailcast._core.TitConverter`: a SimGrid TiT trace straight to a Parquet trace file
//! (crates/parquet-lite's writer), no Python objects per row. Per-rank files stream: each
//! row group holds rows of one rank (at most `group_rows`), written as soon as it is full;
//! a single file holding every rank is parsed whole, then written rank by rank (its rows
//! must be sorted by rank). The layout (group and page rows, delta columns) comes from
//! tailcast.traces.layout.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use parquet_lite::{ColumnData, ColumnSpec, Encoding, ValueKind, WriteOptions, Writer};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::tit_parse::{Lists, Nullable, Rows, TitParser, OP_NAMES};

fn write_error(err: parquet_lite::Error) -> PyErr {
    PyValueError::new_err(err.to_string())
}

fn line_error(path: &Path, line: u64, message: String) -> PyErr {
    PyValueError::new_err((path.to_path_buf(), line, message))
}

/// Calls `each(line number, text)` for every line of `path`, reading 1 MiB at a time.
fn for_lines(path: &Path, mut each: impl FnMut(u64, &str) -> PyResult<()>) -> PyResult<()> {
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut filled, mut line) = (0usize, 0u64);
    loop {
        let n = file.read(&mut buf[filled..])?;
        let end = filled + n;
        let mut start = 0;
        while let Some(k) = buf[start..end].iter().position(|&b| b == b'\n') {
            line += 1;
            each(line, text(path, line, &buf[start..start + k])?)?;
            start += k + 1;
        }
        if n == 0 {
            if start < end {
                line += 1;
                each(line, text(path, line, &buf[start..end])?)?;
            }
            return Ok(());
        }
        buf.copy_within(start..end, 0);
        filled = end - start;
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0); // a line longer than the buffer
        }
    }
}

fn text<'a>(path: &Path, line: u64, bytes: &'a [u8]) -> PyResult<&'a str> {
    std::str::from_utf8(bytes)
        .map_err(|_| line_error(path, line, "not a text TiT trace (invalid UTF-8)".into()))
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

/// A column of some rows, gathered in `order`.
enum Gathered {
    Ints(Vec<i64>, Option<Vec<bool>>),
    Keys(Vec<u32>),
    Lists(Vec<i64>, Vec<i64>, Option<Vec<bool>>),
}

fn ints<T: Copy + Into<i64>>(v: &[T], order: &[usize]) -> Vec<i64> {
    order.iter().map(|&i| v[i].into()).collect()
}

fn nullable<T: Copy + Into<i64>>(n: &Nullable<T>, order: &[usize]) -> Gathered {
    let valid: Vec<bool> = order.iter().map(|&i| n.valid[i]).collect();
    let all = valid.iter().all(|&v| v);
    Gathered::Ints(ints(&n.values, order), (!all).then_some(valid))
}

fn lists(l: &Lists, order: &[usize]) -> Gathered {
    let mut offsets = Vec::with_capacity(order.len() + 1);
    let mut values = Vec::new();
    offsets.push(0);
    for &i in order {
        values.extend_from_slice(&l.values[l.offsets[i] as usize..l.offsets[i + 1] as usize]);
        offsets.push(values.len() as i64);
    }
    let valid: Vec<bool> = order.iter().map(|&i| l.valid[i]).collect();
    let all = valid.iter().all(|&v| v);
    Gathered::Lists(offsets, values, (!all).then_some(valid))
}

fn gather(name: &str, rows: &Rows, order: &[usize]) -> Gathered {
    match name {
        "rank" => Gathered::Ints(ints(&rows.rank, order), None),
        "seq" => Gathered::Ints(ints(&rows.seq, order), None),
        "op" => Gathered::Keys(order.iter().map(|&i| u32::from(rows.op[i])).collect()),
        "comm" => Gathered::Ints(vec![0; order.len()], None),
        "t_start_ns" | "t_end_ns" => Gathered::Ints(ints(&rows.time_ns, order), None),
        "peer" => nullable(&rows.peer, order),
        "root" => nullable(&rows.root, order),
        "tag" => nullable(&rows.tag, order),
        "send_bytes" => nullable(&rows.send_bytes, order),
        "recv_bytes" => nullable(&rows.recv_bytes, order),
        "request" => nullable(&rows.request, order),
        "dtype_bytes" => nullable(&rows.dtype_bytes, order),
        "requests" => lists(&rows.requests, order),
        "send_counts" => lists(&rows.send_counts, order),
        _ => lists(&rows.recv_counts, order),
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
}

impl TitConverter {
    /// Writes `rows` in `order` as row groups cut at rank changes and `group_rows`.
    fn write(&mut self, rows: &Rows, order: &[usize], progress: Option<&PyObject>) -> PyResult<()> {
        let mut start = 0;
        while start < order.len() {
            let rank = rows.rank[order[start]];
            let mut end = start;
            while end < order.len()
                && end - start < self.group_rows
                && rows.rank[order[end]] == rank
            {
                end += 1;
            }
            let part = &order[start..end];
            let gathered: Vec<Gathered> =
                self.names.iter().map(|n| gather(n, rows, part)).collect();
            let columns: Vec<ColumnData<'_>> = gathered
                .iter()
                .map(|g| match g {
                    Gathered::Ints(v, valid) => ColumnData::Ints {
                        values: v,
                        valid: valid.as_deref(),
                    },
                    Gathered::Keys(k) => ColumnData::Strings {
                        keys: k,
                        dict: &OP_NAMES,
                        valid: None,
                    },
                    Gathered::Lists(o, v, valid) => ColumnData::Lists {
                        offsets: o,
                        values: v,
                        valid: valid.as_deref(),
                    },
                })
                .collect();
            let writer = self
                .writer
                .as_mut()
                .ok_or_else(|| PyValueError::new_err("converter finished"))?;
            writer
                .write_row_group(part.len(), &columns)
                .map_err(write_error)?;
            self.rows += part.len() as u64;
            if let Some(callback) = progress {
                Python::with_gil(|py| callback.call1(py, (part.len(),)))?;
            }
            start = end;
        }
        Ok(())
    }
}

impl TitConverter {
    /// Writes the rows parsed so far (in file order) and clears them, keeping the parser's
    /// buffers for the next rows: no allocation and page faulting per row group.
    fn write_parsed(
        &mut self,
        order: &mut Vec<usize>,
        progress: Option<&PyObject>,
    ) -> PyResult<()> {
        let rows = std::mem::take(&mut self.parser.rows);
        order.clear();
        order.extend(0..rows.op.len());
        let written = self.write(&rows, order, progress);
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
        Ok(Self {
            parser: TitParser::new(ranks, flops_per_s),
            writer: Some(writer),
            names: columns,
            files,
            per_rank,
            group_rows: group_rows.max(1),
            rows: 0,
        })
    }

    /// Parses every file and writes its rows; `progress(rows)` after each row group.
    /// ValueError((path, line, message)) for a line that cannot be read.
    #[pyo3(signature = (progress = None))]
    fn run(&mut self, progress: Option<PyObject>) -> PyResult<u64> {
        let files = self.files.clone();
        let mut order = Vec::new();
        for (index, path) in files.iter().enumerate() {
            let expect = self.per_rank.then_some(index);
            for_lines(path, |line, text| {
                self.parser
                    .line(text, line, expect)
                    .map_err(|e| line_error(path, e.line, e.message))?;
                if self.per_rank && self.parser.rows.op.len() >= self.group_rows {
                    self.write_parsed(&mut order, progress.as_ref())?;
                }
                Ok(())
            })?;
            if self.per_rank {
                self.write_parsed(&mut order, progress.as_ref())?;
            }
        }
        if !self.per_rank {
            // One file with every rank: rows by rank, in file order within a rank.
            let rows = std::mem::take(&mut self.parser.rows);
            let mut order: Vec<usize> = (0..rows.op.len()).collect();
            order.sort_by_key(|&i| rows.rank[i]);
            self.write(&rows, &order, progress.as_ref())?;
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
