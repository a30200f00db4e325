//! `tailcast._core.TitConverter`: a SimGrid TiT trace written as a Parquet trace file by
//! crates/trace-formats (`tit::Converter`), no Python objects per row.

use std::collections::HashMap;
use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use trace_formats::tit::{ConvertError, Converter, Layout};

fn convert_error(err: ConvertError) -> PyErr {
    match err {
        ConvertError::Io(err) => err.into(),
        ConvertError::Line {
            path,
            line,
            message,
        } => PyValueError::new_err((path, line, message)),
        ConvertError::Write(err) => PyValueError::new_err(err.to_string()),
        ConvertError::Invalid(message) => PyValueError::new_err(message),
        ConvertError::Stopped => PyValueError::new_err("the conversion was stopped"),
    }
}

/// Converts a TiT trace; see tailcast/_core.pyi.
#[pyclass(unsendable, module = "tailcast._core")]
pub struct TitConverter {
    inner: Converter,
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
        let layout = Layout {
            columns,
            delta_columns,
            group_rows,
            page_rows,
        };
        let inner = Converter::new(files, per_rank, ranks, flops_per_s, &dst, layout)
            .map_err(convert_error)?;
        Ok(Self { inner })
    }

    /// Parses every file and writes its rows; `progress(rows)` after each row group (an
    /// exception it raises ends the conversion). ValueError((path, line, message)) for a
    /// line that cannot be read.
    #[pyo3(signature = (progress = None))]
    fn run(&mut self, py: Python<'_>, progress: Option<PyObject>) -> PyResult<u64> {
        let mut raised = None;
        let written = self.inner.run(|rows| match &progress {
            Some(callback) => callback.call1(py, (rows,)).map(drop).map_err(|err| {
                raised = Some(err);
            }),
            None => Ok(()),
        });
        match (written, raised) {
            (Err(ConvertError::Stopped), Some(err)) => Err(err),
            (written, _) => written.map_err(convert_error),
        }
    }

    /// Actions not mapped, by name.
    fn unsupported(&self) -> HashMap<String, u64> {
        self.inner.unsupported().clone()
    }

    /// Writes the footer with `metadata` and closes the file.
    fn finish(&mut self, metadata: HashMap<String, String>) -> PyResult<()> {
        self.inner.finish(metadata).map_err(convert_error)
    }
}
