//! Closed-form collectives (engine/plan/) give bit-identical times to the event-driven
//! path: random collective sequences with skewed entry times, several algorithms, eager
//! and rendezvous sizes, host overheads and reduction costs, with and without host noise,
//! on the α-β fabric.

use replay_engine::fabric::schema::Value;
use replay_engine::ops::Op;
use replay_engine::prng::SplitMix64;
use replay_engine::TraceColumns;
use replay_engine::{replay, FabricSpec, JobInput, Placement, ReplayOptions};

struct Trace {
    rank: Vec<u32>,
    seq: Vec<i64>,
    op: Vec<u8>,
    peer: Vec<i32>,
    root: Vec<i32>,
    bytes: Vec<i64>,
    zero: Vec<i32>,
    request: Vec<i64>,
    t0: Vec<i64>,
    t1: Vec<i64>,
    iteration: Vec<i32>,
}

/// `calls` collectives on `p` ranks; every rank computes a random time before each call.
fn trace(p: u32, calls: &[(Op, i64)], seed: u64) -> Trace {
    let mut rng = SplitMix64::new(seed);
    let mut t = Trace {
        rank: vec![],
        seq: vec![],
        op: vec![],
        peer: vec![],
        root: vec![],
        bytes: vec![],
        zero: vec![],
        request: vec![],
        t0: vec![],
        t1: vec![],
        iteration: vec![],
    };
    for r in 0..p {
        let mut clock = 0i64;
        for (i, &(op, bytes)) in calls.iter().enumerate() {
            clock += rng.below(5000) as i64;
            t.rank.push(r);
            t.seq.push(i as i64);
            t.op.push(op as u8);
            t.peer.push(-2);
            t.root.push(if matches!(op, Op::Reduce | Op::Bcast) {
                1
            } else {
                -1
            });
            t.bytes.push(bytes);
            t.zero.push(0);
            t.request.push(-1);
            t.t0.push(clock);
            t.t1.push(clock);
            t.iteration.push(i as i32);
        }
    }
    t
}

/// Host costs as (o ns, O ns/B, γ ns/B).
type Host = (f64, f64, f64);

/// Replays `t` on the α-β fabric with host costs `host` and the `[host.noise]` table
/// `noise` (empty: none): start and end times of its rows, the message count, and the
/// engine's event count.
fn run(
    t: &Trace,
    coll: &str,
    closed: bool,
    host: Host,
    noise: &[(&str, Value)],
) -> (Vec<f64>, Vec<f64>, u64, u64) {
    let columns = TraceColumns {
        rank: &t.rank,
        seq: &t.seq,
        op: &t.op,
        peer: &t.peer,
        root: &t.root,
        send_bytes: &t.bytes,
        recv_bytes: &t.bytes,
        tag: &t.zero,
        comm: &t.zero,
        request: &t.request,
        t_start_ns: &t.t0,
        t_end_ns: &t.t1,
        iteration: &t.iteration,
        ..TraceColumns::default()
    };
    let mut host_table = vec![
        ("overhead_ns", Value::from(host.0)),
        ("overhead_ns_per_byte", Value::from(host.1)),
        ("gamma_ns_per_byte", Value::from(host.2)),
    ];
    if !noise.is_empty() {
        host_table.push(("noise", Value::table(noise.to_vec())));
    }
    let spec = FabricSpec::from_pairs([
        ("model", Value::from("alpha_beta")),
        ("alpha_us", Value::from(1.0)),
        ("beta_ns_per_byte", Value::from(0.1)),
        // unlimited ports: the contention-free form closed forms need
        ("ports", Value::Int(0)),
        ("host", Value::table(host_table)),
    ])
    .expect("spec");
    let options = ReplayOptions {
        coll_overrides: coll.into(),
        closed_form_collectives: closed,
        ..ReplayOptions::default()
    };
    let jobs = [JobInput {
        columns,
        placement: Placement::Linear { offset: 0 },
        foreground: true,
    }];
    let out = replay(&jobs, Vec::new(), &spec, &options).expect("replay");
    let r = out.jobs.into_iter().next().unwrap();
    (
        r.sim_start_ns,
        r.sim_end_ns,
        out.stats.messages,
        out.stats.events,
    )
}

