//! Arrow record batches of a TRACE file → the engine's columns, in one pass per column.
//!
//! Null encodings (the engine's, see replay_engine::trace): peer null → -2 (MPI_PROC_NULL;
//! -1 stays ANY_SOURCE), root/request/iteration null → -1, tag/comm/bytes/times null → 0,
//! recv_peer/recv_tag null → SAME. A null list is an empty list; null list elements are 0.
//! Op names are normalised (`MPI_Isend` → `isend`) once per dictionary entry.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use replay_engine::trace::SAME;
use replay_engine::TraceColumns;

use crate::arrow::{with_int_values, Array, IntValue, Validity};
pub(crate) use crate::lists::Csr;
pub(crate) use crate::op_names::{append_ops, OpTable};

/// A column's value for every row of a row group, known from its Parquet statistics
/// (min == max, no nulls) so the column need not be decoded.
#[derive(Clone, Debug, FromPyObject)]
pub(crate) enum Constant {
    Int(i64),
    Str(String),
}

/// Where a column's values come from.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    Column(Array<'a>),
    /// Decoded by the native Parquet reader: its name, values and the string dictionary
    /// of its cursor.
    Native(&'a str, &'a parquet_lite::Column, &'a [Vec<u8>]),
    Int(i64),
    Str(&'a str),
    /// Absent from the batch: every value null.
    Null,
}

impl Source<'_> {
    /// Every value null (absent, or a column of nulls).
    pub(crate) fn all_null(&self) -> bool {
        match self {
            Source::Column(c) => c.all_null(),
            Source::Native(_, c, _) => c.all_null(),
            Source::Null => true,
            Source::Int(_) | Source::Str(_) => false,
        }
    }

    /// Whether row `i` holds a value.
    pub(crate) fn is_valid(&self, i: usize) -> bool {
        match self {
            Source::Column(c) => c.validity().is_none_or(|v| v.is_valid(i)),
            Source::Native(_, c, _) => c.is_valid(i),
            Source::Null => false,
            Source::Int(_) | Source::Str(_) => true,
        }
    }
}

/// A record batch's columns by name, and the constant columns of its row group.
pub(crate) struct Batch<'a> {
    columns: HashMap<&'a str, Source<'a>>,
    constants: &'a HashMap<String, Constant>,
    pub(crate) rows: usize,
}

impl<'a> Batch<'a> {
    /// `batch` must be a record batch (struct array); `constants` name columns it lacks.
    pub(crate) fn new(
        batch: &Array<'a>,
        constants: &'a HashMap<String, Constant>,
    ) -> PyResult<Self> {
        if batch.format() != "+s" {
            return Err(PyValueError::new_err(
                "expected a record batch (Arrow struct array)",
            ));
        }
        // A struct array's offset and length apply to its children too.
        let (base, rows) = (batch.offset(), batch.len());
        let columns = batch
            .children()
            .into_iter()
            .map(|c| (c.name(), Source::Column(c.slice(base, rows))))
            .collect();
        Ok(Self {
            columns,
            constants,
            rows: batch.len(),
        })
    }

    /// Rows decoded by the native reader: (name, column, its cursor's dictionary) each.
    pub(crate) fn native(
        columns: impl IntoIterator<Item = (&'a str, &'a parquet_lite::Column, &'a [Vec<u8>])>,
        rows: usize,
        constants: &'a HashMap<String, Constant>,
    ) -> Self {
        let columns = columns
            .into_iter()
            .map(|(name, col, dict)| (name, Source::Native(name, col, dict)))
            .collect();
        Self {
            columns,
            constants,
            rows,
        }
    }

    pub(crate) fn get(&self, name: &str) -> Source<'a> {
        if let Some(&c) = self.columns.get(name) {
            return c;
        }
        match self.constants.get(name) {
            Some(Constant::Int(v)) => Source::Int(*v),
            Some(Constant::Str(s)) => Source::Str(s.as_str()),
            None => Source::Null,
        }
    }
}

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

pub(crate) fn unsupported(col: &Array<'_>) -> PyErr {
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
    src: Source<'_>,
    rows: usize,
    fill: T,
    out: &mut Vec<T>,
) -> PyResult<()> {
    let col = match src {
        Source::Column(c) if !c.all_null() => c,
        Source::Native(name, c, _) if !c.all_null() => {
            return append_native_ints(name, c, fill, out)
        }
        Source::Int(v) => {
            out.resize(out.len() + rows, T::from_i64(v));
            return Ok(());
        }
        Source::Str(_) => return Err(PyValueError::new_err("expected a number, got a string")),
        _ => {
            out.resize(out.len() + rows, fill);
            return Ok(());
        }
    };
    let valid = col.validity();
    with_int_values!(
        col,
        |values| extend(values, valid, fill, out, |v| T::from_i64(v.as_i64())),
        match col.format() {
            "f" => extend(col.values::<f32>()?, valid, fill, out, |v| {
                T::from_f64(v.into())
            }),
            "g" => extend(col.values::<f64>()?, valid, fill, out, T::from_f64),
            _ => return Err(unsupported(&col)),
        }
    );
    Ok(())
}

fn append_native_ints<T: Target>(
    name: &str,
    col: &parquet_lite::Column,
    fill: T,
    out: &mut Vec<T>,
) -> PyResult<()> {
    let parquet_lite::Values::Ints(values) = &col.values else {
        return Err(PyValueError::new_err(format!(
            "column {name} holds strings or lists, expected integers"
        )));
    };
    match &col.valid {
        None => out.extend(values.iter().map(|&v| T::from_i64(v))),
        Some(valid) => {
            out.extend(
                values
                    .iter()
                    .zip(valid)
                    .map(|(&v, &ok)| if ok { T::from_i64(v) } else { fill }),
            )
        }
    }
    Ok(())
}

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
