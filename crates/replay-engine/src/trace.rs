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
/// `recv_peer` / `recv_tag` null: same as `peer` / `tag`.
pub const SAME: i32 = i32::MIN;

/// Whether rows `lo..hi` of an optional column are all SAME (an empty column is).
pub fn all_same(column: &[i32], lo: usize, hi: usize) -> bool {
    // A fold without early exit: it vectorises, and most chunks are all SAME.
    column.is_empty()
        || column[lo..hi]
            .iter()
            .fold(true, |all, &v| all & (v == SAME))
}

/// A list column in CSR form: the list of row i is `values[offsets[i]..offsets[i + 1]]`.
/// Empty `offsets` means every list is empty.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lists<'a> {
    pub offsets: &'a [i64],
    pub values: &'a [i64],
}

impl<'a> Lists<'a> {
    pub fn get(&self, row: usize) -> &'a [i64] {
        if self.offsets.is_empty() {
            return &[];
        }
        &self.values[self.offsets[row] as usize..self.offsets[row + 1] as usize]
    }

    fn check(&self, rows: usize) -> Result<(), String> {
        if self.offsets.is_empty() {
            return Ok(());
        }
        if self.offsets.len() != rows + 1 {
            return Err(format!("{} offsets for {rows} rows", self.offsets.len()));
        }
        let ok = self.offsets.windows(2).all(|w| w[0] <= w[1])
            && self.offsets[0] >= 0
            && self.offsets[rows] as usize <= self.values.len();
        if ok {
            Ok(())
        } else {
            Err("offsets are not monotone within the values".into())
        }
    }
}

/// Borrowed columns of one trace (one row per MPI call). `recv_peer`/`recv_tag` and the list
/// columns may be empty (= all SAME / all empty lists); `..Default::default()` fills them.
#[derive(Debug, Clone, Copy, Default)]
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
    /// sendrecv: source and receive tag (SAME = as peer / tag).
    pub recv_peer: &'a [i32],
    pub recv_tag: &'a [i32],
    /// Collectives: MPI_Type_size of the datatype (SAME = not recorded: 1-byte elements,
    /// OSU's MPI_CHAR) and whether the op is commutative (1 / 0; SAME = not recorded:
    /// commutative, as MPI_SUM). Empty column = all SAME.
    pub dtype_bytes: &'a [i32],
    pub commutative: &'a [i32],
    /// wait*/test*: the requests the call completed.
    pub requests: Lists<'a>,
    /// v-collectives: bytes per communicator rank.
    pub send_counts: Lists<'a>,
    pub recv_counts: Lists<'a>,
    /// Communicators with known members: id and world ranks in communicator-rank order.
    /// Others: MPI_COMM_WORLD (0) is every rank; any other id is the set of ranks calling
    /// collectives on it, in world-rank order.
    pub comm_ids: &'a [i32],
    pub comm_members: Lists<'a>,
}

impl<'a> TraceColumns<'a> {
    /// Rows `lo..hi` (list offsets stay absolute into the same values; communicator
    /// declarations are the trace's and are kept whole).
    pub fn rows(&self, lo: usize, hi: usize) -> TraceColumns<'a> {
        fn part<T>(v: &[T], lo: usize, hi: usize) -> &[T] {
            if v.is_empty() {
                v // optional column, absent
            } else {
                &v[lo..hi]
            }
        }
        let lists = |l: &Lists<'a>| Lists {
            offsets: if l.offsets.is_empty() {
                l.offsets
            } else {
                &l.offsets[lo..=hi]
            },
            values: l.values,
        };
        TraceColumns {
            rank: part(self.rank, lo, hi),
            seq: &self.seq[lo..hi],
            op: &self.op[lo..hi],
            peer: &self.peer[lo..hi],
            root: &self.root[lo..hi],
            send_bytes: &self.send_bytes[lo..hi],
            recv_bytes: &self.recv_bytes[lo..hi],
            tag: &self.tag[lo..hi],
            comm: &self.comm[lo..hi],
            request: &self.request[lo..hi],
            t_start_ns: &self.t_start_ns[lo..hi],
            t_end_ns: &self.t_end_ns[lo..hi],
            iteration: &self.iteration[lo..hi],
            recv_peer: part(self.recv_peer, lo, hi),
            recv_tag: part(self.recv_tag, lo, hi),
            dtype_bytes: part(self.dtype_bytes, lo, hi),
            commutative: part(self.commutative, lo, hi),
            requests: lists(&self.requests),
            send_counts: lists(&self.send_counts),
            recv_counts: lists(&self.recv_counts),
            comm_ids: self.comm_ids,
            comm_members: self.comm_members,
        }
    }

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
    /// Rows of rank r are `order[starts[r]..starts[r + 1]]`, in seq order; empty when the
    /// trace is sorted by (rank, seq): rank r's rows are then `starts[r]..starts[r + 1]`.
    pub order: Vec<u32>,
    pub starts: Vec<usize>,
    /// Communicator → its member ranks in communicator-rank order.
    pub comms: HashMap<i32, Vec<u32>>,
}

