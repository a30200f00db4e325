//! Trace files read natively (crates/parquet-lite): no pyarrow on the replay path. A
//! `TraceFile` gives the footer, the layout scan and the whole engine columns; its
//! `RankFeeder` hands each rank's rows to a `ReplayStream` as the engine asks for them,
//! decoding a few pages per column at a time.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parquet_lite::{Column, ColumnCursor, ParquetFile};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::column_builder::ColumnBuilder;
use crate::source::Batch;
use crate::stream::ReplayStream;
use crate::trace_scan::TraceScan;

/// Columns the layout scan reads, and the ones the engine reads from a rank's rows; a
/// whole-file load reads both.
const SCAN_COLUMNS: [&str; 5] = ["rank", "op", "comm", "new_comm", "comm_members"];
const FEED_COLUMNS: [&str; 19] = [
    "seq",
    "op",
    "peer",
    "root",
    "send_bytes",
    "recv_bytes",
    "tag",
    "comm",
    "request",
    "t_start_ns",
    "t_end_ns",
    "iteration",
    "recv_peer",
    "recv_tag",
    "requests",
    "send_counts",
    "recv_counts",
    "dtype_bytes",
    "commutative",
];
/// Rows decoded at a time by the whole-file passes.
const PASS_ROWS: usize = 1 << 16;

fn read_error(err: parquet_lite::Error) -> PyErr {
    PyValueError::new_err(err.to_string())
}

/// Cursors over the present ones of `names`, from `first_row` to the end of `end_group`.
fn cursors(
    file: &Arc<ParquetFile>,
    names: &[&'static str],
    first_row: u64,
    end_group: usize,
) -> PyResult<Vec<(&'static str, ColumnCursor)>> {
    let mut out = Vec::new();
    for &name in names {
        if let Some(c) = file
            .cursor(name, first_row, end_group)
            .map_err(read_error)?
        {
            out.push((name, c));
        }
    }
    Ok(out)
}

/// Reads the next `rows` rows of every cursor; all must give the same count.
fn read_rows(cursors: &mut [(&'static str, ColumnCursor)], rows: usize) -> PyResult<Vec<Column>> {
    let mut out: Vec<Column> = Vec::with_capacity(cursors.len());
    for (name, cursor) in cursors.iter_mut() {
        let col = cursor.read(rows).map_err(read_error)?;
        if let Some(first) = out.first() {
            if first.rows != col.rows {
                return Err(PyValueError::new_err(format!(
                    "corrupt Parquet data: column {name} has {} rows where the others have {}",
                    col.rows, first.rows
                )));
            }
        }
        out.push(col);
    }
    Ok(out)
}

fn batch<'a>(
    cursors: &'a [(&'static str, ColumnCursor)],
    columns: &'a [Column],
    rows: usize,
) -> Batch<'a> {
    Batch::new(
        cursors
            .iter()
            .zip(columns)
            .map(|((name, cursor), col)| (*name, col, cursor.dictionary())),
        rows,
    )
}

/// The footer of any Parquet file: (rows, key-value metadata, top-level column names).
#[pyfunction]
pub fn parquet_footer(path: PathBuf) -> PyResult<(u64, HashMap<String, String>, Vec<String>)> {
    let file = ParquetFile::open(&path).map_err(read_error)?;
    let kv = file
        .meta
        .key_value
        .iter()
        .filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v)))
        .collect();
    let names = file.schema.names().into_iter().map(String::from).collect();
    Ok((file.num_rows(), kv, names))
}

/// A trace file opened by the native reader; see tailcast/_core.pyi.
#[pyclass(frozen, module = "tailcast._core")]
pub struct TraceFile {
    file: Arc<ParquetFile>,
}

#[pymethods]
impl TraceFile {
    #[new]
    fn new(path: PathBuf) -> PyResult<Self> {
        let file = ParquetFile::open(&path).map_err(read_error)?;
        Ok(Self {
            file: Arc::new(file),
        })
    }

    #[getter]
    fn rows(&self) -> u64 {
        self.file.num_rows()
    }

    /// One pass over rank, op and the communicator columns.
    fn scan(&self) -> PyResult<TraceScan> {
        let mut scan = TraceScan::new();
        let mut cursors = cursors(&self.file, &SCAN_COLUMNS, 0, self.file.num_row_groups())?;
        loop {
            let columns = read_rows(&mut cursors, PASS_ROWS)?;
            let rows = columns.first().map_or(0, |c| c.rows);
            if rows == 0 {
                return Ok(scan);
            }
            scan.add_batch(&batch(&cursors, &columns, rows))?;
        }
    }

