//! SimGrid time-independent trace (TiT) lines → TRACE columns (the semantics of
//! tailcast.traces.tit_import, which documents them; SimGrid 3.32 smpi_replay.cpp for the
//! argument layouts). Lines are parsed a chunk at a time: per-rank state (clock, request
//! ids, pending requests) carries over, so a file streams through in bounded memory.

use std::collections::HashMap;

use super::token_cache::{Span, TokenCache, MAX_TOKENS};
use crate::columns::Rows;

/// SimGrid datatype ids → sizes in bytes (smpi_datatype.cpp, ids 0..24).
const TYPE_SIZES: [i64; 25] = [
    8, 4, 1, 2, 8, 4, 1, 8, 1, 1, 2, 4, 8, 8, 16, 4, 1, 1, 2, 4, 8, 1, 2, 4, 8,
];

/// The op names rows can hold (the `op` column is a dictionary over these).
pub const OP_NAMES: [&str; 24] = [
    "init",
    "finalize",
    "send",
    "isend",
    "recv",
    "irecv",
    "wait",
    "test",
    "waitall",
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "alltoall",
    "allgather",
    "gather",
    "scatter",
    "alltoallv",
    "gatherv",
    "allgatherv",
    "scatterv",
    "reduce_scatter",
    "comm_split",
    "comm_dup",
];

/// The `op` code of `name`, one of OP_NAMES; `const { op_code("isend") }` where the name
/// is known (a search of OP_NAMES per row cost a tenth of a TiT conversion's parse).
const fn op_code(name: &str) -> u8 {
    let mut i = 0;
    while i < OP_NAMES.len() {
        let (a, b) = (OP_NAMES[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return i as u8;
            }
        }
        i += 1;
    }
    panic!("not an op name")
}

/// The optional columns each action may set (beyond rank, seq, op, comm and times): a file
/// whose actions set none of a column leaves it out.
pub fn columns_of(action: &str) -> &'static [&'static str] {
    match action {
        "send" | "isend" | "recv" | "irecv" => {
            &["peer", "tag", "request", "send_bytes", "recv_bytes"]
        }
        "wait" => &["request"],
        "waitall" => &["requests"],
        "bcast" | "reduce" => &["root", "send_bytes", "dtype_bytes"],
        "allreduce" => &["send_bytes", "dtype_bytes"],
        "alltoall" | "allgather" => &["send_bytes", "recv_bytes", "dtype_bytes"],
        "gather" | "scatter" => &["root", "send_bytes", "recv_bytes", "dtype_bytes"],
        "alltoallv" => &["send_counts", "recv_counts", "send_bytes", "recv_bytes"],
        "gatherv" => &["root", "send_bytes", "recv_counts", "recv_bytes"],
        "allgatherv" => &["send_bytes", "recv_counts", "recv_bytes"],
        "scatterv" => &["root", "send_counts", "send_bytes", "recv_bytes"],
        "reducescatter" => &["recv_counts", "send_bytes", "recv_bytes", "dtype_bytes"],
        _ => &[],
    }
}

/// One row's optional values.
#[derive(Default)]
struct Call<'a> {
    peer: Option<i64>,
    root: Option<i64>,
    tag: Option<i64>,
    send_bytes: Option<i64>,
    recv_bytes: Option<i64>,
    request: Option<i64>,
    dtype_bytes: Option<i64>,
    requests: Option<&'a [i64]>,
    send_counts: Option<&'a [i64]>,
    recv_counts: Option<&'a [i64]>,
}

#[derive(Default)]
struct RankState {
    type_size: i64,
    clock_ns: f64,
    /// `clock_ns` rounded as Python's round() does (half to even), the time of the rank's
    /// calls: rounded when the clock moves, not per call (a libm call per row).
    now_ns: i64,
    next_request: i64,
    seq: i64,
    /// Pending requests and their (src, dst, tag), in creation order: a rank has a few,
    /// so a wait searches them (a map of queues cost a tenth of a TiT line's parse).
    pending: Vec<(i64, (i64, i64, i64))>,
}

