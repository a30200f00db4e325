//! `ColumnBuilder` (Arrow batches → the numpy columns `replay` takes) and `TraceScan`
//! (the layout pass of the streaming replay), both fed pyarrow record batches through
//! the C Data Interface (see arrow.rs, ingest.rs).

use std::collections::{HashMap, HashSet};

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow::{Array, Exported};
use crate::ingest::{append_ints, append_ops, by_name, OpTable, OwnedColumns, LIST_NAMES};

/// Communicators declared by comm_split/dup/create rows (`new_comm` >= 0 with its
/// `comm_members`), first declaration of an id wins.
#[derive(Default)]
struct Declared {
    comms: Vec<(i32, Vec<i64>)>,
    ids: HashSet<i32>,
}

impl Declared {
    fn add(&mut self, cols: &HashMap<&str, Array<'_>>, rows: usize) -> PyResult<()> {
        let (Some(new), Some(members)) = (cols.get("new_comm"), cols.get("comm_members")) else {
            return Ok(());
        };
        if new.all_null() || members.all_null() {
            return Ok(());
        }
        let mut ids: Vec<i64> = Vec::with_capacity(rows);
        append_ints(Some(*new), rows, -1i64, &mut ids)?;
        if ids.iter().all(|&i| i < 0) {
            return Ok(());
        }
        let mut csr = crate::ingest::Csr::default();
        csr.append(Some(*members), rows)?;
        let valid = members.validity();
        for (i, &id) in ids.iter().enumerate() {
            let listed = valid.is_none_or(|v| v.is_valid(i));
            if id < 0 || !listed || self.ids.contains(&(id as i32)) {
                continue;
            }
            if csr.offsets.is_empty() {
                // Every member list empty.
                self.ids.insert(id as i32);
                self.comms.push((id as i32, Vec::new()));
                continue;
            }
            let (lo, hi) = (csr.offsets[i] as usize, csr.offsets[i + 1] as usize);
            self.ids.insert(id as i32);
            self.comms.push((id as i32, csr.values[lo..hi].to_vec()));
        }
        Ok(())
    }
}

fn batch_columns<'a>(batch: &'a Exported<'_>) -> PyResult<(HashMap<&'a str, Array<'a>>, usize)> {
    let array = batch.array();
    Ok((by_name(&array)?, array.len()))
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

#[pymethods]
impl ColumnBuilder {
    #[new]
    #[pyo3(signature = (capacity = 0))]
    fn new(capacity: usize) -> Self {
        Self {
            cols: Some(OwnedColumns::with_capacity(capacity)),
            ops: OpTable::new(),
            unknown: HashMap::new(),
            declared: Declared::default(),
            rows: 0,
        }
    }

    /// Converts and appends a record batch (anything with `__arrow_c_array__`).
    fn append(&mut self, batch: &Bound<'_, PyAny>) -> PyResult<()> {
        let exported = Exported::new(batch)?;
        let (cols, rows) = batch_columns(&exported)?;
        let target = self
            .cols
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("the builder is finished"))?;
        target.append(
            &cols,
            rows,
            &self.ops,
            Some(&mut self.unknown),
            true,
            self.rows,
        )?;
        self.declared.add(&cols, rows)?;
        self.rows += rows as u64;
        Ok(())
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
        let n = c.seq.len();
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
        for (csr, name) in c.lists.into_iter().zip(LIST_NAMES) {
            debug_assert!(csr.offsets.is_empty() || csr.offsets.len() == n + 1);
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

#[pymethods]
impl TraceScan {
    #[new]
    fn new() -> Self {
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
    fn add(&mut self, batch: &Bound<'_, PyAny>) -> PyResult<()> {
        let exported = Exported::new(batch)?;
        let (cols, rows) = batch_columns(&exported)?;
        self.rank_buf.clear();
        append_ints(cols.get("rank").copied(), rows, 0i64, &mut self.rank_buf)?;
        self.op_buf.clear();
        let unknown = Some(&mut self.unknown);
        append_ops(
            cols.get("op").copied(),
            rows,
            &self.ops,
            &mut self.op_buf,
            unknown,
        )?;
        let comm = cols.get("comm").copied();
        self.comm_buf.clear();
        append_ints(comm, rows, 0i32, &mut self.comm_buf)?;
        let comm_valid = comm.and_then(|c| c.validity());
        let has_comm = comm.is_some_and(|c| !c.all_null());
        let mut last_pair = None;
        for (i, &rank) in self.rank_buf.iter().enumerate() {
            if rank < self.last_rank {
                return Err(PyValueError::new_err(format!(
                    "rows are not sorted by rank (row {})",
                    self.rows + i as u64
                )));
            }
            if rank < 0 {
                return Err(PyValueError::new_err(format!(
                    "negative rank at row {}",
                    self.rows + i as u64
                )));
            }
            self.last_rank = rank;
            let r = rank as usize;
            if r >= self.counts.len() {
                self.counts.resize(r + 1, 0);
            }
            self.counts[r] += 1;
            // Collective codes start at 32 (replay_engine::ops::Op).
            let collective = self.op_buf[i] >= 32;
            if collective && has_comm && comm_valid.is_none_or(|v| v.is_valid(i)) {
                let pair = (self.comm_buf[i], rank as u32);
                if last_pair != Some(pair) {
                    self.used.insert(pair);
                    last_pair = Some(pair);
                }
            }
        }
        self.declared.add(&cols, rows)?;
        self.rows += rows as u64;
        Ok(())
    }

    #[getter]
    fn rows(&self) -> u64 {
        self.rows
    }

    /// Rows per rank (index = rank, up to the largest rank seen).
    fn counts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        self.counts.clone().into_pyarray(py)
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