    /// Every row converted to the engine's columns (`ColumnBuilder.finish` gives them).
    fn load(&self) -> PyResult<ColumnBuilder> {
        let mut builder = ColumnBuilder::new(self.file.num_rows() as usize);
        let mut names = FEED_COLUMNS.to_vec();
        names.extend(SCAN_COLUMNS.iter().filter(|n| !FEED_COLUMNS.contains(n)));
        let mut cursors = cursors(&self.file, &names, 0, self.file.num_row_groups())?;
        loop {
            let columns = read_rows(&mut cursors, PASS_ROWS)?;
            let rows = columns.first().map_or(0, |c| c.rows);
            if rows == 0 {
                return Ok(builder);
            }
            builder.append_batch(&batch(&cursors, &columns, rows))?;
        }
    }

    /// A feeder of ranks' rows: rank r has rows `starts[r]..starts[r + 1]`; at most
    /// `chunk_rows` rows are decoded per rank and call.
    fn feeder(&self, starts: Vec<u64>, chunk_rows: usize) -> PyResult<RankFeeder> {
        if starts.windows(2).any(|w| w[0] > w[1]) || starts.last() > Some(&self.file.num_rows()) {
            return Err(PyValueError::new_err(
                "rank row ranges out of order or past the end",
            ));
        }
        let ranks = starts.len().saturating_sub(1);
        Ok(RankFeeder {
            file: Arc::clone(&self.file),
            next: starts[..ranks].to_vec(),
            starts,
            cursors: (0..ranks).map(|_| None).collect(),
            chunk_rows: chunk_rows.max(1),
        })
    }
}

/// Per rank, cursors over its rows (opened at its first request); see tailcast/_core.pyi.
#[pyclass(unsendable, module = "tailcast._core")]
pub struct RankFeeder {
    file: Arc<ParquetFile>,
    starts: Vec<u64>,
    next: Vec<u64>,
    cursors: Vec<Option<Vec<(&'static str, ColumnCursor)>>>,
    chunk_rows: usize,
}

#[pymethods]
impl RankFeeder {
    /// Feeds `rank`'s next rows to `stream` and returns how many, or closes the rank when
    /// it has no more (0). Conversion problems are TypeError, rows the engine rejects
    /// ValueError.
    fn feed(&mut self, stream: &Bound<'_, ReplayStream>, rank: u32) -> PyResult<usize> {
        let r = rank as usize;
        if r + 1 >= self.starts.len() {
            // A rank with no rows in the file (a trace's declared ranks may exceed them).
            return stream.borrow_mut().close_rank(rank).map(|()| 0);
        }
        let (pos, end) = (self.next[r], self.starts[r + 1]);
        if pos >= end {
            self.cursors[r] = None; // its pages are no longer needed
            return stream.borrow_mut().close_rank(rank).map(|()| 0);
        }
        if self.cursors[r].is_none() {
            let end_group = self.file.group_of(end - 1) + 1;
            let opened = cursors(&self.file, &FEED_COLUMNS, pos, end_group)
                .map_err(|err| PyTypeError::new_err(err.to_string()))?;
            self.cursors[r] = Some(opened);
        }
        let cursors = self.cursors[r].as_mut().expect("opened above");
        let want = self.chunk_rows.min((end - pos) as usize);
        let columns = read_rows(cursors, want).map_err(|err| {
            Python::with_gil(|py| PyTypeError::new_err(err.value(py).to_string()))
        })?;
        let rows = columns.first().map_or(0, |c| c.rows);
        if rows != want {
            return Err(PyTypeError::new_err(format!(
                "corrupt Parquet data: rank {rank}'s rows end at row {} instead of {end}",
                pos + rows as u64
            )));
        }
        let b = batch(cursors, &columns, rows);
        self.next[r] = pos + rows as u64;
        stream
            .borrow_mut()
            .feed_batch(rank, &b, pos)
            .map_err(|err| {
                Python::with_gil(|py| {
                    if err.is_instance_of::<PyTypeError>(py) {
                        let last = pos + rows as u64 - 1;
                        PyTypeError::new_err(format!("rows {pos}..{last}: {}", err.value(py)))
                    } else {
                        err
                    }
                })
            })?;
        Ok(rows)
    }
}
