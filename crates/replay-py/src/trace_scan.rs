//! `TraceScan`: the layout pass over a (rank, seq)-sorted trace file (what `TraceFile.scan`
//! returns): rows per rank, the communicators rows declare and the ranks calling
//! collectives on each, unknown op names.

use std::collections::{HashMap, HashSet};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::declared_comms::Declared;
use crate::op_names::{append_ops, OpTable};
use crate::source::{append_ints, Batch, Source};

/// The layout pass; see tailcast/_core.pyi.
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

    /// Counts the rows of each rank, checking the order.
    fn count_ranks(&mut self, rank: Source<'_>, rows: usize) -> PyResult<()> {
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
        let row = self.rows + i as u64;
        if r < self.last_rank {
            return Err(PyValueError::new_err(format!(
                "rows are not sorted by rank (row {row})"
            )));
        }
        if r < 0 {
            return Err(PyValueError::new_err(format!("negative rank at row {row}")));
        }
        self.last_rank = r;
        if r as usize >= self.counts.len() {
            self.counts.resize(r as usize + 1, 0);
        }
        Ok(())
    }

    /// Adds the rows of `batch`; ValueError names the first unsorted or negative rank's row.
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
            let mut last_pair = None;
            for i in 0..rows {
                if self.op_buf[i] < 32 || !comm.is_valid(i) {
                    continue;
                }
                let pair = (self.comm_buf[i], self.rank_buf[i] as u32);
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