/// A line that cannot be read: its number and why.
#[derive(Debug)]
pub struct LineError {
    pub line: u64,
    pub message: String,
}

/// The tokens of a line (`str::split_ascii_whitespace`'s), found by one loop over its
/// bytes: the general splitter cost a tenth of a TiT line's parse.
struct Tokens<'a> {
    text: &'a str,
    at: usize,
}

/// `u8::is_ascii_whitespace` as one comparison and one bit test.
fn blank(b: u8) -> bool {
    const BLANKS: u64 = 1 << b'\t' | 1 << b'\n' | 1 << 0x0c | 1 << b'\r' | 1 << b' ';
    b <= b' ' && BLANKS >> b & 1 == 1
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let b = self.text.as_bytes();
        let mut i = self.at;
        while i < b.len() && blank(b[i]) {
            i += 1;
        }
        let start = i;
        while i < b.len() && !blank(b[i]) {
            i += 1;
        }
        self.at = i;
        // (ASCII whitespace and the ends are character boundaries)
        (i > start).then(|| &self.text[start..i])
    }
}

type Parsed<T> = Result<T, String>;

/// The value of `s` when it is 1 to 18 ASCII digits (no overflow): the usual token,
/// read without `str::parse`'s generality (signs, overflow checks).
fn digits(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 18 {
        return None;
    }
    let mut v = 0i64;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + i64::from(d);
    }
    Some(v)
}

// int, count, arg, mul, int32 and TitParser::dt are inlined: returning a Result<_, String> through memory
// cost more than the usual token's parse.
#[inline(always)]
fn int(s: &str) -> Parsed<i64> {
    match digits(s) {
        Some(v) => Ok(v),
        None => s
            .parse::<i64>()
            .map_err(|_| format!("{s:?} is not an integer")),
    }
}

/// Exact powers of ten as f64.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `s` as f64 (`str::parse`'s value). The usual form, `<digits>[.<digits>][e<digits>]`
/// of at most 15 significant digits and a decimal exponent within ±22, is one exact
/// integer times or over one exact power of ten: one rounding, the correctly rounded
/// value (Clinger's fast path, which `str::parse` takes too, after its general scan).
fn number(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let (mut mantissa, mut i, mut figures, mut scale) = (0u64, 0, 0, 0i32);
    while i < b.len() && b[i].is_ascii_digit() {
        mantissa = mantissa * 10 + u64::from(b[i] - b'0');
        (i, figures) = (i + 1, figures + 1);
        if figures > 15 {
            return s.parse().ok();
        }
    }
    if i > 0 && i < b.len() && b[i] == b'.' {
        i += 1;
        let first = i;
        while i < b.len() && b[i].is_ascii_digit() {
            mantissa = mantissa * 10 + u64::from(b[i] - b'0');
            (i, figures, scale) = (i + 1, figures + 1, scale - 1);
            if figures > 15 {
                return s.parse().ok();
            }
        }
        if i == first {
            return s.parse().ok();
        }
    }
    if figures > 0 && i + 1 < b.len() && b[i] | 0x20 == b'e' {
        let first = i + 1;
        let mut exponent = 0i32;
        i = first;
        while i < b.len() && b[i].is_ascii_digit() && i - first < 3 {
            exponent = exponent * 10 + i32::from(b[i] - b'0');
            i += 1;
        }
        scale += exponent;
    }
    if figures == 0 || i != b.len() || scale.unsigned_abs() > 22 {
        return s.parse().ok();
    }
    let power = POW10[scale.unsigned_abs() as usize];
    Some(if scale >= 0 {
        mantissa as f64 * power
    } else {
        mantissa as f64 / power
    })
}

