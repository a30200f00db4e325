//! `ColumnBuilder` (Arrow batches → the numpy columns `replay` takes) and `TraceScan`
//! (the layout pass of the streaming replay), both fed pyarrow record batches through
//! the C Data Interface (see arrow.rs, ingest.rs). Both take the constant columns of a
//! batch's row group (from Parquet statistics) instead of decoded columns.

use std::collections::{HashMap, HashSet};

use numpy::IntoPyArray;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow::Exported;
use crate::ingest::{
    append_ints, append_ops, Batch, Constant, Csr, OpTable, OwnedColumns, Source, LIST_NAMES,
};

type Constants = Option<HashMap<String, Constant>>;

/// Communicators declared by comm_split/dup/create rows (`new_comm` >= 0 with its
/// `comm_members`), first declaration of an id wins.
#[derive(Default)]
struct Declared {
    comms: Vec<(i32, Vec<i64>)>,
    ids: HashSet<i32>,
}

impl Declared {
    fn add(&mut self, batch: &Batch<'_>) -> PyResult<()> {
        let members = batch.get("comm_members");
        if !matches!(members, Source::Column(_) | Source::Native(..)) {
            return Ok(()); // no member lists: nothing declared
        }
        let new = batch.get("new_comm");
        if matches!(new, Source::Null) || members.all_null() {
            return Ok(());
        }
        let rows = batch.rows;
        let mut ids: Vec<i64> = Vec::with_capacity(rows);
        append_ints(new, rows, -1i64, &mut ids)?;
        if ids.iter().all(|&i| i < 0) {
            return Ok(());
        }
        let mut csr = Csr::default();
        csr.append(members, rows)?;
        for (i, &id) in ids.iter().enumerate() {
            let listed = members.is_valid(i);
            if id < 0 || !listed || self.ids.contains(&(id as i32)) {
                continue;
            }
            let members = if csr.offsets.is_empty() {
                Vec::new() // every member list of the batch is empty
            } else {
                csr.values[csr.offsets[i] as usize..csr.offsets[i + 1] as usize].to_vec()
            };
            self.ids.insert(id as i32);
            self.comms.push((id as i32, members));
        }
        Ok(())
    }
}

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
    /// Converts and appends the rows of `batch` (Arrow or natively decoded).
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
    #[new]
    #[pyo3(signature = (capacity = 0))]
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            cols: Some(OwnedColumns::with_capacity(capacity)),
            ops: OpTable::new(),
            unknown: HashMap::new(),
            declared: Declared::default(),
            rows: 0,
        }
    }

    /// Converts and appends a record batch (anything with `__arrow_c_array__`).
    #[pyo3(signature = (batch, constants = None))]
    fn append(&mut self, batch: &Bound<'_, PyAny>, constants: Constants) -> PyResult<()> {
        let exported = Exported::new(batch)?;
        let constants = constants.unwrap_or_default();
        let batch = Batch::new(&exported.array(), &constants)?;
        self.append_batch(&batch)
    }

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

/// The layout pass over a (rank, seq)-sorted trace; see tailcast/_core.pyi.
#[pyclass(module = "tailcast._core")]
pub struct TraceScan {
    ops: OpTable,
    unknown: HashMap<String, u64>,
    declared: Declared,
    counts: Vec<i64>,
    last_rank: i64,
    /// (comm, rank) pairs of collective calls.
    used: HashSet<(i32, u32)>,
    rows: u64,
    op_buf: Vec<u8>,
    rank_buf: Vec<i64>,
    comm_buf: Vec<i32>,
}

impl TraceScan {
    fn rank_error(&self, message: &str, i: usize) -> PyErr {
        PyValueError::new_err(format!("{message} (row {})", self.rows + i as u64))
    }

