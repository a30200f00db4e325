//! `ColumnBuilder`: a whole trace file's rows converted to the numpy columns `replay` takes
//! (what `TraceFile.load` returns), with the communicators its rows declare and its unknown
//! op names.

use std::collections::HashMap;

use numpy::IntoPyArray;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::declared_comms::Declared;
use crate::ingest::{OwnedColumns, LIST_NAMES};
use crate::op_names::OpTable;
use crate::source::Batch;

/// Accumulates converted batches; see tailcast/_core.pyi.
#[pyclass(module = "tailcast._core")]
pub struct ColumnBuilder {
    cols: Option<OwnedColumns>,
    ops: OpTable,
    unknown: HashMap<String, u64>,
    declared: Declared,
    rows: u64,
}

impl ColumnBuilder {
    /// An empty builder with room for `capacity` rows.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            cols: Some(OwnedColumns::with_capacity(capacity)),
            ops: OpTable::new(),
            unknown: HashMap::new(),
            declared: Declared::default(),
            rows: 0,
        }
    }

    /// Converts and appends the rows of `batch`.
    pub(crate) fn append_batch(&mut self, batch: &Batch<'_>) -> PyResult<()> {
        let target = self
            .cols
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("the builder is finished"))?;
        target.append(batch, &self.ops, Some(&mut self.unknown), true, self.rows)?;
        self.declared.add(batch)?;
        self.rows += batch.rows as u64;
        Ok(())
    }
}

#[pymethods]
impl ColumnBuilder {
    #[getter]
    fn rows(&self) -> u64 {
        self.rows
    }

    /// Unknown op names (normalised) and their row counts.
    fn unknown_ops(&self) -> HashMap<String, u64> {
        self.unknown.clone()
    }

    /// (id, members) of the communicators declared by rows, in row order.
    fn declared_comms(&self) -> Vec<(i32, Vec<i64>)> {
        self.declared.comms.clone()
    }

    /// The columns as numpy arrays (moved out: the builder is finished afterwards).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self
            .cols
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the builder is finished"))?;
        let out = PyDict::new(py);
        out.set_item("rank", c.rank.into_pyarray(py))?;
        out.set_item("seq", c.seq.into_pyarray(py))?;
        out.set_item("op", c.op.into_pyarray(py))?;
        out.set_item("peer", c.peer.into_pyarray(py))?;
        out.set_item("root", c.root.into_pyarray(py))?;
        out.set_item("send_bytes", c.send_bytes.into_pyarray(py))?;
        out.set_item("recv_bytes", c.recv_bytes.into_pyarray(py))?;
        out.set_item("tag", c.tag.into_pyarray(py))?;
        out.set_item("comm", c.comm.into_pyarray(py))?;
        out.set_item("request", c.request.into_pyarray(py))?;
        out.set_item("t_start_ns", c.t_start_ns.into_pyarray(py))?;
        out.set_item("t_end_ns", c.t_end_ns.into_pyarray(py))?;
        out.set_item("iteration", c.iteration.into_pyarray(py))?;
        out.set_item("recv_peer", c.recv_peer.into_pyarray(py))?;
        out.set_item("recv_tag", c.recv_tag.into_pyarray(py))?;
        out.set_item("dtype_bytes", c.dtype_bytes.into_pyarray(py))?;
        out.set_item("commutative", c.commutative.into_pyarray(py))?;
        for (csr, name) in c.lists.into_iter().zip(LIST_NAMES) {
            let (offsets, values) = csr.into_parts();
            out.set_item(format!("{name}_offsets"), offsets.into_pyarray(py))?;
            out.set_item(format!("{name}_values"), values.into_pyarray(py))?;
        }
        Ok(out)
    }
}