/// Python's int(float(s)): a count written as a float (SimGrid writes 1e6).
#[inline(always)]
fn count(s: &str) -> Parsed<i64> {
    if s.len() <= 15 {
        // Integers of up to 15 digits are exact as floats: the same value, parsed faster.
        if let Some(v) = digits(s) {
            return Ok(v);
        }
        if let Ok(v) = s.parse::<i64>() {
            return Ok(v);
        }
    }
    let v = number(s).ok_or_else(|| format!("{s:?} is not a number"))?;
    if !v.is_finite() || v.abs() >= 9.2e18 {
        return Err(format!("{s:?} is out of range"));
    }
    Ok(v.trunc() as i64)
}

#[inline(always)]
fn arg<'a>(a: &[&'a str], i: usize) -> Parsed<&'a str> {
    a.get(i)
        .copied()
        .ok_or_else(|| format!("argument {} is missing", i + 1))
}

#[inline(always)]
fn mul(a: i64, b: i64) -> Parsed<i64> {
    a.checked_mul(b)
        .ok_or_else(|| "size out of range".to_string())
}

/// Parses TiT lines of `ranks` ranks into rows.
pub struct TitParser {
    ranks: usize,
    ns_per_flop: f64,
    states: Vec<RankState>,
    pub rows: Rows,
    /// Calls of actions not mapped, by name.
    pub unsupported: HashMap<String, u64>,
    scratch: Vec<i64>,
    scratch2: Vec<i64>,
    tokens: TokenCache,
}

impl TitParser {
    /// A parser of a trace of `ranks` ranks whose `compute` amounts run at `flops_per_s`
    /// (which must be positive).
    pub fn new(ranks: usize, flops_per_s: f64) -> Result<Self, String> {
        if flops_per_s.is_nan() || flops_per_s <= 0.0 {
            return Err("flops_per_s must be positive".into());
        }
        Ok(Self {
            ranks,
            ns_per_flop: 1e9 / flops_per_s,
            states: (0..ranks)
                .map(|_| RankState {
                    type_size: 1,
                    ..Default::default()
                })
                .collect(),
            rows: Rows::default(),
            unsupported: HashMap::new(),
            scratch: Vec::new(),
            scratch2: Vec::new(),
            tokens: TokenCache::default(),
        })
    }

    /// Parses one line (`number` for errors); `expect_rank`: the rank of a per-rank file.
    pub fn line(
        &mut self,
        text: &str,
        number: u64,
        expect_rank: Option<usize>,
    ) -> Result<(), LineError> {
        let err = |message: String| LineError {
            line: number,
            message,
        };
        // A line's tokens, from the cache when its text was read before. Most lines have
        // a few: no allocation for them.
        let mut found: [&str; MAX_TOKENS] = [""; MAX_TOKENS];
        let mut more: Vec<&str> = Vec::new();
        let bytes = text.as_bytes();
        let tokens: &[&str] = if let Some(spans) = self.tokens.get(bytes) {
            for (token, &(start, end)) in found.iter_mut().zip(spans) {
                *token = &text[usize::from(start)..usize::from(end)];
            }
            &found[..spans.len()]
        } else {
            let mut spans: [Span; MAX_TOKENS] = [(0, 0); MAX_TOKENS];
            let mut n = 0;
            let mut scan = Tokens { text, at: 0 };
            while let Some(token) = scan.next() {
                if n < MAX_TOKENS {
                    found[n] = token;
                    // (offsets of a line too long to keep wrap; `put` ignores such a line)
                    spans[n] = ((scan.at - token.len()) as u8, scan.at as u8);
                } else {
                    if more.is_empty() {
                        more.extend_from_slice(&found);
                    }
                    more.push(token);
                }
                n += 1;
            }
            if more.is_empty() {
                self.tokens.put(bytes, &spans[..n]);
                &found[..n]
            } else {
                &more
            }
        };
        let Some((&first, rest)) = tokens.split_first() else {
            return Ok(());
        };
        if first.starts_with('#') {
            return Ok(());
        }
        let Ok(rank) = int(first) else {
            let line = text.trim();
            return Err(err(format!("expected '<rank> <action> …', got {line:?}")));
        };
        let Some((&action, args)) = rest.split_first() else {
            return Err(err("missing action after rank".into()));
        };
        let belongs = rank >= 0
            && (rank as usize) < self.ranks
            && expect_rank.is_none_or(|e| e as i64 == rank);
        if !belongs {
            return Err(err(format!("rank {rank} does not belong here")));
        }
        self.action(rank as usize, action, args)
            .map_err(|why| err(format!("bad arguments for {action:?}: {why}")))
    }

