//! Arrow record batches of a TRACE file → the engine's columns, in one pass per column.
//!
//! Null encodings (the engine's, see replay_engine::trace): peer null → -2 (MPI_PROC_NULL;
//! -1 stays ANY_SOURCE), root/request/iteration null → -1, tag/comm/bytes/times null → 0,
//! recv_peer/recv_tag null → SAME. A null list is an empty list; null list elements are 0.
//! Op names are normalised (`MPI_Isend` → `isend`) once per dictionary entry.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use replay_engine::trace::{Lists, SAME};
use replay_engine::TraceColumns;

use crate::arrow::{Array, Validity};

pub(crate) const PROC_NULL: i32 = -2;

/// A value type of the engine's columns, converted from any Arrow number.
pub(crate) trait Target: Copy {
    fn from_i64(v: i64) -> Self;
    fn from_f64(v: f64) -> Self;
}

macro_rules! target {
    ($($t:ty),*) => {$(
        impl Target for $t {
            #[inline]
            fn from_i64(v: i64) -> Self {
                v as $t // wraps like numpy's astype did
            }
            #[inline]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
        }
    )*};
}
target!(i32, i64);

impl Target for u32 {
    /// Through i32 like numpy's int32 → uint32 casts did (negative ranks are rejected).
    #[inline]
    fn from_i64(v: i64) -> Self {
        v as i32 as u32
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v as i32 as u32
    }
}

fn unsupported(col: &Array<'_>) -> PyErr {
    PyValueError::new_err(format!(
        "column {} has an unsupported Arrow type (format {:?})",
        col.name(),
        col.format()
    ))
}

#[inline]
fn extend<S: Copy, T: Copy>(
    src: &[S],
    valid: Option<Validity<'_>>,
    fill: T,
    out: &mut Vec<T>,
    conv: impl Fn(S) -> T,
) {
    match valid {
        None => out.extend(src.iter().map(|&v| conv(v))),
        Some(bits) => {
            out.extend(
                src.iter()
                    .enumerate()
                    .map(|(i, &v)| if bits.is_valid(i) { conv(v) } else { fill }),
            )
        }
    }
}

/// Appends an integer (or floating) column as T, nulls as `fill`; a missing column is
/// `rows` fills.
pub(crate) fn append_ints<T: Target>(
    col: Option<Array<'_>>,
    rows: usize,
    fill: T,
    out: &mut Vec<T>,
) -> PyResult<()> {
    let col = match col {
        Some(c) if !c.all_null() => c,
        _ => {
            out.resize(out.len() + rows, fill);
            return Ok(());
        }
    };
    let valid = col.validity();
    match col.format() {
        "c" => extend(col.values::<i8>()?, valid, fill, out, |v| {
            T::from_i64(v.into())
        }),
        "C" => extend(col.values::<u8>()?, valid, fill, out, |v| {
            T::from_i64(v.into())
        }),
        "s" => extend(col.values::<i16>()?, valid, fill, out, |v| {
            T::from_i64(v.into())
        }),
        "S" => extend(col.values::<u16>()?, valid, fill, out, |v| {
            T::from_i64(v.into())
        }),
        "i" => extend(col.values::<i32>()?, valid, fill, out, |v| {
            T::from_i64(v.into())
        }),
        "I" => extend(col.values::<u32>()?, valid, fill, out, |v| {
            T::from_i64(v.into())
        }),
        "l" => extend(col.values::<i64>()?, valid, fill, out, T::from_i64),
        "L" => extend(col.values::<u64>()?, valid, fill, out, |v| {
            T::from_i64(v as i64)
        }),
        "f" => extend(col.values::<f32>()?, valid, fill, out, |v| {
            T::from_f64(v.into())
        }),
        "g" => extend(col.values::<f64>()?, valid, fill, out, T::from_f64),
        _ => return Err(unsupported(&col)),
    }
    Ok(())
}

/// `raw.strip().lower().removeprefix("mpi_")` of the Python side.
pub(crate) fn normalise_op(raw: &str) -> String {
    let lowered = raw.trim().to_lowercase();
    match lowered.strip_prefix("mpi_") {
        Some(rest) => rest.to_string(),
        None => lowered,
    }
}

/// Op name → code; names not in the table count as unknown (code 0, `other`).
pub(crate) struct OpTable {
    codes: HashMap<&'static str, u8>,
}

impl OpTable {
    pub(crate) fn new() -> Self {
        let codes = replay_engine::ops::OP_TABLE
            .iter()
            .map(|&(name, op)| (name, op as u8))
            .collect();
        Self { codes }
    }

    /// The code of a raw op string and whether the name is known.
    pub(crate) fn code(&self, raw: &str) -> (u8, Option<String>) {
        let name = normalise_op(raw);
        match self.codes.get(name.as_str()) {
            Some(&c) => (c, None),
            None => (0, Some(name)),
        }
    }
}

