//! `tailcast._core.TitReader`: SimGrid TiT files parsed by crates/trace-formats (`tit`), a
//! chunk of rows at a time, as numpy columns for the Parquet writer
//! (tailcast.traces.tit_import).

use std::collections::HashMap;
use std::path::PathBuf;

use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use trace_formats::columns::{Lists, Nullable, Rows};
use trace_formats::tit::{self, LineError, ReadError, Reader, OP_NAMES};

fn line_error(err: LineError) -> PyErr {
    PyValueError::new_err((err.line, err.message))
}

/// Parses TiT files; see tailcast/_core.pyi.
#[pyclass(unsendable, module = "tailcast._core")]
pub struct TitReader {
    reader: Reader,
}

fn nullable<'py, T: numpy::Element + Copy>(
    py: Python<'py>,
    out: &Bound<'py, PyDict>,
    name: &str,
    col: Nullable<T>,
) -> PyResult<()> {
    out.set_item(name, col.values.into_pyarray(py))?;
    out.set_item(format!("{name}_valid"), col.valid.into_pyarray(py))
}

fn lists<'py>(py: Python<'py>, out: &Bound<'py, PyDict>, name: &str, col: Lists) -> PyResult<()> {
    let offsets: Vec<i32> = col
        .offsets
        .iter()
        .map(|&o| i32::try_from(o).map_err(|_| PyValueError::new_err((0u64, "list too long"))))
        .collect::<PyResult<_>>()?;
    out.set_item(format!("{name}_offsets"), offsets.into_pyarray(py))?;
    out.set_item(format!("{name}_values"), col.values.into_pyarray(py))?;
    out.set_item(format!("{name}_valid"), col.valid.into_pyarray(py))
}

fn rows_dict(py: Python<'_>, rows: Rows) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("rank", rows.rank.into_pyarray(py))?;
    out.set_item("seq", rows.seq.into_pyarray(py))?;
    out.set_item("op", rows.op.into_pyarray(py))?;
    out.set_item("time_ns", rows.time_ns.into_pyarray(py))?;
    nullable(py, &out, "peer", rows.peer)?;
    nullable(py, &out, "root", rows.root)?;
    nullable(py, &out, "tag", rows.tag)?;
    nullable(py, &out, "send_bytes", rows.send_bytes)?;
    nullable(py, &out, "recv_bytes", rows.recv_bytes)?;
    nullable(py, &out, "request", rows.request)?;
    nullable(py, &out, "dtype_bytes", rows.dtype_bytes)?;
    lists(py, &out, "requests", rows.requests)?;
    lists(py, &out, "send_counts", rows.send_counts)?;
    lists(py, &out, "recv_counts", rows.recv_counts)?;
    Ok(out)
}

#[pymethods]
impl TitReader {
    #[new]
    fn new(ranks: usize, flops_per_s: f64) -> PyResult<Self> {
        let reader = Reader::new(ranks, flops_per_s).map_err(PyValueError::new_err)?;
        Ok(Self { reader })
    }

    /// Starts reading `path` (`expect_rank`: the rank of a per-rank file).
    #[pyo3(signature = (path, expect_rank = None))]
    fn open(&mut self, path: PathBuf, expect_rank: Option<usize>) -> PyResult<()> {
        Ok(self.reader.open(&path, expect_rank)?)
    }

    /// The next rows of the open file (at most `max_rows`) as numpy columns, or None when
    /// it has ended. ValueError((line, message)) for a line that cannot be read.
    fn read<'py>(
        &mut self,
        py: Python<'py>,
        max_rows: usize,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        match self.reader.read(max_rows).map_err(line_error)? {
            Some(rows) => Ok(Some(rows_dict(py, rows)?)),
            None => Ok(None),
        }
    }

    /// Calls of actions the importer does not map, by name.
    fn unsupported(&self) -> HashMap<String, u64> {
        self.reader.unsupported().clone()
    }

    /// The op names the `op` codes of `read` index.
    #[staticmethod]
    fn op_names() -> Vec<&'static str> {
        OP_NAMES.to_vec()
    }

    /// The ranks of a single-file trace (largest rank + 1; 0 for no actions).
    /// ValueError((line, message)) for a line not starting with a rank.
    #[staticmethod]
    fn count_ranks(path: PathBuf) -> PyResult<usize> {
        tit::ranks_in_file(&path).map_err(|err| match err {
            ReadError::Io(err) => err.into(),
            ReadError::Line(err) => line_error(err),
        })
    }

    /// The optional columns the actions of `paths` can set.
    #[staticmethod]
    fn columns(paths: Vec<PathBuf>) -> PyResult<Vec<&'static str>> {
        Ok(tit::optional_columns(&paths)?)
    }
}
