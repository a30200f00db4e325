//! The rows the engine has buffered for each rank: owned chunks, fed in seq order, released
//! once executed. A rank only starts a row when the row after it is buffered too (or its
//! input is closed), because finishing a row needs the next one's captured start (compute
//! gap); a rank that would need more input makes the engine pause and ask for it.

use std::collections::VecDeque;

use crate::ops::Op;
use crate::trace::{self, Lists, TraceColumns, SAME};

/// One trace row, decoded (null encodings as in trace.rs). Its row number in the trace
/// and the rarely set `recv_peer` / `recv_tag` live beside it in the chunk: a smaller row
/// keeps more of the rows being executed in cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Row {
    pub seq: i64,
    pub op: u8,
    pub peer: i32,
    pub root: i32,
    pub send_bytes: i64,
    pub recv_bytes: i64,
    pub tag: i32,
    pub comm: i32,
    pub request: i64,
    pub t_start: i64,
    pub t_end: i64,
    pub iteration: i32,
}

/// A list column of a chunk in CSR form (empty offsets: every list is empty).
#[derive(Debug, Clone, Default)]
struct OwnedLists {
    offsets: Vec<u32>,
    values: Vec<i64>,
}

impl OwnedLists {
    fn get(&self, i: usize) -> &[i64] {
        if self.offsets.is_empty() {
            return &[];
        }
        &self.values[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    fn push(&mut self, list: &[i64], rows_before: usize) {
        if list.is_empty() && self.offsets.is_empty() {
            return;
        }
        if self.offsets.is_empty() {
            self.offsets = vec![0; rows_before + 1];
        }
        self.values.extend_from_slice(list);
        self.offsets.push(self.values.len() as u32);
    }

    /// Becomes the lists of rows `lo..hi` (empty when they all are), reusing its buffers.
    fn assign_range(&mut self, lists: &Lists<'_>, lo: usize, hi: usize) {
        self.offsets.clear();
        self.values.clear();
        if lists.offsets.is_empty() || lists.offsets[lo] == lists.offsets[hi] {
            return;
        }
        let base = lists.offsets[lo];
        let offsets = lists.offsets[lo..=hi].iter().map(|&o| (o - base) as u32);
        self.offsets.extend(offsets);
        self.values
            .extend_from_slice(&lists.values[base as usize..lists.offsets[hi] as usize]);
    }

    fn pad(&mut self, rows: usize) {
        if !self.offsets.is_empty() {
            let last = *self.offsets.last().expect("non-empty");
            self.offsets.resize(rows + 1, last);
        }
    }
}

/// Consecutive rows of one rank.
#[derive(Debug, Clone, Default)]
pub struct Chunk {
    rows: Vec<Row>,
    /// Trace row number of each row, or empty: rows are `first_id`, `first_id + 1`, …
    ids: Vec<u64>,
    first_id: u64,
    /// The rarely set per-row data; None: none in this chunk. Boxed so that every rank's
    /// state stays small (with hundreds of ranks taking turns, it is what misses cache).
    extra: Option<Box<Extra>>,
}

#[derive(Debug, Clone, Default)]
struct Extra {
    /// (recv_peer, recv_tag) of each row, or empty: all SAME.
    recv: Vec<(i32, i32)>,
    /// (dtype_bytes, commutative) of each row, or empty: all SAME (not recorded).
    dtype: Vec<(i32, i32)>,
    requests: OwnedLists,
    send_counts: OwnedLists,
    recv_counts: OwnedLists,
}

impl Extra {
    fn is_empty(&self) -> bool {
        self.recv.is_empty()
            && self.dtype.is_empty()
            && [&self.requests, &self.send_counts, &self.recv_counts]
                .iter()
                .all(|l| l.offsets.is_empty())
    }
}

impl Chunk {
    /// Copies `rows` (indices into `c`, all of one rank, in seq order) into a chunk;
    /// `ids[i]` is the trace row number of `rows[i]`.
    pub fn gather(c: &TraceColumns<'_>, rows: impl ExactSizeIterator<Item = (usize, u64)>) -> Self {
        let mut chunk = Chunk {
            rows: Vec::with_capacity(rows.len()),
            ..Chunk::default()
        };
        let mut extra = Extra::default();
        // Optional columns (empty = all SAME) are checked once, not row by row.
        let (rp, rt) = (!c.recv_peer.is_empty(), !c.recv_tag.is_empty());
        let (db, cm) = (!c.dtype_bytes.is_empty(), !c.commutative.is_empty());
        // List columns without offsets hold only empty lists: skip them row by row.
        let has_lists =
            [&c.requests, &c.send_counts, &c.recv_counts].map(|l| !l.offsets.is_empty());
        for (i, id) in rows {
            let n = chunk.rows.len();
            chunk.ids.push(id);
            if rp || rt {
                let get = |v: &[i32], on: bool| if on { v[i] } else { SAME };
                extra.recv.push((get(c.recv_peer, rp), get(c.recv_tag, rt)));
            }
            if db || cm {
                let get = |v: &[i32], on: bool| if on { v[i] } else { SAME };
                extra
                    .dtype
                    .push((get(c.dtype_bytes, db), get(c.commutative, cm)));
            }
            chunk.rows.push(Row {
                seq: c.seq[i],
                op: c.op[i],
                peer: c.peer[i],
                root: c.root[i],
                send_bytes: c.send_bytes[i],
                recv_bytes: c.recv_bytes[i],
                tag: c.tag[i],
                comm: c.comm[i],
                request: c.request[i],
                t_start: c.t_start_ns[i],
                t_end: c.t_end_ns[i],
                iteration: c.iteration[i],
            });
            if has_lists[0] {
                extra.requests.push(c.requests.get(i), n);
            }
            if has_lists[1] {
                extra.send_counts.push(c.send_counts.get(i), n);
            }
            if has_lists[2] {
                extra.recv_counts.push(c.recv_counts.get(i), n);
            }
        }
        if extra.recv.iter().all(|&r| r == (SAME, SAME)) {
            extra.recv.clear();
        }
        if extra.dtype.iter().all(|&d| d == (SAME, SAME)) {
            extra.dtype.clear();
        }
        let n = chunk.rows.len();
        for lists in [
            &mut extra.requests,
            &mut extra.send_counts,
            &mut extra.recv_counts,
        ] {
            lists.pad(n);
        }
        chunk.extra = (!extra.is_empty()).then(|| Box::new(extra));
        chunk
    }

    /// Copies the contiguous rows `lo..hi` of `c` (all of one rank, in seq order); the
    /// first one is trace row `first_id`. The common case (traces sorted by rank, and every
    /// streamed chunk): columns are sliced once, so the copy runs without bounds checks.
    /// `reuse` (a chunk already executed) lends its buffers: no allocation, and memory that
    /// is still in cache (fresh pages from the kernel cost more than the copy itself).
    pub fn gather_range(
        reuse: Chunk,
        c: &TraceColumns<'_>,
        lo: usize,
        hi: usize,
        first_id: u64,
    ) -> Self {
        let mut chunk = reuse;
        let n = hi - lo;
        let (seq, op, peer, root) = (
            &c.seq[lo..hi],
            &c.op[lo..hi],
            &c.peer[lo..hi],
            &c.root[lo..hi],
        );
        let (sb, rb) = (&c.send_bytes[lo..hi], &c.recv_bytes[lo..hi]);
        let (tag, comm, request) = (&c.tag[lo..hi], &c.comm[lo..hi], &c.request[lo..hi]);
        let (ts, te, it) = (
            &c.t_start_ns[lo..hi],
            &c.t_end_ns[lo..hi],
            &c.iteration[lo..hi],
        );
        let row = |k: usize| Row {
            seq: seq[k],
            op: op[k],
            peer: peer[k],
            root: root[k],
            send_bytes: sb[k],
            recv_bytes: rb[k],
            tag: tag[k],
            comm: comm[k],
            request: request[k],
            t_start: ts[k],
            t_end: te[k],
            iteration: it[k],
        };
        chunk.rows.clear();
        chunk.rows.extend((0..n).map(row));
        chunk.ids.clear();
        chunk.first_id = first_id;
        // A column of SAME (what a null recv_peer/recv_tag becomes) is no column.
        let (rp, rt) = (
            !trace::all_same(c.recv_peer, lo, hi),
            !trace::all_same(c.recv_tag, lo, hi),
        );
        let (db, cm) = (
            !trace::all_same(c.dtype_bytes, lo, hi),
            !trace::all_same(c.commutative, lo, hi),
        );
        let has_list = |l: &Lists<'_>| !l.offsets.is_empty() && l.offsets[lo] != l.offsets[hi];
        let lists = [&c.requests, &c.send_counts, &c.recv_counts];
        if !(rp || rt || db || cm || lists.iter().any(|l| has_list(l))) {
            chunk.extra = None;
            return chunk;
        }
        let mut extra = chunk.extra.take().unwrap_or_default();
        extra.recv.clear();
        if rp || rt {
            let get = |v: &[i32], on: bool, k: usize| if on { v[lo + k] } else { SAME };
            let recv = (0..n).map(|k| (get(c.recv_peer, rp, k), get(c.recv_tag, rt, k)));
            extra.recv.extend(recv);
        }
        extra.dtype.clear();
        if db || cm {
            let get = |v: &[i32], on: bool, k: usize| if on { v[lo + k] } else { SAME };
            let dtype = (0..n).map(|k| (get(c.dtype_bytes, db, k), get(c.commutative, cm, k)));
            extra.dtype.extend(dtype);
        }
        extra.requests.assign_range(&c.requests, lo, hi);
        extra.send_counts.assign_range(&c.send_counts, lo, hi);
        extra.recv_counts.assign_range(&c.recv_counts, lo, hi);
        chunk.extra = Some(extra);
        chunk
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Trace row number of row `i`.
    #[inline]
    pub fn id(&self, i: usize) -> u64 {
        if self.ids.is_empty() {
            self.first_id + i as u64
        } else {
            self.ids[i]
        }
    }

    /// (recv_peer, recv_tag) of row `i`.
    pub fn recv(&self, i: usize) -> (i32, i32) {
        let recv = self.extra.as_ref().and_then(|e| e.recv.get(i));
        recv.copied().unwrap_or((SAME, SAME))
    }

    /// (dtype_bytes, commutative) of row `i` (SAME: not recorded).
    pub fn dtype(&self, i: usize) -> (i32, i32) {
        let d = self.extra.as_ref().and_then(|e| e.dtype.get(i));
        d.copied().unwrap_or((SAME, SAME))
    }

    fn requests(&self, i: usize) -> &[i64] {
        self.extra.as_ref().map_or(&[], |e| e.requests.get(i))
    }

    fn send_counts(&self, i: usize) -> &[i64] {
        self.extra.as_ref().map_or(&[], |e| e.send_counts.get(i))
    }

    fn recv_counts(&self, i: usize) -> &[i64] {
        self.extra.as_ref().map_or(&[], |e| e.recv_counts.get(i))
    }
}

/// Checks rows of one rank (`after`: the seq of its previous row); the message names the
/// trace row.
pub fn validate(rank: u32, ranks: u32, after: Option<i64>, chunk: &Chunk) -> Result<(), String> {
    let mut prev = after;
    for (i, row) in chunk.rows.iter().enumerate() {
        let id = chunk.id(i);
        let at = |m: String| format!("row {id} (rank {rank}, seq {}): {m}", row.seq);
        if prev.is_some_and(|p| row.seq <= p) {
            return Err(at(format!(
                "seq not increasing within the rank (previous {})",
                prev.unwrap_or_default()
            )));
        }
        prev = Some(row.seq);
        let op = Op::from_code(row.op).ok_or_else(|| at(format!("unknown op code {}", row.op)))?;
        if row.t_end < row.t_start {
            return Err(at("t_end_ns < t_start_ns".into()));
        }
        if row.peer >= 0 && row.peer as u32 >= ranks && op.is_p2p() {
            return Err(at(format!("peer {} is not a rank of the trace", row.peer)));
        }
    }
    Ok(())
}

/// The buffered rows of one rank: the chunk being executed, then the ones fed after it.
/// Fields every row touches come first (`repr(C)` keeps this order: see `RankRt`).
#[derive(Debug, Default)]
#[repr(C)]
pub struct RankRows {
    front: Chunk,
    /// Index of the current (next or executing) row in `front`.
    at: usize,
    /// Rows buffered from the current one on.
    buffered: usize,
    /// No more input will come.
    pub closed: bool,
    later: VecDeque<Chunk>,
    /// The last chunk executed, kept to lend its buffers to the next one fed.
    spare: Chunk,
    /// Seq of the last row fed (chunks must continue it).
    pub last_seq: Option<i64>,
}

impl RankRows {
    pub fn feed(&mut self, chunk: Chunk) {
        if let Some(last) = chunk.rows.last() {
            self.last_seq = Some(last.seq);
            self.buffered += chunk.len();
            if self.at == self.front.len() {
                self.spare = std::mem::replace(&mut self.front, chunk);
                self.at = 0;
            } else {
                self.later.push_back(chunk);
            }
        }
    }

    /// Buffers for the next chunk of this rank (those of one already executed, if any).
    pub fn take_spare(&mut self) -> Chunk {
        std::mem::take(&mut self.spare)
    }

    /// Whether the current row can start (it and its successor are buffered, or it is the
    /// last one); false also when nothing is left.
    #[inline]
    pub fn can_start(&self) -> bool {
        self.buffered >= 2 || (self.closed && self.buffered == 1)
    }

    /// No row left and no input to come.
    #[inline]
    pub fn exhausted(&self) -> bool {
        self.closed && self.buffered == 0
    }

    #[inline]
    pub fn current(&self) -> &Row {
        &self.front.rows[self.at]
    }

    /// The current row, if one is buffered (reports about ranks in any state).
    pub fn current_opt(&self) -> Option<&Row> {
        self.front.rows.get(self.at)
    }

    /// Trace row number of the current row.
    #[inline]
    pub fn current_id(&self) -> u64 {
        self.front.id(self.at)
    }

    /// (recv_peer, recv_tag) of the current row.
    pub fn current_recv(&self) -> (i32, i32) {
        self.front.recv(self.at)
    }

    /// (dtype_bytes, commutative) of the current row (SAME: not recorded).
    pub fn current_dtype(&self) -> (i32, i32) {
        self.front.dtype(self.at)
    }

    pub fn requests(&self) -> &[i64] {
        self.front.requests(self.at)
    }

    pub fn send_counts(&self) -> &[i64] {
        self.front.send_counts(self.at)
    }

    pub fn recv_counts(&self) -> &[i64] {
        self.front.recv_counts(self.at)
    }

    /// Moves past the current row; returns the next row's captured start, if any.
    #[inline]
    pub fn advance(&mut self) -> Option<i64> {
        self.at += 1;
        self.buffered -= 1;
        if self.at == self.front.len() {
            let next = self.later.pop_front()?;
            self.spare = std::mem::replace(&mut self.front, next);
            self.at = 0;
        }
        Some(self.front.rows[self.at].t_start)
    }
}