/// The strings of a utf8 / large utf8 (or binary) array, nulls as None.
fn strings<'a>(col: &Array<'a>) -> PyResult<Vec<Option<&'a str>>> {
    let (o, n) = (col.offset(), col.len());
    let offsets: Vec<usize> = match col.format() {
        "u" | "z" => col.buffer::<i32>(1, o + n + 1)?[o..]
            .iter()
            .map(|&v| v.max(0) as usize)
            .collect(),
        "U" | "Z" => col.buffer::<i64>(1, o + n + 1)?[o..]
            .iter()
            .map(|&v| v.max(0) as usize)
            .collect(),
        _ => return Err(unsupported(col)),
    };
    let data = col.buffer::<u8>(2, offsets.last().copied().unwrap_or(0))?;
    let valid = col.validity();
    (0..n)
        .map(|i| {
            if valid.is_some_and(|v| !v.is_valid(i)) {
                return Ok(None);
            }
            std::str::from_utf8(&data[offsets[i]..offsets[i + 1]])
                .map(Some)
                .map_err(|_| PyValueError::new_err(format!("column {}: invalid UTF-8", col.name())))
        })
        .collect()
}

/// Per row `codes[index]` of a dictionary array (any integer index type; a null or
/// out-of-range index is code 0), counting the rows of each index.
fn map_indices(
    col: &Array<'_>,
    codes: &[u8],
    counts: &mut [u64],
    out: &mut Vec<u8>,
) -> PyResult<()> {
    fn run<I: Copy>(
        src: &[I],
        valid: Option<Validity<'_>>,
        codes: &[u8],
        counts: &mut [u64],
        out: &mut Vec<u8>,
        idx: impl Fn(I) -> usize,
    ) {
        out.extend(src.iter().enumerate().map(|(i, &v)| {
            let k = idx(v);
            if k < codes.len() && valid.is_none_or(|b| b.is_valid(i)) {
                counts[k] += 1;
                codes[k]
            } else {
                0
            }
        }));
    }
    let valid = col.validity();
    match col.format() {
        "c" => run(col.values::<i8>()?, valid, codes, counts, out, |v| {
            v as usize
        }),
        "C" => run(col.values::<u8>()?, valid, codes, counts, out, |v| {
            v as usize
        }),
        "s" => run(col.values::<i16>()?, valid, codes, counts, out, |v| {
            v as usize
        }),
        "S" => run(col.values::<u16>()?, valid, codes, counts, out, |v| {
            v as usize
        }),
        "i" => run(col.values::<i32>()?, valid, codes, counts, out, |v| {
            v as usize
        }),
        "I" => run(col.values::<u32>()?, valid, codes, counts, out, |v| {
            v as usize
        }),
        "l" => run(col.values::<i64>()?, valid, codes, counts, out, |v| {
            v as usize
        }),
        "L" => run(col.values::<u64>()?, valid, codes, counts, out, |v| {
            v as usize
        }),
        _ => return Err(unsupported(col)),
    }
    Ok(())
}

/// Appends the op codes of a string or dictionary-of-strings column; unknown names are
/// counted in `unknown` when given. A null op is code 0 and not counted.
pub(crate) fn append_ops(
    col: Option<Array<'_>>,
    rows: usize,
    table: &OpTable,
    out: &mut Vec<u8>,
    unknown: Option<&mut HashMap<String, u64>>,
) -> PyResult<()> {
    let col = match col {
        Some(c) if !c.all_null() => c,
        _ => {
            out.resize(out.len() + rows, 0);
            return Ok(());
        }
    };
    // One code per distinct name (the dictionary, or the strings seen), then per row.
    let (names, plain_idx): (Vec<Option<&str>>, Option<Vec<u32>>) = match col.dictionary() {
        Some(dict) => (strings(&dict)?, None),
        None => {
            let values = strings(&col)?;
            let mut seen: HashMap<Option<&str>, u32> = HashMap::new();
            let mut names = Vec::new();
            let idx = values
                .iter()
                .map(|&v| {
                    *seen.entry(v).or_insert_with(|| {
                        names.push(v);
                        names.len() as u32 - 1
                    })
                })
                .collect();
            (names, Some(idx))
        }
    };
    let mapped: Vec<(u8, Option<String>)> = names
        .iter()
        .map(|n| n.map_or((0, None), |s| table.code(s)))
        .collect();
    let codes: Vec<u8> = mapped.iter().map(|m| m.0).collect();
    let mut counts = vec![0u64; names.len()];
    match plain_idx {
        None => map_indices(&col, &codes, &mut counts, out)?,
        Some(idx) => out.extend(idx.iter().map(|&k| {
            counts[k as usize] += 1;
            codes[k as usize]
        })),
    }
    if let Some(unknown) = unknown {
        for ((n, (_, name)), k) in names.iter().zip(&mapped).zip(counts) {
            if let (Some(name), true, true) = (name, k > 0, n.is_some()) {
                *unknown.entry(name.clone()).or_default() += k;
            }
        }
    }
    Ok(())
}

