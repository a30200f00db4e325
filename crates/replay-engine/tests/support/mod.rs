//! The α-β-γ test bench shared by the closed-form tests: one collective per rank replayed
//! through `replay_engine::replay` on the alpha_beta fabric, the algorithm forced as
//! `--coll` does, and exact comparisons with hand-derived times.
#![allow(dead_code)] // each test crate uses part of it

use replay_engine::fabric::schema::Value;
use replay_engine::ops::Op;
use replay_engine::trace::{Lists, SAME};
use replay_engine::TraceColumns;
use replay_engine::{replay, FabricSpec, JobInput, Placement, ReplayOptions};

pub const ALPHA: f64 = 1000.0;
pub const BETA: f64 = 1.0;
pub const GAMMA: f64 = 0.5;
pub const MIB: u64 = 1 << 20;
/// Per-rank block used for p-divisible sizes: n = p · B.
pub const B: u64 = 65_536;

pub fn t(n: u64) -> f64 {
    ALPHA + n as f64 * BETA
}

pub fn g(n: u64) -> f64 {
    n as f64 * GAMMA
}

#[derive(Debug, Clone, Copy)]
pub enum Ports {
    One,
    Unlimited,
}

/// One call of `op` on `p` ranks (root 0) with `send`/`recv` bytes as the trace schema
/// has them, the algorithm forced by `coll`; the simulated time of the slowest rank.
pub fn time(ports: Ports, p: u32, op: Op, send: i64, recv: i64, coll: &str) -> f64 {
    time_typed(ports, p, op, send, recv, SAME, coll)
}

/// As `time`, the rows recording `dtype_bytes` bytes per element (SAME: not recorded,
/// 1-byte elements).
pub fn time_typed(
    ports: Ports,
    p: u32,
    op: Op,
    send: i64,
    recv: i64,
    dtype_bytes: i32,
    coll: &str,
) -> f64 {
    time_lists(ports, p, op, send, recv, dtype_bytes, None, coll)
}

/// One rank's row of per-peer byte lists: (send counts, recv counts).
pub type CountRow = (Vec<i64>, Vec<i64>);

/// As `time_typed`, with the v-collectives' per-peer byte lists: `counts[r]` = (send
/// counts, recv counts) of rank r's row, each one entry per communicator rank.
#[allow(clippy::too_many_arguments)]
pub fn time_lists(
    ports: Ports,
    p: u32,
    op: Op,
    send: i64,
    recv: i64,
    dtype_bytes: i32,
    counts: Option<&[CountRow]>,
    coll: &str,
) -> f64 {
    try_time_lists(ports, p, op, send, recv, dtype_bytes, counts, coll).expect("replay")
}

/// As `time`, the replay's error (e.g. a collective Open MPI refuses) as text.
pub fn try_time(
    ports: Ports,
    p: u32,
    op: Op,
    send: i64,
    recv: i64,
    coll: &str,
) -> Result<f64, String> {
    try_time_lists(ports, p, op, send, recv, SAME, None, coll)
}

#[allow(clippy::too_many_arguments)]
pub fn try_time_lists(
    ports: Ports,
    p: u32,
    op: Op,
    send: i64,
    recv: i64,
    dtype_bytes: i32,
    counts: Option<&[CountRow]>,
    coll: &str,
) -> Result<f64, String> {
    let n = p as usize;
    let csr = |pick: fn(&CountRow) -> &Vec<i64>| {
        let mut offsets = vec![0i64];
        let mut values = Vec::new();
        for row in counts.unwrap_or(&[]) {
            values.extend_from_slice(pick(row));
            offsets.push(values.len() as i64);
        }
        (offsets, values)
    };
    let (so, sv) = csr(|r| &r.0);
    let (ro, rv) = csr(|r| &r.1);
    let (send_counts, recv_counts) = if counts.is_some() {
        (
            Lists {
                offsets: &so,
                values: &sv,
            },
            Lists {
                offsets: &ro,
                values: &rv,
            },
        )
    } else {
        (Lists::default(), Lists::default())
    };
    let rank: Vec<u32> = (0..p).collect();
    let zeros = vec![0i64; n];
    let (ops, peer, root) = (vec![op as u8; n], vec![-2i32; n], vec![0i32; n]);
    let (sb, rb, tag, comm) = (vec![send; n], vec![recv; n], vec![0i32; n], vec![0i32; n]);
    let (req, iter) = (vec![-1i64; n], vec![0i32; n]);
    let dtype = vec![dtype_bytes; n];
    let columns = TraceColumns {
        rank: &rank,
        seq: &zeros,
        op: &ops,
        peer: &peer,
        root: &root,
        send_bytes: &sb,
        recv_bytes: &rb,
        tag: &tag,
        comm: &comm,
        request: &req,
        t_start_ns: &zeros,
        t_end_ns: &zeros,
        iteration: &iter,
        dtype_bytes: &dtype,
        send_counts,
        recv_counts,
        ..TraceColumns::default()
    };
    let k = match ports {
        Ports::One => 1,
        Ports::Unlimited => 0,
    };
    let spec = FabricSpec::from_pairs([
        ("model", Value::from("alpha_beta")),
        ("alpha_us", Value::from(ALPHA / 1000.0)),
        ("beta_ns_per_byte", Value::from(BETA)),
        ("gamma_ns_per_byte", Value::from(GAMMA)),
        ("ports", Value::Int(k)),
    ])
    .expect("spec");
    let options = ReplayOptions {
        compute_scale: 0.0,
        coll_overrides: coll.to_string(),
        ..ReplayOptions::default()
    };
    let job = JobInput {
        columns,
        placement: Placement::Linear { offset: 0 },
        foreground: true,
    };
    let out = replay(&[job], Vec::new(), &spec, &options).map_err(|e| e.to_string())?;
    Ok(out.jobs[0].total_time_ns)
}

pub fn check(what: &str, got: f64, want: f64) {
    let rel = (got - want).abs() / want;
    println!(
        "{what}: engine {got:.1} ns, hand-derived {want:.1} ns ({:+.4} %)",
        rel * 100.0
    );
    assert!(
        rel <= 1e-9,
        "{what}: engine {got} ns, hand-derived {want} ns"
    );
}

/// Both port settings give `want` (contention never arises, or only in the other form).
pub fn both(what: &str, p: u32, op: Op, bytes: i64, coll: &str, want: f64) {
    for ports in [Ports::One, Ports::Unlimited] {
        let got = time(ports, p, op, bytes, bytes, coll);
        check(&format!("{what} p={p} {ports:?}"), got, want);
    }
}

/// `op` with (send, recv) `bytes` under `coll`: `single` with one port, `unlimited` without
/// port limits.
pub fn single_and_unlimited(
    what: &str,
    p: u32,
    op: Op,
    bytes: (i64, i64),
    coll: &str,
    single: f64,
    unlimited: f64,
) {
    let got = time(Ports::One, p, op, bytes.0, bytes.1, coll);
    check(&format!("{what} p={p} single-port"), got, single);
    let got = time(Ports::Unlimited, p, op, bytes.0, bytes.1, coll);
    check(&format!("{what} p={p} unlimited"), got, unlimited);
}

pub fn one(what: &str, p: u32, op: Op, bytes: i64, coll: &str, want: f64) {
    let got = time(Ports::One, p, op, bytes, bytes, coll);
    check(&format!("{what} p={p} single-port"), got, want);
}

pub fn lg(p: u32) -> f64 {
    f64::from(p.next_power_of_two().trailing_zeros())
}
