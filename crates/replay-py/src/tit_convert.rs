//! `tailcast._core.TitConverter`: a SimGrid TiT trace straight to a Parquet trace file
//! (crates/parquet-lite's writer), no Python objects per row. Per-rank files stream: each
//! row group holds rows of one rank (at most `group_rows`), written as soon as it is full;
//! a single file holding every rank is parsed whole, then written rank by rank (its rows
//! must be sorted by rank). The layout (group and page rows, delta columns) comes from
//! tailcast.traces.layout.

use std::collections::HashMap;
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

/// A column of some rows, gathered in `order`. The converter keeps one per column and
/// refills it for every row group: fresh vectors of a row group's size (~0.5 MB a column)
/// went back to the kernel after each group and were page-faulted in again.
#[derive(Default)]
struct Gathered {
    ints: Vec<i64>,
    keys: Vec<u32>,
    offsets: Vec<i64>,
    valid: Vec<bool>,
    /// Some rows are null (else `valid` is not written).
    nulls: bool,
}

impl Gathered {
    fn clear(&mut self) {
        self.ints.clear();
        self.keys.clear();
        self.offsets.clear();
        self.valid.clear();
        self.nulls = false;
    }

    fn ints<T: Copy + Into<i64>>(&mut self, v: &[T], order: &[usize]) {
        self.ints.extend(order.iter().map(|&i| v[i].into()));
    }

    fn valid(&mut self, valid: &[bool], order: &[usize]) {
        self.valid.extend(order.iter().map(|&i| valid[i]));
        self.nulls = !self.valid.iter().all(|&v| v);
    }

    fn nullable<T: Copy + Into<i64>>(&mut self, n: &Nullable<T>, order: &[usize]) {
        self.ints(&n.values, order);
        self.valid(&n.valid, order);
    }

    fn lists(&mut self, l: &Lists, order: &[usize]) {
        self.offsets.push(0);
        for &i in order {
            let (lo, hi) = (l.offsets[i] as usize, l.offsets[i + 1] as usize);
            self.ints.extend_from_slice(&l.values[lo..hi]);
            self.offsets.push(self.ints.len() as i64);
        }
        self.valid(&l.valid, order);
    }

    /// Refills this column `name` from `rows` in `order`.
    fn gather(&mut self, name: &str, rows: &Rows, order: &[usize]) {
        self.clear();
        match name {
            "rank" => self.ints(&rows.rank, order),
            "seq" => self.ints(&rows.seq, order),
            "op" => self
                .keys
                .extend(order.iter().map(|&i| u32::from(rows.op[i]))),
            "comm" => self.ints.resize(order.len(), 0),
            "t_start_ns" | "t_end_ns" => self.ints(&rows.time_ns, order),
            "peer" => self.nullable(&rows.peer, order),
            "root" => self.nullable(&rows.root, order),
            "tag" => self.nullable(&rows.tag, order),
            "send_bytes" => self.nullable(&rows.send_bytes, order),
            "recv_bytes" => self.nullable(&rows.recv_bytes, order),
            "request" => self.nullable(&rows.request, order),
            "dtype_bytes" => self.nullable(&rows.dtype_bytes, order),
            "requests" => self.lists(&rows.requests, order),
            "send_counts" => self.lists(&rows.send_counts, order),
            _ => self.lists(&rows.recv_counts, order),
        }
    }

    /// The column as the writer takes it (`name` as in `gather`).
    fn data(&self, name: &str) -> ColumnData<'_> {
        let valid = self.nulls.then_some(self.valid.as_slice());
        match name {
            "op" => ColumnData::Strings {
                keys: &self.keys,
                dict: &OP_NAMES,
                valid: None,
            },
            "requests" | "send_counts" | "recv_counts" => ColumnData::Lists {
                offsets: &self.offsets,
                values: &self.ints,
                valid,
            },
            _ => ColumnData::Ints {
                values: &self.ints,
                valid,
            },
        }
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
    /// One per column of `names`, reused by every row group.
    gathered: Vec<Gathered>,
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
            for (g, name) in self.gathered.iter_mut().zip(&self.names) {
                g.gather(name, rows, part);
            }
            let columns: Vec<ColumnData<'_>> = self
                .gathered
                .iter()
                .zip(&self.names)
                .map(|(g, name)| g.data(name))
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
            files,
            per_rank,
            group_rows: group_rows.max(1),
            rows: 0,
            gathered: columns.iter().map(|_| Gathered::default()).collect(),
            names: columns,
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
            lines_of(path, |line, text| {
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
