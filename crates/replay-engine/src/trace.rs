//! Trace columns as the engine receives them, and the per-trace indexes it derives: rows of
//! each rank in `seq` order and the members of every communicator used by a collective.
//!
//! Null encodings (the Python side fills them): peer -1 = MPI_ANY_SOURCE, peer <= -2 = no
//! peer (MPI_PROC_NULL: completes at once); tag -1 = MPI_ANY_TAG; request -1 = none (a
//! wait*/test* row without a request covers all of the rank's outstanding requests); root
//! -1 = none; iteration -1 = none. Peers and roots are ranks of the trace's world.

use std::collections::HashMap;

use crate::error::ReplayError;
use crate::ops::Op;

pub const ANY_SOURCE: i32 = -1;
pub const ANY_TAG: i32 = -1;

/// Borrowed columns of one trace (one row per MPI call).
#[derive(Debug, Clone, Copy)]
pub struct TraceColumns<'a> {
    pub rank: &'a [u32],
    pub seq: &'a [i64],
    pub op: &'a [u8],
    pub peer: &'a [i32],
    pub root: &'a [i32],
    pub send_bytes: &'a [i64],
    pub recv_bytes: &'a [i64],
    pub tag: &'a [i32],
    pub comm: &'a [i32],
    pub request: &'a [i64],
    pub t_start_ns: &'a [i64],
    pub t_end_ns: &'a [i64],
    pub iteration: &'a [i32],
}

impl TraceColumns<'_> {
    pub fn len(&self) -> usize {
        self.rank.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rank.is_empty()
    }
}

/// Indexes of one trace.
#[derive(Debug, Clone)]
pub struct TraceIndex {
    pub ranks: u32,
    /// Rows of rank r are `order[starts[r]..starts[r + 1]]`, in seq order.
    pub order: Vec<u32>,
    pub starts: Vec<usize>,
    /// Communicator → its member ranks (ascending world rank = communicator rank order).
    pub comms: HashMap<i32, Vec<u32>>,
}

pub fn index(trace: u32, c: &TraceColumns<'_>) -> Result<TraceIndex, ReplayError> {
    let n = c.len();
    let bad = |row: Option<usize>, message: String| ReplayError::BadTrace { trace, row, message };
    let lens = [
        ("seq", c.seq.len()),
        ("op", c.op.len()),
        ("peer", c.peer.len()),
        ("root", c.root.len()),
        ("send_bytes", c.send_bytes.len()),
        ("recv_bytes", c.recv_bytes.len()),
        ("tag", c.tag.len()),
        ("comm", c.comm.len()),
        ("request", c.request.len()),
        ("t_start_ns", c.t_start_ns.len()),
        ("t_end_ns", c.t_end_ns.len()),
        ("iteration", c.iteration.len()),
    ];
    for (name, len) in lens {
        if len != n {
            return Err(bad(None, format!("column {name} has {len} rows, rank has {n}")));
        }
    }
    if n > u32::MAX as usize {
        return Err(bad(None, "more than 2^32 rows".into()));
    }
    let ranks = c.rank.iter().map(|&r| r + 1).max().unwrap_or(0);
    if ranks > 1 << 24 {
        return Err(bad(None, format!("rank ids up to {} (more than 2^24)", ranks - 1)));
    }
    // Counting sort by rank keeps each rank's rows in file order.
    let mut starts = vec![0usize; ranks as usize + 1];
    for &r in c.rank {
        starts[r as usize + 1] += 1;
    }
    for i in 0..ranks as usize {
        starts[i + 1] += starts[i];
    }
    let mut fill = starts.clone();
    let mut order = vec![0u32; n];
    for (row, &r) in c.rank.iter().enumerate() {
        order[fill[r as usize]] = row as u32;
        fill[r as usize] += 1;
    }
    let mut comms: HashMap<i32, Vec<u32>> = HashMap::new();
    for r in 0..ranks as usize {
        let rows = &mut order[starts[r]..starts[r + 1]];
        if rows.windows(2).any(|w| c.seq[w[0] as usize] >= c.seq[w[1] as usize]) {
            rows.sort_by_key(|&row| c.seq[row as usize]);
            if let Some(w) = rows.windows(2).find(|w| c.seq[w[0] as usize] == c.seq[w[1] as usize]) {
                return Err(bad(Some(w[1] as usize), format!("rank {r} repeats seq {}", c.seq[w[1] as usize])));
            }
        }
        let mut seen_comms: Vec<i32> = Vec::new();
        for &row in rows.iter() {
            let row = row as usize;
            let op = Op::from_code(c.op[row])
                .ok_or_else(|| bad(Some(row), format!("unknown op code {}", c.op[row])))?;
            if c.t_end_ns[row] < c.t_start_ns[row] {
                return Err(bad(Some(row), "t_end_ns < t_start_ns".into()));
            }
            let peer = c.peer[row];
            if peer >= 0 && peer as u32 >= ranks && is_p2p(op) {
                return Err(bad(Some(row), format!("peer {peer} is not a rank of the trace")));
            }
            if op.collective().is_some() && !seen_comms.contains(&c.comm[row]) {
                seen_comms.push(c.comm[row]);
                comms.entry(c.comm[row]).or_default().push(r as u32);
            }
        }
    }
    Ok(TraceIndex { ranks, order, starts, comms })
}

fn is_p2p(op: Op) -> bool {
    matches!(
        op,
        Op::Send
            | Op::Recv
            | Op::Isend
            | Op::Irecv
            | Op::Ssend
            | Op::Issend
            | Op::Sendrecv
            | Op::Bsend
            | Op::Rsend
            | Op::Ibsend
            | Op::Irsend
    )
}
