//! `tailcast._core.ReplayStream`: the engine fed chunk by chunk (replay_engine::ReplayStream).
//! The engine shares schedules through `Rc`, so the object stays on its creating thread
//! and `run` keeps the GIL.
//!
//! A batch of a rank's rows (from `RankFeeder.feed`, trace_file.rs) is converted once and
//! handed to the engine in pieces of `piece_rows` as the engine asks for that rank's rows
//! (`run` feeds them without returning to Python): Python pays per batch, while the engine
//! buffers only a few thousand rows over all ranks, which keeps the rows it executes in
//! cache.

use std::collections::HashMap;

use numpy::IntoPyArray;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use replay_engine::{OpsOut, Progress, StreamTrace};

use crate::errors::replay_error as value_error;
use crate::ingest::OwnedColumns;
use crate::op_names::OpTable;
use crate::op_stats::OpStats;
use crate::result::ReplayResult;
use crate::source::Batch;
use crate::time::to_ns;

/// One trace replayed from per-rank chunks; see tailcast/_core.pyi.
#[pyclass(unsendable, module = "tailcast._core")]
pub struct ReplayStream {
    inner: Option<replay_engine::ReplayStream>,
    /// Per rank: a converted batch not yet all fed to the engine.
    pending: Vec<Option<Pending>>,
    /// Converted batches already fed, reused for the next ones.
    spare: Vec<OwnedColumns>,
    /// Rows per piece fed to the engine.
    piece_rows: usize,
    ops: OpTable,
    /// The rows `summarise_ops` took last, kept so their vectors' capacity is reused.
    summarised: OpsOut,
}

/// Converted rows of one rank and how far the engine has been fed.
struct Pending {
    cols: OwnedColumns,
    rows: usize,
    next: usize,
    first_row: u64,
}

impl ReplayStream {
    fn engine(&mut self) -> PyResult<&mut replay_engine::ReplayStream> {
        self.inner
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("the stream is finished"))
    }

    /// Converts `batch` (rows of `rank`) and feeds the engine its first piece. Conversion
    /// problems are TypeError: the caller tells them (a file that cannot be read as a trace)
    /// from the engine's ValueError (rows that cannot be replayed).
    pub(crate) fn feed_batch(
        &mut self,
        rank: u32,
        batch: &Batch<'_>,
        first_row: u64,
    ) -> PyResult<()> {
        let as_type_error =
            |err: PyErr| Python::with_gil(|py| PyTypeError::new_err(err.value(py).to_string()));
        self.engine()?; // finished streams take no rows
        if self.pending.get(rank as usize).is_some_and(Option::is_some) {
            return Err(PyValueError::new_err(format!(
                "rank {rank}: rows fed before its previous ones were used"
            )));
        }
        let mut cols = self.spare.pop().unwrap_or_default();
        cols.clear();
        cols.append(batch, &self.ops, None, false, first_row)
            .map_err(as_type_error)?;
        let rows = cols.view().seq.len(); // (`len()` counts the rank column, not read here)
        if self.pending.len() <= rank as usize {
            self.pending.resize_with(rank as usize + 1, || None);
        }
        self.pending[rank as usize] = Some(Pending {
            cols,
            rows,
            next: 0,
            first_row,
        });
        // The first piece now: a batch the engine rejects fails here, as before.
        self.feed_piece(rank).map(|_| ())
    }

    pub(crate) fn close_rank(&mut self, rank: u32) -> PyResult<()> {
        self.engine()?.close(0, rank);
        Ok(())
    }

    /// Feeds the engine the next piece of `rank`'s pending rows; false if there are none.
    fn feed_piece(&mut self, rank: u32) -> PyResult<bool> {
        let Some(mut p) = self.pending.get_mut(rank as usize).and_then(Option::take) else {
            return Ok(false);
        };
        let hi = (p.next + self.piece_rows).min(p.rows);
        let fed = {
            let view = p.cols.view();
            let piece = view.rows(p.next, hi);
            let first = p.first_row + p.next as u64;
            self.engine()?
                .feed(0, rank, &piece, first)
                .map_err(value_error)
        };
        p.next = hi;
        if p.next == p.rows {
            self.spare.push(p.cols);
        } else {
            self.pending[rank as usize] = Some(p);
        }
        fed.map(|()| true)
    }
}

#[pymethods]
impl ReplayStream {
    #[new]
    #[pyo3(signature = (scenario, ranks, comms, *, keep_ops = true, piece_rows = None))]
    fn new(
        scenario: &crate::scenario::Scenario,
        ranks: u32,
        comms: HashMap<i32, Vec<u32>>,
        keep_ops: bool,
        piece_rows: Option<usize>,
    ) -> PyResult<Self> {
        let scenario = &scenario.inner;
        let mut comms: Vec<(i32, Vec<u32>)> = comms.into_iter().collect();
        comms.sort_unstable_by_key(|c| c.0);
        let trace = StreamTrace {
            ranks,
            comms,
            keep_ops,
        };
        let inner =
            replay_engine::ReplayStream::of_scenario(scenario, vec![trace]).map_err(value_error)?;
        // The in-memory path's chunk size (engine/stream.rs: rows stay in cache).
        let piece_rows = piece_rows
            .unwrap_or_else(|| replay_engine::engine_chunk_rows(ranks as usize))
            .max(1);
        Ok(Self {
            inner: Some(inner),
            pending: Vec::new(),
            spare: Vec::new(),
            piece_rows,
            ops: OpTable::new(),
            summarised: OpsOut::default(),
        })
    }

    /// Replays until done (None) or until a rank needs rows (its number). Runs pending
    /// signal handlers between pieces (the GIL is held): one that raises ends the call.
    fn run(&mut self, py: Python<'_>) -> PyResult<Option<u32>> {
        loop {
            py.check_signals()?; // a flag read unless a signal arrived
            match self.engine()?.run().map_err(value_error)? {
                Progress::Done => return Ok(None),
                Progress::NeedInput { rank, .. } => {
                    if !self.feed_piece(rank)? {
                        return Ok(Some(rank));
                    }
                }
            }
        }
    }

    /// Rows executed since the last call: rank, seq, op, sim_start_ns, sim_end_ns.
    fn take_ops<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let ops = self.engine()?.take_ops(0);
        let out = PyDict::new(py);
        out.set_item("rank", ops.rank.into_pyarray(py))?;
        out.set_item("seq", ops.seq.into_pyarray(py))?;
        out.set_item("op", ops.op.into_pyarray(py))?;
        out.set_item("sim_start_ns", to_ns(ops.sim_start_ns).into_pyarray(py))?;
        out.set_item("sim_end_ns", to_ns(ops.sim_end_ns).into_pyarray(py))?;
        Ok(out)
    }

    /// Rows executed since the last call, added to `stats` only: the summary of a replay
    /// that keeps no per-op rows, with no numpy arrays built (nor numpy imported).
    fn summarise_ops(&mut self, mut stats: PyRefMut<'_, OpStats>) -> PyResult<()> {
        let mut ops = std::mem::take(&mut self.summarised);
        self.engine()?.swap_ops(0, &mut ops);
        stats.add_times(&ops.op, &ops.sim_start_ns, &ops.sim_end_ns);
        self.summarised = ops;
        Ok(())
    }

    /// Ends the stream: the trace's results (no per-row arrays), counters, fabric
    /// statistics and message rows.
    fn finish(&mut self, py: Python<'_>) -> PyResult<ReplayResult> {
        let inner = self
            .inner
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the stream is finished"))?;
        ReplayResult::new(py, inner.finish())
    }
}