    /// Counts the rows of each rank, checking the order.
    fn count_ranks(&mut self, rank: Source<'_>, rows: usize) -> PyResult<()> {
        if let Source::Int(r) = rank {
            // A row group of one rank: one check and one count.
            self.rank_buf.clear();
            if rows > 0 {
                self.check_rank(r, 0)?;
                self.counts[r as usize] += rows as i64;
            }
            return Ok(());
        }
        self.rank_buf.clear();
        append_ints(rank, rows, 0i64, &mut self.rank_buf)?;
        for i in 0..rows {
            let r = self.rank_buf[i];
            if r != self.last_rank || self.counts.is_empty() {
                self.check_rank(r, i)?;
            }
            self.counts[r as usize] += 1;
        }
        Ok(())
    }

    fn check_rank(&mut self, r: i64, i: usize) -> PyResult<()> {
        if r < self.last_rank {
            return Err(self.rank_error("rows are not sorted by rank", i));
        }
        if r < 0 {
            return Err(PyValueError::new_err(format!(
                "negative rank at row {}",
                self.rows + i as u64
            )));
        }
        self.last_rank = r;
        if r as usize >= self.counts.len() {
            self.counts.resize(r as usize + 1, 0);
        }
        Ok(())
    }
}

impl TraceScan {
    /// Adds the rows of `batch` (Arrow or natively decoded).
    pub(crate) fn add_batch(&mut self, batch: &Batch<'_>) -> PyResult<()> {
        let rows = batch.rows;
        self.count_ranks(batch.get("rank"), rows)?;
        self.op_buf.clear();
        let unknown = Some(&mut self.unknown);
        append_ops(batch.get("op"), rows, &self.ops, &mut self.op_buf, unknown)?;
        let comm = batch.get("comm");
        let has_comm = !comm.all_null();
        // Collective codes start at 32 (replay_engine::ops::Op).
        if has_comm && self.op_buf.iter().any(|&op| op >= 32) {
            self.comm_buf.clear();
            append_ints(comm, rows, 0i32, &mut self.comm_buf)?;
            let single_rank = self.rank_buf.is_empty();
            let mut last_pair = None;
            for i in 0..rows {
                if self.op_buf[i] < 32 || !comm.is_valid(i) {
                    continue;
                }
                let rank = if single_rank {
                    self.last_rank
                } else {
                    self.rank_buf[i]
                };
                let pair = (self.comm_buf[i], rank as u32);
                if last_pair != Some(pair) {
                    self.used.insert(pair);
                    last_pair = Some(pair);
                }
            }
        }
        self.declared.add(batch)?;
        self.rows += rows as u64;
        Ok(())
    }
}

#[pymethods]
impl TraceScan {
    #[new]
    pub(crate) fn new() -> Self {
        Self {
            ops: OpTable::new(),
            unknown: HashMap::new(),
            declared: Declared::default(),
            counts: Vec::new(),
            last_rank: -1,
            used: HashSet::new(),
            rows: 0,
            op_buf: Vec::new(),
            rank_buf: Vec::new(),
            comm_buf: Vec::new(),
        }
    }

    /// Adds the next rows (columns rank, op and optionally comm, new_comm,
    /// comm_members); ValueError names the first unsorted or negative rank's row.
    #[pyo3(signature = (batch, constants = None))]
    fn add(&mut self, batch: &Bound<'_, PyAny>, constants: Constants) -> PyResult<()> {
        let exported = Exported::new(batch)?;
        let constants = constants.unwrap_or_default();
        let batch = Batch::new(&exported.array(), &constants)?;
        self.add_batch(&batch)
    }

    #[getter]
    fn rows(&self) -> u64 {
        self.rows
    }

    /// Rows per rank (index = rank, up to the largest rank seen).
    fn counts(&self) -> Vec<i64> {
        self.counts.clone()
    }

    fn unknown_ops(&self) -> HashMap<String, u64> {
        self.unknown.clone()
    }

    fn declared_comms(&self) -> Vec<(i32, Vec<i64>)> {
        self.declared.comms.clone()
    }

    /// Per communicator id, the ranks that call collectives on it (sorted).
    fn used_comms(&self) -> HashMap<i32, Vec<u32>> {
        let mut out: HashMap<i32, Vec<u32>> = HashMap::new();
        for &(c, r) in &self.used {
            out.entry(c).or_default().push(r);
        }
        out.values_mut().for_each(|v| v.sort_unstable());
        out
    }
}