    #[inline(always)]
    fn dt(&self, rank: usize, a: &[&str], index: usize) -> Parsed<i64> {
        match a.get(index) {
            Some(s) => {
                let id = int(s)?;
                usize::try_from(id)
                    .ok()
                    .and_then(|i| TYPE_SIZES.get(i).copied())
                    .ok_or_else(|| format!("unknown SimGrid datatype id {id}"))
            }
            None => Ok(self.states[rank].type_size),
        }
    }

    fn counts(
        &mut self,
        a: &[&str],
        range: std::ops::Range<usize>,
        dt: i64,
        second: bool,
    ) -> Parsed<()> {
        let n = self.ranks;
        let items = a.get(range.clone()).unwrap_or(&[]);
        if items.len() != n {
            return Err(format!("expected {n} per-rank counts, got {}", items.len()));
        }
        let out = if second {
            &mut self.scratch2
        } else {
            &mut self.scratch
        };
        out.clear();
        for s in items {
            out.push(mul(int(s)?, dt)?);
        }
        Ok(())
    }

    fn push(&mut self, rank: usize, op: u8, call: &Call<'_>) {
        let st = &mut self.states[rank];
        let r = &mut self.rows;
        r.rank.push(rank as i64);
        r.seq.push(st.seq);
        st.seq += 1;
        r.op.push(u32::from(op));
        r.time_ns.push(st.now_ns);
        r.peer.push(call.peer);
        r.root.push(call.root);
        r.tag.push(call.tag);
        r.send_bytes.push(call.send_bytes);
        r.recv_bytes.push(call.recv_bytes);
        r.request.push(call.request);
        r.dtype_bytes.push(call.dtype_bytes);
        r.requests.push(call.requests);
        r.send_counts.push(call.send_counts);
        r.recv_counts.push(call.recv_counts);
    }

