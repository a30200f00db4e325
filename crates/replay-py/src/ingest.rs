//! Decoded TRACE rows → the engine's columns, in one pass per column.
//!
//! Null encodings (the engine's, see replay_engine::trace): peer null → -2 (MPI_PROC_NULL;
//! -1 stays ANY_SOURCE), root/request/iteration null → -1, tag/comm/bytes/times null → 0,
//! recv_peer/recv_tag null → SAME. A null list is an empty list. Op names are normalised
//! (`MPI_Isend` → `isend`) once per dictionary entry.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use replay_engine::trace::SAME;
use replay_engine::TraceColumns;

use crate::lists::Csr;
use crate::op_names::{append_ops, OpTable};
use crate::source::{append_ints, Batch, Source};

const PROC_NULL: i32 = -2;

/// An optional column (null → SAME), kept empty (= all SAME) while every value is null;
/// `before` rows precede this batch.
fn append_optional(
    src: Source<'_>,
    rows: usize,
    before: usize,
    out: &mut Vec<i32>,
) -> PyResult<()> {
    if out.is_empty() && src.all_null() {
        return Ok(());
    }
    out.resize(before, SAME);
    append_ints(src, rows, SAME, out)
}

/// Engine columns owned by the binding (converted from decoded batches).
#[derive(Default)]
pub(crate) struct OwnedColumns {
    pub(crate) rank: Vec<u32>,
    pub(crate) seq: Vec<i64>,
    pub(crate) op: Vec<u8>,
    pub(crate) peer: Vec<i32>,
    pub(crate) root: Vec<i32>,
    pub(crate) send_bytes: Vec<i64>,
    pub(crate) recv_bytes: Vec<i64>,
    pub(crate) tag: Vec<i32>,
    pub(crate) comm: Vec<i32>,
    pub(crate) request: Vec<i64>,
    pub(crate) t_start_ns: Vec<i64>,
    pub(crate) t_end_ns: Vec<i64>,
    pub(crate) iteration: Vec<i32>,
    pub(crate) recv_peer: Vec<i32>,
    pub(crate) recv_tag: Vec<i32>,
    /// Collectives' MPI_Type_size and op commutativity: empty (all SAME) until a row
    /// records one, so traces without them cost nothing.
    pub(crate) dtype_bytes: Vec<i32>,
    pub(crate) commutative: Vec<i32>,
    /// requests, send_counts, recv_counts
    pub(crate) lists: [Csr; 3],
}

pub(crate) const LIST_NAMES: [&str; 3] = ["requests", "send_counts", "recv_counts"];

impl OwnedColumns {
    /// Room for `rows` rows (one allocation per column instead of repeated growth).
    pub(crate) fn with_capacity(rows: usize) -> Self {
        let mut c = Self::default();
        c.rank.reserve_exact(rows);
        c.op.reserve_exact(rows);
        for v in [
            &mut c.seq,
            &mut c.send_bytes,
            &mut c.recv_bytes,
            &mut c.request,
        ] {
            v.reserve_exact(rows);
        }
        for v in [&mut c.t_start_ns, &mut c.t_end_ns] {
            v.reserve_exact(rows);
        }
        for v in [
            &mut c.peer,
            &mut c.root,
            &mut c.tag,
            &mut c.comm,
            &mut c.iteration,
        ] {
            v.reserve_exact(rows);
        }
        for v in [&mut c.recv_peer, &mut c.recv_tag] {
            v.reserve_exact(rows);
        }
        c
    }

    pub(crate) fn clear(&mut self) {
        for v in [&mut self.seq, &mut self.send_bytes, &mut self.recv_bytes] {
            v.clear();
        }
        for v in [&mut self.request, &mut self.t_start_ns, &mut self.t_end_ns] {
            v.clear();
        }
        for v in [
            &mut self.peer,
            &mut self.root,
            &mut self.tag,
            &mut self.comm,
        ] {
            v.clear();
        }
        for v in [&mut self.iteration, &mut self.recv_peer, &mut self.recv_tag] {
            v.clear();
        }
        self.dtype_bytes.clear();
        self.commutative.clear();
        self.rank.clear();
        self.op.clear();
        self.lists.iter_mut().for_each(Csr::clear);
    }

    /// Appends a batch's rows. `rank` is read only when `with_rank` (a stream's chunks
    /// are one rank's rows, the engine ignores the column); negative ranks are an error
    /// naming the row (`first_row` = row number of the batch's first row).
    pub(crate) fn append(
        &mut self,
        batch: &Batch<'_>,
        ops: &OpTable,
        unknown: Option<&mut HashMap<String, u64>>,
        with_rank: bool,
        first_row: u64,
    ) -> PyResult<()> {
        let (get, rows) = (|name: &str| batch.get(name), batch.rows);
        if with_rank {
            let start = self.rank.len();
            append_ints(get("rank"), rows, 0u32, &mut self.rank)?;
            if let Some(i) = self.rank[start..].iter().position(|&r| (r as i32) < 0) {
                self.rank.truncate(start);
                return Err(PyValueError::new_err(format!(
                    "negative rank at row {}",
                    first_row + i as u64
                )));
            }
        }
        append_ints(get("seq"), rows, 0, &mut self.seq)?;
        append_ops(get("op"), rows, ops, &mut self.op, unknown)?;
        append_ints(get("peer"), rows, PROC_NULL, &mut self.peer)?;
        append_ints(get("root"), rows, -1, &mut self.root)?;
        append_ints(get("send_bytes"), rows, 0, &mut self.send_bytes)?;
        append_ints(get("recv_bytes"), rows, 0, &mut self.recv_bytes)?;
        append_ints(get("tag"), rows, 0, &mut self.tag)?;
        append_ints(get("comm"), rows, 0, &mut self.comm)?;
        append_ints(get("request"), rows, -1, &mut self.request)?;
        append_ints(get("t_start_ns"), rows, 0, &mut self.t_start_ns)?;
        append_ints(get("t_end_ns"), rows, 0, &mut self.t_end_ns)?;
        append_ints(get("iteration"), rows, -1, &mut self.iteration)?;
        append_ints(get("recv_peer"), rows, SAME, &mut self.recv_peer)?;
        append_ints(get("recv_tag"), rows, SAME, &mut self.recv_tag)?;
        let before = self.seq.len() - rows;
        append_optional(get("dtype_bytes"), rows, before, &mut self.dtype_bytes)?;
        append_optional(get("commutative"), rows, before, &mut self.commutative)?;
        for (csr, name) in self.lists.iter_mut().zip(LIST_NAMES) {
            csr.append(get(name), rows)?;
        }
        Ok(())
    }

    pub(crate) fn view(&self) -> TraceColumns<'_> {
        TraceColumns {
            rank: &self.rank,
            seq: &self.seq,
            op: &self.op,
            peer: &self.peer,
            root: &self.root,
            send_bytes: &self.send_bytes,
            recv_bytes: &self.recv_bytes,
            tag: &self.tag,
            comm: &self.comm,
            request: &self.request,
            t_start_ns: &self.t_start_ns,
            t_end_ns: &self.t_end_ns,
            iteration: &self.iteration,
            recv_peer: &self.recv_peer,
            recv_tag: &self.recv_tag,
            dtype_bytes: &self.dtype_bytes,
            commutative: &self.commutative,
            requests: self.lists[0].lists(),
            send_counts: self.lists[1].lists(),
            recv_counts: self.lists[2].lists(),
            ..Default::default()
        }
    }
}