pub fn index(trace: u32, c: &TraceColumns<'_>) -> Result<TraceIndex, ReplayError> {
    let n = c.len();
    let bad = |row: Option<usize>, message: String| ReplayError::BadTrace {
        trace,
        row,
        message,
    };
    check_lengths(c, n).map_err(|m| bad(None, m))?;
    if n > u32::MAX as usize {
        return Err(bad(None, "more than 2^32 rows".into()));
    }
    index_checked(trace, c)
}

/// Every column (and list column) has `n` rows; the optional ones may be empty.
pub fn check_lengths(c: &TraceColumns<'_>, n: usize) -> Result<(), String> {
    let lens = [
        ("rank", c.rank.len()),
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
        ("recv_peer", c.recv_peer.len()),
        ("recv_tag", c.recv_tag.len()),
        ("dtype_bytes", c.dtype_bytes.len()),
        ("commutative", c.commutative.len()),
    ];
    for (name, len) in lens {
        let optional = matches!(
            name,
            "recv_peer" | "recv_tag" | "rank" | "dtype_bytes" | "commutative"
        );
        if len != n && !(optional && len == 0) {
            return Err(format!("column {name} has {len} rows, seq has {n}"));
        }
    }
    for (name, lists, rows) in [
        ("requests", c.requests, n),
        ("send_counts", c.send_counts, n),
        ("recv_counts", c.recv_counts, n),
        ("comm_members", c.comm_members, c.comm_ids.len()),
    ] {
        lists
            .check(rows)
            .map_err(|m| format!("list column {name}: {m}"))?;
    }
    Ok(())
}

fn index_checked(trace: u32, c: &TraceColumns<'_>) -> Result<TraceIndex, ReplayError> {
    let n = c.len();
    let bad = |row: Option<usize>, message: String| ReplayError::BadTrace {
        trace,
        row,
        message,
    };
    let ranks = c.rank.iter().map(|&r| r + 1).max().unwrap_or(0);
    if ranks > 1 << 24 {
        return Err(bad(
            None,
            format!("rank ids up to {} (more than 2^24)", ranks - 1),
        ));
    }
    // Counting sort by rank keeps each rank's rows in file order.
    let mut starts = vec![0usize; ranks as usize + 1];
    for &r in c.rank {
        starts[r as usize + 1] += 1;
    }
    for i in 0..ranks as usize {
        starts[i + 1] += starts[i];
    }
    // Traces sorted by (rank, seq) (what tailcast writes) need no row order: each rank's
    // rows are the range starts[r]..starts[r + 1].
    let sorted = c.rank.windows(2).all(|w| w[0] <= w[1])
        && (0..ranks as usize).all(|r| {
            c.seq[starts[r]..starts[r + 1]]
                .windows(2)
                .all(|w| w[0] < w[1])
        });
    let mut order = Vec::new();
    if !sorted {
        let mut fill = starts.clone();
        order = vec![0u32; n];
        for (row, &r) in c.rank.iter().enumerate() {
            order[fill[r as usize]] = row as u32;
            fill[r as usize] += 1;
        }
    }
    let mut comms: HashMap<i32, Vec<u32>> = HashMap::new();
    let mut inferred: HashMap<i32, Vec<u32>> = HashMap::new();
    for (i, &id) in c.comm_ids.iter().enumerate() {
        let members = c.comm_members.get(i);
        if let Some(&m) = members.iter().find(|&&m| m < 0 || m >= i64::from(ranks)) {
            return Err(bad(
                None,
                format!("communicator {id} lists rank {m}, not in the trace"),
            ));
        }
        comms.insert(id, members.iter().map(|&m| m as u32).collect());
    }
    comms.entry(0).or_insert_with(|| (0..ranks).collect());
    let mut seen_comms: Vec<i32> = Vec::new();
    let classes = op_classes();
    for r in 0..ranks as usize {
        seen_comms.clear();
        if sorted && rows_valid(c, starts[r], starts[r + 1], ranks, &classes) {
            collective_comms(c, starts[r], starts[r + 1], &mut seen_comms, &classes);
            for &id in &seen_comms {
                inferred.entry(id).or_default().push(r as u32);
            }
            continue;
        }
        if sorted {
            // Some row is invalid: find and name it.
            for row in starts[r]..starts[r + 1] {
                check_row(c, row, ranks, r as u32, &mut seen_comms, &mut inferred)
                    .map_err(|m| bad(Some(row), m))?;
            }
            continue;
        }
        let rows = &mut order[starts[r]..starts[r + 1]];
        if rows
            .windows(2)
            .any(|w| c.seq[w[0] as usize] >= c.seq[w[1] as usize])
        {
            rows.sort_by_key(|&row| c.seq[row as usize]);
            if let Some(w) = rows
                .windows(2)
                .find(|w| c.seq[w[0] as usize] == c.seq[w[1] as usize])
            {
                return Err(bad(
                    Some(w[1] as usize),
                    format!("rank {r} repeats seq {}", c.seq[w[1] as usize]),
                ));
            }
        }
        for &row in rows.iter() {
            let row = row as usize;
            check_row(c, row, ranks, r as u32, &mut seen_comms, &mut inferred)
                .map_err(|m| bad(Some(row), m))?;
        }
    }
    for (id, members) in inferred {
        comms.entry(id).or_insert(members);
    }
    Ok(TraceIndex {
        ranks,
        order,
        starts,
        comms,
    })
}