/// The calls every test replays.
const CALLS: [(Op, i64); 10] = [
    (Op::Allreduce, 8),
    (Op::Barrier, 0),
    (Op::Allreduce, 1 << 20),
    (Op::Allgather, 64),
    (Op::Alltoall, 16384),
    (Op::Bcast, 8),
    (Op::Reduce, 100_000),
    (Op::Allreduce, 30_000),
    (Op::ReduceScatterBlock, 4096),
    (Op::Allgather, 20_000),
];

const OVERRIDES: [&str; 4] = [
    "",
    "allreduce=ring,allgather=bruck,alltoall=pairwise",
    "allreduce=rabenseifner,allgather=recursive_doubling,alltoall=bruck,barrier=bruck",
    "allreduce=recursive_doubling,allgather=neighbor_exchange,barrier=double_ring",
];

/// Both paths agree bit for bit on every rank's row times and on the message count, and
/// the closed forms were used (fewer events over the algorithm sets); returns the end
/// times of the default algorithms' replay.
fn assert_paths_agree(p: u32, host: Host, noise: &[(&str, Value)]) -> Vec<f64> {
    let t = trace(p, &CALLS, u64::from(p));
    let mut ends = Vec::new();
    let mut events = (0, 0);
    for coll in OVERRIDES {
        let event = run(&t, coll, false, host, noise);
        let closed = run(&t, coll, true, host, noise);
        let same = |a: &[f64], b: &[f64]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        assert!(
            same(&event.0, &closed.0) && same(&event.1, &closed.1),
            "p={p} coll={coll:?} host={host:?} noise={noise:?}"
        );
        assert_eq!(event.2, closed.2, "message counts");
        events = (events.0 + event.3, events.1 + closed.3);
        if coll.is_empty() {
            ends = event.1;
        }
    }
    assert!(events.1 < events.0, "closed forms unused: p={p} {events:?}");
    ends
}

#[test]
fn closed_form_collectives_are_bit_identical_to_the_event_driven_path() {
    for p in [2u32, 5, 8, 16, 24] {
        for host in [(0.0, 0.0, 0.0), (300.0, 0.01, 0.05)] {
            assert_paths_agree(p, host, &[]);
        }
    }
}

/// With host noise the plan asks each member's detours where the event path does: dense
/// detours (one per 2–35 µs of run time, against collectives of a few µs to 100 µs) hit
/// sends' overheads, reductions and returns from waits, in every family of lengths, with
/// and without `during_waits`.
#[test]
fn closed_forms_stay_bit_identical_under_host_noise() {
    let poisson = |rate: f64, length: &str, during_waits: bool| {
        vec![
            ("kind", Value::from("poisson")),
            ("rate_per_s", Value::from(rate)),
            ("length", Value::from(length)),
            ("length_ns", Value::from(3000.0)),
            ("during_waits", Value::from(during_waits)),
        ]
    };
    let empirical = vec![
        ("kind", Value::from("empirical")),
        ("work_ns", Value::from(1e5)),
        ("detours_ns", Value::from(vec![500.0, 2000.0, 40_000.0])),
    ];
    let noises = [
        poisson(500_000.0, "constant", true),
        poisson(100_000.0, "lognormal", true),
        poisson(200_000.0, "exponential", false),
        empirical,
    ];
    for p in [2u32, 5, 16, 24] {
        for host in [(0.0, 0.0, 0.0), (300.0, 0.01, 0.05)] {
            let quiet = assert_paths_agree(p, host, &[]);
            for noise in &noises {
                let noisy = assert_paths_agree(p, host, noise);
                assert_ne!(noisy, quiet, "the detours act: p={p} {noise:?}");
            }
        }
    }
}