    fn action(&mut self, rank: usize, name: &str, a: &[&str]) -> Parsed<()> {
        let n = self.ranks;
        let sum = |v: &[i64]| v.iter().try_fold(0i64, |s, &x| s.checked_add(x));
        // (the arms are tried in order: the actions of most lines first)
        match name {
            "compute" | "sleep" => {
                let amount =
                    number(arg(a, 0)?).ok_or_else(|| format!("{:?} is not a number", a[0]))?;
                if amount < 0.0 {
                    return Err("negative duration".into());
                }
                if !amount.is_finite() {
                    return Err("not a finite duration".into());
                }
                let per = if name == "compute" {
                    self.ns_per_flop
                } else {
                    1e9
                };
                let st = &mut self.states[rank];
                st.clock_ns += amount * per;
                st.now_ns = st.clock_ns.round_ties_even() as i64;
            }
            "send" | "isend" | "recv" | "irecv" => {
                let peer = int(arg(a, 0)?)?;
                let tag = int(arg(a, 1)?)?;
                let size = mul(count(arg(a, 2)?)?, self.dt(rank, a, 3)?)?;
                let (peer32, tag32) = (int32(peer)?, int32(tag)?);
                let sending = name.ends_with("send");
                let st = &mut self.states[rank];
                let request = if name.starts_with('i') {
                    let req = st.next_request;
                    st.next_request += 1;
                    let r = rank as i64;
                    let key = if sending {
                        (r, peer, tag)
                    } else {
                        (peer, r, tag)
                    };
                    st.pending.push((req, key));
                    Some(req)
                } else {
                    None
                };
                let call = Call {
                    peer: Some(peer32),
                    tag: Some(tag32),
                    request,
                    send_bytes: sending.then_some(size),
                    recv_bytes: (!sending).then_some(size),
                    ..Default::default()
                };
                let op = match (sending, request.is_some()) {
                    (true, true) => const { op_code("isend") },
                    (true, false) => const { op_code("send") },
                    (false, true) => const { op_code("irecv") },
                    (false, false) => const { op_code("recv") },
                };
                self.push(rank, op, &call);
            }
            "wait" => {
                let request = self.find(rank, a)?;
                self.push(
                    rank,
                    const { op_code("wait") },
                    &Call {
                        request,
                        ..Default::default()
                    },
                );
            }
            "waitall" => {
                let st = &mut self.states[rank];
                self.scratch.clear();
                self.scratch
                    .extend(st.pending.drain(..).map(|(req, _)| req));
                let done = std::mem::take(&mut self.scratch);
                self.push(
                    rank,
                    const { op_code("waitall") },
                    &Call {
                        requests: Some(&done),
                        ..Default::default()
                    },
                );
                self.scratch = done;
            }
            "init" => {
                self.states[rank].type_size = if a.is_empty() { 1 } else { 8 };
                self.push(rank, const { op_code("init") }, &Call::default());
            }
            "finalize" | "barrier" | "test" | "comm_split" | "comm_dup" => {
                self.push(rank, op_code(name), &Call::default());
            }
            "bcast" => {
                let root = if a.len() > 1 {
                    Some(int32(int(a[1])?)?)
                } else {
                    Some(0)
                };
                let dt = self.dt(rank, a, 2)?;
                let bytes = mul(count(arg(a, 0)?)?, dt)?;
                self.push(
                    rank,
                    const { op_code("bcast") },
                    &Call {
                        root,
                        send_bytes: Some(bytes),
                        dtype_bytes: Some(int32(dt)?),
                        ..Default::default()
                    },
                );
            }
            "reduce" => {
                let root = if a.len() > 2 {
                    Some(int32(int(a[2])?)?)
                } else {
                    Some(0)
                };
                let dt = self.dt(rank, a, 3)?;
                let bytes = mul(count(arg(a, 0)?)?, dt)?;
                self.push(
                    rank,
                    const { op_code("reduce") },
                    &Call {
                        root,
                        send_bytes: Some(bytes),
                        dtype_bytes: Some(int32(dt)?),
                        ..Default::default()
                    },
                );
            }
            "allreduce" => {
                let dt = self.dt(rank, a, 2)?;
                let bytes = mul(count(arg(a, 0)?)?, dt)?;
                self.push(
                    rank,
                    const { op_code("allreduce") },
                    &Call {
                        send_bytes: Some(bytes),
                        dtype_bytes: Some(int32(dt)?),
                        ..Default::default()
                    },
                );
            }
            "alltoall" | "allgather" => {
                let s = mul(count(arg(a, 0)?)?, self.dt(rank, a, 2)?)?;
                let rdt = self.dt(rank, a, 3)?;
                let r = mul(count(arg(a, 1)?)?, rdt)?;
                let call = Call {
                    send_bytes: Some(s),
                    recv_bytes: Some(r),
                    dtype_bytes: Some(int32(rdt)?),
                    ..Default::default()
                };
                self.push(rank, op_code(name), &call);
            }
            "gather" | "scatter" => {
                let root = if a.len() > 2 { int32(int(a[2])?)? } else { 0 };
                let s = mul(count(arg(a, 0)?)?, self.dt(rank, a, 3)?)?;
                let rdt = self.dt(rank, a, 4)?;
                let r = mul(count(arg(a, 1)?)?, rdt)?;
                let call = Call {
                    root: Some(root),
                    send_bytes: Some(s),
                    recv_bytes: Some(r),
                    dtype_bytes: Some(int32(rdt)?),
                    ..Default::default()
                };
                self.push(rank, op_code(name), &call);
            }
            "alltoallv" => {
                let (dt1, dt2) = (self.dt(rank, a, 2 + 2 * n)?, self.dt(rank, a, 3 + 2 * n)?);
                self.counts(a, 1..1 + n, dt1, false)?;
                self.counts(a, 2 + n..2 + 2 * n, dt2, true)?;
                let (sc, rc) = (
                    std::mem::take(&mut self.scratch),
                    std::mem::take(&mut self.scratch2),
                );
                let call = Call {
                    send_counts: Some(&sc),
                    recv_counts: Some(&rc),
                    send_bytes: Some(sum(&sc).ok_or("size out of range")?),
                    recv_bytes: Some(sum(&rc).ok_or("size out of range")?),
                    ..Default::default()
                };
                self.push(rank, op_code(name), &call);
                (self.scratch, self.scratch2) = (sc, rc);
            }
            "gatherv" | "allgatherv" => {
                let gatherv = name == "gatherv";
                let tail = a.get(1 + n..).unwrap_or(&[]);
                let root = if gatherv && !tail.is_empty() {
                    int32(int(tail[0])?)?
                } else {
                    0
                };
                let dt = self.dt(rank, tail, if gatherv { 1 } else { 0 })?;
                self.counts(a, 1..1 + n, dt, false)?;
                let rc = std::mem::take(&mut self.scratch);
                let call = Call {
                    root: gatherv.then_some(root),
                    send_bytes: Some(mul(count(arg(a, 0)?)?, dt)?),
                    recv_counts: Some(&rc),
                    recv_bytes: Some(sum(&rc).ok_or("size out of range")?),
                    ..Default::default()
                };
                self.push(rank, op_code(name), &call);
                self.scratch = rc;
            }
            "scatterv" => {
                let ts = self.states[rank].type_size;
                self.counts(a, 0..n, ts, false)?;
                let sc = std::mem::take(&mut self.scratch);
                let root = if a.len() > n + 1 {
                    int32(int(a[n + 1])?)?
                } else {
                    0
                };
                let call = Call {
                    root: Some(root),
                    send_counts: Some(&sc),
                    send_bytes: Some(sum(&sc).ok_or("size out of range")?),
                    recv_bytes: Some(mul(count(arg(a, n)?)?, ts)?),
                    ..Default::default()
                };
                self.push(rank, const { op_code("scatterv") }, &call);
                self.scratch = sc;
            }
            "reducescatter" => {
                let dt = self.dt(rank, a, n + 1)?;
                self.counts(a, 0..n, dt, false)?;
                let amount = arg(a, n)?; // the computation amount must be a number
                amount
                    .parse::<f64>()
                    .map_err(|_| format!("{amount:?} is not a number"))?;
                let rc = std::mem::take(&mut self.scratch);
                let call = Call {
                    recv_counts: Some(&rc),
                    send_bytes: Some(sum(&rc).ok_or("size out of range")?),
                    recv_bytes: Some(rc[rank]),
                    dtype_bytes: Some(int32(dt)?),
                    ..Default::default()
                };
                self.push(rank, const { op_code("reduce_scatter") }, &call);
                self.scratch = rc;
            }
            other => *self.unsupported.entry(other.to_string()).or_default() += 1,
        }
        Ok(())
    }