/// Per op code: 1 = known, 2 = point-to-point, 4 = collective.
fn op_classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    for (code, class) in t.iter_mut().enumerate() {
        if let Some(op) = Op::from_code(code as u8) {
            *class = 1 | (u8::from(op.is_p2p()) << 1) | (u8::from(op.collective().is_some()) << 2);
        }
    }
    t
}

/// Whether rows `lo..hi` all pass `check_row`, in a few branch-free passes (the per-row
/// check, which names the first bad row, only runs when one fails).
fn rows_valid(c: &TraceColumns<'_>, lo: usize, hi: usize, ranks: u32, classes: &[u8; 256]) -> bool {
    let (op, peer) = (&c.op[lo..hi], &c.peer[lo..hi]);
    let known = op.iter().fold(1u8, |acc, &o| acc & classes[o as usize]) == 1;
    let times = c.t_start_ns[lo..hi]
        .iter()
        .zip(&c.t_end_ns[lo..hi])
        .fold(true, |acc, (s, e)| acc & (e >= s));
    let peers = op.iter().zip(peer).fold(true, |acc, (&o, &p)| {
        acc & (p < 0 || (p as u32) < ranks || classes[o as usize] & 2 == 0)
    });
    known && times && peers
}

/// The communicators rows `lo..hi` call collectives on, in first-use order.
fn collective_comms(
    c: &TraceColumns<'_>,
    lo: usize,
    hi: usize,
    seen: &mut Vec<i32>,
    classes: &[u8; 256],
) {
    for (&o, &comm) in c.op[lo..hi].iter().zip(&c.comm[lo..hi]) {
        if classes[o as usize] & 4 != 0 && !seen.contains(&comm) {
            seen.push(comm);
        }
    }
}

/// Checks one row of rank `r`; notes the communicators its collectives use.
fn check_row(
    c: &TraceColumns<'_>,
    row: usize,
    ranks: u32,
    r: u32,
    seen_comms: &mut Vec<i32>,
    inferred: &mut HashMap<i32, Vec<u32>>,
) -> Result<(), String> {
    let op = Op::from_code(c.op[row]).ok_or_else(|| format!("unknown op code {}", c.op[row]))?;
    if c.t_end_ns[row] < c.t_start_ns[row] {
        return Err("t_end_ns < t_start_ns".into());
    }
    let peer = c.peer[row];
    if peer >= 0 && peer as u32 >= ranks && op.is_p2p() {
        return Err(format!("peer {peer} is not a rank of the trace"));
    }
    if op.collective().is_some() && !seen_comms.contains(&c.comm[row]) {
        seen_comms.push(c.comm[row]);
        inferred.entry(c.comm[row]).or_default().push(r);
    }
    Ok(())
}