/// A list column in CSR form; `offsets` stays empty while every list so far is empty (the
/// engine reads empty offsets as "all lists empty").
#[derive(Default)]
pub(crate) struct Csr {
    pub(crate) offsets: Vec<i64>,
    pub(crate) values: Vec<i64>,
    rows: usize,
    /// Reused: the list offsets and child values of the batch being appended.
    spans: Vec<i64>,
    child: Vec<i64>,
}

impl Csr {
    pub(crate) fn clear(&mut self) {
        self.offsets.clear();
        self.values.clear();
        self.rows = 0;
    }

    /// Appends a list column (a null list is empty; null elements are 0).
    pub(crate) fn append(&mut self, col: Option<Array<'_>>, rows: usize) -> PyResult<()> {
        let col = match col {
            Some(c) if !c.all_null() => c,
            _ => {
                self.pad(rows);
                return Ok(());
            }
        };
        let (o, n) = (col.offset(), col.len());
        self.spans.clear();
        match col.format() {
            "+l" => self.spans.extend(
                col.buffer::<i32>(1, o + n + 1)?[o..]
                    .iter()
                    .map(|&v| i64::from(v)),
            ),
            "+L" => self
                .spans
                .extend_from_slice(&col.buffer::<i64>(1, o + n + 1)?[o..]),
            _ => return Err(unsupported(&col)),
        }
        let bad = || PyValueError::new_err(format!("column {}: bad list offsets", col.name()));
        let children = col.children();
        let child = children.first().ok_or_else(bad)?;
        let (first, last) = (self.spans[0], self.spans[n]);
        if first < 0 || last < first || last as usize > child.len() {
            return Err(bad());
        }
        if first == last {
            self.pad(rows);
            return Ok(());
        }
        self.child.clear();
        append_ints(Some(*child), child.len(), 0i64, &mut self.child)?;
        if self.offsets.is_empty() {
            self.offsets.resize(self.rows + 1, 0);
        }
        let valid = col.validity();
        for i in 0..n {
            let (lo, hi) = (self.spans[i], self.spans[i + 1]);
            if hi > lo && valid.is_none_or(|v| v.is_valid(i)) {
                if lo < first || hi > last {
                    return Err(bad());
                }
                self.values
                    .extend_from_slice(&self.child[lo as usize..hi as usize]);
            }
            self.offsets.push(self.values.len() as i64);
        }
        self.rows += rows;
        Ok(())
    }

    /// `rows` empty lists.
    fn pad(&mut self, rows: usize) {
        if !self.offsets.is_empty() {
            let last = self.values.len() as i64;
            self.offsets.resize(self.offsets.len() + rows, last);
        }
        self.rows += rows;
    }

    pub(crate) fn lists(&self) -> Lists<'_> {
        Lists {
            offsets: &self.offsets,
            values: &self.values,
        }
    }

    /// Moves the CSR out (offsets, values).
    pub(crate) fn into_parts(self) -> (Vec<i64>, Vec<i64>) {
        (self.offsets, self.values)
    }
}

/// The columns of a record batch (a struct array) by name.
pub(crate) fn by_name<'a>(batch: &Array<'a>) -> PyResult<HashMap<&'a str, Array<'a>>> {
    if batch.format() != "+s" {
        return Err(PyValueError::new_err(
            "expected a record batch (Arrow struct array)",
        ));
    }
    Ok(batch
        .children()
        .into_iter()
        .map(|c| (c.name(), c))
        .collect())
}

/// Engine columns owned by the binding (built from Arrow batches).
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
        self.rank.clear();
        self.op.clear();
        self.lists.iter_mut().for_each(Csr::clear);
    }

    /// Appends a batch's rows. `rank` is read only when `with_rank` (a stream's chunks
    /// are one rank's rows, the engine ignores the column); negative ranks are an error
    /// naming the row (`first_row` = row number of the batch's first row).
    pub(crate) fn append(
        &mut self,
        cols: &HashMap<&str, Array<'_>>,
        rows: usize,
        ops: &OpTable,
        unknown: Option<&mut HashMap<String, u64>>,
        with_rank: bool,
        first_row: u64,
    ) -> PyResult<()> {
        let get = |name: &str| cols.get(name).copied();
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
            requests: self.lists[0].lists(),
            send_counts: self.lists[1].lists(),
            recv_counts: self.lists[2].lists(),
            ..Default::default()
        }
    }
}