    /// The pending request a wait names by (src, dst, tag), else the oldest.
    fn find(&mut self, rank: usize, a: &[&str]) -> Parsed<Option<i64>> {
        let at = if a.len() >= 3 {
            let key = (int(a[0])?, int(a[1])?, int(a[2])?);
            self.states[rank].pending.iter().position(|p| p.1 == key)
        } else {
            (!self.states[rank].pending.is_empty()).then_some(0)
        };
        Ok(at.map(|i| self.states[rank].pending.remove(i).0))
    }
}

/// `v`, checked to fit the 32-bit columns (ranks, tags, datatype sizes).
#[inline(always)]
fn int32(v: i64) -> Parsed<i64> {
    i32::try_from(v)
        .map(i64::from)
        .map_err(|_| format!("{v} does not fit a 32-bit rank or tag"))
}

/// The largest rank + 1 of a single-file trace's lines (its rank count); an error names
/// the first line whose first token is not a non-negative integer.
pub(crate) fn count_ranks(text: &str, first_line: u64, top: &mut i64) -> Result<(), LineError> {
    for (i, line) in text.lines().enumerate() {
        let Some(first) = line.split_ascii_whitespace().next() else {
            continue;
        };
        if first.starts_with('#') {
            continue;
        }
        match first.parse::<i64>() {
            Ok(r) if r >= 0 => *top = (*top).max(r),
            _ => {
                return Err(LineError {
                    line: first_line + i as u64,
                    message: format!("expected a rank, got {first:?}"),
                })
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(ranks: usize, text: &str) -> TitParser {
        let mut p = TitParser::new(ranks, 1e9).unwrap();
        for (i, line) in text.lines().enumerate() {
            p.line(line, i as u64 + 1, None).unwrap();
        }
        p
    }

    #[test]
    fn halo_step_and_clock() {
        let p = parse(
            2,
            "0 init\n0 compute 1.5\n0 irecv 1 1 8192\n0 isend 1 1 8192\n0 compute 1\n0 waitall\n",
        );
        let r = &p.rows;
        assert_eq!(
            r.op.iter()
                .map(|&o| OP_NAMES[o as usize])
                .collect::<Vec<_>>(),
            ["init", "irecv", "isend", "waitall"]
        );
        assert_eq!(r.time_ns, [0, 2, 2, 2]); // 1.5 ns rounds half to even; 2.5 → 2
        assert_eq!(r.request.values[1..3], [0, 1]);
        assert_eq!(r.requests.offsets, [0, 0, 0, 0, 2]);
        assert_eq!(r.requests.values, [0, 1]);
        assert_eq!(r.recv_bytes.valid, [false, true, false, false]);
    }

    #[test]
    fn waits_take_the_named_else_the_oldest_request() {
        let p = parse(
            3,
            "0 isend 1 5 8\n0 irecv 2 5 8\n0 isend 1 5 8\n0 wait 0 1 5\n0 wait 0 1 7\n\
             0 wait\n0 isend 2 1 8\n0 waitall\n0 wait\n",
        );
        let r = &p.rows;
        assert_eq!(r.request.values[3..7], [0, 0, 1, 3]);
        assert_eq!(r.request.valid[3..7], [true, false, true, true]);
        assert_eq!(r.requests.values, [2, 3]);
        assert!(!r.request.valid[8]);
    }

    #[test]
    fn absent_columns_stay_empty() {
        let mut p = TitParser::new(2, 1e9).unwrap();
        p.rows
            .skip_absent(&["peer".to_string(), "requests".to_string()]);
        for (i, line) in ["1 isend 0 1 8", "0 irecv 1 1 8", "1 waitall"]
            .iter()
            .enumerate()
        {
            p.line(line, i as u64 + 1, None).unwrap();
        }
        let r = &p.rows;
        assert_eq!(
            (r.peer.values.as_slice(), r.peer.valid.len()),
            (&[0, 1, 0][..], 3)
        );
        assert_eq!(r.requests.offsets, [0, 0, 0, 1]);
        assert!(r.tag.values.is_empty() && r.tag.valid.is_empty());
        assert!(r.recv_counts.valid.is_empty() && r.recv_counts.offsets == [0]);
        let sorted = r.permuted(&[1, 0, 2]);
        assert_eq!(sorted.peer.values, [1, 0, 0]);
        assert!(sorted.tag.values.is_empty() && sorted.send_counts.valid.is_empty());
    }

    #[test]
    fn blanks_are_ascii_whitespace() {
        for b in 0..=255u8 {
            assert_eq!(blank(b), b.is_ascii_whitespace(), "{b}");
        }
    }

    #[test]
    fn numbers_read_as_str_parse_reads_them() {
        let cases = [
            "1e6",
            "1E6",
            "1000000",
            "0",
            "1.5",
            "0.1",
            "123456789012345",
            "1234567890123456",
            "1e22",
            "1e23",
            "1.5e-3",
            "2.5e1",
            "1e",
            "1e+6",
            "-1",
            ".5",
            "5.",
            "nan",
            "inf",
            "1e300",
            "0.000001",
            "9007199254740993",
            "1x",
            "",
            "e5",
            "12.34e5",
        ];
        for s in cases {
            let want = s.parse::<f64>().ok();
            assert_eq!(number(s).map(f64::to_bits), want.map(f64::to_bits), "{s:?}");
        }
        for s in [
            "0",
            "42",
            "007",
            "-3",
            "+3",
            "999999999999999999",
            "9223372036854775808",
        ] {
            assert_eq!(int(s).ok(), s.parse::<i64>().ok(), "{s:?}");
        }
    }

    #[test]
    fn errors_name_the_line() {
        let mut p = TitParser::new(2, 1e9).unwrap();
        let e = p.line("0 send 1 zero 1e6", 7, None).unwrap_err();
        assert_eq!(e.line, 7);
        assert!(
            e.message.starts_with("bad arguments for \"send\""),
            "{}",
            e.message
        );
        assert!(p.line("3 init", 1, None).is_err());
        assert!(p.line("1 init", 1, Some(0)).is_err());
        assert!(p.line("rank0 init", 1, None).is_err());
        assert!(p.line("   ", 1, None).is_ok() && p.line("# c", 1, None).is_ok());
    }

    #[test]
    fn every_action_sets_only_its_columns() {
        let n = 2;
        let lines = [
            "init",
            "finalize",
            "barrier",
            "test",
            "comm_split",
            "comm_dup",
            "send 1 0 8",
            "isend 1 0 8",
            "recv 1 0 8",
            "irecv 1 0 8",
            "wait",
            "waitall",
            "bcast 8 1",
            "reduce 8 0 1",
            "allreduce 8 0",
            "alltoall 8 8",
            "allgather 8 8",
            "gather 8 8 1",
            "scatter 8 8 0",
            "alltoallv 16 8 8 16 8 8",
            "gatherv 8 4 4 1",
            "allgatherv 8 4 4",
            "scatterv 4 4 8 0",
            "reducescatter 4 4 8",
        ];
        for line in lines {
            let action = line.split(' ').next().unwrap();
            let mut p = TitParser::new(n, 1e9).unwrap();
            p.line("0 isend 1 0 8", 1, None).unwrap(); // something pending for the waits
            p.line(&format!("0 {line}"), 2, None).unwrap();
            let r = &p.rows;
            let allowed = columns_of(action);
            let set = |name: &str, valid: bool| {
                assert!(!valid || allowed.contains(&name), "{action} sets {name}");
            };
            let last = r.op.len() - 1;
            set("peer", r.peer.valid[last]);
            set("root", r.root.valid[last]);
            set("tag", r.tag.valid[last]);
            set("send_bytes", r.send_bytes.valid[last]);
            set("recv_bytes", r.recv_bytes.valid[last]);
            set("request", r.request.valid[last]);
            set("requests", r.requests.valid[last]);
            set("send_counts", r.send_counts.valid[last]);
            set("recv_counts", r.recv_counts.valid[last]);
            set("dtype_bytes", r.dtype_bytes.valid[last]);
        }
    }
}
